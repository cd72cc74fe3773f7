//! `gpu check`: every kernel against the CPU path (blstrs, the CPU NTT) on fresh random
//! inputs, including zero and one scalars, -1, the identity point, duplicate and opposite
//! points and sizes that are not powers of two, for every MSM variant (kernel, window size,
//! segment) that `gpu bench` may time, and for both Fr products and both DIF pass shapes of
//! the NTT (radix 2 and 4), around the choices of the [`CudaSettings`] given; then whole
//! proofs on the CUDA backend against the CPU backend. Used by the CLI on a GPU machine and
//! by the crate's tests (which skip when no GPU is present).

use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::reference::{h_ref, ntt_ref, random_points, random_points_in, random_scalars, sum_ref};
use crate::cuda_settings::{AbcUpload, CudaSettings, MsmBatch, ParamsMode, ShiftChoice};
use crate::gpu::convert::{fp_from_words, fp_words, scalar_words, scalars_from_words, xyzz_to_projective, RawFp};
use crate::gpu::device::{cfg_1d, launch};
use crate::gpu::error::Ctx;
use crate::gpu::kernels::{selftest, KernelName};
use crate::gpu::msm::{GpuCurve, MsmConfig, MsmDefaults, WindowLayout, ACC_KERNELS, G1, G2, G2_ACC_KERNELS};
use crate::gpu::ntt::{Ntt, NttBitrev, NttConfig, NttDirection, NttMul, NttPlan, NttRadix};
use crate::gpu::{CudaBackend, Gpu, GpuError};

/// Outcome of one check.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CheckOutcome {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    pub ms: f64,
}

/// How much to check: `quick` keeps every case but at smaller sizes.
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    pub seed: u64,
    pub quick: bool,
}

fn outcome<E: std::fmt::Display>(name: String, started: Instant, r: Result<Option<String>, E>) -> CheckOutcome {
    let ms = started.elapsed().as_secs_f64() * 1e3;
    match r {
        Ok(None) => CheckOutcome { name, ok: true, detail: "ok".into(), ms },
        Ok(Some(msg)) => CheckOutcome { name, ok: false, detail: msg, ms },
        Err(e) => CheckOutcome { name, ok: false, detail: format!("error: {e}"), ms },
    }
}

/// Runs all checks; each one independent so that a failure does not hide the others. The
/// NTT and MSM choices of `settings` are the ones checked by default and the base of the
/// variants.
pub fn run_all(gpu: &Gpu, settings: &CudaSettings, opt: CheckOptions) -> Vec<CheckOutcome> {
    let mut out = Vec::new();
    let msm = match MsmDefaults::from_settings(settings) {
        Ok(m) => m,
        Err(e) => {
            out.push(outcome("msm configs of the settings".into(), Instant::now(), Err::<Option<String>, _>(e)));
            return out;
        }
    };
    // The tables' NTT (the lean one has checks of its own).
    let base = NttConfig::of(settings);
    let ntt = Ntt::new(base);
    let mut rng = ChaCha8Rng::seed_from_u64(opt.seed);
    let t = Instant::now();
    out.push(outcome("fr arithmetic (mul/add/sub/neg, 4099 values)".into(), t, check_fr(gpu, &mut rng)));
    let t = Instant::now();
    out.push(outcome("fp arithmetic (mul/add/sub/neg, 4099 values)".into(), t, check_fp(gpu, &mut rng)));
    let t = Instant::now();
    out.push(outcome("g1 add/double/mixed/sub (XYZZ)".into(), t, check_curve_ops::<G1>(gpu, &mut rng, selftest::G1_SELFTEST)));
    // The NTT items with each Fr product (CIOS and even/odd kernels) and each DIF pass shape
    // (radix 2 and 4), with the settings' plan and bit reversal.
    let ntt_sizes: &[u32] = if opt.quick { &[1, 2, 5, 10, 11] } else { &[1, 2, 5, 10, 11, 12, 13, 16, 17] };
    for (radix, mul) in NttRadix::ALL.into_iter().flat_map(|r| NttMul::ALL.map(|m| (r, m))) {
        let ntt = ntt.with_config(NttConfig { radix, mul, ..base });
        let tag = match (radix, mul) {
            (NttRadix::R2, NttMul::Cios) => String::new(),
            (NttRadix::R2, m) => format!(" [{}]", m.name()),
            (r, m) => format!(" [{} {}]", m.name(), r.name()),
        };
        for &log_n in ntt_sizes {
            for (dir, coset) in [(NttDirection::Forward, false), (NttDirection::Inverse, false), (NttDirection::Forward, true), (NttDirection::Inverse, true)] {
                let t = Instant::now();
                // Not a power of two: fill 3/4 of the domain (zero padding on both sides).
                let len = ((1usize << log_n) * 3 / 4).max(1);
                out.push(outcome(format!("ntt{tag} 2^{log_n} {dir:?}{} ({len} values)", if coset { " coset" } else { "" }), t, check_ntt(gpu, &ntt, &mut rng, log_n, len, dir, coset)));
            }
        }
        for &log_n in if opt.quick { &[4u32, 10][..] } else { &[4u32, 10, 14][..] } {
            let t = Instant::now();
            out.push(outcome(format!("h quotient{tag} (a*b-c)/Z 2^{log_n}"), t, check_h(gpu, &ntt, &mut rng, log_n)));
        }
    }
    // Each compared pass plan with each bit-reversal kernel (the settings' product and radix),
    // on sizes where the plans differ (above 2^10) and where the tile applies (2^10 up).
    // The pooled a/b/c's in-place copy over several locked pieces (600 MiB: three 256 MiB
    // boundaries at most), every word compared.
    {
        let t = Instant::now();
        let words = 150 << 20;
        out.push(outcome(format!("pooled upload (in place, locked in pieces) {} MiB", (words * 4) >> 20), t, check_locked_upload(gpu, &mut rng, words)));
    }
    let plan_sizes: &[u32] = if opt.quick { &[9, 10, 17, 19] } else { &[9, 10, 11, 13, 17, 18, 19, 20] };
    for plan in NttPlan::COMPARED {
        for bitrev in NttBitrev::ALL {
            let ntt = ntt.with_config(NttConfig { plan, bitrev, ..base });
            let tag = format!(" [{} {}]", plan.name(), bitrev.name());
            for &log_n in plan_sizes {
                for (dir, coset) in [(NttDirection::Forward, false), (NttDirection::Inverse, true)] {
                    let t = Instant::now();
                    let len = ((1usize << log_n) * 3 / 4).max(1);
                    out.push(outcome(format!("ntt{tag} 2^{log_n} {dir:?}{} ({len} values)", if coset { " coset" } else { "" }), t, check_ntt(gpu, &ntt, &mut rng, log_n, len, dir, coset)));
                }
            }
            let t = Instant::now();
            out.push(outcome(format!("h quotient{tag} (a*b-c)/Z 2^12"), t, check_h(gpu, &ntt, &mut rng, 12)));
        }
    }
    out.extend(lean_ntt_checks(gpu, &ntt, base, opt, &mut rng));
    let msm_sizes: &[usize] = if opt.quick { &[1, 2, 3, 100, 1000, 4097] } else { &[1, 2, 3, 100, 1000, 4097, 65_536, 300_001] };
    for &n in msm_sizes {
        let t = Instant::now();
        out.push(outcome(format!("msm {n} terms (random + 0/1/-1 scalars, identity/duplicate/opposite points)"), t, check_msm_of::<G1>(gpu, &mut rng, n, &msm.g1)));
    }
    let t = Instant::now();
    out.push(outcome("msm all scalars zero / all points identity".into(), t, check_msm_degenerate(gpu, &mut rng, &msm.g1)));
    // Every MSM variant (kernel, window size, segment) against the CPU, as check_msm does.
    match msm_check_variants() {
        Err(e) => out.push(outcome("msm variants (PROOFSCOPE_MSM_VARIANTS)".into(), Instant::now(), Err(e))),
        Ok(variants) => {
            let sizes: &[usize] = if opt.quick { &[100, 4097] } else { &[1, 100, 4097, 65_537] };
            for cfg in &variants {
                for &n in sizes {
                    let t = Instant::now();
                    out.push(outcome(format!("msm variant {} {n} terms (random + specials)", cfg.spec()), t, check_msm_of::<G1>(gpu, &mut rng, n, cfg)));
                }
                let t = Instant::now();
                out.push(outcome(format!("msm variant {}: 3000 one scalars, 3000 copies of one point", cfg.spec()), t, check_msm_long_buckets(gpu, &mut rng, cfg)));
            }
        }
    }
    // Precomputed shifted bases: the table itself against CPU doublings, then the MSM over
    // it with an index list (the tail MSM of a density split), as the engine runs it.
    for (n, c) in if opt.quick { &[(1000usize, 13u32)][..] } else { &[(1000usize, 13u32), (20_001, 20), (3, 9)][..] } {
        let t = Instant::now();
        out.push(outcome(format!("shift table c={c} of {n} points (2^offset * P per window, identities kept)"), t, check_shift_table(gpu, &mut rng, *n, *c)));
        let t = Instant::now();
        out.push(outcome(format!("msm over the shift table c={c}, {n} points, index list of every other point"), t, check_msm_pre_indexed(gpu, &mut rng, *n, *c)));
    }
    for &n in if opt.quick { &[1usize, 1000][..] } else { &[1usize, 1000, 100_003][..] } {
        let t = Instant::now();
        out.push(outcome(format!("batch add of {n} selected points (density split ones)"), t, check_batch_add(gpu, &mut rng, n)));
    }
    // G2: the Fp2 curve formulas, then the G2 MSM (the engine's config and every G2
    // kernel) and batch addition, as for G1.
    let t = Instant::now();
    out.push(outcome("g2 add/double/mixed/sub (XYZZ over Fp2)".into(), t, check_curve_ops::<G2>(gpu, &mut rng, selftest::G2_SELFTEST)));
    for &n in if opt.quick { &[1usize, 2, 3, 100, 4097][..] } else { &[1usize, 2, 3, 100, 1000, 4097, 65_536][..] } {
        let t = Instant::now();
        out.push(outcome(format!("g2 msm {n} terms (random + 0/1/-1 scalars, identity/duplicate/opposite points)"), t, check_msm_of::<G2>(gpu, &mut rng, n, &msm.g2)));
    }
    for (acc, _) in G2_ACC_KERNELS {
        for (c, n) in [(None, 4097usize), (Some(16), 4097), (None, 100)] {
            let cfg = MsmConfig { c, ..MsmConfig::kernel(acc) };
            let t = Instant::now();
            out.push(outcome(format!("g2 msm variant {} {n} terms (random + specials)", cfg.spec()), t, check_msm_of::<G2>(gpu, &mut rng, n, &cfg)));
        }
        let cfg = MsmConfig::kernel(acc);
        let t = Instant::now();
        out.push(outcome(format!("g2 msm variant {}: 3000 one scalars, 3000 copies of one point", cfg.spec()), t, check_long_buckets_of::<G2>(gpu, &mut rng, &cfg)));
    }
    for &n in if opt.quick { &[1usize, 1000][..] } else { &[1usize, 1000, 100_003][..] } {
        let t = Instant::now();
        out.push(outcome(format!("g2 batch add of {n} selected points"), t, check_batch_add_of::<G2>(gpu, &mut rng, n)));
    }
    out.extend(run_setup(gpu, opt));
    out
}

/// The lean NTT (`ntt_memory = "lean"`: twiddles from two small tables, permutation in place,
/// no scratch) against the CPU path, with each product and radix, on sizes below and above the
/// two-level table's 4096 and the 2^10 tile, and the quotient (`gpu check --lean-only` runs
/// these alone).
fn lean_ntt_checks(gpu: &Gpu, ntt: &Ntt, base: NttConfig, opt: CheckOptions, rng: &mut ChaCha8Rng) -> Vec<CheckOutcome> {
    let mut out = Vec::new();
    let lean_sizes: &[u32] = if opt.quick { &[1, 2, 5, 10, 13, 17] } else { &[1, 2, 5, 10, 11, 12, 13, 14, 17, 20] };
    for (radix, mul) in NttRadix::ALL.into_iter().flat_map(|r| NttMul::ALL.map(|m| (r, m))) {
        let ntt = ntt.with_config(NttConfig { radix, mul, lean: true, ..base });
        let tag = format!(" [lean {} {}]", mul.name(), radix.name());
        for &log_n in lean_sizes {
            for (dir, coset) in [(NttDirection::Forward, false), (NttDirection::Inverse, false), (NttDirection::Forward, true), (NttDirection::Inverse, true)] {
                let t = Instant::now();
                let len = ((1usize << log_n) * 3 / 4).max(1);
                out.push(outcome(format!("ntt{tag} 2^{log_n} {dir:?}{} ({len} values)", if coset { " coset" } else { "" }), t, check_ntt(gpu, &ntt, rng, log_n, len, dir, coset)));
            }
        }
        for &log_n in if opt.quick { &[4u32, 12][..] } else { &[4u32, 12, 16][..] } {
            let t = Instant::now();
            out.push(outcome(format!("h quotient{tag} (a*b-c)/Z 2^{log_n}"), t, check_h(gpu, &ntt, rng, log_n)));
        }
    }
    out
}

/// Only [`lean_ntt_checks`], with the settings' plan.
pub fn run_lean(gpu: &Gpu, settings: &CudaSettings, opt: CheckOptions) -> Vec<CheckOutcome> {
    let base = NttConfig::of(settings);
    lean_ntt_checks(gpu, &Ntt::new(base), base, opt, &mut ChaCha8Rng::seed_from_u64(opt.seed ^ 0x1ea4))
}

/// The TEST-ONLY setup's fixed-base multiplications (setup.cu) against the CPU comb, in
/// batches smaller than the input (the batch loop), then a whole setup both ways (also
/// alone: `gpu check --setup-only`).
pub fn run_setup(gpu: &Gpu, opt: CheckOptions) -> Vec<CheckOutcome> {
    let mut out = Vec::new();
    let rng = &mut ChaCha8Rng::seed_from_u64(opt.seed ^ 0x5e7);
    for &log_n in if opt.quick { &[10u32, 14][..] } else { &[10u32, 14, 18][..] } {
        let t = Instant::now();
        out.push(outcome(format!("setup comb g1 2^{log_n} scalars (random + 0/1/-1/2^40/-2)"), t, check_setup_comb::<G1Projective, G1>(gpu, rng, log_n)));
        let t = Instant::now();
        out.push(outcome(format!("setup comb g2 2^{log_n} scalars (random + 0/1/-1/2^40/-2)"), t, check_setup_comb::<G2Projective, G2>(gpu, rng, log_n)));
    }
    for log_n in if opt.quick { &[10u32][..] } else { &[10u32, 14][..] } {
        let t = Instant::now();
        out.push(outcome(format!("setup porep-like 2^{log_n}: parameters made with the GPU muls equal the CPU's"), t, check_setup_params(gpu, *log_n, opt.seed)));
    }
    out
}

/// k·G on the GPU over the CPU comb's table equals the CPU comb's k·G, affine, bit for bit.
fn check_setup_comb<P, C>(gpu: &Gpu, rng: &mut ChaCha8Rng, log_n: u32) -> Result<Option<String>, GpuError>
where
    P: group::Curve<AffineRepr = C::Affine> + Send + Sync,
    C: crate::gpu::SetupCurve,
{
    let n = 1usize << log_n;
    let mut scalars = random_scalars(n - 5, rng.gen());
    scalars.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(1u64 << 40), -Scalar::from(2u64)]);
    let comb = crate::setup::Comb::<P>::new(P::generator(), n);
    let want = comb.muls(&scalars);
    let dev = gpu.upload_comb::<C>(comb.w, comb.windows, &comb.table)?;
    // Three batches, then many (each download copied out while the next batch computes:
    // run 55 copied a batch out before its download ended).
    let mut got = vec![C::Affine::identity(); n];
    for batch in [n / 3 + 1, (n / 16).max(1)] {
        got.fill(C::Affine::identity());
        gpu.comb_muls(&dev, &scalars, &mut got, batch)?;
        if let Some(i) = (0..n).find(|&i| C::words(&got[i..i + 1]) != C::words(&want[i..i + 1])) {
            return Ok(Some(format!("{} point {i} of {n} (w = {}, batches of {batch}) differs from the CPU comb's", C::NAME, comb.w)));
        }
    }
    if !bool::from(got[n - 5].is_identity()) || got[n - 4] != P::generator().to_affine() {
        return Ok(Some("0·G is not the identity or 1·G not the generator".into()));
    }
    Ok(None)
}

/// A whole TEST-ONLY setup with the GPU muls equals the CPU setup, field for field.
fn check_setup_params(gpu: &Gpu, log_n: u32, seed: u64) -> Result<Option<String>, GpuError> {
    use crate::setup::{generate_with, MulsOn, ToxicWaste};
    let circuit = crate::circuit::Family::PorepLike.circuit(1 << log_n, 0);
    let w = ToxicWaste::from_seed(seed);
    let err = |e: crate::setup::SetupError| GpuError::input("setup", e.to_string());
    let cpu = generate_with(circuit.clone(), "check", w, MulsOn::Cpu).map_err(err)?;
    let dev = generate_with(circuit, "check", w, MulsOn::Gpu(gpu)).map_err(err)?;
    let fields = [("vk", cpu.vk == dev.vk), ("h", cpu.h == dev.h), ("l", cpu.l == dev.l), ("a", cpu.a == dev.a), ("b_g1", cpu.b_g1 == dev.b_g1), ("b_g2", cpu.b_g2 == dev.b_g2), ("info", cpu.info == dev.info)];
    let bad: Vec<&str> = fields.iter().filter(|(_, ok)| !ok).map(|(f, _)| *f).collect();
    Ok((!bad.is_empty()).then(|| format!("fields differ: {}", bad.join(", "))))
}

fn special_scalars() -> Vec<Scalar> {
    vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64), -Scalar::from(2u64)]
}

fn check_fr(gpu: &Gpu, rng: &mut ChaCha8Rng) -> Result<Option<String>, GpuError> {
    let mut a: Vec<Scalar> = (0..4094).map(|_| Scalar::random(&mut *rng)).collect();
    let mut b: Vec<Scalar> = (0..4094).map(|_| Scalar::random(&mut *rng)).collect();
    a.extend(special_scalars());
    b.extend(special_scalars().into_iter().rev());
    let n = a.len() as u32;
    let ad = gpu.stream.clone_htod(scalar_words(&a)).ctx("upload")?;
    let bd = gpu.stream.clone_htod(scalar_words(&b)).ctx("upload")?;
    let mut od = gpu.stream.alloc_zeros::<u32>(a.len() * 32).ctx("alloc")?;
    launch!(gpu, selftest::FR_SELFTEST, cfg_1d(n as u64, 128), &ad, &bd, &mut od, &n);
    let o = scalars_from_words(&gpu.stream.clone_dtoh(&od).ctx("download")?);
    for i in 0..a.len() {
        let want = [a[i] * b[i], a[i] + b[i], a[i] - b[i], -a[i]];
        for (k, op) in ["mul", "add", "sub", "neg"].iter().enumerate() {
            if o[4 * i + k] != want[k] {
                return Ok(Some(format!("{op} differs at index {i}: a={:?} b={:?}", a[i], b[i])));
            }
        }
    }
    Ok(None)
}

fn check_fp(gpu: &Gpu, rng: &mut ChaCha8Rng) -> Result<Option<String>, GpuError> {
    let one = RawFp::from_u64(1);
    let two = RawFp::from_u64(2);
    let specials = [RawFp::zero(), one, one.neg(), two, two.neg()];
    let mut a: Vec<RawFp> = (0..4094).map(|_| RawFp::random(&mut *rng)).collect();
    let mut b: Vec<RawFp> = (0..4094).map(|_| RawFp::random(&mut *rng)).collect();
    a.extend(specials);
    b.extend(specials.iter().rev());
    let words = |v: &[RawFp]| v.iter().flat_map(fp_words).collect::<Vec<u32>>();
    let n = a.len() as u32;
    let ad = gpu.stream.clone_htod(&words(&a)).ctx("upload")?;
    let bd = gpu.stream.clone_htod(&words(&b)).ctx("upload")?;
    let mut od = gpu.stream.alloc_zeros::<u32>(a.len() * 48).ctx("alloc")?;
    launch!(gpu, selftest::FP_SELFTEST, cfg_1d(n as u64, 128), &ad, &bd, &mut od, &n);
    let o = gpu.stream.clone_dtoh(&od).ctx("download")?;
    for i in 0..a.len() {
        let want = [a[i].mul(&b[i]), a[i].add(&b[i]), a[i].sub(&b[i]), a[i].neg()];
        for (k, op) in ["mul", "add", "sub", "neg"].iter().enumerate() {
            let got = fp_from_words(&o[(4 * i + k) * 12..(4 * i + k + 1) * 12]);
            if got != want[k] {
                return Ok(Some(format!("{op} differs at index {i}")));
            }
        }
    }
    Ok(None)
}

/// The curve formulas of group `C` through its self-test kernel (`g1_selftest` /
/// `g2_selftest`): mixed add, double, XYZZ add and mixed sub of 1005 pairs against blstrs,
/// with q = p (doubling inside the addition), q = -p and identities on either side.
fn check_curve_ops<C: GpuCurve>(gpu: &Gpu, rng: &mut ChaCha8Rng, kernel: KernelName) -> Result<Option<String>, GpuError> {
    let mut p = random_points_in::<C::Proj>(1000, rng.gen());
    let mut q = random_points_in::<C::Proj>(1000, rng.gen());
    let id = C::Affine::identity();
    let (x, y) = (p[0], p[1]);
    p.extend([x, x, id, y, id]);
    q.extend([x, -x, y, id, id]);
    let n = p.len() as u32;
    let pd = gpu.stream.clone_htod(C::words(&p)).ctx("upload")?;
    let qd = gpu.stream.clone_htod(C::words(&q)).ctx("upload")?;
    let w = C::XYZZ_WORDS;
    let mut od = gpu.stream.alloc_zeros::<u32>(p.len() * 4 * w).ctx("alloc")?;
    launch!(gpu, kernel, cfg_1d(n as u64, 64), &pd, &qd, &mut od, &n);
    let o = gpu.stream.clone_dtoh(&od).ctx("download")?;
    for i in 0..p.len() {
        let (a, b) = (C::Proj::from(p[i]), C::Proj::from(q[i]));
        let want = [a + b, a.double(), a + b, a - b];
        for (k, op) in ["mixed add", "double", "xyzz add", "mixed sub"].iter().enumerate() {
            let got = C::from_xyzz(&o[(4 * i + k) * w..(4 * i + k + 1) * w]);
            if got != Some(want[k]) {
                return Ok(Some(format!("{} {op} differs at index {i} (got {got:?}, want {:?})", C::NAME, want[k])));
            }
        }
    }
    Ok(None)
}

#[allow(clippy::too_many_arguments)]
fn check_ntt(gpu: &Gpu, ntt: &Ntt, rng: &mut ChaCha8Rng, log_n: u32, len: usize, dir: NttDirection, coset: bool) -> Result<Option<String>, GpuError> {
    let mut v = random_scalars(len, rng.gen());
    v[0] = Scalar::ONE;
    if len > 2 {
        v[len - 1] = -Scalar::ONE;
    }
    let got = ntt.ntt(gpu, &v, log_n, dir, coset)?;
    let want = ntt_ref(&v, log_n, dir == NttDirection::Inverse, coset);
    Ok(got.iter().zip(&want).position(|(g, w)| g != w).map(|i| format!("differs from the CPU NTT at index {i}")))
}

/// A pooled a/b/c upload over several locked pieces (the engine's vectors at 2^22 and above are
/// 128 MiB to 4 GiB, locked 256 MiB at a time): `words` words from an odd offset into their
/// allocation, locked as the pool locks them, copied in place, downloaded and compared word
/// for word.
fn check_locked_upload(gpu: &Gpu, rng: &mut ChaCha8Rng, words: usize) -> Result<Option<String>, GpuError> {
    let seed: u32 = rng.gen();
    let host: Vec<u32> = (0..words as u32 + 3).map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed)).collect();
    let src = &host[3..];
    // SAFETY: `host` outlives the lock, dropped below.
    let Some(lock) = (unsafe { gpu.pin_portable(src.as_ptr() as *mut std::ffi::c_void, std::mem::size_of_val(src)) })? else {
        return Ok(Some("the host memory could not be page-locked".into()));
    };
    let (buf, _) = gpu.upload_locked(src, src.len() + 5)?.finish(gpu)?;
    let back = gpu.download_words(&buf.slice(..), "pooled upload check")?;
    drop(lock);
    if let Some(i) = back[..src.len()].iter().zip(src).position(|(a, b)| a != b) {
        return Ok(Some(format!("word {i} of {} differs after the in-place copy", src.len())));
    }
    if back[src.len()..].iter().any(|&w| w != 0) {
        return Ok(Some("the padding past the copied words is not zero".into()));
    }
    Ok(None)
}

fn check_h(gpu: &Gpu, ntt: &Ntt, rng: &mut ChaCha8Rng, log_n: u32) -> Result<Option<String>, GpuError> {
    let n = 1usize << log_n;
    let m = n - n / 3; // a/b/c shorter than the domain, as in a prover
    let a = random_scalars(m, rng.gen());
    let b = random_scalars(m, rng.gen());
    let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect(); // satisfied: H has degree < n-1
    let want = h_ref(&a, &b, &c, log_n);
    // a, b, c uploaded both ways the engine can (`cuda.abc_upload`).
    for how in AbcUpload::ALL {
        let (got, _) = ntt.h_quotient(gpu, &a, &b, &c, log_n, how)?;
        if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
            return Ok(Some(format!("differs from the CPU quotient at index {i} (a/b/c upload {})", how.name())));
        }
        if got[n - 1] != Scalar::ZERO {
            return Ok(Some(format!("top coefficient of H is not zero for a satisfied a*b=c (a/b/c upload {})", how.name())));
        }
    }
    Ok(None)
}

/// Variants checked: those of `PROOFSCOPE_MSM_VARIANTS` (the ones the bench will time) when
/// set, else every accumulation kernel at the window size by size (9, 10 and 11 at the checked
/// sizes) and at c = 16 (the engine's from 2^19 points), the default kernel with a short
/// reduction segment, and c = 19 with a long one (over 2^20 buckets: the tiled scan); the
/// balanced kernel with short chunks.
fn msm_check_variants() -> Result<Vec<MsmConfig>, GpuError> {
    if let Some(v) = super::msm_variants_from_env()? {
        return Ok(v);
    }
    let mut v: Vec<MsmConfig> = Vec::new();
    for (acc, _) in ACC_KERNELS {
        v.push(MsmConfig::kernel(acc));
        v.push(MsmConfig { c: Some(16), ..MsmConfig::kernel(acc) });
    }
    v.push(MsmConfig { c: Some(16), seg: Some(4), ..MsmConfig::default() });
    v.push(MsmConfig { c: Some(19), seg: Some(32), ..MsmConfig::default() });
    // The balanced kernel with chunks that split most buckets between threads (1: one entry
    // per thread; 5: carries into most buckets), and over 2^20 buckets.
    for (c, chunk) in [(None, Some(1)), (Some(13), Some(5)), (Some(19), None)] {
        v.push(MsmConfig { c, chunk, ..MsmConfig::kernel("bal") });
    }
    // Over a table of shifted bases: c by size, the bench's c = 20 with chunks that split
    // buckets, and a per-bucket kernel.
    for (acc, c, chunk) in [("bal", None, None), ("bal", Some(20), Some(3)), ("f1eo3", Some(16), None)] {
        v.push(MsmConfig { c, chunk, pre: true, ..MsmConfig::kernel(acc) });
    }
    Ok(v)
}

/// Points with specials for the table checks: random, the identity, a duplicate, an opposite.
fn points_with_specials(rng: &mut ChaCha8Rng, n: usize) -> Vec<G1Affine> {
    let mut points = random_points(n, rng.gen());
    if n > 3 {
        points[1] = G1Affine::identity();
        points[2] = points[0];
        points[3] = -points[0];
    }
    points
}

/// Every window block of a shift table at c: point i of block w must be 2^(offset of w) * P_i
/// (the offsets are the running sum of the layout's widths), identities staying identities.
fn check_shift_table(gpu: &Gpu, rng: &mut ChaCha8Rng, n: usize, c: u32) -> Result<Option<String>, GpuError> {
    let points = points_with_specials(rng, n);
    let mut dp = gpu.upload_points(&points)?;
    gpu.precompute_shifts(&mut dp, c)?;
    let layout = WindowLayout::new(c);
    let one = fp_words(&RawFp::from_u64(1));
    let mut shifted: Vec<G1Projective> = points.iter().map(|p| G1Projective::from(*p)).collect();
    for w in 0..layout.nwin as usize {
        if w > 0 {
            for p in shifted.iter_mut() {
                for _ in 0..layout.width(w as u32 - 1) {
                    *p = p.double();
                }
            }
        }
        let words = gpu.shift_table_block(&dp, w)?;
        for (i, (aw, want)) in words.chunks_exact(24).zip(&shifted).enumerate() {
            let got = if aw.iter().all(|&x| x == 0) {
                Some(G1Projective::identity())
            } else {
                let mut xyzz = [0u32; 48];
                xyzz[..24].copy_from_slice(aw);
                xyzz[24..36].copy_from_slice(&one);
                xyzz[36..48].copy_from_slice(&one);
                xyzz_to_projective(&xyzz)
            };
            if got.as_ref() != Some(want) {
                return Ok(Some(format!("window {w}, point {i}: {}", if got.is_none() { "not on the curve" } else { "wrong multiple" })));
            }
        }
    }
    Ok(None)
}

/// An MSM over a shift table whose terms name every other point (odd indices) through a
/// device index list, against the CPU MSM of those terms.
fn check_msm_pre_indexed(gpu: &Gpu, rng: &mut ChaCha8Rng, n: usize, c: u32) -> Result<Option<String>, GpuError> {
    let points = points_with_specials(rng, n);
    let mut dp = gpu.upload_points(&points)?;
    gpu.precompute_shifts(&mut dp, c)?;
    let idx: Vec<u32> = (1..n as u32).step_by(2).collect();
    let mut scalars = random_scalars(idx.len(), rng.gen());
    for (i, s) in special_scalars().iter().enumerate() {
        if i < scalars.len() {
            scalars[i] = *s;
        }
    }
    let di = gpu.upload_indices(&idx)?;
    let ds = gpu.upload_scalar_words(&scalars)?;
    let cfg = MsmConfig { pre: true, ..MsmConfig::default() };
    let (got, _) = gpu.msm_device_cfg(&dp, &ds, idx.len(), Some(&di), true, &cfg)?;
    let sel: Vec<G1Affine> = idx.iter().map(|&i| points[i as usize]).collect();
    let want = sel.iter().zip(&scalars).fold(G1Projective::identity(), |acc, (p, s)| acc + G1Projective::from(*p) * *s);
    Ok((got != want).then(|| "differs from the CPU MSM of the selected terms".to_string()))
}

/// Long bucket lists: 3000 scalars equal to one (one bucket gets them all) and 3000 copies of
/// one point with random scalars (each bucket sums copies: doublings P + P inside the lists).
fn check_msm_long_buckets(gpu: &Gpu, rng: &mut ChaCha8Rng, cfg: &MsmConfig) -> Result<Option<String>, GpuError> {
    check_long_buckets_of::<G1>(gpu, rng, cfg)
}

fn check_long_buckets_of<C: GpuCurve>(gpu: &Gpu, rng: &mut ChaCha8Rng, cfg: &MsmConfig) -> Result<Option<String>, GpuError> {
    let points = random_points_in::<C::Proj>(3000, rng.gen());
    let ones = vec![Scalar::ONE; 3000];
    let sum = points.iter().fold(C::Proj::identity(), |acc, p| acc + C::Proj::from(*p));
    if gpu.msm_of::<C>(&points, &ones, cfg)? != sum {
        return Ok(Some("all-one scalars did not give the sum of the points".into()));
    }
    let same = vec![points[0]; 3000];
    let scalars = random_scalars(3000, rng.gen());
    let total: Scalar = scalars.iter().sum();
    if gpu.msm_of::<C>(&same, &scalars, cfg)? != C::Proj::from(points[0]) * total {
        return Ok(Some("copies of one point did not give (sum of scalars) * P".into()));
    }
    Ok(None)
}

/// One MSM of group `C` with `cfg` against the CPU on `n` random terms with specials
/// (where they fit): zero, one, -1, 2, -2 scalars; identity, duplicate and opposite points.
fn check_msm_of<C: GpuCurve>(gpu: &Gpu, rng: &mut ChaCha8Rng, n: usize, cfg: &MsmConfig) -> Result<Option<String>, GpuError> {
    let mut points = random_points_in::<C::Proj>(n, rng.gen());
    let mut scalars = random_scalars(n, rng.gen());
    let sp = special_scalars();
    for (i, s) in sp.iter().enumerate() {
        if 2 * i + 1 < n {
            scalars[2 * i + 1] = *s;
        }
    }
    if n > 12 {
        points[3] = C::Affine::identity();
        points[5] = points[4];
        points[6] = points[4];
        points[7] = -points[4];
        scalars[6] = scalars[5];
        points[n - 1] = points[0];
    }
    let got = gpu.msm_of::<C>(&points, &scalars, cfg)?;
    let want: C::Proj = if n <= 64 {
        points.iter().zip(&scalars).fold(C::Proj::identity(), |acc, (p, s)| acc + C::Proj::from(*p) * *s)
    } else {
        crate::msm::msm::<C::Proj>(&points, &scalars)
    };
    Ok((got != want).then(|| format!("differs from the CPU {} MSM", C::NAME)))
}

/// Degenerate G1 MSMs with config `cfg`: all scalars zero, all points the identity, all
/// scalars one.
fn check_msm_degenerate(gpu: &Gpu, rng: &mut ChaCha8Rng, cfg: &MsmConfig) -> Result<Option<String>, GpuError> {
    let points = random_points(5000, rng.gen());
    let zeros = vec![Scalar::ZERO; 5000];
    if gpu.msm_with(&points, &zeros, cfg)? != G1Projective::identity() {
        return Ok(Some("all-zero scalars did not give the identity".into()));
    }
    let ids = vec![G1Affine::identity(); 5000];
    let scalars = random_scalars(5000, rng.gen());
    if gpu.msm_with(&ids, &scalars, cfg)? != G1Projective::identity() {
        return Ok(Some("all-identity points did not give the identity".into()));
    }
    let ones = vec![Scalar::ONE; 5000];
    if gpu.msm_with(&points, &ones, cfg)? != sum_ref(&points) {
        return Ok(Some("all-one scalars did not give the sum of the points".into()));
    }
    Ok(None)
}

fn check_batch_add(gpu: &Gpu, rng: &mut ChaCha8Rng, n: usize) -> Result<Option<String>, GpuError> {
    check_batch_add_of::<G1>(gpu, rng, n)
}

fn check_batch_add_of<C: GpuCurve>(gpu: &Gpu, rng: &mut ChaCha8Rng, n: usize) -> Result<Option<String>, GpuError> {
    let total = n * 2 + 7;
    let mut points = random_points_in::<C::Proj>(total, rng.gen());
    points[1] = C::Affine::identity();
    let idx: Vec<u32> = (0..total as u32).filter(|i| i % 2 == 1).take(n).collect();
    let dev = gpu.upload_points_of::<C>(&points)?;
    let got = gpu.sum_selected(&dev, &idx)?;
    let want = idx.iter().fold(C::Proj::identity(), |acc, &i| acc + C::Proj::from(points[i as usize]));
    if got != want {
        return Ok(Some("indexed sum differs from the CPU sum".into()));
    }
    // Every batch-addition kernel at several points per thread (1: the tree sum does it all).
    let didx = gpu.upload_indices(&idx)?;
    for (kernel, _) in C::SUM_AFFINE_KERNELS {
        for chunk in [1u32, 7, 64, 256] {
            let (p, _) = gpu.sum_indexed_with(&dev, Some(&didx.as_view()), idx.len(), kernel, chunk)?;
            if p != want {
                return Ok(Some(format!("indexed sum with kernel {kernel}, {chunk} points per thread, differs from the CPU sum")));
            }
        }
    }
    let (all, _) = gpu.sum_indexed(&dev, None, total)?;
    let sum = points.iter().fold(C::Proj::identity(), |acc, p| acc + C::Proj::from(*p));
    Ok((all != sum).then(|| "sum of all points differs from the CPU sum".to_string()))
}

/// A short fixed-width table of outcomes.
pub fn format_outcomes(outcomes: &[CheckOutcome]) -> String {
    let mut s = String::new();
    for o in outcomes {
        s.push_str(&format!("{:4} {:9.1} ms  {}{}\n", if o.ok { "ok" } else { "FAIL" }, o.ms, o.name, if o.ok { String::new() } else { format!(": {}", o.detail) }));
    }
    let failed = outcomes.iter().filter(|o| !o.ok).count();
    s.push_str(&format!("{} checks, {} failed\n", outcomes.len(), failed));
    s
}


/// How [`check_full_proof`] sets up the CUDA backend over the settings it is given: tables
/// of shifted bases for the G1 queries, resident or streamed query points, the MSMs on lanes
/// or serial, streamed MSMs cut into chunks of at most this many terms (None: by free memory,
/// one chunk at these sizes). The default is the engine's default.
#[derive(Clone, Copy, Debug)]
pub struct ProofVariant {
    pub shifts: ShiftChoice,
    pub mode: ParamsMode,
    pub batch: MsmBatch,
    pub stream_chunk: Option<usize>,
}

impl Default for ProofVariant {
    fn default() -> Self {
        ProofVariant { shifts: ShiftChoice::Off, mode: ParamsMode::Auto, batch: MsmBatch::On, stream_chunk: None }
    }
}

impl ProofVariant {
    /// `base` with this variant's four knobs.
    pub fn apply(&self, base: &CudaSettings) -> CudaSettings {
        CudaSettings { msm_precomp: self.shifts, params: self.mode, msm_batch: self.batch, stream_chunk: self.stream_chunk, ..base.clone() }
    }
}

/// A whole proof of the PoRep-like circuit with 2^log_n constraints on the CUDA backend and
/// on the CPU backend with the same blinding: the four G1 MSM results and the proofs must be
/// identical, and the GPU proof must verify. Uses TEST-ONLY parameters made on the spot.
/// The CUDA backend runs with `settings` and the knobs of `v` (tables, streaming, lanes,
/// chunks) over them.
pub fn check_full_proof(ordinal: usize, settings: &CudaSettings, log_n: u32, seed: u64, v: &ProofVariant) -> CheckOutcome {
    let ProofVariant { shifts, mode, batch, stream_chunk } = *v;
    let t = Instant::now();
    let r = (|| -> anyhow::Result<Option<String>> {
        use crate::backend::{Backend, Blinding, NoGate};
        let circuit = crate::circuit::PorepLike::new(1u64 << log_n, seed);
        let params = crate::setup::generate_test_params(circuit.clone(), &circuit.id(), seed)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb11d);
        let blinding = Blinding::random(&mut rng);
        let cpu = crate::cpu::CpuBackend::new(0);
        let settings = v.apply(settings);
        let cuda = CudaBackend::new(Gpu::open(ordinal, settings.sched)?, ordinal as u32, settings, true)?;
        let asg = crate::prover::synthesize(circuit.clone())?;
        let inputs = asg.public_inputs().to_vec();
        let pc = cpu.prove_start(asg, &params, blinding, &NoGate)?;
        let asg = crate::prover::synthesize(circuit)?;
        let pg = cuda.prove_start(asg, &params, blinding, &NoGate)?;
        // A small proof's MSMs always fit beside each other: batched means on the lanes.
        if batch == MsmBatch::On && !cuda.lanes_opened() {
            return Ok(Some("the MSMs did not run on lanes (msm_batch = on)".into()));
        }
        if stream_chunk.is_some() && cuda.chunked_msms() == 0 {
            return Ok(Some("no streamed MSM ran in chunks".into()));
        }
        for (what, c, g) in [("h", pc.h, pg.h), ("l", pc.l, pg.l), ("a", pc.a, pg.a), ("b_g1", pc.b_g1, pg.b_g1)] {
            if c != g {
                return Ok(Some(format!("msm_{what} differs between the CPU and CUDA backends")));
            }
        }
        let proof_c = cpu.prove_finish(pc, &params)?;
        let proof_g = cuda.prove_finish(pg, &params)?;
        if proof_c != proof_g {
            return Ok(Some("proofs differ between the CPU and CUDA backends".into()));
        }
        match crate::verifier::verify(&params.vk, &proof_g, &inputs) {
            Ok(true) => Ok(None),
            Ok(false) => Ok(Some("the CUDA proof does not verify".into())),
            Err(e) => Ok(Some(format!("verifier error: {e}"))),
        }
    })();
    let mut tables = if shifts == ShiftChoice::Off { String::new() } else { format!(", shift tables {}", shifts.name()) };
    if mode != ParamsMode::Auto {
        tables.push_str(&format!(", query points {}", mode.name()));
    }
    if batch == MsmBatch::Off {
        tables.push_str(", MSMs serial");
    }
    if let Some(c) = stream_chunk {
        tables.push_str(&format!(", streamed MSMs in chunks of {c} terms"));
    }
    outcome(format!("full proof 2^{log_n} constraints{tables}: CUDA == CPU (same blinding) and verifies"), t, r)
}
