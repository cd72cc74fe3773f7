//! Fr NTTs on the GPU: domains (twiddle tables resident on the device, one per size), the
//! pass plan of the DIF kernel, forward/inverse/coset transforms and the quotient
//! H = (A*B - C) / Z of Groth16, all natural order in and out like the CPU path.
//!
//! Every NTT kernel exists with two Fr products (issue 5): the CIOS `Fr::mul` and the
//! even/odd `Fr::mul_eo` (`_eo` kernels, identical results; it made the MSM's bucket sums
//! 1.8x faster). [`NttMul`] picks the set: `PROOFSCOPE_NTT_MUL=cios|eo` when the device is
//! opened (default eo: measured faster on the H200, bit-identical), or [`Gpu::set_ntt_mul`] (`gpu check` and `gpu bench`
//! run both).
//!
//! The DIF pass exists in two shapes: one radix-2 stage per shared-memory step
//! (`ntt_dif_pass`, a barrier per stage) and two stages per step (`ntt_dif_pass_r4`: each
//! thread keeps 4 elements in registers across both stages, one barrier per two stages;
//! same butterflies, identical output). [`NttRadix`] picks it: `PROOFSCOPE_NTT_RADIX=2|4`
//! when the device is opened (default 4: measured faster on the H200, bit-identical), or [`Gpu::set_ntt_radix`].
//!
//! Two more knobs shape the memory traffic, same output bit for bit: [`NttPlan`]
//! (`PROOFSCOPE_NTT_PLAN`, [`Gpu::set_ntt_plan`]) groups the stages above the last ten into
//! as few DIF passes as possible, each one global-memory round trip; [`NttBitrev`]
//! (`PROOFSCOPE_NTT_BITREV`, [`Gpu::set_ntt_bitrev`]) picks the closing bit reversal: one
//! scattered store per element, a 32x32 shared-memory tile with coalesced reads and writes, or
//! (the default) none of its own, fused into the store of the last DIF pass.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, LaunchConfig};
use ff::{Field, PrimeField};

use super::convert::{scalar_words, scalars_from_words};
use super::device::{cfg_1d, launch, Ctx, Gpu, GpuError, KernelTimer, UploadTimes};

/// Largest supported domain (the twiddle index fits in 32 bits, the bit reversal too).
pub const MAX_LOG_N: u32 = 28;

/// Twiddle tables of one domain size, resident on the device.
pub(crate) struct Domain {
    log_n: u32,
    /// w^j for j < n/2, and w^-j.
    tw_fwd: CudaSlice<u32>,
    tw_inv: CudaSlice<u32>,
    omega: Scalar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttDirection {
    Forward,
    Inverse,
}

/// A run-time choice read from the environment variable `name`: unset or empty gives the
/// type's default, a bad value an error naming the variable.
fn env_choice<T: Default>(name: &str, parse: fn(&str) -> Result<T, GpuError>) -> Result<T, GpuError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => parse(&v).map_err(|e| GpuError::Other(format!("{name}: {e}"))),
        _ => Ok(T::default()),
    }
}

/// The variant of `all` whose `name` is `v` (trimmed), else an error naming `what` and the
/// accepted names: one parser for the knobs whose names are their spellings.
fn parse_named<T: Copy>(v: &str, all: &[T], name: fn(T) -> &'static str, what: &str) -> Result<T, GpuError> {
    let v = v.trim();
    all.iter().copied().find(|&x| name(x) == v).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&x| name(x)).collect();
        GpuError::Other(format!("unknown {what} {v:?} (expected {})", names.join(" or ")))
    })
}

/// The Fr product of the NTT kernels (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NttMul {
    /// `Fr::mul` (CIOS), the plain kernel names.
    Cios,
    /// `Fr::mul_eo` (even/odd), the `_eo` kernels. The default: 6.27 ms vs 7.66 ms at 2^24
    /// on the H200, bit-identical (reports/gpu/2026-11-30-run4-even-odd.md).
    #[default]
    Eo,
}

impl NttMul {
    pub const ALL: [NttMul; 2] = [NttMul::Cios, NttMul::Eo];

    pub fn parse(v: &str) -> Result<NttMul, GpuError> {
        parse_named(v, &NttMul::ALL, NttMul::name, "NTT product")
    }

    pub fn name(self) -> &'static str {
        match self {
            NttMul::Cios => "cios",
            NttMul::Eo => "eo",
        }
    }

    /// `PROOFSCOPE_NTT_MUL` (unset or empty: the default, eo).
    pub(crate) fn from_env() -> Result<NttMul, GpuError> {
        env_choice("PROOFSCOPE_NTT_MUL", NttMul::parse)
    }

    /// The kernel of `ntt.cu` named `base` for this product.
    fn kernel(self, base: &'static str) -> &'static str {
        match (self, base) {
            (NttMul::Cios, _) => base,
            (NttMul::Eo, "ntt_dif_pass") => "ntt_dif_pass_eo",
            (NttMul::Eo, "ntt_bitrev_scale") => "ntt_bitrev_scale_eo",
            (NttMul::Eo, "ntt_bitrev_tile") => "ntt_bitrev_tile_eo",
            (NttMul::Eo, "ntt_dif_last_bitrev") => "ntt_dif_last_bitrev_eo",
            (NttMul::Eo, "fr_powers") => "fr_powers_eo",
            (NttMul::Eo, "fr_abc_div_z") => "fr_abc_div_z_eo",
            (NttMul::Eo, "fr_scale_powers") => "fr_scale_powers_eo",
            // Not an NTT kernel: func() reports it missing under this name.
            (NttMul::Eo, other) => other,
        }
    }
}

/// The DIF pass kernel shape (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NttRadix {
    /// One radix-2 stage per step (`ntt_dif_pass`), blockDim = elements / 2.
    R2,
    /// Two stages per step (`ntt_dif_pass_r4`), blockDim = max(elements / 4, 1). The
    /// default: 5.33 ms vs 6.25 ms at 2^24 on the H200 with the even/odd product,
    /// bit-identical (reports/gpu/2026-11-30-run4-even-odd.md, run 8).
    #[default]
    R4,
}

impl NttRadix {
    pub const ALL: [NttRadix; 2] = [NttRadix::R2, NttRadix::R4];

    pub fn parse(v: &str) -> Result<NttRadix, GpuError> {
        match v.trim() {
            "2" => Ok(NttRadix::R2),
            "4" => Ok(NttRadix::R4),
            other => Err(GpuError::Other(format!("unknown NTT radix {other:?} (expected 2 or 4)"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NttRadix::R2 => "r2",
            NttRadix::R4 => "r4",
        }
    }

    /// `PROOFSCOPE_NTT_RADIX` (unset or empty: the default, 4).
    pub(crate) fn from_env() -> Result<NttRadix, GpuError> {
        env_choice("PROOFSCOPE_NTT_RADIX", NttRadix::parse)
    }

    /// The DIF pass kernel for this shape and product `mul`.
    fn dif_kernel(self, mul: NttMul) -> &'static str {
        match (self, mul) {
            (NttRadix::R2, m) => m.kernel("ntt_dif_pass"),
            (NttRadix::R4, NttMul::Cios) => "ntt_dif_pass_r4",
            (NttRadix::R4, NttMul::Eo) => "ntt_dif_pass_r4_eo",
        }
    }

    /// The fused last DIF pass + bit reversal kernel for this shape and product `mul`.
    fn last_bitrev_kernel(self, mul: NttMul) -> &'static str {
        match (self, mul) {
            (NttRadix::R2, m) => m.kernel("ntt_dif_last_bitrev"),
            (NttRadix::R4, NttMul::Cios) => "ntt_dif_last_bitrev_r4",
            (NttRadix::R4, NttMul::Eo) => "ntt_dif_last_bitrev_r4_eo",
        }
    }

    /// Launch geometry of one DIF pass of (k, log_g) over 2^log_n elements (the fused last
    /// pass too: 2^(k + log_g) elements per block).
    fn pass_cfg(self, log_n: u32, k: u32, log_g: u32) -> LaunchConfig {
        let elems = 1u64 << (k + log_g);
        let threads = match self {
            NttRadix::R2 => elems / 2,
            NttRadix::R4 => (elems / 4).max(1),
        };
        LaunchConfig {
            grid_dim: (((1u64 << log_n) / elems) as u32, 1, 1),
            block_dim: (threads as u32, 1, 1),
            shared_mem_bytes: (elems * 32) as u32,
        }
    }
}

/// How the stages above the last pass (10 stages, one 1024-element block of stride 1; 8
/// stages on 4 chunks when the bit reversal is fused into it, [`NttBitrev::Fused`]) are
/// grouped into DIF passes of at most `kmax` stages each (a block holds 2^k groups of
/// 2^(10-k) lanes): `greedy` takes `kmax` stages while it can and leaves the rest to one
/// short pass (the plan before 2026-11-30's run 16: 6 + 6 + 2 + 10 at 2^24), `even` uses as
/// few passes as `kmax` allows and spreads the stages evenly over them (7 + 7 + 10 at 2^24
/// with kmax 7 or 8: one global round trip less). Written `g6`, `e8`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPlan {
    pub kmax: u32,
    pub even: bool,
}

impl Default for NttPlan {
    fn default() -> Self {
        NttPlan { kmax: 8, even: true }
    }
}

impl NttPlan {
    /// The plans `gpu bench` and `gpu check` compare: the old greedy one and two even ones.
    pub const COMPARED: [NttPlan; 4] = [NttPlan { kmax: 6, even: false }, NttPlan { kmax: 7, even: true }, NttPlan { kmax: 8, even: true }, NttPlan { kmax: 9, even: true }];

    pub fn parse(v: &str) -> Result<NttPlan, GpuError> {
        let v = v.trim();
        let bad = || GpuError::Other(format!("unknown NTT pass plan {v:?} (expected g<k> or e<k>, k in 1..=9, e.g. e8)"));
        let (even, k) = match v.split_at_checked(1) {
            Some(("g", k)) => (false, k),
            Some(("e", k)) => (true, k),
            _ => return Err(bad()),
        };
        match k.parse::<u32>() {
            Ok(kmax) if (1..=9).contains(&kmax) => Ok(NttPlan { kmax, even }),
            _ => Err(bad()),
        }
    }

    pub fn name(self) -> String {
        format!("{}{}", if self.even { "e" } else { "g" }, self.kmax)
    }

    /// `PROOFSCOPE_NTT_PLAN` (unset or empty: the default).
    pub(crate) fn from_env() -> Result<NttPlan, GpuError> {
        env_choice("PROOFSCOPE_NTT_PLAN", NttPlan::parse)
    }

    pub(crate) fn encode(self) -> u32 {
        self.kmax | (self.even as u32) << 8
    }

    pub(crate) fn decode(v: u32) -> NttPlan {
        NttPlan { kmax: v & 0xff, even: v >> 8 & 1 == 1 }
    }

    /// The DIF passes for 2^log_n ending with `bitrev`'s closing step: (lam0, k, log_g) = top
    /// stage, number of stages, lanes. When `bitrev` fuses (2^10 and up) the last entry is the
    /// fused pass: k = 8 stages on 2^log_g = 4 chunks ([`NttBitrev::fused_last`]).
    pub(crate) fn passes(self, log_n: u32, bitrev: NttBitrev) -> Vec<(u32, u32, u32)> {
        let (last, last_g) = bitrev.fused_last(log_n).unwrap_or((log_n.min(10), 0));
        let kmax = self.kmax.clamp(1, 9);
        let upper = log_n - last;
        let mut ks = Vec::new();
        if self.even {
            let count = upper.div_ceil(kmax);
            for i in 0..count {
                // The first `upper % count` passes take one stage more.
                ks.push(upper / count + u32::from(i < upper % count));
            }
        } else {
            let mut remaining = upper;
            while remaining > 0 {
                let k = remaining.min(kmax);
                ks.push(k);
                remaining -= k;
            }
        }
        let mut passes = Vec::with_capacity(ks.len() + 1);
        let mut lam = log_n as i64 - 1;
        for k in ks {
            // Lanes fill the block up to 1024 elements, but never exceed the stride.
            passes.push((lam as u32, k, (10 - k).min(lam as u32 + 1 - k)));
            lam -= k as i64;
        }
        if last > 0 {
            passes.push((last - 1, last, last_g));
        }
        passes
    }
}

/// The bit-reversal step that ends every NTT (with its output scale): `plain`, one thread
/// per element scattering it to its reversed index; `tile`, the permutation through a 32x32
/// tile in shared memory so that reads and writes are both coalesced (`ntt_bitrev_tile` in
/// ntt.cu); `fused` (the default), no pass of its own: the last DIF pass runs 8 stages on 4
/// chunks whose outputs are neighbours and stores them permuted and scaled
/// (`ntt_dif_last_bitrev`), one round trip through memory less: 4.320 vs 4.674 ms (tile) at
/// 2^24 on the H200 with plan e8, 18.70 vs 19.77 ms at 2^26 (run 22,
/// reports/gpu/2026-11-30-run22-25.md). `tile` and `fused` need 2^10 and up; below, `plain`
/// runs. Same output bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NttBitrev {
    Plain,
    Tile,
    #[default]
    Fused,
}

impl NttBitrev {
    pub const ALL: [NttBitrev; 3] = [NttBitrev::Plain, NttBitrev::Tile, NttBitrev::Fused];

    /// Stages and log2 chunks per block of the fused last pass.
    const FUSED_K: u32 = 8;
    const FUSED_LOG_G: u32 = 2;

    pub fn parse(v: &str) -> Result<NttBitrev, GpuError> {
        parse_named(v, &NttBitrev::ALL, NttBitrev::name, "NTT bit reversal")
    }

    pub fn name(self) -> &'static str {
        match self {
            NttBitrev::Plain => "plain",
            NttBitrev::Tile => "tile",
            NttBitrev::Fused => "fused",
        }
    }

    pub(crate) fn encode(self) -> u32 {
        self as u32
    }

    pub(crate) fn decode(v: u32) -> NttBitrev {
        NttBitrev::ALL.get(v as usize).copied().unwrap_or_default()
    }

    /// `PROOFSCOPE_NTT_BITREV` (unset or empty: the default, fused).
    pub(crate) fn from_env() -> Result<NttBitrev, GpuError> {
        env_choice("PROOFSCOPE_NTT_BITREV", NttBitrev::parse)
    }

    /// (k, log_g) of the fused last pass at 2^log_n, or None when a separate bit-reversal
    /// kernel ends the NTT (not fused, or below 2^10).
    pub(crate) fn fused_last(self, log_n: u32) -> Option<(u32, u32)> {
        (self == NttBitrev::Fused && log_n >= 10).then_some((Self::FUSED_K, Self::FUSED_LOG_G))
    }

    /// Kernel base name and launch geometry of the separate bit-reversal pass for 2^log_n
    /// elements (the tile needs 2^10; `fused` has no such pass from 2^10 up, the plain one below).
    fn launch(self, log_n: u32) -> (&'static str, LaunchConfig) {
        match self {
            NttBitrev::Tile if log_n >= 10 => (
                "ntt_bitrev_tile",
                LaunchConfig { grid_dim: (1u32 << (log_n - 10), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 },
            ),
            _ => ("ntt_bitrev_scale", cfg_1d(1u64 << log_n, 256)),
        }
    }
}

/// Device times (CUDA events) of the last H computation.
#[derive(Clone, Copy, Debug, Default)]
pub struct NttTimes {
    pub h2d_ms: f64,
    pub ntt_ms: f64,
    pub d2h_ms: f64,
}

/// Scale applied in the bit-reversal pass, out[j] *= c * base^j: the two-level tables of
/// c * base^j on the device.
pub(crate) struct Scale {
    hi: CudaSlice<u32>,
    lo: CudaSlice<u32>,
}

/// hi[k] = c * base^(4096 k) for k < ceil(count / 4096), lo[k] = base^k for k < 4096.
fn two_level(c: Scalar, base: Scalar, count: u64) -> (Vec<Scalar>, Vec<Scalar>) {
    let mut lo = Vec::with_capacity(4096);
    let mut x = Scalar::ONE;
    for _ in 0..4096 {
        lo.push(x);
        x *= base;
    }
    let step = x; // base^4096
    let nhi = count.div_ceil(4096).max(1) as usize;
    let mut hi = Vec::with_capacity(nhi);
    let mut y = c;
    for _ in 0..nhi {
        hi.push(y);
        y *= step;
    }
    (hi, lo)
}

/// The primitive 2^log_n-th root of unity of the CPU path: ROOT_OF_UNITY squared down.
pub fn omega(log_n: u32) -> Scalar {
    let mut w = Scalar::ROOT_OF_UNITY;
    for _ in log_n..Scalar::S {
        w = w.square();
    }
    w
}

impl Gpu {
    /// Selects the Fr product of the NTT kernels for the following calls. A change drops the
    /// cached twiddle tables, so that the next domain is built by the new `fr_powers` too.
    pub fn set_ntt_mul(&self, m: NttMul) -> Result<(), GpuError> {
        let mut domains = self.ntt_domains.lock().map_err(|_| GpuError::Other("poisoned domain cache".into()))?;
        if self.ntt_mul() != m {
            domains.clear();
            self.ntt_eo.store(m == NttMul::Eo, Ordering::Relaxed);
        }
        Ok(())
    }

    pub fn ntt_mul(&self) -> NttMul {
        if self.ntt_eo.load(Ordering::Relaxed) { NttMul::Eo } else { NttMul::Cios }
    }

    /// Selects the DIF pass shape for the following calls (results are identical).
    pub fn set_ntt_radix(&self, r: NttRadix) {
        self.ntt_r4.store(r == NttRadix::R4, Ordering::Relaxed);
    }

    pub fn ntt_radix(&self) -> NttRadix {
        if self.ntt_r4.load(Ordering::Relaxed) { NttRadix::R4 } else { NttRadix::R2 }
    }

    /// Selects the grouping of stages into passes for the following calls (same results).
    pub fn set_ntt_plan(&self, p: NttPlan) {
        self.ntt_plan.store(p.encode(), Ordering::Relaxed);
    }

    pub fn ntt_plan(&self) -> NttPlan {
        NttPlan::decode(self.ntt_plan.load(Ordering::Relaxed))
    }

    /// Selects the bit-reversal kernel for the following calls (same results).
    pub fn set_ntt_bitrev(&self, b: NttBitrev) {
        self.ntt_bitrev.store(b.encode(), Ordering::Relaxed);
    }

    pub fn ntt_bitrev(&self) -> NttBitrev {
        NttBitrev::decode(self.ntt_bitrev.load(Ordering::Relaxed))
    }

    /// Kernel `base` of `ntt.cu` with the selected product.
    fn nk(&self, base: &'static str) -> &'static str {
        self.ntt_mul().kernel(base)
    }

    fn upload_scalars(&self, s: &[Scalar]) -> Result<CudaSlice<u32>, GpuError> {
        self.stream.clone_htod(scalar_words(s)).ctx("upload scalars")
    }

    /// Device buffer of `count` powers c * base^j.
    fn powers(&self, c: Scalar, base: Scalar, count: u64) -> Result<CudaSlice<u32>, GpuError> {
        let Scale { hi: hi_d, lo: lo_d } = self.scale(c, base, count)?;
        let mut out = self.stream.alloc_zeros::<u32>((count.max(1) * 8) as usize).ctx("alloc powers")?;
        launch!(self, self.nk("fr_powers"), cfg_1d(count, 256), &mut out, &count, &hi_d, &lo_d);
        Ok(out)
    }

    /// Device tables of j -> c * base^j for j < count.
    pub(crate) fn scale(&self, c: Scalar, base: Scalar, count: u64) -> Result<Scale, GpuError> {
        let (hi, lo) = two_level(c, base, count);
        Ok(Scale { hi: self.upload_scalars(&hi)?, lo: self.upload_scalars(&lo)? })
    }

    pub(crate) fn domain(&self, log_n: u32) -> Result<Arc<Domain>, GpuError> {
        if !(1..=MAX_LOG_N).contains(&log_n) {
            return Err(GpuError::Other(format!("NTT size 2^{log_n} outside 2^1..2^{MAX_LOG_N}")));
        }
        if let Some(d) = self.ntt_domains.lock().map_err(|_| GpuError::Other("poisoned domain cache".into()))?.get(&log_n) {
            return Ok(d.clone());
        }
        let w = omega(log_n);
        let winv = Option::<Scalar>::from(w.invert()).ok_or_else(|| GpuError::Other("omega not invertible".into()))?;
        let half = 1u64 << (log_n - 1);
        let d = Arc::new(Domain {
            log_n,
            tw_fwd: self.powers(Scalar::ONE, w, half)?,
            tw_inv: self.powers(Scalar::ONE, winv, half)?,
            omega: w,
        });
        self.ntt_domains
            .lock()
            .map_err(|_| GpuError::Other("poisoned domain cache".into()))?
            .insert(log_n, d.clone());
        Ok(d)
    }

    /// In-place NTT of `data` (2^log_n Fr, natural order in and out); `scratch` has the same
    /// size and is swapped with `data`. `scale` multiplies output j by c * base^j.
    pub(crate) fn ntt_device(
        &self,
        data: &mut CudaSlice<u32>,
        scratch: &mut CudaSlice<u32>,
        log_n: u32,
        dir: NttDirection,
        scale: Option<&Scale>,
    ) -> Result<(), GpuError> {
        let d = self.domain(log_n)?;
        debug_assert_eq!(d.log_n, log_n);
        let tw = match dir {
            NttDirection::Forward => &d.tw_fwd,
            NttDirection::Inverse => &d.tw_inv,
        };
        self.ntt_kernels(data, scratch, tw, log_n, scale, None)
    }

    /// The kernels of one NTT of `data` with twiddles `tw`: the DIF passes in place, then the
    /// closing permutation with `scale` into `scratch`, which is swapped with `data` (fused into
    /// the last pass or a pass of its own, per [`NttBitrev`]). With `phases`, each launch is
    /// timed with CUDA events and labelled `p<lam0>x<k>`, `bitrev` or `p<lam0>x<k>+bitrev`.
    fn ntt_kernels(
        &self,
        data: &mut CudaSlice<u32>,
        scratch: &mut CudaSlice<u32>,
        tw: &CudaSlice<u32>,
        log_n: u32,
        scale: Option<&Scale>,
        mut phases: Option<&mut Vec<(String, f64)>>,
    ) -> Result<(), GpuError> {
        let radix = self.ntt_radix();
        let pass = radix.dif_kernel(self.ntt_mul());
        let bitrev = self.ntt_bitrev();
        let mut passes = self.ntt_plan().passes(log_n, bitrev);
        let fused = bitrev.fused_last(log_n).and_then(|_| passes.pop());
        let start = |timed: bool| if timed { self.timer().map(Some) } else { Ok(None) };
        for (lam0, k, log_g) in passes {
            let t0 = start(phases.is_some())?;
            launch!(self, pass, radix.pass_cfg(log_n, k, log_g), &mut *data, tw, &log_n, &lam0, &k, &log_g);
            self.end_phase(t0, &mut phases, || format!("p{lam0}x{k}"))?;
        }
        // Unscaled: the twiddle table stands in for the (unread) scale tables.
        let (hi, lo, scaled) = match scale {
            Some(s) => (&s.hi, &s.lo, 1u32),
            None => (tw, tw, 0u32),
        };
        let t0 = start(phases.is_some())?;
        if let Some((lam0, k, log_g)) = fused {
            let last = radix.last_bitrev_kernel(self.ntt_mul());
            launch!(self, last, radix.pass_cfg(log_n, k, log_g), &*data, &mut *scratch, tw, &log_n, &k, &log_g, hi, lo, &scaled);
            self.end_phase(t0, &mut phases, || format!("p{lam0}x{k}+bitrev"))?;
        } else {
            let (kernel, cfg) = bitrev.launch(log_n);
            launch!(self, self.nk(kernel), cfg, &*data, &mut *scratch, &log_n, hi, lo, &scaled);
            self.end_phase(t0, &mut phases, || "bitrev".into())?;
        }
        std::mem::swap(data, scratch);
        Ok(())
    }

    /// Closes a timed launch begun at `t0` (when phases are recorded) as `label`.
    fn end_phase(&self, t0: Option<KernelTimer>, phases: &mut Option<&mut Vec<(String, f64)>>, label: impl FnOnce() -> String) -> Result<(), GpuError> {
        if let (Some(t0), Some(p)) = (t0, phases.as_deref_mut()) {
            let t1 = self.timer()?;
            p.push((label(), t0.ms_to(&t1)?));
        }
        Ok(())
    }

    /// NTT of `values` (padded with zeros to 2^log_n) on the GPU; `coset` evaluates on / interpolates
    /// from the coset g*H with g = MULTIPLICATIVE_GENERATOR. Inverse includes the 1/n factor.
    pub fn ntt(&self, values: &[Scalar], log_n: u32, dir: NttDirection, coset: bool) -> Result<Vec<Scalar>, GpuError> {
        let n = 1usize << log_n;
        if values.len() > n {
            return Err(GpuError::Other(format!("{} values do not fit a domain of 2^{log_n}", values.len())));
        }
        let mut padded = values.to_vec();
        padded.resize(n, Scalar::ZERO);
        let mut data = self.upload_scalars(&padded)?;
        let mut scratch = self.stream.alloc_zeros::<u32>(n * 8).ctx("alloc scratch")?;
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        match (dir, coset) {
            (NttDirection::Forward, false) => self.ntt_device(&mut data, &mut scratch, log_n, dir, None)?,
            (NttDirection::Inverse, false) => {
                let s = self.scale(self.ninv(log_n)?, Scalar::ONE, n as u64)?;
                self.ntt_device(&mut data, &mut scratch, log_n, dir, Some(&s))?
            }
            (NttDirection::Forward, true) => {
                // Scale the input by g^i (a pass of its own here; fused in the H pipeline).
                let s = self.scale(Scalar::ONE, g, n as u64)?;
                let nn = n as u64;
                launch!(self, self.nk("fr_scale_powers"), cfg_1d(nn, 256), &mut data, &nn, &s.hi, &s.lo);
                self.ntt_device(&mut data, &mut scratch, log_n, dir, None)?
            }
            (NttDirection::Inverse, true) => {
                let ginv = Option::<Scalar>::from(g.invert()).ok_or_else(|| GpuError::Other("g not invertible".into()))?;
                let s = self.scale(self.ninv(log_n)?, ginv, n as u64)?;
                self.ntt_device(&mut data, &mut scratch, log_n, dir, Some(&s))?
            }
        }
        let out = self.download_words(&data.slice(..), "download NTT")?;
        Ok(scalars_from_words(&out))
    }

    fn ninv(&self, log_n: u32) -> Result<Scalar, GpuError> {
        Option::<Scalar>::from(Scalar::from(1u64 << log_n).invert()).ok_or_else(|| GpuError::Other("n not invertible".into()))
    }

    /// The Groth16 quotient on the GPU: for each of a, b, c (evaluations on the domain H of
    /// size 2^log_n, zero-padded): inverse NTT, then forward NTT on the coset gH; then
    /// (a*b - c) / Z(g) with Z(g) = g^n - 1; then inverse coset NTT. Returns all 2^log_n
    /// coefficients (the top one is zero for a satisfied circuit) and the device times.
    pub fn h_quotient(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32) -> Result<(Vec<Scalar>, NttTimes), GpuError> {
        let (buf, mut times) = self.h_quotient_device(a, b, c, log_n)?;
        let t0 = self.timer()?;
        let out = self.download_words(&buf.slice(..), "download H")?;
        let t1 = self.timer()?;
        times.d2h_ms = t0.ms_to(&t1)?;
        Ok((scalars_from_words(&out), times))
    }

    /// [`Gpu::h_quotient`] leaving the 2^log_n coefficients (Montgomery words) on the device,
    /// ready for the H MSM.
    pub fn h_quotient_device(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32) -> Result<(CudaSlice<u32>, NttTimes), GpuError> {
        let (bufs, up) = self.upload_abc(a, b, c, log_n)?;
        let h2d_ms = up.gpu_ms;
        self.h_quotient_uploaded(bufs, log_n, h2d_ms)
    }

    /// a, b, c (Montgomery words) in three zero-padded 2^log_n buffers, through pinned
    /// staging on the copy stream (the three copies in flight together); returns them with
    /// the three uploads' summed times (`gpu_ms`: the copies' CUDA-event time).
    pub fn upload_abc(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32) -> Result<(Vec<CudaSlice<u32>>, UploadTimes), GpuError> {
        let n = 1usize << log_n;
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            if v.len() > n {
                return Err(GpuError::Other(format!("{name} has {} values, over the domain 2^{log_n}", v.len())));
            }
        }
        let mut ups = Vec::with_capacity(3);
        for v in [a, b, c] {
            let words = scalar_words(v);
            ups.push(self.upload_words(words.len(), n * 8, |dst| super::device::par_copy(dst, words))?);
        }
        let mut times = UploadTimes::default();
        let mut bufs = Vec::with_capacity(3);
        for u in ups {
            let (buf, t) = u.finish(self)?;
            times.add(&t);
            bufs.push(buf);
        }
        Ok((bufs, times))
    }

    /// [`Gpu::h_quotient_device`] on a, b, c already uploaded by [`Gpu::upload_abc`]
    /// (consumed; the first becomes H). `h2d_ms` is reported as the times' `h2d_ms`.
    pub fn h_quotient_uploaded(&self, bufs: Vec<CudaSlice<u32>>, log_n: u32, h2d_ms: f64) -> Result<(CudaSlice<u32>, NttTimes), GpuError> {
        let n = 1usize << log_n;
        if bufs.len() != 3 || bufs.iter().any(|b| b.len() != n * 8) {
            return Err(GpuError::Other(format!("H needs three buffers of 2^{log_n} scalars")));
        }
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let ginv = Option::<Scalar>::from(g.invert()).ok_or_else(|| GpuError::Other("g not invertible".into()))?;
        let ninv = self.ninv(log_n)?;
        let zinv = Option::<Scalar>::from((g.pow_vartime([n as u64]) - Scalar::ONE).invert())
            .ok_or_else(|| GpuError::Other("Z(g) = 0".into()))?;
        self.domain(log_n)?; // twiddles and scale tables outside the timed region
        let to_coset = self.scale(ninv, g, n as u64)?;
        let from_coset = self.scale(ninv, ginv, n as u64)?;
        let zinv_d = self.upload_scalars(&[zinv])?;
        let mut bufs = bufs;
        let mut scratch = self.stream.alloc_zeros::<u32>(n * 8).ctx("alloc scratch")?;
        let t1 = self.timer()?;
        for buf in bufs.iter_mut() {
            self.ntt_device(buf, &mut scratch, log_n, NttDirection::Inverse, Some(&to_coset))?;
            self.ntt_device(buf, &mut scratch, log_n, NttDirection::Forward, None)?;
        }
        let nn = n as u64;
        let (ab, rest) = bufs.split_at_mut(1);
        launch!(self, self.nk("fr_abc_div_z"), cfg_1d(nn, 256), &mut ab[0], &rest[0], &rest[1], &zinv_d, &nn);
        self.ntt_device(&mut ab[0], &mut scratch, log_n, NttDirection::Inverse, Some(&from_coset))?;
        let t2 = self.timer()?;
        let times = NttTimes { h2d_ms, ntt_ms: t1.ms_to(&t2)?, d2h_ms: 0.0 };
        let mut bufs = bufs.into_iter();
        let out = bufs.next().ok_or_else(|| GpuError::Other("no H buffer".into()))?;
        Ok((out, times))
    }

    /// Device time of each launch of one forward NTT (for the bench's phase column): every
    /// DIF pass, and the bit reversal or the last pass with it fused (see [`Gpu::ntt_kernels`]).
    pub fn ntt_phases(&self, log_n: u32, seed: u64) -> Result<Vec<(String, f64)>, GpuError> {
        let n = 1usize << log_n;
        let values = super::reference::random_scalars(n, seed);
        let mut data = self.upload_scalars(&values)?;
        let mut scratch = self.stream.alloc_zeros::<u32>(n * 8).ctx("alloc scratch")?;
        let d = self.domain(log_n)?;
        let mut out = Vec::new();
        self.ntt_kernels(&mut data, &mut scratch, &d.tw_fwd, log_n, None, Some(&mut out))?;
        Ok(out)
    }

    /// Device time of one forward NTT of 2^log_n random values already on the device
    /// (median of `runs` after one warm-up), for the bench.
    pub fn time_ntt(&self, log_n: u32, runs: usize, seed: u64) -> Result<Vec<f64>, GpuError> {
        let n = 1usize << log_n;
        let values = super::reference::random_scalars(n, seed);
        let mut data = self.upload_scalars(&values)?;
        let mut scratch = self.stream.alloc_zeros::<u32>(n * 8).ctx("alloc scratch")?;
        self.ntt_device(&mut data, &mut scratch, log_n, NttDirection::Forward, None)?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t0 = self.timer()?;
            self.ntt_device(&mut data, &mut scratch, log_n, NttDirection::Forward, None)?;
            let t1 = self.timer()?;
            times.push(t0.ms_to(&t1)?);
        }
        let _ = &self.domain(log_n)?.omega;
        Ok(times)
    }
}

#[cfg(test)]
mod tests {
    use super::{GpuError, NttBitrev, NttMul, NttPlan, NttRadix};

    /// Host model of the shared-memory steps of one block (`dif_steps_r2` / `dif_steps_r4` of
    /// ntt.cu) with the tile's slot and twiddle-index functions, step by step as the kernels
    /// index it (one Fr as a u64, wrapping ops). Panics when a step touches a shared slot
    /// twice or leaves one out.
    #[allow(clippy::too_many_arguments)]
    fn model_steps(
        sh: &mut [u64],
        tw: &[u64],
        log_n: u32,
        (lam0, k, log_g, log_s): (u32, u32, u32, u32),
        tw0: &dyn Fn(usize) -> u64,
        slot: &dyn Fn(usize, usize) -> usize,
        r4: bool,
    ) {
        let g = 1usize << log_g;
        let e_count = (1usize << k) << log_g;
        let threads = if r4 { (e_count / 4).max(1) } else { e_count / 2 };
        let bfly = |sh: &mut [u64], touched: &mut Vec<u32>, i0: usize, i1: usize, w: u64| {
            let (x, y) = (sh[i0], sh[i1]);
            sh[i0] = x.wrapping_add(y);
            sh[i1] = x.wrapping_sub(y).wrapping_mul(w);
            touched[i0] += 1;
            touched[i1] += 1;
        };
        let twi = |j: u64, lam: u32| tw[(j << (log_n - 1 - lam)) as usize];
        let mut t = 0u32;
        if r4 {
            while t + 2 <= k {
                let mut touched = vec![0u32; e_count];
                for tid in 0..threads {
                    let lane = tid & (g - 1);
                    let gi = tid >> log_g;
                    let log_hl = k - 1 - t;
                    let h = 1usize << log_hl;
                    let qh = h >> 1;
                    let lam = lam0 - t;
                    let r = gi & (qh - 1);
                    let e0 = ((gi >> (log_hl - 1)) << (log_hl + 1)) | r;
                    let j0 = tw0(lane) + ((r as u64) << log_s);
                    let j1 = tw0(lane) + (((r + qh) as u64) << log_s);
                    let i = |e: usize| slot(e, lane);
                    // Stage t, then t+1 (one butterfly counts 2 touches per slot per stage).
                    bfly(sh, &mut touched, i(e0), i(e0 + h), twi(j0, lam));
                    bfly(sh, &mut touched, i(e0 + qh), i(e0 + h + qh), twi(j1, lam));
                    bfly(sh, &mut touched, i(e0), i(e0 + qh), twi(j0, lam - 1));
                    bfly(sh, &mut touched, i(e0 + h), i(e0 + h + qh), twi(j0, lam - 1));
                }
                assert!(touched.iter().all(|&c| c == 2), "r4 step {t} of (k {k}, log_g {log_g}): slots not owned once");
                t += 2;
            }
        }
        while t < k {
            let mut touched = vec![0u32; e_count];
            let log_hl = k - 1 - t;
            let hl = 1usize << log_hl;
            let lam = lam0 - t;
            for b in 0..e_count / 2 {
                let (lane, bf) = (b & (g - 1), b >> log_g);
                let e0 = ((bf >> log_hl) << (log_hl + 1)) | (bf & (hl - 1));
                let j = tw0(lane) + (((e0 & (hl - 1)) as u64) << log_s);
                bfly(sh, &mut touched, slot(e0, lane), slot(e0 + hl, lane), twi(j, lam));
            }
            assert!(touched.iter().all(|&c| c == 1), "r2 stage {t} of (k {k}, log_g {log_g}): slots not covered once");
            t += 1;
        }
    }

    /// Host model of one DIF pass over `data` (`ntt_dif_pass_t` / `_r4_t`: PassTile).
    fn model_pass(data: &mut [u64], tw: &[u64], log_n: u32, lam0: u32, k: u32, log_g: u32, r4: bool) {
        let g = 1usize << log_g;
        let e_count = (1usize << k) << log_g;
        let log_s = lam0 + 1 - k;
        let s = 1u64 << log_s;
        let threads = if r4 { (e_count / 4).max(1) } else { e_count / 2 };
        let cfg = if r4 { NttRadix::R4 } else { NttRadix::R2 }.pass_cfg(log_n, k, log_g);
        assert_eq!(cfg.block_dim.0 as usize, threads);
        assert_eq!(cfg.shared_mem_bytes as usize, e_count * 32);
        for block in 0..cfg.grid_dim.0 as u64 {
            let q0 = block << log_g;
            let low0 = q0 & (s - 1);
            let base = ((q0 >> log_s) << (log_s + k)) + low0;
            let at = |idx: usize| (base + (((idx >> log_g) as u64) << log_s) + (idx & (g - 1)) as u64) as usize;
            let mut sh: Vec<u64> = (0..e_count).map(|i| data[at(i)]).collect();
            let slot = |e: usize, lane: usize| (e << log_g) | lane;
            model_steps(&mut sh, tw, log_n, (lam0, k, log_g, log_s), &|lane| low0 + lane as u64, &slot, r4);
            for (i, v) in sh.into_iter().enumerate() {
                data[at(i)] = v;
            }
        }
    }

    /// A xorshift64 stream: cheap reproducible values for the host models.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn rev(x: u64, bits: u32) -> u64 {
        if bits == 0 { 0 } else { x.reverse_bits() >> (64 - bits) }
    }

    /// Host model of `ntt_dif_last_bitrev_t` (ChunkTile): the last k stages of `input` on
    /// 2^log_g chunks per block, stored bit-reversed into a new vector. Panics when a load or
    /// a store slot is used twice or an output is written twice.
    fn model_last_bitrev(input: &[u64], tw: &[u64], log_n: u32, k: u32, log_g: u32, r4: bool) -> Vec<u64> {
        let g = 1usize << log_g;
        let e_count = (1usize << k) << log_g;
        let u = log_n - k;
        let radix = if r4 { NttRadix::R4 } else { NttRadix::R2 };
        let cfg = radix.pass_cfg(log_n, k, log_g);
        assert_eq!(cfg.block_dim.0 as usize, if r4 { e_count / 4 } else { e_count / 2 });
        assert_eq!(cfg.shared_mem_bytes as usize, e_count * 32);
        let slot = |e: usize, lane: usize| (e << log_g) | (lane ^ (e & (g - 1)));
        let mut out = vec![None; 1 << log_n];
        for block in 0..cfg.grid_dim.0 as u64 {
            let col0 = block << log_g;
            let mut sh = vec![None; e_count];
            for idx in 0..e_count {
                let (lane, e) = (idx >> k, idx & ((1 << k) - 1));
                let src = ((rev(col0 + lane as u64, u) << k) as usize) | e;
                assert!(sh[slot(e, lane)].replace(input[src]).is_none(), "2^{log_n}: load slot used twice");
            }
            let mut sh: Vec<u64> = sh.into_iter().map(|v| v.expect("every slot loaded")).collect();
            model_steps(&mut sh, tw, log_n, (k - 1, k, log_g, 0), &|_| 0, &slot, r4);
            for idx in 0..e_count {
                let (lane, r) = (idx & (g - 1), idx >> log_g);
                let e = rev(r as u64, k) as usize;
                let j = (((r as u64) << u) | (col0 + lane as u64)) as usize;
                assert!(out[j].replace(sh[slot(e, lane)]).is_none(), "2^{log_n}: output {j} written twice");
            }
        }
        out.into_iter().map(|v| v.expect("every output written")).collect()
    }

    #[test]
    fn fused_last_pass_model_equals_last_pass_then_bit_reversal() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        for log_n in 10..=15u32 {
            let n = 1usize << log_n;
            let tw: Vec<u64> = (0..n / 2).map(|_| next()).collect();
            let input: Vec<u64> = (0..n).map(|_| next()).collect();
            for plan in NttPlan::COMPARED {
                // Reference: the tile plan's passes, then the permutation out[rev(i)] = in[i].
                let mut reference = input.clone();
                for (lam0, k, log_g) in plan.passes(log_n, NttBitrev::Tile) {
                    model_pass(&mut reference, &tw, log_n, lam0, k, log_g, true);
                }
                let mut want = vec![0u64; n];
                for (i, v) in reference.into_iter().enumerate() {
                    want[rev(i as u64, log_n) as usize] = v;
                }
                for r4 in [false, true] {
                    let mut passes = plan.passes(log_n, NttBitrev::Fused);
                    let (lam0, k, log_g) = passes.pop().expect("a last pass");
                    assert_eq!((lam0 + 1, k, log_g), (8, 8, 2), "2^{log_n}: the fused pass shape");
                    let mut a = input.clone();
                    for (lam0, k, log_g) in passes {
                        model_pass(&mut a, &tw, log_n, lam0, k, log_g, r4);
                    }
                    let got = model_last_bitrev(&a, &tw, log_n, k, log_g, r4);
                    assert!(got == want, "2^{log_n} {} r4 {r4}: fused last pass differs from pass + bit reversal", plan.name());
                }
            }
        }
    }

    #[test]
    fn radix4_pass_model_matches_radix2_for_every_planned_pass() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        for log_n in 1..=16u32 {
            let n = 1usize << log_n;
            let tw: Vec<u64> = (0..n / 2).map(|_| next()).collect();
            let input: Vec<u64> = (0..n).map(|_| next()).collect();
            for plan in NttPlan::COMPARED {
                let (mut a, mut b) = (input.clone(), input.clone());
                for (lam0, k, log_g) in plan.passes(log_n, NttBitrev::Tile) {
                    model_pass(&mut a, &tw, log_n, lam0, k, log_g, false);
                    model_pass(&mut b, &tw, log_n, lam0, k, log_g, true);
                    assert_eq!(a, b, "2^{log_n} {}: pass (lam0 {lam0}, k {k}) differs between radix 2 and 4", plan.name());
                }
                assert_ne!(a, input, "2^{log_n}: the model changed nothing");
            }
        }
        // Every (k, log_g) shape a pass can have, odd k included, on one larger size.
        let log_n = 12u32;
        let n = 1usize << log_n;
        let tw: Vec<u64> = (0..n / 2).map(|_| next()).collect();
        for k in 1..=10u32 {
            for log_g in 0..=(10 - k) {
                let lam0 = log_n - 1;
                if log_g > lam0 + 1 - k {
                    continue;
                }
                let input: Vec<u64> = (0..n).map(|_| next()).collect();
                let (mut a, mut b) = (input.clone(), input.clone());
                model_pass(&mut a, &tw, log_n, lam0, k, log_g, false);
                model_pass(&mut b, &tw, log_n, lam0, k, log_g, true);
                assert_eq!(a, b, "k {k}, log_g {log_g}: radix 2 and 4 differ");
            }
        }
    }

    #[test]
    fn ntt_radix_parses_and_names_kernels_of_ntt_cu() {
        assert_eq!(NttRadix::parse(" 4 ").unwrap(), NttRadix::R4);
        // The defaults (unset environment) are the measured winners.
        assert_eq!((NttMul::default(), NttRadix::default()), (NttMul::Eo, NttRadix::R4));
        assert_eq!(NttRadix::parse("2").unwrap(), NttRadix::R2);
        assert!(NttRadix::parse("8").is_err());
        assert!(NttRadix::parse("").is_err());
        let src = include_str!("../../cuda/ntt.cu");
        assert!(src.contains("void ntt_dif_pass_r4_t("));
        assert!(src.contains("void ntt_dif_pass_r4##SUF("));
        assert_eq!(NttRadix::R4.dif_kernel(NttMul::Cios), "ntt_dif_pass_r4");
        assert_eq!(NttRadix::R4.dif_kernel(NttMul::Eo), "ntt_dif_pass_r4_eo");
        assert_eq!(NttRadix::R2.dif_kernel(NttMul::Eo), "ntt_dif_pass_eo");
        assert_eq!(NttRadix::R2.dif_kernel(NttMul::Cios), "ntt_dif_pass");
    }

    #[test]
    fn ntt_mul_names_map_every_kernel_and_parse() {
        assert_eq!(NttMul::parse("eo").unwrap(), NttMul::Eo);
        assert_eq!(NttMul::parse(" cios ").unwrap(), NttMul::Cios);
        assert!(NttMul::parse("mont").is_err());
        assert!(NttMul::parse("").is_err());
        for k in ["ntt_dif_pass", "ntt_bitrev_scale", "fr_powers", "fr_abc_div_z", "fr_scale_powers"] {
            assert_eq!(NttMul::Cios.kernel(k), k);
            assert_eq!(NttMul::Eo.kernel(k), format!("{k}_eo"));
            // Each name comes from a template of ntt.cu instantiated for both products.
            let src = include_str!("../../cuda/ntt.cu");
            assert!(src.contains(&format!("void {k}_t(")), "{k}: no template in ntt.cu");
        }
        assert!(include_str!("../../cuda/ntt.cu").contains("NTT_ENTRIES(_eo, FrEo)"));
    }

    #[test]
    fn pass_plan_covers_every_stage_once_with_valid_lanes() {
        for kmax in 1..=9u32 {
            for even in [false, true] {
                let plan = NttPlan { kmax, even };
                for log_n in 1..=28u32 {
                    for bitrev in NttBitrev::ALL {
                        let mut next = log_n as i64 - 1;
                        let passes = plan.passes(log_n, bitrev);
                        let fused = bitrev.fused_last(log_n);
                        for (i, &(lam0, k, log_g)) in passes.iter().enumerate() {
                            let what = format!("2^{log_n} {} {}", plan.name(), bitrev.name());
                            assert_eq!(lam0 as i64, next, "{what}: passes must be contiguous from the top");
                            assert!(k >= 1 && k + log_g <= 10, "{what}: a block holds at most 1024 elements");
                            assert!(k <= kmax.max(log_n.min(10)), "{what}: pass of {k} stages");
                            if fused.is_some() && i + 1 == passes.len() {
                                // The fused pass: chunks of stride 1, one output column each.
                                assert_eq!(lam0 + 1, k, "{what}: the fused pass ends the transform");
                                assert!(log_g <= log_n - k, "{what}: more chunks than columns");
                            } else {
                                let log_s = lam0 + 1 - k;
                                assert!(log_g <= log_s, "{what}: lanes must not exceed the stride");
                            }
                            next -= k as i64;
                        }
                        assert_eq!(next, -1, "2^{log_n}: every stage down to half-size 1");
                        // Even plans use the fewest passes kmax allows, differing by one stage at most.
                        let last = fused.map_or(10, |f| f.0);
                        if even && log_n > last {
                            let upper: Vec<u32> = passes[..passes.len() - 1].iter().map(|p| p.1).collect();
                            assert_eq!(upper.len() as u32, (log_n - last).div_ceil(kmax));
                            assert!(upper.iter().max().unwrap() - upper.iter().min().unwrap() <= 1);
                        }
                    }
                }
            }
        }
        // g6 is the plan the kernels ran before run 16; e8 saves a pass at 2^24.
        let ks = |p: NttPlan, l: u32, b: NttBitrev| p.passes(l, b).iter().map(|x| x.1).collect::<Vec<_>>();
        let e8 = NttPlan { kmax: 8, even: true };
        assert_eq!(ks(NttPlan { kmax: 6, even: false }, 24, NttBitrev::Tile), [6, 6, 2, 10]);
        assert_eq!(ks(e8, 24, NttBitrev::Tile), [7, 7, 10]);
        assert_eq!(ks(e8, 26, NttBitrev::Tile), [8, 8, 10]);
        assert_eq!(ks(e8, 8, NttBitrev::Tile), [8]);
        // Fused: the last pass takes 8 stages; below 2^10 the plain kernel closes the NTT.
        assert_eq!(ks(e8, 24, NttBitrev::Fused), [8, 8, 8]);
        assert_eq!(ks(e8, 26, NttBitrev::Fused), [6, 6, 6, 8]);
        assert_eq!(ks(NttPlan { kmax: 9, even: true }, 26, NttBitrev::Fused), [9, 9, 8]);
        assert_eq!(ks(e8, 9, NttBitrev::Fused), [9]);
        assert_eq!(NttBitrev::Fused.fused_last(9), None);
    }

    #[test]
    fn ntt_plan_and_bitrev_parse_and_name() {
        assert_eq!(NttPlan::parse(" e8 ").unwrap(), NttPlan { kmax: 8, even: true });
        assert_eq!(NttPlan::parse("g6").unwrap().name(), "g6");
        for bad in ["", "e", "e0", "e10", "x8", "8", "e-1", "é8"] {
            let e = NttPlan::parse(bad).unwrap_err().to_string();
            assert!(e.contains("pass plan"), "{bad:?}: {e}");
        }
        assert_eq!(NttPlan::decode(NttPlan { kmax: 7, even: true }.encode()), NttPlan { kmax: 7, even: true });
        assert_eq!(NttPlan::decode(NttPlan { kmax: 6, even: false }.encode()), NttPlan { kmax: 6, even: false });
        assert_eq!(NttBitrev::parse("tile").unwrap(), NttBitrev::Tile);
        assert_eq!(NttBitrev::parse(" plain").unwrap(), NttBitrev::Plain);
        assert!(NttBitrev::parse("fast").is_err());
        // The messages name the knob and every accepted value.
        assert_eq!(NttBitrev::parse(" fast ").unwrap_err().to_string(), GpuError::Other("unknown NTT bit reversal \"fast\" (expected plain or tile or fused)".into()).to_string());
        assert_eq!(NttMul::parse("mont").unwrap_err().to_string(), GpuError::Other("unknown NTT product \"mont\" (expected cios or eo)".into()).to_string());
        assert_eq!(NttBitrev::default(), NttBitrev::Fused);
        assert_eq!(NttBitrev::parse("fused").unwrap(), NttBitrev::Fused);
        for b in NttBitrev::ALL {
            assert_eq!(NttBitrev::decode(b.encode()), b);
        }
        assert_eq!(NttRadix::R4.last_bitrev_kernel(NttMul::Eo), "ntt_dif_last_bitrev_r4_eo");
        assert_eq!(NttRadix::R2.last_bitrev_kernel(NttMul::Eo), "ntt_dif_last_bitrev_eo");
        assert_eq!(NttRadix::R2.last_bitrev_kernel(NttMul::Cios), "ntt_dif_last_bitrev");
        let src = include_str!("../../cuda/ntt.cu");
        assert!(src.contains("void ntt_dif_last_bitrev##SUF(") && src.contains("__launch_bounds__(256, 3)") && src.contains("ntt_dif_last_bitrev_r4##SUF("));
        // Below 2^10 the tile does not fit: the plain kernel runs.
        assert_eq!(NttBitrev::Tile.launch(9).0, "ntt_bitrev_scale");
        assert_eq!(NttBitrev::Tile.launch(10).0, "ntt_bitrev_tile");
        assert_eq!(NttMul::Eo.kernel("ntt_bitrev_tile"), "ntt_bitrev_tile_eo");
        assert!(include_str!("../../cuda/ntt.cu").contains("void ntt_bitrev_tile##SUF("));
    }

    /// Host model of `ntt_bitrev_tile_t`'s indexing (block m, load slot, store slot): every
    /// input lands at its bit-reversed index, every shared slot is written and read once.
    #[test]
    fn bitrev_tile_model_is_the_bit_reversal() {
        let rev = |x: u64, bits: u32| if bits == 0 { 0 } else { x.reverse_bits() >> (64 - bits) };
        for log_n in 10..=15u32 {
            let n = 1usize << log_n;
            let mid = log_n - 10;
            let mut out = vec![usize::MAX; n];
            for m in 0..(1u64 << mid) {
                let m_rev = rev(m, mid);
                let mut sh = vec![usize::MAX; 1024];
                for idx in 0..1024u32 {
                    let (a, c) = (idx >> 5, idx & 31);
                    let slot = ((a << 5) | (c ^ ((a >> 2) & 7))) as usize;
                    assert_eq!(sh[slot], usize::MAX, "2^{log_n}: slot {slot} written twice");
                    sh[slot] = (((a as u64) << (log_n - 5)) | (m << 5) | c as u64) as usize;
                }
                for idx in 0..1024u32 {
                    let (r, q) = (idx >> 5, idx & 31);
                    let (a, c) = (q.reverse_bits() >> 27, r.reverse_bits() >> 27);
                    let src = sh[((a << 5) | (c ^ ((a >> 2) & 7))) as usize];
                    let j = (((r as u64) << (log_n - 5)) | (m_rev << 5) | q as u64) as usize;
                    assert_eq!(out[j], usize::MAX, "2^{log_n}: output {j} written twice");
                    out[j] = src;
                }
            }
            for (j, &i) in out.iter().enumerate() {
                assert_eq!(rev(i as u64, log_n), j as u64, "2^{log_n}: out[{j}] came from in[{i}]");
            }
        }
    }
}
