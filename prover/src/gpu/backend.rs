//! `CudaBackend`: the prover's device part on one GPU, behind the same [`Backend`] trait
//! as the CPU backend and bit-identical to it (same H coefficients, same MSM sums, so the
//! same proof for the same blinding).
//!
//! Per partition: `prep_msm` (CPU density split, under the allocation gate, with the
//! upload of the query points the first time a parameter set is seen: they then stay
//! resident) and every per-partition upload (a/b/c, then the ones and tail data of L, A
//! and B: `h2d` spans, pinned staging on the copy stream, see `Gpu::upload_words`), then
//! under the compute gate the NTTs of H, `msm_h`, and the split MSMs
//! `msm_l`, `msm_a`, `msm_b_g1` and, with `g2_msm = device` (the default), `msm_b_g2`
//! (each with nested `batch_add` and `tail_msm`; the G2 MSM reuses the B query's staged
//! split) — the split MSMs each on a lane of their own beside the NTTs and `msm_h`
//! ([`MsmBatch`]), and a streamed query's MSMs in chunks that fit the free device memory.
//! Which queries stay resident and whether calls run tight is the device plan
//! ([`crate::engine::placement::plan_device`], from the free memory — the VRAM budget's — when
//! the parameters are first uploaded): a query is kept only where one call still fits beside
//! it, and when a full call (a/b/c, the NTT scratch and the MSM uploads together) does not fit
//! in what is left, calls run tight: the MSM uploads wait until the NTTs have freed a/b/c, the
//! split MSMs run one after another, and placement counts the smaller working set, so a second
//! GPU worker's call waits for device memory rather than failing. Every span carries `gpu_ns`, the CUDA-event time of its device work; `h2d`/`d2h`
//! spans the copies. Assembly (and with `g2_msm = cpu` the G2 MSM, as supraseal does) stays
//! on the CPU, overlapped by the engine's finaliser, and every proof is verified (span `verify`, one multi-Miller loop of 4 pairs and a final
//! exponentiation) before it is returned: a wrong GPU result is
//! [`ProveError::Unverified`], which the engine retries on another device, never a
//! silently bad proof.
//!
//! A device allocation or upload failing with CUDA_ERROR_OUT_OF_MEMORY is
//! [`ProveError::DeviceOutOfMemory`], and `prove_start_or_return` hands the assignment
//! back with it so the engine can prove that partition on its CPU fallback.
//!
//! Every knob comes from the [`CudaSettings`] the backend is built with (the engine's
//! `[cuda]` section with its environment overrides applied); [`Backend::meta`] reports them
//! in full, with the overrides, for the run's meta.

use timeline::bytes::human;
use timeline::event::{arg, kind};
use std::sync::{Arc, Mutex, OnceLock};

use blstrs::G1Projective;
use group::Group;
use tracing::{field::Empty, info_span};

use cudarc::driver::CudaSlice;

use super::device::{par_copy, Gpu};
use super::error::{Ctx, GpuError};
use super::msm::{msm_scratch_bytes, pre_window_bits, DevicePoints, GpuCurve, MsmDefaults, G1, G2, PRE_MIN_POINTS};
use super::ntt::{Ntt, NttConfig};
use crate::backend::{Backend, Blinding, DeviceError, Gate, Pending, ProveError, ResidentQueries, StartFailure};
use crate::cuda_settings::{AppliedOverrides, CudaSettings};
pub use crate::cuda_settings::{MsmBatch, ParamsMode, ShiftChoice};
use crate::domain::Domain;
use crate::engine::placement::{choose_ntt, plan_device, DeviceNeed, DevicePlan, Residency, DEVICE_SPARE_BYTES};
use crate::msm::Split;
use crate::params::Parameters;
use crate::prover;
use crate::synthesis::ProvingAssignment;

/// Query points of one parameter set: resident on the device, or streamed (uploaded per
/// partition, just the points each MSM needs, and freed after it) when they did not fit or
/// streaming was asked for ([`ParamsMode`]).
struct ResidentParams {
    key: (String, usize, usize, usize, usize, usize),
    h: Bases,
    l: Bases,
    a: Bases,
    b_g1: Bases,
    /// The B query in G2, when the G2 MSM runs on the device.
    b_g2: Option<Bases<G2>>,
}

/// One query's points on the device, or streamed from the host parameters.
enum Bases<C: GpuCurve = G1> {
    Resident(DevicePoints<C>),
    Streamed,
}

impl<C: GpuCurve> Bases<C> {
    fn resident(&self) -> Option<&DevicePoints<C>> {
        match self {
            Bases::Resident(p) => Some(p),
            Bases::Streamed => None,
        }
    }
}

/// The uploads of one split MSM, staged before the compute gate.
struct StagedSplit {
    /// Device indices of the scalar-one terms (None for a streamed query or none).
    ones: Option<CudaSlice<u32>>,
    /// Device tail indices (None for a streamed query) and tail scalars.
    tail: Option<(Option<CudaSlice<u32>>, CudaSlice<u32>)>,
}

/// One GPU as a proving device.
pub struct CudaBackend {
    gpu: Gpu,
    device: u32,
    resident: Mutex<Option<Arc<ResidentParams>>>,
    /// The G2 MSM on the device (`msm_b_g2`) rather than in the CPU finisher.
    g2_on_device: bool,
    /// Every knob: tables of shifted bases (`msm_precomp`), resident or streamed query points
    /// (`params`), the split MSMs on lanes or serial (`msm_batch`), the streamed MSMs' chunk
    /// (`stream_chunk`), and what `ntt` and `msm` were made from.
    settings: CudaSettings,
    /// The environment overrides `settings` came with (for the run meta).
    env_overrides: AppliedOverrides,
    /// The NTTs of H on the device's stream, with the `ntt_*` choices.
    ntt: Ntt,
    /// The G1 and G2 MSM configs (`msm_acc`, `msm_c`, `msm_seg`, `msm_g2_acc`).
    msm: MsmDefaults,
    /// The lanes (streams of their own on this device) of the L, A, B-in-G1 and B-in-G2
    /// MSMs, opened on first use.
    lanes: OnceLock<Vec<Gpu>>,
    /// Streamed MSMs run in more than one chunk so far.
    chunked: std::sync::atomic::AtomicU64,
    /// The device footprint (bytes: points and scratch) of the largest streamed chunk known
    /// to fit: set when a chunk ran out of device memory and was halved, so that later
    /// streamed MSMs start at a size that worked instead of failing first (run 61: every
    /// partition's H MSM uploaded a 6.9 GiB half before halving to quarters). `u64::MAX`
    /// until a chunk fails.
    stream_cap: std::sync::atomic::AtomicU64,
    /// `memory.vram_budget`: the most device memory this backend may use, bytes, and the
    /// allocation that holds the rest of the device's free memory back ([`CudaBackend::with_vram_budget`]).
    vram_budget: Option<u64>,
    _ballast: Option<CudaSlice<u8>>,
    /// The device plan of the last parameter set seen ([`CudaBackend::device_plan`]).
    plans: Mutex<Option<((String, usize, usize, usize, usize, usize), DevicePlan, DeviceNeed)>>,
}

/// Device memory a streamed MSM's chunk leaves free.
const STREAM_SPARE_BYTES: usize = 1 << 30;
/// Fewest terms per chunk of a streamed MSM (below, the MSM would be all overhead).
const MIN_STREAM_CHUNK: usize = 1 << 16;

/// Device memory the concurrent MSMs must leave free beyond their estimated scratch.
const LANE_SPARE_BYTES: usize = 1 << 30;

impl ShiftChoice {
    /// The window size of a table for n points, or None for no table: `auto` (`on`) for
    /// queries of at least `msm::PRE_MIN_POINTS` points, window size by query size
    /// (`msm::pre_window_bits`); a window size for every query.
    pub fn window_bits(&self, n: usize) -> Option<u32> {
        match self {
            ShiftChoice::Off => None,
            ShiftChoice::Auto => (n >= PRE_MIN_POINTS).then(|| pre_window_bits(n)),
            ShiftChoice::C(c) => Some(*c),
        }
    }
}

/// Device memory a shift table must leave free (scratch of the MSMs, other buffers).
const SHIFT_SPARE_BYTES: usize = 2 << 30;

/// A device error as the engine sees it: out-of-memory (CPU fallback) or other (retry),
/// the [`GpuError`] kept as the source. (No `From<GpuError> for ProveError`: a `?` would
/// skip this classification.)
fn dev_err(e: GpuError) -> ProveError {
    if e.is_out_of_memory() {
        ProveError::DeviceOutOfMemory(DeviceError::backend(e))
    } else {
        ProveError::Device(DeviceError::backend(e))
    }
}

fn ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

impl CudaBackend {
    /// A backend on `gpu` (opened with `settings.sched`) with the knobs of `settings`;
    /// `g2_on_device`: the G2 MSM on the GPU (true) or in the CPU finisher (false). An error
    /// when the settings cannot be used (an MSM spec, a window size).
    pub fn new(gpu: Gpu, device: u32, settings: CudaSettings, g2_on_device: bool) -> Result<Self, GpuError> {
        settings.validate()?;
        let msm = MsmDefaults::from_settings(&settings)?;
        let ntt = Ntt::new(NttConfig::of(&settings));
        Ok(CudaBackend {
            gpu,
            device,
            resident: Mutex::new(None),
            g2_on_device,
            settings,
            env_overrides: Vec::new(),
            ntt,
            msm,
            lanes: OnceLock::new(),
            chunked: Default::default(),
            stream_cap: std::sync::atomic::AtomicU64::new(u64::MAX),
            vram_budget: None,
            _ballast: None,
            plans: Mutex::new(None),
        })
    }

    /// Limit this backend to `budget` bytes of device memory: everything the device has free
    /// beyond the budget is allocated now and held for the backend's life (a ballast), so
    /// every later allocation, the free memory the backend reports and the decisions made
    /// from it (streamed queries, chunked MSMs, lanes, shift tables, placement) are those of
    /// a card with `budget` bytes. A budget at or above the free memory holds nothing back
    /// (said in the log).
    pub fn with_vram_budget(mut self, budget: Option<u64>) -> Result<Self, GpuError> {
        let Some(budget) = budget else { return Ok(self) };
        let (free, total) = self.gpu.mem_info()?;
        let hold = (free as u64).saturating_sub(budget);
        if hold > 0 {
            // SAFETY: never read or written; it only occupies device memory.
            let ballast = unsafe { self.gpu.stream.alloc::<u8>(hold as usize) }.ctx("allocating the VRAM budget's ballast")?;
            self._ballast = Some(ballast);
            tracing::info!("device {}: VRAM budget {}: {} of its {} free ({} total) held back", self.device, human(budget), human(hold), human(free as u64), human(total as u64));
        } else {
            tracing::warn!("device {}: VRAM budget {} is not below its free memory ({}): nothing held back", self.device, human(budget), human(free as u64));
        }
        self.vram_budget = Some(budget);
        Ok(self)
    }

    /// The same backend, recording that its settings came with these environment overrides
    /// ([`CudaSettings::with_env_overrides`]); they are reported in its meta.
    pub fn with_env_overrides(mut self, applied: AppliedOverrides) -> Self {
        self.env_overrides = applied;
        self
    }

    /// The settings this backend runs with.
    pub fn settings(&self) -> &CudaSettings {
        &self.settings
    }

    /// How many streamed MSMs ran in more than one chunk.
    pub fn chunked_msms(&self) -> u64 {
        self.chunked.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the MSM lanes were opened (some partition ran its MSMs concurrently).
    pub fn lanes_opened(&self) -> bool {
        self.lanes.get().is_some()
    }

    /// The four lanes of the split MSMs, when the device scratch of the five MSMs of this
    /// partition (and the points of streamed queries) fits in the free device memory with
    /// [`LANE_SPARE_BYTES`] to spare; else None (they run one after the other).
    fn lanes_if_they_fit(&self, res: &ResidentParams, plan: &prover::MsmPlan, params: &Parameters) -> Result<Option<&[Gpu]>, GpuError> {
        let g = &self.gpu;
        fn need<C: GpuCurve>(d: &MsmDefaults, bases: &Bases<C>, n: usize, montgomery: bool) -> usize {
            let cfg = d.of::<C>();
            match bases {
                Bases::Resident(p) => msm_scratch_bytes::<C>(&cfg, p.shift_c(), n, montgomery),
                // Streamed: the points too, and a plain MSM over them.
                Bases::Streamed => n * C::AFFINE_WORDS * 4 + msm_scratch_bytes::<C>(&cfg, None, n, montgomery),
            }
        }
        let d = &self.msm;
        let mut bytes = need(d, &res.h, params.h.len(), true);
        for (bases, split) in [(&res.l, &plan.l), (&res.a, &plan.a), (&res.b_g1, &plan.b)] {
            bytes += need(d, bases, split.tail.len(), false);
        }
        if let Some(b) = &res.b_g2 {
            bytes += need(d, b, plan.b.tail.len(), false);
        }
        let (free, _) = g.mem_info()?;
        if bytes + LANE_SPARE_BYTES > free {
            return Ok(None);
        }
        if self.lanes.get().is_none() {
            let lanes = (0..4).map(|_| g.lane()).collect::<Result<Vec<_>, _>>()?;
            let _ = self.lanes.set(lanes);
        }
        Ok(self.lanes.get().map(|l| l.as_slice()))
    }

    /// Uploads one query's points for residence: `Streamed` when the mode says so, or (mode
    /// `auto`) when the device plan does not keep it (`fits` false: it would leave too little
    /// room for a call) or the upload runs out of device memory.
    fn upload_query<C: GpuCurve>(&self, points: &[C::Affine], fits: bool, streamed: &mut Vec<&'static str>, name: &'static str) -> Result<Bases<C>, GpuError> {
        if self.settings.params == ParamsMode::Stream || (self.settings.params == ParamsMode::Auto && !fits) {
            streamed.push(name);
            return Ok(Bases::Streamed);
        }
        match self.gpu.upload_points_of::<C>(points) {
            Ok(p) => Ok(Bases::Resident(p)),
            Err(e) if self.settings.params == ParamsMode::Auto && e.is_out_of_memory() => {
                streamed.push(name);
                Ok(Bases::Streamed)
            }
            Err(e) => Err(e),
        }
    }

    /// Uploads the points `host[idx[i]]` (or all of `host` with no index list) for one MSM of a
    /// streamed query, in an `h2d` span (`what` = "NAME points (streamed)") through pinned
    /// staging; the points are gathered on the host straight into the staging buffer.
    fn stream_points<C: GpuCurve>(gpu: &Gpu, what: &str, host: &[C::Affine], idx: Option<&[u32]>) -> Result<DevicePoints<C>, GpuError> {
        let aw = C::AFFINE_WORDS;
        let count = idx.map_or(host.len(), |i| i.len());
        let buf = Self::h2d_upload(gpu, what, count * aw, aw, |off, d| {
            use rayon::prelude::*;
            match idx {
                None => par_copy(d, &C::words(host)[off..off + d.len()]),
                // (Chunks start at whole points: `off` is a multiple of `aw`.)
                Some(ix) => {
                    let ix = &ix[off / aw..(off + d.len()) / aw];
                    d.par_chunks_mut(aw * 1024).zip(ix.par_chunks(1024)).for_each(|(d, ix)| {
                        for (w, &i) in d.chunks_exact_mut(aw).zip(ix) {
                            w.copy_from_slice(C::words(std::slice::from_ref(&host[i as usize])));
                        }
                    })
                }
            }
        })?;
        Ok(DevicePoints::from_words(buf, count))
    }

    /// Terms per chunk of a streamed MSM of n terms on `gpu`: the forced chunk
    /// (`stream_chunk` of [`CudaSettings`]), else as many as the free device memory holds with
    /// their points and the MSM's scratch, [`STREAM_SPARE_BYTES`] to spare (at least
    /// [`MIN_STREAM_CHUNK`]).
    fn stream_chunk<C: GpuCurve>(&self, gpu: &Gpu, n: usize, montgomery: bool) -> Result<usize, GpuError> {
        if let Some(c) = self.settings.stream_chunk {
            return Ok(c.max(1));
        }
        let per_term = self.stream_term_bytes::<C>(n, montgomery);
        // An estimate: a chunk that does not fit after all is halved (`stream_msm`), and the
        // size that then worked caps the later ones (`stream_cap`).
        let (free, _) = gpu.mem_info()?;
        let cap = usize::try_from(self.stream_cap.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(usize::MAX);
        Ok((free.saturating_sub(STREAM_SPARE_BYTES).min(cap) / per_term).max(MIN_STREAM_CHUNK))
    }

    /// Device bytes per term of a streamed MSM of n terms: its point and its share of the
    /// MSM's scratch.
    fn stream_term_bytes<C: GpuCurve>(&self, n: usize, montgomery: bool) -> usize {
        let n = n.max(1);
        C::AFFINE_WORDS * 4 + msm_scratch_bytes::<C>(&self.msm.of::<C>(), None, n, montgomery).div_ceil(n)
    }

    /// The MSM of a streamed query over n terms: `sum scalars[i] · host[idx[i]]` (`host[i]`
    /// without `idx`), or with no scalars the plain sum of those points (the scalar-one terms),
    /// in chunks of at most [`Self::stream_chunk`] terms, so that one MSM whose points do not
    /// fit in device memory still runs: per chunk its points are gathered on the host and
    /// uploaded (an `h2d` span "`what` points (streamed[, chunk k/K])"), its scalars copied out
    /// of `scalars` on the device, its MSM (or sum) run, and both freed. `scalars` is the device
    /// buffer and whether it holds Montgomery words. Returns the sum, the device time of the
    /// MSMs in ms and the number of chunks.
    fn stream_msm<C: GpuCurve>(&self, gpu: &Gpu, what: &str, host: &[C::Affine], idx: Option<&[u32]>, scalars: Option<(&CudaSlice<u32>, bool)>, n: usize) -> Result<(C::Proj, f64, usize), GpuError> {
        if n == 0 {
            return Ok((C::Proj::identity(), 0.0, 0));
        }
        if idx.map_or(host.len(), |i| i.len()) < n || scalars.is_some_and(|(s, _)| s.len() < n * 8) {
            return Err(GpuError::input("streamed MSM", format!("{what}: {n} terms over {} points / indices", idx.map_or(host.len(), |i| i.len()))));
        }
        let mut chunk = self.stream_chunk::<C>(gpu, n, scalars.is_some_and(|(_, m)| m))?.min(n);
        let cfg = self.msm.of::<C>();
        let mut chunks = n.div_ceil(chunk);
        let mut counted = false;
        let (mut acc, mut ms) = (C::Proj::identity(), 0.0);
        let (mut lo, mut k) = (0, 0);
        while lo < n {
            let hi = (lo + chunk).min(n);
            if chunks > 1 && !counted {
                self.chunked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                counted = true;
            }
            let label = if chunks == 1 { format!("{what} points (streamed)") } else { format!("{what} points (streamed, chunk {}/{chunks})", k + 1) };
            let one = || -> Result<(C::Proj, f64), GpuError> {
                let pts = match idx {
                    Some(ix) => Self::stream_points::<C>(gpu, &label, host, Some(&ix[lo..hi]))?,
                    None => Self::stream_points::<C>(gpu, &label, &host[lo..hi], None)?,
                };
                match scalars {
                    None => gpu.sum_indexed(&pts, None, hi - lo),
                    Some((sc, montgomery)) if lo == 0 && hi == n => gpu.msm_device_ex(&pts, sc, n, None, montgomery, &cfg).map(|(p, t)| (p, t.total_ms)),
                    Some((sc, montgomery)) => {
                        // SAFETY: the copy below writes every word before the MSM reads them.
                        let mut part = unsafe { gpu.stream.alloc::<u32>((hi - lo) * 8) }.ctx("alloc a scalar chunk")?;
                        gpu.stream.memcpy_dtod(&sc.slice(lo * 8..hi * 8), &mut part).ctx("copy a scalar chunk")?;
                        gpu.msm_device_ex(&pts, &part, hi - lo, None, montgomery, &cfg).map(|(p, t)| (p, t.total_ms))
                    }
                }
            };
            match one() {
                Ok((p, t)) => {
                    acc += p;
                    ms += t;
                    lo = hi;
                    k += 1;
                }
                // The estimate was short (or memory is held elsewhere): the chunk's buffers
                // are freed; wait for the frees, halve the chunk and do it again.
                Err(e) if e.is_out_of_memory() && chunk > MIN_STREAM_CHUNK => {
                    gpu.synchronize()?;
                    chunk = (chunk / 2).max(MIN_STREAM_CHUNK);
                    chunks = k + (n - lo).div_ceil(chunk);
                    let footprint = (chunk * self.stream_term_bytes::<C>(n, scalars.is_some_and(|(_, m)| m))) as u64;
                    self.stream_cap.fetch_min(footprint, std::sync::atomic::Ordering::Relaxed);
                    tracing::info!("{what}: out of device memory in a streamed chunk; again in chunks of {chunk} terms, and later streamed chunks start at most at {} ({e})", human(footprint));
                }
                Err(e) => return Err(e),
            }
        }
        Ok((acc, ms, chunks))
    }

    /// One per-partition upload of `words` words written by `fill(offset, dst)` chunk by
    /// chunk (offsets multiples of `align`), through pinned staging, in an `h2d` span (`what`,
    /// `bytes`, `pinned`, and the host steps and copy time that
    /// [`super::device::UploadTimes`] records), handed to `gpu`'s stream.
    fn h2d_upload(gpu: &Gpu, what: &str, words: usize, align: usize, fill: impl Fn(usize, &mut [u32]) + Sync) -> Result<CudaSlice<u32>, GpuError> {
        let h = info_span!(kind::H2D, what = what, bytes = (words * 4) as u64, { arg::GPU_NS } = Empty, pinned = Empty, alloc_ns = Empty, staging_ns = Empty, fill_ns = Empty, queue_ns = Empty, wait_ns = Empty, finish_ns = Empty);
        let _e = h.enter();
        let up = gpu.upload_words(words, words, align, fill)?;
        h.record("pinned", up.pinned);
        let (buf, times) = up.finish(gpu)?;
        times.record(&h);
        Ok(buf)
    }

    /// Builds the table of `points` when the choice asks for one and it fits (span
    /// `shift_table`, with the device time in `gpu_ns`); a table that does not fit, by the
    /// free-memory estimate or by an out-of-memory error, is skipped (`skipped` says why).
    fn add_shift_table(&self, query: &'static str, points: &mut DevicePoints, keep_free: usize) -> Result<(), GpuError> {
        let Some(c) = self.settings.msm_precomp.window_bits(points.len) else { return Ok(()) };
        let bytes = Gpu::shift_table_bytes::<G1>(points.len, c);
        let span = info_span!(kind::SHIFT_TABLE, query = query, c = c as u64, points = points.len as u64, bytes = bytes as u64, { arg::GPU_NS } = Empty, skipped = Empty);
        let _e = span.enter();
        let (free, _) = self.gpu.mem_info()?;
        let keep = keep_free.max(SHIFT_SPARE_BYTES);
        if bytes + keep > free {
            span.record("skipped", format!("needs {bytes} bytes and {keep} kept free (room for calls), {free} free").as_str());
            return Ok(());
        }
        match self.gpu.precompute_shifts(points, c) {
            Ok(ms) => {
                span.record(arg::GPU_NS, ns(ms));
                Ok(())
            }
            Err(e) if e.is_out_of_memory() => {
                span.record("skipped", e.to_string().as_str());
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn params_key(params: &Parameters) -> (String, usize, usize, usize, usize, usize) {
        (params.info.circuit_id.clone(), params.h.origin(), params.h.len(), params.l.len(), params.a.len(), params.b_g1.len())
    }

    /// The device plan of `params` on this device now ([`plan_device`] from its free memory:
    /// the budget's when there is one) and one partition's [`DeviceNeed`]; the queries in
    /// upload order h, l, a, b_g1 (and b_g2 with the G2 MSM on the device).
    /// Made once per parameter set and kept ([`CudaBackend::plans`]): placement's working set
    /// (read when the engine starts) and the upload must follow the same plan.
    fn device_plan(&self, params: &Parameters) -> Result<(DevicePlan, DeviceNeed), GpuError> {
        let key = Self::params_key(params);
        let mut cache = self.plans.lock().map_err(|_| GpuError::Poisoned("device plan"))?;
        if let Some((k, plan, need)) = cache.as_ref() {
            if *k == key {
                return Ok((plan.clone(), *need));
            }
        }
        let residency = match self.settings.params {
            ParamsMode::Auto => Residency::Auto,
            ParamsMode::Resident => Residency::All,
            ParamsMode::Stream => Residency::None,
        };
        // What an earlier parameter set freed must be back before the reading.
        self.gpu.synchronize()?;
        let (free, _) = self.gpu.mem_info()?;
        let need = choose_ntt(self.settings.ntt_memory, free as u64, DeviceNeed::of(&params.shape()));
        let plan = plan_device(free as u64, &self.query_bytes(params), &need, residency);
        *cache = Some((key, plan.clone(), need));
        Ok((plan, need))
    }

    /// Device bytes of each query's points in upload order: h, l, a, b_g1 (96 B each), and
    /// b_g2 (192 B each) when the G2 MSM runs on the device.
    fn query_bytes(&self, params: &Parameters) -> Vec<u64> {
        let mut bytes: Vec<u64> = [params.h.len(), params.l.len(), params.a.len(), params.b_g1.len()].iter().map(|&n| n as u64 * 96).collect();
        if self.g2_on_device {
            bytes.push(params.b_g2.len() as u64 * 192);
        }
        bytes
    }

    /// The device copy of `params`' G1 queries and, with the G2 MSM on the device, of the
    /// B query in G2 (uploaded on first use; span `h2d`).
    fn resident(&self, params: &Parameters) -> Result<Arc<ResidentParams>, GpuError> {
        let key = Self::params_key(params);
        let mut slot = self.resident.lock().map_err(|_| GpuError::Poisoned("parameter cache"))?;
        if let Some(r) = slot.as_ref().filter(|r| r.key == key) {
            return Ok(r.clone());
        }
        *slot = None; // free the previous set first
        // A query released from the host (the engine's `memory.params_host`) cannot be
        // uploaded again: refuse rather than upload nothing.
        let released: Vec<&str> = params.released_queries().into_iter().filter(|&q| q != "b_g2" || self.g2_on_device).collect();
        if !released.is_empty() {
            return Err(GpuError::input("parameters", format!("queries {} were released from the host after their upload and are not on this device: they cannot be uploaded again", released.join(", "))));
        }
        if self.g2_on_device && params.b_g2.len() != params.b_g1.len() {
            return Err(GpuError::input("parameters", format!("B query: {} points in G1 but {} in G2", params.b_g1.len(), params.b_g2.len())));
        }
        let (plan, need) = self.device_plan(params)?;
        let fits = |k: usize| plan.resident.get(k).copied().unwrap_or(false);
        let span = info_span!(kind::H2D, what = "params", bytes = self.query_bytes(params).iter().sum::<u64>(), { arg::GPU_NS } = Empty, streamed = Empty, tight = plan.tight);
        let _e = span.enter();
        let t0 = self.gpu.timer()?;
        let mut streamed = Vec::new();
        let mut r = ResidentParams {
            key,
            h: self.upload_query::<G1>(&params.h, fits(0), &mut streamed, "h")?,
            l: self.upload_query::<G1>(&params.l, fits(1), &mut streamed, "l")?,
            a: self.upload_query::<G1>(&params.a, fits(2), &mut streamed, "a")?,
            b_g1: self.upload_query::<G1>(&params.b_g1, fits(3), &mut streamed, "b_g1")?,
            b_g2: if self.g2_on_device { Some(self.upload_query::<G2>(&params.b_g2, fits(4), &mut streamed, "b_g2")?) } else { None },
        };
        let t1 = self.gpu.timer()?;
        span.record(arg::GPU_NS, ns(t0.ms_to(&t1)?));
        if !streamed.is_empty() {
            span.record("streamed", streamed.join(",").as_str());
        }
        // Close the upload's span (its end is its last handle's drop) before the tables,
        // which have spans of their own.
        drop(_e);
        drop(span);
        // Under a VRAM budget or a tight plan a table keeps the calls' room; otherwise the
        // 2 GiB it always kept (a table built before still is).
        let keep = if self.vram_budget.is_some() || plan.tight { (plan.call_bytes + need.twiddles + DEVICE_SPARE_BYTES) as usize } else { 0 };
        for (query, bases) in [("h", &mut r.h), ("l", &mut r.l), ("a", &mut r.a), ("b_g1", &mut r.b_g1)] {
            if let Bases::Resident(points) = bases {
                self.add_shift_table(query, points, keep)?;
            }
        }
        let r = Arc::new(r);
        *slot = Some(r.clone());
        Ok(r)
    }

    /// Upload what one split MSM needs (ones indices, tail indices, tail scalars), each
    /// through pinned staging in an `h2d` span whose `gpu_ns` is the copy's CUDA-event
    /// time. The tail scalars are converted from canonical limbs straight into the
    /// staging buffer (8 little-endian u32 words per scalar), no intermediate Vec.
    fn stage_split(&self, name: &'static str, points: usize, streamed: bool, split: &Split) -> Result<StagedSplit, GpuError> {
        if let Some(bad) = split.ones.iter().chain(&split.tail_idx).find(|&&i| i as usize >= points) {
            return Err(GpuError::input("density split", format!("{name}: point index {bad} out of {points} query points")));
        }
        let upload = |what: &str, words: usize, align: usize, fill: &(dyn Fn(usize, &mut [u32]) + Sync)| Self::h2d_upload(&self.gpu, what, words, align, fill);
        // A streamed query needs no device indices: its MSMs gather their points on the host.
        let ones = if split.ones.is_empty() || streamed {
            None
        } else {
            Some(upload(&format!("{name} ones"), split.ones.len(), 1, &|off, d| par_copy(d, &split.ones[off..off + d.len()]))?)
        };
        let tail = if split.tail.is_empty() {
            None
        } else {
            let idx = if streamed { None } else { Some(upload(&format!("{name} tail indices"), split.tail_idx.len(), 1, &|off, d| par_copy(d, &split.tail_idx[off..off + d.len()]))?) };
            // 8 words a scalar: chunks start at whole scalars.
            let scalars = upload(&format!("{name} tail scalars"), split.tail.len() * 8, 8, &|off, d| {
                use rayon::prelude::*;
                let tail = &split.tail[off / 8..(off + d.len()) / 8];
                d.par_chunks_mut(8 * 4096).zip(tail.par_chunks(4096)).for_each(|(d, t)| {
                    for (w, l) in d.chunks_exact_mut(8).zip(t) {
                        for k in 0..4 {
                            w[2 * k] = l[k] as u32;
                            w[2 * k + 1] = (l[k] >> 32) as u32;
                        }
                    }
                });
            })?;
            Some((idx, scalars))
        };
        Ok(StagedSplit { ones, tail })
    }

    /// batch_add + tail_msm of one split MSM on `gpu` (the backend's device or one of its
    /// lanes) from its staged uploads, spans nested in `name` (any group: the G2 MSM reuses
    /// the B query's staged split). A streamed query (`bases` None) uploads the points of its
    /// scalar-one terms, then those of its tail, gathered from `host`, just before each is used.
    /// Returns the sum and the device time of its batch addition and tail MSM (ms).
    fn split_msm<C: GpuCurve>(&self, gpu: &Gpu, name: &'static str, bases: Option<&DevicePoints<C>>, host: &[C::Affine], split: &Split, staged: &StagedSplit) -> Result<(C::Proj, f64), GpuError> {
        let (ones, ones_ms) = {
            let s = info_span!(kind::BATCH_ADD, query = name, points = split.ones.len() as u64, { arg::GPU_NS } = Empty, { arg::CHUNKS } = Empty);
            let _e = s.enter();
            let (p, ms, chunks) = match (bases, &staged.ones) {
                _ if split.ones.is_empty() => (C::Proj::identity(), 0.0, None),
                (Some(b), Some(idx)) => {
                    let (p, ms) = gpu.sum_indexed(b, Some(&idx.as_view()), split.ones.len())?;
                    (p, ms, None)
                }
                (None, _) => {
                    let (p, ms, chunks) = self.stream_msm::<C>(gpu, &format!("{name} ones"), host, Some(&split.ones), None, split.ones.len())?;
                    (p, ms, Some(chunks))
                }
                (Some(_), None) => return Err(GpuError::input("split MSM", format!("{name}: scalar-one indices were not staged"))),
            };
            if !split.ones.is_empty() {
                record_device_time(&s, ms, chunks);
            }
            (p, ms)
        };
        let (tail, tail_ms) = {
            let s = info_span!(kind::TAIL_MSM, query = name, points = split.tail.len() as u64, { arg::GPU_NS } = Empty, { arg::CHUNKS } = Empty);
            let _e = s.enter();
            let (p, ms, chunks) = match (bases, &staged.tail) {
                (_, None) => (C::Proj::identity(), 0.0, None),
                (Some(b), Some((Some(idx), scalars))) => {
                    let (p, t) = gpu.msm_device_ex(b, scalars, split.tail.len(), Some(idx), false, &self.msm.of::<C>())?;
                    (p, t.total_ms, None)
                }
                (None, Some((_, scalars))) => {
                    let (p, ms, chunks) = self.stream_msm::<C>(gpu, &format!("{name} tail"), host, Some(&split.tail_idx), Some((scalars, false)), split.tail.len())?;
                    (p, ms, Some(chunks))
                }
                (Some(_), Some((None, _))) => return Err(GpuError::input("split MSM", format!("{name}: tail indices were not staged"))),
            };
            if staged.tail.is_some() {
                record_device_time(&s, ms, chunks);
            }
            (p, ms)
        };
        Ok((ones + tail, ones_ms + tail_ms))
    }

    /// The uploads of split MSM `k` (0 L, 1 A, 2 B: the B split serves the G1 and the G2 MSM,
    /// with device indices unless both stream) through [`Self::stage_split`].
    fn stage(&self, res: &ResidentParams, params: &Parameters, plan: &prover::MsmPlan, k: usize) -> Result<StagedSplit, GpuError> {
        match k {
            0 => self.stage_split("msm_l", params.l.len(), res.l.resident().is_none(), &plan.l),
            1 => self.stage_split("msm_a", params.a.len(), res.a.resident().is_none(), &plan.a),
            _ => {
                let b_streamed = res.b_g1.resident().is_none() && res.b_g2.as_ref().is_none_or(|b| b.resident().is_none());
                self.stage_split("msm_b_g1", params.b_g1.len(), b_streamed, &plan.b)
            }
        }
    }

    /// The device part on a borrowed assignment (so a failure can hand it back). Its a/b/c
    /// are freed on the host as soon as they are on the device (taken out of `asg`, freed
    /// off this thread, then the engine's RAM budget gets their share back:
    /// [`Gate::abc_release`]); a failure before that hands the assignment back whole, a
    /// failure after it without them (the engine can then only retry from a copy).
    ///
    /// Under the allocation gate: prep, the resident points, then every per-partition
    /// upload (a/b/c, then the ones/tail data of L, A, B) through pinned staging on the
    /// copy stream; under the compute gate only device compute — except in a tight plan,
    /// where the ones/tail uploads wait under the compute gate until the NTTs have freed a/b/c. With `kernels` locking the
    /// uploads of one worker thus overlap the kernels of another.
    fn device_part(&self, asg: &mut ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        let r = self.device_part_on(asg, params, blinding, gate);
        if r.is_err() {
            // The failed call's buffers are freed in stream order (on its lanes too): let the
            // frees complete, so the next reading of the free memory (placement's) sees them.
            let _ = self.gpu.synchronize();
            for lane in self.lanes.get().into_iter().flatten() {
                let _ = lane.synchronize();
            }
        }
        r
    }

    fn device_part_on(&self, asg: &mut ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        let d = Domain::new(asg.a.len())?;
        if d.n as u64 != params.info.domain_size {
            return Err(ProveError::ParamsMismatch(format!("domain of {} points, the parameters have {}", d.n, params.info.domain_size)));
        }
        let (plan, res, tight, lean, abc, abc_ms, [pre_l, pre_a, pre_b]) = {
            let _alloc = gate.alloc();
            let plan = {
                let asg: &ProvingAssignment = asg;
                crate::on_pool(gate.cpu_pool(), || prover::prep_msm(asg, params))?
            };
            let res = self.resident(params).map_err(dev_err)?;
            let (dplan, need) = self.device_plan(params).map_err(dev_err)?;
            let tight = dplan.tight;
            let (abc, abc_ms, lock) = {
                let span = info_span!(kind::H2D, what = "abc", bytes = ((asg.a.len() + asg.b.len() + asg.c.len()) * 32) as u64, { arg::GPU_NS } = Empty, alloc_ns = Empty, staging_ns = Empty, fill_ns = Empty, queue_ns = Empty, wait_ns = Empty, finish_ns = Empty, lock_ns = Empty, in_place = Empty);
                let _e = span.enter();
                let pinned = [asg.a.pinned(), asg.b.pinned(), asg.c.pinned()];
                let (bufs, times, lock) = self.gpu.upload_abc(&asg.a, &asg.b, &asg.c, d.log_n, self.settings.abc_upload, pinned).map_err(dev_err)?;
                times.record(&span);
                if self.settings.abc_upload == crate::cuda_settings::AbcUpload::Pooled {
                    // How many of a, b, c the copy engine read in place (the rest staged).
                    span.record("in_place", pinned.iter().filter(|&&p| p).count() as u64);
                }
                (bufs, times.gpu_ms, lock)
            };
            // The device has them: unlock the host's copy (registered), free it and give its
            // budget share back, off this worker's path.
            let vectors = (std::mem::take(&mut asg.a), std::mem::take(&mut asg.b), std::mem::take(&mut asg.c));
            let release = gate.abc_release();
            drop_in_background(move || {
                drop(lock);
                drop(vectors);
                release();
            });
            // Tight memory: the MSM uploads wait until the NTTs have freed a/b/c (below).
            let staged = if tight {
                [None, None, None]
            } else {
                [
                    Some(self.stage(&res, params, &plan, 0).map_err(dev_err)?),
                    Some(self.stage(&res, params, &plan, 1).map_err(dev_err)?),
                    Some(self.stage(&res, params, &plan, 2).map_err(dev_err)?),
                ]
            };
            (plan, res, tight, need.lean, abc, abc_ms, staged)
        };
        // The NTT the device plan chose (lean on a device too small for the tables).
        let ntt = self.ntt.with_config(NttConfig { lean, ..self.ntt.config() });
        let public_inputs = asg.public_inputs().to_vec();
        let _compute = gate.compute();
        // NTTs and the H MSM on the device's stream.
        let h_part = || -> Result<G1Projective, ProveError> {
            let (hbuf, h_len) = {
                let span = info_span!(kind::NTT, n = d.n as u64, lean = lean, { arg::GPU_NS } = Empty, h2d_ns = Empty);
                let _e = span.enter();
                let (buf, t) = ntt.h_quotient_uploaded(&self.gpu, abc, d.log_n, abc_ms).map_err(dev_err)?;
                span.record(arg::GPU_NS, ns(t.ntt_ms));
                span.record("h2d_ns", ns(t.h2d_ms));
                (buf, d.n - 1)
            };
            let n = h_len.min(params.h.len());
            let span = info_span!(kind::MSM_H, points = n as u64, { arg::GPU_NS } = Empty, { arg::CHUNKS } = Empty);
            let _e = span.enter();
            let (p, ms, chunks) = match res.h.resident() {
                Some(b) => {
                    let (p, t) = self.gpu.msm_device(b, &hbuf, n, &self.msm.g1).map_err(dev_err)?;
                    (p, t.total_ms, None)
                }
                None => {
                    let (p, ms, chunks) = self.stream_msm::<G1>(&self.gpu, "msm_h", &params.h[..n], None, Some((&hbuf, true)), n).map_err(dev_err)?;
                    (p, ms, Some(chunks))
                }
            };
            record_device_time(&span, ms, chunks);
            Ok(p)
        };
        // One split MSM (G1 or G2) on `gpu`; `lane` recorded when it is one of the lanes.
        fn run<C: GpuCurve>(be: &CudaBackend, gpu: &Gpu, lane: Option<usize>, name: &'static str, bases: &Bases<C>, host: &[C::Affine], split: &Split, pre: &StagedSplit) -> Result<C::Proj, ProveError> {
            let span = prover::split_msm_span(name, split);
            if let Some(l) = lane {
                span.record(arg::LANE, l as u64);
            }
            let _e = span.enter();
            let (p, ms) = be.split_msm(gpu, name, bases.resident(), host, split, pre).map_err(dev_err)?;
            span.record(arg::GPU_NS, ns(ms));
            Ok(p)
        }
        // A split MSM's uploads: staged above, or (tight) now, once the NTTs and the H MSM
        // have freed a/b/c, each freed before the next one's.
        let staged = |pre: Option<StagedSplit>, k: usize| pre.map_or_else(|| self.stage(&res, params, &plan, k).map_err(dev_err), Ok);
        let lanes = match self.settings.msm_batch {
            MsmBatch::On if !tight => self.lanes_if_they_fit(&res, &plan, params).map_err(dev_err)?,
            _ => None,
        };
        let (h, l, a, b_g1, b_g2, staged_b) = match lanes {
            None => {
                let h = h_part()?;
                let staged_l = staged(pre_l, 0)?;
                let l = run(self, &self.gpu, None, "msm_l", &res.l, &params.l, &plan.l, &staged_l)?;
                drop(staged_l);
                let staged_a = staged(pre_a, 1)?;
                let a = run(self, &self.gpu, None, "msm_a", &res.a, &params.a, &plan.a, &staged_a)?;
                drop(staged_a);
                let staged_b = staged(pre_b, 2)?;
                let b_g1 = run(self, &self.gpu, None, "msm_b_g1", &res.b_g1, &params.b_g1, &plan.b, &staged_b)?;
                let b_g2 = match &res.b_g2 {
                    None => None,
                    Some(bases) => Some(run(self, &self.gpu, None, "msm_b_g2", bases, &params.b_g2, &plan.b, &staged_b)?),
                };
                (h, l, a, b_g1, b_g2, staged_b)
            }
            Some(lanes) => {
                // Lanes only when not tight: every upload was staged above.
                let (staged_l, staged_a, staged_b) = (staged(pre_l, 0)?, staged(pre_a, 1)?, staged(pre_b, 2)?);
                // The split MSMs each on a lane of their own, beside the NTTs and the H MSM
                // on the device's stream: each one's small kernels, host steps and tails
                // overlap the others' work. Each thread enters the current span (the
                // partition's identity) under the current dispatch (the timeline layer).
                let dispatch = tracing::dispatcher::get_default(|d| d.clone());
                let parent = tracing::Span::current();
                std::thread::scope(|sc| {
                    let (d, p) = (&dispatch, &parent);
                    let l = spawn_in_span(sc, d, p, || run(self, &lanes[0], Some(1), "msm_l", &res.l, &params.l, &plan.l, &staged_l));
                    let a = spawn_in_span(sc, d, p, || run(self, &lanes[1], Some(2), "msm_a", &res.a, &params.a, &plan.a, &staged_a));
                    let b = spawn_in_span(sc, d, p, || run(self, &lanes[2], Some(3), "msm_b_g1", &res.b_g1, &params.b_g1, &plan.b, &staged_b));
                    let b_g2 = res.b_g2.as_ref().map(|bases| spawn_in_span(sc, d, p, || run(self, &lanes[3], Some(4), "msm_b_g2", bases, &params.b_g2, &plan.b, &staged_b)));
                    let h = h_part();
                    let (l, a, b) = (join_lane(l), join_lane(a), join_lane(b));
                    let b_g2 = b_g2.map(join_lane).transpose()?;
                    Ok::<_, ProveError>((h?, l?, a?, b?, b_g2))
                })
                .map(|(h, l, a, b, b_g2)| (h, l, a, b, b_g2, staged_b))?
            }
        };
        drop(staged_b);
        let crate::prover::MsmPlan { a: plan_a, b: plan_b, l: plan_l } = plan;
        drop_in_background(move || drop((plan_a, plan_l)));
        Ok(Pending { a, b_g1, h, l, b_split: plan_b, b_g2, blinding, public_inputs })
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }
    /// `cuda`: the settings it runs with, every key of `[cuda]` (environment overrides
    /// applied), and `env_overrides`: the `PROOFSCOPE_*` variables that were applied and
    /// their values (an empty object when none).
    fn meta(&self) -> Vec<(&'static str, serde_json::Value)> {
        let overrides: serde_json::Map<String, serde_json::Value> = self.env_overrides.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect();
        vec![("cuda", serde_json::to_value(&self.settings).unwrap_or_default()), ("env_overrides", overrides.into())]
    }
    fn device(&self) -> u32 {
        self.device
    }
    /// The device's total memory, or the VRAM budget when one is set (smaller).
    fn device_memory_bytes(&self) -> Option<u64> {
        self.gpu.mem_info().ok().map(|(_, total)| self.vram_budget.map_or(total as u64, |b| b.min(total as u64)))
    }
    fn vram_budget(&self) -> Option<u64> {
        self.vram_budget
    }
    fn device_free_bytes(&self) -> Option<u64> {
        self.gpu.mem_info().ok().map(|(free, _)| free as u64)
    }
    fn abc_pinner(&self) -> Option<crate::abc_pool::Pinner> {
        (self.settings.abc_upload == crate::cuda_settings::AbcUpload::Pooled).then(|| self.gpu.pinner())
    }
    /// The device's upload staging pool, shared by its workers and lanes: bounded by
    /// [`super::device::STAGING_HOST_BYTES`] (chunked uploads).
    fn host_staging_bytes(&self) -> u64 {
        super::device::STAGING_HOST_BYTES
    }
    /// A call's working set as this device's plan for the parameters counts it
    /// ([`DeviceNeed::full`], or [`DeviceNeed::tight`] when memory is tight).
    fn partition_device_bytes(&self, params: &Parameters) -> Option<u64> {
        // The plan the upload follows (made now if the parameters were not uploaded yet).
        match self.device_plan(params) {
            Ok((plan, _)) => Some(plan.call_bytes),
            Err(_) => Some(DeviceNeed::of(&params.shape()).full()),
        }
    }
    /// The device plan in words: the queries it streams and why, and whether calls run tight.
    fn describe_plan(&self, params: &Parameters) -> Vec<String> {
        let key = Self::params_key(params);
        let held = self.resident.lock().ok().and_then(|s| s.as_ref().filter(|r| r.key == key).cloned());
        let Ok((plan, need)) = self.device_plan(params) else { return vec![format!("device {}: no device plan (its free memory could not be read)", self.device)] };
        // Once uploaded, what is on the device (an upload can also have run out of memory).
        let streamed: Vec<&str> = match &held {
            Some(r) => {
                let b_g2 = r.b_g2.as_ref().is_some_and(|b| b.resident().is_none());
                let s = [("h", r.h.resident().is_none()), ("l", r.l.resident().is_none()), ("a", r.a.resident().is_none()), ("b_g1", r.b_g1.resident().is_none()), ("b_g2", b_g2)];
                s.iter().filter(|(_, st)| *st).map(|(q, _)| *q).collect()
            }
            None => ["h", "l", "a", "b_g1", "b_g2"].iter().zip(plan.resident.iter()).filter(|(_, &r)| !r).map(|(q, _)| *q).collect(),
        };
        let on = match self.vram_budget {
            Some(b) => format!("device {} (VRAM budget {})", self.device, human(b)),
            None => format!("device {}", self.device),
        };
        let mut notes = Vec::new();
        if !streamed.is_empty() {
            let why = match self.settings.params {
                ParamsMode::Stream => "[cuda] params = \"stream\"".to_string(),
                _ => format!("resident, they would leave less than one partition needs ({}: {})", human(need.required()), need.describe_minimum()),
            };
            notes.push(format!("{on}: queries {} are streamed from the host in every partition (their host copy is kept): {why}", streamed.join(", ")));
        }
        if need.lean {
            let why = match self.settings.ntt_memory {
                crate::cuda_settings::NttMemory::Auto => {
                    let tables = DeviceNeed::of(&params.shape());
                    format!("its free memory cannot hold one partition with the twiddle tables and the scratch ({}: {})", human(tables.required()), tables.describe_minimum())
                }
                _ => "[cuda] ntt_memory = \"lean\"".to_string(),
            };
            notes.push(format!("{on}: the NTT runs lean (twiddles from small tables, in place, no scratch; one product more per twiddle): {why}"));
        }
        if plan.tight {
            notes.push(format!(
                "{on}: calls run tight: the {} left beside the resident queries holds one partition ({}) but not a full call ({} with its MSM uploads beside a/b/c, the twiddles and the spare), so the uploads wait for the NTTs to free a/b/c, the split MSMs run one after another (no lanes) and placement counts {} per call",
                human(plan.room),
                human(need.required()),
                human(need.full() + need.twiddles + DEVICE_SPARE_BYTES),
                human(plan.call_bytes)
            ));
        }
        notes
    }
    fn minimum_device_bytes(&self, params: &Parameters) -> Option<(u64, String)> {
        let need = DeviceNeed::of(&params.shape()).least(self.settings.ntt_memory);
        Some((need.required(), need.describe_minimum()))
    }
    fn make_resident(&self, params: &Parameters) -> Result<ResidentQueries, ProveError> {
        let r = self.resident(params).map_err(dev_err)?;
        Ok(ResidentQueries {
            h: r.h.resident().is_some(),
            l: r.l.resident().is_some(),
            a: r.a.resident().is_some(),
            b_g1: r.b_g1.resident().is_some(),
            b_g2: r.b_g2.as_ref().is_some_and(|b| b.resident().is_some()),
        })
    }

    fn prove_start(&self, mut asg: ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        let r = self.device_part(&mut asg, params, blinding, gate);
        drop_in_background(move || drop(asg));
        r
    }
    fn prove_start_or_return(&self, mut asg: ProvingAssignment, params: &Parameters, blinding: Blinding, gate: &dyn Gate) -> Result<Pending, StartFailure> {
        match self.device_part(&mut asg, params, blinding, gate) {
            Ok(p) => {
                drop_in_background(move || drop(asg));
                Ok(p)
            }
            // Without its a/b/c (freed after their upload) the assignment cannot be proven
            // elsewhere: nothing to hand back.
            Err(error) if asg.a.is_empty() => Err(StartFailure { error, assignment: None }),
            Err(error) => Err(StartFailure { error, assignment: Some(Box::new(asg)) }),
        }
    }
    /// CPU finish (b_g2_msm, finalize), then the proof is verified before it is returned.
    fn prove_finish(&self, pending: Pending, params: &Parameters) -> Result<crate::proof::Proof, ProveError> {
        prover::finish_verified(pending, params)
    }
    fn verifies_proofs(&self) -> bool {
        true
    }
}

/// Records an MSM span's device time (`gpu_ns`) and, for a streamed one, its `chunks`.
fn record_device_time(span: &tracing::Span, ms: f64, chunks: Option<usize>) {
    span.record(arg::GPU_NS, ns(ms));
    if let Some(k) = chunks {
        span.record(arg::CHUNKS, k as u64);
    }
}

/// Spawns `f` on a thread of scope `sc` that runs it under `dispatch` inside `parent` (so its
/// spans carry the partition's identity and reach the timeline layer).
fn spawn_in_span<'scope, 'env, T: Send + 'scope>(
    sc: &'scope std::thread::Scope<'scope, 'env>,
    dispatch: &'scope tracing::Dispatch,
    parent: &'scope tracing::Span,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    sc.spawn(move || {
        tracing::dispatcher::with_default(dispatch, || {
            let _g = parent.enter();
            f()
        })
    })
}

/// The result of an MSM lane's thread (a panic there is a device error of the partition).
fn join_lane<T>(h: std::thread::ScopedJoinHandle<'_, Result<T, ProveError>>) -> Result<T, ProveError> {
    h.join().map_err(|p| ProveError::Device(DeviceError::panicked("an MSM lane's thread", p)))?
}

/// Frees a used assignment (or density split) off the GPU worker: a 2^24-constraint
/// partition's a/b/c and witness are ~2 GB, its L and A splits ~0.5 GB; unmapping them
/// took 0.34 s at the end of every prove call on the H200 host (run 11), time in which the
/// worker could not pick up its next partition. `free` drops what it owns (and may then
/// give the RAM budget its share back). When no thread can be started, it runs right here.
fn drop_in_background(free: impl FnOnce() + Send + 'static) {
    let slot = Arc::new(std::sync::Mutex::new(Some(free)));
    let theirs = slot.clone();
    let take = |s: &std::sync::Mutex<Option<_>>| s.lock().unwrap_or_else(|p| p.into_inner()).take();
    let spawned = std::thread::Builder::new().name("proofscope-free".into()).spawn(move || {
        if let Some(f) = take(&theirs) {
            f();
        }
    });
    if spawned.is_err() {
        if let Some(f) = take(&slot) {
            f();
        }
    }
}

/// One backend per CUDA device (the engine's `--backend cuda`), or why there are none
/// (empty when the driver sees no device): each opened with `settings.sched` and running
/// with `settings`, which came with the environment overrides `applied` (for the meta);
/// `g2_on_device`: where the G2 MSM runs (the engine's `g2_msm`).
pub fn backends(settings: &CudaSettings, applied: &AppliedOverrides, g2_on_device: bool, vram_budget: Option<u64>) -> Result<Vec<Arc<dyn Backend>>, GpuError> {
    settings.validate()?;
    let n = Gpu::device_count()?;
    (0..n)
        .map(|d| {
            let gpu = Gpu::open(d, settings.sched)?;
            let backend = CudaBackend::new(gpu, d as u32, settings.clone(), g2_on_device)?.with_env_overrides(applied.clone()).with_vram_budget(vram_budget)?;
            Ok(Arc::new(backend) as Arc<dyn Backend>)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use cudarc::driver::{sys::CUresult, DriverError};

    use super::*;

    #[test]
    fn shift_tables_follow_the_query_size_or_the_window_size_asked_for() {
        assert_eq!(ShiftChoice::Off.window_bits(1 << 24), None);
        assert_eq!(ShiftChoice::Auto.window_bits(1 << 24), Some(20));
        assert_eq!(ShiftChoice::Auto.window_bits(1 << 20), Some(16));
        assert_eq!(ShiftChoice::Auto.window_bits((1 << 19) - 1), None);
        assert_eq!(ShiftChoice::C(17).window_bits(10), Some(17));
    }

    #[test]
    fn out_of_memory_is_told_apart_from_other_device_errors() {
        // (Only the classification: formatting a DriverError needs libcuda.)
        let oom = GpuError::Driver { op: "alloc H buffer".into(), source: DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY) };
        assert!(oom.is_out_of_memory());
        let launch = GpuError::Driver { op: "launching msm".into(), source: DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED) };
        assert!(!launch.is_out_of_memory());
        assert!(!GpuError::input("upload", "out of memory").is_out_of_memory());
        assert!(matches!(dev_err(GpuError::input("split MSM", "bad index")), ProveError::Device(_)));
        // The engine's classification, with the GpuError kept as the source.
        let e = dev_err(oom);
        assert!(matches!(&e, ProveError::DeviceOutOfMemory(_)), "{e:?}");
        let ProveError::DeviceOutOfMemory(inner) = e else { unreachable!() };
        assert!(inner.downcast_ref::<GpuError>().is_some_and(|g| g.is_out_of_memory()));
    }
}
