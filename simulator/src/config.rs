//! The simulator's input: one TOML file describing the machine, the pipeline's knobs, the
//! memory footprints, the per-partition phase costs and the contention model. Parsed
//! strictly (`deny_unknown_fields`) and validated, so that a typo or an impossible
//! combination is an error naming the field and the reason, never a panic or a silent
//! default. [`Config::set`] applies the `--vary key=value` overrides of `sweep`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::costs::Dist;
pub use crate::memory::{Budget, ByteSize, Circuit};
use crate::memory::GIB;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
}

/// Upper bounds of the counts of a config (documented in docs/reference/config.md): the
/// simulator allocates per worker, GPU and partition, so a count from a typo (`pw = 4e9`)
/// is refused by name rather than allocating gigabytes.
pub mod limits {
    /// Partition-synthesis workers (as the engine's `pw`).
    pub const PW: u32 = 4096;
    /// GPU workers per device.
    pub const GW: u32 = 64;
    /// GPUs.
    pub const GPUS: u32 = 64;
    /// Finaliser threads.
    pub const FINALIZERS: u32 = 4096;
    /// Proofs of one run, and proofs in flight.
    pub const PROOFS: u32 = 100_000;
    /// Partitions per proof.
    pub const PARTITIONS: u32 = 10_000;
    /// Partitions of one run (proofs × partitions): about 30 MB of state, or 600 MB with a
    /// recorded timeline (`--timeline`, `--compare-to`).
    pub const TOTAL_PARTITIONS: u64 = 200_000;
    /// Seconds between periodic arrivals (10 years).
    pub const PERIOD_S: f64 = 10.0 * 365.25 * 86_400.0;
    /// Largest machine quantity (cores, GiB, GB/s) and CPU demand: 1e9.
    pub const QUANTITY: f64 = 1e9;
}

/// A size given to `--set` / `--vary`: a TOML literal like any setting, read as the file
/// reads it (an integer of bytes, or a string with a unit: `128GiB`; `auto` for a budget).
fn size_setting<T: serde::de::DeserializeOwned>(raw: &str) -> Result<T, String> {
    timeline::settings::parse_value(raw).try_into::<T>().map_err(|e| e.message().to_string())
}

fn invalid(field: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { field: field.to_string(), reason: reason.into() }
}

/// The whole model description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Free-form scenario name (shown in reports).
    #[serde(default)]
    pub name: String,
    /// Seed of the random streams (only distributions other than `fixed` use it).
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub machine: Machine,
    pub pipeline: Pipeline,
    pub memory: Memory,
    pub costs: Costs,
    /// The circuit of one partition (optional): with it, `memory.partition_gib` and
    /// `abc_gib` follow from the working-set formula ([`crate::memory::working_set`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circuit: Option<Circuit>,
    #[serde(default)]
    pub cpu: CpuDemands,
    #[serde(default)]
    pub contention: Contention,
    #[serde(default, skip_serializing_if = "Uncertainty::is_default")]
    pub uncertainty: Uncertainty,
    /// A mix of proof types (`[[mix]]`, optional): each type's SRS and PCE are loaded on
    /// demand from the host budget and evicted when idle ([`ProofType`]); absent: one proof
    /// type whose parameters (`memory.params_gib`, `pce_gib`) are resident from the start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<ProofType>,
    /// What a fresh engine does once before its first synthesis and in its first calls
    /// (optional; absent: nothing, the run starts warm).
    #[serde(default, skip_serializing_if = "Startup::is_default")]
    pub startup: Startup,
}

/// One-time costs of a fresh engine, measured by `calibrate` (every run of a campaign starts
/// one): they are outside every steady state but inside the makespan, so a model without
/// them predicts total s/proof and latency short (campaigns 18–20 on the H200: total
/// s/proof −7 % on average, first synthesis 0.8 s later than simulated).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Startup {
    /// From the run's start to its first synthesis, besides the two items below (the
    /// engine's threads and reservations), s.
    #[serde(default)]
    pub engine_s: f64,
    /// Uploading the parameters to the device (the `h2d` span `what = params`), s; only
    /// when they are resident on the device (not streamed).
    #[serde(default)]
    pub params_upload_s: f64,
    /// When the parameters go up: `start` (before any synthesis: the engine's
    /// `memory.params_host = auto`) or `first_call` (inside each device's first call: a host
    /// copy kept, `params_host = keep`).
    #[serde(default)]
    pub params_upload: ParamsUpload,
    /// Reading the pre-compiled constraints from their cache, s: every partition waits for
    /// it (`pce_wait`). Without `[[mix]]` only (a mix loads its types' PCE on demand).
    #[serde(default)]
    pub pce_load_s: f64,
    /// Allocating one upload staging set (page-locked host memory), s: paid by an upload
    /// that starts while every set of its device is in use — the first calls (`staging_ns`
    /// of the `h2d` spans: 70–110 ms at 2^22 on the H200, once per concurrent upload).
    #[serde(default)]
    pub staging_alloc_s: f64,
}

impl Startup {
    pub fn is_default(&self) -> bool {
        *self == Startup::default()
    }
}

/// When a fresh engine uploads its parameters to the device ([`Startup::params_upload`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParamsUpload {
    #[default]
    Start,
    FirstCall,
}

/// One proof type of a mixed workload (a `[[mix]]` entry). Its SRS (Groth16 parameters) and
/// PCE (pre-compiled constraints) are not resident at t = 0: the first proof of the type
/// reserves both from the host budget, loads them (`srs_load_s`, `pce_load_s`, side by side)
/// and only then may its partitions synthesise; idle entries are evicted under pressure
/// (`memory.eviction_min_idle`), as the cuzk daemon's memory manager does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProofType {
    /// The type's name, written as each job's `kind` in the timeline so that `analyze`
    /// reports per type (the analyzer's names: `porep-c2`, `snap-deals`, `window-post`,
    /// `winning-post`).
    pub name: String,
    /// Its share of the arrivals (a relative weight > 0). Proof i gets the type of a smooth
    /// weighted round robin (each arrival goes to the type furthest behind its share, ties to
    /// the first listed): deterministic, no random numbers drawn (1:1 alternates A, B, A, B).
    #[serde(default = "one")]
    pub share: f64,
    /// Partitions per proof; absent: `pipeline.partitions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    /// Its synthesis cost relative to `costs.synth` (1: the same).
    #[serde(default = "one")]
    pub synth_scale: f64,
    /// Its GPU call's work relative to the config's (`prep_msm`, the kernels `ntt_msm_h`,
    /// `batch_add`, `tail_msm`, `msm_rest`, `msm_b_g2`, and `b_g2_msm`; not the epilogue,
    /// alloc, pickup or upload).
    #[serde(default = "one")]
    pub gpu_scale: f64,
    /// SRS (Groth16 parameters) on the host, GiB: reserved from the budget while resident.
    pub srs_gib: f64,
    /// PCE (pre-compiled constraints) on the host, GiB.
    pub pce_gib: f64,
    /// Time to load the SRS (the reference: 30–60 s), s.
    pub srs_load_s: f64,
    /// Time to load the PCE from disk (the reference: ~5 s), s.
    pub pce_load_s: f64,
}

/// What the cost distributions do not say about a prediction's spread ([`crate::interval`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Uncertainty {
    /// Run-to-run spread of the same configuration on the machine, as a relative standard
    /// deviation (0.05 = 5 %): measured by `calibrate` from repeated runs of one
    /// configuration; 0: only the replications' spread.
    #[serde(default)]
    pub run_spread: f64,
    /// The model's own error where it was fitted, as a relative standard deviation: `calibrate`
    /// simulates each calibration run at its shape and takes the RMS of the relative errors of
    /// its steady s/proof (an underestimate of the error elsewhere; it holds each run's own
    /// noise too, which the run spread also counts, so the sum leans wide); added to the run
    /// spread in quadrature. 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub model_error: f64,
    /// The model's miss on its calibration runs, by pw: measured ÷ modelled steady s/proof
    /// (geometric mean over the runs at that pw), written by `calibrate`. `campaign predict`
    /// carries part of it over to each configuration ([`crate::discrepancy`]); empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibration_bias: Vec<BiasPoint>,
}

/// One calibration pw's measured ÷ modelled steady s/proof ([`Uncertainty::calibration_bias`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BiasPoint {
    /// The calibration runs' pw (concurrent syntheses).
    pub pw: u32,
    /// Measured ÷ modelled steady s/proof there (above 1: the model was fast).
    pub ratio: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Uncertainty {
    fn is_default(&self) -> bool {
        *self == Uncertainty::default()
    }
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// Host CPU cores shared by synthesis, prep and finalisation (threads: a phase never
    /// asks for more).
    pub cpu_cores: f64,
    /// The CPU work the host delivers per second when its cores are oversubscribed, in
    /// isolated-core units (each phase's costs are its times alone): below `cpu_cores` where
    /// the cores do not add up — the H200 host, a KVM guest of 16 vCPUs, delivered about 7
    /// (campaigns of 2026-12-03 at 2^22: one synthesis alone 0.29 s, eight at once 1.2 s
    /// each). Absent = `cpu_cores`; `calibrate` fits it by simulating its runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_capacity: Option<f64>,
    /// Host memory bandwidth, GB/s (processor-shared by the memory-bound phases).
    pub mem_bandwidth_gbs: f64,
    /// Host RAM capacity, GiB.
    pub ram_gib: f64,
    /// Number of GPUs.
    pub gpus: u32,
    /// VRAM per GPU, GiB.
    pub vram_gib: f64,
    /// Host-to-device bandwidth per GPU, GB/s (PCIe).
    pub pcie_gbs: f64,
}

impl Machine {
    /// The cores' capacity of the processor sharing: `cpu_capacity`, at most `cpu_cores`.
    pub fn capacity(&self) -> f64 {
        self.cpu_capacity.map_or(self.cpu_cores, |c| c.min(self.cpu_cores))
    }
}

pub use timeline::event::LockMode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RamPolicy {
    /// A synthesis that would exceed RAM waits until memory is released.
    Block,
    /// Exceeding RAM ends the run as `ram_oom` (what an engine without backpressure does).
    Fail,
}

/// How partitions of the shared GPU queue are placed on devices ([`Pipeline::placement`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The GPU worker idle longest takes it, whatever its device.
    #[default]
    FirstIdle,
    /// The engine's placement (`prover::engine::placement`): among devices with an idle
    /// worker that can hold the call (committed VRAM + `memory.call_vram_gib` ≤ the usable
    /// VRAM), the one with the fewest calls placed and not ended, then the lowest index.
    Memory,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Arrival {
    /// Every proof request is there at t = 0.
    #[default]
    AllAtOnce,
    /// One proof request every `period_s` seconds, the first at t = 0.
    Periodic { period_s: f64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// c: proof requests in the run.
    pub proofs: u32,
    /// j: proofs admitted at once (their partitions may be synthesised).
    pub in_flight: u32,
    /// Partitions per proof.
    pub partitions: u32,
    /// Proofs whose partitions are being synthesised at once (the cuzk daemon's
    /// `pipeline.synthesis_concurrency`): a proof holds its slot from admission until its
    /// last partition's synthesis ends; absent = no limit beyond `in_flight`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis_concurrency: Option<u32>,
    /// Threads of the GPU workers' own pool for their CPU steps (the prover engine's
    /// `prep_threads`): together those steps use at most this many cores, each slowed by the
    /// pool ÷ their demand; absent = no pool of their own (rayon's global pool, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prep_threads: Option<u32>,
    /// Partition-synthesis workers.
    pub pw: u32,
    /// GPU workers per device.
    pub gw: u32,
    /// Partitions the GPU queue holds; absent = unbounded.
    #[serde(default)]
    pub queue_capacity: Option<u32>,
    pub lock: LockMode,
    /// two_lock only: the allocation path calls device-global synchronisation
    /// (cudaDeviceSynchronize / cudaMemPoolTrimTo) that waits for every stream of the device.
    #[serde(default)]
    pub device_global_sync: Option<bool>,
    /// G2 MSM and proof assembly run off the GPU worker (split async API).
    #[serde(default)]
    pub split_finalize: bool,
    /// With split finalisation: finaliser threads, each running one partition's G2 MSM and
    /// epilogue at a time (the prover's `finalizers`); absent = unlimited (every finished
    /// call finalises at once, as a spawn-per-partition API does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<u32>,
    /// Each GPU worker owns a pre-allocated VRAM staging buffer (reserved at start). With
    /// `whole`/`kernels` the upload into it runs outside the lock (pinned, overlapped with
    /// compute, Phase 9); with `two_lock` it stays under the VRAM lock (Phase 10).
    #[serde(default)]
    pub prestage: bool,
    /// A partition worker holds its permit until the GPU queue accepts the partition
    /// (backpressure); otherwise it is released at the end of synthesis and finished
    /// partitions pile up without bound.
    #[serde(default)]
    pub permit_until_send: bool,
    /// An upload does not overlap another worker's kernels: it queues behind them (what
    /// `calibrate` assumed of this engine's CUDA backend until 2026-12-03, from uploads of 35
    /// ms alone and 92 ms beside the other worker's kernels, runs 84–87; it now sets
    /// `upload_after_prep` instead). Under `kernels` without `prestage`
    /// the upload is in the lock anyway; under `two_lock` without `prestage` it then runs under
    /// the compute lock instead of the VRAM lock.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uploads_wait_for_kernels: bool,
    /// The call uploads its a/b/c right after its preparation, into device memory it
    /// allocates for the call, before it asks for the compute lock — this engine's CUDA
    /// backend (`device_part_on`: prep, upload, then `gate.compute()`): under `kernels` the
    /// upload is outside the lock (it overlaps the other worker's kernels; runs 91–94 at 2^22:
    /// the lock held 108–117 ms a partition against 105 ms of kernels, not kernels + the
    /// 35 ms upload); under `two_lock` the allocation lock covers the preparation and the
    /// upload; under `whole` the order inside the lock only. Not with `prestage` or
    /// `uploads_wait_for_kernels`; `calibrate` sets it for a run of this engine's CUDA backend.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub upload_after_prep: bool,
    /// Which idle GPU worker takes the next partition of the shared GPU queue (matters with
    /// several GPUs): `first_idle` (default; the one idle longest, whatever its device: a
    /// shared channel, as the cuzk daemon) or `memory` (the proofscope engine's placement: a
    /// device that can hold the call's VRAM beside the calls placed on it, then the fewest
    /// calls in flight, then the lowest device index).
    #[serde(default)]
    pub placement: Placement,
    /// What happens when a synthesis would exceed RAM.
    #[serde(default = "default_ram_policy")]
    pub ram_policy: RamPolicy,
    #[serde(default)]
    pub arrival: Arrival,
}

fn default_ram_policy() -> RamPolicy {
    RamPolicy::Fail
}

/// Where a GPU call's upload runs against its preparation and the locks: one value from the
/// three flags a config keeps (`prestage`, `upload_after_prep`, `uploads_wait_for_kernels`;
/// old files name them, and `validate` rejects the contradictory pairs), so that the call's
/// program ([`crate::pipeline`]) decides on one thing instead of three booleans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadOrder {
    /// Into the worker's pre-staged buffer, beside the preparation (`prestage`).
    Prestaged,
    /// After the preparation, before the compute lock is asked for (`upload_after_prep`:
    /// this engine's CUDA backend).
    AfterPrep,
    /// Under the compute lock, behind the other worker's kernels (`uploads_wait_for_kernels`).
    BehindKernels,
    /// Where the lock mode puts it: inside the lock (`whole`, `kernels`) or the VRAM lock
    /// (`two_lock`).
    InLock,
}

impl Pipeline {
    /// The upload's place ([`UploadOrder`]): `prestage` first (it keeps its buffer whatever
    /// the other two say), then `upload_after_prep`, then `uploads_wait_for_kernels`.
    pub fn upload_order(&self) -> UploadOrder {
        if self.prestage {
            UploadOrder::Prestaged
        } else if self.upload_after_prep {
            UploadOrder::AfterPrep
        } else if self.uploads_wait_for_kernels {
            UploadOrder::BehindKernels
        } else {
            UploadOrder::InLock
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Resident before any proof besides the parameters and PCE (process, CUDA host
    /// state; for older configs: everything resident, SRS and PCE included), GiB.
    pub baseline_gib: f64,
    /// Groth16 parameters (SRS) resident on the host, GiB: counted against the budget.
    #[serde(default)]
    pub params_gib: f64,
    /// Pre-compiled constraints resident on the host, GiB: counted against the budget.
    #[serde(default)]
    pub pce_gib: f64,
    /// Footprint of one partition from synthesis start, GiB; absent: the working-set
    /// formula of `[circuit]` ([`crate::memory::working_set`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_gib: Option<f64>,
    /// Part of it (a/b/c) released early, if `early_release`: once the GPU call has done
    /// its prep and the a/b/c part of its upload, as the engine does; absent: 3·n·32 B
    /// from `[circuit]`, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abc_gib: Option<f64>,
    #[serde(default)]
    pub early_release: bool,
    /// What the process holds of what it reserves: the model's RSS (its `rss_bytes` counter,
    /// the peak a campaign scores) is `rss_offset_gib` + `rss_per_reserved` × the reserved
    /// memory (which alone decides admission). Absent: 1 and 0 (RSS = reserved). `calibrate`
    /// fits both from its runs' peaks of the two counters (the engine reserves a partition's
    /// whole working set and the parameters' host copy, and touches less: at 2^22 on the H200,
    /// 6.2 GiB resident at a reserved peak of 7.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_per_reserved: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rss_offset_gib: f64,
    /// One byte budget for everything on the host (the cuzk daemon's `memory.total_budget`):
    /// resident items plus every partition's reservation. A synthesis starts only when its
    /// reservation fits (else it waits: a `ram_wait` span). `"auto"` = machine RAM −
    /// `safety_margin`. Absent: no budget (`pipeline.ram_policy` against the machine's RAM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_budget: Option<Budget>,
    /// Kept back for the OS with `total_budget = "auto"`; default 5 GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_margin: Option<ByteSize>,
    /// VRAM in use before any worker starts (context, resident tables), GiB.
    #[serde(default)]
    pub vram_baseline_gib: f64,
    /// With `prestage`: the staging buffer each GPU worker allocates at start, GiB.
    #[serde(default)]
    pub prestage_vram_gib: f64,
    /// Without `prestage`: VRAM a call allocates from its upload to the end of its kernels, GiB.
    #[serde(default)]
    pub call_vram_gib: f64,
    /// Caps the VRAM the engine may use per device (the engine's `--vram-budget`), so a
    /// large card behaves like a small one; absent: the whole card (`machine.vram_gib`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vram_budget_gib: Option<f64>,
    /// The Groth16 parameters' size on the device, GiB (0: not modelled, i.e. inside
    /// `vram_baseline_gib` or not on the device).
    #[serde(default)]
    pub params_vram_gib: f64,
    /// Parameters resident on the device, or streamed over PCIe for every partition;
    /// `auto`: resident when they fit beside the baseline and one worker's buffers.
    #[serde(default)]
    pub params_on_device: ParamsPlacement,
    /// Streamed parameters: the transfer overlaps the kernels (double-buffered chunks: the
    /// kernel region lasts max(kernels, stream)) instead of adding to them.
    #[serde(default)]
    pub params_stream_overlap: bool,
    /// Streamed parameters reach the kernels at this rate, GB/s (absent: `machine.pcie_gbs`).
    /// An engine that streams through small synchronous chunks gets far less than the link:
    /// the proofscope engine's tight calls, 2.5 GB/s on the H200 ([`crate::prereg`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_stream_gbs: Option<f64>,
    /// When a call's or a worker's VRAM does not fit: `fail` (`vram_oom`, what an engine
    /// without a device budget does) or `wait` (the call waits for VRAM to be freed;
    /// pre-staged buffers that do not fit leave their workers idle: workers serialise).
    #[serde(default)]
    pub vram_policy: VramPolicy,
    /// With `[[mix]]`: an SRS or PCE entry no in-flight proof uses may be evicted (oldest
    /// idle first, only when a load does not fit) once it has been idle this long (the cuzk
    /// daemon's `memory.eviction_min_idle`): seconds, or a duration string (`"5m"`,
    /// `"90s"`, `"1h"`); default 300 s. Without a mix nothing is loaded or evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_min_idle: Option<Seconds>,
}

/// A duration in seconds, written as a number of seconds or a string with units (`"5m"`,
/// `"300s"`, `"1h30m"`, `"500ms"`), as the cuzk daemon's durations are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub f64);

/// Parse a duration: a number (seconds) or numbers with units `ms`, `s`, `m`/`min`, `h`
/// one after the other (`"1h30m"`).
pub fn parse_duration_s(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let bad = || format!("`{text}` is not a duration (a number of seconds, or e.g. \"5m\", \"300s\", \"1h30m\", \"500ms\")");
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(v) = t.parse::<f64>() {
        return if v.is_finite() && v >= 0.0 { Ok(v) } else { Err(bad()) };
    }
    let mut total = 0.0;
    let mut rest = t;
    while !rest.is_empty() {
        let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let v: f64 = rest[..n].parse().map_err(|_| bad())?;
        rest = &rest[n..];
        let u = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit = match rest[..u].trim() {
            "ms" => 1e-3,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += v * unit;
        rest = &rest[u..];
    }
    Ok(total)
}

impl Serialize for Seconds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Num(f64),
            Str(String),
        }
        match Repr::deserialize(d).map_err(|_: D::Error| D::Error::custom("a duration is a number of seconds or a string such as \"5m\""))? {
            Repr::Num(v) if v.is_finite() && v >= 0.0 => Ok(Seconds(v)),
            Repr::Num(v) => Err(D::Error::custom(format!("{v} is not a duration (seconds ≥ 0)"))),
            Repr::Str(s) => parse_duration_s(&s).map(Seconds).map_err(D::Error::custom),
        }
    }
}

impl schemars::JsonSchema for Seconds {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Seconds".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A duration: a number of seconds, or a string with units such as \"5m\".",
            "anyOf": [{ "type": "string" }, { "type": "number", "minimum": 0 }]
        })
    }
}

/// Default `memory.eviction_min_idle` (the cuzk daemon's "5m"), s.
pub const DEFAULT_EVICTION_MIN_IDLE_S: f64 = 300.0;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParamsPlacement {
    #[default]
    Auto,
    Resident,
    Stream,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VramPolicy {
    #[default]
    Fail,
    Wait,
}

/// Default `memory.safety_margin` (the cuzk daemon's): 5 GiB.
pub const DEFAULT_SAFETY_MARGIN: u64 = 5 << 30;

/// Per-partition costs, measured in isolation (ms, or distributions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// Synthesis of one partition (witness + A/B/C), at or below the contention knee.
    pub synth: Dist,
    /// CPU preparation of the MSMs (density bitmaps, pointer setup).
    pub prep_msm: Dist,
    /// GPU: NTTs + H MSM.
    pub ntt_msm_h: Dist,
    /// GPU: bitmap-selected additions.
    pub batch_add: Dist,
    /// GPU: tail MSM.
    pub tail_msm: Dist,
    /// GPU: the remaining kernels (L, A, B_G1 MSMs), if the measurement lists them apart.
    #[serde(default = "zero")]
    pub msm_rest: Dist,
    /// CPU: G2 MSM (in the finisher).
    pub b_g2_msm: Dist,
    /// GPU: the G2 MSM when it runs on the device (after the other kernels, under the same
    /// lock). The what-if "move the G2 MSM to the GPU" is `--set msm_b_g2=X --set b_g2_msm=0`.
    /// A calibrated run whose G2 MSM ran on the device counts it in the kernels above instead.
    #[serde(default = "zero")]
    pub msm_b_g2: Dist,
    /// CPU: proof assembly and the rest of the epilogue (b_g2_msm excluded).
    #[serde(default = "zero")]
    pub epilogue: Dist,
    /// Bytes uploaded per partition (a/b/c), GiB; the time is upload_gib / pcie_gbs.
    #[serde(default)]
    pub upload_gib: f64,
    /// The part of `upload_gib` during which the device copies (at `pcie_gbs`, at the end of
    /// the upload; at most the whole upload); the rest is the host's fill of its staging. Recorded only: the `h2d` span
    /// of an upload carries it as `gpu_ns`, as the engine's spans do, so that the analyzer
    /// counts that part alone as device work (its GPU floor); the upload's timing is the same
    /// with or without it. Absent: the whole upload is device work (`calibrate` sets it from
    /// the `gpu_ns` of a prover run's uploads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_device_gib: Option<f64>,
    /// VRAM-lock work of two_lock besides the upload (allocation, pool trim), ms.
    #[serde(default = "zero")]
    pub alloc: Dist,
    /// From pickup by a GPU worker to the start of its call, ms.
    #[serde(default = "zero")]
    pub pickup: Dist,
}

impl Costs {
    /// The upload `f` times as large: its bytes, and with them the device's part of it.
    pub fn scale_upload(&mut self, f: f64) {
        self.upload_gib *= f;
        if let Some(d) = self.upload_device_gib.as_mut() {
            *d *= f;
        }
    }
}

fn zero() -> Dist {
    Dist::Fixed(0.0)
}

/// Resource demands of the CPU phases (cores, host memory bandwidth).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuDemands {
    /// Cores one synthesis keeps busy.
    #[serde(default = "one")]
    pub synth_cores: f64,
    /// Host memory bandwidth one synthesis draws, GB/s.
    #[serde(default)]
    pub synth_bw_gbs: f64,
    #[serde(default = "one")]
    pub prep_cores: f64,
    #[serde(default)]
    pub prep_bw_gbs: f64,
    /// b_g2_msm and epilogue.
    #[serde(default = "one")]
    pub finalize_cores: f64,
    #[serde(default)]
    pub finalize_bw_gbs: f64,
    /// Uploads (h2d) read host memory at `machine.pcie_gbs` and share the bandwidth with
    /// the CPU phases (the Phase 9 inflation under load); off: a fixed-time copy.
    #[serde(default)]
    pub uploads_use_host_bandwidth: bool,
    /// Syntheses on one shared thread pool (the prover's `synthesis_shared_pool`, or older
    /// timelines' `synthesis_threads` 0 or unset): n of them at once progress together at 1 + gain × (n − 1)^b times the speed of
    /// one alone (b: `synth_pool_exponent`), each at most at its own isolated speed (the H200 host: eight beside each
    /// other ~1.7× one alone, where pools of their own reached ~2.5×). Fitted by `calibrate`
    /// from the runs where syntheses overlapped; unset: no limit beyond the cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synth_pool_gain: Option<f64>,
    /// The shape of that gain: n syntheses together at 1 + gain × (n − 1)^exponent times one
    /// alone (1: a straight line; below 1: each added synthesis adds less). `calibrate` sets
    /// it to [`crate::calibrate::SHARED_POOL_EXPONENT`] when it fits the gain: with one
    /// calibration run of overlapped syntheses the shape cannot be fitted from the run; 0.6 was
    /// chosen on nine earlier campaigns together with the calibration bias carried over
    /// (docs/fidelity.md).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub synth_pool_exponent: f64,
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

fn one() -> f64 {
    1.0
}

impl Default for CpuDemands {
    fn default() -> Self {
        CpuDemands {
            synth_cores: 1.0,
            synth_bw_gbs: 0.0,
            prep_cores: 1.0,
            prep_bw_gbs: 0.0,
            finalize_cores: 1.0,
            finalize_bw_gbs: 0.0,
            uploads_use_host_bandwidth: false,
            synth_pool_gain: None,
            synth_pool_exponent: 1.0,
        }
    }
}

/// Synthesis contention beyond what cores and bandwidth explain: with n syntheses
/// running, each progresses at 1 / (1 + slope · max(0, n − knee)) of its isolated speed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Contention {
    #[serde(default)]
    pub synth_knee: f64,
    #[serde(default)]
    pub synth_slope: f64,
    /// The GPU workers' CPU steps (the MSM preparation) slow by the same factor as the
    /// syntheses running beside them: the host's contention is not the syntheses' own (H200
    /// campaign of 2026-12-02 at 2^20: prep_msm 8 ms beside one synthesis, ~20 ms beside
    /// four to twelve, while the machine's busy cores stayed near 10 of 16).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prep: bool,
    /// The GPU workers' CPU steps slow by 1 + prep_slope · max(0, n − 1) beside n syntheses,
    /// whatever pool those run on (H200, runs 84–87 at 2^22: prep_msm ~20 ms beside one
    /// synthesis, 50–70 ms beside three to six, on the shared pool and beside pools of their
    /// own alike). Fitted by `calibrate` to the GPU calls of the runs where syntheses overlapped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prep_slope: f64,
    /// The syntheses beyond the first that count in the prep slope, at most: the factor is
    /// 1 + prep_slope · min(max(0, n − 1), prep_saturation). Absent: no limit (the straight
    /// line of campaigns before 30). Set to 1 by `calibrate`: on pools of their own
    /// (campaign 29, 2^22) a GPU call took 154 ms beside one synthesis and 236–364 ms beside
    /// 2.8–8.5 of them whether they ran on 2, 4 or 16 threads each — a step, not a line in n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prep_saturation: Option<f64>,
}

impl Contention {
    /// The slowdown factor with `n` concurrent syntheses.
    #[inline]
    pub fn factor(&self, n: f64) -> f64 {
        1.0 + self.synth_slope * (n - self.synth_knee).max(0.0)
    }

    /// The slowdown of a GPU worker's CPU step with `n` syntheses running: [`Self::factor`]
    /// when `prep`, times 1 + `prep_slope` · min(max(0, n − 1), `prep_saturation`).
    #[inline]
    pub fn prep_factor(&self, n: f64) -> f64 {
        let beside = (n - 1.0).max(0.0);
        let own = 1.0 + self.prep_slope * self.prep_saturation.map_or(beside, |cap| beside.min(cap));
        if self.prep {
            self.factor(n) * own
        } else {
            own
        }
    }
}

impl Memory {
    /// The process's resident memory, GiB, for `reserved` GiB reserved (see `rss_per_reserved`).
    pub fn rss_of(&self, reserved: f64) -> f64 {
        (self.rss_offset_gib + self.rss_per_reserved.unwrap_or(1.0) * reserved).max(0.0)
    }
}

impl Config {
    /// One partition's reservation, GiB: `memory.partition_gib`, else the working set of
    /// `[circuit]` ([`crate::memory::working_set`]), else 0 (refused by `validate`).
    pub fn partition_gib(&self) -> f64 {
        match (self.memory.partition_gib, &self.circuit) {
            (Some(v), _) => v,
            (None, Some(c)) => crate::memory::working_set(c).partition() as f64 / GIB,
            (None, None) => 0.0,
        }
    }

    /// The a/b/c part of it, GiB: `memory.abc_gib`, else 3·n·32 B of `[circuit]`, else 0.
    pub fn abc_gib(&self) -> f64 {
        match (self.memory.abc_gib, &self.circuit) {
            (Some(v), _) => v,
            (None, Some(c)) => crate::memory::working_set(c).abc as f64 / GIB,
            (None, None) => 0.0,
        }
    }

    /// One GPU call's host memory (MSM preparation of A and L, and the gathered bases unless
    /// [`Config::calls_gather_no_bases`]), GiB: from `[circuit]` when it gives query sizes,
    /// else 0 (the engine reserves it once per GPU worker; [`crate::memory`]).
    pub fn call_ram_gib(&self) -> f64 {
        self.circuit.as_ref().map_or(0.0, |c| {
            let w = crate::memory::working_set(c);
            let left_out = if self.calls_gather_no_bases() { w.msm_bases } else { 0 };
            w.call().saturating_sub(left_out) as f64 / GIB
        })
    }

    /// The engine's rule (9386dbe) for leaving the gathered bases out of a GPU call's
    /// reservation: the device holds every MSM query from the start and the host has released
    /// its copy (parameters not streamed, `params_gib` 0, uploaded at start), and the G2 MSM
    /// runs on the device (`b_g2_msm` zero). Runs of earlier binaries reserved the bases
    /// whatever the placement.
    pub fn calls_gather_no_bases(&self) -> bool {
        !self.params_streamed() && self.memory.params_gib <= 0.0 && self.startup.params_upload == ParamsUpload::Start && self.costs.b_g2_msm.is_zero()
    }

    /// Resident on the host before any proof: baseline + parameters + PCE + one GPU call's
    /// memory per GPU worker (gw × gpus), GiB.
    pub fn resident_gib(&self) -> f64 {
        let workers = f64::from(self.pipeline.gw) * f64::from(self.machine.gpus);
        self.memory.baseline_gib + self.memory.params_gib + self.memory.pce_gib + workers * self.call_ram_gib()
    }

    /// `memory.safety_margin` (default 5 GiB), GiB.
    pub fn safety_margin_gib(&self) -> f64 {
        self.memory.safety_margin.map_or(DEFAULT_SAFETY_MARGIN as f64, |m| m.0 as f64) / GIB
    }

    /// The host budget in GiB when `memory.total_budget` is set (auto resolved against
    /// `machine.ram_gib`); `None`: no budget.
    pub fn budget_gib(&self) -> Option<f64> {
        self.memory.total_budget.map(|b| match b {
            Budget::Auto => self.machine.ram_gib - self.safety_margin_gib(),
            Budget::Bytes(b) => b.as_gib(),
        })
    }

    /// VRAM usable per device: the card, or less with `memory.vram_budget`, GiB.
    pub fn vram_cap_gib(&self) -> f64 {
        let card = self.machine.vram_gib;
        self.memory.vram_budget_gib.map_or(card, |b| b.min(card))
    }

    /// VRAM one GPU worker needs for a call: its pre-staged buffer, or the per-call allocation.
    pub fn worker_vram_gib(&self) -> f64 {
        if self.pipeline.prestage {
            self.memory.prestage_vram_gib
        } else {
            self.memory.call_vram_gib
        }
    }

    /// Whether the parameters stream over PCIe for every partition (see `params_on_device`).
    pub fn params_streamed(&self) -> bool {
        let m = &self.memory;
        if m.params_vram_gib <= 0.0 {
            return false;
        }
        match m.params_on_device {
            ParamsPlacement::Resident => false,
            ParamsPlacement::Stream => true,
            ParamsPlacement::Auto => m.vram_baseline_gib + m.params_vram_gib + self.worker_vram_gib() > self.vram_cap_gib() + 1e-9,
        }
    }

    /// VRAM in use on a device before any worker: baseline + resident parameters, GiB.
    pub fn vram_static_gib(&self) -> f64 {
        self.memory.vram_baseline_gib + if self.params_streamed() { 0.0 } else { self.memory.params_vram_gib }
    }

    /// Streaming the parameters for one partition, seconds (0 when resident).
    pub fn params_stream_s(&self) -> f64 {
        if self.params_streamed() {
            self.memory.params_vram_gib * GIB / (self.memory.params_stream_gbs.unwrap_or(self.machine.pcie_gbs) * 1e9)
        } else {
            0.0
        }
    }

    /// What admission compares against: the budget, else the machine's RAM.
    pub fn ram_limit_gib(&self) -> f64 {
        self.budget_gib().unwrap_or(self.machine.ram_gib)
    }

    /// `memory.eviction_min_idle` in seconds (default 300).
    pub fn eviction_min_idle_s(&self) -> f64 {
        self.memory.eviction_min_idle.map_or(DEFAULT_EVICTION_MIN_IDLE_S, |s| s.0)
    }

    /// Partitions per proof of mix type `t` (`pipeline.partitions` without a mix).
    pub fn partitions_of(&self, t: usize) -> u32 {
        self.mix.get(t).and_then(|m| m.partitions).unwrap_or(self.pipeline.partitions)
    }

    /// The most partitions a proof of the run has.
    pub fn max_partitions(&self) -> u32 {
        (0..self.mix.len()).map(|t| self.partitions_of(t)).max().unwrap_or(self.pipeline.partitions)
    }

    /// The mix type of each of `pipeline.proofs` proofs (all 0 without a mix): a smooth
    /// weighted round robin over the shares — each arrival adds every type's share to its
    /// credit and goes to the type with the most credit (ties: the first listed), which then
    /// gives back the sum of the shares. Deterministic; 1:1 alternates, 2:1 gives A, B, A.
    pub fn proof_types(&self) -> Vec<u16> {
        let n = self.pipeline.proofs as usize;
        if self.mix.len() <= 1 {
            return vec![0; n];
        }
        let total: f64 = self.mix.iter().map(|m| m.share).sum();
        let mut credit = vec![0.0f64; self.mix.len()];
        (0..n)
            .map(|_| {
                let mut best = 0;
                for (t, m) in self.mix.iter().enumerate() {
                    credit[t] += m.share;
                    if credit[t] > credit[best] {
                        best = t;
                    }
                }
                credit[best] -= total;
                best as u16
            })
            .collect()
    }

    /// With a mix: the config of the mean proof of the run (for the floors, which are per
    /// proof and steady-state: loads and evictions are not in them): `pipeline.partitions`
    /// kept, synthesis and the scaled GPU-call costs multiplied by Σ partitions × scale ÷
    /// (proofs × partitions) over the run's proofs, and as resident parameters every type's
    /// SRS + PCE when they fit together beside one partition, else the largest type's.
    /// Without a mix, the config itself.
    pub fn mean_proof(&self) -> std::borrow::Cow<'_, Config> {
        if self.mix.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        let types = self.proof_types();
        let p = f64::from(self.pipeline.partitions) * types.len().max(1) as f64;
        let (mut synth, mut gpu) = (0.0, 0.0);
        for &t in &types {
            let m = &self.mix[t as usize];
            synth += f64::from(self.partitions_of(t as usize)) * m.synth_scale;
            gpu += f64::from(self.partitions_of(t as usize)) * m.gpu_scale;
        }
        let (fs, fg) = (synth / p, gpu / p);
        let mut c = self.clone();
        // Resident for the memory floor: every type's SRS and PCE when they fit together
        // beside one partition, else the largest type's (what a proof of it holds at least).
        let all: f64 = self.mix.iter().map(|m| m.srs_gib + m.pce_gib).sum();
        let largest = self.mix.iter().map(|m| m.srs_gib + m.pce_gib).fold(0.0, f64::max);
        let fits = self.resident_gib() + all + self.partition_gib() <= self.ram_limit_gib() + 1e-9;
        c.memory.params_gib = if fits { all } else { largest };
        c.memory.pce_gib = 0.0;
        let k = &mut c.costs;
        k.synth = k.synth.scaled(fs);
        for d in [&mut k.prep_msm, &mut k.ntt_msm_h, &mut k.batch_add, &mut k.tail_msm, &mut k.msm_rest, &mut k.msm_b_g2, &mut k.b_g2_msm] {
            *d = d.scaled(fg);
        }
        std::borrow::Cow::Owned(c)
    }

    pub fn from_toml_str(text: &str, path: &str) -> Result<Config, ConfigError> {
        let c: Config = toml::from_str(text).map_err(|e| ConfigError::Parse { path: path.to_string(), message: e.to_string() })?;
        c.validate().map_err(|e| ConfigError::Parse { path: path.to_string(), message: e.to_string() })?;
        Ok(c)
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Read { path: name.clone(), err })?;
        Config::from_toml_str(&text, &name)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot serialise: {e}"))
    }

    /// Check every field and every combination; the first problem is returned.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let m = &self.machine;
        // Sizes, rates and core counts: finite, and at most 1e9 (GiB, GB/s, cores), far
        // beyond any machine and far from float overflow.
        let pos = |f: &str, v: f64| {
            if v.is_finite() && v > 0.0 && v <= limits::QUANTITY {
                Ok(())
            } else {
                Err(invalid(f, format!("must be a positive number up to {:e} (got {v})", limits::QUANTITY)))
            }
        };
        let nonneg = |f: &str, v: f64| {
            if v.is_finite() && v >= 0.0 && v <= limits::QUANTITY {
                Ok(())
            } else {
                Err(invalid(f, format!("must be a number ≥ 0 up to {:e} (got {v})", limits::QUANTITY)))
            }
        };
        let atleast1 = |f: &str, v: u32| if v >= 1 { Ok(()) } else { Err(invalid(f, format!("must be at least 1 (got {v})"))) };
        pos("machine.cpu_cores", m.cpu_cores)?;
        if let Some(c) = m.cpu_capacity {
            pos("machine.cpu_capacity", c)?;
            if c > m.cpu_cores {
                return Err(invalid("machine.cpu_capacity", format!("{c} exceeds machine.cpu_cores ({})", m.cpu_cores)));
            }
        }
        pos("machine.mem_bandwidth_gbs", m.mem_bandwidth_gbs)?;
        pos("machine.ram_gib", m.ram_gib)?;
        atleast1("machine.gpus", m.gpus)?;
        pos("machine.vram_gib", m.vram_gib)?;
        pos("machine.pcie_gbs", m.pcie_gbs)?;
        let p = &self.pipeline;
        atleast1("pipeline.proofs", p.proofs)?;
        atleast1("pipeline.in_flight", p.in_flight)?;
        atleast1("pipeline.partitions", p.partitions)?;
        atleast1("pipeline.pw", p.pw)?;
        atleast1("pipeline.gw", p.gw)?;
        let atmost = |f: &str, v: u32, max: u32| if v <= max { Ok(()) } else { Err(invalid(f, format!("{v} is more than {max}, the most a simulation takes"))) };
        atmost("machine.gpus", m.gpus, limits::GPUS)?;
        atmost("pipeline.pw", p.pw, limits::PW)?;
        atmost("pipeline.gw", p.gw, limits::GW)?;
        atmost("pipeline.proofs", p.proofs, limits::PROOFS)?;
        atmost("pipeline.in_flight", p.in_flight, limits::PROOFS)?;
        atmost("pipeline.partitions", p.partitions, limits::PARTITIONS)?;
        if let Some(f) = p.finalizers {
            atmost("pipeline.finalizers", f, limits::FINALIZERS)?;
        }
        let total = p.proofs as u64 * p.partitions as u64;
        if total > limits::TOTAL_PARTITIONS {
            return Err(invalid(
                "pipeline.proofs",
                format!("{} proofs × {} partitions = {total} partitions, more than {} per simulation", p.proofs, p.partitions, limits::TOTAL_PARTITIONS),
            ));
        }
        if p.prep_threads == Some(0) {
            return Err(invalid("pipeline.prep_threads", "must be at least 1, or absent for no pool of their own"));
        }
        if p.synthesis_concurrency == Some(0) {
            return Err(invalid("pipeline.synthesis_concurrency", "must be at least 1, or absent for no limit"));
        }
        if p.finalizers == Some(0) {
            return Err(invalid("pipeline.finalizers", "must be at least 1, or absent for unlimited finalisers"));
        }
        if p.queue_capacity == Some(0) {
            return Err(invalid("pipeline.queue_capacity", "must be at least 1, or absent for an unbounded queue (0 would deadlock: nothing could ever be sent)"));
        }
        if p.device_global_sync.is_some() && p.lock != LockMode::TwoLock {
            return Err(invalid("pipeline.device_global_sync", format!("only applies to lock = \"two_lock\" (lock is \"{}\")", p.lock.as_str())));
        }
        if let Arrival::Periodic { period_s } = p.arrival {
            pos("pipeline.arrival.period_s", period_s)?;
            if period_s > limits::PERIOD_S {
                return Err(invalid("pipeline.arrival.period_s", format!("{period_s} s is more than 10 years")));
            }
        }
        let st = &self.startup;
        for (f, v) in [("startup.engine_s", st.engine_s), ("startup.params_upload_s", st.params_upload_s), ("startup.pce_load_s", st.pce_load_s), ("startup.staging_alloc_s", st.staging_alloc_s)] {
            nonneg(f, v)?;
        }
        let mem = &self.memory;
        nonneg("memory.baseline_gib", mem.baseline_gib)?;
        nonneg("memory.params_gib", mem.params_gib)?;
        nonneg("memory.pce_gib", mem.pce_gib)?;
        if let Some(v) = mem.partition_gib {
            nonneg("memory.partition_gib", v)?;
        }
        if let Some(v) = mem.abc_gib {
            nonneg("memory.abc_gib", v)?;
        }
        if let Some(c) = &self.circuit {
            for (f, v) in [("circuit.constraints", Some(c.constraints)), ("circuit.aux", c.aux), ("circuit.inputs", c.inputs)] {
                if let Some(v) = v {
                    if v > 1 << 40 {
                        return Err(invalid(f, format!("{v} is more than 2^40")));
                    }
                }
            }
            if c.constraints == 0 {
                return Err(invalid("circuit.constraints", "must be at least 1"));
            }
        } else if mem.partition_gib.is_none() {
            return Err(invalid("memory.partition_gib", "missing: give it, or [circuit] constraints = N to use the working-set formula"));
        }
        nonneg("memory.vram_baseline_gib", mem.vram_baseline_gib)?;
        nonneg("memory.prestage_vram_gib", mem.prestage_vram_gib)?;
        nonneg("memory.call_vram_gib", mem.call_vram_gib)?;
        nonneg("memory.params_vram_gib", mem.params_vram_gib)?;
        if let Some(r) = mem.params_stream_gbs {
            pos("memory.params_stream_gbs", r)?;
        }
        if let Some(b) = mem.vram_budget_gib {
            pos("memory.vram_budget_gib", b)?;
        }
        let (part, abc) = (self.partition_gib(), self.abc_gib());
        if abc > part {
            return Err(invalid("memory.abc_gib", format!("cannot exceed memory.partition_gib ({abc} > {part})")));
        }
        if let Some(b) = mem.rss_per_reserved {
            if !(b.is_finite() && b > 0.0 && b <= 2.0) {
                return Err(invalid("memory.rss_per_reserved", format!("must be in (0, 2] (got {b})")));
            }
        }
        if !mem.rss_offset_gib.is_finite() || mem.rss_offset_gib.abs() > limits::QUANTITY {
            return Err(invalid("memory.rss_offset_gib", format!("must be a finite number of GiB (got {})", mem.rss_offset_gib)));
        }
        if mem.early_release && abc == 0.0 {
            return Err(invalid("memory.early_release", "is true but memory.abc_gib (what is released) is 0"));
        }
        let resident = self.resident_gib();
        if let Some(budget) = self.budget_gib() {
            let margin = self.safety_margin_gib();
            if budget <= 0.0 {
                return Err(invalid("memory.safety_margin", format!("{margin} GiB leaves nothing of machine.ram_gib ({} GiB) for memory.total_budget = \"auto\"", m.ram_gib)));
            }
            if budget > m.ram_gib + 1e-9 {
                return Err(invalid("memory.total_budget", format!("{budget} GiB is more than machine.ram_gib ({} GiB): the engine would be killed before the budget binds", m.ram_gib)));
            }
            if resident + part > budget + 1e-9 {
                return Err(invalid("memory.total_budget", format!(
                    "{budget:.2} GiB cannot hold the resident items ({resident:.2} GiB: baseline, parameters, PCE, the GPU workers' call memory) plus one partition ({part:.2} GiB): {:.2} GiB needed, no proof could ever run",
                    resident + part
                )));
            }
        }
        if resident + part > m.ram_gib {
            return Err(invalid("machine.ram_gib", format!(
                "{} GiB cannot hold the resident items ({resident} GiB) plus one partition ({part} GiB): no proof could ever run",
                m.ram_gib
            )));
        }
        if p.prestage && mem.prestage_vram_gib == 0.0 {
            return Err(invalid("memory.prestage_vram_gib", "pipeline.prestage is true but the staging buffer size is 0"));
        }
        if p.upload_after_prep && p.prestage {
            return Err(invalid("pipeline.upload_after_prep", "and pipeline.prestage are both true: a pre-staged upload runs beside the preparation, not after it (choose one)"));
        }
        if p.upload_after_prep && p.uploads_wait_for_kernels {
            return Err(invalid("pipeline.upload_after_prep", "and pipeline.uploads_wait_for_kernels are both true: an upload after the preparation does not wait for the compute lock (choose one)"));
        }
        if !p.prestage && mem.prestage_vram_gib > 0.0 {
            return Err(invalid("memory.prestage_vram_gib", "is set but pipeline.prestage is false (set prestage = true or remove the key)"));
        }
        let c = &self.costs;
        nonneg("costs.upload_gib", c.upload_gib)?;
        if let Some(d) = c.upload_device_gib {
            nonneg("costs.upload_device_gib", d)?;
        }
        if crate::floors::upload_s(self) > crate::costs::MAX_COST_MS / 1e3 {
            return Err(invalid("costs.upload_gib", format!("{} GiB over {} GB/s takes more than 10 years", c.upload_gib, m.pcie_gbs)));
        }
        for (f, d) in [
            ("costs.synth", &c.synth),
            ("costs.prep_msm", &c.prep_msm),
            ("costs.ntt_msm_h", &c.ntt_msm_h),
            ("costs.batch_add", &c.batch_add),
            ("costs.tail_msm", &c.tail_msm),
            ("costs.msm_rest", &c.msm_rest),
            ("costs.b_g2_msm", &c.b_g2_msm),
            ("costs.msm_b_g2", &c.msm_b_g2),
            ("costs.epilogue", &c.epilogue),
            ("costs.alloc", &c.alloc),
            ("costs.pickup", &c.pickup),
        ] {
            let mean = d.mean_ms();
            if !(mean.is_finite() && mean <= crate::costs::MAX_COST_MS) {
                return Err(invalid(f, format!("a mean of {mean} ms is more than 10 years")));
            }
        }
        if c.ntt_msm_h.mean_ms() + c.batch_add.mean_ms() + c.tail_msm.mean_ms() + c.msm_rest.mean_ms() + c.msm_b_g2.mean_ms() <= 0.0 {
            return Err(invalid("costs", "the GPU kernels (ntt_msm_h, batch_add, tail_msm, msm_rest) add up to 0 ms"));
        }
        if c.synth.mean_ms() <= 0.0 {
            return Err(invalid("costs.synth", "must be more than 0 ms"));
        }
        let d = &self.cpu;
        for (f, v) in [
            ("cpu.synth_cores", d.synth_cores),
            ("cpu.prep_cores", d.prep_cores),
            ("cpu.finalize_cores", d.finalize_cores),
        ] {
            pos(f, v)?;
            if v > m.cpu_cores {
                return Err(invalid(f, format!("{v} cores exceed machine.cpu_cores ({})", m.cpu_cores)));
            }
        }
        nonneg("cpu.synth_bw_gbs", d.synth_bw_gbs)?;
        nonneg("cpu.prep_bw_gbs", d.prep_bw_gbs)?;
        nonneg("cpu.finalize_bw_gbs", d.finalize_bw_gbs)?;
        if let Some(g) = d.synth_pool_gain {
            if !(g.is_finite() && (0.0..=1.0).contains(&g)) {
                return Err(invalid("cpu.synth_pool_gain", format!("must be between 0 (n syntheses at once no faster than one) and 1 (with the exponent 1: each at its own speed) (got {g})")));
            }
        }
        let b = d.synth_pool_exponent;
        if !(b.is_finite() && b > 0.0 && b <= 1.0) {
            return Err(invalid("cpu.synth_pool_exponent", format!("must be above 0 and at most 1 (1: each added synthesis adds the same) (got {b})")));
        }
        nonneg("contention.synth_knee", self.contention.synth_knee)?;
        nonneg("contention.synth_slope", self.contention.synth_slope)?;
        nonneg("contention.prep_slope", self.contention.prep_slope)?;
        if let Some(c) = self.contention.prep_saturation {
            nonneg("contention.prep_saturation", c)?;
        }
        self.validate_mix(resident, part)?;
        let rs = self.uncertainty.run_spread;
        if !(rs.is_finite() && (0.0..=1.0).contains(&rs)) {
            return Err(invalid("uncertainty.run_spread", format!("must be a relative standard deviation between 0 and 1 (got {rs})")));
        }
        for (i, b) in self.uncertainty.calibration_bias.iter().enumerate() {
            if b.pw == 0 || !(b.ratio.is_finite() && b.ratio > 0.0) {
                return Err(invalid("uncertainty.calibration_bias", format!("entry {}: pw must be at least 1 and ratio a positive number (got pw {}, ratio {})", i + 1, b.pw, b.ratio)));
            }
            if self.uncertainty.calibration_bias[..i].iter().any(|o| o.pw == b.pw) {
                return Err(invalid("uncertainty.calibration_bias", format!("entry {}: pw {} is given twice", i + 1, b.pw)));
            }
        }
        let me = self.uncertainty.model_error;
        if !(me.is_finite() && (0.0..=1.0).contains(&me)) {
            return Err(invalid("uncertainty.model_error", format!("must be a relative standard deviation between 0 and 1 (got {me})")));
        }
        Ok(())
    }

    /// The `[[mix]]` entries and `memory.eviction_min_idle`: every figure in range, names
    /// unique, no parameters resident from the start beside a mix, and each type's SRS + PCE
    /// able to fit the budget (or the machine's RAM) beside the resident items and one
    /// partition — else its proofs could never start.
    fn validate_mix(&self, resident: f64, part: f64) -> Result<(), ConfigError> {
        if let Some(s) = self.memory.eviction_min_idle {
            if !(s.0.is_finite() && s.0 >= 0.0 && s.0 <= limits::PERIOD_S) {
                return Err(invalid("memory.eviction_min_idle", format!("must be between 0 and 10 years (got {} s)", s.0)));
            }
        }
        if self.mix.is_empty() {
            return Ok(());
        }
        for (f, v) in [("memory.params_gib", self.memory.params_gib), ("memory.pce_gib", self.memory.pce_gib)] {
            if v != 0.0 {
                return Err(invalid(f, format!("is {v} GiB, but with [[mix]] the SRS and PCE are each proof type's (mix.srs_gib, mix.pce_gib), loaded on demand: set it to 0")));
            }
        }
        let limit = self.ram_limit_gib();
        let what = if self.budget_gib().is_some() { "memory.total_budget" } else { "machine.ram_gib" };
        for (i, m) in self.mix.iter().enumerate() {
            let field = |k: &str| format!("mix[{i}].{k} ({})", m.name);
            if m.name.trim().is_empty() {
                return Err(invalid(&format!("mix[{i}].name"), "must name the proof type (e.g. \"porep-c2\")"));
            }
            if let Some(j) = self.mix[..i].iter().position(|o| o.name == m.name) {
                return Err(invalid(&format!("mix[{i}].name"), format!("`{}` is also mix[{j}]'s name: each type once", m.name)));
            }
            for (k, v) in [("share", m.share), ("synth_scale", m.synth_scale), ("gpu_scale", m.gpu_scale)] {
                if !(v.is_finite() && v > 0.0 && v <= limits::QUANTITY) {
                    return Err(invalid(&field(k), format!("must be a positive number up to {:e} (got {v})", limits::QUANTITY)));
                }
            }
            for (k, v) in [("srs_gib", m.srs_gib), ("pce_gib", m.pce_gib)] {
                if !(v.is_finite() && (0.0..=limits::QUANTITY).contains(&v)) {
                    return Err(invalid(&field(k), format!("must be a number ≥ 0 up to {:e} (got {v})", limits::QUANTITY)));
                }
            }
            for (k, v) in [("srs_load_s", m.srs_load_s), ("pce_load_s", m.pce_load_s)] {
                if !(v.is_finite() && (0.0..=limits::PERIOD_S).contains(&v)) {
                    return Err(invalid(&field(k), format!("must be between 0 and 10 years (got {v} s)")));
                }
            }
            if let Some(n) = m.partitions {
                if n == 0 || n > limits::PARTITIONS {
                    return Err(invalid(&field("partitions"), format!("must be between 1 and {} (got {n})", limits::PARTITIONS)));
                }
            }
            let need = resident + m.srs_gib + m.pce_gib + part;
            if need > limit + 1e-9 {
                return Err(invalid(
                    &format!("mix[{i}] ({})", m.name),
                    format!(
                        "its SRS ({} GiB) and PCE ({} GiB) beside the resident items ({resident:.2} GiB) and one partition ({part:.2} GiB) need {need:.2} GiB, more than {what} ({limit:.2} GiB): no proof of this type could ever start",
                        m.srs_gib, m.pce_gib
                    ),
                ));
            }
        }
        let total = u64::from(self.pipeline.proofs) * u64::from(self.max_partitions());
        if total > limits::TOTAL_PARTITIONS {
            return Err(invalid("mix.partitions", format!("{} proofs × up to {} partitions = {total} partitions, more than {} per simulation", self.pipeline.proofs, self.max_partitions(), limits::TOTAL_PARTITIONS)));
        }
        Ok(())
    }

    /// Apply one `key=value` override (`simulate --set`, `sweep --vary`). Every key of the
    /// file is settable by its dotted path (`costs.synth=40000`, `cpu.prep_cores=8`,
    /// `memory.early_release=true`; [`timeline::settings`]); the short keys of
    /// [`VARY_KEYS`] are aliases of the common ones (pw, gw, lock, gpus, c/proofs,
    /// j/in_flight, partitions, queue, split, finalizers, prestage, permit_until_send,
    /// device_global_sync, ram, total_budget (alias budget; a size such as `128GiB` or
    /// `auto`), safety_margin, vram, cores, bandwidth, pcie, slope, knee, b_g2_msm,
    /// msm_b_g2, seed), some with extra spellings (`queue=unbounded`, `finalizers=unlimited`,
    /// booleans as on/off/yes/no/1/0) and consequences (`lock` other than two_lock drops
    /// `device_global_sync`; `prestage` sizes or drops the staging buffer). The result is
    /// validated by the caller.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let k = key.trim();
        let v = value.trim();
        let Some(field) = canonical_key(k) else {
            if !k.contains('.') && !matches!(k, "name" | "seed") {
                return Err(invalid(k, format!("unknown key (short keys: {}; or any `section.field` of the config)", VARY_KEYS.join(", "))));
            }
            *self = timeline::settings::set_path(self, k, v).map_err(|e| invalid(k, e.reason()))?;
            return Ok(());
        };
        let u32v = || v.parse::<u32>().map_err(|_| invalid(field, format!("`{v}` is not a non-negative integer")));
        let f64v = || v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| invalid(field, format!("`{v}` is not a number")));
        let nonneg_ms = || f64v().and_then(|x| if x >= 0.0 { Ok(x) } else { Err(invalid(field, format!("`{v}` ms is negative"))) });
        let boolv = || match v {
            "true" | "on" | "yes" | "1" => Ok(true),
            "false" | "off" | "no" | "0" => Ok(false),
            _ => Err(invalid(field, format!("`{v}` is not a boolean (true/false)"))),
        };
        match field {
            "pipeline.pw" => self.pipeline.pw = u32v()?,
            "pipeline.gw" => self.pipeline.gw = u32v()?,
            "pipeline.lock" => {
                self.pipeline.lock = LockMode::parse(v).ok_or_else(|| invalid(field, format!("`{v}` is not a lock mode (whole, kernels, two_lock)")))?;
                if self.pipeline.lock != LockMode::TwoLock {
                    self.pipeline.device_global_sync = None;
                }
            }
            "machine.gpus" => self.machine.gpus = u32v()?,
            "pipeline.proofs" => self.pipeline.proofs = u32v()?,
            "pipeline.in_flight" => self.pipeline.in_flight = u32v()?,
            "pipeline.partitions" => self.pipeline.partitions = u32v()?,
            "pipeline.queue_capacity" => {
                self.pipeline.queue_capacity = if v == "unbounded" || v == "none" { None } else { Some(u32v()?) }
            }
            "pipeline.split_finalize" => self.pipeline.split_finalize = boolv()?,
            "pipeline.finalizers" => {
                self.pipeline.finalizers = if v == "unlimited" || v == "none" { None } else { Some(u32v()?) }
            }
            "pipeline.prestage" => {
                // The staging buffer goes with the switch: none without prestage, one
                // partition's upload (at least 10 MiB) when turned on without a size.
                // A pre-staged upload runs beside the preparation: not after it.
                self.pipeline.prestage = boolv()?;
                if !self.pipeline.prestage {
                    self.memory.prestage_vram_gib = 0.0;
                } else {
                    self.pipeline.upload_after_prep = false;
                    if self.memory.prestage_vram_gib == 0.0 {
                        self.memory.prestage_vram_gib = self.costs.upload_gib.max(0.01);
                    }
                }
            }
            "pipeline.permit_until_send" => self.pipeline.permit_until_send = boolv()?,
            "pipeline.uploads_wait_for_kernels" => {
                // Uploads that wait for the kernels are not this engine's order.
                self.pipeline.uploads_wait_for_kernels = boolv()?;
                if self.pipeline.uploads_wait_for_kernels {
                    self.pipeline.upload_after_prep = false;
                }
            }
            "pipeline.upload_after_prep" => {
                // The engine's order replaces a pre-staged buffer and uploads behind the kernels.
                self.pipeline.upload_after_prep = boolv()?;
                if self.pipeline.upload_after_prep {
                    self.pipeline.prestage = false;
                    self.memory.prestage_vram_gib = 0.0;
                    self.pipeline.uploads_wait_for_kernels = false;
                }
            }
            "pipeline.prep_threads" => {
                self.pipeline.prep_threads = if v == "none" { None } else { Some(u32v()?) };
            }
            "pipeline.device_global_sync" => self.pipeline.device_global_sync = Some(boolv()?),
            "machine.ram_gib" => self.machine.ram_gib = f64v()?,
            "memory.total_budget" => {
                // "How fast on a machine with this much RAM": a budget above the machine's
                // RAM raises machine.ram_gib to budget + safety_margin (a budget below it
                // leaves the machine as it is).
                let b: Budget = size_setting(v).map_err(|e| invalid(field, e))?;
                self.memory.total_budget = Some(b);
                if let Budget::Bytes(bytes) = b {
                    let need = bytes.as_gib() + self.safety_margin_gib();
                    if bytes.as_gib() > self.machine.ram_gib {
                        self.machine.ram_gib = need;
                    }
                }
            }
            "memory.vram_budget_gib" => {
                self.memory.vram_budget_gib = if v == "none" || v == "card" { None } else { Some(f64v()?) }
            }
            "memory.safety_margin" => {
                self.memory.safety_margin = Some(size_setting(v).map_err(|e| invalid(field, e))?);
            }
            "machine.vram_gib" => self.machine.vram_gib = f64v()?,
            "machine.cpu_cores" => {
                // A machine with other cores: the capacity they deliver scales with them.
                let (old, new) = (self.machine.cpu_cores, f64v()?);
                if let Some(c) = self.machine.cpu_capacity.as_mut() {
                    if old > 0.0 && new.is_finite() {
                        *c *= new / old;
                    }
                }
                self.machine.cpu_cores = new;
            }
            "machine.cpu_capacity" => self.machine.cpu_capacity = if v == "none" { None } else { Some(f64v()?) },
            "cpu.synth_pool_gain" => self.cpu.synth_pool_gain = if v == "none" { None } else { Some(f64v()?) },
            "cpu.synth_pool_exponent" => self.cpu.synth_pool_exponent = f64v()?,
            "machine.mem_bandwidth_gbs" => self.machine.mem_bandwidth_gbs = f64v()?,
            "machine.pcie_gbs" => self.machine.pcie_gbs = f64v()?,
            "contention.synth_slope" => self.contention.synth_slope = f64v()?,
            "contention.synth_knee" => self.contention.synth_knee = f64v()?,
            "contention.prep" => self.contention.prep = boolv()?,
            "contention.prep_slope" => self.contention.prep_slope = f64v()?,
            "contention.prep_saturation" => self.contention.prep_saturation = if v == "none" { None } else { Some(f64v()?) },
            "costs.b_g2_msm" => self.costs.b_g2_msm = Dist::Fixed(nonneg_ms()?),
            "costs.msm_b_g2" => self.costs.msm_b_g2 = Dist::Fixed(nonneg_ms()?),
            "costs.upload_device_gib" => self.costs.upload_device_gib = if v == "none" { None } else { Some(f64v()?) },
            "seed" => self.seed = v.parse::<u64>().map_err(|_| invalid(field, format!("`{v}` is not a non-negative integer")))?,
            other => *self = timeline::settings::set_path(self, other, v).map_err(|e| invalid(k, e.reason()))?,
        }
        Ok(())
    }
}

/// Keys `--vary` accepts (short forms).
pub const VARY_KEYS: &[&str] = &[
    "pw", "gw", "lock", "gpus", "c", "j", "partitions", "queue", "split", "finalizers", "prestage", "permit_until_send", "uploads_wait_for_kernels", "upload_after_prep", "prep_threads",
    "device_global_sync", "ram", "total_budget", "safety_margin", "vram", "vram_budget", "cores", "capacity", "pool_gain", "pool_exponent", "bandwidth", "pcie", "slope", "knee", "prep_contention", "prep_slope", "prep_saturation", "b_g2_msm", "msm_b_g2", "seed",
];

/// Map a short or long key to its `section.field` name.
pub fn canonical_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "pw" | "pipeline.pw" => "pipeline.pw",
        "gw" | "pipeline.gw" => "pipeline.gw",
        "lock" | "pipeline.lock" => "pipeline.lock",
        "gpus" | "machine.gpus" => "machine.gpus",
        "c" | "proofs" | "pipeline.proofs" => "pipeline.proofs",
        "j" | "in_flight" | "pipeline.in_flight" => "pipeline.in_flight",
        "partitions" | "pipeline.partitions" => "pipeline.partitions",
        "queue" | "queue_capacity" | "pipeline.queue_capacity" => "pipeline.queue_capacity",
        "split" | "split_finalize" | "pipeline.split_finalize" => "pipeline.split_finalize",
        "finalizers" | "pipeline.finalizers" => "pipeline.finalizers",
        "prestage" | "pipeline.prestage" => "pipeline.prestage",
        "permit_until_send" | "pipeline.permit_until_send" => "pipeline.permit_until_send",
        "uploads_wait_for_kernels" | "pipeline.uploads_wait_for_kernels" => "pipeline.uploads_wait_for_kernels",
        "upload_after_prep" | "pipeline.upload_after_prep" => "pipeline.upload_after_prep",
        "prep_threads" | "pipeline.prep_threads" => "pipeline.prep_threads",
        "device_global_sync" | "pipeline.device_global_sync" => "pipeline.device_global_sync",
        "ram" | "ram_gib" | "machine.ram_gib" => "machine.ram_gib",
        "total_budget" | "budget" | "memory.total_budget" => "memory.total_budget",
        "safety_margin" | "memory.safety_margin" => "memory.safety_margin",
        "vram_budget" | "vram_budget_gib" | "memory.vram_budget_gib" => "memory.vram_budget_gib",
        "vram" | "vram_gib" | "machine.vram_gib" => "machine.vram_gib",
        "cores" | "cpu_cores" | "machine.cpu_cores" => "machine.cpu_cores",
        "capacity" | "cpu_capacity" | "machine.cpu_capacity" => "machine.cpu_capacity",
        "pool_gain" | "synth_pool_gain" | "cpu.synth_pool_gain" => "cpu.synth_pool_gain",
        "pool_exponent" | "synth_pool_exponent" | "cpu.synth_pool_exponent" => "cpu.synth_pool_exponent",
        "bandwidth" | "mem_bandwidth_gbs" | "machine.mem_bandwidth_gbs" => "machine.mem_bandwidth_gbs",
        "pcie" | "pcie_gbs" | "machine.pcie_gbs" => "machine.pcie_gbs",
        "slope" | "synth_slope" | "contention.synth_slope" => "contention.synth_slope",
        "knee" | "synth_knee" | "contention.synth_knee" => "contention.synth_knee",
        "prep_contention" | "contention.prep" => "contention.prep",
        "prep_slope" | "contention.prep_slope" => "contention.prep_slope",
        "prep_saturation" | "contention.prep_saturation" => "contention.prep_saturation",
        "b_g2_msm" | "costs.b_g2_msm" => "costs.b_g2_msm",
        "msm_b_g2" | "costs.msm_b_g2" => "costs.msm_b_g2",
        "seed" => "seed",
        _ => return None,
    })
}

