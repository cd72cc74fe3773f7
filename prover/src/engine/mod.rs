//! The persistent proving engine, shaped like cuzk's: parameters loaded once and kept
//! resident; jobs (proofs) of P partitions; `pw` partition-synthesis workers, each
//! holding its partition (the permit) until the bounded GPU queue accepts it; `gw` GPU
//! workers per device, over one or more devices (the CPU backend counts as one); lock
//! modes `whole` / `kernels` / `two_lock`; optional split finalisation on finaliser
//! threads; a partition failing on a device (or whose proof does not verify) is retried
//! on another one, a partition whose device ran out of memory is proven on the CPU
//! fallback (`cpu_fallback`, span `fallback`), and a job whose partition fails for good
//! fails alone while the engine keeps serving the others. With `synthesis = "pce"` the
//! synthesis workers share one set of pre-compiled constraints ([`crate::pce`]), loaded or
//! extracted on first use (`pce_slot`). Host memory is budgeted ([`budget`], `[memory]`):
//! the parameters and the PCE reserve their size at start, and a synthesis starts only
//! when its partition's working set fits (span `ram_wait` while it waits); the a/b/c part is
//! given back when the backend has taken the vectors, the rest when the proof is finished.
//! Every stage is a span (see [`crate::events`]).

pub mod backends;
pub mod budget;
pub mod config;
pub mod jobs;
pub mod locks;
mod pce_slot;
pub mod placement;
pub mod priority;
mod workers;

use timeline::event::kind;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bellpepper_core::Circuit;
use blstrs::Scalar;
use crossbeam_channel::{unbounded, Receiver, Sender};
use timeline::event::{Run, RunConfig, RunMeta};

pub use backends::{backends_for, backends_for_config};
pub use config::{ConfigError, EngineConfig, G2Msm, LockMode, SynthesisMode};
pub use jobs::{bench_jobs, interrupt_flag, job_id, porep_jobs};

use crate::backend::{Backend, ProveError};
use crate::events::{EventSink, SinkStats};
use crate::params::Parameters;
use crate::proof::Proof;
use crate::synthesis::ProvingAssignment;

/// One partition's circuit, type-erased so a job can mix circuits.
pub trait PartitionCircuit: Send {
    /// Synthesise, with the vectors sized by `hint` (the parameter file's sizes) up front.
    fn synthesize(self: Box<Self>, hint: crate::synthesis::SizeHint) -> Result<ProvingAssignment, ProveError>;
    /// Its witness only (the pre-compiled path: span `witness`), with room for `inputs` /
    /// `aux` values, its pieces on `pool` (`None`: the current rayon pool).
    fn witness(self: Box<Self>, inputs: usize, aux: usize, pool: Option<&rayon::ThreadPool>) -> Result<crate::pce::Witness, ProveError>;
    /// Its pre-compiled constraints and its witness, from one run of its code, its pieces in
    /// parallel on `pool` (`None`: the current rayon pool).
    fn extract_with_witness(self: Box<Self>, pool: Option<&rayon::ThreadPool>) -> Result<(crate::pce::Pce, crate::pce::Witness), ProveError>;
}

impl<C: Circuit<Scalar> + crate::pce::CircuitPieces + Send + 'static> PartitionCircuit for C {
    fn synthesize(self: Box<Self>, hint: crate::synthesis::SizeHint) -> Result<ProvingAssignment, ProveError> {
        crate::prover::synthesize_with_capacity(*self, hint)
    }
    fn witness(self: Box<Self>, inputs: usize, aux: usize, pool: Option<&rayon::ThreadPool>) -> Result<crate::pce::Witness, ProveError> {
        crate::pce::generate_witness(*self, inputs, aux, pool).map_err(|e| ProveError::Synthesis(e.into()))
    }
    fn extract_with_witness(self: Box<Self>, pool: Option<&rayon::ThreadPool>) -> Result<(crate::pce::Pce, crate::pce::Witness), ProveError> {
        crate::on_pool(pool, move || crate::pce::extract_pieces_with_witness(*self)).map_err(|e| match e {
            crate::pce::PceError::Synthesis(e) => ProveError::Synthesis(e.into()),
            e => ProveError::Pce(e.to_string()),
        })
    }
}

/// Files the engine may use beside its parameters.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// The parameter file the parameters were read from: the PCE cache lives beside it
    /// (`synthesis = "pce"`, `pce_cache`). `None`: the PCE is kept in memory only.
    pub params_path: Option<PathBuf>,
    /// The pre-compiled constraints of the parameters' circuit when the caller has them
    /// already (the in-process setup): used as they are, no cache read or written.
    pub pce: Option<Arc<crate::pce::Pce>>,
}

/// A proof request: one circuit per partition.
pub struct Job {
    pub id: String,
    pub partitions: Vec<Box<dyn PartitionCircuit>>,
}

/// A partition's proof and the public inputs it proves.
#[derive(Clone, Debug)]
pub struct PartitionProof {
    pub proof: Proof,
    pub public_inputs: Vec<Scalar>,
    /// Device that proved it (after retries).
    pub device: u32,
}

/// The outcome of a job.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub id: String,
    /// All partition proofs in order, or the first failure.
    pub proofs: Result<Vec<PartitionProof>, String>,
    pub submitted_ns: u64,
    pub finished_ns: u64,
}

/// Progress counters (read by the CLI's progress bar).
#[derive(Default)]
pub struct Progress {
    pub partitions_done: AtomicU64,
    pub partitions_failed: AtomicU64,
    pub jobs_done: AtomicU64,
}

pub(crate) struct JobState {
    id: String,
    submitted_ns: u64,
    inner: Mutex<JobSlots>,
}

struct JobSlots {
    proofs: Vec<Option<PartitionProof>>,
    remaining: usize,
    failure: Option<String>,
}

impl JobState {
    fn failed(&self) -> bool {
        self.inner.lock().map(|s| s.failure.is_some()).unwrap_or(true)
    }
}

/// A partition's share of the RAM budget: its a/b/c (given back by the backend through
/// the gate, [`crate::backend::Gate::abc_release`], once it has taken them) and the rest
/// (given back when the partition's proof is finished or failed, i.e. when this drops).
pub(crate) struct PartitionRam {
    abc: Mutex<Option<budget::Reservation>>,
    _rest: budget::Reservation,
}

impl PartitionRam {
    /// Split `r` into its a/b/c part (`abc` bytes) and the rest.
    pub(crate) fn new(mut r: budget::Reservation, abc: u64) -> PartitionRam {
        let a = r.split_off(abc);
        PartitionRam { abc: Mutex::new(Some(a)), _rest: r }
    }
    /// The a/b/c part, taken out (the gate hands it to the backend's release).
    pub(crate) fn take_abc(&self) -> Option<budget::Reservation> {
        self.abc.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A partition moving through the pipeline.
pub(crate) struct SynthTask {
    job: Arc<JobState>,
    partition: u32,
    circuit: Box<dyn PartitionCircuit>,
}

pub(crate) struct GpuTask {
    job: Arc<JobState>,
    partition: u32,
    assignment: ProvingAssignment,
    /// The `gpu_queue` span, closed at pickup.
    queue_span: tracing::Span,
    attempts: u32,
    tried: Vec<u32>,
    ram: PartitionRam,
}

pub(crate) struct FinishTask {
    job: Arc<JobState>,
    partition: u32,
    worker: u32,
    device: u32,
    backend: Arc<dyn Backend>,
    pending: crate::backend::Pending,
    /// Where the partition goes if its finish fails (a proof that does not verify).
    retry: Option<Retry>,
    /// Held until the proof is finished.
    ram: PartitionRam,
}

/// A partition's second chance: its assignment and the device to try next.
pub(crate) struct Retry {
    assignment: ProvingAssignment,
    attempts: u32,
    tried: Vec<u32>,
    target: usize,
    /// The copy's share of the RAM budget.
    ram: budget::Reservation,
}

/// State shared by all engine threads.
pub(crate) struct Shared {
    cfg: EngineConfig,
    params: Arc<Parameters>,
    backends: Vec<Arc<dyn Backend>>,
    /// Where a partition goes when its device runs out of memory (`cpu_fallback`).
    fallback: Option<Arc<dyn Backend>>,
    /// The GPU workers' pool for their CPU work (`prep_threads`; `None`: rayon's global pool).
    prep_pool: Option<Arc<rayon::ThreadPool>>,
    /// The dispatcher of the thread that started the engine (its log), for warnings: the
    /// engine threads' own dispatch only feeds the timeline.
    log: tracing::Dispatch,
    locks: Vec<locks::DeviceLocks>,
    /// Per device, the calls whose host memory is reserved, counted in a budget of calls
    /// (`device_call_slots` units; a call reserves one): a call placement did not count — a
    /// retry aimed at the device — waits for one to end instead of holding host memory nobody
    /// reserved.
    call_permits: Vec<Arc<budget::RamBudget>>,
    /// The shared GPU queue and the devices' loads: where each partition is proven.
    placer: placement::Placer<GpuTask>,
    /// Retried partitions waiting for a worker of a given device (index in `backends`).
    retry: Vec<Mutex<VecDeque<GpuTask>>>,
    /// Partitions synthesised and not yet proven or failed (GPU stage, retries included).
    in_gpu_stage: AtomicU64,
    queue_depth: AtomicU64,
    abort: AtomicBool,
    dispatch: Option<tracing::Dispatch>,
    sink: EventSink,
    results: Sender<JobResult>,
    progress: Progress,
    rng_seed: Option<u64>,
    /// The pre-compiled constraints of the parameters' circuit (`synthesis = "pce"`).
    pce: pce_slot::PceSlot,
    /// The host-RAM budget, and what one partition reserves from it.
    ram: Arc<budget::RamBudget>,
    plan: budget::MemoryPlan,
    /// The parameters' reservation (for the engine's life).
    _params_ram: budget::Reservation,
    /// The GPU workers' call memory (for the engine's life).
    _calls_ram: budget::Reservation,
    /// The partitions' a/b/c kept and page-locked from one partition to the next
    /// (`cuda.abc_upload = "pooled"` with `synthesis = "pce"`, [`crate::abc_pool`]).
    abc_pool: Option<Arc<crate::abc_pool::AbcPool>>,
}

impl Shared {
    /// The gate of a call on device `d` in `mode`: its locks, the partition's RAM (for the
    /// a/b/c release) and the GPU workers' pool.
    fn gate<'a>(&'a self, mode: LockMode, d: usize, ram: &'a PartitionRam) -> locks::EngineGate<'a> {
        locks::EngineGate { mode, locks: &self.locks[d], ram: Some(ram), cpu_pool: self.prep_pool.as_deref() }
    }

    /// A warning on the starting thread's log (stderr for the CLI).
    fn warn(&self, message: &str) {
        tracing::dispatcher::with_default(&self.log, || tracing::warn!("{message}"));
    }

    /// A note on the starting thread's log.
    fn info(&self, message: &str) {
        tracing::dispatcher::with_default(&self.log, || tracing::info!("{message}"));
    }

    /// Send a partition to device `target`'s retry queue (it stays in the GPU stage).
    #[allow(clippy::too_many_arguments)]
    fn requeue(&self, job: Arc<JobState>, partition: u32, assignment: ProvingAssignment, attempts: u32, tried: Vec<u32>, target: usize, ram: PartitionRam) {
        let queue_span = tracing::info_span!(parent: None, kind::GPU_QUEUE, job = job.id.as_str(), partition = partition, retry = true, device = tracing::field::Empty);
        let t = GpuTask { job, partition, assignment, queue_span, attempts, tried, ram };
        match self.retry.get(target).map(|q| q.lock()) {
            Some(Ok(mut q)) => q.push_back(t),
            _ => {
                self.finish_partition(&t.job, partition, Err(format!("no retry queue for device {target}")));
                self.in_gpu_stage.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    fn finish_partition(&self, job: &Arc<JobState>, partition: u32, outcome: Result<PartitionProof, String>) {
        let done = {
            let Ok(mut s) = job.inner.lock() else { return };
            match outcome {
                Ok(p) => {
                    self.progress.partitions_done.fetch_add(1, Ordering::Relaxed);
                    if let Some(slot) = s.proofs.get_mut(partition as usize) {
                        *slot = Some(p);
                    }
                }
                Err(e) => {
                    // In the timeline too: a zero-length `failed` span (arg `error`) under the
                    // partition's identity, so the analyzer counts the job as failed instead
                    // of complete (run 55's failed proofs read as done without it).
                    {
                        let ctx = tracing::info_span!("ctx", job = job.id.as_str(), partition = partition);
                        let _c = ctx.enter();
                        drop(tracing::info_span!(timeline::event::kind::FAILED, error = e.as_str()).entered());
                    }
                    self.progress.partitions_failed.fetch_add(1, Ordering::Relaxed);
                    if s.failure.is_none() {
                        s.failure = Some(format!("partition {partition}: {e}"));
                    }
                }
            }
            s.remaining = s.remaining.saturating_sub(1);
            if s.remaining == 0 {
                let proofs = match s.failure.take() {
                    Some(f) => Err(f),
                    None => Ok(s.proofs.iter_mut().filter_map(Option::take).collect()),
                };
                Some(proofs)
            } else {
                None
            }
        };
        if let Some(proofs) = done {
            self.progress.jobs_done.fetch_add(1, Ordering::Relaxed);
            let _ = self.results.send(JobResult { id: job.id.clone(), proofs, submitted_ns: job.submitted_ns, finished_ns: self.sink.now_ns() });
        }
    }
}

/// The running engine.
pub struct Engine {
    shared: Arc<Shared>,
    work: Option<Sender<SynthTask>>,
    results: Receiver<JobResult>,
    synth_threads: Vec<JoinHandle<()>>,
    gpu_threads: Vec<JoinHandle<()>>,
    fin_threads: Vec<JoinHandle<()>>,
    fin_tx: Option<Sender<FinishTask>>,
}

/// MemTotal of /proc/meminfo, GiB (None where there is no such file).
fn mem_total_gib() -> Option<f64> {
    budget::mem_total_bytes().map(|b| b as f64 / (1u64 << 30) as f64)
}

/// The config's RAM budget on this machine, bytes, and a warning when it is larger than the
/// machine's RAM.
pub fn ram_budget(cfg: &EngineConfig) -> Result<(u64, Option<String>), ConfigError> {
    cfg.memory.resolve(budget::mem_total_bytes()).map_err(|reason| ConfigError::Invalid { field: "memory.total_budget", reason })
}

/// What an engine of `cfg` reserves for parameters of `shape` (read from `params_path`, whose
/// PCE cache is measured when there is one).
/// `devices`: the devices the engine drives (its backends; `cfg.devices` before they exist):
/// one GPU call's memory per call a device may run at once ([`calls_per_device_bound`]) —
/// an upper bound of what the engine reserves (`device_call_slots`), so a budget this plan
/// refuses by a call's memory might still have run (the check stays conservative).
pub fn memory_plan(cfg: &EngineConfig, shape: &crate::params::ParamsShape, params_path: Option<&std::path::Path>, devices: u64) -> budget::MemoryPlan {
    let pce_cache = params_path.filter(|_| cfg.pce_cache).map(crate::pce::cache::cache_path);
    let call_slots = calls_per_device_bound(cfg, shape).saturating_mul(devices.max(1));
    budget::MemoryPlan::for_shape(shape, cfg.synthesis == SynthesisMode::Pce, pce_cache.as_deref(), call_slots)
}

/// The GPU calls per device whose host memory the checks count before the devices hold the
/// parameters: `gw`, or — without a CPU fallback and under a VRAM budget — no more calls than
/// the budget holds of the least memory a call can run in (tight, with the cheapest NTT the
/// `ntt_memory` setting allows), at least one. The engine counts calls of its device plan's
/// size in the device's free memory (`device_call_slots`); free memory under a budget is at
/// most the budget and a call needs at least that least size, so this bound is never below
/// the engine's count. Run 72 (gw 2, `--vram-budget 16`, 2^27: a call needs at least 12 GiB):
/// one call counted, not two (20.4 GiB of host memory less in the check). With a CPU fallback
/// every worker may prepare a fallback proof: `gw`.
pub fn calls_per_device_bound(cfg: &EngineConfig, shape: &crate::params::ParamsShape) -> u64 {
    let gw = u64::from(cfg.gw).max(1);
    match cfg.memory.vram_budget {
        Some(v) if !cfg.cpu_fallback => {
            let least = placement::DeviceNeed::of(shape).least(cfg.cuda.ntt_memory).tight();
            if least == 0 {
                gw
            } else {
                (v.0 / least).clamp(1, gw)
            }
        }
        _ => gw,
    }
}

/// The check [`Engine::start`] makes of the RAM budget, from the parameters' shape alone
/// (`prove` runs it on the parameter file's header before loading the file): an error
/// naming the figures when the budget cannot hold the resident items and one partition; the
/// warning of a budget larger than the machine's RAM is returned.
pub fn check_ram_budget(cfg: &EngineConfig, shape: &crate::params::ParamsShape, params_path: Option<&std::path::Path>) -> Result<Option<String>, ConfigError> {
    // The VRAM budget against one partition's device working set (the engine checks it again
    // per device when it starts).
    if let Some(v) = cfg.memory.vram_budget {
        check_vram_need(v.0, &placement::DeviceNeed::of(shape).least(cfg.cuda.ntt_memory), shape.info.domain_size)?;
    }
    let (total, warning) = ram_budget(cfg)?;
    #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
    let mut plan = memory_plan(cfg, shape, params_path, u64::from(cfg.devices));
    // Each CUDA device's upload staging, unless the backend is the CPU's (`auto` counts it:
    // the check stays conservative).
    #[cfg(feature = "cuda")]
    if cfg.backend != "cpu" {
        plan.staging = u64::from(cfg.devices).saturating_mul(crate::gpu::STAGING_HOST_BYTES);
    }
    // A device backend with `params_host = "auto"` lets the parameters' host copy go once the
    // devices hold them (the engine checks its reservations again then).
    let expect_release = cfg.memory.params_host == budget::ParamsHost::Auto && cfg.backend != "cpu";
    plan.check_for(total, expect_release).map_err(|reason| ConfigError::Invalid { field: "memory.total_budget", reason })?;
    Ok(warning)
}

/// The VRAM budget against a domain of `domain` points before the parameters exist (their
/// queries' sizes unknown: the lower bound [`placement::DeviceNeed::of_domain`]), so that
/// `prove --setup-on-device` refuses a budget too small before its setup, not after.
pub fn check_vram_budget_for_domain(cfg: &EngineConfig, domain: u64) -> Result<(), ConfigError> {
    match cfg.memory.vram_budget {
        Some(v) => check_vram_need(v.0, &placement::DeviceNeed::of_domain(domain).least(cfg.cuda.ntt_memory), domain),
        None => Ok(()),
    }
}

/// A VRAM budget against what one partition of a domain of `domain` points requires on every
/// device ([`placement::DeviceNeed::required`], its parts named).
fn check_vram_need(budget: u64, need: &placement::DeviceNeed, domain: u64) -> Result<(), ConfigError> {
    check_vram_budget(None, budget, need.required(), &need.describe_minimum(), domain)
}

/// A VRAM budget of `budget` bytes against the least device memory one partition needs,
/// `need` bytes made of `parts` (a domain of `domain` points), on `device` or on every device.
fn check_vram_budget(device: Option<u32>, budget: u64, need: u64, parts: &str, domain: u64) -> Result<(), ConfigError> {
    if need <= budget {
        return Ok(());
    }
    let on = device.map_or(String::new(), |d| format!("device {d}: "));
    Err(ConfigError::Invalid {
        field: "memory.vram_budget",
        reason: format!("{on}a VRAM budget of {} cannot hold one partition of a domain of {domain} points: it needs at least {} ({parts}); give at least that", budget::human(budget), budget::human(need)),
    })
}

/// GPU calls of one device whose host memory the engine reserves: its `gw` workers, but —
/// without a CPU fallback (`fallback_on` false), which would prepare its MSMs in a worker's
/// thread beside the device's calls — no more than its `free` device memory holds calls of
/// `need` bytes at once (at least one); fewer is logged, since then the device serialises the
/// workers' calls.
fn device_call_slots(gw: u32, fallback_on: bool, device: u32, free: Option<u64>, need: Option<u64>) -> u64 {
    let gw = u64::from(gw);
    let fit = match (free, need) {
        (Some(f), Some(n)) if n > 0 && !fallback_on => (f / n).max(1),
        _ => return gw,
    };
    if fit < gw {
        tracing::warn!(
            "device {device}: its free memory ({}) holds {fit} call(s) of {} at once, so its {gw} GPU workers take turns: the host reserves the call memory of {fit}",
            budget::human(free.unwrap_or(0)),
            budget::human(need.unwrap_or(0))
        );
    }
    gw.min(fit)
}

/// The thread pools of the `pw` synthesis workers on the PCE path, one entry per worker
/// (`None`: the circuit path, which synthesises on the worker's own thread): a pool of
/// [`synthesis_pool_threads`] each (`synth-W-pce-I`), or with `synthesis_shared_pool` one
/// pool of that many shared by all of them (`synth-pce-I`) — never rayon's global pool,
/// where the GPU workers prepare their MSMs and the finalisers work: a witness's pieces
/// queued there in front of them starved the device (run 66 at 2^27: prep_msm 1.7 s → 8.7 s
/// a partition, 69.9 → 120.5 s/proof). Separate pools leave the sharing of the cores to the
/// OS scheduler, thread by thread; on one shared pool a synthesis waiting for its own tasks
/// runs the others' (runs 122 and 125 at 2^27).
fn synthesis_pools(cfg: &EngineConfig) -> Result<Vec<Option<Arc<rayon::ThreadPool>>>, ConfigError> {
    let nice = cfg.synthesis_nice;
    let pool_of = |n: usize, name: Box<dyn FnMut(usize) -> String + Send>| named_pool(n, name, nice, "synthesis_threads");
    if cfg.synthesis == SynthesisMode::Circuit {
        return Ok(vec![None; cfg.pw as usize]);
    }
    let n = synthesis_pool_threads(cfg);
    if cfg.synthesis_shared_pool {
        let shared = pool_of(n, Box::new(|i| format!("synth-pce-{i}")))?;
        return Ok(vec![Some(shared); cfg.pw as usize]);
    }
    // pw pools of n threads each, all started now: a failure names the product, not one pool.
    (0..cfg.pw)
        .map(|w| pool_of(n, Box::new(move |i| format!("synth-{w}-pce-{i}"))).map(Some))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::Invalid {
            field: "synthesis_threads",
            reason: format!("pw {} synthesis pools of {n} threads each ({} threads) could not all start ({e}); lower synthesis_threads or pw, or set synthesis_shared_pool = true", cfg.pw, cfg.pw as usize * n),
        })
}

/// Threads of a synthesis pool: `synthesis_threads`, or the machine's cores for 0.
fn synthesis_pool_threads(cfg: &EngineConfig) -> usize {
    match cfg.synthesis_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n as usize,
    }
}

/// The GPU workers' pool for their CPU work: `prep_threads = N` one pool of N threads
/// (`prep-I`) shared by every GPU worker; 0: none (rayon's global pool, as before).
fn prep_pool(cfg: &EngineConfig) -> Result<Option<Arc<rayon::ThreadPool>>, ConfigError> {
    if cfg.prep_threads == 0 {
        return Ok(None);
    }
    named_pool(cfg.prep_threads as usize, Box::new(|i| format!("prep-{i}")), 0, "prep_threads").map(Some)
}

/// A pool of `n` threads named by `name`, each `nice` above the process's nice value
/// ([`priority::nice_this_thread`]); a failure to start it is an error of `field`.
fn named_pool(n: usize, name: Box<dyn FnMut(usize) -> String + Send>, nice: u8, field: &'static str) -> Result<Arc<rayon::ThreadPool>, ConfigError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(name)
        .start_handler(move |_| priority::nice_this_thread(nice))
        .build()
        .map(Arc::new)
        .map_err(|e| ConfigError::Invalid { field, reason: format!("cannot start a pool of {n} threads: {e}") })
}

/// The run metadata of an engine run (fill `proofs`, `partitions`, `constraints`).
pub fn run_meta(cfg: &EngineConfig, backends: &[Arc<dyn Backend>]) -> RunMeta {
    let mut m = RunMeta::new("prover");
    m.tool_version = env!("CARGO_PKG_VERSION").to_string();
    m.host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string());
    m.cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|s| s.trim().to_string()));
    m.config = RunConfig {
        pw: Some(cfg.pw),
        gw: Some(cfg.gw),
        lock: Some(cfg.lock),
        gpus: Some(backends.len() as u32),
        split_finalize: Some(cfg.split_finalize),
        finalizers: cfg.split_finalize.then_some(cfg.finalizers),
        backend: backends.first().map(|b| b.name().to_string()),
        g2_msm: backends.first().filter(|b| b.name() == "cuda").map(|_| cfg.g2_msm.as_str().to_string()),
        ..Default::default()
    };
    m.extra.insert("synthesis".into(), cfg.synthesis.as_str().into());
    if let Ok((bytes, _)) = ram_budget(cfg) {
        m.extra.insert(timeline::event::extra::RAM_BUDGET_BYTES.into(), bytes.into());
    }
    if let Some(v) = cfg.memory.vram_budget {
        // machine.gpu_mem_gib is then the budget (what the device behaved as).
        m.extra.insert("vram_budget_bytes".into(), v.0.into());
    }
    if cfg.synthesis == SynthesisMode::Pce {
        // The threads as resolved (never 0), and whether the workers shared one pool.
        m.extra.insert(timeline::event::extra::SYNTHESIS_THREADS.into(), (synthesis_pool_threads(cfg) as u64).into());
        m.extra.insert(timeline::event::extra::SYNTHESIS_SHARED_POOL.into(), cfg.synthesis_shared_pool.into());
        m.extra.insert("prep_threads".into(), cfg.prep_threads.into());
    }
    m.extra.insert("synthesis_nice".into(), cfg.synthesis_nice.into());
    m.machine = timeline::MachineInfo {
        cpu_cores: std::thread::available_parallelism().ok().map(|n| n.get() as u32),
        ram_gib: mem_total_gib(),
        gpu_mem_gib: backends.iter().filter_map(|b| b.device_memory_bytes()).map(|b| b as f64 / (1u64 << 30) as f64).collect(),
        mem_bandwidth_gbs: None,
    };
    if let Some(b) = backends.first() {
        for (k, v) in b.meta() {
            m.extra.insert(k.into(), v);
        }
    }
    m
}

/// `memory.params_host = "auto"`: every device takes its copy of the queries now
/// ([`Backend::make_resident`], span `h2d` what=params under `dispatch`), then the host copy of
/// each query every device holds is freed. Returns the queries every device holds (none where
/// a device failed to take them) and the bytes freed (0 where a device holds none, e.g. the
/// CPU backend, where a device failed to take them — warned, they are then uploaded on first
/// use as before —, or where someone else holds the parameters too).
fn release_host_queries(params: &mut Arc<Parameters>, backends: &[Arc<dyn Backend>], dispatch: Option<tracing::Dispatch>) -> (crate::backend::ResidentQueries, u64) {
    let mut held = crate::backend::ResidentQueries::ALL;
    for b in backends {
        let r = match &dispatch {
            Some(d) => tracing::dispatcher::with_default(d, || b.make_resident(params)),
            None => b.make_resident(params),
        };
        match r {
            Ok(r) => held = held.and(r),
            Err(e) => {
                tracing::warn!("device {}: uploading the parameters at start failed ({e}); the host keeps its copy", b.device());
                return (crate::backend::ResidentQueries::default(), 0);
            }
        }
    }
    if !held.any() {
        return (held, 0);
    }
    let Some(p) = Arc::get_mut(params) else {
        tracing::warn!("the parameters are shared outside the engine: the host keeps its copy");
        return (held, 0);
    };
    let bytes = p.h.release_if(held.h) + p.l.release_if(held.l) + p.a.release_if(held.a) + p.b_g1.release_if(held.b_g1) + p.b_g2.release_if(held.b_g2);
    tracing::info!("released the host copy of queries {} ({:.1} GiB): every device holds them", held.names().join(", "), bytes as f64 / (1u64 << 30) as f64);
    (held, bytes)
}

impl Engine {
    /// Start the threads. `sink` receives the events (ignored when `cfg.events` is off).
    pub fn start(cfg: EngineConfig, params: Arc<Parameters>, backends: Vec<Arc<dyn Backend>>, sink: EventSink) -> Result<Engine, ConfigError> {
        Self::start_with(cfg, params, backends, sink, StartOptions::default())
    }

    /// [`Engine::start`] knowing where the parameters came from (`opts`).
    pub fn start_with(cfg: EngineConfig, params: Arc<Parameters>, backends: Vec<Arc<dyn Backend>>, sink: EventSink, opts: StartOptions) -> Result<Engine, ConfigError> {
        cfg.validate()?;
        if backends.is_empty() {
            return Err(ConfigError::Invalid { field: "backend", reason: "no device to prove on".into() });
        }
        // The RAM budget, checked before any work: the resident items and one partition must fit.
        let (ram_total, ram_warning) = ram_budget(&cfg)?;
        if let Some(w) = ram_warning {
            tracing::warn!("{w}");
        }
        let mut plan = memory_plan(&cfg, &params.shape(), opts.params_path.as_deref(), backends.len() as u64);
        plan.staging = backends.iter().map(|b| b.host_staging_bytes()).sum();
        // With `params_host = "auto"` the host copy of the parameters goes once the devices
        // hold them, and the calls then hold no gathered bases: the check counts the larger
        // of the start and the run, on devices with memory of their own (a CPU backend keeps
        // the copy; a device that cannot hold them does too: the reservations below and the
        // check after them catch it).
        let expect_release = cfg.memory.params_host == budget::ParamsHost::Auto && backends.iter().all(|b| b.device_memory_bytes().is_some());
        plan.check_for(ram_total, expect_release).map_err(|reason| ConfigError::Invalid { field: "memory.total_budget", reason })?;
        let observer: Option<Box<dyn Fn(u64) + Send + Sync>> = cfg.events.then(|| {
            let counters = sink.counters();
            Box::new(move |reserved: u64| counters.counter_at(timeline::event::counters::RAM_RESERVED_BYTES, counters.now_ns(), reserved as f64, None)) as Box<dyn Fn(u64) + Send + Sync>
        });
        let ram = budget::RamBudget::with_observer(ram_total, observer);
        let too_large = |e: budget::BudgetError| ConfigError::Invalid { field: "memory.total_budget", reason: e.to_string() };
        // A VRAM budget that cannot hold what one partition requires: an error before
        // any work (without a budget a device too small is placement's business).
        for b in &backends {
            if let (Some(budget), Some((need, parts))) = (b.vram_budget(), b.minimum_device_bytes(&params)) {
                check_vram_budget(Some(b.device()), budget, need, &parts, params.info.domain_size)?;
            }
        }
        let params_ram = ram.reserve_resident("the parameters", plan.params).map_err(too_large)?;
        let mut params = params;
        let (held, released) = match cfg.memory.params_host {
            budget::ParamsHost::Auto => release_host_queries(&mut params, &backends, cfg.events.then(|| sink.dispatch())),
            budget::ParamsHost::Keep => (crate::backend::ResidentQueries::default(), 0),
        };
        if released > 0 {
            params_ram.release(released);
        }
        let pce_ram = match plan.pce {
            Some(p) => Some(ram.reserve_resident("the pre-compiled constraints", p.bytes).map_err(too_large)?),
            None => None,
        };
        // Placement: each device's working set for these parameters (its plan made now that
        // the queries are resident), its free memory read through its backend at each decision.
        let needs: Vec<Option<u64>> = backends.iter().map(|b| b.partition_device_bytes(&params)).collect();
        for note in backends.iter().flat_map(|b| b.describe_plan(&params)) {
            tracing::warn!("{note}");
        }
        // The GPU workers' call memory (MSM preparation and bases), one call per worker — but,
        // without a CPU fallback, no more calls per device than its memory holds at once:
        // placement makes the others wait, so their host memory would only be held back from
        // the syntheses. A CPU fallback proof prepares its MSMs in its GPU worker's thread
        // beside the device's calls (run 58: two 2^27 fallbacks beside one reserved call took
        // the host past its RAM), so with one every worker keeps its share.
        let fallback_on = cfg.cpu_fallback && released == 0;
        let device_slots: Vec<u64> = backends.iter().zip(&needs).map(|(b, need)| device_call_slots(cfg.gw, fallback_on, b.device(), b.device_free_bytes(), *need)).collect();
        let call_slots: u64 = device_slots.iter().sum();
        // A call on queries its device holds indexes the device's copy: the host gathers no
        // bases for it (a CPU MSM does: the fallback, or the G2 MSM in the finisher when the
        // device does not hold B_G2; a streamed query is kept on the safe side). Run 119 at
        // 2^27: 12 GiB per GPU worker reserved for them, never allocated, while syntheses
        // waited for RAM.
        let msm_held = held.l && held.a && held.b_g1 && held.b_g2;
        let call = if msm_held && !fallback_on { plan.partition.call_on_resident_queries() } else { plan.partition.call };
        let calls_ram = ram.reserve_resident("the GPU workers' call memory", call.saturating_mul(call_slots.max(1))).map_err(too_large)?;
        // The devices' upload staging (page-locked, bounded per device: chunked uploads).
        calls_ram.absorb(ram.reserve_resident("the devices' upload staging (pinned)", plan.staging).map_err(too_large)?);
        // What stays reserved for the engine's life is known now: one synthesis must fit
        // beside it, or no partition would ever start.
        let left = ram_total.saturating_sub(ram.reserved());
        if left < plan.partition.synthesis() {
            return Err(ConfigError::Invalid {
                field: "memory.total_budget",
                reason: format!(
                    "the RAM budget of {} cannot hold one partition: {} stay reserved for the engine's life (parameters' host copy {}, pre-compiled constraints, the GPU workers' calls and the upload staging) and one partition's working set is {}; raise memory.total_budget (--ram-budget)",
                    budget::human(ram_total),
                    budget::human(ram.reserved()),
                    budget::human(plan.params.saturating_sub(released)),
                    budget::human(plan.partition.synthesis())
                ),
            });
        }
        let (results_tx, results) = unbounded();
        let (work_tx, work_rx) = unbounded::<SynthTask>();
        let (fin_tx, fin_rx) = unbounded::<FinishTask>();
        let probe = backends.clone();
        let placer = placement::Placer::new(cfg.queue_capacity, cfg.pw, needs, Box::new(move |d| probe.get(d).and_then(|b| b.device_free_bytes())));
        let dispatch = if cfg.events { Some(sink.dispatch()) } else { None };
        if cfg.cpu_fallback && released > 0 {
            tracing::warn!("cpu_fallback is off: the CPU would prove from the host copy of the parameters, released after their upload (memory.params_host = \"keep\" keeps it); a partition out of device memory is retried on the device");
        }
        let fallback = fallback_on.then(|| Arc::new(crate::cpu::CpuBackend::with_msm(0, cfg.cpu_msm)) as Arc<dyn Backend>);
        let log = tracing::dispatcher::get_default(|d| d.clone());
        // The a/b/c pool: a set for every partition that can hold its a/b/c at once — the
        // syntheses (a finished one waits for the queue with its vectors), the queue and the
        // GPU workers' uploads — each set made with, and carrying, a partition's a/b/c
        // reservation; page-locked by a device backend that reads them in place. The products
        // write them: the circuit path cannot.
        let abc_sets = cfg.pw as usize + cfg.queue_capacity as usize + cfg.gw as usize * backends.len();
        let abc_pool = match backends.iter().find_map(|b| b.abc_pinner()) {
            Some(pin) if cfg.synthesis == SynthesisMode::Pce => Some(crate::abc_pool::AbcPool::new(abc_sets, params.info.num_constraints as usize, Some(pin))),
            Some(_) => {
                tracing::warn!("cuda.abc_upload = \"pooled\" needs synthesis = \"pce\" (the products write into the pooled vectors): a, b and c are staged");
                None
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            abc_pool,
            fallback,
            prep_pool: prep_pool(&cfg)?,
            log,
            locks: backends.iter().map(|_| locks::DeviceLocks::default()).collect(),
            call_permits: device_slots.iter().map(|&n| budget::RamBudget::new(n.max(1))).collect(),
            retry: backends.iter().map(|_| Mutex::new(VecDeque::new())).collect(),
            placer,
            backends,
            params,
            in_gpu_stage: AtomicU64::new(0),
            queue_depth: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            dispatch,
            sink,
            results: results_tx,
            progress: Progress::default(),
            rng_seed: cfg.seed,
            pce: match opts.pce {
                Some(p) => pce_slot::PceSlot::with_pce(p, pce_ram),
                None => pce_slot::PceSlot::new(opts.params_path.filter(|_| cfg.pce_cache), pce_ram),
            },
            ram,
            plan,
            _params_ram: params_ram,
            _calls_ram: calls_ram,
            cfg,
        });
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name).spawn(f).map_err(|e| ConfigError::Invalid { field: "pw/gw", reason: format!("cannot start a thread: {e}") })
        };
        let mut synth_threads = Vec::new();
        let mut pools = synthesis_pools(&shared.cfg)?.into_iter();
        for w in 0..shared.cfg.pw {
            let (sh, rx) = (shared.clone(), work_rx.clone());
            let pool = pools.next().flatten();
            synth_threads.push(spawn(format!("synth-{w}"), Box::new(move || workers::synth_worker(sh, w, rx, pool)))?);
        }
        let mut gpu_threads = Vec::new();
        for d in 0..shared.backends.len() {
            for w in 0..shared.cfg.gw {
                let (sh, tx) = (shared.clone(), fin_tx.clone());
                gpu_threads.push(spawn(format!("gpu-{d}-{w}"), Box::new(move || workers::gpu_worker(sh, d, w, tx)))?);
            }
        }
        let mut fin_threads = Vec::new();
        if shared.cfg.split_finalize {
            for f in 0..shared.cfg.finalizers {
                let (sh, rx) = (shared.clone(), fin_rx.clone());
                fin_threads.push(spawn(format!("final-{f}"), Box::new(move || workers::finalizer(sh, f, rx)))?);
            }
        }
        Ok(Engine { shared, work: Some(work_tx), results, synth_threads, gpu_threads, fin_threads, fin_tx: Some(fin_tx) })
    }

    /// Queue a job; its result arrives on [`Engine::results`].
    pub fn submit(&self, job: Job) {
        let n = job.partitions.len();
        let state = Arc::new(JobState {
            id: job.id.clone(),
            submitted_ns: self.shared.sink.now_ns(),
            inner: Mutex::new(JobSlots { proofs: (0..n).map(|_| None).collect(), remaining: n, failure: None }),
        });
        if n == 0 {
            let _ = self.shared.results.send(JobResult { id: job.id, proofs: Ok(Vec::new()), submitted_ns: state.submitted_ns, finished_ns: state.submitted_ns });
            return;
        }
        if let Some(tx) = &self.work {
            for (p, circuit) in job.partitions.into_iter().enumerate() {
                let _ = tx.send(SynthTask { job: state.clone(), partition: p as u32, circuit });
            }
        }
    }

    pub fn results(&self) -> &Receiver<JobResult> {
        &self.results
    }

    pub fn progress(&self) -> &Progress {
        &self.shared.progress
    }

    pub fn sink(&self) -> &EventSink {
        &self.shared.sink
    }

    /// The pre-compiled constraints, once a synthesis worker has made them (`synthesis = "pce"`).
    pub fn pce(&self) -> Option<Arc<crate::pce::Pce>> {
        self.shared.pce.get()
    }

    /// Nanoseconds since the engine (and its timeline) started.
    pub fn now_ns(&self) -> u64 {
        self.shared.sink.now_ns()
    }

    /// Ask every worker to stop taking work (Ctrl-C). Work in progress is abandoned.
    pub fn abort(&self) {
        self.shared.abort.store(true, Ordering::SeqCst);
        // Syntheses waiting for RAM give up, and so do those waiting for the GPU queue.
        self.shared.ram.close();
        self.shared.placer.abort();
    }

    /// The host-RAM budget (its total, what is reserved now, its peak).
    pub fn ram(&self) -> &budget::RamBudget {
        &self.shared.ram
    }

    /// What the engine reserves: the parameters, the PCE, one partition.
    pub fn memory_plan(&self) -> budget::MemoryPlan {
        self.shared.plan
    }

    /// Drain: finish every submitted job, stop the threads, flush the timeline.
    pub fn shutdown(mut self) -> std::io::Result<(SinkStats, Run)> {
        drop(self.work.take());
        // The synthesis workers close the GPU queue as they stop (the last one closes it).
        for h in self.synth_threads.drain(..) {
            let _ = h.join();
        }
        for h in self.gpu_threads.drain(..) {
            let _ = h.join();
        }
        drop(self.fin_tx.take());
        for h in self.fin_threads.drain(..) {
            let _ = h.join();
        }
        // The idle pooled a/b/c: unlocked, freed and their budget shares released while the
        // timeline still records it (a set still being freed off a worker's path comes back
        // to the pool and goes with it).
        if let Some(pool) = &self.shared.abc_pool {
            let s = pool.stats();
            tracing::debug!("a/b/c pool: {} vectors made ({} idle at the end, {} freed reallocated)", s.made, s.idle, s.spoiled);
            pool.clear();
        }
        self.close_sink(false)
    }

    /// Abort: stop taking work, write the spans still open as open (no end), flush the
    /// timeline, and return without waiting for work in progress.
    pub fn abort_and_flush(mut self) -> std::io::Result<(SinkStats, Run)> {
        self.abort();
        drop(self.work.take());
        drop(self.fin_tx.take());
        // Give workers a moment to notice; those inside a long MSM are left behind.
        std::thread::sleep(Duration::from_millis(20));
        self.close_sink(true)
    }

    fn close_sink(&mut self, mark_open: bool) -> std::io::Result<(SinkStats, Run)> {
        self.shared.sink.finish(mark_open)
    }
}

#[cfg(test)]
mod tests {
    use super::{device_call_slots, synthesis_pools, EngineConfig, SynthesisMode};
    use std::sync::Arc;
    const GIB: u64 = 1 << 30;

    /// The name of the thread a closure runs on in `pool`.
    fn where_it_runs(pool: &rayon::ThreadPool) -> String {
        pool.install(|| std::thread::current().name().unwrap_or("").to_string())
    }

    #[test]
    fn syntheses_never_share_the_pool_where_the_gpu_workers_prepare_their_msms() {
        let cfg = |synthesis, threads| EngineConfig { pw: 3, synthesis, synthesis_threads: threads, ..EngineConfig::default() };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // The default: a pool of the machine's cores per worker.
        let pools: Vec<_> = synthesis_pools(&EngineConfig { pw: 3, ..EngineConfig::default() }).unwrap().into_iter().map(|p| p.expect("a pool")).collect();
        assert_eq!(pools.len(), 3);
        assert!(!Arc::ptr_eq(&pools[0], &pools[1]) && !Arc::ptr_eq(&pools[1], &pools[2]), "a pool each");
        for (w, p) in pools.iter().enumerate() {
            assert_eq!(p.current_num_threads(), cores);
            assert!(where_it_runs(p).starts_with(&format!("synth-{w}-pce-")));
        }
        // Shared: one pool for the three workers, of the machine's cores, not the global one.
        let pools = synthesis_pools(&EngineConfig { synthesis_shared_pool: true, ..cfg(SynthesisMode::Pce, 0) }).unwrap();
        assert_eq!(pools.len(), 3);
        let first = pools[0].clone().expect("a pool on the PCE path");
        assert!(pools.iter().all(|p| p.as_ref().is_some_and(|p| Arc::ptr_eq(p, &first))), "one pool for all workers");
        assert_eq!(first.current_num_threads(), cores);
        let name = where_it_runs(&first);
        assert!(name.starts_with("synth-pce-"), "ran on {name:?}");
        // Work given to the global pool (the GPU workers' MSM preparation) runs elsewhere.
        let (tx, rx) = std::sync::mpsc::channel();
        rayon::spawn(move || tx.send(std::thread::current().name().unwrap_or("").to_string()).unwrap());
        let global = rx.recv().unwrap();
        assert!(!global.starts_with("synth-"), "the global pool ran on {global:?}");
        // N: a pool of N per worker.
        let pools = synthesis_pools(&cfg(SynthesisMode::Pce, 2)).unwrap();
        let pools: Vec<_> = pools.into_iter().map(|p| p.expect("a pool")).collect();
        assert!(!Arc::ptr_eq(&pools[0], &pools[1]));
        for (w, p) in pools.iter().enumerate() {
            assert_eq!(p.current_num_threads(), 2);
            assert!(where_it_runs(p).starts_with(&format!("synth-{w}-pce-")));
        }
        // The circuit path synthesises on the worker's own thread: no pool.
        assert!(synthesis_pools(&cfg(SynthesisMode::Circuit, 0)).unwrap().iter().all(Option::is_none));
        // The run's meta records the threads as resolved and whether the pool was shared.
        let meta = |c: &EngineConfig| {
            let m = super::run_meta(c, &[]);
            (m.extra["synthesis_threads"].clone(), m.extra["synthesis_shared_pool"].clone())
        };
        assert_eq!(meta(&cfg(SynthesisMode::Pce, 0)), (serde_json::json!(cores), serde_json::json!(false)));
        assert_eq!(meta(&EngineConfig { synthesis_shared_pool: true, ..cfg(SynthesisMode::Pce, 2) }), (serde_json::json!(2), serde_json::json!(true)));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn synthesis_nice_lowers_the_syntheses_pools_and_not_the_prep_pool() {
        let here = super::priority::this_threads_nice();
        let nice_of = |p: &rayon::ThreadPool| p.install(super::priority::this_threads_nice);
        let cfg = EngineConfig { pw: 2, synthesis_threads: 2, synthesis_nice: 5, prep_threads: 2, ..EngineConfig::default() };
        for p in synthesis_pools(&cfg).unwrap() {
            assert_eq!(nice_of(&p.expect("a pool")), (here + 5).min(19));
        }
        assert_eq!(nice_of(&super::prep_pool(&cfg).unwrap().expect("a prep pool")), here, "the GPU workers' pool keeps the process's priority");
        let shared = synthesis_pools(&EngineConfig { synthesis_shared_pool: true, ..cfg.clone() }).unwrap();
        assert_eq!(nice_of(shared[0].as_ref().unwrap()), (here + 5).min(19));
        assert_eq!(super::run_meta(&cfg, &[]).extra["synthesis_nice"], serde_json::json!(5));
        // 0, the default: as the process.
        let p = synthesis_pools(&EngineConfig { synthesis_nice: 0, ..cfg }).unwrap();
        assert_eq!(nice_of(p[0].as_ref().unwrap()), here);
    }

    #[test]
    fn the_checks_count_the_calls_a_vram_budget_can_hold() {
        use super::calls_per_device_bound;
        use crate::params::{ParamsInfo, ParamsShape};
        // Run 72's shape at 2^27: ~2^27 aux, A ~87 %, B ~25 %, L every aux.
        let n: u64 = 1 << 27;
        let shape = ParamsShape {
            info: ParamsInfo { circuit_id: "t".into(), num_inputs: 2, num_aux: n - 10, num_constraints: n - 10, domain_size: n, test_only: true },
            ic: 2,
            h: n - 1,
            l: n - 10,
            a: n * 87 / 100,
            b_g1: n / 4,
            b_g2: n / 4,
        };
        let with = |gw: u32, vram_gib: Option<u64>, fallback: bool, ntt: crate::cuda_settings::NttMemory| {
            let mut c = EngineConfig { gw, cpu_fallback: fallback, ..EngineConfig::default() };
            c.memory.vram_budget = vram_gib.map(super::budget::ByteSize::gib);
            c.cuda.ntt_memory = ntt;
            calls_per_device_bound(&c, &shape)
        };
        use crate::cuda_settings::NttMemory::{Auto, Lean, Tables};
        // The least call: lean, tight: max(a/b/c 12 GiB, tails (1 + 0.87 + 0.25)·2^27·36 B ≈ 9.5 GiB).
        // 16 GiB holds one such call: gw 2 counts one.
        assert_eq!(with(2, Some(16), false, Auto), 1);
        assert_eq!(with(2, Some(16), false, Lean), 1);
        // 24 GiB: two lean calls (2 × 12), but with the tables a call needs a/b/c + scratch = 16 GiB.
        assert_eq!(with(2, Some(24), false, Lean), 2);
        assert_eq!(with(2, Some(24), false, Tables), 1);
        // Never more than gw, never fewer than one.
        assert_eq!(with(3, Some(200), false, Auto), 3);
        assert_eq!(with(2, Some(4), false, Auto), 1);
        // With a CPU fallback, or without a VRAM budget: every worker.
        assert_eq!(with(2, Some(16), true, Auto), 2);
        assert_eq!(with(2, None, false, Auto), 2);
    }

    #[test]
    fn call_memory_is_reserved_for_the_calls_a_device_holds_at_once() {
        // A 24 GiB budget, tight calls of 16 GiB: two workers take turns, one call reserved.
        assert_eq!(device_call_slots(2, false, 0, Some(24 * GIB), Some(16 * GIB)), 1);
        // With a CPU fallback each worker may prepare a fallback proof's MSMs: both reserved.
        assert_eq!(device_call_slots(2, true, 0, Some(24 * GIB), Some(16 * GIB)), 2);
        // The whole H200 after the parameters: both workers' calls.
        assert_eq!(device_call_slots(2, false, 0, Some(95 * GIB), Some(28 * GIB)), 2);
        // Less free than one call: still one (placement decides whether it ever runs).
        assert_eq!(device_call_slots(3, false, 0, Some(GIB), Some(16 * GIB)), 1);
        // No memory of its own (the CPU) or nothing to check: every worker.
        assert_eq!(device_call_slots(3, false, 0, None, None), 3);
        assert_eq!(device_call_slots(3, false, 0, Some(GIB), Some(0)), 3);
    }
}
