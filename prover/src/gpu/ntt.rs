//! The Fr NTT launcher: domains (twiddle tables resident on the device, one per size and Fr
//! product), the pass plan of the DIF kernel, forward/inverse/coset transforms and the
//! quotient H = (A*B - C) / Z of Groth16, all natural order in and out like the CPU path.
//! [`Ntt`] runs them on a [`Gpu`] with the choices of an [`NttConfig`] (the `ntt_*` keys of
//! `[cuda]`); every choice gives the same output bit for bit.
//!
//! Every NTT kernel exists with two Fr products (issue 5): the CIOS `Fr::mul` and the
//! even/odd `Fr::mul_eo` (`_eo` kernels, identical results; it made the MSM's bucket sums
//! 1.8x faster). [`NttMul`] picks the set (default eo: measured faster on the H200,
//! bit-identical; `gpu check` and `gpu bench` run both).
//!
//! The DIF pass exists in two shapes: one radix-2 stage per shared-memory step
//! (`ntt_dif_pass`, a barrier per stage) and two stages per step (`ntt_dif_pass_r4`: each
//! thread keeps 4 elements in registers across both stages, one barrier per two stages;
//! same butterflies, identical output). [`NttRadix`] picks it (default 4: measured faster on
//! the H200, bit-identical).
//!
//! Two more knobs shape the memory traffic, same output bit for bit: [`NttPlan`] groups the
//! stages above the last ten into as few DIF passes as possible, each one global-memory round
//! trip; [`NttBitrev`] picks the closing bit reversal: one scattered store per element, a
//! 32x32 shared-memory tile with coalesced reads and writes, or (the default) none of its
//! own, fused into the store of the last DIF pass.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, LaunchConfig};
use ff::{Field, PrimeField};

use super::convert::{scalar_words, scalars_from_words};
use super::device::{cfg_1d, launch, Gpu, HostLock, KernelTimer, UploadTimes};
use super::error::{Ctx, GpuError};
use super::kernels::{ntt as k, KernelName};
use crate::cuda_settings::{AbcUpload, CudaSettings};
pub use crate::cuda_settings::{NttBitrev, NttMul, NttPlan, NttRadix};

/// What [`Gpu::upload_abc`] returns: the three device buffers, the uploads' summed times and,
/// when registered, the lock on a, b and c.
pub type UploadedAbc = (Vec<CudaSlice<u32>>, UploadTimes, Option<HostLock>);

/// Largest supported domain (the twiddle index fits in 32 bits, the bit reversal too).
pub const MAX_LOG_N: u32 = 28;

/// The twiddles w^j (j < n/2) of one direction on the device: a table of all n/2 of them, or
/// (the lean NTT) the two small tables whose entries' product gives each.
pub(crate) enum Twid {
    Table(CudaSlice<u32>),
    TwoLevel(Scale),
}

/// Twiddles of one domain size, resident on the device.
pub(crate) struct Domain {
    log_n: u32,
    /// w^j for j < n/2, and w^-j.
    tw_fwd: Twid,
    tw_inv: Twid,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttDirection {
    Forward,
    Inverse,
}

/// The choices of the NTT kernels: Fr product, DIF pass shape, pass plan, bit reversal, and
/// whether it runs lean (twiddles from two small tables, the permutation in place, no scratch:
/// the device plan's choice from `ntt_memory`; [`NttConfig::of`] gives the tables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NttConfig {
    pub mul: NttMul,
    pub radix: NttRadix,
    pub plan: NttPlan,
    pub bitrev: NttBitrev,
    pub lean: bool,
}

impl NttConfig {
    /// The `ntt_*` keys of `[cuda]`, with the twiddle tables: whether a call runs lean is the
    /// device plan's choice from `ntt_memory` ([`crate::engine::placement::choose_ntt`]).
    pub fn of(s: &CudaSettings) -> NttConfig {
        NttConfig { mul: s.ntt_mul, radix: s.ntt_radix, plan: s.ntt_plan, bitrev: s.ntt_bitrev, lean: false }
    }

    /// `e8 fused r4 eo` (`e8 lean r4 eo` when lean: its permutation is in place): plan, bit
    /// reversal, radix, product.
    pub fn describe(&self) -> String {
        let bitrev = if self.lean { "lean" } else { self.bitrev.name() };
        format!("{} {} {} {}", self.plan.name(), bitrev, self.radix.name(), self.mul.name())
    }
}

/// The entry points of `ntt.cu` for one Fr product.
struct NttKernels {
    dif_pass: KernelName,
    dif_pass_r4: KernelName,
    dif_pass_lean: KernelName,
    dif_pass_r4_lean: KernelName,
    last_bitrev: KernelName,
    last_bitrev_r4: KernelName,
    bitrev_scale: KernelName,
    bitrev_tile: KernelName,
    powers: KernelName,
    abc_div_z: KernelName,
    scale_powers: KernelName,
}

/// `Fr::mul` (CIOS): the plain names.
const CIOS_KERNELS: NttKernels = NttKernels {
    dif_pass: k::NTT_DIF_PASS,
    dif_pass_r4: k::NTT_DIF_PASS_R4,
    dif_pass_lean: k::NTT_DIF_PASS_LEAN,
    dif_pass_r4_lean: k::NTT_DIF_PASS_R4_LEAN,
    last_bitrev: k::NTT_DIF_LAST_BITREV,
    last_bitrev_r4: k::NTT_DIF_LAST_BITREV_R4,
    bitrev_scale: k::NTT_BITREV_SCALE,
    bitrev_tile: k::NTT_BITREV_TILE,
    powers: k::FR_POWERS,
    abc_div_z: k::FR_ABC_DIV_Z,
    scale_powers: k::FR_SCALE_POWERS,
};

/// `Fr::mul_eo` (even/odd): the `_eo` names.
const EO_KERNELS: NttKernels = NttKernels {
    dif_pass: k::NTT_DIF_PASS_EO,
    dif_pass_r4: k::NTT_DIF_PASS_R4_EO,
    dif_pass_lean: k::NTT_DIF_PASS_LEAN_EO,
    dif_pass_r4_lean: k::NTT_DIF_PASS_R4_LEAN_EO,
    last_bitrev: k::NTT_DIF_LAST_BITREV_EO,
    last_bitrev_r4: k::NTT_DIF_LAST_BITREV_R4_EO,
    bitrev_scale: k::NTT_BITREV_SCALE_EO,
    bitrev_tile: k::NTT_BITREV_TILE_EO,
    powers: k::FR_POWERS_EO,
    abc_div_z: k::FR_ABC_DIV_Z_EO,
    scale_powers: k::FR_SCALE_POWERS_EO,
};

/// The kernels of product `mul`.
fn kernels(mul: NttMul) -> &'static NttKernels {
    match mul {
        NttMul::Cios => &CIOS_KERNELS,
        NttMul::Eo => &EO_KERNELS,
    }
}

impl NttRadix {
    /// The DIF pass kernel for this shape and product `mul`.
    fn dif_kernel(self, mul: NttMul) -> KernelName {
        match self {
            NttRadix::R2 => kernels(mul).dif_pass,
            NttRadix::R4 => kernels(mul).dif_pass_r4,
        }
    }

    /// The DIF pass kernel of the lean NTT (twiddles from two small tables) for this shape
    /// and product `mul`.
    fn dif_lean_kernel(self, mul: NttMul) -> KernelName {
        match self {
            NttRadix::R2 => kernels(mul).dif_pass_lean,
            NttRadix::R4 => kernels(mul).dif_pass_r4_lean,
        }
    }

    /// The fused last DIF pass + bit reversal kernel for this shape and product `mul`.
    fn last_bitrev_kernel(self, mul: NttMul) -> KernelName {
        match self {
            NttRadix::R2 => kernels(mul).last_bitrev,
            NttRadix::R4 => kernels(mul).last_bitrev_r4,
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

impl NttPlan {
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

/// Stages and log2 chunks per block of the fused last pass.
const FUSED_K: u32 = 8;
const FUSED_LOG_G: u32 = 2;

impl NttBitrev {
    /// (k, log_g) of the fused last pass at 2^log_n, or None when a separate bit-reversal
    /// kernel ends the NTT (not fused, or below 2^10).
    pub(crate) fn fused_last(self, log_n: u32) -> Option<(u32, u32)> {
        (self == NttBitrev::Fused && log_n >= 10).then_some((FUSED_K, FUSED_LOG_G))
    }

    /// Kernel (for product `mul`) and launch geometry of the separate bit-reversal pass for
    /// 2^log_n elements (the tile needs 2^10; `fused` has no such pass from 2^10 up, the plain
    /// one below).
    fn launch(self, log_n: u32, mul: NttMul) -> (KernelName, LaunchConfig) {
        match self {
            NttBitrev::Tile if log_n >= 10 => (
                kernels(mul).bitrev_tile,
                LaunchConfig { grid_dim: (1u32 << (log_n - 10), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 },
            ),
            _ => (kernels(mul).bitrev_scale, cfg_1d(1u64 << log_n, 256)),
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

fn inverse(x: Scalar, what: &'static str) -> Result<Scalar, GpuError> {
    Option::<Scalar>::from(x.invert()).ok_or(GpuError::NotInvertible(what))
}

fn ninv(log_n: u32) -> Result<Scalar, GpuError> {
    inverse(Scalar::from(1u64 << log_n), "n")
}

impl Gpu {
    fn upload_scalars(&self, s: &[Scalar]) -> Result<CudaSlice<u32>, GpuError> {
        self.stream.clone_htod(scalar_words(s)).ctx("upload scalars")
    }

    /// Device tables of j -> c * base^j for j < count.
    pub(crate) fn scale(&self, c: Scalar, base: Scalar, count: u64) -> Result<Scale, GpuError> {
        let (hi, lo) = two_level(c, base, count);
        Ok(Scale { hi: self.upload_scalars(&hi)?, lo: self.upload_scalars(&lo)? })
    }

    /// a, b, c (Montgomery words) in three zero-padded 2^log_n buffers on the copy stream,
    /// as `how` says: through pinned staging (the three copies in flight together), or
    /// straight from their own pages locked in place ([`Gpu::upload_registered`]; staged
    /// when they cannot be locked). Returns them with the three uploads' summed times
    /// (`gpu_ms`: the copies' CUDA-event time) and, when registered, the lock on a, b and c
    /// (to drop before they are freed: it only unlocks, the copies are done).
    ///
    /// `pinned`: which of a, b, c are page-locked already (the engine's pooled vectors,
    /// [`crate::abc_pool`]); with `how` = pooled they are copied in place, the others staged.
    pub fn upload_abc(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32, how: AbcUpload, pinned: [bool; 3]) -> Result<UploadedAbc, GpuError> {
        let n = 1usize << log_n;
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            if v.len() > n {
                return Err(GpuError::input("upload_abc", format!("{name} has {} values, over the domain 2^{log_n}", v.len())));
            }
        }
        // Pooled: the page-locked ones are copied in place, the others staged.
        let in_place = if how == AbcUpload::Pooled { pinned } else { [false; 3] };
        let r = self.upload_abc_with([a, b, c], how, in_place, n);
        if r.is_err() && in_place.contains(&true) {
            // A copy may still read a pooled vector that its lease is about to hand back.
            let _ = self.wait_copies();
        }
        r
    }

    /// [`Gpu::upload_abc`] once checked: registered, or each of a, b, c copied in place
    /// (`in_place`, [`Gpu::upload_locked`]) or staged; all finished before it returns.
    fn upload_abc_with(&self, abc: [&[Scalar]; 3], how: AbcUpload, in_place: [bool; 3], n: usize) -> Result<UploadedAbc, GpuError> {
        let registered = match how {
            AbcUpload::Registered => self.upload_registered(&abc.map(scalar_words), n * 8)?,
            AbcUpload::Staged | AbcUpload::Pooled => None,
        };
        let (ups, lock) = match registered {
            Some((ups, lock)) => (ups, Some(lock)),
            None => {
                let mut ups = Vec::with_capacity(3);
                for (v, locked) in abc.into_iter().zip(in_place) {
                    let words = scalar_words(v);
                    ups.push(if locked { self.upload_locked(words, n * 8)? } else { self.upload_words(words.len(), n * 8, 8, |off, dst| super::device::par_copy(dst, &words[off..off + dst.len()]))? });
                }
                (ups, None)
            }
        };
        let mut times = UploadTimes::default();
        let mut bufs = Vec::with_capacity(3);
        for u in ups {
            let (buf, t) = u.finish(self)?;
            times.add(&t);
            bufs.push(buf);
        }
        Ok((bufs, times, lock))
    }
}

/// What the NTTs built on one device stream: its twiddle tables (per size and product) and
/// the stream they live on.
#[derive(Default)]
struct Twiddles {
    /// The `CUstream` of the first [`Gpu`] used: the tables belong to it.
    stream: OnceLock<usize>,
    /// By size, product and leanness.
    domains: Mutex<HashMap<(u32, NttMul, bool), Arc<Domain>>>,
}

/// The NTT launcher of one device stream: an [`NttConfig`] and the twiddle tables it built
/// (kept for the next partition). Its methods take the [`Gpu`] to launch on, always the same
/// handle (the tables live on its stream).
pub struct Ntt {
    cfg: NttConfig,
    twiddles: Arc<Twiddles>,
}

impl Ntt {
    pub fn new(cfg: NttConfig) -> Ntt {
        Ntt { cfg, twiddles: Arc::default() }
    }

    pub fn config(&self) -> NttConfig {
        self.cfg
    }

    /// The same launcher (same device stream, same twiddle tables) with other choices: the
    /// checks and benches compare them.
    pub fn with_config(&self, cfg: NttConfig) -> Ntt {
        Ntt { cfg, twiddles: self.twiddles.clone() }
    }

    /// The twiddle tables of 2^log_n for this config's product (built by its `fr_powers`).
    fn domain(&self, gpu: &Gpu, log_n: u32) -> Result<Arc<Domain>, GpuError> {
        if !(1..=MAX_LOG_N).contains(&log_n) {
            return Err(GpuError::input("NTT", format!("size 2^{log_n} outside 2^1..2^{MAX_LOG_N}")));
        }
        let stream = gpu.stream.cu_stream() as usize;
        if *self.twiddles.stream.get_or_init(|| stream) != stream {
            return Err(GpuError::input("NTT", "a launcher's twiddle tables live on the stream of the device handle it first ran on"));
        }
        let key = (log_n, self.cfg.mul, self.cfg.lean);
        if let Some(d) = self.twiddles.domains.lock().map_err(|_| GpuError::Poisoned("NTT domain cache"))?.get(&key) {
            return Ok(d.clone());
        }
        let w = omega(log_n);
        let winv = inverse(w, "omega")?;
        let half = 1u64 << (log_n - 1);
        let d = if self.cfg.lean {
            Arc::new(Domain { log_n, tw_fwd: Twid::TwoLevel(gpu.scale(Scalar::ONE, w, half)?), tw_inv: Twid::TwoLevel(gpu.scale(Scalar::ONE, winv, half)?) })
        } else {
            Arc::new(Domain { log_n, tw_fwd: Twid::Table(self.powers(gpu, Scalar::ONE, w, half)?), tw_inv: Twid::Table(self.powers(gpu, Scalar::ONE, winv, half)?) })
        };
        self.twiddles.domains.lock().map_err(|_| GpuError::Poisoned("NTT domain cache"))?.insert(key, d.clone());
        Ok(d)
    }

    /// Device buffer of `count` powers c * base^j.
    fn powers(&self, gpu: &Gpu, c: Scalar, base: Scalar, count: u64) -> Result<CudaSlice<u32>, GpuError> {
        let Scale { hi: hi_d, lo: lo_d } = gpu.scale(c, base, count)?;
        let mut out = gpu.stream.alloc_zeros::<u32>((count.max(1) * 8) as usize).ctx("alloc powers")?;
        launch!(gpu, kernels(self.cfg.mul).powers, cfg_1d(count, 256), &mut out, &count, &hi_d, &lo_d);
        Ok(out)
    }

    /// A scratch buffer for the NTTs of 2^log_n (none when lean: they run in place).
    fn scratch(&self, gpu: &Gpu, log_n: u32) -> Result<Option<CudaSlice<u32>>, GpuError> {
        if self.cfg.lean {
            return Ok(None);
        }
        Ok(Some(gpu.stream.alloc_zeros::<u32>((1usize << log_n) * 8).ctx("alloc scratch")?))
    }

    /// In-place NTT of `data` (2^log_n Fr, natural order in and out); `scratch` (needed unless
    /// lean) has the same size and is swapped with `data`. `scale` multiplies output j by
    /// c * base^j.
    pub(crate) fn ntt_device(&self, gpu: &Gpu, data: &mut CudaSlice<u32>, scratch: Option<&mut CudaSlice<u32>>, log_n: u32, dir: NttDirection, scale: Option<&Scale>) -> Result<(), GpuError> {
        let d = self.domain(gpu, log_n)?;
        debug_assert_eq!(d.log_n, log_n);
        let tw = match dir {
            NttDirection::Forward => &d.tw_fwd,
            NttDirection::Inverse => &d.tw_inv,
        };
        self.ntt_kernels(gpu, data, scratch, tw, log_n, scale, None)
    }

    /// The kernels of one NTT of `data` with twiddles `tw`: the DIF passes in place, then the
    /// closing permutation with `scale` into `scratch`, which is swapped with `data` (fused into
    /// the last pass or a pass of its own, per [`NttBitrev`]). Lean (two-level twiddles), the
    /// passes read their twiddles as products and the permutation swaps in place
    /// (`bitrev_inplace`), then `scale` is a pass of its own (`scale`); no scratch. With
    /// `phases`, each launch is timed with CUDA events and labelled `p<lam0>x<k>`, `bitrev`,
    /// `p<lam0>x<k>+bitrev`, `bitrev_inplace` or `scale`.
    #[allow(clippy::too_many_arguments)]
    fn ntt_kernels(
        &self,
        gpu: &Gpu,
        data: &mut CudaSlice<u32>,
        scratch: Option<&mut CudaSlice<u32>>,
        tw: &Twid,
        log_n: u32,
        scale: Option<&Scale>,
        mut phases: Option<&mut Vec<(String, f64)>>,
    ) -> Result<(), GpuError> {
        let NttConfig { mul, radix, plan, bitrev, .. } = self.cfg;
        let start = |timed: bool| if timed { gpu.timer().map(Some) } else { Ok(None) };
        let tw = match tw {
            Twid::Table(t) => t,
            Twid::TwoLevel(two) => {
                for (lam0, k, log_g) in plan.passes(log_n, NttBitrev::Plain) {
                    let t0 = start(phases.is_some())?;
                    launch!(gpu, radix.dif_lean_kernel(mul), radix.pass_cfg(log_n, k, log_g), &mut *data, &two.hi, &two.lo, &log_n, &lam0, &k, &log_g);
                    end_phase(gpu, t0, &mut phases, || format!("p{lam0}x{k}"))?;
                }
                let n = 1u64 << log_n;
                let t0 = start(phases.is_some())?;
                launch!(gpu, k::NTT_BITREV_INPLACE, cfg_1d(n, 256), &mut *data, &log_n);
                end_phase(gpu, t0, &mut phases, || "bitrev_inplace".into())?;
                if let Some(s) = scale {
                    let t0 = start(phases.is_some())?;
                    launch!(gpu, kernels(mul).scale_powers, cfg_1d(n, 256), &mut *data, &n, &s.hi, &s.lo);
                    end_phase(gpu, t0, &mut phases, || "scale".into())?;
                }
                return Ok(());
            }
        };
        let scratch = scratch.ok_or_else(|| GpuError::input("NTT", "the twiddle-table NTT needs a scratch buffer"))?;
        let pass = radix.dif_kernel(mul);
        let mut passes = plan.passes(log_n, bitrev);
        let fused = bitrev.fused_last(log_n).and_then(|_| passes.pop());
        for (lam0, k, log_g) in passes {
            let t0 = start(phases.is_some())?;
            launch!(gpu, pass, radix.pass_cfg(log_n, k, log_g), &mut *data, tw, &log_n, &lam0, &k, &log_g);
            end_phase(gpu, t0, &mut phases, || format!("p{lam0}x{k}"))?;
        }
        // Unscaled: the twiddle table stands in for the (unread) scale tables.
        let (hi, lo, scaled) = match scale {
            Some(s) => (&s.hi, &s.lo, 1u32),
            None => (tw, tw, 0u32),
        };
        let t0 = start(phases.is_some())?;
        if let Some((lam0, k, log_g)) = fused {
            launch!(gpu, radix.last_bitrev_kernel(mul), radix.pass_cfg(log_n, k, log_g), &*data, &mut *scratch, tw, &log_n, &k, &log_g, hi, lo, &scaled);
            end_phase(gpu, t0, &mut phases, || format!("p{lam0}x{k}+bitrev"))?;
        } else {
            let (kernel, cfg) = bitrev.launch(log_n, mul);
            launch!(gpu, kernel, cfg, &*data, &mut *scratch, &log_n, hi, lo, &scaled);
            end_phase(gpu, t0, &mut phases, || "bitrev".into())?;
        }
        std::mem::swap(data, scratch);
        Ok(())
    }

    /// NTT of `values` (padded with zeros to 2^log_n) on the GPU; `coset` evaluates on / interpolates
    /// from the coset g*H with g = MULTIPLICATIVE_GENERATOR. Inverse includes the 1/n factor.
    pub fn ntt(&self, gpu: &Gpu, values: &[Scalar], log_n: u32, dir: NttDirection, coset: bool) -> Result<Vec<Scalar>, GpuError> {
        let n = 1usize << log_n;
        if values.len() > n {
            return Err(GpuError::input("NTT", format!("{} values do not fit a domain of 2^{log_n}", values.len())));
        }
        let mut padded = values.to_vec();
        padded.resize(n, Scalar::ZERO);
        let mut data = gpu.upload_scalars(&padded)?;
        let mut scratch = self.scratch(gpu, log_n)?;
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        match (dir, coset) {
            (NttDirection::Forward, false) => self.ntt_device(gpu, &mut data, scratch.as_mut(), log_n, dir, None)?,
            (NttDirection::Inverse, false) => {
                let s = gpu.scale(ninv(log_n)?, Scalar::ONE, n as u64)?;
                self.ntt_device(gpu, &mut data, scratch.as_mut(), log_n, dir, Some(&s))?
            }
            (NttDirection::Forward, true) => {
                // Scale the input by g^i (a pass of its own here; fused in the H pipeline).
                let s = gpu.scale(Scalar::ONE, g, n as u64)?;
                let nn = n as u64;
                launch!(gpu, kernels(self.cfg.mul).scale_powers, cfg_1d(nn, 256), &mut data, &nn, &s.hi, &s.lo);
                self.ntt_device(gpu, &mut data, scratch.as_mut(), log_n, dir, None)?
            }
            (NttDirection::Inverse, true) => {
                let ginv = inverse(g, "g")?;
                let s = gpu.scale(ninv(log_n)?, ginv, n as u64)?;
                self.ntt_device(gpu, &mut data, scratch.as_mut(), log_n, dir, Some(&s))?
            }
        }
        let out = gpu.download_words(&data.slice(..), "download NTT")?;
        Ok(scalars_from_words(&out))
    }

    /// The Groth16 quotient on the GPU: for each of a, b, c (evaluations on the domain H of
    /// size 2^log_n, zero-padded): inverse NTT, then forward NTT on the coset gH; then
    /// (a*b - c) / Z(g) with Z(g) = g^n - 1; then inverse coset NTT. Returns all 2^log_n
    /// coefficients (the top one is zero for a satisfied circuit) and the device times.
    /// a, b, c reach the device as `how` says ([`Gpu::upload_abc`]).
    pub fn h_quotient(&self, gpu: &Gpu, a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32, how: AbcUpload) -> Result<(Vec<Scalar>, NttTimes), GpuError> {
        let (buf, mut times) = self.h_quotient_device(gpu, a, b, c, log_n, how)?;
        let t0 = gpu.timer()?;
        let out = gpu.download_words(&buf.slice(..), "download H")?;
        let t1 = gpu.timer()?;
        times.d2h_ms = t0.ms_to(&t1)?;
        Ok((scalars_from_words(&out), times))
    }

    /// [`Ntt::h_quotient`] leaving the 2^log_n coefficients (Montgomery words) on the device,
    /// ready for the H MSM.
    pub fn h_quotient_device(&self, gpu: &Gpu, a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32, how: AbcUpload) -> Result<(CudaSlice<u32>, NttTimes), GpuError> {
        // Pooled: a, b and c locked here as the engine's pool locks its vectors, for as long
        // as the upload (the check compares the in-place copy with the CPU's quotient).
        let pins: Vec<super::device::HostLock> = if how == AbcUpload::Pooled {
            let mut pins = Vec::new();
            for v in [a, b, c] {
                // SAFETY: `v` is borrowed for this whole call; the locks drop before it returns.
                if let Some(l) = unsafe { gpu.pin_portable(v.as_ptr() as *mut std::ffi::c_void, std::mem::size_of_val(v)) }? {
                    pins.push(l);
                }
            }
            pins
        } else {
            Vec::new()
        };
        let pinned = [pins.len() == 3; 3];
        let (bufs, up, lock) = gpu.upload_abc(a, b, c, log_n, how, pinned)?;
        drop(lock);
        drop(pins);
        let h2d_ms = up.gpu_ms;
        self.h_quotient_uploaded(gpu, bufs, log_n, h2d_ms)
    }

    /// [`Ntt::h_quotient_device`] on a, b, c already uploaded by [`Gpu::upload_abc`]
    /// (consumed; the first becomes H). `h2d_ms` is reported as the times' `h2d_ms`.
    pub fn h_quotient_uploaded(&self, gpu: &Gpu, bufs: Vec<CudaSlice<u32>>, log_n: u32, h2d_ms: f64) -> Result<(CudaSlice<u32>, NttTimes), GpuError> {
        let n = 1usize << log_n;
        if bufs.len() != 3 || bufs.iter().any(|b| b.len() != n * 8) {
            return Err(GpuError::input("H quotient", format!("needs three buffers of 2^{log_n} scalars")));
        }
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let ginv = inverse(g, "g")?;
        let ninv = ninv(log_n)?;
        let zinv = inverse(g.pow_vartime([n as u64]) - Scalar::ONE, "Z(g)")?;
        self.domain(gpu, log_n)?; // twiddles and scale tables outside the timed region
        let to_coset = gpu.scale(ninv, g, n as u64)?;
        let from_coset = gpu.scale(ninv, ginv, n as u64)?;
        let zinv_d = gpu.upload_scalars(&[zinv])?;
        let mut bufs = bufs;
        let mut scratch = self.scratch(gpu, log_n)?;
        let t1 = gpu.timer()?;
        for buf in bufs.iter_mut() {
            self.ntt_device(gpu, buf, scratch.as_mut(), log_n, NttDirection::Inverse, Some(&to_coset))?;
            self.ntt_device(gpu, buf, scratch.as_mut(), log_n, NttDirection::Forward, None)?;
        }
        let nn = n as u64;
        let (ab, rest) = bufs.split_at_mut(1);
        launch!(gpu, kernels(self.cfg.mul).abc_div_z, cfg_1d(nn, 256), &mut ab[0], &rest[0], &rest[1], &zinv_d, &nn);
        self.ntt_device(gpu, &mut ab[0], scratch.as_mut(), log_n, NttDirection::Inverse, Some(&from_coset))?;
        let t2 = gpu.timer()?;
        let times = NttTimes { h2d_ms, ntt_ms: t1.ms_to(&t2)?, d2h_ms: 0.0 };
        let out = bufs.into_iter().next().ok_or_else(|| GpuError::input("H quotient", "no H buffer"))?;
        Ok((out, times))
    }

    /// Device time of each launch of one forward NTT of `values` (2^log_n of them; the
    /// bench's phase column): every DIF pass, and the bit reversal or the last pass with it
    /// fused (as `Ntt::ntt_kernels` launches them).
    pub fn forward_phases(&self, gpu: &Gpu, values: &[Scalar], log_n: u32) -> Result<Vec<(String, f64)>, GpuError> {
        let n = 1usize << log_n;
        if values.len() != n {
            return Err(GpuError::input("NTT phases", format!("{} values for a domain of 2^{log_n}", values.len())));
        }
        let mut data = gpu.upload_scalars(values)?;
        let mut scratch = self.scratch(gpu, log_n)?;
        let d = self.domain(gpu, log_n)?;
        let mut out = Vec::new();
        self.ntt_kernels(gpu, &mut data, scratch.as_mut(), &d.tw_fwd, log_n, None, Some(&mut out))?;
        Ok(out)
    }

    /// Device times of `runs` forward NTTs of `values` (2^log_n of them) already on the
    /// device, after one warm-up (the bench takes their median).
    pub fn time_forward(&self, gpu: &Gpu, values: &[Scalar], log_n: u32, runs: usize) -> Result<Vec<f64>, GpuError> {
        let n = 1usize << log_n;
        if values.len() != n {
            return Err(GpuError::input("NTT timing", format!("{} values for a domain of 2^{log_n}", values.len())));
        }
        let mut data = gpu.upload_scalars(values)?;
        let mut scratch = self.scratch(gpu, log_n)?;
        self.ntt_device(gpu, &mut data, scratch.as_mut(), log_n, NttDirection::Forward, None)?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t0 = gpu.timer()?;
            self.ntt_device(gpu, &mut data, scratch.as_mut(), log_n, NttDirection::Forward, None)?;
            let t1 = gpu.timer()?;
            times.push(t0.ms_to(&t1)?);
        }
        Ok(times)
    }
}

/// Closes a timed launch begun at `t0` (when phases are recorded) as `label`.
fn end_phase(gpu: &Gpu, t0: Option<KernelTimer>, phases: &mut Option<&mut Vec<(String, f64)>>, label: impl FnOnce() -> String) -> Result<(), GpuError> {
    if let (Some(t0), Some(p)) = (t0, phases.as_deref_mut()) {
        let t1 = gpu.timer()?;
        p.push((label(), t0.ms_to(&t1)?));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{k, NttBitrev, NttMul, NttPlan, NttRadix, CIOS_KERNELS, EO_KERNELS};

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

    /// Host model of `ntt_bitrev_inplace_t`: the thread of element i swaps it with rev(i) when
    /// i < rev(i). Panics when an element is moved twice.
    fn model_bitrev_inplace(data: &mut [u64], log_n: u32) {
        let mut moved = vec![false; data.len()];
        for i in 0..data.len() as u64 {
            let j = rev(i, log_n);
            if i < j {
                assert!(!moved[i as usize] && !moved[j as usize], "2^{log_n}: element moved twice");
                data.swap(i as usize, j as usize);
                moved[i as usize] = true;
                moved[j as usize] = true;
            }
        }
    }

    #[test]
    fn the_lean_ntt_model_equals_the_passes_then_the_out_of_place_bit_reversal() {
        // The lean NTT runs the passes of the plain plan, then swaps in place: the same output
        // as the permutation into a second buffer (sizes below and above the 2^10 tile).
        let mut next = xorshift(0x51af_d7ed_558c_cd1du64);
        for log_n in 1..=15u32 {
            let n = 1usize << log_n;
            let tw: Vec<u64> = (0..n / 2).map(|_| next()).collect();
            let input: Vec<u64> = (0..n).map(|_| next()).collect();
            let mut passed = input.clone();
            for (lam0, k, log_g) in NttPlan::default().passes(log_n, NttBitrev::Plain) {
                model_pass(&mut passed, &tw, log_n, lam0, k, log_g, true);
            }
            let mut want = vec![0u64; n];
            for (i, v) in passed.iter().enumerate() {
                want[rev(i as u64, log_n) as usize] = *v;
            }
            model_bitrev_inplace(&mut passed, log_n);
            assert!(passed == want, "2^{log_n}: the in-place bit reversal differs");
        }
    }

    #[test]
    fn the_lean_twiddles_are_the_products_of_the_two_small_tables() {
        // TwTwoLevel in ntt.cu reads w^i as hi[i >> 12] * lo[i & 4095]: the tables `gpu.scale`
        // uploads for (c = 1, base = w, count = n/2) give every power, at the ends of the
        // domain and across the 4096 boundary.
        use blstrs::Scalar;
        use ff::Field;
        for log_n in [1u32, 2, 12, 13, 14, 27] {
            let w = super::omega(log_n);
            let half = 1u64 << (log_n - 1);
            let (hi, lo) = super::two_level(Scalar::ONE, w, half);
            assert_eq!((hi.len() as u64, lo.len()), (half.div_ceil(4096).max(1), 4096));
            for i in [0u64, 1, 4095, 4096, 4097, half / 2, half - 1].into_iter().filter(|&i| i < half) {
                let got = hi[(i >> 12) as usize] * lo[(i & 4095) as usize];
                assert_eq!(got, w.pow_vartime([i]), "2^{log_n}: twiddle {i}");
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
    fn radix_and_product_pick_the_kernels_of_ntt_cu() {
        // The defaults are the measured winners.
        assert_eq!((NttMul::default(), NttRadix::default()), (NttMul::Eo, NttRadix::R4));
        let src = include_str!("../../cuda/ntt.cu");
        assert!(src.contains("void ntt_dif_pass_r4_t("));
        assert!(src.contains("void ntt_dif_pass_r4##SUF("));
        assert_eq!(NttRadix::R4.dif_kernel(NttMul::Cios).as_str(), "ntt_dif_pass_r4");
        assert_eq!(NttRadix::R4.dif_kernel(NttMul::Eo).as_str(), "ntt_dif_pass_r4_eo");
        assert_eq!(NttRadix::R2.dif_kernel(NttMul::Eo).as_str(), "ntt_dif_pass_eo");
        assert_eq!(NttRadix::R2.dif_kernel(NttMul::Cios).as_str(), "ntt_dif_pass");
    }

    #[test]
    fn every_ntt_kernel_has_both_products() {
        let (c, e) = (&CIOS_KERNELS, &EO_KERNELS);
        let pairs = [
            (c.dif_pass, e.dif_pass),
            (c.dif_pass_r4, e.dif_pass_r4),
            (c.dif_pass_lean, e.dif_pass_lean),
            (c.dif_pass_r4_lean, e.dif_pass_r4_lean),
            (c.last_bitrev, e.last_bitrev),
            (c.last_bitrev_r4, e.last_bitrev_r4),
            (c.bitrev_scale, e.bitrev_scale),
            (c.bitrev_tile, e.bitrev_tile),
            (c.powers, e.powers),
            (c.abc_div_z, e.abc_div_z),
            (c.scale_powers, e.scale_powers),
        ];
        let src = include_str!("../../cuda/ntt.cu");
        for (cios, eo) in pairs {
            assert_eq!(eo.as_str(), format!("{cios}_eo"));
            // Each name comes from the macro of ntt.cu instantiated for both products.
            assert!(src.contains(&format!(" {cios}##SUF(")) || src.contains(&format!("{cios}##SUF(")), "{cios}: not an entry of NTT_ENTRIES");
        }
        assert!(src.contains("NTT_ENTRIES(_eo, FrEo)"));
        // Every entry point of ntt.cu is one of the two sets, or the in-place bit reversal
        // (no product: it only moves elements).
        assert_eq!(pairs.len() * 2 + 1, k::ALL.len());
        assert!(k::ALL.contains(&k::NTT_BITREV_INPLACE));
        assert_eq!(super::kernels(NttMul::Eo).powers.as_str(), "fr_powers_eo");
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
    fn bit_reversal_kernels_follow_the_choice_and_the_size() {
        assert_eq!(NttRadix::R4.last_bitrev_kernel(NttMul::Eo).as_str(), "ntt_dif_last_bitrev_r4_eo");
        assert_eq!(NttRadix::R2.last_bitrev_kernel(NttMul::Eo).as_str(), "ntt_dif_last_bitrev_eo");
        assert_eq!(NttRadix::R2.last_bitrev_kernel(NttMul::Cios).as_str(), "ntt_dif_last_bitrev");
        let src = include_str!("../../cuda/ntt.cu");
        assert!(src.contains("void ntt_dif_last_bitrev##SUF(") && src.contains("__launch_bounds__(256, 3)") && src.contains("ntt_dif_last_bitrev_r4##SUF("));
        // Below 2^10 the tile does not fit: the plain kernel runs.
        assert_eq!(NttBitrev::Tile.launch(9, NttMul::Cios).0.as_str(), "ntt_bitrev_scale");
        assert_eq!(NttBitrev::Tile.launch(10, NttMul::Cios).0.as_str(), "ntt_bitrev_tile");
        assert_eq!(NttBitrev::Tile.launch(10, NttMul::Eo).0.as_str(), "ntt_bitrev_tile_eo");
        assert_eq!(NttBitrev::Plain.launch(12, NttMul::Eo).0.as_str(), "ntt_bitrev_scale_eo");
        assert!(include_str!("../../cuda/ntt.cu").contains("void ntt_bitrev_tile##SUF("));
        assert_eq!(NttBitrev::default(), NttBitrev::Fused);
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
