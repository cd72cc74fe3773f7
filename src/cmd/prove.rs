//! `proofscope prove`: load a parameter file once, start the engine with the TOML
//! config overridden by flags, push J proofs × K partitions of the PoRep-like circuit
//! through it with a progress bar, write the proofs and the timeline (JSON lines and,
//! optionally, a cuzk-format log). Exits 1 when a proof fails or does not verify; on
//! Ctrl-C the timeline is flushed with the open spans marked, exit code 130.
//!
//! Nothing lost: each proof is written as soon as its job completes (to a temporary file,
//! synced, renamed into place), and the timeline is flushed then and at least every
//! second, so a killed run leaves every finished proof on disk, whole, and its timeline up
//! to its last second. A timeline or cuzk log that cannot be written (a full disk) is
//! reported by name and the proving goes on (exit 1 at the end); so does a proof file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use prover::circuit::Family;
use prover::engine::{self, Engine, EngineConfig, JobResult, LockMode};
use prover::events::{EventSink, SinkConfig};
use prover::Parameters;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct Args {
    /// Parameter file made by `proofscope setup` (not with --setup-on-device).
    #[arg(long, required_unless_present = "setup_on_device", conflicts_with = "setup_on_device")]
    pub params: Option<PathBuf>,
    /// Make the parameters in this process instead of reading a file: the TEST-ONLY seeded
    /// setup with its fixed-base multiplications on GPU 0 (cuda builds), for the circuit of
    /// --circuit and --constraints, toxic waste from --setup-seed; the same parameters as
    /// `proofscope setup --seed S`, byte for byte. The timeline's run meta says
    /// `params_source = setup-on-device` and a `setup` span (setup work) holds its time.
    #[arg(long)]
    pub setup_on_device: bool,
    /// With --setup-on-device: constraints of the circuit, 2^8 ..= 2^27.
    #[arg(long, value_parser = timeline::bytes::parse_count, required_if_eq("setup_on_device", "true"), requires = "setup_on_device")]
    pub constraints: Option<u64>,
    /// With --setup-on-device: the circuit family.
    #[arg(long, default_value = "porep-like", value_parser = Family::parse, requires = "setup_on_device")]
    pub circuit: Family,
    /// With --setup-on-device: seed of the toxic waste (TEST-ONLY).
    #[arg(long, default_value_t = 1, requires = "setup_on_device")]
    pub setup_seed: u64,
    /// Engine config (TOML, see prover/configs/engine.example.toml); flags and --set override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override any engine config key by its dotted path (e.g. --set queue_capacity=2
    /// --set cuda.params=stream); applied after the file and the flags. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Proofs (jobs) to make, 1 ..= 100000.
    #[arg(long, default_value_t = 1)]
    pub proofs: u32,
    /// Partitions per proof, 1 ..= 1024 (proofs × partitions ≤ 1000000).
    #[arg(long, default_value_t = 1)]
    pub partitions: u32,
    /// Partition-synthesis workers (engine key `pw`).
    #[arg(long)]
    pub pw: Option<u32>,
    /// GPU workers per device (engine key `gw`).
    #[arg(long)]
    pub gw: Option<u32>,
    /// whole, kernels or two_lock.
    #[arg(long)]
    pub lock: Option<LockMode>,
    /// cpu, cuda or auto.
    #[arg(long)]
    pub backend: Option<String>,
    /// Devices to use (CPU backend: independent CPU "devices", each with its own lock).
    #[arg(long)]
    pub devices: Option<u32>,
    /// CPU tail-MSM bucket method: blst or proofscope.
    #[arg(long)]
    pub cpu_msm: Option<prover::msm::CpuMsm>,
    /// Split finalisation on (true) or off (false).
    #[arg(long)]
    pub split_finalize: Option<bool>,
    /// Finaliser threads with split finalisation (each runs one G2 MSM + assembly at a time).
    #[arg(long)]
    pub finalizers: Option<u32>,
    /// Where the CUDA backend computes the G2 MSM: device (GPU) or cpu (the finisher).
    #[arg(long)]
    pub g2_msm: Option<prover::engine::G2Msm>,
    /// How partitions are synthesised: pce (the default: pre-compiled constraints, cached
    /// beside --params as PARAMS.pce; witness only, then sparse products on
    /// `synthesis_threads` threads) or circuit (the circuit's code builds every constraint).
    /// Engine key `synthesis`.
    #[arg(long)]
    pub synthesis: Option<prover::engine::SynthesisMode>,
    /// Host-RAM budget: `auto` (MemTotal − memory.safety_margin) or a size in GiB (`48`,
    /// `1.5`; or with a unit, `512MiB`). Engine key `memory.total_budget`. A synthesis starts
    /// only when its partition's working set fits; a budget that cannot hold the parameters,
    /// the pre-compiled constraints and one partition is an error before any work.
    #[arg(long, value_name = "auto|GiB", value_parser = parse_ram_budget)]
    pub ram_budget: Option<prover::engine::budget::Budget>,
    /// The host copy of the parameters' queries: `auto` uploads them to every device at start
    /// and frees the host copy of each query every device holds (its RAM-budget share given
    /// back; the CPU fallback is then off), `keep` keeps it. Engine key `memory.params_host`.
    #[arg(long, value_name = "auto|keep", value_parser = prover::engine::budget::ParamsHost::parse)]
    pub params_host: Option<prover::engine::budget::ParamsHost>,
    /// Device memory each CUDA device may use, in GiB (`16`, `24.5`) or with a unit
    /// (`16GiB`): the rest of its free memory is held back when it opens, so it behaves as a
    /// card of that size (its device plan: queries stream, calls run tight, MSMs chunk, lanes
    /// stay off). Engine key `memory.vram_budget`. A budget below what one partition requires
    /// (21 GiB at 2^27) is refused before any work.
    #[arg(long, value_name = "GiB", value_parser = parse_vram_budget)]
    pub vram_budget: Option<prover::engine::budget::ByteSize>,
    /// Verify every proof (exit 1 if any fails).
    #[arg(long)]
    pub verify: bool,
    /// Timeline, JSON lines.
    #[arg(long, default_value = "run.jsonl")]
    pub timeline: PathBuf,
    /// Also write the cuzk `TIMELINE,...` log here.
    #[arg(long)]
    pub cuzk_log: Option<PathBuf>,
    /// Output folder for the proofs (one file per proof).
    #[arg(short, long, default_value = "proofs")]
    pub out: PathBuf,
    /// Witness seed (partition witnesses derive from it).
    #[arg(long, default_value_t = 7)]
    pub witness_seed: u64,
    /// Seed of the blinding randomness (reproducible proofs).
    #[arg(long)]
    pub seed: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// With the cuda backend: NVML sampling period in ms (GPU utilisation, memory used,
    /// power, SM clock as timeline counters of each device in use); 0 = off. Default 50;
    /// at most an hour.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub nvml_ms: Option<u64>,
}

/// `--vram-budget`: a bare number is GiB, else a size with its unit.
fn parse_vram_budget(s: &str) -> Result<prover::engine::budget::ByteSize, String> {
    let b = prover::engine::budget::ByteSize::parse_with(s, Some("GiB"))?;
    if b.0 == 0 {
        return Err(format!("`{s}`: a VRAM budget must be a positive size"));
    }
    Ok(b)
}

fn parse_ram_budget(s: &str) -> Result<prover::engine::budget::Budget, String> {
    prover::engine::budget::parse_cli_budget(s)
}

/// NVML sampling of the devices in use (cuda backend), feeding the run's timeline.
#[cfg(feature = "cuda")]
struct GpuCounters {
    source: Option<Box<dyn prover::gpu::nvml::Source>>,
    devices: Vec<u32>,
    period: Duration,
}

#[cfg(feature = "cuda")]
impl GpuCounters {
    /// Open NVML when the backend is cuda and sampling is on; say once why not otherwise.
    fn open(args: &Args, backends: &[Arc<dyn prover::Backend>], meta: &mut timeline::event::RunMeta) -> Option<GpuCounters> {
        let ms = args.nvml_ms.unwrap_or(50);
        if ms == 0 || backends.first().map(|b| b.name()) != Some("cuda") {
            return None;
        }
        let devices: Vec<u32> = backends.iter().map(|b| b.device()).collect();
        match prover::gpu::nvml::open_nvml(&devices) {
            Ok(source) => {
                meta.extra.insert("nvml_sample_ms".into(), ms.into());
                Some(GpuCounters { source: Some(source), devices, period: Duration::from_millis(ms) })
            }
            Err(why) => {
                tracing::warn!("no GPU counters in the timeline: {why}");
                meta.extra.insert("nvml_error".into(), why.into());
                None
            }
        }
    }

    fn start(&mut self, sink: &EventSink) -> Option<prover::gpu::nvml::NvmlSampler> {
        let source = self.source.take()?;
        Some(prover::gpu::nvml::NvmlSampler::start_with(source, self.devices.clone(), self.period, sink.counters()))
    }
}

/// Most proofs one `prove` makes.
pub const MAX_PROOFS: u32 = 100_000;
/// Most partitions per proof (PoRep has 10).
pub const MAX_PARTITIONS: u32 = 1024;
/// Most partitions in one run (every partition's circuit is queued up front).
pub const MAX_TOTAL_PARTITIONS: u64 = 1_000_000;

/// Check --proofs and --partitions against their bounds.
pub fn check_counts(proofs: u32, partitions: u32) -> anyhow::Result<()> {
    if proofs == 0 || partitions == 0 {
        bail!("--proofs and --partitions must be at least 1");
    }
    if proofs > MAX_PROOFS {
        bail!("--proofs {proofs}: at most {MAX_PROOFS} per run");
    }
    if partitions > MAX_PARTITIONS {
        bail!("--partitions {partitions}: at most {MAX_PARTITIONS} per proof");
    }
    let total = proofs as u64 * partitions as u64;
    if total > MAX_TOTAL_PARTITIONS {
        bail!("--proofs {proofs} × --partitions {partitions} = {total} partitions: at most {MAX_TOTAL_PARTITIONS} per run");
    }
    Ok(())
}

/// What a run produced.
pub struct Outcome {
    pub results: Vec<JobResult>,
    pub failed: usize,
    /// Proof files written.
    pub written: usize,
    /// Outputs that could not be written (proof files, the timeline, the cuzk log), each
    /// reported by name on stderr.
    pub write_errors: usize,
    pub wall: Duration,
    pub interrupted: bool,
    pub params_load: Duration,
    pub backend: String,
}

impl Outcome {
    pub fn seconds_per_proof(&self) -> f64 {
        self.wall.as_secs_f64() / self.results.len().max(1) as f64
    }
}

/// The effective engine config: file (or defaults) overridden by flags.
pub fn engine_config(args: &Args) -> anyhow::Result<EngineConfig> {
    let mut cfg = match &args.config {
        Some(p) => EngineConfig::from_file(p)?,
        None => EngineConfig::default(),
    };
    if let Some(v) = args.pw {
        cfg.pw = v;
    }
    if let Some(v) = args.gw {
        cfg.gw = v;
    }
    if let Some(v) = args.lock {
        cfg.lock = v;
    }
    if let Some(v) = &args.backend {
        cfg.backend = v.clone();
    }
    if let Some(v) = args.devices {
        cfg.devices = v;
    }
    if let Some(v) = args.cpu_msm {
        cfg.cpu_msm = v;
    }
    if let Some(v) = args.finalizers {
        cfg.finalizers = v;
    }
    if let Some(v) = args.g2_msm {
        cfg.g2_msm = v;
    }
    if let Some(v) = args.synthesis {
        cfg.synthesis = v;
    }
    if let Some(v) = args.split_finalize {
        cfg.split_finalize = v;
    }
    if args.verify {
        cfg.verify = true;
    }
    if let Some(b) = args.ram_budget {
        cfg.memory.total_budget = b;
    }
    if let Some(h) = args.params_host {
        cfg.memory.params_host = h;
    }
    if let Some(v) = args.vram_budget {
        cfg.memory.vram_budget = Some(v);
    }
    if args.seed.is_some() {
        cfg.seed = args.seed;
    }
    cfg.validate()?;
    for kv in &args.set {
        let (k, v) = timeline::settings::split_assignment(kv)?;
        cfg.set(k, v)?;
    }
    Ok(cfg)
}

/// Where the engine's parameters come from (the run meta's `params_source`).
pub enum ParamsIn {
    /// Already in memory: read from a file (`file`) or made by the caller (`demo`'s CPU
    /// setup, `setup-cpu`), with the time it took.
    Ready { params: Arc<Parameters>, load: Duration, source: &'static str },
    /// Made here by the TEST-ONLY setup with the GPU muls, once the timeline is open (span
    /// `setup`), before the engine starts: `setup-on-device`.
    SetupOnDevice { circuit: prover::circuit::BenchCircuit, seed: u64 },
}

/// Run the engine on the parameters of `params_in` (used by `prove` and `demo`). Proofs go
/// to `args.out` as their jobs complete.
pub fn run_engine(args: &Args, params_in: ParamsIn) -> anyhow::Result<Outcome> {
    check_counts(args.proofs, args.partitions)?;
    let cfg = engine_config(args)?;
    let circuit_id = match &params_in {
        ParamsIn::Ready { params, .. } => params.info.circuit_id.clone(),
        ParamsIn::SetupOnDevice { circuit, .. } => circuit.id(),
    };
    let (family, constraints) = Family::from_id(&circuit_id).with_context(|| {
        format!("parameter file is for circuit `{circuit_id}`, not one of the families this command can build ({})", Family::ALL.map(Family::name).join(", "))
    })?;
    if let ParamsIn::SetupOnDevice { .. } = &params_in {
        // Before the setup's minutes: a VRAM budget that cannot hold one partition of the domain.
        engine::check_vram_budget_for_domain(&cfg, constraints.next_power_of_two())?;
    }
    let out = super::output::dir(&args.out)?;
    let backends = engine::backends_for_config(&cfg).map_err(anyhow::Error::msg)?;
    let backend = backends[0].name().to_string();
    let mut meta = engine::run_meta(&cfg, &backends);
    meta.config.proofs = Some(args.proofs);
    meta.config.partitions = Some(args.partitions);
    meta.config.constraints = Some(constraints);
    meta.extra.insert("circuit".into(), circuit_id.clone().into());
    match &params_in {
        ParamsIn::Ready { params, load, source } => {
            meta.extra.insert("params_source".into(), (*source).into());
            meta.extra.insert("params_load_ms".into(), (load.as_secs_f64() * 1e3).into());
            meta.extra.insert("test_only_params".into(), params.info.test_only.into());
        }
        ParamsIn::SetupOnDevice { seed, .. } => {
            meta.extra.insert("params_source".into(), "setup-on-device".into());
            meta.extra.insert("setup_seed".into(), (*seed).into());
            meta.extra.insert("test_only_params".into(), true.into());
        }
    }
    #[cfg(feature = "cuda")]
    let mut gpu_counters = GpuCounters::open(args, &backends, &mut meta);
    #[cfg(not(feature = "cuda"))]
    let _ = args.nvml_ms;
    let mut sink_cfg = SinkConfig { meta, rss_every: (cfg.rss_sample_ms > 0).then(|| Duration::from_millis(cfg.rss_sample_ms)), ..Default::default() };
    sink_cfg = sink_cfg.jsonl_file(&args.timeline).with_context(|| format!("creating {}", args.timeline.display()))?;
    if let Some(p) = &args.cuzk_log {
        sink_cfg = sink_cfg.cuzk_file(p).with_context(|| format!("creating {}", p.display()))?;
    }
    let sink = EventSink::start(sink_cfg).context("starting the timeline writer")?;
    let stop = engine::interrupt_flag().context("installing the Ctrl-C handler")?;
    #[cfg(feature = "cuda")]
    let sampler = gpu_counters.as_mut().and_then(|g| g.start(&sink));
    let (params, params_load, pce) = match params_in {
        ParamsIn::Ready { params, load, .. } => (params, load, None),
        ParamsIn::SetupOnDevice { circuit, seed } => {
            // The RAM budget against the parameters' shape as soon as the constraints are
            // extracted, before the setup's multiplications (at 2^27 a minute earlier).
            let check = |shape: &prover::params::ParamsShape| engine::check_ram_budget(&cfg, shape, None).map(|_| ()).map_err(|e| e.to_string());
            let (params, pce, took) = tracing::dispatcher::with_default(&sink.dispatch(), || setup_on_device(&circuit, seed, &check))?;
            tracing::info!("setup on device: {} ({} constraints) in {:.2} s — TEST-ONLY parameters", circuit.id(), params.info.num_constraints, took.as_secs_f64());
            (Arc::new(params), took, Some(Arc::new(pce)))
        }
    };
    // The PCE cache lives beside the parameter file (when there is one: `demo` and
    // --setup-on-device have none; the latter hands its PCE over).
    let opts = engine::StartOptions { params_path: args.params.as_ref().filter(|p| p.is_file()).cloned(), pce };
    let engine = Engine::start_with(cfg, params, backends, sink, opts)?;
    let t0 = Instant::now();
    for job in engine::bench_jobs(family, args.proofs, args.partitions, constraints, args.witness_seed) {
        engine.submit(job);
    }
    let total = args.proofs as u64 * args.partitions as u64;
    let bar = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new(total) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} partitions  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut results = Vec::new();
    let mut interrupted = false;
    let (mut written, mut write_errors) = (0, 0);
    // The timeline up to a proof's end (every span of the job was sent before its result),
    // then the proof, whole (a later crash cannot lose it): a proof on disk always has its
    // events in the timeline.
    let mut keep = |r: JobResult, results: &mut Vec<JobResult>| {
        engine.sink().flush();
        match write_proof(&out, &r) {
            Ok(true) => written += 1,
            Ok(false) => {}
            Err(e) => {
                bar.suspend(|| tracing::error!("{e:#}"));
                write_errors += 1;
            }
        }
        results.push(r);
    };
    while results.len() < args.proofs as usize {
        if stop.load(Ordering::Relaxed) {
            // Proofs the engine finished before the signal are written, not lost with the
            // work in flight (run 69 lost one that ended a second before its timeout).
            while let Ok(r) = engine.results().try_recv() {
                keep(r, &mut results);
            }
            interrupted = results.len() < args.proofs as usize;
            break;
        }
        if let Ok(r) = engine.results().recv_timeout(Duration::from_millis(100)) {
            keep(r, &mut results);
        }
        let p = engine.progress();
        bar.set_position(p.partitions_done.load(Ordering::Relaxed) + p.partitions_failed.load(Ordering::Relaxed));
        let done = results.len();
        let rate = if done > 0 { format!("{:.2} s/proof", t0.elapsed().as_secs_f64() / done as f64) } else { "– s/proof".into() };
        bar.set_message(format!("proofs {done}/{}  {rate}", args.proofs));
    }
    let wall = t0.elapsed();
    bar.finish_and_clear();
    #[cfg(feature = "cuda")]
    if let Some(s) = sampler {
        s.stop();
    }
    let (stats, _) = if interrupted { engine.abort_and_flush()? } else { engine.shutdown()? };
    if interrupted {
        tracing::warn!("interrupted: timeline flushed to {} ({} spans, {} left open)", args.timeline.display(), stats.spans, stats.open_spans);
    }
    // The writer reported each failed output by name as it failed.
    write_errors += stats.errors.len();
    let failed = results.iter().filter(|r| r.proofs.is_err()).count();
    Ok(Outcome { results, failed, written, write_errors, wall, interrupted, params_load, backend })
}

/// The TEST-ONLY setup of `circuit` with the fixed-base multiplications on GPU 0, in a
/// `setup` span (args: the phases' times, ms, [`prover::setup::SetupTimes`]): the circuit's
/// pre-compiled constraints (kept for the engine) extracted while the Lagrange basis and the
/// comb tables are made beside it, the per-variable scalars, the muls (of which kernels,
/// uploads, downloads).
#[cfg(feature = "cuda")]
fn setup_on_device(circuit: &prover::circuit::BenchCircuit, seed: u64, check: &dyn Fn(&prover::params::ParamsShape) -> Result<(), String>) -> anyhow::Result<(Parameters, prover::pce::Pce, Duration)> {
    use timeline::event::kind;
    use tracing::field::Empty;
    let t0 = Instant::now();
    let span = tracing::info_span!(
        kind::SETUP,
        on = "gpu",
        constraints = Empty,
        extract_ms = Empty,
        prepare_ms = Empty,
        scalars_ms = Empty,
        lagrange_ms = Empty,
        columns_ms = Empty,
        tables_ms = Empty,
        muls_ms = Empty,
        kernel_ms = Empty,
        h2d_ms = Empty,
        d2h_ms = Empty,
        bytes = Empty
    );
    let _e = span.enter();
    let gpu = prover::gpu::Gpu::open(0, prover::gpu::CudaSched::Auto).context("setup on device: opening GPU 0")?;
    let waste = prover::setup::ToxicWaste::from_seed(seed);
    let (params, pce, t) = prover::setup::generate_overlapped_checked(circuit.clone(), &circuit.id(), circuit.constraints() as usize, waste, prover::setup::MulsOn::Gpu(&gpu), check).context("setup on device")?;
    drop(gpu);
    span.record("constraints", params.info.num_constraints);
    for (k, v) in t.fields() {
        span.record(k, v);
    }
    let points = (params.h.len() + params.l.len() + params.a.len() + params.b_g1.len() + params.vk.ic.len()) as u64;
    span.record("bytes", points * 96 + params.b_g2.len() as u64 * 192);
    Ok((params, pce, t0.elapsed()))
}

#[cfg(not(feature = "cuda"))]
fn setup_on_device(_: &prover::circuit::BenchCircuit, _: u64, _: &dyn Fn(&prover::params::ParamsShape) -> Result<(), String>) -> anyhow::Result<(Parameters, prover::pce::Pce, Duration)> {
    bail!("--setup-on-device needs a build with the cuda feature (scripts/build-gpu-binary.sh)")
}

/// Write one job's proof files (a failed job has none: `Ok(false)`), each whole or not at
/// all and synced: `<out>/<job>.proof` (192 bytes per partition, in order) and the public
/// inputs as JSON (`<job>.inputs.json`, one array of hex field elements per partition).
pub fn write_proof(out: &Path, r: &JobResult) -> anyhow::Result<bool> {
    let Ok(parts) = &r.proofs else { return Ok(false) };
    let mut bytes = Vec::with_capacity(parts.len() * prover::proof::PROOF_BYTES);
    let mut inputs = Vec::new();
    for p in parts {
        bytes.extend_from_slice(&p.proof.to_bytes());
        inputs.push(p.public_inputs.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>());
    }
    // The inputs first: a `.proof` file on disk always has its inputs beside it.
    let ipath = out.join(format!("{}.inputs.json", r.id));
    super::output::write_atomic(&ipath, &serde_json::to_vec_pretty(&inputs)?)?;
    super::output::write_atomic(&out.join(format!("{}.proof", r.id)), &bytes)?;
    Ok(true)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Every argument is checked before any work (the parameter file can take minutes).
    let cfg = engine_config(&args)?;
    check_counts(args.proofs, args.partitions)?;
    super::output::check_dir(&args.out)?;
    let params_in = match (&args.params, args.constraints) {
        (Some(path), _) => {
            // The RAM budget against the parameter file's shape, from its header (an
            // unreadable header is the loader's error to report, below).
            if let Ok(shape) = Parameters::read_shape(path) {
                engine::check_ram_budget(&cfg, &shape, Some(path))?;
            }
            let (params, report) = Parameters::read_file(path).context("loading parameters")?;
            tracing::info!(
                "loaded {} ({}, {:.1} MiB, points {}) in {:.2} s (hash {:.2} s, decode {:.2} s){}",
                path.display(),
                params.info.circuit_id,
                report.bytes as f64 / (1 << 20) as f64,
                report.encoding.name(),
                report.elapsed.as_secs_f64(),
                report.hash.as_secs_f64(),
                report.decode.as_secs_f64(),
                if params.info.test_only { " — TEST-ONLY parameters" } else { "" }
            );
            ParamsIn::Ready { params: Arc::new(params), load: report.elapsed, source: "file" }
        }
        (None, Some(n)) => {
            args.circuit.check_size(n).map_err(anyhow::Error::msg)?;
            let circuit = args.circuit.circuit(n, 0);
            circuit.check().map_err(anyhow::Error::msg)?;
            if !cfg!(feature = "cuda") {
                bail!("--setup-on-device needs a build with the cuda feature (scripts/build-gpu-binary.sh)");
            }
            tracing::warn!("TEST-ONLY trusted setup on the device (toxic waste from seed {}); never use these parameters for anything real.", args.setup_seed);
            ParamsIn::SetupOnDevice { circuit, seed: args.setup_seed }
        }
        (None, None) => bail!("--params FILE or --setup-on-device --constraints N"),
    };
    let outcome = run_engine(&args, params_in)?;
    for r in &outcome.results {
        if let Err(e) = &r.proofs {
            tracing::error!("{}: FAILED: {e}", r.id);
        }
    }
    println!(
        "{} proofs × {} partitions on {}: {} ok, {} failed{}; {:.2} s/proof ({:.2} s wall); proofs in {}, timeline in {}",
        outcome.results.len(),
        args.partitions,
        outcome.backend,
        outcome.results.len() - outcome.failed,
        outcome.failed,
        if args.verify && outcome.failed == 0 { " (all verified)" } else { "" },
        outcome.seconds_per_proof(),
        outcome.wall.as_secs_f64(),
        args.out.display(),
        args.timeline.display()
    );
    if outcome.write_errors > 0 {
        tracing::error!("{} output(s) could not be written (named above); {} proof file(s) written", outcome.write_errors, outcome.written);
    }
    if outcome.interrupted {
        return Ok(ExitCode::from(130));
    }
    Ok(if outcome.failed > 0 || outcome.write_errors > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_bounds() {
        check_counts(1, 1).unwrap();
        check_counts(MAX_PROOFS, 10).unwrap();
        for (j, k, want) in [(0, 1, "at least 1"), (1, 0, "at least 1"), (MAX_PROOFS + 1, 1, "--proofs"), (1, MAX_PARTITIONS + 1, "--partitions"), (100_000, 100_000, "--partitions"), (10_000, 1000, "10000000 partitions")] {
            let e = check_counts(j, k).unwrap_err().to_string();
            assert!(e.contains(want), "{j} x {k}: {e}");
        }
    }
}
