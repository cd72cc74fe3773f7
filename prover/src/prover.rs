//! The stages of proving one partition, each a `tracing` span named after its
//! [`timeline::SpanKind`] (synthesis, prep_msm, ntt, msm_h, msm_l, msm_a, msm_b_g1 with
//! batch_add and tail_msm nested in each MSM, cpu_msm_b_g2, finalize), and [`prove`], the
//! one-call prover that runs them in order on a backend. The CPU backend is these stages
//! called in sequence; another backend can reuse any of them (e.g. [`finish`]).

use bellpepper_core::Circuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Curve;
use rand::RngCore;
use timeline::event::{arg, kind};
use tracing::info_span;

use crate::backend::{Backend, Blinding, NoGate, Pending, ProveError};
use crate::domain::Domain;
use crate::msm::{self, CpuMsm, Split};
use crate::ntt;
use crate::params::Parameters;
use crate::proof::Proof;
use crate::synthesis::{self, ProvingAssignment};

/// Synthesise one partition (span `synthesis`).
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<ProvingAssignment, ProveError> {
    synthesize_with_capacity(circuit, synthesis::SizeHint::default())
}

/// [`synthesize`] with the assignment's vectors sized by `hint` up front (the engine passes
/// the parameter file's sizes).
pub fn synthesize_with_capacity<C: Circuit<Scalar>>(circuit: C, hint: synthesis::SizeHint) -> Result<ProvingAssignment, ProveError> {
    let span = info_span!(kind::SYNTHESIS, constraints = tracing::field::Empty);
    let _e = span.enter();
    let a = synthesis::synthesize_with_capacity(circuit, hint)?;
    span.record("constraints", a.num_constraints() as u64);
    Ok(a)
}

/// Synthesise one partition with its pre-compiled constraints (span `synthesis`, arg
/// `path = "pce"`, with `witness` and `constraints` nested): the same assignment as
/// [`synthesize_with_capacity`] ([`crate::pce::synthesize_pce`]).
pub fn synthesize_pce<C: crate::pce::CircuitPieces + Send>(circuit: C, pce: &crate::pce::Pce, run: crate::pce::PceRun<'_>) -> Result<ProvingAssignment, ProveError> {
    let span = info_span!(kind::SYNTHESIS, constraints = pce.num_constraints() as u64, path = "pce");
    let _e = span.enter();
    Ok(crate::pce::synthesize_pce(circuit, pce, run)?)
}

/// The density splits of the A, B and L MSMs (computed by `prep_msm`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsmPlan {
    pub a: Split,
    pub b: Split,
    pub l: Split,
}

/// CPU preparation (span `prep_msm`): check the parameters fit the assignment, then
/// classify the scalars of every query (zero / one / tail) following the densities, in one
/// pass over the aux scalars written in place ([`crate::prep::plan`]). The span carries the
/// threads of the pool it ran on (`threads`) and the CPU time its pieces took on them
/// (`cpu_ns`, [`crate::cpu_time`]): the work the simulator's preparation step stands for.
pub fn prep_msm(asg: &ProvingAssignment, params: &Parameters) -> Result<MsmPlan, ProveError> {
    let span = info_span!(kind::PREP_MSM, { arg::CPU_NS } = tracing::field::Empty, { arg::THREADS } = rayon::current_num_threads() as u64);
    let _e = span.enter();
    params
        .check_fits(asg.input_assignment.len(), asg.aux_assignment.len(), asg.num_constraints())
        .map_err(ProveError::ParamsMismatch)?;
    let meter = crate::cpu_time::CpuMeter::default();
    let plan = crate::prep::plan_metered(asg, &meter);
    span.record(arg::CPU_NS, meter.ns());
    let check = |what: &str, split: &Split, points: usize| {
        if split.len != points {
            Err(ProveError::ParamsMismatch(format!("the {what} query has {points} points, the witness needs {}", split.len)))
        } else {
            Ok(())
        }
    };
    check("A", &plan.a, params.a.len())?;
    check("B (G1)", &plan.b, params.b_g1.len())?;
    check("B (G2)", &plan.b, params.b_g2.len())?;
    check("L", &plan.l, params.l.len())?;
    Ok(plan)
}

/// H coefficients by NTTs (span `ntt`).
pub fn ntt_h(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>, params: &Parameters) -> Result<Vec<Scalar>, ProveError> {
    let span = info_span!(kind::NTT, n = params.info.domain_size);
    let _e = span.enter();
    let d = Domain::new(a.len())?;
    if d.n as u64 != params.info.domain_size {
        return Err(ProveError::ParamsMismatch(format!("domain of {} points, the parameters have {}", d.n, params.info.domain_size)));
    }
    Ok(ntt::compute_h(a, b, c, &d))
}

/// The H MSM (span `msm_h`): dense, random scalars, straight to the bucket method.
pub fn msm_h(h: &[Scalar], params: &Parameters) -> G1Projective {
    msm_h_with(h, params, CpuMsm::default())
}

/// [`msm_h`] with a chosen bucket method.
pub fn msm_h_with(h: &[Scalar], params: &Parameters, m: CpuMsm) -> G1Projective {
    let span = info_span!(kind::MSM_H, points = h.len() as u64);
    let _e = span.enter();
    let limbs: Vec<msm::Limbs> = {
        use rayon::prelude::*;
        h.par_iter().map(msm::to_limbs).collect()
    };
    match m {
        CpuMsm::Blst => msm::blst_g1(&params.h, None, &limbs),
        CpuMsm::Proofscope => crate::msm_affine::pippenger_g1(&params.h, None, &limbs),
    }
}

/// One split MSM in G1 as a span `name` with `batch_add` and `tail_msm` nested in it.
pub fn msm_split_g1(name: &'static str, bases: &[G1Affine], split: &Split) -> G1Projective {
    msm_split_g1_with(name, bases, split, CpuMsm::default())
}

/// The span of one split MSM — `msm_l`, `msm_a`, `msm_b_g2`, else `msm_b_g1` — with the
/// split's counts, for the CPU and the CUDA backends alike (span names are static, hence
/// the match); the CUDA backend records `gpu_ns` (the device time of its batch addition and
/// tail MSM) and, when the MSMs of a partition run concurrently, `lane` (the stream they ran
/// on, 1..=4).
pub(crate) fn split_msm_span(name: &str, split: &Split) -> tracing::Span {
    macro_rules! span {
        ($kind:expr) => {
            info_span!($kind, points = split.len as u64, zeros = split.zeros as u64, ones = split.ones.len() as u64, tail = split.tail.len() as u64, { arg::LANE } = tracing::field::Empty, { arg::GPU_NS } = tracing::field::Empty)
        };
    }
    match name {
        kind::MSM_L => span!(kind::MSM_L),
        kind::MSM_A => span!(kind::MSM_A),
        kind::MSM_B_G2 => span!(kind::MSM_B_G2),
        _ => span!(kind::MSM_B_G1),
    }
}

/// [`msm_split_g1`] with a chosen bucket method for the tail.
pub fn msm_split_g1_with(name: &'static str, bases: &[G1Affine], split: &Split, m: CpuMsm) -> G1Projective {
    let span = split_msm_span(name, split);
    let _e = span.enter();
    let ones = {
        let s = info_span!(kind::BATCH_ADD, query = name, points = split.ones.len() as u64);
        let _e = s.enter();
        msm::batch_add::<G1Projective>(bases, &split.ones)
    };
    let tail = {
        let s = info_span!(kind::TAIL_MSM, query = name, points = split.tail.len() as u64);
        let _e = s.enter();
        msm::tail_g1(bases, split, m)
    };
    ones + tail
}

/// The G2 MSM of the B query (span `cpu_msm_b_g2`), on the CPU.
pub fn b_g2_msm(bases: &[G2Affine], split: &Split) -> G2Projective {
    b_g2_msm_with(bases, split, CpuMsm::default())
}

/// [`b_g2_msm`] with a chosen bucket method for the tail.
pub fn b_g2_msm_with(bases: &[G2Affine], split: &Split, m: CpuMsm) -> G2Projective {
    let span = info_span!(kind::CPU_MSM_B_G2, points = split.len as u64, ones = split.ones.len() as u64, tail = split.tail.len() as u64);
    let _e = span.enter();
    msm::batch_add::<G2Projective>(bases, &split.ones) + msm::tail_g2(bases, split, m)
}

/// Blinding and assembly of the three proof elements (span `finalize`).
pub fn assemble(p: &Pending, b_g2: G2Projective, params: &Parameters) -> Proof {
    let span = info_span!(kind::FINALIZE);
    let _e = span.enter();
    let vk = &params.vk;
    let Blinding { r, s } = p.blinding;
    // A = α + Σa_i·A_i + r·δ ;  B = β + Σb_i·B_i + s·δ
    let g_a = G1Projective::from(vk.alpha_g1) + p.a + G1Projective::from(vk.delta_g1) * r;
    let g_b = G2Projective::from(vk.beta_g2) + b_g2 + G2Projective::from(vk.delta_g2) * s;
    let b_g1 = G1Projective::from(vk.beta_g1) + p.b_g1 + G1Projective::from(vk.delta_g1) * s;
    // C = s·A + r·B₁ − r·s·δ + H + L
    let g_c = g_a * s + b_g1 * r - G1Projective::from(vk.delta_g1) * (r * s) + p.h + p.l;
    Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() }
}

/// The CPU finish every backend may use: the G2 MSM on the CPU (unless done on the device) then finalize.
pub fn finish(p: Pending, params: &Parameters) -> Result<Proof, ProveError> {
    finish_with(p, params, CpuMsm::default())
}

/// [`finish`], then the proof is verified against the pending's public inputs (span
/// `verify`, ~3 pairings' worth: one 4-pair multi-Miller loop and a final
/// exponentiation) before it is returned; [`ProveError::Unverified`] when it fails. What a
/// device backend whose results are not trusted blindly (the CUDA one) returns.
pub fn finish_verified(p: Pending, params: &Parameters) -> Result<Proof, ProveError> {
    let inputs = p.public_inputs.clone();
    let proof = finish(p, params)?;
    let span = info_span!(kind::VERIFY);
    let _e = span.enter();
    match crate::verifier::verify(&params.vk, &proof, &inputs) {
        Ok(true) => Ok(proof),
        Ok(false) => Err(ProveError::Unverified),
        Err(e) => Err(ProveError::Device(e.into())),
    }
}

/// [`finish`] with a chosen bucket method for the G2 MSM (skipped when the device part
/// already computed it: `Pending::b_g2`).
pub fn finish_with(p: Pending, params: &Parameters, m: CpuMsm) -> Result<Proof, ProveError> {
    let b_g2 = match p.b_g2 {
        Some(b) => b,
        None if params.b_g2.is_released() => return Err(ProveError::ParamsMismatch("the B query in G2 was released from the host after its upload: the G2 MSM cannot run on the CPU".into())),
        None => b_g2_msm_with(&params.b_g2, &p.b_split, m),
    };
    Ok(assemble(&p, b_g2, params))
}

/// Prove one circuit on `backend` with fresh blinding from `rng` (no engine, no locks).
pub fn prove<C: Circuit<Scalar>>(
    circuit: C,
    params: &Parameters,
    backend: &dyn Backend,
    rng: &mut impl RngCore,
) -> Result<(Proof, Vec<Scalar>), ProveError> {
    let asg = synthesize(circuit)?;
    let inputs = asg.public_inputs().to_vec();
    let pending = backend.prove_start(asg, params, Blinding::random(rng), &NoGate)?;
    Ok((backend.prove_finish(pending, params)?, inputs))
}
