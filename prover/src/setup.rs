//! ⚠ TEST-ONLY trusted setup. ⚠
//!
//! Makes Groth16 parameters for a circuit from toxic waste (τ, α, β, γ, δ) drawn from a
//! seeded RNG: anyone who knows the seed can forge proofs. It exists so benches, tests
//! and demos have parameters for circuits of any size; real deployments use parameters
//! from a multi-party ceremony. Files made here carry the TEST-ONLY flag.
//!
//! The construction is the bellman family's (bellperson's `generate_parameters`): the
//! QAP polynomials of every variable evaluated at τ through the Lagrange basis of the
//! domain, H query τ^i·Z(τ)/δ, IC/L queries (β·u + α·v + w)/γ or /δ, A and B queries
//! without their points at infinity. The same conventions let the prover use
//! parameters made by bellperson (tested).
//!
//! The QAP columns come from the circuit's pre-compiled constraints ([`crate::pce`]: CSR
//! A, B, C, ~66 bytes a constraint) by a transposed product with the Lagrange vector, so a
//! 2^27-constraint setup fits in host memory (the per-variable lists of the bellman-style
//! assembly, kept as the tests' reference, weigh several hundred bytes a constraint). The
//! fixed-base multiplications run on the CPU (a comb, below) or on the GPU over the same
//! comb table ([`MulsOn`], `gpu::setup`), with bit-identical points.

use bellpepper_core::{Circuit, SynthesisError};
#[cfg(test)]
use bellpepper_core::{ConstraintSystem, Index, LinearCombination, Variable};
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::domain::Domain;
use crate::ntt;
use crate::params::{Parameters, ParamsInfo, VerifyingKey};
use crate::pce::{matrix::CsrMatrix, CircuitPieces, Pce, PceError};

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("synthesis during setup failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("setup: {0}")]
    Pce(#[from] PceError),
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    #[error("aux variable #{0} appears in no constraint: Groth16 needs every variable constrained")]
    Unconstrained(usize),
    #[error("setup on the GPU: {0}")]
    Gpu(String),
    #[error("setup: the thread extracting the circuit's constraints panicked")]
    ExtractPanicked,
    /// The caller's check of the parameters' shape (known once the constraints are extracted)
    /// refused them before the fixed-base multiplications.
    #[error("refused before the multiplications: {0}")]
    Refused(String),
}

/// The shape of the parameters the setup makes from `pce` (circuit `circuit_id`), known as
/// soon as the constraints are extracted, before the fixed-base multiplications that take
/// most of a setup's time: H has n − 1 points, L one per aux variable, IC one per input, A
/// every input (each is enforced in A) and the aux variables with a term in A, B (in G1 and
/// G2) the inputs and aux variables with a term in B. A column whose terms cancel at τ (a
/// chance of ~2^-255 each) would leave its point out of the real parameters.
pub fn expected_shape(pce: &Pce, circuit_id: &str) -> Result<crate::params::ParamsShape, SetupError> {
    let (a_aux, b_inputs, b_aux) = pce.densities();
    let (inputs, aux) = (pce.num_inputs() as u64, pce.num_aux() as u64);
    let n = Domain::new(pce.num_constraints())?.n as u64;
    let b = (b_inputs.count() + b_aux.count()) as u64;
    Ok(crate::params::ParamsShape {
        info: ParamsInfo { circuit_id: circuit_id.to_string(), num_inputs: inputs, num_aux: aux, num_constraints: pce.num_constraints() as u64, domain_size: n, test_only: true },
        ic: inputs,
        h: n - 1,
        l: aux,
        a: inputs + a_aux.count() as u64,
        b_g1: b,
        b_g2: b,
    })
}

/// Where the setup's fixed-base multiplications run (everything else runs on the CPU).
#[derive(Clone, Copy, Default)]
pub enum MulsOn<'a> {
    /// The comb on all cores (rayon).
    #[default]
    Cpu,
    /// The same comb table, uploaded once per group, the muls in batches on this GPU.
    #[cfg(feature = "cuda")]
    Gpu(&'a crate::gpu::Gpu),
    #[doc(hidden)]
    _Lifetime(std::marker::PhantomData<&'a ()>),
}

/// Columns of the R1CS matrices: per variable, its (coefficient, row) entries (the
/// bellman-style assembly: the reference the PCE-based columns are tested against).
#[cfg(test)]
#[derive(Default)]
struct KeypairAssembly {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    at_inputs: Vec<Vec<(Scalar, usize)>>,
    bt_inputs: Vec<Vec<(Scalar, usize)>>,
    ct_inputs: Vec<Vec<(Scalar, usize)>>,
    at_aux: Vec<Vec<(Scalar, usize)>>,
    bt_aux: Vec<Vec<(Scalar, usize)>>,
    ct_aux: Vec<Vec<(Scalar, usize)>>,
}

#[cfg(test)]
impl ConstraintSystem<Scalar> for KeypairAssembly {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // Values are not needed to make parameters; the closure is not called.
        self.at_aux.push(Vec::new());
        self.bt_aux.push(Vec::new());
        self.ct_aux.push(Vec::new());
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.at_inputs.push(Vec::new());
        self.bt_inputs.push(Vec::new());
        self.ct_inputs.push(Vec::new());
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let row = self.num_constraints;
        let mut put = |lc: LinearCombination<Scalar>, which: usize| {
            for (var, coeff) in lc.iter() {
                let col = match (which, var.get_unchecked()) {
                    (0, Index::Input(i)) => &mut self.at_inputs[i],
                    (1, Index::Input(i)) => &mut self.bt_inputs[i],
                    (_, Index::Input(i)) => &mut self.ct_inputs[i],
                    (0, Index::Aux(i)) => &mut self.at_aux[i],
                    (1, Index::Aux(i)) => &mut self.bt_aux[i],
                    (_, Index::Aux(i)) => &mut self.ct_aux[i],
                };
                col.push((*coeff, row));
            }
        };
        put(a(LinearCombination::zero()), 0);
        put(b(LinearCombination::zero()), 1);
        put(c(LinearCombination::zero()), 2);
        self.num_constraints += 1;
    }
    crate::flat_namespaces!();
}

/// The toxic waste. Public only so tests can build parameters both ways.
#[derive(Clone, Copy, Debug)]
pub struct ToxicWaste {
    pub tau: Scalar,
    pub alpha: Scalar,
    pub beta: Scalar,
    pub gamma: Scalar,
    pub delta: Scalar,
}

impl ToxicWaste {
    /// ⚠ TEST-ONLY: derived from `seed`.
    pub fn from_seed(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5e70_7e57_0000_0000);
        let mut nz = || loop {
            let x = Scalar::random(&mut rng);
            if !bool::from(x.is_zero()) {
                return x;
            }
        };
        ToxicWaste { tau: nz(), alpha: nz(), beta: nz(), gamma: nz(), delta: nz() }
    }
}

/// ⚠ TEST-ONLY setup for `circuit`, toxic waste from `seed`, muls on the CPU.
pub fn generate_test_params<C: Circuit<Scalar>>(circuit: C, circuit_id: &str, seed: u64) -> Result<Parameters, SetupError> {
    generate_with(circuit, circuit_id, ToxicWaste::from_seed(seed), MulsOn::Cpu)
}

/// Fixed-base multiplication k·G for many k by a comb of w-bit windows: `table[i·2^w + d]`
/// = d·2^(w·i)·G (affine), so k·G = Σ_i table[i·2^w + digit_i(k)]: ⌈255/w⌉ mixed additions
/// and no doubling, where a wNAF table still costs ~255 doublings per scalar. With w = 16
/// (2^24 scalars) a G1 table holds 16 × 2^16 points (96 MiB), and setups of 2^24-constraint
/// circuits fit in minutes instead of the better part of an hour. The GPU path
/// (`gpu::setup`, `cuda/setup.cu`) uploads this very table and sums the same digits.
pub(crate) struct Comb<P: Curve> {
    pub(crate) w: usize,
    pub(crate) windows: usize,
    pub(crate) table: Vec<P::AffineRepr>,
}

impl<P> Comb<P>
where
    P: Curve + Send + Sync,
    P::AffineRepr: PrimeCurveAffine + Send + Sync + Copy,
{
    /// Window width for `count` scalars: the table (⌈255/w⌉·2^w additions) stays below
    /// about 1/16 of the per-scalar work (count·⌈255/w⌉).
    pub(crate) fn width_for(count: usize) -> usize {
        let log = usize::BITS as usize - count.max(1).leading_zeros() as usize;
        log.saturating_sub(4).clamp(4, 16)
    }

    pub(crate) fn new(base: P, count: usize) -> Self {
        Self::with_width(base, Self::width_for(count))
    }

    pub(crate) fn with_width(base: P, w: usize) -> Self {
        let windows = 255usize.div_ceil(w);
        // Row bases 2^(w·i)·G, then each row's multiples 0..2^w by additions, in parallel.
        let mut bases = Vec::with_capacity(windows);
        let mut b = base;
        for _ in 0..windows {
            bases.push(b);
            for _ in 0..w {
                b = b.double();
            }
        }
        let proj: Vec<P> = bases
            .par_iter()
            .flat_map_iter(|rb| {
                let mut row = Vec::with_capacity(1 << w);
                let mut acc = P::identity();
                for _ in 0..(1usize << w) {
                    row.push(acc);
                    acc += rb;
                }
                row
            })
            .collect();
        let mut table = vec![P::AffineRepr::identity(); proj.len()];
        P::batch_normalize(&proj, &mut table);
        Comb { w, windows, table }
    }

    fn mul(&self, s: &Scalar) -> P {
        let l = crate::msm::to_limbs(s);
        let mut acc = P::identity();
        for i in 0..self.windows {
            let d = crate::msm::digit(&l, i * self.w, self.w);
            if d != 0 {
                acc += self.table[(i << self.w) + d];
            }
        }
        acc
    }

    /// k·G for every k, affine (one batch normalisation per chunk).
    pub(crate) fn muls(&self, scalars: &[Scalar]) -> Vec<P::AffineRepr> {
        let mut out = vec![P::AffineRepr::identity(); scalars.len()];
        out.par_chunks_mut(1024).zip(scalars.par_chunks(1024)).for_each(|(o, s)| {
            let proj: Vec<P> = s.iter().map(|k| self.mul(k)).collect();
            P::batch_normalize(&proj, o);
        });
        out
    }
}

/// The muls of one group where [`MulsOn`] says: the CPU comb, or its table on the GPU.
struct Muls<'a, P: Curve> {
    comb: Comb<P>,
    /// The device's share of the time (GPU muls only).
    times: std::sync::Mutex<SetupTimes>,
    #[cfg(feature = "cuda")]
    gpu: Option<(&'a crate::gpu::Gpu, Box<dyn std::any::Any>)>,
    #[cfg(not(feature = "cuda"))]
    _on: std::marker::PhantomData<&'a ()>,
}

/// The groups the setup multiplies in, with their device counterpart.
trait SetupGroup: Curve + Send + Sync
where
    Self::AffineRepr: PrimeCurveAffine + Send + Sync + Copy,
{
    #[cfg(feature = "cuda")]
    type Dev: crate::gpu::SetupCurve<Affine = Self::AffineRepr>;
}
impl SetupGroup for G1Projective {
    #[cfg(feature = "cuda")]
    type Dev = crate::gpu::G1;
}
impl SetupGroup for G2Projective {
    #[cfg(feature = "cuda")]
    type Dev = crate::gpu::G2;
}

impl<'a, P: SetupGroup> Muls<'a, P>
where
    P::AffineRepr: PrimeCurveAffine + Send + Sync + Copy,
{
    fn new(base: P, count: usize, on: MulsOn<'a>) -> Result<Self, SetupError> {
        let comb = Comb::<P>::new(base, count);
        match on {
            #[cfg(feature = "cuda")]
            MulsOn::Gpu(gpu) => {
                let dev = gpu.upload_comb::<P::Dev>(comb.w, comb.windows, &comb.table).map_err(|e| SetupError::Gpu(e.to_string()))?;
                Ok(Muls { comb, times: Default::default(), gpu: Some((gpu, Box::new(dev))) })
            }
            _ => Ok(Muls {
                comb,
                times: Default::default(),
                #[cfg(feature = "cuda")]
                gpu: None,
                #[cfg(not(feature = "cuda"))]
                _on: std::marker::PhantomData,
            }),
        }
    }

    fn muls(&self, scalars: &[Scalar]) -> Result<Vec<P::AffineRepr>, SetupError> {
        #[cfg(feature = "cuda")]
        if let Some((gpu, dev)) = &self.gpu {
            let dev = dev.downcast_ref::<crate::gpu::DeviceComb<P::Dev>>().expect("the device comb of this group");
            // Initialised (in parallel: 12 GiB a query at 2^27) rather than `set_len` over
            // uninitialised memory, which is undefined behaviour whatever the download does.
            let mut out: Vec<P::AffineRepr> = Vec::with_capacity(scalars.len());
            out.par_extend(rayon::iter::repeat_n(P::AffineRepr::identity(), scalars.len()));
            let t = gpu.comb_muls(dev, scalars, &mut out, 0).map_err(|e| SetupError::Gpu(e.to_string()))?;
            if let Ok(mut g) = self.times.lock() {
                g.kernel_ms += t.kernel_ms;
                g.h2d_ms += t.h2d_ms;
                g.d2h_ms += t.d2h_ms;
            }
            return Ok(out);
        }
        Ok(self.comb.muls(scalars))
    }
}

/// Per variable (in column order: aux, then inputs), its QAP polynomials at τ: Σ over the
/// column's non-zeros of coefficient · L_row(τ), for each of A, B, C: the transposed
/// products Aᵀ·λ, Bᵀ·λ, Cᵀ·λ of the PCE's matrices with the Lagrange vector λ. Each task
/// owns a range of columns and reads the whole matrix (in row order), summing the entries
/// of its columns: no transposed copy and no synchronisation, at the price of every task
/// reading the matrix (a few bytes a non-zero, sequential). Field addition is exact, so the
/// values equal the bellman-style assembly's (tested).
pub(crate) fn qap_columns(pce: &Pce, lagrange: &[Scalar]) -> [Vec<Scalar>; 3] {
    let (a, b, c) = pce.matrices();
    let cols = pce.columns();
    [a, b, c].map(|m| transposed_product(m, cols, lagrange))
}

fn transposed_product(m: &CsrMatrix, cols: usize, lagrange: &[Scalar]) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; cols];
    let tasks = (rayon::current_num_threads() * 2).max(1);
    let width = cols.div_ceil(tasks).max(1);
    out.par_chunks_mut(width).enumerate().for_each(|(t, slice)| {
        let lo = (t * width) as u32;
        let len = slice.len() as u32;
        for r in 0..m.rows() {
            let l = &lagrange[r];
            for k in m.row_ptr[r] as usize..m.row_ptr[r + 1] as usize {
                let c = m.cols[k].wrapping_sub(lo);
                if c < len {
                    let acc = &mut slice[c as usize];
                    match m.coeffs.get(k) {
                        crate::pce::matrix::IDX_ONE => *acc += l,
                        crate::pce::matrix::IDX_MINUS_ONE => *acc -= l,
                        i => *acc += m.table[i as usize] * l,
                    }
                }
            }
        }
    });
    out
}

/// Where a setup's time went (ms, host wall unless said): the extraction of the circuit's
/// constraints (when the setup ran it), the per-variable scalars (of which the Lagrange basis
/// at τ and the QAP columns), the comb tables, the fixed-base multiplications; of the latter,
/// on the GPU, the kernels (CUDA events) and the host wall of the scalar uploads and point
/// downloads. With [`generate_overlapped`] the Lagrange basis and the tables are computed
/// while the constraints are extracted: `prepare_ms` is that part's wall, inside `extract_ms`
/// when the extraction took longer.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetupTimes {
    pub extract_ms: f64,
    pub prepare_ms: f64,
    pub scalars_ms: f64,
    pub lagrange_ms: f64,
    pub columns_ms: f64,
    pub tables_ms: f64,
    pub muls_ms: f64,
    pub kernel_ms: f64,
    pub h2d_ms: f64,
    pub d2h_ms: f64,
}

impl SetupTimes {
    /// Every phase by name (the `setup` span's args).
    pub fn fields(&self) -> [(&'static str, f64); 10] {
        [
            ("extract_ms", self.extract_ms),
            ("prepare_ms", self.prepare_ms),
            ("scalars_ms", self.scalars_ms),
            ("lagrange_ms", self.lagrange_ms),
            ("columns_ms", self.columns_ms),
            ("tables_ms", self.tables_ms),
            ("muls_ms", self.muls_ms),
            ("kernel_ms", self.kernel_ms),
            ("h2d_ms", self.h2d_ms),
            ("d2h_ms", self.d2h_ms),
        ]
    }
}

/// Setup from explicit toxic waste, the fixed-base multiplications where `on` says.
pub fn generate_with<C: Circuit<Scalar>>(circuit: C, circuit_id: &str, w: ToxicWaste, on: MulsOn<'_>) -> Result<Parameters, SetupError> {
    let pce = crate::pce::extract(circuit)?;
    Ok(generate_from_pce(&pce, circuit_id, w, on)?.0)
}

/// What a setup computes before it needs the circuit's constraints: the Lagrange basis of the
/// domain at τ, the H scalars, and the comb tables (uploaded when the muls run on a GPU).
struct Prepared<'a> {
    /// The Lagrange basis: as long as the domain it is for.
    lagrange: Vec<Scalar>,
    h_scalars: Vec<Scalar>,
    t1: Muls<'a, G1Projective>,
    t2: Muls<'a, G2Projective>,
}

/// The Lagrange basis and H scalars of a domain of `n` points at τ (ms into `times`).
fn lagrange_at_tau(n: usize, w: &ToxicWaste, times: &mut SetupTimes) -> Result<(Vec<Scalar>, Vec<Scalar>), SetupError> {
    let t0 = std::time::Instant::now();
    let domain = Domain::new(n)?;
    let delta_inv = Option::<Scalar>::from(w.delta.invert()).unwrap_or(Scalar::ONE);
    // Powers of τ, then (inverse NTT) the Lagrange basis evaluated at τ.
    let mut lagrange = ntt::powers(w.tau, domain.n);
    let coeff = domain.z(&w.tau) * delta_inv;
    let h_scalars: Vec<Scalar> = lagrange[..domain.n - 1].par_iter().map(|p| *p * coeff).collect();
    ntt::inverse(&mut lagrange, &domain);
    times.lagrange_ms += t0.elapsed().as_secs_f64() * 1e3;
    Ok((lagrange, h_scalars))
}

/// [`Prepared`] for a domain of `n` points and `vars` variables (the tables' width follows
/// the number of muls; any width gives the same points).
fn prepare<'a>(n: usize, vars: usize, w: &ToxicWaste, on: MulsOn<'a>, times: &mut SetupTimes) -> Result<Prepared<'a>, SetupError> {
    let (lagrange, h_scalars) = lagrange_at_tau(n, w, times)?;
    let t0 = std::time::Instant::now();
    let total_g1 = h_scalars.len() + 3 * vars;
    let t1 = Muls::<G1Projective>::new(G1Projective::generator(), total_g1, on)?;
    let t2 = Muls::<G2Projective>::new(G2Projective::generator(), vars, on)?;
    times.tables_ms += t0.elapsed().as_secs_f64() * 1e3;
    Ok(Prepared { lagrange, h_scalars, t1, t2 })
}

/// Setup from a circuit's pre-compiled constraints (see [`generate_with`]), with its times.
pub fn generate_from_pce(pce: &Pce, circuit_id: &str, w: ToxicWaste, on: MulsOn<'_>) -> Result<(Parameters, SetupTimes), SetupError> {
    let mut times = SetupTimes::default();
    let prep = prepare(pce.num_constraints(), pce.num_inputs() + pce.num_aux(), &w, on, &mut times)?;
    let params = from_prepared(pce, circuit_id, &w, prep, &mut times)?;
    Ok((params, times))
}

/// ⚠ TEST-ONLY setup of `circuit` (see [`generate_with`]) with its constraints extracted in
/// its pieces on the rayon pool ([`crate::pce::extract_pieces`]; on one thread for a circuit
/// without pieces) while the same pool computes what does not need them ([`Prepared`]: the
/// Lagrange basis at τ, the comb tables) for a domain of `constraints_hint` constraints. A
/// hint that turns out wrong costs the basis again, never a different result: the
/// parameters equal [`generate_from_pce`]'s on the extracted constraints (tested), which are
/// the sequential extraction's. Returns the pre-compiled constraints too (the engine keeps
/// them).
pub fn generate_overlapped<C: CircuitPieces + Send>(circuit: C, circuit_id: &str, constraints_hint: usize, w: ToxicWaste, on: MulsOn<'_>) -> Result<(Parameters, Pce, SetupTimes), SetupError> {
    generate_overlapped_checked(circuit, circuit_id, constraints_hint, w, on, &|_| Ok(()))
}

/// [`generate_overlapped`] with `check` run on the parameters' [`expected_shape`] once the
/// constraints are extracted, before the multiplications: an `Err` from it ends the setup
/// there ([`SetupError::Refused`]) — `prove --setup-on-device` checks its RAM budget so, a
/// minute before the parameters would exist.
pub fn generate_overlapped_checked<C: CircuitPieces + Send>(circuit: C, circuit_id: &str, constraints_hint: usize, w: ToxicWaste, on: MulsOn<'_>, check: &dyn Fn(&crate::params::ParamsShape) -> Result<(), String>) -> Result<(Parameters, Pce, SetupTimes), SetupError> {
    let mut times = SetupTimes::default();
    let t0 = std::time::Instant::now();
    // The extraction is a task of the current rayon pool (the caller's, or the global one):
    // it runs the circuit's sequential parts, and its pieces go to the same pool, where they
    // share the cores with `prepare`'s parallel loops (run on this thread meanwhile).
    let mut extracted = None;
    let prep = rayon::in_place_scope(|s| {
        let slot = &mut extracted;
        s.spawn(move |_| {
            let pce = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::pce::extract_pieces(circuit, constraints_hint).map(|(p, _)| p)));
            *slot = Some((pce, t0.elapsed().as_secs_f64() * 1e3));
        });
        let prep = prepare(constraints_hint.max(1), constraints_hint, &w, on, &mut times);
        times.prepare_ms = t0.elapsed().as_secs_f64() * 1e3;
        prep
    });
    let (pce, extract_ms) = extracted.ok_or(SetupError::ExtractPanicked)?;
    times.extract_ms = extract_ms;
    let (pce, prep) = (pce.map_err(|_| SetupError::ExtractPanicked)??, prep?);
    check(&expected_shape(&pce, circuit_id)?).map_err(SetupError::Refused)?;
    let params = from_prepared(&pce, circuit_id, &w, prep, &mut times)?;
    Ok((params, pce, times))
}

/// The rest of the setup once the constraints are known: the QAP columns, the scalars of
/// each query, the muls. A [`Prepared`] for another domain size has its basis recomputed.
fn from_prepared(pce: &Pce, circuit_id: &str, w: &ToxicWaste, mut prep: Prepared<'_>, times: &mut SetupTimes) -> Result<Parameters, SetupError> {
    let t0 = std::time::Instant::now();
    let num_constraints = pce.num_constraints();
    let (num_inputs, num_aux) = (pce.num_inputs(), pce.num_aux());
    let domain = Domain::new(num_constraints)?;
    let n = domain.n;
    if prep.lagrange.len() != n {
        (prep.lagrange, prep.h_scalars) = lagrange_at_tau(num_constraints, w, times)?;
    }
    let Prepared { lagrange, h_scalars, t1, t2 } = prep;
    let gamma_inv = Option::<Scalar>::from(w.gamma.invert()).unwrap_or(Scalar::ONE);
    let delta_inv = Option::<Scalar>::from(w.delta.invert()).unwrap_or(Scalar::ONE);

    // Columns: aux 0..num_aux, then inputs.
    let tc = std::time::Instant::now();
    let [u, v, wc] = qap_columns(pce, &lagrange);
    drop(lagrange);
    times.columns_ms += tc.elapsed().as_secs_f64() * 1e3;
    let ic_l = |range: std::ops::Range<usize>, inv: Scalar| -> Vec<Scalar> { range.into_par_iter().map(|j| (w.beta * u[j] + w.alpha * v[j] + wc[j]) * inv).collect() };
    let l_scalars = ic_l(0..num_aux, delta_inv);
    let ic_scalars = ic_l(num_aux..num_aux + num_inputs, gamma_inv);
    drop(wc);
    if let Some(i) = l_scalars.iter().position(|e| bool::from(e.is_zero())) {
        return Err(SetupError::Unconstrained(i));
    }
    // A and B queries: inputs first, then aux (the parameters' order), zeros left out.
    let order = || (num_aux..num_aux + num_inputs).chain(0..num_aux);
    let nonzero = |col: &[Scalar]| -> Vec<Scalar> { order().map(|j| col[j]).filter(|s| !bool::from(s.is_zero())).collect() };
    let a_scalars = nonzero(&u);
    drop(u);
    let b_scalars = nonzero(&v);
    drop(v);
    times.scalars_ms = times.lagrange_ms + t0.elapsed().as_secs_f64() * 1e3;

    let t0 = std::time::Instant::now();
    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let vk = VerifyingKey {
        alpha_g1: (g1 * w.alpha).to_affine(),
        beta_g1: (g1 * w.beta).to_affine(),
        beta_g2: (g2 * w.beta).to_affine(),
        gamma_g2: (g2 * w.gamma).to_affine(),
        delta_g1: (g1 * w.delta).to_affine(),
        delta_g2: (g2 * w.delta).to_affine(),
        ic: t1.muls(&ic_scalars)?,
    };
    let h = t1.muls(&h_scalars)?;
    drop(h_scalars);
    let l = t1.muls(&l_scalars)?;
    drop(l_scalars);
    let a = t1.muls(&a_scalars)?;
    drop(a_scalars);
    let b_g1 = t1.muls(&b_scalars)?;
    let b_g2 = t2.muls(&b_scalars)?;
    times.muls_ms = t0.elapsed().as_secs_f64() * 1e3;
    for t in [&t1.times, &t2.times] {
        if let Ok(g) = t.lock() {
            times.kernel_ms += g.kernel_ms;
            times.h2d_ms += g.h2d_ms;
            times.d2h_ms += g.d2h_ms;
        }
    }
    Ok(Parameters {
        vk,
        h: h.into(),
        l: l.into(),
        a: a.into(),
        b_g1: b_g1.into(),
        b_g2: b_g2.into(),
        info: ParamsInfo {
            circuit_id: circuit_id.to_string(),
            num_inputs: num_inputs as u64,
            num_aux: num_aux as u64,
            num_constraints: num_constraints as u64,
            domain_size: n as u64,
            test_only: true,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Affine, G2Affine};
    use rand::SeedableRng;

    fn scalars(n: usize) -> Vec<Scalar> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut v: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        v.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(1u64 << 40), -Scalar::from(2u64)]);
        v
    }

    #[test]
    fn comb_multiples_equal_scalar_multiplication_in_both_groups() {
        for count in [1usize, 200, 5000] {
            let s = scalars(count.min(300));
            let c1 = Comb::<G1Projective>::new(G1Projective::generator(), count);
            let want1: Vec<G1Affine> = s.iter().map(|k| (G1Projective::generator() * k).to_affine()).collect();
            assert_eq!(c1.muls(&s), want1, "G1, width {}", c1.w);
            let c2 = Comb::<G2Projective>::new(G2Projective::generator(), count);
            let want2: Vec<G2Affine> = s.iter().map(|k| (G2Projective::generator() * k).to_affine()).collect();
            assert_eq!(c2.muls(&s), want2, "G2, width {}", c2.w);
        }
        assert_eq!(Comb::<G1Projective>::width_for(1 << 24), 16);
        assert_eq!(Comb::<G1Projective>::width_for(1), 4);
    }

    #[test]
    fn comb_table_layout_is_what_the_gpu_kernels_index() {
        // cuda/setup_comb.cuh reads table[(i << w) + d] as d·2^(w·i)·G, identity at d = 0.
        for w in [4usize, 7] {
            let c = Comb::<G1Projective>::with_width(G1Projective::generator(), w);
            assert_eq!((c.windows, c.table.len()), (255usize.div_ceil(w), c.windows << w));
            for (i, d) in [(0usize, 0usize), (0, 1), (1, 3), (c.windows - 1, (1 << w) - 1), (c.windows / 2, 5)] {
                let k = Scalar::from(d as u64) * Scalar::from(2u64).pow_vartime([(w * i) as u64]);
                assert_eq!(c.table[(i << w) + d], (G1Projective::generator() * k).to_affine(), "w {w}, row {i}, digit {d}");
            }
        }
    }

    /// The bellman-style assembly's per-variable (u, v, w) at τ, in the PCE's column order
    /// (aux, then inputs).
    fn assembly_columns<C: Circuit<Scalar>>(circuit: C, tau: Scalar) -> [Vec<Scalar>; 3] {
        let mut cs = KeypairAssembly::default();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
        circuit.synthesize(&mut cs).unwrap();
        for i in 0..cs.num_inputs {
            cs.enforce(|| "input", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
        }
        let domain = Domain::new(cs.num_constraints).unwrap();
        let mut lagrange = ntt::powers(tau, domain.n);
        ntt::inverse(&mut lagrange, &domain);
        let eval = |col: &Vec<(Scalar, usize)>| col.iter().fold(Scalar::ZERO, |acc, (c, row)| acc + *c * lagrange[*row]);
        let cols = |aux: &[Vec<(Scalar, usize)>], inp: &[Vec<(Scalar, usize)>]| aux.iter().chain(inp).map(eval).collect::<Vec<_>>();
        [cols(&cs.at_aux, &cs.at_inputs), cols(&cs.bt_aux, &cs.bt_inputs), cols(&cs.ct_aux, &cs.ct_inputs)]
    }

    #[test]
    fn overlapped_setup_equals_the_sequential_one_whatever_the_hint() {
        use crate::circuit::Family;
        let w = ToxicWaste::from_seed(4);
        for (family, n) in [(Family::PorepLike, 1u64 << 10), (Family::Mix16, 1 << 11)] {
            let circuit = family.circuit(n, 0);
            let want = generate_with(circuit.clone(), "t", w, MulsOn::Cpu).unwrap();
            // The right size, a smaller and a larger domain (the basis redone), no hint.
            for hint in [n as usize, n as usize / 4, 4 * n as usize, 0] {
                let (got, pce, times) = generate_overlapped(circuit.clone(), "t", hint, w, MulsOn::Cpu).unwrap();
                assert!(got == want, "{family:?} n={n}, hint {hint}: parameters differ");
                assert_eq!(expected_shape(&pce, "t").unwrap(), got.shape(), "{family:?} n={n}: the shape known before the muls");
                assert_eq!(pce.num_constraints() as u64, got.info.num_constraints);
                assert!(times.extract_ms > 0.0 && times.lagrange_ms > 0.0, "{times:?}");
            }
        }
    }

    /// A check that refuses the expected shape ends the setup before the multiplications,
    /// with its reason; one that accepts it changes nothing.
    #[test]
    fn a_refused_shape_ends_the_setup_before_the_muls() {
        use crate::circuit::Family;
        let w = ToxicWaste::from_seed(6);
        let circuit = Family::PorepLike.circuit(1 << 10, 0);
        let seen = std::sync::Mutex::new(None);
        let e = generate_overlapped_checked(circuit.clone(), "t", 1 << 10, w, MulsOn::Cpu, &|s| {
            *seen.lock().unwrap() = Some(s.clone());
            Err(format!("{} points of L do not fit", s.l))
        })
        .unwrap_err();
        let shape = seen.into_inner().unwrap().expect("the check ran");
        assert!(matches!(&e, SetupError::Refused(r) if r == &format!("{} points of L do not fit", shape.l)), "{e}");
        assert!(e.to_string().starts_with("refused before the multiplications: "), "{e}");
        let (got, _, times) = generate_overlapped_checked(circuit.clone(), "t", 1 << 10, w, MulsOn::Cpu, &|_| Ok(())).unwrap();
        assert_eq!(got.shape(), shape);
        assert!(times.muls_ms > 0.0);
    }

    /// Sizes where the extraction runs several pieces (a SHA block and the arithmetic
    /// section; two mix16 pieces), on 1 and 3 threads: the parameters of the sequential
    /// extraction.
    #[test]
    fn overlapped_setup_from_pieces_equals_the_sequential_one() {
        use crate::circuit::Family;
        let w = ToxicWaste::from_seed(5);
        for (family, n) in [(Family::PorepLike, 1u64 << 16), (Family::Mix16, 1 << 15)] {
            let circuit = family.circuit(n, 0);
            let (want, _) = generate_from_pce(&crate::pce::extract(circuit.clone()).unwrap(), "t", w, MulsOn::Cpu).unwrap();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (got, _, _) = pool.install(|| generate_overlapped(circuit.clone(), "t", n as usize, w, MulsOn::Cpu)).unwrap();
                assert!(got == want, "{family:?} n={n}, {threads} threads: parameters differ");
            }
        }
    }

    #[test]
    fn pce_columns_equal_the_assembly_s_bit_for_bit() {
        use crate::circuit::Family;
        let tau = ToxicWaste::from_seed(3).tau;
        for (family, n) in [(Family::PorepLike, 1u64 << 10), (Family::PorepLike, 3000), (Family::Mix16, 1 << 11)] {
            let circuit = family.circuit(n, 0);
            let pce = crate::pce::extract(circuit.clone()).unwrap();
            let domain = Domain::new(pce.num_constraints()).unwrap();
            let mut lagrange = ntt::powers(tau, domain.n);
            ntt::inverse(&mut lagrange, &domain);
            let got = qap_columns(&pce, &lagrange);
            let want = assembly_columns(circuit, tau);
            for k in 0..3 {
                assert_eq!(got[k].len(), want[k].len());
                assert!(got[k] == want[k], "{family:?} n={n}: matrix {k} differs");
            }
            assert!(got[0].iter().any(|s| !bool::from(s.is_zero())));
        }
    }
}
