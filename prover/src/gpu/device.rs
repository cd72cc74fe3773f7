//! The device handle: opening a GPU (driver presence check, scheduling flag, context,
//! streams, the embedded kernel modules) and the upload path of per-partition data
//! ([`Gpu::upload_words`]): page-locked staging buffers reused across partitions and a copy
//! stream of its own, because pageable `clone_htod` on the compute stream ran at ~0.6 GB/s
//! and queued behind other workers' kernels. A [`Gpu`] holds no knobs of the kernel
//! families: their launchers (ntt, msm) take their configuration as values.

use timeline::event::{arg, kind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, PinnedHostSlice};
use cudarc::nvrtc::Ptx;

use super::error::{Ctx, GpuError};
use super::kernels::{KernelName, MODULES, NVCC_VERSION};
use crate::cuda_settings::CudaSched;

/// Whether this binary carries compiled kernels, and the nvcc that built them.
pub fn kernels_built() -> Option<&'static str> {
    (!MODULES.is_empty()).then_some(NVCC_VERSION)
}

/// One GPU: its context, one compute stream, and every kernel function by name.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    funcs: HashMap<KernelName, CudaFunction>,
    pub name: String,
    pub ordinal: usize,
    pub compute_capability: (i32, i32),
    pub sm_count: i32,
    /// Whether the sm_90 cubins were loaded (else the PTX was JIT-compiled by the driver).
    pub native_cubin: bool,
    /// How host threads wait for this device: what [`Gpu::open`] applied.
    sched: CudaSched,
    /// Pinned staging buffers and the copy stream of [`Gpu::upload_words`] (shared by the
    /// lanes of [`Gpu::lane`]).
    staging: Arc<Staging>,
}

/// Reusable page-locked host buffers (grown on demand, kept for the next partition) and
/// the copy stream uploads run on.
struct Staging {
    copy: Arc<CudaStream>,
    pool: Mutex<Vec<StagingBuf>>,
    /// Buffers allocated and not freed: in the pool or out with an upload (at most
    /// [`STAGING_BUFFERS`]: raised under the pool's lock before an allocation, lowered when a
    /// buffer is dropped).
    live: Arc<std::sync::atomic::AtomicUsize>,
    /// The threads that fill the staging buffers ([`FILL_THREADS`], built on first use; `None`
    /// if they could not be started: the caller's pool fills, and a warning says so once).
    fill: std::sync::OnceLock<Option<rayon::ThreadPool>>,
    /// The device's ordinal, for the fill threads' names (`fill-<ordinal>-<i>`).
    ordinal: usize,
}

/// Threads of a device's staging fill, shared by its GPU workers and lanes (a fill must not
/// block: it is a parallel copy or conversion into page-locked memory). On the prover's
/// shared rayon pool each 64 MiB chunk's fill was a new job and queued behind the syntheses'
/// work (run 99 at 2^27, pw 12: the a/b/c fill 1.19 s a partition; run 75, one job per whole
/// vector, which keeps the pool once started: 0.32 s). On these threads, which the OS schedules
/// beside the pool's: 0.95 s (run 102) — better, still ~3× run 75
/// (docs/known-problems.md names the next step).
const FILL_THREADS: usize = 8;

impl Staging {
    /// Run `f` (a chunk's fill) on the fill threads (the tracing context carried, as
    /// [`crate::on_pool`] does), or here if they could not be started. Called from the GPU
    /// workers' and lanes' own threads; from inside another rayon pool the waiting thread
    /// would run that pool's jobs meanwhile (a delay for the upload, not a deadlock).
    fn fill_on(&self, f: impl FnOnce() + Send) {
        crate::on_pool(self.fill_pool(), f)
    }

    /// The fill threads, started on first use (`None` if they could not be).
    fn fill_pool(&self) -> Option<&rayon::ThreadPool> {
        let ordinal = self.ordinal;
        self.fill
            .get_or_init(|| match rayon::ThreadPoolBuilder::new().num_threads(FILL_THREADS).thread_name(move |i| format!("fill-{ordinal}-{i}")).build() {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::warn!("device {ordinal}: the upload fill threads could not be started ({e}); the chunks are filled on the caller's pool");
                    None
                }
            })
            .as_ref()
    }
}

/// How an upload's staging chunks are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FillMode {
    /// Each chunk by all the fill threads at once (a parallel copy per chunk, then its copy
    /// queued): one barrier per chunk, where a thread the OS preempted holds up the chunk.
    Parallel,
    /// Each chunk by one fill thread, up to [`PIPELINE_DEPTH`] chunks at once, each chunk's
    /// copy queued (in order) as soon as its fill ends: a preempted thread delays its own chunk.
    /// Measured, not the engine's ([`FILL_MODE`]).
    Pipelined,
    /// No staging and no fill: the source's own pages locked in place for the copy
    /// ([`Gpu::upload_registered`]; the engine's `cuda.abc_upload = "registered"`). The chunk
    /// size does not apply.
    Registered,
}

/// The engine's fill mode. `gpu upload` on the H200 (run 106, 4 GiB in 64 MiB chunks): parallel
/// 138 ms wall alone and 391 beside 12 threads streaming host memory, pipelined 150 and 440 —
/// the fill is bound by the host's memory bandwidth (the 12 threads took ~65–73 GB/s of it), and
/// the pipeline's shorter wait for fills (308 against 385 ms) does not shorten the upload.
pub(crate) const FILL_MODE: FillMode = FillMode::Parallel;

/// Chunks filled at once by [`FillMode::Pipelined`] (within the [`STAGING_BUFFERS`] a device
/// keeps: the copies of the last ones run meanwhile).
pub(crate) const PIPELINE_DEPTH: usize = 4;

/// Most staging buffers kept per GPU (a, b, c in flight at once, plus slack).
const STAGING_BUFFERS: usize = 6;

/// The most words an upload stages at a time (64 MiB): a larger upload goes through the pool
/// chunk by chunk, the host filling the next chunk while the copy engine takes the last. Each
/// buffer is at most this large, so the pinned memory of a device's uploads stays under
/// [`STAGING_HOST_BYTES`] whatever the partition's size — a whole-upload buffer per vector
/// held 12 GiB of page-locked memory per call at 2^27 (three 4 GiB a/b/c buffers, rounded to a
/// power of two), outside the RAM budget (runs 75–78: RSS up to ~11 GiB above the reservations).
pub(crate) const STAGING_CHUNK_WORDS: usize = 1 << 24;

/// The page-locked host memory a device's upload staging holds at most, bytes (the engine
/// reserves it from the RAM budget).
pub const STAGING_HOST_BYTES: u64 = (STAGING_BUFFERS * STAGING_CHUNK_WORDS * 4) as u64;

/// The chunks `(offset, len)` of an upload of `len` words staged at most `max` words at a
/// time, every offset a multiple of `align` (a point's or a scalar's words are never split).
pub(crate) fn staging_chunks(len: usize, align: usize, max: usize) -> impl Iterator<Item = (usize, usize)> {
    let align = align.max(1);
    let step = (max / align).max(1) * align;
    (0..len).step_by(step).map(move |off| (off, step.min(len - off)))
}

/// A chunk's host words on their way up: a pinned staging buffer, or pageable memory when
/// none could be had.
enum Host {
    Pinned(StagingBuf),
    Pageable(Vec<u32>),
}

impl Host {
    /// Its first `n` words, to fill.
    fn words(&mut self, n: usize) -> Result<&mut [u32], GpuError> {
        Ok(match self {
            Host::Pinned(b) => &mut b.host.as_mut_slice().ctx("staging buffer")?[..n],
            Host::Pageable(v) => &mut v[..n],
        })
    }
}

struct StagingBuf {
    host: PinnedHostSlice<u32>,
    /// Recorded after the last copy out of `host`: it must complete before `host` is
    /// written again or freed.
    busy: Option<CudaEvent>,
    /// The staging's count of live buffers, lowered when this one is freed.
    live: Arc<std::sync::atomic::AtomicUsize>,
}

impl StagingBuf {
    fn idle(&self) -> bool {
        self.busy.as_ref().is_none_or(|e| e.is_complete())
    }
    fn wait(&mut self) -> Result<(), GpuError> {
        match self.busy.take() {
            Some(e) => e.synchronize().ctx("waiting for a staging buffer's copy"),
            None => Ok(()),
        }
    }
}

impl Drop for StagingBuf {
    fn drop(&mut self) {
        let _ = self.wait();
        self.live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Bytes a registered upload page-locks at a time. Locking a range holds the driver (other
/// threads' calls on the device wait meanwhile): at 2^27, 4 GiB at a time took ~0.46 s a
/// partition and the other GPU worker's staged uploads, queued behind it, went from 0.35 to
/// ~2.2 s (run 140). A piece of 256 MiB is locked in ~10 ms beside the syntheses.
const REGISTER_PIECE_BYTES: usize = 256 << 20;

/// Pieces `(offset, len)` of the `bytes` at address `base`, each at most about `piece` bytes,
/// split at 2 MiB-aligned addresses so that no two pieces share a page (huge or not): each
/// can be locked on its own.
pub(crate) fn lock_pieces(base: usize, bytes: usize, piece: usize) -> Vec<(usize, usize)> {
    const ALIGN: usize = 2 << 20;
    let piece = piece.max(ALIGN) / ALIGN * ALIGN;
    let mut out = Vec::new();
    let (mut off, end) = (0usize, bytes);
    while off < end {
        // The next boundary: a multiple of `piece` in address space past this piece's start.
        let addr = base + off;
        let next = (addr / piece + 1) * piece;
        let len = (next - addr).min(end - off);
        out.push((off, len));
        off += len;
    }
    out
}

/// Host ranges page-locked in place by [`Gpu::upload_registered`]: unlocked when dropped,
/// after the copy stream has finished every copy queued so far (a copy must never read
/// memory that is no longer locked). Unlocking costs time (~70 ms for 4 GiB on the H200,
/// `gpu upload`): the engine drops it on the thread that frees a, b and c, off the GPU
/// worker's path. Drop it before the locked memory is freed: the driver's record of a
/// range whose memory is gone can no longer be found by its address.
pub struct HostLock {
    copy: Arc<CudaStream>,
    ptrs: Vec<*mut std::ffi::c_void>,
}

// SAFETY: the pointers are only handed back to the driver (cuMemHostUnregister), which takes
// them from any thread once the context is bound there (`Drop` binds it); they are never
// dereferenced.
unsafe impl Send for HostLock {}
// SAFETY: no method reads or writes through the pointers; shared references only let the
// lock be kept (the pooled a/b/c keep theirs beside the vectors, `crate::abc_pool`).
unsafe impl Sync for HostLock {}

impl HostLock {
    fn new(copy: &Arc<CudaStream>) -> HostLock {
        HostLock { copy: copy.clone(), ptrs: Vec::new() }
    }

    /// Page-locks the `len` bytes at `ptr` (the context bound on this thread), kept for the
    /// unlock; false when the driver refused.
    ///
    /// # Safety
    /// `ptr .. ptr + len` lies inside a live allocation that stays allocated until this lock
    /// is dropped.
    unsafe fn lock(&mut self, ptr: *mut std::ffi::c_void, len: usize) -> bool {
        // SAFETY: the caller's contract.
        unsafe { self.lock_with(ptr, len, 0) }
    }

    /// [`HostLock::lock`] with the driver's registration flags (`CU_MEMHOSTREGISTER_*`).
    ///
    /// # Safety
    /// As [`HostLock::lock`].
    unsafe fn lock_with(&mut self, ptr: *mut std::ffi::c_void, len: usize, flags: u32) -> bool {
        // SAFETY: the caller's contract.
        let r = unsafe { cudarc::driver::sys::cuMemHostRegister_v2(ptr, len, flags) };
        if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
            tracing::debug!("cuMemHostRegister of {len} bytes failed ({r:?})");
            return false;
        }
        self.ptrs.push(ptr);
        true
    }
}

impl Drop for HostLock {
    fn drop(&mut self) {
        if self.ptrs.is_empty() {
            return;
        }
        let _ = self.copy.synchronize();
        let _ = self.copy.context().bind_to_thread();
        for &p in &self.ptrs {
            // SAFETY: `p` was registered by this guard's owner and is still allocated (the
            // borrow of its source outlives the guard); no copy reads it any more.
            let r = unsafe { cudarc::driver::sys::cuMemHostUnregister(p) };
            if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
                tracing::warn!("cuMemHostUnregister failed ({r:?}): the pages stay locked until the process ends");
            }
        }
    }
}

/// `CU_MEMHOSTREGISTER_PORTABLE`: locked for the copies of every context (device).
const PORTABLE: u32 = 0x01;

/// Page-locks the `bytes` bytes at `ptr` piece by piece ([`lock_pieces`]) with the driver's
/// registration `flags`, for copies on `copy` (which the lock's drop waits for): what
/// [`Gpu::lock_host`] and [`Gpu::pin_portable`] both do. `None` when a piece could not be
/// locked (what was locked is unlocked).
///
/// # Safety
/// As [`Gpu::pin_portable`].
unsafe fn lock_in_pieces(ctx: &Arc<CudaContext>, copy: &Arc<CudaStream>, ptr: *mut std::ffi::c_void, bytes: usize, flags: u32) -> Result<Option<HostLock>, GpuError> {
    ctx.bind_to_thread().ctx("binding the context (cuMemHostRegister)")?;
    let mut locked = HostLock::new(copy);
    let base = ptr as usize;
    for (off, len) in lock_pieces(base, bytes, REGISTER_PIECE_BYTES) {
        // SAFETY: the piece lies inside the caller's allocation (the contract above).
        if !unsafe { locked.lock_with((base + off) as *mut std::ffi::c_void, len, flags) } {
            return Ok(None);
        }
    }
    Ok(Some(locked))
}

/// An upload issued on the copy stream; [`Upload::finish`] hands the buffer to the
/// compute stream with the copy's device time.
pub(crate) struct Upload {
    buf: CudaSlice<u32>,
    /// Each chunk's copy, timed (start, end) on the copy stream; the last end completes it.
    copies: Vec<(CudaEvent, CudaEvent)>,
    /// Whether every chunk went through pinned staging (else some were copied from pageable
    /// memory: pinned memory could not be allocated, or every staging buffer was out with
    /// other uploads).
    pub pinned: bool,
    /// Host wall time of the steps before the copy was queued (ms).
    alloc_ms: f64,
    staging_ms: f64,
    fill_ms: f64,
    /// Host wall time of queueing the copy (events, the async copy, the staging pool).
    queue_ms: f64,
    /// Host wall time of page-locking the source in place ([`Gpu::upload_registered`]).
    lock_ms: f64,
}

/// Where an upload's wall time went (ms): the device buffer's allocation, getting a pinned
/// staging buffer (pool, wait for its previous copy, or a new page-locked allocation),
/// filling it on the host, waiting for the copy to complete, and the copy's own CUDA-event
/// time. The `h2d` spans carry them (`alloc_ns`, `staging_ns`, `fill_ns`, `wait_ns`,
/// `gpu_ns`), so that a long upload says which step was long.
#[derive(Clone, Copy, Debug, Default)]
pub struct UploadTimes {
    pub alloc_ms: f64,
    pub staging_ms: f64,
    pub fill_ms: f64,
    /// Queueing the copy: event records, the async copy call, the staging pool's lock.
    pub queue_ms: f64,
    pub wait_ms: f64,
    /// After the wait: timing, the compute stream's wait, handing the buffer over.
    pub finish_ms: f64,
    pub gpu_ms: f64,
    /// A registered upload's page-locking of its source in place (`cuMemHostRegister`;
    /// 0 for a staged one).
    pub lock_ms: f64,
}

impl UploadTimes {
    /// Field-wise sum (uploads in flight together).
    pub fn add(&mut self, o: &UploadTimes) {
        self.alloc_ms += o.alloc_ms;
        self.staging_ms += o.staging_ms;
        self.fill_ms += o.fill_ms;
        self.queue_ms += o.queue_ms;
        self.wait_ms += o.wait_ms;
        self.finish_ms += o.finish_ms;
        self.gpu_ms += o.gpu_ms;
        self.lock_ms += o.lock_ms;
    }

    /// Records the times on the current span's fields of the same names (ns).
    pub fn record(&self, span: &tracing::Span) {
        let ns = |ms: f64| (ms * 1e6).round() as u64;
        span.record("alloc_ns", ns(self.alloc_ms));
        span.record("staging_ns", ns(self.staging_ms));
        span.record("fill_ns", ns(self.fill_ms));
        span.record("queue_ns", ns(self.queue_ms));
        span.record("wait_ns", ns(self.wait_ms));
        span.record("finish_ns", ns(self.finish_ms));
        if self.lock_ms > 0.0 {
            span.record("lock_ns", ns(self.lock_ms));
        }
        span.record(arg::GPU_NS, ns(self.gpu_ms));
    }
}

impl Upload {
    /// Wait for the copy, make the compute stream wait for it too, and move the buffer to
    /// the compute stream (where it is used and freed). Returns the copy's CUDA-event time
    /// in ms: the copy itself, nothing else on that stream.
    pub(crate) fn finish(self, gpu: &Gpu) -> Result<(CudaSlice<u32>, UploadTimes), GpuError> {
        let t = std::time::Instant::now();
        let Some((_, end)) = self.copies.last() else {
            return Err(GpuError::input("upload", "no copy was queued"));
        };
        end.synchronize().ctx("waiting for an upload")?;
        let wait_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = std::time::Instant::now();
        // The copies' own time: the engine idles between chunks while the host fills.
        let mut ms = 0.0;
        for (start, end) in &self.copies {
            ms += start.elapsed_ms(end).ctx("timing an upload")? as f64;
        }
        gpu.stream.wait(end).ctx("cuStreamWaitEvent (upload)")?;
        let len = self.buf.len();
        let ptr = self.buf.leak();
        // SAFETY: `ptr` is a live allocation of `len` u32 (leaked above); the copy and the
        // allocation on the copy stream are complete (event synchronised), so the compute
        // stream may use it and frees it in its own order when the slice drops.
        let buf = unsafe { gpu.stream.upgrade_device_ptr::<u32>(ptr, len) };
        let finish_ms = t.elapsed().as_secs_f64() * 1e3;
        let times = UploadTimes { alloc_ms: self.alloc_ms, staging_ms: self.staging_ms, fill_ms: self.fill_ms, queue_ms: self.queue_ms, wait_ms, finish_ms, gpu_ms: ms, lock_ms: self.lock_ms };
        Ok((buf, times))
    }
}

/// `dst.copy_from_slice(src)` over all cores (into write-combined pinned memory).
pub(crate) fn par_copy(dst: &mut [u32], src: &[u32]) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// The primary context's scheduling flag for `sched`.
fn sched_flag(sched: CudaSched) -> u32 {
    use cudarc::driver::sys::CUctx_flags as F;
    match sched {
        CudaSched::Auto => F::CU_CTX_SCHED_AUTO as u32,
        CudaSched::Spin => F::CU_CTX_SCHED_SPIN as u32,
        CudaSched::Yield => F::CU_CTX_SCHED_YIELD as u32,
        CudaSched::Blocking => F::CU_CTX_SCHED_BLOCKING_SYNC as u32,
    }
}

/// Sets `sched`'s flag on device `ordinal`'s primary context (nothing for `auto`).
fn apply_sched(sched: CudaSched, ordinal: usize) -> Result<(), GpuError> {
    if sched == CudaSched::Auto {
        return Ok(());
    }
    let dev = std::panic::catch_unwind(|| {
        cudarc::driver::result::init()?;
        cudarc::driver::result::device::get(ordinal as i32)
    })
    .map_err(|_| GpuError::NoDriver)?
    .map_err(|e| GpuError::NoDevice { ordinal, reason: e.to_string() })?;
    // SAFETY: a plain driver call on a valid device handle.
    unsafe { cudarc::driver::sys::cuDevicePrimaryCtxSetFlags_v2(dev, sched_flag(sched)) }
        .result()
        .ctx(&format!("cuDevicePrimaryCtxSetFlags({})", sched.name()))
}

impl Gpu {
    /// Number of CUDA devices, or an error saying why there are none.
    pub fn device_count() -> Result<usize, GpuError> {
        if MODULES.is_empty() {
            return Err(GpuError::NoKernels);
        }
        // SAFETY: only tries to dlopen libcuda; no CUDA call is made.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        let n = std::panic::catch_unwind(CudaContext::device_count)
            .map_err(|_| GpuError::NoDriver)?
            .ctx("cuDeviceGetCount")?;
        Ok(n.max(0) as usize)
    }

    /// Opens device `ordinal` with host threads waiting for it as `sched` says
    /// ([`crate::cuda_settings::CudaSettings::sched`]) and loads the kernel modules (cubin on
    /// sm_90, PTX elsewhere).
    pub fn open(ordinal: usize, sched: CudaSched) -> Result<Gpu, GpuError> {
        let count = Self::device_count()?;
        if ordinal >= count {
            return Err(GpuError::NoDevice { ordinal, reason: format!("{count} device(s) present") });
        }
        apply_sched(sched, ordinal)?;
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| GpuError::NoDriver)?
            .map_err(|e| GpuError::NoDevice { ordinal, reason: e.to_string() })?;
        // SAFETY: every buffer of a Gpu is allocated, used and freed on its one stream, so
        // cudarc's cross-stream event tracking (an event record per argument) is not needed.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().ctx("cuStreamCreate")?;
        let copy = ctx.new_stream().ctx("cuStreamCreate (copy stream)")?;
        let name = ctx.name().ctx("cuDeviceGetName")?;
        let compute_capability = ctx.compute_capability().ctx("compute capability")?;
        let sm_count = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .ctx("multiprocessor count")?;
        let native_cubin = compute_capability == (9, 0);
        let mut funcs = HashMap::new();
        for module in MODULES {
            let image = if native_cubin { Ptx::from_binary(module.cubin.to_vec()) } else { Ptx::from_src(module.ptx) };
            let m = ctx.load_module(image).ctx(&format!("loading module {}", module.name))?;
            for &k in module.kernels {
                let func = m.load_function(k.as_str()).ctx(&format!("loading kernel {k}"))?;
                funcs.insert(k, func);
            }
        }
        Ok(Gpu {
            ctx,
            stream,
            funcs,
            name,
            ordinal,
            compute_capability,
            sm_count,
            native_cubin,
            sched,
            staging: Arc::new(Staging { copy, pool: Mutex::new(Vec::new()), live: Arc::default(), fill: std::sync::OnceLock::new(), ordinal }),
        })
    }

    /// Another handle on the same device with a compute stream of its own (same context,
    /// kernels and upload staging), so that independent work — the MSMs of one partition —
    /// runs concurrently with this handle's. Every buffer a lane allocates is used and freed
    /// on its stream; buffers it only reads (resident points, staged uploads) must be
    /// complete before the lane's first launch (their owners synchronise on them).
    pub fn lane(&self) -> Result<Gpu, GpuError> {
        Ok(Gpu {
            ctx: self.ctx.clone(),
            stream: self.ctx.new_stream().ctx("cuStreamCreate (lane)")?,
            funcs: self.funcs.clone(),
            name: self.name.clone(),
            ordinal: self.ordinal,
            compute_capability: self.compute_capability,
            sm_count: self.sm_count,
            native_cubin: self.native_cubin,
            sched: self.sched,
            staging: self.staging.clone(),
        })
    }

    /// Whether the device's upload fill threads run (they start on first use; `false` if
    /// they could not be started, when the chunks are filled on the caller's pool).
    pub fn has_fill_threads(&self) -> bool {
        self.staging.fill_pool().is_some()
    }

    /// How host threads wait for this device (what [`Gpu::open`] was given).
    pub fn cuda_sched(&self) -> CudaSched {
        self.sched
    }

    pub(crate) fn func(&self, name: KernelName) -> Result<&CudaFunction, GpuError> {
        self.funcs.get(&name).ok_or(GpuError::KernelMissing(name))
    }

    /// A staging buffer of at least `len` words: an idle one that fits, else a new one (fewer
    /// than [`STAGING_BUFFERS`] alive, counting those out with other uploads), else a busy one
    /// in the pool that fits (after its copy), else the pool's smallest freed for a bigger one.
    /// `None` when every buffer is out with another upload or page-locked memory cannot be
    /// allocated (the chunk is then copied from pageable memory): the staging never holds
    /// more than [`STAGING_HOST_BYTES`].
    fn take_staging(&self, len: usize) -> Result<Option<StagingBuf>, GpuError> {
        use std::sync::atomic::Ordering::SeqCst;
        let live = &self.staging.live;
        let mut pool = self.staging.pool.lock().map_err(|_| GpuError::Poisoned("staging pool"))?;
        let fits = |b: &StagingBuf| b.host.len() >= len;
        let pick = |pool: &Vec<StagingBuf>, want_idle: bool| {
            pool.iter().enumerate().filter(|(_, b)| fits(b) && (!want_idle || b.idle())).min_by_key(|(_, b)| b.host.len()).map(|(i, _)| i)
        };
        if let Some(i) = pick(&pool, true) {
            return Ok(Some(pool.swap_remove(i)));
        }
        let mut freed = None;
        if live.load(SeqCst) >= STAGING_BUFFERS {
            if let Some(i) = pick(&pool, false) {
                let mut b = pool.swap_remove(i);
                drop(pool);
                b.wait()?;
                return Ok(Some(b));
            }
            // Free the smallest to make room for a bigger one.
            match pool.iter().enumerate().min_by_key(|(_, b)| b.host.len()).map(|(i, _)| i) {
                Some(i) => freed = Some(pool.swap_remove(i)),
                None => return Ok(None),
            }
        }
        // The new buffer's slot, counted under the lock (the freed one's is given back when
        // it drops: for a moment one more is counted, never one less).
        live.fetch_add(1, SeqCst);
        drop(pool);
        // (Dropping a buffer waits for its copy: outside the pool's lock.)
        drop(freed);
        let cap = len.next_power_of_two().max(1 << 16);
        // SAFETY: the memory is written by `upload_words` before any copy reads it.
        match unsafe { self.ctx.alloc_pinned::<u32>(cap) } {
            Ok(host) => Ok(Some(StagingBuf { host, busy: None, live: live.clone() })),
            Err(_) => {
                live.fetch_sub(1, SeqCst);
                Ok(None)
            }
        }
    }

    /// Page-locks `src` in place, piece by piece as [`Gpu::upload_registered`] does, with no
    /// copy: `gpu upload --beside held` measures what locked memory does to the staged
    /// uploads beside it. `None` when a piece could not be locked (what was locked is
    /// unlocked). Drop the lock before `src` is freed.
    pub(crate) fn lock_host(&self, src: &[u32]) -> Result<Option<HostLock>, GpuError> {
        // SAFETY: `src` is a live allocation the caller keeps until it drops the returned lock
        // (documented above).
        unsafe { lock_in_pieces(&self.ctx, &self.staging.copy, src.as_ptr() as *mut std::ffi::c_void, std::mem::size_of_val(src), 0) }
    }

    /// Page-locks the `bytes` bytes at `ptr` for the copies of every device (portable), piece
    /// by piece as [`Gpu::lock_host`]: the pooled a/b/c ([`crate::abc_pool`]), locked once
    /// for their life. `None` when a piece could not be locked (what was locked is unlocked).
    ///
    /// # Safety
    /// `ptr .. ptr + bytes` lies inside a live allocation that stays allocated until the
    /// returned lock is dropped.
    pub(crate) unsafe fn pin_portable(&self, ptr: *mut std::ffi::c_void, bytes: usize) -> Result<Option<HostLock>, GpuError> {
        // SAFETY: the caller's contract.
        unsafe { lock_in_pieces(&self.ctx, &self.staging.copy, ptr, bytes, PORTABLE) }
    }

    /// [`Gpu::pin_portable`] as the engine's a/b/c pool calls it ([`crate::abc_pool::Pinner`]):
    /// `None` when the memory could not be locked (the pool's vectors are then staged).
    pub(crate) fn pinner(&self) -> crate::abc_pool::Pinner {
        let (ctx, copy) = (self.ctx.clone(), self.staging.copy.clone());
        Arc::new(move |ptr, bytes| {
            // SAFETY: the pool locks a vector it owns, and drops the lock before the vector
            // (`abc_pool::Slab`'s field order).
            match unsafe { lock_in_pieces(&ctx, &copy, ptr, bytes, PORTABLE) } {
                Ok(Some(l)) => Some(Box::new(l) as crate::abc_pool::Keep),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!("the a/b/c pool's vectors could not be page-locked ({e}): staged");
                    None
                }
            }
        })
    }

    /// Uploads `src`, already page-locked for this device ([`Gpu::pin_portable`]), into a new
    /// device buffer of `dev_len` words (the rest zero): one copy per locked piece on the copy
    /// stream, no fill and no lock. A copy must not span two registrations (the driver refuses
    /// it, `CUDA_ERROR_INVALID_VALUE`: the 2^22 run of 2026-12-04 20:45Z, where the vectors
    /// that straddled a 256 MiB boundary failed), so the copies follow the pieces the lock
    /// made: [`lock_pieces`] cuts at the same addresses whatever the length. [`Upload::finish`]
    /// waits for them; a caller that fails before finishing it must [`Gpu::wait_copies`] before
    /// the memory is written again.
    pub(crate) fn upload_locked(&self, src: &[u32], dev_len: usize) -> Result<Upload, GpuError> {
        self.ctx.bind_to_thread().ctx("binding the context (pooled copy)")?;
        // Nothing to lock: the only `None` (a piece refused) cannot come.
        self.upload_in_pieces(src, dev_len, None)?.ok_or_else(|| GpuError::input("upload", "an in-place upload without a lock was refused"))
    }

    /// `src` into a new device buffer of `dev_len` words (the rest zero), one copy per piece
    /// of [`lock_pieces`] on the copy stream — with `lock`, each piece page-locked into it
    /// first and its copy queued at once (registered: `None` when a piece cannot be locked);
    /// without, `src` locked already in the same pieces (pooled). The context is bound.
    fn upload_in_pieces(&self, src: &[u32], dev_len: usize, mut lock: Option<&mut HostLock>) -> Result<Option<Upload>, GpuError> {
        let copy = &self.staging.copy;
        let since = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let t0 = std::time::Instant::now();
        let mut buf = self.upload_buf(src.len(), dev_len)?;
        let alloc_ms = since(t0);
        let (mut lock_ms, mut queue_ms) = (0.0, 0.0);
        let start = copy.record_event(timing).ctx("cuEventRecord")?;
        let base = src.as_ptr() as usize;
        for (off, len) in lock_pieces(base, std::mem::size_of_val(src), REGISTER_PIECE_BYTES) {
            let ptr = (base + off) as *mut std::ffi::c_void;
            if let Some(l) = lock.as_deref_mut() {
                let t1 = std::time::Instant::now();
                // SAFETY: `ptr .. ptr + len` lies inside `src`, a live allocation borrowed for
                // this whole call; the caller drops the lock before it frees the source.
                let ok = unsafe { l.lock(ptr, len) };
                lock_ms += since(t1);
                if !ok {
                    return Ok(None);
                }
            }
            let t2 = std::time::Instant::now();
            let (dst, _record) = buf.device_ptr_mut(copy);
            // SAFETY: the piece is page-locked (above, or by the caller) until the copies are
            // waited for, and unwritten meanwhile; `buf` holds at least `src.len()` words.
            let r = unsafe { cudarc::driver::sys::cuMemcpyHtoDAsync_v2(dst + off as u64, ptr as *const std::ffi::c_void, len, copy.cu_stream()) };
            r.result().ctx("cuMemcpyHtoDAsync (in place)")?;
            queue_ms += since(t2);
        }
        let end = copy.record_event(timing).ctx("cuEventRecord")?;
        Ok(Some(Upload { buf, copies: vec![(start, end)], pinned: true, alloc_ms, staging_ms: 0.0, fill_ms: 0.0, queue_ms, lock_ms }))
    }

    /// Waits for every copy queued on the copy stream (an upload abandoned on an error path,
    /// before its source may be written again).
    pub(crate) fn wait_copies(&self) -> Result<(), GpuError> {
        self.staging.copy.synchronize().ctx("waiting for the copy stream")
    }

    /// A new device buffer of `dev_len` words (at least `len`, at least 1) on the copy stream
    /// for an upload of `len` words: zeroed beyond them, unwritten when they fill it.
    fn upload_buf(&self, len: usize, dev_len: usize) -> Result<CudaSlice<u32>, GpuError> {
        let copy = &self.staging.copy;
        let dev_len = dev_len.max(len).max(1);
        if dev_len > len {
            copy.alloc_zeros::<u32>(dev_len)
        } else {
            // SAFETY: every word is written by the upload's copies.
            unsafe { copy.alloc::<u32>(dev_len) }
        }
        .ctx("allocating an upload buffer")
    }

    /// Uploads each of `srcs` into a new device buffer of `dev_len` words (the rest zero)
    /// straight from the source's own pages: each source is page-locked in place
    /// (`cuMemHostRegister`) a piece at a time ([`lock_pieces`]), each piece's copy queued on
    /// the copy stream as soon as it is locked, so that the copy engine reads one piece while
    /// the next is locked; no host fill. One [`Upload`] per source, finished as a staged one
    /// is (`lock_ms` its locking, `fill_ms` 0). `Ok(None)` when a piece could not be locked
    /// (the caller stages instead; what was queued is waited for and unlocked).
    ///
    /// The sources stay locked until the returned [`HostLock`] is dropped, which the caller
    /// must do after the uploads are finished (dropping it then only unlocks) and before it
    /// frees the sources.
    pub(crate) fn upload_registered(&self, srcs: &[&[u32]], dev_len: usize) -> Result<Option<(Vec<Upload>, HostLock)>, GpuError> {
        self.ctx.bind_to_thread().ctx("binding the context (cuMemHostRegister)")?;
        // Dropped on every path out of here before the uploads are finished: it waits for the
        // copy stream first.
        let mut locked = HostLock::new(&self.staging.copy);
        let mut ups = Vec::with_capacity(srcs.len());
        for src in srcs {
            match self.upload_in_pieces(src, dev_len, Some(&mut locked))? {
                Some(u) => ups.push(u),
                None => return Ok(None),
            }
        }
        Ok(Some((ups, locked)))
    }

    /// Upload `len` words written by `fill` into a new device buffer of `dev_len` words
    /// (the rest zero), in chunks of at most [`STAGING_CHUNK_WORDS`] ([`staging_chunks`]):
    /// `fill(offset, dst)` writes words `offset..offset + dst.len()` (offsets multiples of
    /// `align`) straight into a reusable pinned staging buffer (on the device's fill threads,
    /// [`FILL_THREADS`]), and each chunk's copy runs on
    /// the copy stream at full PCIe speed while the next is filled; [`Upload::finish`]
    /// completes it. A chunk falls back to a pageable copy (same stream, same result) when
    /// pinned memory cannot be allocated.
    pub(crate) fn upload_words(&self, len: usize, dev_len: usize, align: usize, fill: impl Fn(usize, &mut [u32]) + Sync) -> Result<Upload, GpuError> {
        self.upload_words_chunked(len, dev_len, align, STAGING_CHUNK_WORDS, FILL_MODE, fill)
    }

    /// [`Gpu::upload_words`] staged `chunk_words` words at a time, filled as `mode` says
    /// (`gpu upload` times other sizes and modes; the engine uses [`STAGING_CHUNK_WORDS`] and
    /// [`FILL_MODE`]).
    pub(crate) fn upload_words_chunked(&self, len: usize, dev_len: usize, align: usize, chunk_words: usize, mode: FillMode, fill: impl Fn(usize, &mut [u32]) + Sync) -> Result<Upload, GpuError> {
        let copy = &self.staging.copy;
        let t0 = std::time::Instant::now();
        let mut buf = self.upload_buf(len, dev_len)?;
        if mode == FillMode::Pipelined && len > 0 {
            if let Some(pool) = self.staging.fill_pool() {
                let alloc_ms = t0.elapsed().as_secs_f64() * 1e3;
                return self.upload_pipelined(pool, buf, len, align, chunk_words, alloc_ms, &fill);
            }
        }
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let since = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
        let alloc_ms = since(t0);
        let (mut staging_ms, mut fill_ms, mut queue_ms, mut pinned) = (0.0, 0.0, 0.0, true);
        let mut copies = Vec::with_capacity(len.div_ceil(STAGING_CHUNK_WORDS).max(1));
        if len == 0 {
            let start = copy.record_event(timing).ctx("cuEventRecord")?;
            let end = copy.record_event(timing).ctx("cuEventRecord")?;
            copies.push((start, end));
        }
        for (off, n) in staging_chunks(len, align, chunk_words) {
            let t1 = std::time::Instant::now();
            let mut host = self.take_host(n, &mut pinned)?;
            staging_ms += since(t1);
            let t2 = std::time::Instant::now();
            let words = host.words(n)?;
            self.staging.fill_on(|| fill(off, words));
            fill_ms += since(t2);
            let t3 = std::time::Instant::now();
            copies.push(self.copy_chunk(&mut buf, host, off, n)?);
            queue_ms += since(t3);
        }
        Ok(Upload { buf, copies, pinned, alloc_ms, staging_ms, fill_ms, queue_ms, lock_ms: 0.0 })
    }

    /// A chunk's host words: a staging buffer, else pageable memory (`pinned` then false).
    fn take_host(&self, n: usize, pinned: &mut bool) -> Result<Host, GpuError> {
        Ok(match self.take_staging(n)? {
            Some(b) => Host::Pinned(b),
            None => {
                *pinned = false;
                Host::Pageable(vec![0u32; n])
            }
        })
    }

    /// Queues the copy of `host`'s first `n` words into `buf` at word `off` on the copy
    /// stream between two timing events ([`Gpu::copy_staged`] for a staging buffer).
    fn copy_chunk(&self, buf: &mut CudaSlice<u32>, host: Host, off: usize, n: usize) -> Result<(CudaEvent, CudaEvent), GpuError> {
        let copy = &self.staging.copy;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = copy.record_event(timing).ctx("cuEventRecord")?;
        match host {
            Host::Pageable(v) => {
                copy.memcpy_htod(&v[..n], &mut buf.slice_mut(off..off + n)).ctx("cuMemcpyHtoDAsync (pageable)")?;
            }
            Host::Pinned(staging) => self.copy_staged(buf, staging, off, n)?,
        }
        let end = copy.record_event(timing).ctx("cuEventRecord")?;
        Ok((start, end))
    }

    /// Queues the copy of `staging`'s first `n` words into `buf` at word `off` on the copy
    /// stream, marks the buffer busy until that copy is done and puts it back in the pool.
    fn copy_staged(&self, buf: &mut CudaSlice<u32>, mut staging: StagingBuf, off: usize, n: usize) -> Result<(), GpuError> {
        let copy = &self.staging.copy;
        {
            let host = staging.host.as_slice().ctx("staging buffer")?;
            let (dst, _record) = buf.device_ptr_mut(copy);
            // SAFETY: `host[..n]` is page-locked and stays untouched until `busy` (recorded
            // next) completes; the caller's `buf` holds at least `off + n` words.
            unsafe { cudarc::driver::result::memcpy_htod_async(dst + (off * 4) as u64, &host[..n], copy.cu_stream()) }.ctx("cuMemcpyHtoDAsync (pinned)")?;
        }
        // The buffer is busy until the copy is done; if that cannot be recorded, wait for the
        // copy here, so that the buffer is never freed or refilled while it is read.
        match copy.record_event(None) {
            Ok(e) => staging.busy = Some(e),
            Err(e) => {
                let _ = copy.synchronize();
                return Err(e).ctx("cuEventRecord");
            }
        }
        if let Ok(mut pool) = self.staging.pool.lock() {
            pool.push(staging);
        }
        Ok(())
    }

    /// [`FillMode::Pipelined`]: the chunks' fills are tasks on the fill threads (one chunk
    /// each, [`PIPELINE_DEPTH`] at once), and this thread queues each chunk's copy, in order,
    /// once its fill is done. `fill_ms` is the time this thread waited for fills.
    #[allow(clippy::too_many_arguments)]
    fn upload_pipelined(&self, pool: &rayon::ThreadPool, mut buf: CudaSlice<u32>, len: usize, align: usize, chunk_words: usize, alloc_ms: f64, fill: &(impl Fn(usize, &mut [u32]) + Sync)) -> Result<Upload, GpuError> {
        let since = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
        let (mut staging_ms, mut fill_ms, mut queue_ms, mut pinned) = (0.0, 0.0, 0.0, true);
        let chunks: Vec<(usize, usize)> = staging_chunks(len, align, chunk_words).collect();
        let mut copies = Vec::with_capacity(chunks.len());
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<(usize, Host, bool)>();
        pool.in_place_scope(|scope| -> Result<(), GpuError> {
            let mut filled: std::collections::BTreeMap<usize, Host> = std::collections::BTreeMap::new();
            let (mut next_fill, mut next_copy) = (0, 0);
            while next_copy < chunks.len() {
                // Keep PIPELINE_DEPTH fills going.
                while next_fill < chunks.len() && next_fill - next_copy < PIPELINE_DEPTH {
                    let (off, n) = chunks[next_fill];
                    let t1 = std::time::Instant::now();
                    let mut host = self.take_host(n, &mut pinned)?;
                    staging_ms += since(t1);
                    let (tx, i) = (done_tx.clone(), next_fill);
                    scope.spawn(move |_| {
                        // A fill that panics reports at once, as a chunk that failed (its
                        // message went to stderr), instead of leaving the wait below to time out.
                        let ok = match host.words(n) {
                            Ok(w) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fill(off, w))).is_ok(),
                            Err(_) => false,
                        };
                        let _ = tx.send((i, host, ok));
                    });
                    next_fill += 1;
                }
                // Queue every chunk whose fill is done, in order; wait for the next otherwise.
                let t2 = std::time::Instant::now();
                while !filled.contains_key(&next_copy) {
                    match done_rx.recv_timeout(std::time::Duration::from_secs(600)) {
                        Ok((i, h, true)) => {
                            filled.insert(i, h);
                        }
                        Ok((i, _, false)) => return Err(GpuError::input("upload", format!("chunk {i} of {}: its staging buffer could not be written, or its fill panicked", chunks.len()))),
                        Err(_) => return Err(GpuError::input("upload", format!("chunk {next_copy} of {} was not filled within 600 s", chunks.len()))),
                    }
                }
                fill_ms += since(t2);
                let t3 = std::time::Instant::now();
                while let Some(h) = filled.remove(&next_copy) {
                    let (off, n) = chunks[next_copy];
                    copies.push(self.copy_chunk(&mut buf, h, off, n)?);
                    next_copy += 1;
                }
                queue_ms += since(t3);
            }
            Ok(())
        })?;
        Ok(Upload { buf, copies, pinned, alloc_ms, staging_ms, fill_ms, queue_ms, lock_ms: 0.0 })
    }

    /// Device-to-host copy of `src` into a new Vec, after waiting for the stream on an event:
    /// a copy into pageable memory is synchronous inside the driver, and issued while the
    /// stream's kernels still run it waited there for them, while the other GPU worker's
    /// async copy calls stalled (see `queue_ns` of the `h2d` spans).
    ///
    /// The copy itself is a `d2h` span (`what`, `bytes`, `gpu_ns`: its CUDA-event time), opened
    /// after that wait so that its wall is the copy's, not the kernels'.
    pub(crate) fn download_words(&self, src: &cudarc::driver::CudaView<'_, u32>, what: &str) -> Result<Vec<u32>, GpuError> {
        self.stream.record_event(None).ctx("cuEventRecord")?.synchronize().ctx(what)?;
        let span = tracing::info_span!(kind::D2H, what = what, bytes = (src.len() * 4) as u64, { arg::GPU_NS } = tracing::field::Empty);
        let _e = span.enter();
        let t0 = self.timer()?;
        let words = self.stream.clone_dtoh(src).ctx(what)?;
        let t1 = self.timer()?;
        span.record(arg::GPU_NS, (t0.ms_to(&t1)? * 1e6).round() as u64);
        Ok(words)
    }

    /// Free and total device memory in bytes, counting what the stream-ordered allocator holds
    /// unused as free. cudarc allocates with cuMemAllocAsync: a freed buffer goes back to the
    /// device's memory pool, which cuMemGetInfo counts as used until the pool gives it back, and
    /// a pool block shared with a buffer kept for longer (the twiddles) is never given back —
    /// so cuMemGetInfo alone saw less than the pool can hand out (run 57: 3.6 of ~5.2 GiB at
    /// 2^25; run 59: 15.0 of 20 GiB at 2^27, a partition refused by placement). The pool's
    /// unused reserve is an upper bound for one allocation (free pieces of a block need not be
    /// contiguous); what runs out anyway is handled where it happens (a streamed chunk halves).
    pub fn mem_info(&self) -> Result<(usize, usize), GpuError> {
        let pool_unused = self.pool_unused();
        let (free, total) = self.ctx.mem_get_info().ctx("cuMemGetInfo")?;
        Ok(((free + pool_unused).min(total), total))
    }

    /// What the device's current memory pool reserves beyond what is allocated from it, bytes
    /// (0 without stream-ordered allocation or when it cannot be read).
    fn pool_unused(&self) -> usize {
        use cudarc::driver::sys;
        // The pool calls need the context current on this thread (placement reads the free
        // memory from any worker thread).
        if !self.ctx.has_async_alloc() || self.ctx.bind_to_thread().is_err() {
            return 0;
        }
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        let (mut reserved, mut used) = (0u64, 0u64);
        // SAFETY: the device handle is the context's own; the pool is only read, never freed;
        // each attribute is a cuuint64_t written into its u64.
        unsafe {
            if sys::cuDeviceGetMemPool(&mut pool, self.ctx.cu_device()) != sys::CUresult::CUDA_SUCCESS || pool.is_null() {
                return 0;
            }
            let r = sys::cuMemPoolGetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &mut reserved as *mut u64 as *mut std::ffi::c_void);
            let u = sys::cuMemPoolGetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &mut used as *mut u64 as *mut std::ffi::c_void);
            if r != sys::CUresult::CUDA_SUCCESS || u != sys::CUresult::CUDA_SUCCESS {
                return 0;
            }
        }
        reserved.saturating_sub(used) as usize
    }

    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize().ctx("stream synchronize")
    }

    /// A timing event recorded now on the stream.
    pub fn timer(&self) -> Result<KernelTimer, GpuError> {
        let ev = self
            .stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .ctx("cuEventRecord")?;
        Ok(KernelTimer(ev))
    }

    /// One-line description for reports.
    pub fn describe(&self) -> String {
        let (free, total) = self.mem_info().unwrap_or((0, 0));
        format!(
            "{} (device {}, sm_{}{}, {} SMs, {:.1} GiB total, {:.1} GiB free, kernels: {}, nvcc: {}, host waits: {})",
            self.name,
            self.ordinal,
            self.compute_capability.0,
            self.compute_capability.1,
            self.sm_count,
            total as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64,
            if self.native_cubin { "sm_90 cubin" } else { "PTX JIT" },
            NVCC_VERSION,
            self.sched.name()
        )
    }
}

/// A CUDA event on the GPU's stream; differences between two are true device time.
pub struct KernelTimer(CudaEvent);

impl KernelTimer {
    /// Milliseconds from `self` to `end` (waits for `end` to complete).
    pub fn ms_to(&self, end: &KernelTimer) -> Result<f64, GpuError> {
        end.0.synchronize().ctx("cuEventSynchronize")?;
        Ok(self.0.elapsed_ms(&end.0).ctx("cuEventElapsedTime")? as f64)
    }
}

/// Launch a kernel: `launch!(gpu, kernels::ntt::FR_POWERS, cfg, arg1, arg2, ...)` (a
/// [`KernelName`]) with args by reference.
macro_rules! launch {
    ($gpu:expr, $name:expr, $cfg:expr $(, $arg:expr)* $(,)?) => {{
        use cudarc::driver::PushKernelArg as _;
        let name: $crate::gpu::kernels::KernelName = $name;
        let f = $gpu.func(name)?;
        let mut b = $gpu.stream.launch_builder(f);
        $( b.arg($arg); )*
        // SAFETY: argument lists match the extern "C" kernel signatures in prover/cuda.
        unsafe { b.launch($cfg) }.map_err(|source| $crate::gpu::GpuError::Driver { op: format!("launching {name}"), source })?;
    }};
}
pub(crate) use launch;

/// Grid for `n` threads in blocks of `block`.
pub(crate) fn cfg_1d(n: u64, block: u32) -> cudarc::driver::LaunchConfig {
    let grid = n.div_ceil(block as u64).max(1) as u32;
    cudarc::driver::LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

#[cfg(test)]
mod sched_tests {
    use super::{sched_flag, CudaSched};

    #[test]
    fn each_scheduling_choice_sets_its_own_driver_flag() {
        // Distinct driver flags (auto is the driver's 0).
        let flags: Vec<u32> = CudaSched::ALL.iter().map(|&s| sched_flag(s)).collect();
        assert_eq!(flags, [0, 1, 2, 4]);
    }
}

#[cfg(test)]
mod staging_tests {
    use super::{staging_chunks, STAGING_CHUNK_WORDS, STAGING_HOST_BYTES};

    #[test]
    fn chunks_cover_the_upload_once_aligned_and_bounded() {
        for (len, align, max) in [(0, 1, 8), (1, 1, 8), (8, 1, 8), (9, 1, 8), (100, 24, 64), (97, 8, 16), (5, 8, 4), (3 * (1 << 24) + 5, 1, STAGING_CHUNK_WORDS), (1 << 27, 8, STAGING_CHUNK_WORDS), (1000 * 24, 24, STAGING_CHUNK_WORDS)] {
            let c: Vec<(usize, usize)> = staging_chunks(len, align, max).collect();
            // Contiguous from 0 to len, nothing empty.
            let mut next = 0;
            for &(off, n) in &c {
                assert_eq!(off, next, "{len} {align} {max}: {c:?}");
                assert!(n > 0 && off % align == 0, "{len} {align} {max}: {c:?}");
                // At most `max` words, unless one aligned unit is larger than `max` (then one unit).
                assert!(n <= max.max(align), "{len} {align} {max}: {c:?}");
                next += n;
            }
            assert_eq!(next, len, "{len} {align} {max}: {c:?}");
        }
        // 64 MiB chunks: an a/b/c vector at 2^22 (2^25 words) is two; at 2^27, 64.
        assert_eq!(staging_chunks(1 << 25, 8, STAGING_CHUNK_WORDS).count(), 2);
        assert_eq!(staging_chunks(1 << 30, 8, STAGING_CHUNK_WORDS).count(), 64);
        // A G1 affine point's 24 words never straddle two chunks.
        assert!(staging_chunks(1 << 26, 24, STAGING_CHUNK_WORDS).all(|(off, n)| off % 24 == 0 && (n % 24 == 0 || off + n == 1 << 26)));
        assert_eq!(STAGING_HOST_BYTES, 6 * 64 << 20);
    }

    #[test]
    fn lock_pieces_cover_the_range_once_split_at_aligned_addresses() {
        use super::lock_pieces;
        const MIB: usize = 1 << 20;
        for (base, bytes, piece) in [(0x7f00_0000_0010usize, 4 << 30, 256 * MIB), (0x1000, 1, 256 * MIB), (2 * MIB, 512 * MIB, 256 * MIB), (2 * MIB + 16, 3 * MIB, MIB), (4096, 0, 256 * MIB), (0x7f00_0020_0000, 12 * MIB + 5, 3 * MIB)] {
            let p = lock_pieces(base, bytes, piece);
            let mut next = 0;
            // The piece size in use: at least 2 MiB, a multiple of it.
            let step = piece.max(2 * MIB) / (2 * MIB) * (2 * MIB);
            for (i, &(off, len)) in p.iter().enumerate() {
                assert_eq!(off, next, "{base:#x} {bytes} {piece}: {p:?}");
                assert!(len > 0 && len <= step, "{base:#x} {bytes} {piece}: {p:?}");
                // Every piece but the first starts at an aligned address; every one but the
                // last ends at one: no page is in two pieces.
                if i > 0 {
                    assert_eq!((base + off) % step, 0, "{base:#x} {bytes} {piece}: {p:?}");
                }
                if i + 1 < p.len() {
                    assert_eq!((base + off + len) % step, 0, "{base:#x} {bytes} {piece}: {p:?}");
                }
                next += len;
            }
            assert_eq!(next, bytes, "{base:#x} {bytes} {piece}: {p:?}");
        }
        // A 4 GiB vector in 256 MiB pieces: 16, or 17 when it does not start on a boundary.
        assert_eq!(lock_pieces(0x7f00_0000_0000, 4 << 30, 256 * MIB).len(), 16);
        assert_eq!(lock_pieces(0x7f00_0000_0010, 4 << 30, 256 * MIB).len(), 17);
    }
}
