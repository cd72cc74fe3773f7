//! G1 and G2 MSMs on the GPU (Pippenger, signed windows, counting-sort of points into
//! buckets) and the batch additions of the density split. The host only picks the window
//! size and combines the ~16 window sums (Horner, one doubling per bit of each window).
//! One code path serves both groups: [`GpuCurve`] says what differs (point sizes, the
//! kernels of `msm.cu` / `msm_g2.cu`, the conversion back to blstrs); the digit and sort
//! kernels are shared.
//!
//! Tuning knobs (issue 5): the bucket-accumulation kernel, the window size c, the
//! reduction's segment length, the balanced kernels' chunk and the use of a table of
//! precomputed shifted bases ([`ShiftTable`], G1 only) form an [`MsmConfig`], written
//! `KERNEL[+pre][:C[:SEG[:CHUNK]]]` (e.g. `eo:17`, `bal+pre:20`). The engine runs the
//! configs of [`MsmDefaults`]: the `[cuda]` keys `msm_acc` (a spec), `msm_c` and `msm_seg`
//! override the built-in choice (kernel `bal`, c from [`msm_window_bits`], segments of 16);
//! `gpu check` and `gpu bench` run explicit configs (see `diag`). The G2 MSM has its own
//! kernels ([`G2_ACC_KERNELS`]) and its own default (`msm_g2_acc`, a spec). The launchers
//! take the config as an argument: the device handle holds none.

use std::marker::PhantomData;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{CudaSlice, CudaView};
use group::Group;

use super::convert::{affine_words, affine_words_g2, scalar_words, xyzz_to_projective, xyzz_to_projective_g2};
use super::device::{cfg_1d, launch, Gpu};
use super::error::{Ctx, GpuError};
use super::kernels::{msm as k1, msm_g2 as k2, KernelName};
use crate::cuda_settings::{CudaSettings, CudaSettingsError};
pub use crate::cuda_settings::MSM_C_RANGE;

/// What the MSM code needs to know about a group: the layouts of its points on the device,
/// its kernels and the conversion of the kernels' XYZZ results back to blstrs.
pub trait GpuCurve: 'static {
    type Affine: group::prime::PrimeCurveAffine + std::ops::Neg<Output = Self::Affine> + Copy + Send + Sync;
    type Proj: group::Curve<AffineRepr = Self::Affine>
        + From<Self::Affine>
        + std::ops::Mul<Scalar, Output = Self::Proj>
        + std::fmt::Debug
        + Send
        + Sync;
    /// "G1" or "G2" (messages).
    const NAME: &'static str;
    /// u32 words per XYZZ point (the affine layout is `words`' business).
    const XYZZ_WORDS: usize;
    /// u32 words per affine point (x and y: half an XYZZ point).
    const AFFINE_WORDS: usize = Self::XYZZ_WORDS / 2;
    /// Bucket-accumulation kernels (short name, kernel) and the default one.
    const ACC_KERNELS: &'static [(&'static str, KernelName)];
    const DEFAULT_ACC: &'static str;
    /// The `[cuda]` key of this group's MSM spec (`msm_acc`, `msm_g2_acc`).
    const ACC_KEY: &'static str;
    /// Bucket reduction (segments closed by a double-and-add).
    const REDUCE: KernelName;
    /// The fixup of the balanced accumulation kernels (`*_bal`: carries of split buckets).
    const FIXUP: KernelName;
    const SUM_CHUNKS: KernelName;
    /// Batch-addition kernels (short name, kernel): chunked sums of indexed affine points.
    const SUM_AFFINE_KERNELS: &'static [(&'static str, KernelName)];
    /// The batch addition the backend uses: kernel (short name) and points per thread.
    const DEFAULT_SUM: (&'static str, u32);
    /// The kernels that build a table of precomputed shifted bases (doubling into XYZZ,
    /// batch conversion back to affine), when this group has them (G1; not G2).
    const SHIFT: Option<(KernelName, KernelName)>;
    fn words(points: &[Self::Affine]) -> &[u32];
    /// `None` when the words are not a point of the curve (a kernel bug).
    fn from_xyzz(w: &[u32]) -> Option<Self::Proj>;
    /// This group's config among the engine's.
    fn config(d: &MsmDefaults) -> MsmConfig;
    /// Window size c for an MSM of n points when the config gives none.
    fn default_window_bits(n: usize) -> u32 {
        msm_window_bits(n)
    }
}

/// BLS12-381 G1 (the H, L, A and B-in-G1 queries).
pub struct G1;
/// BLS12-381 G2 (the B query in G2).
pub struct G2;

impl GpuCurve for G1 {
    type Affine = G1Affine;
    type Proj = G1Projective;
    const NAME: &'static str = "G1";
    const XYZZ_WORDS: usize = 48;
    const ACC_KERNELS: &'static [(&'static str, KernelName)] = ACC_KERNELS;
    const DEFAULT_ACC: &'static str = "bal";
    const ACC_KEY: &'static str = "msm_acc";
    const REDUCE: KernelName = k1::MSM_BUCKET_REDUCE;
    const FIXUP: KernelName = k1::MSM_BUCKET_FIXUP;
    const SUM_CHUNKS: KernelName = k1::G1_SUM_CHUNKS;
    const SUM_AFFINE_KERNELS: &'static [(&'static str, KernelName)] = &[("std", k1::G1_SUM_AFFINE_CHUNKS), ("eo", k1::G1_SUM_AFFINE_CHUNKS_EO)];
    /// H200, run 44 (`gpu bench --batch-add 20,23`): 2^23 points 6.80 ms with eo at 64 per
    /// thread vs 9.12 with the CIOS product (the default before), eo at 32 6.88, at 128 7.63;
    /// 2^20 3.23 vs 5.05.
    const DEFAULT_SUM: (&'static str, u32) = ("eo", 64);
    const SHIFT: Option<(KernelName, KernelName)> = Some((k1::G1_SHIFT_DBL, k1::G1_XYZZ_TO_AFFINE));
    fn words(points: &[G1Affine]) -> &[u32] {
        affine_words(points)
    }
    fn from_xyzz(w: &[u32]) -> Option<G1Projective> {
        xyzz_to_projective(w)
    }
    fn config(d: &MsmDefaults) -> MsmConfig {
        d.g1
    }
}

impl GpuCurve for G2 {
    type Affine = G2Affine;
    type Proj = G2Projective;
    const NAME: &'static str = "G2";
    const XYZZ_WORDS: usize = 96;
    const ACC_KERNELS: &'static [(&'static str, KernelName)] = G2_ACC_KERNELS;
    const DEFAULT_ACC: &'static str = "g2bal";
    const ACC_KEY: &'static str = "msm_g2_acc";
    const REDUCE: KernelName = k2::G2_BUCKET_REDUCE;
    const FIXUP: KernelName = k2::G2_BUCKET_FIXUP;
    const SUM_CHUNKS: KernelName = k2::G2_SUM_CHUNKS;
    const SUM_AFFINE_KERNELS: &'static [(&'static str, KernelName)] = &[("eo", k2::G2_SUM_AFFINE_CHUNKS)];
    /// H200, run 44: 2^20 G2 points 4.51 ms at 32 per thread vs 5.42 at 64 (the default
    /// before), 4.99 at 16, 7.87 at 128 (larger sizes not timed).
    const DEFAULT_SUM: (&'static str, u32) = ("eo", 32);
    const SHIFT: Option<(KernelName, KernelName)> = None;
    fn words(points: &[G2Affine]) -> &[u32] {
        affine_words_g2(points)
    }
    fn from_xyzz(w: &[u32]) -> Option<G2Projective> {
        xyzz_to_projective_g2(w)
    }
    fn config(d: &MsmDefaults) -> MsmConfig {
        d.g2
    }
    /// c = 14 from 2^17 to 2^20 points: a G2 bucket is 4x the work of a G1 one, so fewer
    /// buckets pay earlier. H200, run 21 (same run, g2eo): 2^17 11.30 vs 11.55 ms (c 13),
    /// 2^18 15.79 vs 21.98 (c 16), 2^19 24.54 vs 29.75, 2^20 41.28 vs 44.58; 2^16 and 2^21
    /// were slower at 14 (8.96 vs 8.51, 73.93 vs 72.34), so they keep G1's choice.
    /// Below 2^17 points G2 keeps G1's choice from before run 32 (9 below 4096, 13 above): the
    /// smaller windows G1 took then were not timed for G2.
    fn default_window_bits(n: usize) -> u32 {
        match n {
            0..=4095 => 9,
            4096..=0x1_ffff => 13,
            0x2_0000..=0x10_0000 => 14,
            _ => msm_window_bits(n),
        }
    }
}

/// Window size c (bits) for an MSM of n points (G1). Below 2^19 points the bucket reduction,
/// whose cost follows the bucket count and not n, outweighs the additions that larger windows
/// save: on the H200 (runs 32-33 of reports/gpu/2026-11-30-run26-31.md, `bal`) c = 10 was the
/// fastest of 10..16 from 2^12 to 2^16 points (2^16: 2.70 ms vs 3.55 at c = 13), c = 11 at 2^17
/// and 2^18 (5.23 vs 6.16 ms at c = 16), c = 16 from 2^19 (c = 15 within 1 %).
pub fn msm_window_bits(n: usize) -> u32 {
    match n {
        0..=4095 => 9,
        4096..=0x1_0000 => 10,
        0x1_0001..=0x7_ffff => 11,
        _ => 16,
    }
}

/// The sizes one MSM of n terms works with, derived once from its window size, whether it
/// runs over a table of shifted bases and its config: what [`Gpu::msm_device_cfg`] allocates
/// and launches, and what [`msm_scratch_bytes_for`] adds up.
struct MsmShape {
    layout: WindowLayout,
    /// Bucket sets to fill and reduce: one per window, or one over a table.
    sets: u32,
    /// Buckets per set, and in all.
    nb: u32,
    nbk: u32,
    /// Entries the sort can produce at most (n * windows).
    most: u64,
    /// The balanced kernels' entries per thread (None for the others).
    chunk: Option<u32>,
    /// Reduction segment length and segments per set.
    seg: u32,
    nseg: u32,
}

impl MsmShape {
    fn new(n: usize, c: u32, table: bool, cfg: &MsmConfig) -> MsmShape {
        let layout = WindowLayout::new(c);
        let nb = layout.buckets_per_window();
        let sets = if table { 1 } else { layout.nwin };
        let most = n as u64 * layout.nwin as u64;
        let seg = cfg.seg.unwrap_or(16).min(nb);
        MsmShape { layout, sets, nb, nbk: sets * nb, most, chunk: is_balanced(cfg.acc).then(|| cfg.chunk.unwrap_or_else(|| default_chunk(most))), seg, nseg: nb / seg }
    }

    /// Threads of the balanced accumulation (one per `chunk` entries of the most).
    fn threads(&self, chunk: u32) -> u64 {
        self.most.div_ceil(chunk as u64)
    }

    /// Device scratch in bytes: entries, offsets and counts, buckets, carries, partials, and
    /// for Montgomery scalars their canonical copy.
    fn scratch_bytes<C: GpuCurve>(&self, n: usize, montgomery: bool) -> usize {
        let xyzz = C::XYZZ_WORDS * 4;
        let nbk = self.nbk as usize;
        let carries = self.chunk.map_or(0, |k| self.threads(k) as usize * xyzz);
        let partials = (self.sets * self.nseg) as usize * xyzz;
        let canon = if montgomery { n * 32 } else { 0 };
        self.most as usize * 4 + nbk * 8 + nbk * xyzz + carries + partials + canon
    }
}

/// Device scratch in bytes that [`Gpu::msm_device_ex`] allocates for an MSM of n terms with
/// config `cfg` over points with a table of window size `shift_c` or none (its digits and
/// entries, offsets and counts, buckets, the balanced kernels' carries, the reduction's
/// partials, and for Montgomery scalars their canonical copy): what must be free for it to
/// run beside other work.
pub fn msm_scratch_bytes<C: GpuCurve>(cfg: &MsmConfig, shift_c: Option<u32>, n: usize, montgomery: bool) -> usize {
    let c = shift_c.unwrap_or_else(|| cfg.window_bits_for::<C>(n));
    msm_scratch_bytes_for::<C>(n, c, shift_c.is_some(), cfg, montgomery)
}

/// Device scratch of one MSM of n terms at window size c (see [`msm_scratch_bytes`]);
/// `table`: over precomputed shifted bases (one bucket set).
pub fn msm_scratch_bytes_for<C: GpuCurve>(n: usize, c: u32, table: bool, cfg: &MsmConfig, montgomery: bool) -> usize {
    if n == 0 {
        return 0;
    }
    MsmShape::new(n, c, table, cfg).scratch_bytes::<C>(n, montgomery)
}

/// Bucket counts up to this are scanned by one block; beyond, by tiles (scan_tiles /
/// exclusive_scan / scan_add_tiles): 0.06 vs 1.0 ms for the 2^19 counts of c = 16 (run 26).
const SINGLE_BLOCK_SCAN_MAX: u32 = 1 << 12;

/// An error naming the window size when it is outside [`MSM_C_RANGE`].
fn check_window_bits(c: u32) -> Result<(), GpuError> {
    if MSM_C_RANGE.contains(&c) {
        Ok(())
    } else {
        Err(GpuError::config("MSM window size", format!("{c} outside {}..={}", MSM_C_RANGE.start(), MSM_C_RANGE.end())))
    }
}

/// Bucket-accumulation kernels of `msm.cu`: (short name, kernel). See the comment above
/// the kernels for what each one is.
pub const ACC_KERNELS: &[(&str, KernelName)] = &[
    ("b4", k1::MSM_BUCKET_ACC),
    ("eo", k1::MSM_BUCKET_ACC_EO),
    ("f1eo3", k1::MSM_BUCKET_ACC_F1EO3),
    ("bal", k1::MSM_BUCKET_ACC_BAL),
];

/// The G2 bucket-accumulation kernels of `msm_g2.cu`.
pub const G2_ACC_KERNELS: &[(&str, KernelName)] = &[
    ("g2", k2::G2_BUCKET_ACC),
    ("g2eo", k2::G2_BUCKET_ACC_EO),
    ("g2f1eo", k2::G2_BUCKET_ACC_F1EO),
    ("g2bal", k2::G2_BUCKET_ACC_BAL),
];

/// Whether an accumulation kernel (short or full name) is a balanced one: a fixed chunk of
/// entries per thread, then the fixup kernel; extra arguments chunk and carry.
pub fn is_balanced(kernel: &str) -> bool {
    kernel.ends_with("bal")
}

/// Entries per thread of the balanced kernels when the config gives none: about one
/// thread per 2^20th of the entries (n * windows), within 64..=256 (H200, 2026-11-30: 64
/// was best at 2^20 points, 64-128 at 2^22, 256 at 2^24).
pub fn default_chunk(entries: u64) -> u32 {
    let per = (entries >> 20).max(1);
    (1u64 << (63 - per.leading_zeros())).clamp(64, 256) as u32
}

/// The window layout of `msm_digits.cuh` (mirrored here for the bucket count and Horner):
/// nwin = ceil(255 / c) windows, the top `extra` of width base + 1, the others base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowLayout {
    pub nwin: u32,
    pub base: u32,
    pub extra: u32,
}

impl WindowLayout {
    pub fn new(c: u32) -> WindowLayout {
        let nwin = 255u32.div_ceil(c);
        WindowLayout { nwin, base: 255 / nwin, extra: 255 % nwin }
    }
    pub fn width(&self, w: u32) -> u32 {
        self.base + u32::from(w >= self.nwin - self.extra)
    }
    /// Buckets per window: 2^(widest window - 1).
    pub fn buckets_per_window(&self) -> u32 {
        1 << (self.base + u32::from(self.extra > 0) - 1)
    }
}

/// One way of running the MSM: accumulation kernel, window size (None: by size), reduction
/// segment length (None: 16), for the balanced kernels entries per thread (None: by size),
/// and whether to run over the points' table of precomputed shifted bases ([`ShiftTable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmConfig {
    /// Short name of the accumulation kernel (a key of [`ACC_KERNELS`]).
    pub acc: &'static str,
    pub c: Option<u32>,
    pub seg: Option<u32>,
    pub chunk: Option<u32>,
    /// Over the precomputed table (spec suffix `+pre` on the kernel, e.g. `bal+pre:20`);
    /// c, when given, must be the table's.
    pub pre: bool,
}

impl Default for MsmConfig {
    /// G1's built-in default (bal: fastest on the H200 from 2^20 to 2^24 points, run 26 of reports/gpu/2026-11-30-run26-31.md).
    fn default() -> Self {
        Self::default_for::<G1>()
    }
}

impl MsmConfig {
    /// The built-in default of group `C`.
    pub fn default_for<C: GpuCurve>() -> MsmConfig {
        Self::kernel(C::DEFAULT_ACC)
    }

    /// Kernel `acc` with every other choice left to the defaults.
    pub fn kernel(acc: &'static str) -> MsmConfig {
        MsmConfig { acc, c: None, seg: None, chunk: None, pre: false }
    }

    /// Parses a G1 spec `KERNEL[+pre][:C[:SEG[:CHUNK]]]`, e.g. `b4`, `eo:17`, `f1eo3:16:4`,
    /// `bal:16::128`, `bal+pre:20` (C, SEG or CHUNK may be empty; CHUNK only for the balanced
    /// kernels; `+pre` only for groups with shift kernels).
    pub fn parse(spec: &str) -> Result<MsmConfig, GpuError> {
        Self::parse_for::<G1>(spec)
    }

    /// Parses a spec whose kernel is one of group `C`'s (e.g. `g2eo:15` for G2).
    pub fn parse_for<C: GpuCurve>(spec: &str) -> Result<MsmConfig, GpuError> {
        let bad = |why: String| GpuError::config(format!("{} MSM variant {spec:?}", C::NAME), format!("{why} (expected KERNEL[+pre][:C[:SEG[:CHUNK]]], kernels {})", C::ACC_KERNELS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")));
        let mut parts = spec.trim().split(':');
        let head = parts.next().unwrap_or("").trim();
        let (name, pre) = match head.split_once('+') {
            None => (head, false),
            Some((k, "pre")) => (k.trim(), true),
            Some((_, other)) => return Err(bad(format!("unknown option +{other} (the only one is +pre)"))),
        };
        if pre && C::SHIFT.is_none() {
            return Err(bad(format!("precomputed bases (+pre) exist for G1 only, not {}", C::NAME)));
        }
        let acc = C::ACC_KERNELS.iter().find(|k| k.0 == name).map(|k| k.0).ok_or_else(|| bad(format!("unknown kernel {name:?}")))?;
        let num = |p: Option<&str>, what: &str| -> Result<Option<u32>, GpuError> {
            match p.map(str::trim) {
                None | Some("") => Ok(None),
                Some(v) => v.parse::<u32>().map(Some).map_err(|_| bad(format!("{what} {v:?} is not a number"))),
            }
        };
        let c = num(parts.next(), "window size")?;
        let seg = num(parts.next(), "segment length")?;
        let chunk = num(parts.next(), "chunk")?;
        if parts.next().is_some() {
            return Err(bad("too many fields".into()));
        }
        let cfg = MsmConfig { acc, c, seg, chunk, pre };
        cfg.check()?;
        Ok(cfg)
    }

    fn check(&self) -> Result<(), GpuError> {
        if let Some(c) = self.c {
            check_window_bits(c)?;
        }
        if let Some(s) = self.seg {
            if !(1..=256).contains(&s) || !s.is_power_of_two() {
                return Err(GpuError::config("MSM reduction segment length", format!("{s} is not a power of two in 1..=256")));
            }
        }
        if let Some(k) = self.chunk {
            if !is_balanced(self.acc) {
                return Err(GpuError::config("MSM chunk", format!("{k} given to kernel {:?}, which is not a balanced one", self.acc)));
            }
            if !(1..=4096).contains(&k) {
                return Err(GpuError::config("MSM chunk", format!("{k} outside 1..=4096 entries per thread")));
            }
        }
        Ok(())
    }

    /// The spec string (`KERNEL[+pre][:C[:SEG[:CHUNK]]]`, trailing empty fields dropped).
    pub fn spec(&self) -> String {
        let f = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
        let head = if self.pre { format!("{}+pre", self.acc) } else { self.acc.to_string() };
        let mut fields = vec![head, f(self.c), f(self.seg), f(self.chunk)];
        while fields.len() > 1 && fields.last().is_some_and(|s| s.is_empty()) {
            fields.pop();
        }
        fields.join(":")
    }

    /// The kernel of this config for group `C`; an error when the config names another
    /// group's kernel (launching it on these buffers would read out of bounds).
    pub fn kernel_for<C: GpuCurve>(&self) -> Result<KernelName, GpuError> {
        C::ACC_KERNELS
            .iter()
            .find(|k| k.0 == self.acc)
            .map(|k| k.1)
            .ok_or_else(|| GpuError::config("MSM kernel", format!("{:?} is not a {} kernel", self.acc, C::NAME)))
    }

    /// The window size for an MSM of n points in group `C`: the config's, else `C`'s default.
    pub fn window_bits_for<C: GpuCurve>(&self, n: usize) -> u32 {
        self.c.unwrap_or_else(|| C::default_window_bits(n))
    }
}

/// The MSM configs the engine runs, G1's and G2's: the `msm_*` keys of `[cuda]` over the
/// built-in defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmDefaults {
    pub g1: MsmConfig,
    pub g2: MsmConfig,
}

impl Default for MsmDefaults {
    fn default() -> Self {
        MsmDefaults { g1: MsmConfig::default_for::<G1>(), g2: MsmConfig::default_for::<G2>() }
    }
}

impl MsmDefaults {
    /// G1: `msm_acc` (a spec, else the built-in default) with `msm_c` and `msm_seg` over
    /// it; G2: `msm_g2_acc` (a spec, else the built-in default). An error names the key.
    pub fn from_settings(s: &CudaSettings) -> Result<MsmDefaults, CudaSettingsError> {
        let err = |key: &'static str, value: String, e: GpuError| CudaSettingsError { key, var: None, value, reason: e.to_string() };
        let spec = |key: &'static str, v: &Option<String>| (key, v.clone().unwrap_or_default());
        let mut g1 = match &s.msm_acc {
            Some(a) => MsmConfig::parse_for::<G1>(a).map_err(|e| err(G1::ACC_KEY, a.clone(), e))?,
            None => MsmConfig::default_for::<G1>(),
        };
        if let Some(c) = s.msm_c {
            check_window_bits(c).map_err(|e| err("msm_c", c.to_string(), e))?;
            g1.c = Some(c);
        }
        if let Some(seg) = s.msm_seg {
            g1.seg = Some(seg);
            MsmConfig { seg: Some(seg), ..MsmConfig::default_for::<G1>() }.check().map_err(|e| err("msm_seg", seg.to_string(), e))?;
        }
        g1.check().map_err(|e| {
            let (key, value) = spec(G1::ACC_KEY, &s.msm_acc);
            err(key, value, e)
        })?;
        let g2 = match &s.msm_g2_acc {
            Some(a) => MsmConfig::parse_for::<G2>(a).map_err(|e| err(G2::ACC_KEY, a.clone(), e))?,
            None => MsmConfig::default_for::<G2>(),
        };
        Ok(MsmDefaults { g1, g2 })
    }

    /// Group `C`'s config.
    pub fn of<C: GpuCurve>(&self) -> MsmConfig {
        C::config(self)
    }
}

/// Device times (CUDA events) of the phases of one MSM, in ms.
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmTimes {
    /// Scalar conversion, digits, counting sort (= digits + scan + scatter).
    pub sort_ms: f64,
    /// Scalar conversion from Montgomery form and the digit histogram.
    pub digits_ms: f64,
    /// Prefix sum of the histogram (bucket offsets).
    pub scan_ms: f64,
    /// Scatter of the point indices into bucket order.
    pub scatter_ms: f64,
    /// Bucket sums, including the balanced kernels' fixup.
    pub bucket_acc_ms: f64,
    /// The balanced kernels' fixup alone (0 for the others).
    pub fixup_ms: f64,
    pub reduce_ms: f64,
    pub total_ms: f64,
}

/// Points of group `C` resident on the device (affine, blst layout), with an optional
/// table of precomputed shifted bases.
pub struct DevicePoints<C: GpuCurve = G1> {
    pub(crate) buf: CudaSlice<u32>,
    pub len: usize,
    pub(crate) shifted: Option<ShiftTable>,
    _curve: PhantomData<C>,
}

impl<C: GpuCurve> DevicePoints<C> {
    /// Points already on the device as affine words (`len` points).
    pub(crate) fn from_words(buf: CudaSlice<u32>, len: usize) -> DevicePoints<C> {
        DevicePoints { buf, len, shifted: None, _curve: PhantomData }
    }

    /// The window size of the precomputed table, when there is one.
    pub fn shift_c(&self) -> Option<u32> {
        self.shifted.as_ref().map(|t| t.c)
    }
}

/// Precomputed shifted bases (cuda/msm_shift.cuh): for window size c with nwin windows,
/// `buf` holds nwin blocks of `len` affine points, block w = 2^(offset of window w) * the
/// points. An MSM over it (`MsmConfig::pre`) sorts every window's digits into one set of
/// 2^(c-1) buckets: one reduction, no window combination, so wide windows (fewer
/// additions) pay; it costs nwin times the points' device memory.
pub struct ShiftTable {
    buf: CudaSlice<u32>,
    /// The window size the table was built for.
    pub c: u32,
}

/// Window size of a precomputed table for n points when none is asked for: 16 below 2^21
/// points, 20 from there (13 windows, 2^19 buckets). H200, runs 34-35 of
/// reports/gpu/2026-11-30-run34-38.md (MSM over a 2^24- or 2^26-point table): 2^20 points
/// 11.30 ms at c = 16 vs 11.40 at 18 and 11.52 at 20; 2^22 32.52 at 20 vs 32.58 at 19 and
/// 34.30 at 16; 2^24 111.71 at 20 vs 112.81 at 19 and 124.92 at 16 (2^21 not measured).
pub fn pre_window_bits(n: usize) -> u32 {
    if n < 1 << 21 {
        16
    } else {
        20
    }
}

/// Fewest points for which the engine's automatic choice builds a table: below it the one
/// reduction over 2^(c-1) buckets costs more than the saved additions (runs 34-35: 2^16
/// points 3.40 ms at best with a table vs 2.71 without, 2^18 5.56 vs 5.22; 2^20 11.30 vs
/// 12.19; 2^19 lies between and was not measured).
pub const PRE_MIN_POINTS: usize = 1 << 19;

/// Points converted back to affine per inversion when a table is built.
const SHIFT_INV_CHUNK: u32 = 32;
/// Points doubled per pass when a table is built (bounds the XYZZ scratch: 192 bytes each).
const SHIFT_SLICE: usize = 1 << 22;

impl Gpu {
    pub fn upload_points(&self, points: &[G1Affine]) -> Result<DevicePoints, GpuError> {
        self.upload_points_of::<G1>(points)
    }

    /// Uploads the affine points of any group (G2: the B query in G2).
    pub fn upload_points_of<C: GpuCurve>(&self, points: &[C::Affine]) -> Result<DevicePoints<C>, GpuError> {
        let what = format!("upload {} points", C::NAME);
        Ok(DevicePoints { buf: self.stream.clone_htod(C::words(points)).ctx(&what)?, len: points.len(), shifted: None, _curve: PhantomData })
    }

    /// The affine words of window block w of the points' table (checks).
    pub(crate) fn shift_table_block<C: GpuCurve>(&self, points: &DevicePoints<C>, w: usize) -> Result<Vec<u32>, GpuError> {
        let t = points.shifted.as_ref().ok_or_else(|| GpuError::input("shift table", "the points have no shift table"))?;
        let aw = C::AFFINE_WORDS;
        if w >= WindowLayout::new(t.c).nwin as usize {
            return Err(GpuError::input("shift table", format!("window {w} outside the table of c = {}", t.c)));
        }
        self.download_words(&t.buf.slice(w * points.len * aw..(w + 1) * points.len * aw), "download shift table")
    }

    /// Device memory in bytes of a table of shifted bases for `n` points of group `C` at
    /// window size c (the scratch of the build not counted: at most 0.8 GB).
    pub fn shift_table_bytes<C: GpuCurve>(n: usize, c: u32) -> usize {
        WindowLayout::new(c).nwin as usize * n * C::AFFINE_WORDS * 4
    }

    /// Builds (or rebuilds, for another c) the table of precomputed shifted bases of
    /// `points` at window size c; returns the device time in ms. An error for a group
    /// without shift kernels, or when nwin * len points cannot be indexed in 31 bits.
    pub fn precompute_shifts<C: GpuCurve>(&self, points: &mut DevicePoints<C>, c: u32) -> Result<f64, GpuError> {
        let Some((dbl, to_affine)) = C::SHIFT else {
            return Err(GpuError::input("shift table", format!("no precomputed bases for {} (G1 only)", C::NAME)));
        };
        check_window_bits(c)?;
        let layout = WindowLayout::new(c);
        let n = points.len;
        if (layout.nwin as u64) * (n as u64) >= 1 << 31 {
            return Err(GpuError::input("shift table", format!("a table of {} windows of {n} points cannot be indexed in 31 bits", layout.nwin)));
        }
        points.shifted = None; // free the old table first
        let aw = C::AFFINE_WORDS;
        let t0 = self.timer()?;
        // SAFETY: every window block is written below (block 0 by the copy, the others by
        // the conversion kernel, every point of every slice) before anything reads it.
        let mut table = unsafe { self.stream.alloc::<u32>(layout.nwin as usize * n * aw) }.ctx("alloc shift table")?;
        if n > 0 {
            self.stream.memcpy_dtod(&points.buf.slice(0..n * aw), &mut table.slice_mut(0..n * aw)).ctx("copy window 0")?;
            let slice = n.min(SHIFT_SLICE);
            // SAFETY: the doubling kernel writes tmp[0..len) before the conversion reads it.
            let mut tmp = unsafe { self.stream.alloc::<u32>(slice * C::XYZZ_WORDS) }.ctx("alloc shift scratch")?;
            for w in 1..layout.nwin as usize {
                let width = layout.width(w as u32 - 1);
                for lo in (0..n).step_by(slice) {
                    let len = slice.min(n - lo);
                    let len32 = len as u32;
                    {
                        let src = table.slice(((w - 1) * n + lo) * aw..((w - 1) * n + lo + len) * aw);
                        launch!(self, dbl, cfg_1d(len as u64, 128), &src, &len32, &width, &mut tmp);
                    }
                    let mut dst = table.slice_mut((w * n + lo) * aw..(w * n + lo + len) * aw);
                    let chunk = SHIFT_INV_CHUNK;
                    launch!(self, to_affine, cfg_1d(len32.div_ceil(chunk) as u64, 128), &tmp, &len32, &chunk, &mut dst);
                }
            }
        }
        let t1 = self.timer()?;
        let ms = t0.ms_to(&t1)?;
        points.shifted = Some(ShiftTable { buf: table, c });
        Ok(ms)
    }

    pub fn upload_scalar_words(&self, scalars: &[Scalar]) -> Result<CudaSlice<u32>, GpuError> {
        self.stream.clone_htod(scalar_words(scalars)).ctx("upload scalars")
    }

    fn download_points<C: GpuCurve>(&self, buf: &CudaSlice<u32>, count: usize) -> Result<Vec<C::Proj>, GpuError> {
        let words = self.download_words(&buf.slice(0..count * C::XYZZ_WORDS), "download points")?;
        words
            .chunks_exact(C::XYZZ_WORDS)
            .map(|w| C::from_xyzz(w).ok_or(GpuError::OffCurve { group: C::NAME }))
            .collect()
    }

    /// `sum_i scalars[i] * points[i]` for the first `n` points of `points` (device-resident)
    /// and `scalars` (Montgomery words on the device), with the engine's G1 config `cfg`.
    pub fn msm_device(&self, points: &DevicePoints, scalars: &CudaSlice<u32>, n: usize, cfg: &MsmConfig) -> Result<(G1Projective, MsmTimes), GpuError> {
        self.msm_device_ex(points, scalars, n, None, true, cfg)
    }

    /// General form: `idx` (device) maps term i to point `idx[i]` (else i); `montgomery` says
    /// whether the scalar words are Montgomery (blstrs memory) or canonical integers.
    /// Any group; `cfg` is the group's engine config ([`MsmDefaults::of`]), run over the
    /// points' table when they have one.
    pub fn msm_device_ex<C: GpuCurve>(
        &self,
        points: &DevicePoints<C>,
        scalars: &CudaSlice<u32>,
        n: usize,
        idx: Option<&CudaSlice<u32>>,
        montgomery: bool,
        cfg: &MsmConfig,
    ) -> Result<(C::Proj, MsmTimes), GpuError> {
        let mut cfg = *cfg;
        // Points that carry a table were given one to be used, at its window size; points
        // without one run the plain MSM (a `+pre` in `msm_acc` does not build tables:
        // `msm_precomp` does, for the engine's resident queries).
        cfg.pre = points.shifted.is_some();
        if cfg.pre {
            cfg.c = None;
        }
        self.msm_device_cfg(points, scalars, n, idx, montgomery, &cfg)
    }

    /// [`Gpu::msm_device_ex`] with an explicit config (checks and benches of the variants).
    pub fn msm_device_cfg<C: GpuCurve>(
        &self,
        points: &DevicePoints<C>,
        scalars: &CudaSlice<u32>,
        n: usize,
        idx: Option<&CudaSlice<u32>>,
        montgomery: bool,
        cfg: &MsmConfig,
    ) -> Result<(C::Proj, MsmTimes), GpuError> {
        if n == 0 {
            return Ok((C::Proj::identity(), MsmTimes::default()));
        }
        if idx.is_some_and(|i| i.len() < n) || (idx.is_none() && n > points.len) || scalars.len() < n * 8 || n >= (1 << 31) {
            return Err(GpuError::input("MSM", format!("{} MSM of {n} terms over {} points / {} scalars", C::NAME, points.len, scalars.len() / 8)));
        }
        cfg.check()?;
        let acc_kernel = cfg.kernel_for::<C>()?;
        // With a table: its window size, one set of buckets for all windows (key stride 0),
        // entries naming point w * len + i of the table (point stride len).
        let table = match (cfg.pre, &points.shifted) {
            (false, _) => None,
            (true, None) => return Err(GpuError::config(format!("{} MSM config {}", C::NAME, cfg.spec()), "asks for precomputed bases, but the points have no table")),
            (true, Some(t)) => {
                if cfg.c.is_some_and(|c| c != t.c) {
                    return Err(GpuError::config(format!("{} MSM config {}", C::NAME, cfg.spec()), format!("asks for window size {}, but the points' table was built for {}", cfg.c.unwrap_or(0), t.c)));
                }
                Some(t)
            }
        };
        let c = match table {
            Some(t) => t.c,
            None => cfg.window_bits_for::<C>(n),
        };
        let shape = MsmShape::new(n, c, table.is_some(), cfg);
        let (nwin, nb, nbk, sets) = (shape.layout.nwin, shape.nb, shape.nbk, shape.sets);
        let (key_stride, point_stride) = if table.is_some() { (0u32, points.len as u32) } else { (nb, 0u32) };
        let bases = match table {
            Some(t) => &t.buf,
            None => &points.buf,
        };
        let nn = n as u64;
        let n32 = n as u32;
        let t0 = self.timer()?;
        let converted;
        let canon = if montgomery {
            let mut out = self.stream.alloc_zeros::<u32>(n * 8).ctx("alloc scalars")?;
            let mont = scalars.slice(0..n * 8);
            launch!(self, k1::FR_FROM_MONT, cfg_1d(nn, 256), &mont, &mut out, &nn);
            converted = out;
            &converted
        } else {
            scalars
        };
        let null = 0u64;
        let mut offsets = self.stream.alloc_zeros::<u32>(nbk as usize + 1).ctx("alloc offsets")?;
        // SAFETY: the scatter writes entries [0, offsets[nbk]), and nothing reads past it.
        let mut entries = unsafe { self.stream.alloc::<u32>(n * nwin as usize) }.ctx("alloc entries")?;
        let mut counts = self.stream.alloc_zeros::<u32>(nbk as usize).ctx("alloc counts")?;
        launch!(self, k1::MSM_DIGITS_COUNT, cfg_1d(nn, 256), canon, &n32, &c, &key_stride, &mut counts);
        let t_digits = self.timer()?;
        self.scan_offsets(&counts, &mut offsets, nbk)?;
        self.stream.memset_zeros(&mut counts).ctx("clear cursors")?;
        let t_scan = self.timer()?;
        match idx {
            Some(ix) => launch!(self, k1::MSM_DIGITS_SCATTER, cfg_1d(nn, 256), canon, &n32, &c, &key_stride, &point_stride, &offsets, &mut counts, &mut entries, ix),
            None => launch!(self, k1::MSM_DIGITS_SCATTER, cfg_1d(nn, 256), canon, &n32, &c, &key_stride, &point_stride, &offsets, &mut counts, &mut entries, &null),
        }
        drop(counts);
        let t1 = self.timer()?;
        // Empty buckets stay the identity (all-zero words): the balanced kernels skip them.
        let mut buckets = self.stream.alloc_zeros::<u32>(nbk as usize * C::XYZZ_WORDS).ctx("alloc buckets")?;
        let fixup_start = if let Some(chunk) = shape.chunk {
            // One thread per `chunk` entries of the n * nwin the sort can produce at most
            // (threads past the real count return at once).
            let threads = shape.threads(chunk);
            // SAFETY: a carry slot is read by the fixup only after its thread wrote it.
            let mut carry = unsafe { self.stream.alloc::<u32>(threads as usize * C::XYZZ_WORDS) }.ctx("alloc carries")?;
            launch!(self, acc_kernel, cfg_1d(threads, 128), bases, &entries, &offsets, &nbk, &mut buckets, &chunk, &mut carry);
            let tf = self.timer()?;
            launch!(self, C::FIXUP, cfg_1d(nbk as u64, 128), &offsets, &nbk, &chunk, &mut buckets, &carry);
            Some(tf)
        } else {
            launch!(self, acc_kernel, cfg_1d(nbk as u64, 128), bases, &entries, &offsets, &nbk, &mut buckets);
            None
        };
        let t2 = self.timer()?;
        let (seg, nseg) = (shape.seg, shape.nseg);
        let mut partials = self.stream.alloc_zeros::<u32>((sets * nseg) as usize * C::XYZZ_WORDS).ctx("alloc partials")?;
        launch!(self, C::REDUCE, cfg_1d((sets * nseg) as u64, 128), &buckets, &sets, &nb, &seg, &mut partials);
        let windows = self.sum_per_group::<C>(partials, sets, nseg)?;
        let t3 = self.timer()?;
        let sums = self.download_points::<C>(&windows, sets as usize)?;
        let times = MsmTimes {
            sort_ms: t0.ms_to(&t1)?,
            digits_ms: t0.ms_to(&t_digits)?,
            scan_ms: t_digits.ms_to(&t_scan)?,
            scatter_ms: t_scan.ms_to(&t1)?,
            bucket_acc_ms: t1.ms_to(&t2)?,
            fixup_ms: match &fixup_start {
                Some(tf) => tf.ms_to(&t2)?,
                None => 0.0,
            },
            reduce_ms: t2.ms_to(&t3)?,
            total_ms: t0.ms_to(&t3)?,
        };
        if table.is_some() {
            // The shifts are in the table: the one bucket set's sum is the result.
            return Ok((sums.into_iter().next().unwrap_or_else(C::Proj::identity), times));
        }
        // Horner over windows: acc = sum_w 2^(offset of w) W_w, offsets growing by each width.
        let mut acc = C::Proj::identity();
        for (w, sum) in sums.iter().enumerate().rev() {
            for _ in 0..shape.layout.width(w as u32) {
                acc = acc.double();
            }
            acc += sum;
        }
        Ok((acc, times))
    }

    /// Exclusive prefix sum of `len` counts into offsets[0..=len] (offsets[len] = total).
    fn scan_offsets(&self, counts: &CudaSlice<u32>, offsets: &mut CudaSlice<u32>, len: u32) -> Result<(), GpuError> {
        if len <= SINGLE_BLOCK_SCAN_MAX {
            launch!(self, k1::EXCLUSIVE_SCAN, cfg_1d(1024, 1024), counts, &mut *offsets, &len);
        } else {
            // Tiles of 1024 counts: in-tile offsets, then the tile totals scanned, then added.
            let ntiles = len.div_ceil(1024);
            let mut tile_sums = self.stream.alloc_zeros::<u32>(ntiles as usize).ctx("alloc tile sums")?;
            let mut tile_offsets = self.stream.alloc_zeros::<u32>(ntiles as usize + 1).ctx("alloc tile offsets")?;
            launch!(self, k1::SCAN_TILES, cfg_1d(ntiles as u64 * 1024, 1024), counts, &mut *offsets, &len, &mut tile_sums);
            launch!(self, k1::EXCLUSIVE_SCAN, cfg_1d(1024, 1024), &tile_sums, &mut tile_offsets, &ntiles);
            launch!(self, k1::SCAN_ADD_TILES, cfg_1d(len as u64 + 1, 1024), offsets, &len, &tile_offsets, &ntiles);
        }
        Ok(())
    }

    /// Sums `per` consecutive XYZZ points for each of `groups` groups (tree of chunked sums).
    fn sum_per_group<C: GpuCurve>(&self, mut buf: CudaSlice<u32>, groups: u32, mut per: u32) -> Result<CudaSlice<u32>, GpuError> {
        while per > 1 {
            let chunk = per.min(16);
            let count = groups * per;
            let outs = count.div_ceil(chunk);
            let mut out = self.stream.alloc_zeros::<u32>(outs as usize * C::XYZZ_WORDS).ctx("alloc sums")?;
            launch!(self, C::SUM_CHUNKS, cfg_1d(outs as u64, 64), &buf, &count, &chunk, &mut out);
            buf = out;
            per = per.div_ceil(chunk);
        }
        Ok(buf)
    }

    /// G1 MSM with host inputs and config `cfg`: uploads, runs it, returns the point.
    pub fn msm_with(&self, points: &[G1Affine], scalars: &[Scalar], cfg: &MsmConfig) -> Result<G1Projective, GpuError> {
        self.msm_of::<G1>(points, scalars, cfg)
    }

    /// Host-input MSM of any group with an explicit config (a `pre` config builds the table
    /// first, at its c or [`pre_window_bits`]).
    pub fn msm_of<C: GpuCurve>(&self, points: &[C::Affine], scalars: &[Scalar], cfg: &MsmConfig) -> Result<C::Proj, GpuError> {
        if points.len() != scalars.len() {
            return Err(GpuError::input("MSM", format!("{} points but {} scalars", points.len(), scalars.len())));
        }
        let mut p = self.upload_points_of::<C>(points)?;
        if cfg.pre {
            self.precompute_shifts(&mut p, cfg.c.unwrap_or_else(|| pre_window_bits(points.len())))?;
        }
        let s = self.upload_scalar_words(scalars)?;
        Ok(self.msm_device_cfg(&p, &s, points.len(), None, true, cfg)?.0)
    }

    /// Batch addition of the density split: sum of `points[idx[i]]` (device-resident points,
    /// indices on the device), e.g. the bases whose scalar is one. Returns the sum and the
    /// device time in ms.
    pub fn sum_indexed<C: GpuCurve>(&self, points: &DevicePoints<C>, idx: Option<&CudaView<'_, u32>>, count: usize) -> Result<(C::Proj, f64), GpuError> {
        let (kernel, chunk) = C::DEFAULT_SUM;
        self.sum_indexed_with(points, idx, count, kernel, chunk)
    }

    /// [`Gpu::sum_indexed`] with an explicit batch-addition kernel (a short name of
    /// `C::SUM_AFFINE_KERNELS`) and points per thread (checks and benches).
    pub fn sum_indexed_with<C: GpuCurve>(&self, points: &DevicePoints<C>, idx: Option<&CudaView<'_, u32>>, count: usize, kernel: &str, chunk: u32) -> Result<(C::Proj, f64), GpuError> {
        let kernel = C::SUM_AFFINE_KERNELS
            .iter()
            .find(|k| k.0 == kernel)
            .map(|k| k.1)
            .ok_or_else(|| GpuError::config(format!("{} batch-addition kernel", C::NAME), format!("no kernel {kernel:?} (have {})", C::SUM_AFFINE_KERNELS.iter().map(|k| k.0).collect::<Vec<_>>().join(", "))))?;
        if chunk == 0 {
            return Err(GpuError::config("batch addition", "0 points per thread"));
        }
        if count == 0 {
            return Ok((C::Proj::identity(), 0.0));
        }
        let t0 = self.timer()?;
        let count32 = count as u32;
        let outs = count32.div_ceil(chunk);
        let mut out = self.stream.alloc_zeros::<u32>(outs as usize * C::XYZZ_WORDS).ctx("alloc sums")?;
        match idx {
            Some(ix) => launch!(self, kernel, cfg_1d(outs as u64, 64), &points.buf, ix, &count32, &chunk, &mut out),
            None => {
                let null = 0u64;
                launch!(self, kernel, cfg_1d(outs as u64, 64), &points.buf, &null, &count32, &chunk, &mut out)
            }
        }
        let total = self.sum_per_group::<C>(out, 1, outs)?;
        let t1 = self.timer()?;
        let p = self.download_points::<C>(&total, 1)?;
        Ok((p[0], t0.ms_to(&t1)?))
    }

    /// Uploads point indices (u32) to the device.
    pub fn upload_indices(&self, idx: &[u32]) -> Result<CudaSlice<u32>, GpuError> {
        self.stream.clone_htod(idx).ctx("upload indices")
    }

    /// Batch addition with host indices (uploads them first).
    pub fn sum_selected<C: GpuCurve>(&self, points: &DevicePoints<C>, idx: &[u32]) -> Result<C::Proj, GpuError> {
        if let Some(bad) = idx.iter().find(|&&i| i as usize >= points.len) {
            return Err(GpuError::input("batch addition", format!("index {bad} out of {} points", points.len)));
        }
        if idx.is_empty() {
            return Ok(C::Proj::identity());
        }
        let d = self.upload_indices(idx)?;
        Ok(self.sum_indexed(points, Some(&d.as_view()), idx.len())?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g2_uses_c14_from_2_17_to_2_20_points_and_g1_small_windows_below_2_19() {
        let d = MsmConfig::kernel("g2eo");
        for (n, g1, g2) in [(4095, 9, 9), (4096, 10, 13), (1usize << 16, 10, 13), ((1 << 16) + 1, 11, 13), ((1 << 17) - 1, 11, 13), (1 << 17, 11, 14), (1 << 18, 11, 14), ((1 << 19) - 1, 11, 14), (1 << 19, 16, 14), (1 << 20, 16, 14), ((1 << 20) + 1, 16, 16), (1 << 24, 16, 16)] {
            assert_eq!(d.window_bits_for::<G1>(n), g1, "G1 at {n}");
            assert_eq!(d.window_bits_for::<G2>(n), g2, "G2 at {n}");
        }
        // An explicit c wins for both groups.
        let c15 = MsmConfig { c: Some(15), ..MsmConfig::kernel("g2eo") };
        assert_eq!((c15.window_bits_for::<G1>(1 << 18), c15.window_bits_for::<G2>(1 << 18)), (15, 15));
    }

    #[test]
    fn precomputed_tables_take_wide_windows_and_their_memory_follows_the_windows() {
        assert_eq!(pre_window_bits(1 << 26), 20);
        assert_eq!(pre_window_bits(1 << 22), 20);
        assert_eq!(pre_window_bits(1 << 21), 20);
        assert_eq!(pre_window_bits((1 << 21) - 1), 16);
        assert_eq!(pre_window_bits(1 << 20), 16);
        assert_eq!(pre_window_bits(100), 16);
        // 2^24 G1 points at c = 20: 13 windows of 96-byte affine points.
        assert_eq!(Gpu::shift_table_bytes::<G1>(1 << 24, 20), 13 * (1 << 24) * 96);
        assert_eq!(Gpu::shift_table_bytes::<G2>(1000, 16), 16 * 1000 * 192);
        // The shift kernels exist in msm.cu with the names the host launches.
        let src = include_str!("../../cuda/msm.cu");
        let (dbl, to_affine) = G1::SHIFT.unwrap();
        assert!(src.contains(&format!(" {dbl}(")) && src.contains(&format!(" {to_affine}(")));
        assert!(G2::SHIFT.is_none());
    }

    #[test]
    fn msm_scratch_follows_the_entries_and_buckets() {
        let bal = MsmConfig::default();
        // 2^24 terms at c = 16: 16 windows of 2^15 buckets, chunk 256.
        let n = 1usize << 24;
        let entries = n * 16 * 4;
        let nbk = 16 * (1 << 15);
        let carries = (n * 16 / 256) * 192;
        let partials = 16 * ((1 << 15) / 16) * 192;
        assert_eq!(msm_scratch_bytes_for::<G1>(n, 16, false, &bal, false), entries + nbk * 8 + nbk * 192 + carries + partials);
        assert_eq!(msm_scratch_bytes_for::<G1>(n, 16, false, &bal, true), entries + nbk * 8 + nbk * 192 + carries + partials + n * 32);
        // Over a table: one bucket set; G2 buckets twice the size; nothing for no terms.
        assert!(msm_scratch_bytes_for::<G1>(n, 20, true, &bal, false) < msm_scratch_bytes_for::<G1>(n, 20, false, &bal, false));
        assert!(msm_scratch_bytes_for::<G2>(1 << 20, 16, false, &MsmConfig::default_for::<G2>(), false) > msm_scratch_bytes_for::<G1>(1 << 20, 16, false, &bal, false));
        assert_eq!(msm_scratch_bytes_for::<G1>(0, 16, false, &bal, true), 0);
    }

    #[test]
    fn batch_addition_kernels_exist_and_the_defaults_are_among_them() {
        let g1 = include_str!("../../cuda/msm.cu");
        let g2 = include_str!("../../cuda/msm_g2.cu");
        for (_, k) in G1::SUM_AFFINE_KERNELS {
            assert!(g1.contains(&format!(" {k}(")), "{k} not in msm.cu");
        }
        for (_, k) in G2::SUM_AFFINE_KERNELS {
            assert!(g2.contains(&format!(" {k}(")), "{k} not in msm_g2.cu");
        }
        assert!(G1::SUM_AFFINE_KERNELS.iter().any(|k| k.0 == G1::DEFAULT_SUM.0) && G1::DEFAULT_SUM.1 > 0);
        assert!(G2::SUM_AFFINE_KERNELS.iter().any(|k| k.0 == G2::DEFAULT_SUM.0) && G2::DEFAULT_SUM.1 > 0);
    }

    #[test]
    fn balanced_chunks_follow_the_size() {
        assert_eq!(default_chunk(1 << 10), 64);
        assert_eq!(default_chunk(16 << 20), 64);
        assert_eq!(default_chunk(16 << 22), 64);
        assert_eq!(default_chunk((16 << 22) * 2), 128);
        assert_eq!(default_chunk(16 << 24), 256);
        assert_eq!(default_chunk(15 << 26), 256);
    }

    #[test]
    fn window_layouts_tile_255_bits_with_widths_at_most_c() {
        for c in 2..=24 {
            let l = WindowLayout::new(c);
            let widths: Vec<u32> = (0..l.nwin).map(|w| l.width(w)).collect();
            assert_eq!(widths.iter().sum::<u32>(), 255, "c = {c}");
            assert!(widths.iter().all(|&w| w <= c && w >= 1), "c = {c}: {widths:?}");
            assert!(widths.windows(2).all(|p| p[0] <= p[1]), "c = {c}: wider windows on top");
            assert_eq!(l.buckets_per_window(), 1 << (widths.iter().max().unwrap() - 1));
        }
        // c = 16: 15 windows of 16 bits under one of 15, as the old layout's 16 windows.
        assert_eq!(WindowLayout::new(16), WindowLayout { nwin: 16, base: 15, extra: 15 });
        assert_eq!(WindowLayout::new(17).nwin, 15);
        assert_eq!(WindowLayout::new(20).nwin, 13);
    }

    #[test]
    fn the_engine_s_msm_configs_come_from_the_settings() {
        use crate::cuda_settings::CudaSettings;
        let d = MsmDefaults::from_settings(&CudaSettings::default()).unwrap();
        assert_eq!(d, MsmDefaults::default());
        assert_eq!((d.g1.spec(), d.g2.spec()), ("bal".to_string(), "g2bal".to_string()));
        // msm_c and msm_seg over msm_acc's, as PROOFSCOPE_MSM_C and _SEG did.
        let s = CudaSettings { msm_acc: Some("eo:20:8".into()), msm_c: Some(17), msm_g2_acc: Some("g2eo:15".into()), ..Default::default() };
        let d = MsmDefaults::from_settings(&s).unwrap();
        assert_eq!((d.g1.spec(), d.of::<G2>().spec()), ("eo:17:8".to_string(), "g2eo:15".to_string()));
        let s = CudaSettings { msm_seg: Some(4), ..Default::default() };
        assert_eq!(MsmDefaults::from_settings(&s).unwrap().g1.spec(), "bal::4");
        for (s, key) in [
            (CudaSettings { msm_acc: Some("b7".into()), ..Default::default() }, "msm_acc"),
            (CudaSettings { msm_acc: Some("b4:16::64".into()), ..Default::default() }, "msm_acc"),
            (CudaSettings { msm_c: Some(3), ..Default::default() }, "msm_c"),
            (CudaSettings { msm_seg: Some(3), ..Default::default() }, "msm_seg"),
            (CudaSettings { msm_g2_acc: Some("bal".into()), ..Default::default() }, "msm_g2_acc"),
        ] {
            let e = MsmDefaults::from_settings(&s).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            // The engine config refuses them too (EngineConfig::validate).
            assert_eq!(s.validate().unwrap_err().key, key);
        }
    }

    #[test]
    fn variant_specs_parse_and_reject_bad_input() {
        assert_eq!(MsmConfig::parse("bal").unwrap(), MsmConfig::default());
        let c = MsmConfig::parse("eo:17").unwrap();
        assert_eq!((c.acc, c.c, c.seg), ("eo", Some(17), None));
        assert_eq!(c.kernel_for::<G1>().unwrap().as_str(), "msm_bucket_acc_eo");
        assert_eq!(MsmConfig::parse("b4").unwrap().kernel_for::<G1>().unwrap().as_str(), "msm_bucket_acc");
        let src = include_str!("../../cuda/msm.cu");
        for (name, kernel) in ACC_KERNELS {
            assert!(src.contains(&format!(" {kernel}(ACC_ARGS)")) || src.contains(&format!(" {kernel}(ACC_ARGS, ")), "{name}: {kernel} not in msm.cu");
        }
        let c = MsmConfig::parse("f1eo3::4").unwrap();
        assert_eq!((c.c, c.seg), (None, Some(4)));
        assert_eq!(c.spec(), "f1eo3::4");
        assert_eq!(MsmConfig::parse("eo:20:8").unwrap().spec(), "eo:20:8");
        // Removed after the H200 run of 2026-11-30 (slower): b5, b6, f1, f1eo, i2, i2eo.
        let b = MsmConfig::parse("bal:16::128").unwrap();
        assert_eq!((b.acc, b.c, b.seg, b.chunk), ("bal", Some(16), None, Some(128)));
        assert_eq!(b.spec(), "bal:16::128");
        assert_eq!(MsmConfig::parse("bal").unwrap().spec(), "bal");
        assert!(is_balanced(b.kernel_for::<G1>().unwrap().as_str()));
        assert!(!is_balanced(MsmConfig::kernel("f1eo3").kernel_for::<G1>().unwrap().as_str()));
        // +pre: over a table of shifted bases (G1 only), round-trips through spec().
        let p = MsmConfig::parse("bal+pre:20").unwrap();
        assert_eq!((p.acc, p.c, p.pre), ("bal", Some(20), true));
        assert_eq!(p.spec(), "bal+pre:20");
        assert_eq!(MsmConfig::parse(" f1eo3+pre ").unwrap().spec(), "f1eo3+pre");
        assert!(!MsmConfig::parse("bal:20").unwrap().pre);
        for bad in ["bal+fast", "bal+", "+pre", "bal+pre+pre"] {
            assert!(MsmConfig::parse(bad).is_err(), "{bad:?} accepted");
        }
        let e = MsmConfig::parse_for::<G2>("g2bal+pre").unwrap_err().to_string();
        assert!(e.contains("G1 only"), "{e}");
        // A chunk only for the balanced kernels, and within 1..=4096.
        for bad in ["", "b7", "b4:x", "b4:3", "b4:23", "b4:16:3", "b4:16:4:1", "i4eo", "b5", "f1", "f1eo", "i2eo", "bal:16:8:0", "bal:16:8:5000", "bal:16:8:64:1"] {
            assert!(MsmConfig::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
