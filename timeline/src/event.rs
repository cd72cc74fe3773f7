//! The event model: the one vocabulary shared by the prover, the simulator and the
//! cuzk-log reader. Everything proofscope measures or predicts is a [`Span`] (a stage with a
//! start and an end), a [`Counter`] sample (a time series value) or the [`RunMeta`] that
//! says what was run. A [`Run`] is all three, plus the [`Diagnostics`] of the reader that
//! built it.
//!
//! Times are integer nanoseconds since the run epoch (the engine's start), so that
//! simulator and prover timelines compare exactly and nothing drifts through floats.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Version of the JSON-lines schema and of `summary.json`. Bump on any breaking change.
pub const SCHEMA_VERSION: u32 = 1;

/// Span kind names as they appear on the wire: JSON lines, the prover's `tracing` span
/// names, the simulator's spans. Producers name their spans with these constants (a typo is
/// a compile error, not an unknown kind), and [`SpanKind`] maps them to variants.
pub mod kind {
    pub const SYNTHESIS: &str = "synthesis";
    /// Inside `synthesis` on the pre-compiled path: the circuit run for its witness only.
    pub const WITNESS: &str = "witness";
    /// Inside `synthesis` on the pre-compiled path: a, b, c = A·w, B·w, C·w (arg `bytes`).
    pub const CONSTRAINTS: &str = "constraints";
    /// Loading or extracting a circuit shape's pre-compiled constraints (once per shape).
    pub const PCE_BUILD: &str = "pce_build";
    /// A partition waiting while another reads the pre-compiled constraints from their cache.
    pub const PCE_WAIT: &str = "pce_wait";
    pub const GPU_QUEUE: &str = "gpu_queue";
    pub const GPU_PICKUP: &str = "gpu_pickup";
    pub const GPU: &str = "gpu";
    pub const PREP_MSM: &str = "prep_msm";
    pub const NTT: &str = "ntt";
    pub const MSM_H: &str = "msm_h";
    pub const NTT_MSM_H: &str = "ntt_msm_h";
    pub const MSM_REST: &str = "msm_rest";
    pub const MSM_L: &str = "msm_l";
    pub const MSM_A: &str = "msm_a";
    pub const MSM_B_G1: &str = "msm_b_g1";
    pub const MSM_B_G2: &str = "msm_b_g2";
    pub const BATCH_ADD: &str = "batch_add";
    pub const TAIL_MSM: &str = "tail_msm";
    pub const CPU_MSM_B_G2: &str = "cpu_msm_b_g2";
    pub const H2D: &str = "h2d";
    pub const D2H: &str = "d2h";
    pub const SHIFT_TABLE: &str = "shift_table";
    pub const SETUP: &str = "setup";
    pub const LOCK_WAIT: &str = "lock_wait";
    pub const LOCK_HOLD: &str = "lock_hold";
    pub const FINALIZE: &str = "finalize";
    pub const VERIFY: &str = "verify";
    pub const FALLBACK: &str = "fallback";
    pub const RAM_WAIT: &str = "ram_wait";
    /// A partition that failed for good (arg `error`): its proof is not counted.
    pub const FAILED: &str = "failed";
    /// A device kernel read from another tool's trace (a Chrome / Perfetto trace such as
    /// PyTorch's Kineto writes: `read::chrome`); its name is the span's `name` argument.
    pub const KERNEL: &str = "kernel";
    /// A device memory copy read from another tool's trace (Kineto's `gpu_memcpy`).
    pub const MEMCPY: &str = "memcpy";
    /// A device memset read from another tool's trace (Kineto's `gpu_memset`).
    pub const MEMSET: &str = "memset";
    /// Names earlier versions wrote, read as today's kind: (old name, kind).
    pub const ALIASES: &[(&str, &str)] = &[("b_g2_msm", CPU_MSM_B_G2)];
}

/// Well-known span argument keys (`Span::args`), shared by the producers and the analyses.
pub mod arg {
    /// Device time of the span's kernels or copy, from CUDA events, ns.
    pub const GPU_NS: &str = "gpu_ns";
    /// Host steps of a copy after the device copy ended (hand-over to the compute stream), ns.
    pub const FINISH_NS: &str = "finish_ns";
    /// What a copy moves: `params`, `abc`, `points`, ...
    pub const WHAT: &str = "what";
    /// Bytes a copy moves.
    pub const BYTES: &str = "bytes";
    /// The CUDA stream (lane) an MSM ran on.
    pub const LANE: &str = "lane";
    /// Chunks a streamed MSM ran in.
    pub const CHUNKS: &str = "chunks";
    /// Which lock a `lock_wait` / `lock_hold` / `gpu` span is about (the lock mode on `gpu`).
    pub const LOCK: &str = "lock";
    /// Which query an MSM piece works on (`l`, `a`, `b_g1`, `b_g2`).
    pub const QUERY: &str = "query";
    /// Points (terms) of an MSM.
    pub const POINTS: &str = "points";
    /// CPU time the span's work took, summed over the threads that ran it (each thread's own
    /// clock: running, not waiting to run), ns. On `prep_msm`, and on `synthesis` when it ran
    /// on its worker's own pool (that pool's threads' CPU time over it).
    pub const CPU_NS: &str = "cpu_ns";
    /// Threads of the pool the span's work ran on (`prep_msm`, `witness`, `synthesis`).
    pub const THREADS: &str = "threads";
}

/// What a span measures. A closed set, plus [`SpanKind::Other`] so that producers we do
/// not know still load (their spans are kept and shown, just not interpreted).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpanKind {
    /// CPU synthesis of one partition (witness + A/B/C evaluation).
    Synthesis,
    /// Witness generation of a synthesis on the pre-compiled path (nested in `synthesis`).
    Witness,
    /// The sparse products a/b/c = A/B/C·w of a synthesis on the pre-compiled path (nested
    /// in `synthesis`; arg `bytes`: the memory traffic they need at least).
    Constraints,
    /// Loading (or extracting and caching) a circuit shape's pre-compiled constraints.
    PceBuild,
    /// A partition waiting for the pre-compiled constraints another partition reads from
    /// their cache (before its `synthesis`).
    PceWait,
    /// Partition waiting in the GPU queue: from queued to picked up by a GPU worker.
    GpuQueue,
    /// From pickup by a GPU worker to the start of its prove call.
    GpuPickup,
    /// The whole prove call of one partition on one GPU worker (cuzk's GPU_START..GPU_END).
    Gpu,
    /// CPU preparation for the MSMs (density bitmaps, pointer setup).
    PrepMsm,
    /// NTTs of the H computation.
    Ntt,
    /// The H query's MSM.
    MsmH,
    /// NTTs and the H MSM as one phase: what a model (the simulator) predicts when it does
    /// not split them.
    NttMsmH,
    /// The L, A and B-in-G1 MSMs as one phase (a model's combined span, beside
    /// [`SpanKind::NttMsmH`]).
    MsmRest,
    MsmL,
    MsmA,
    MsmBG1,
    /// The B query's MSM in G2 on the device (`g2_msm = device`); [`SpanKind::CpuMsmBG2`] is
    /// the same MSM on the host CPU.
    MsmBG2,
    /// Bitmap-selected additions of the scalar-one terms.
    BatchAdd,
    /// The MSM over the remaining (neither zero nor one) scalars.
    TailMsm,
    /// The B query's MSM in G2 on the host CPU (`g2_msm = cpu`; earlier name `b_g2_msm`).
    CpuMsmBG2,
    /// Host-to-device copy.
    H2d,
    /// Device-to-host copy.
    D2h,
    /// One-time build of a table of shifted bases on the device (per parameter set).
    ShiftTable,
    /// The parameters made in process by the TEST-ONLY setup (`prove --setup-on-device`),
    /// once, before the engine starts: setup work, not part of any partition's cost.
    Setup,
    LockWait,
    LockHold,
    /// Proof assembly (and, without split finalisation, the CPU epilogue).
    Finalize,
    /// Verification of a partition proof (`verify = true`).
    Verify,
    /// A partition proved on another path after its device failed (e.g. the CPU after an
    /// out-of-memory error).
    Fallback,
    /// A synthesis waiting for its working set to fit in the host-RAM budget before it starts.
    RamWait,
    /// A partition that failed for good (zero length, at the failure; arg `error`): the job is
    /// failed, not complete, and none of its time counts as a proof's.
    Failed,
    /// A device kernel of another tool's trace (`read::chrome`): device work, its name in
    /// the `name` argument.
    Kernel,
    /// A device memory copy of another tool's trace (any direction): device work.
    Memcpy,
    /// A device memset of another tool's trace: device work.
    Memset,
    /// A kind this version does not know; the string is kept verbatim.
    Other(String),
}

impl SpanKind {
    /// Every known kind, in pipeline order (used for legends and stable table order).
    pub const KNOWN: [SpanKind; 34] = [
        SpanKind::Synthesis,
        SpanKind::Witness,
        SpanKind::Constraints,
        SpanKind::PceBuild,
        SpanKind::PceWait,
        SpanKind::GpuQueue,
        SpanKind::GpuPickup,
        SpanKind::Gpu,
        SpanKind::PrepMsm,
        SpanKind::Ntt,
        SpanKind::MsmH,
        SpanKind::NttMsmH,
        SpanKind::MsmRest,
        SpanKind::MsmL,
        SpanKind::MsmA,
        SpanKind::MsmBG1,
        SpanKind::MsmBG2,
        SpanKind::BatchAdd,
        SpanKind::TailMsm,
        SpanKind::CpuMsmBG2,
        SpanKind::H2d,
        SpanKind::D2h,
        SpanKind::ShiftTable,
        SpanKind::Setup,
        SpanKind::LockWait,
        SpanKind::LockHold,
        SpanKind::Finalize,
        SpanKind::Verify,
        SpanKind::Fallback,
        SpanKind::RamWait,
        SpanKind::Failed,
        SpanKind::Kernel,
        SpanKind::Memcpy,
        SpanKind::Memset,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            SpanKind::Synthesis => kind::SYNTHESIS,
            SpanKind::Witness => kind::WITNESS,
            SpanKind::Constraints => kind::CONSTRAINTS,
            SpanKind::PceBuild => kind::PCE_BUILD,
            SpanKind::PceWait => kind::PCE_WAIT,
            SpanKind::GpuQueue => kind::GPU_QUEUE,
            SpanKind::GpuPickup => kind::GPU_PICKUP,
            SpanKind::Gpu => kind::GPU,
            SpanKind::PrepMsm => kind::PREP_MSM,
            SpanKind::Ntt => kind::NTT,
            SpanKind::MsmH => kind::MSM_H,
            SpanKind::NttMsmH => kind::NTT_MSM_H,
            SpanKind::MsmRest => kind::MSM_REST,
            SpanKind::MsmL => kind::MSM_L,
            SpanKind::MsmA => kind::MSM_A,
            SpanKind::MsmBG1 => kind::MSM_B_G1,
            SpanKind::MsmBG2 => kind::MSM_B_G2,
            SpanKind::BatchAdd => kind::BATCH_ADD,
            SpanKind::TailMsm => kind::TAIL_MSM,
            SpanKind::CpuMsmBG2 => kind::CPU_MSM_B_G2,
            SpanKind::H2d => kind::H2D,
            SpanKind::D2h => kind::D2H,
            SpanKind::ShiftTable => kind::SHIFT_TABLE,
            SpanKind::Setup => kind::SETUP,
            SpanKind::LockWait => kind::LOCK_WAIT,
            SpanKind::LockHold => kind::LOCK_HOLD,
            SpanKind::Finalize => kind::FINALIZE,
            SpanKind::Verify => kind::VERIFY,
            SpanKind::Fallback => kind::FALLBACK,
            SpanKind::RamWait => kind::RAM_WAIT,
            SpanKind::Failed => kind::FAILED,
            SpanKind::Kernel => kind::KERNEL,
            SpanKind::Memcpy => kind::MEMCPY,
            SpanKind::Memset => kind::MEMSET,
            SpanKind::Other(s) => s,
        }
    }

    /// The known kind of a name (today's or an earlier alias), `None` for anything else.
    /// Producers use this to check their names; readers use [`str::parse`], which keeps an
    /// unknown name as [`SpanKind::Other`].
    pub fn known(name: &str) -> Option<SpanKind> {
        let name = kind::ALIASES.iter().find(|(old, _)| *old == name).map_or(name, |(_, new)| new);
        SpanKind::KNOWN.iter().find(|k| k.as_str() == name).cloned()
    }

    /// Work done by the device itself (true kernel or copy time, from CUDA events or a
    /// model). Their union is "kernel utilisation", as opposed to the union of `gpu` spans.
    pub fn is_device_work(&self) -> bool {
        matches!(
            self,
            SpanKind::Ntt
                | SpanKind::MsmH
                | SpanKind::NttMsmH
                | SpanKind::MsmRest
                | SpanKind::MsmL
                | SpanKind::MsmA
                | SpanKind::MsmBG1
                | SpanKind::MsmBG2
                | SpanKind::BatchAdd
                | SpanKind::TailMsm
                | SpanKind::H2d
                | SpanKind::D2h
                | SpanKind::Kernel
                | SpanKind::Memcpy
                | SpanKind::Memset
        )
    }

    /// Device compute kernels (device work without the copies and memsets).
    pub fn is_kernel(&self) -> bool {
        self.is_device_work() && !matches!(self, SpanKind::H2d | SpanKind::D2h | SpanKind::Memcpy | SpanKind::Memset)
    }

    /// Host-side synthesis work: a partition's `synthesis` and the phases nested in it on the
    /// pre-compiled path (`witness`, `constraints`), the one-time `pce_build` and the
    /// partitions' `pce_wait` for it.
    pub fn is_synthesis_side(&self) -> bool {
        matches!(self, SpanKind::Synthesis | SpanKind::Witness | SpanKind::Constraints | SpanKind::PceBuild | SpanKind::PceWait)
    }

    /// CPU phases that sit beside or around the kernels of a GPU worker.
    pub fn is_cpu_gpu_side(&self) -> bool {
        matches!(self, SpanKind::PrepMsm | SpanKind::CpuMsmBG2 | SpanKind::Finalize)
    }
}

impl fmt::Display for SpanKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SpanKind {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(SpanKind::known(s).unwrap_or_else(|| SpanKind::Other(s.to_string())))
    }
}

impl Serialize for SpanKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl schemars::JsonSchema for SpanKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SpanKind".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let known: Vec<&str> = SpanKind::KNOWN.iter().map(|k| k.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "description": "A span kind: one of the known names (`examples`), or any other name a producer used (read as `Other`).",
            "examples": known,
        })
    }
}

impl<'de> Deserialize<'de> for SpanKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(s.parse().unwrap_or_else(|e: std::convert::Infallible| match e {}))
    }
}

/// Free-form key/value annotations of a span (e.g. `gpu_ms`, `synth_ms`, `lock`, `bytes`):
/// a map of unique keys kept in key order — it reads, compares, serialises and
/// deserialises as the `BTreeMap<String, serde_json::Value>` it replaced (same JSON, same
/// schema) — held in one small vector. A span has none to a few; a `BTreeMap` took a node
/// of ~640 bytes for the first one, 256 MB for a 1.2M-event cuzk log's 400k spans with one
/// argument each (issue 17), this takes 64.
#[derive(Clone, Default, PartialEq)]
pub struct Args(Vec<(String, serde_json::Value)>);

impl Args {
    pub fn new() -> Args {
        Args(Vec::new())
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    fn find(&self, k: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(x, _)| x.as_str().cmp(k))
    }
    pub fn get(&self, k: &str) -> Option<&serde_json::Value> {
        self.find(k).ok().map(|i| &self.0[i].1)
    }
    pub fn get_mut(&mut self, k: &str) -> Option<&mut serde_json::Value> {
        self.find(k).ok().map(|i| &mut self.0[i].1)
    }
    pub fn contains_key(&self, k: &str) -> bool {
        self.find(k).is_ok()
    }
    /// Set `k` to `v`; the value it had, if any (as `BTreeMap::insert`).
    pub fn insert(&mut self, k: String, v: serde_json::Value) -> Option<serde_json::Value> {
        match self.find(&k) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, v)),
            Err(i) => {
                self.insert_at(i, k, v);
                None
            }
        }
    }
    /// A new key at its place `i` (from [`Self::find`]'s `Err`).
    fn insert_at(&mut self, i: usize, k: String, v: serde_json::Value) {
        // The first one takes room for itself only (a vector grows to 4 at once).
        if self.0.capacity() == 0 {
            self.0.reserve_exact(1);
        }
        self.0.insert(i, (k, v));
    }
    /// Every argument removed.
    pub fn clear(&mut self) {
        self.0.clear();
    }
    pub fn remove(&mut self, k: &str) -> Option<serde_json::Value> {
        self.find(k).ok().map(|i| self.0.remove(i).1)
    }
    /// The entry of `k`, for `or_insert` / `or_insert_with`.
    pub fn entry(&mut self, k: String) -> ArgEntry<'_> {
        ArgEntry { args: self, key: k }
    }
    /// The pairs in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&String, &serde_json::Value)> + ExactSizeIterator + Clone {
        self.0.iter().map(|(k, v)| (k, v))
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.0.iter().map(|(k, _)| k)
    }
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &serde_json::Value> + ExactSizeIterator + Clone {
        self.0.iter().map(|(_, v)| v)
    }
}

/// A key of [`Args`] that may not be there yet.
pub struct ArgEntry<'a> {
    args: &'a mut Args,
    key: String,
}

impl<'a> ArgEntry<'a> {
    pub fn or_insert(self, v: serde_json::Value) -> &'a mut serde_json::Value {
        self.or_insert_with(|| v)
    }
    pub fn or_insert_with(self, f: impl FnOnce() -> serde_json::Value) -> &'a mut serde_json::Value {
        let i = match self.args.find(&self.key) {
            Ok(i) => i,
            Err(i) => {
                self.args.insert_at(i, self.key, f());
                i
            }
        };
        &mut self.args.0[i].1
    }
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl std::ops::Index<&str> for Args {
    type Output = serde_json::Value;
    /// As `BTreeMap`'s: panics when the key is not there.
    fn index(&self, k: &str) -> &serde_json::Value {
        self.get(k).expect("no entry found for key")
    }
}

impl Extend<(String, serde_json::Value)> for Args {
    /// Each pair inserted in turn: a key already there takes the new value.
    fn extend<I: IntoIterator<Item = (String, serde_json::Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(String, serde_json::Value)> for Args {
    /// Of pairs with the same key, the last one's value (as `BTreeMap`'s).
    fn from_iter<I: IntoIterator<Item = (String, serde_json::Value)>>(iter: I) -> Args {
        let mut v: Vec<(String, serde_json::Value)> = iter.into_iter().collect();
        // Stable: equal keys keep their order, the last one is kept.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(String, serde_json::Value)> = Vec::with_capacity(v.len());
        for (k, x) in v {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = x,
                _ => out.push((k, x)),
            }
        }
        Args(out)
    }
}

impl IntoIterator for Args {
    type Item = (String, serde_json::Value);
    type IntoIter = std::vec::IntoIter<(String, serde_json::Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Args {
    type Item = (&'a String, &'a serde_json::Value);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (String, serde_json::Value)>, fn(&'a (String, serde_json::Value)) -> (&'a String, &'a serde_json::Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl Serialize for Args {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Args, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Args;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Args, A::Error> {
                let mut a = Args(Vec::with_capacity(m.size_hint().unwrap_or(0).min(64)));
                while let Some((k, v)) = m.next_entry::<String, serde_json::Value>()? {
                    a.insert(k, v);
                }
                Ok(a)
            }
        }
        d.deserialize_map(V)
    }
}

impl schemars::JsonSchema for Args {
    // The schema of the map it replaced.
    fn inline_schema() -> bool {
        <BTreeMap<String, serde_json::Value>>::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <BTreeMap<String, serde_json::Value>>::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        <BTreeMap<String, serde_json::Value>>::schema_id()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <BTreeMap<String, serde_json::Value>>::json_schema(g)
    }
}

/// A job's id as spans hold it: shared, so that a reader interns each id once and a span's
/// copy does not allocate (a million spans of a few thousand jobs).
pub type JobId = std::sync::Arc<str>;

/// What [`Span::job`] takes: an id to share ([`JobId`], cloned without allocating) or text.
pub trait IntoJobId {
    fn into_job_id(self) -> JobId;
}
impl IntoJobId for JobId {
    fn into_job_id(self) -> JobId {
        self
    }
}
impl IntoJobId for &JobId {
    fn into_job_id(self) -> JobId {
        self.clone()
    }
}
impl IntoJobId for &str {
    fn into_job_id(self) -> JobId {
        self.into()
    }
}
impl IntoJobId for String {
    fn into_job_id(self) -> JobId {
        self.into()
    }
}
impl IntoJobId for &String {
    fn into_job_id(self) -> JobId {
        self.as_str().into()
    }
}

/// One stage of the pipeline, on one resource, for one partition of one job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Span {
    pub kind: SpanKind,
    /// Nanoseconds since the run epoch.
    pub start_ns: u64,
    /// `None` when the span never ended (a killed run): reported as open, never counted busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
    /// The job (proof / sector request) this span belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u32>,
    /// Worker index. Synthesis spans: partition-worker index. GPU-side spans: GPU worker
    /// index within `device`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
    /// Device index (GPU ordinal; the CPU backend counts as a device too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    #[serde(default, skip_serializing_if = "Args::is_empty")]
    pub args: Args,
}

impl Span {
    pub fn new(kind: SpanKind, start_ns: u64, end_ns: u64) -> Self {
        Span {
            kind,
            start_ns,
            end_ns: Some(end_ns),
            job: None,
            partition: None,
            worker: None,
            device: None,
            args: Args::new(),
        }
    }
    pub fn job(mut self, job: impl IntoJobId) -> Self {
        self.job = Some(job.into_job_id());
        self
    }
    pub fn partition(mut self, p: u32) -> Self {
        self.partition = Some(p);
        self
    }
    pub fn worker(mut self, w: u32) -> Self {
        self.worker = Some(w);
        self
    }
    pub fn device(mut self, d: u32) -> Self {
        self.device = Some(d);
        self
    }
    pub fn arg(mut self, k: impl Into<String>, v: impl Into<serde_json::Value>) -> Self {
        self.args.insert(k.into(), v.into());
        self
    }
    /// Duration in ns; 0 for open spans.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.map_or(0, |e| e.saturating_sub(self.start_ns))
    }
    pub fn is_open(&self) -> bool {
        self.end_ns.is_none()
    }
    /// Device of the span, 0 when the producer did not say (single-GPU logs such as cuzk's).
    pub fn device_or_0(&self) -> u32 {
        self.device.unwrap_or(0)
    }

    /// Whether this span is one-time setup rather than a partition's work: the in-process
    /// TEST-ONLY setup (`setup`, `prove --setup-on-device`), and the upload of the
    /// parameters' query points (`h2d` with `what = "params"`), done once per parameter set
    /// inside the first partition's prove call. The device was busy (utilisation counts it),
    /// but it is not part of any partition's kernel time, nor of the GPU floor per partition.
    pub fn is_setup_work(&self) -> bool {
        self.kind == SpanKind::Setup || self.kind == SpanKind::H2d && self.args.get(arg::WHAT).and_then(|v| v.as_str()) == Some("params")
    }

    /// The interval `[start, end)` in which this span kept its device busy; None when open.
    /// A copy (`h2d`, `d2h`) that reports its device time (`gpu_ns`) spans host steps too —
    /// allocation, pinned staging, the host fill before the copy, the hand-over after it
    /// (`finish_ns`) — so only its copy counts: the `gpu_ns` before the hand-over, i.e.
    /// `[end - finish_ns - gpu_ns, end - finish_ns)`, clamped to the span. Other spans, and
    /// copies without `gpu_ns` (cuzk logs, the simulator, another tool's `memcpy`), count
    /// whole; a `memcpy` with `gpu_ns` (our own `trace.json` read back) as an `h2d`.
    pub fn device_interval(&self) -> Option<(u64, u64)> {
        let end = self.end_ns?;
        if matches!(self.kind, SpanKind::H2d | SpanKind::D2h | SpanKind::Memcpy) {
            let num = |k: &str| self.args.get(k).and_then(|v| v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)));
            if let Some(gpu) = num(arg::GPU_NS) {
                let e = end.saturating_sub(num(arg::FINISH_NS).unwrap_or(0)).max(self.start_ns);
                return Some((e.saturating_sub(gpu).max(self.start_ns), e));
            }
        }
        Some((self.start_ns, end))
    }
}

/// Well-known counter names. Units are in the names.
pub mod counters {
    /// GPU utilisation as reported by NVML, percent (0..100).
    pub const GPU_UTIL_PCT: &str = "gpu_util_pct";
    pub const GPU_MEM_USED_BYTES: &str = "gpu_mem_used_bytes";
    pub const GPU_POWER_W: &str = "gpu_power_w";
    pub const SM_CLOCK_MHZ: &str = "sm_clock_mhz";
    /// Partitions waiting in the GPU queue.
    pub const QUEUE_DEPTH: &str = "queue_depth";
    /// Resident set size of the process, bytes.
    pub const RSS_BYTES: &str = "rss_bytes";
    /// Host CPU cores the process kept busy over the last sample period (user + system
    /// CPU time ÷ wall time, from /proc/self/stat): what calibration fits each CPU phase's
    /// core demand from.
    pub const CPU_BUSY_CORES: &str = "cpu_busy_cores";
    /// Cores busy on the whole machine over the last sample period, every process (user +
    /// nice + system + irq + softirq from /proc/stat's `cpu` line ÷ wall time): minus
    /// `cpu_busy_cores`, what other processes took.
    pub const HOST_BUSY_CORES: &str = "host_busy_cores";
    /// Cores the hypervisor gave to someone else while this machine wanted them (/proc/stat
    /// steal ÷ wall time): other tenants of a virtual machine's host, invisible otherwise.
    pub const HOST_STEAL_CORES: &str = "host_steal_cores";
    /// Bytes reserved from the engine's host-RAM budget, sampled at every reservation and
    /// release (the budget itself is the run meta's `extra.ram_budget_bytes`).
    pub const RAM_RESERVED_BYTES: &str = "ram_reserved_bytes";
}

/// Keys of [`RunMeta::extra`] that the analyses read.
pub mod extra {
    /// The host-RAM budget the run was made under, bytes.
    pub const RAM_BUDGET_BYTES: &str = "ram_budget_bytes";
    /// Threads of a synthesis's pool on the pre-compiled path, as resolved (the prover).
    pub const SYNTHESIS_THREADS: &str = "synthesis_threads";
    /// Whether the synthesis workers shared one pool (the prover, since 2026-12-04).
    pub const SYNTHESIS_SHARED_POOL: &str = "synthesis_shared_pool";
}

/// One sample of a time series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counter {
    pub name: String,
    pub t_ns: u64,
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
}

/// What the device lock of a GPU worker covers: the engine's knob and the simulator's,
/// defined once here because both write it into [`RunConfig::lock`] and calibration reads
/// it back from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockMode {
    /// One lock around the whole prove call (CPU prep, kernels, epilogue).
    Whole,
    /// A lock around the device compute only (uploads + kernels); prep before, epilogue after.
    Kernels,
    /// Separate VRAM-allocation (allocation + upload) and compute (kernels) locks.
    #[serde(alias = "two-lock")]
    TwoLock,
}

impl LockMode {
    pub fn as_str(self) -> &'static str {
        match self {
            LockMode::Whole => "whole",
            LockMode::Kernels => "kernels",
            LockMode::TwoLock => "two_lock",
        }
    }
    /// `None` for anything that is not a lock mode.
    pub fn parse(s: &str) -> Option<LockMode> {
        s.parse().ok()
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LockMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "whole" => Ok(LockMode::Whole),
            "kernels" => Ok(LockMode::Kernels),
            "two_lock" | "two-lock" => Ok(LockMode::TwoLock),
            other => Err(format!("unknown lock mode `{other}` (expected whole, kernels or two_lock)")),
        }
    }
}

/// The pipeline configuration a run was made with. All optional: a cuzk log says none of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunConfig {
    /// Partition-synthesis workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pw: Option<u32>,
    /// GPU workers per device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gw: Option<u32>,
    /// What the device lock covers ([`LockMode`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_finalize: Option<bool>,
    /// Finaliser threads (with split finalisation; absent = not recorded or unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<u32>,
    /// `cpu`, `cuda`, `sim`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Where a GPU backend computed the G2 MSM: `device` (span `msm_b_g2`) or `cpu`
    /// (span `cpu_msm_b_g2`); absent = not recorded (the CPU, as before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub g2_msm: Option<String>,
}

/// The machine a run was made on, as far as the producer could read it (all optional: a
/// cuzk log says none of it). `calibrate` takes the simulator's machine from here.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineInfo {
    /// Host CPU cores available to the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<u32>,
    /// Host RAM (MemTotal), GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ram_gib: Option<f64>,
    /// Device memory of each device in use, GiB.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_mem_gib: Vec<f64>,
    /// Host memory bandwidth, GB/s, when the producer measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_bandwidth_gbs: Option<f64>,
}

impl MachineInfo {
    pub fn is_empty(&self) -> bool {
        *self == MachineInfo::default()
    }
}

/// What was run, where, by which tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunMeta {
    pub schema_version: u32,
    /// Producer: `prover`, `simulator`, `cuzk-log`, ...
    pub source: String,
    pub tool_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// Wall-clock time of the run epoch, RFC 3339, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default)]
    pub config: RunConfig,
    /// The machine (cores, RAM, device memory) where the producer could read it.
    #[serde(default, skip_serializing_if = "MachineInfo::is_empty")]
    pub machine: MachineInfo,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl RunMeta {
    /// The synthesis workers shared one thread pool: [`extra::SYNTHESIS_SHARED_POOL`], or in
    /// timelines written before that key [`extra::SYNTHESIS_THREADS`] = 0 (the old default).
    /// The one reading of those keys for the analyzer and the simulator's calibration.
    pub fn synthesis_pool_shared(&self) -> bool {
        match self.extra.get(extra::SYNTHESIS_SHARED_POOL).and_then(|v| v.as_bool()) {
            Some(shared) => shared,
            None => self.extra.get(extra::SYNTHESIS_THREADS).and_then(|v| v.as_u64()) == Some(0),
        }
    }

    pub fn new(source: impl Into<String>) -> Self {
        RunMeta {
            schema_version: SCHEMA_VERSION,
            source: source.into(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host: None,
            cpu: None,
            gpus: Vec::new(),
            started_at: None,
            config: RunConfig::default(),
            machine: MachineInfo::default(),
            extra: BTreeMap::new(),
        }
    }

    /// What the reports and the verdict call the proving device: "CPU device" on a run of
    /// the CPU backend (its "device" is a lock around CPU MSMs and NTTs, not a GPU), "GPU"
    /// otherwise (cuzk logs, CUDA runs, simulated GPUs).
    pub fn device_word(&self) -> &'static str {
        if self.config.backend.as_deref() == Some("cpu") {
            "CPU device"
        } else {
            "GPU"
        }
    }
}

impl Default for RunMeta {
    fn default() -> Self {
        RunMeta::new("unknown")
    }
}

/// One line of the JSON-lines format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Meta(RunMeta),
    Span(Span),
    Counter(Counter),
}

/// A reader's warning about one input line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineWarning {
    /// 1-based line number in the input.
    pub line: u64,
    pub message: String,
}

/// What the reader saw and set aside: nothing is dropped silently.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnostics {
    /// `jsonl`, `cuzk` (`cuzk (<wrapper>)` when forced), `chrome-trace` or `nsys-sqlite`.
    pub format: String,
    /// Lines read. A Chrome trace (one JSON document) counts its trace events here and in
    /// the other counts instead of lines; its warnings name the event (`event #12`) and
    /// carry the line where that event starts.
    pub lines_total: u64,
    /// Lines that were events of the format (TIMELINE lines, JSON records).
    pub event_lines: u64,
    /// Lines that looked like events but could not be used (malformed, unknown event,
    /// duplicate, END without START, a time out of range).
    pub lines_rejected: u64,
    /// Ordinary log lines skipped on purpose (cuzk logs mix them in).
    pub lines_ignored: u64,
    /// Spans that started but never ended (a killed run).
    pub open_spans: u64,
    /// Of `lines_rejected`: exact repeats of an earlier event (same kind, job, partition,
    /// worker, start and end), dropped so that nothing counts twice.
    #[serde(default)]
    pub duplicates: u64,
    /// Lines that are not text (invalid UTF-8 or NUL bytes): a binary or compressed file.
    #[serde(default)]
    pub binary_lines: u64,
    /// The first warnings, with their line numbers (capped; see `lines_rejected` for the count).
    pub warnings: Vec<LineWarning>,
    /// What is wrong with the input as a whole (no events at all, an unknown schema
    /// version, a binary file): one sentence each. `--strict` fails on any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// cuzk logs: event lines per wrapper (`plain`, `journal`, `journal_json`, `docker`,
    /// `daemon_json`; see `read::wrap`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wrappers: BTreeMap<String, u64>,
    /// cuzk logs that span daemon restarts (offsets jumping back): one entry per daemon run,
    /// in file order; empty for a log of one daemon run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub daemon_runs: Vec<DaemonRun>,
}

/// One daemon run of a log that spans restarts (see `read::cuzk`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaemonRun {
    /// 1-based, in file order.
    pub index: u32,
    /// The line of its first event.
    pub first_line: u64,
    pub events: u64,
    /// Where the run sits on the log's one time axis, ms.
    pub start_ms: f64,
    /// Its last event's offset on that axis, ms.
    pub end_ms: f64,
    /// The daemon's start by the wrapper's wall clock (ns since the Unix epoch), when the
    /// lines carry one.
    pub wall_clock_start_ns: Option<i64>,
    /// `wall_clock` (every run has one: placed by it) or `end_to_end` (in file order).
    pub placed_by: String,
}

/// How many warnings are kept verbatim; the rest are only counted.
pub const MAX_KEPT_WARNINGS: usize = 50;

/// The latest time a reader accepts, ns since the run's epoch: 10 years. A run is hours,
/// a daemon's log weeks; anything beyond is a corrupt number, and keeping times within it
/// keeps every sum and difference of the analyses far from `u64` overflow.
pub const MAX_TIME_NS: u64 = 10 * 365_25 * 864 * 1_000_000_000;

impl Diagnostics {
    pub fn reject(&mut self, line: u64, message: impl Into<String>) {
        self.lines_rejected += 1;
        if self.warnings.len() < MAX_KEPT_WARNINGS {
            self.warnings.push(LineWarning { line, message: message.into() });
        }
    }
    /// [`Diagnostics::reject`], building the message only when it is kept.
    pub fn reject_with(&mut self, line: u64, message: impl FnOnce() -> String) {
        self.lines_rejected += 1;
        if self.warnings.len() < MAX_KEPT_WARNINGS {
            self.warnings.push(LineWarning { line, message: message() });
        }
    }
    /// True when the reader had anything to complain about (`--strict` fails on it).
    pub fn has_warnings(&self) -> bool {
        self.lines_rejected > 0 || self.open_spans > 0 || !self.problems.is_empty()
    }
    /// Add a problem of the input as a whole (once).
    pub fn problem(&mut self, message: impl Into<String>) {
        let m = message.into();
        if !self.problems.contains(&m) {
            self.problems.push(m);
        }
    }
}

/// A whole timeline: metadata, spans sorted by start, counters sorted by time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    pub meta: RunMeta,
    pub spans: Vec<Span>,
    pub counters: Vec<Counter>,
    #[serde(default)]
    pub diagnostics: Diagnostics,
}

impl Run {
    pub fn new(meta: RunMeta) -> Self {
        Run { meta, ..Default::default() }
    }

    /// The part of the run inside `[from_ns, to_ns)`, with times shifted so that `from_ns`
    /// is 0: spans that overlap the window, clipped to it (a span that never ended stays open),
    /// and the counters sampled in it. `meta.extra.window_ns` records `[from, to]` in the
    /// original times. For zooming into a few partitions (`analyze --window`).
    pub fn window(&self, from_ns: u64, to_ns: u64) -> Run {
        let mut meta = self.meta.clone();
        meta.extra.insert("window_ns".into(), serde_json::json!([from_ns, to_ns]));
        let spans = self
            .spans
            .iter()
            .filter(|s| s.start_ns < to_ns && s.end_ns.is_none_or(|e| e > from_ns))
            .map(|s| {
                let mut c = s.clone();
                c.start_ns = s.start_ns.max(from_ns) - from_ns;
                c.end_ns = s.end_ns.map(|e| e.min(to_ns) - from_ns);
                c
            })
            .collect();
        let counters = self.counters.iter().filter(|c| (from_ns..to_ns).contains(&c.t_ns)).map(|c| Counter { t_ns: c.t_ns - from_ns, ..c.clone() }).collect();
        let mut run = Run { meta, spans, counters, diagnostics: self.diagnostics.clone() };
        run.normalize();
        run
    }

    /// The x-axis title of the time charts: seconds since the run's start, or since the start
    /// of the window the run was cut to ([`Run::window`]).
    pub fn time_axis_label(&self) -> String {
        match self.meta.extra.get("window_ns").and_then(|w| w.get(0)).and_then(|v| v.as_u64()) {
            Some(from) => format!("time since the window's start, {:.3} s into the run (s)", from as f64 / 1e9),
            None => "time since run start (s)".to_string(),
        }
    }

    /// Sort spans by (start, end, kind) and counters by time; analyses rely on this order.
    pub fn normalize(&mut self) {
        let key = |s: &Span| (s.start_ns, s.end_ns.unwrap_or(u64::MAX));
        let sorted = self.spans.windows(2).all(|w| (key(&w[0]), &w[0].kind) <= (key(&w[1]), &w[1].kind));
        if !sorted {
            // Sort small keys (the index keeps it stable; on every core: ~0.1 s for a
            // million spans on one), then move each span once: sorting the spans themselves
            // moves ~150-byte structs log n times each.
            let spans = &self.spans;
            let mut order: Vec<(u64, u64, u32)> = spans.iter().enumerate().map(|(i, s)| (s.start_ns, s.end_ns.unwrap_or(u64::MAX), i as u32)).collect();
            rayon::slice::ParallelSliceMut::par_sort_unstable_by(&mut order[..], |a, b| {
                (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| spans[a.2 as usize].kind.cmp(&spans[b.2 as usize].kind)).then(a.2.cmp(&b.2))
            });
            // Applied in place, cycle by cycle (no second vector of spans: 126 MB for a
            // 1.2M-event log): position k takes the span at `from[k]`; a position done
            // points to itself.
            let mut from: Vec<u32> = order.into_iter().map(|(_, _, i)| i).collect();
            for start in 0..from.len() {
                let mut k = start;
                loop {
                    let src = from[k] as usize;
                    from[k] = k as u32;
                    if src == start || src == k {
                        break;
                    }
                    self.spans.swap(k, src);
                    k = src;
                }
            }
        }
        if !self.counters.windows(2).all(|w| w[0].t_ns <= w[1].t_ns) {
            self.counters.sort_by(|a, b| a.t_ns.cmp(&b.t_ns));
        }
    }

    /// Spans of one kind.
    pub fn spans_of<'a>(&'a self, kind: &'a SpanKind) -> impl Iterator<Item = &'a Span> + 'a {
        self.spans.iter().filter(move |s| &s.kind == kind)
    }

    /// Devices that have GPU-side spans, ascending.
    pub fn devices(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self
            .spans
            .iter()
            .filter(|s| s.kind == SpanKind::Gpu || s.kind.is_device_work())
            .map(|s| s.device_or_0())
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// Jobs in order of their first event.
    pub fn jobs(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for s in &self.spans {
            if let Some(j) = &s.job {
                if seen.insert(&**j) {
                    out.push(j.to_string());
                }
            }
        }
        out
    }

    /// Latest end (or start, for open spans) of any span: the run's extent in ns.
    pub fn end_ns(&self) -> u64 {
        self.spans.iter().map(|s| s.end_ns.unwrap_or(s.start_ns)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Args` replaced a `BTreeMap<String, Value>`: the same reads, JSON and schema.
    #[test]
    fn args_behave_as_the_btreemap_they_replaced() {
        use serde_json::{json, Value};
        let pairs: Vec<(String, Value)> = vec![
            ("gpu_ms".into(), json!(5642)),
            ("monolithic".into(), json!(true)),
            ("a".into(), json!("x")),
            ("gpu_ms".into(), json!(7.5)),
            ("z\"q".into(), json!([1, {"b": null}])),
        ];
        let a: Args = pairs.iter().cloned().collect();
        let b: BTreeMap<String, Value> = pairs.iter().cloned().collect();
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        assert_eq!(serde_json::to_string_pretty(&a).unwrap(), serde_json::to_string_pretty(&b).unwrap());
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert_eq!(a.len(), b.len());
        assert!(a.iter().eq(b.iter()), "pairs in key order, the last of a repeated key");
        assert!((&a).into_iter().eq(b.iter()) && a.keys().eq(b.keys()) && a.values().eq(b.values()));
        assert_eq!(a["gpu_ms"], json!(7.5));
        assert_eq!((a.get("nope"), a.contains_key("a"), a.contains_key("b")), (None, true, false));
        // Insert, entry, extend, remove: as the map's.
        let (mut a2, mut b2) = (a.clone(), b.clone());
        assert_eq!(a2.insert("a".into(), json!(1)), b2.insert("a".into(), json!(1)));
        assert_eq!(a2.insert("m".into(), json!(2)), b2.insert("m".into(), json!(2)));
        *a2.entry("m".into()).or_insert(json!(0)) = json!(3);
        *b2.entry("m".into()).or_insert(json!(0)) = json!(3);
        a2.entry("n".into()).or_insert_with(|| json!(4));
        b2.entry("n".into()).or_insert_with(|| json!(4));
        a2.extend([("a".to_string(), json!("again")), ("0".to_string(), json!(0))]);
        b2.extend([("a".to_string(), json!("again")), ("0".to_string(), json!(0))]);
        assert_eq!(a2.remove("monolithic"), b2.remove("monolithic"));
        assert_eq!(serde_json::to_string(&a2).unwrap(), serde_json::to_string(&b2).unwrap());
        // Read back from JSON (a repeated key: the last one), and compared.
        let text = r#"{"y": 1, "x": {"n": [1, 2]}, "y": 2}"#;
        let a3: Args = serde_json::from_str(text).unwrap();
        let b3: BTreeMap<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&a3).unwrap(), serde_json::to_string(&b3).unwrap());
        assert_eq!(a3, serde_json::from_str::<Args>(r#"{"x": {"n": [1, 2]}, "y": 2}"#).unwrap());
        assert_ne!(a3, Args::new());
        assert!(serde_json::from_str::<Args>("[1]").is_err());
        let schema = |s: schemars::Schema| serde_json::to_string(&s).unwrap();
        assert_eq!(schema(schemars::schema_for!(Args)), schema(schemars::schema_for!(BTreeMap<String, Value>)));
        use schemars::JsonSchema;
        assert_eq!((Args::inline_schema(), Args::schema_name()), (true, <BTreeMap<String, Value>>::schema_name()));
    }

    /// `normalize` sorts the spans in place: the order of a stable sort by (start, end, kind).
    #[test]
    fn normalize_sorts_in_place_as_a_stable_sort_would() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for n in [0usize, 1, 2, 3, 10, 257, 5000] {
            let mut run = Run::default();
            for i in 0..n {
                let kind = [SpanKind::Gpu, SpanKind::Synthesis, SpanKind::Ntt][next(3) as usize].clone();
                let start = next(40);
                let mut s = Span::new(kind, start, start + next(5)).partition(i as u32);
                if next(10) == 0 {
                    s.end_ns = None;
                }
                run.spans.push(s);
            }
            let mut want = run.spans.clone();
            want.sort_by(|a, b| (a.start_ns, a.end_ns.unwrap_or(u64::MAX), &a.kind).cmp(&(b.start_ns, b.end_ns.unwrap_or(u64::MAX), &b.kind)));
            run.normalize();
            assert_eq!(run.spans, want, "{n} spans");
        }
    }

    #[test]
    fn kind_round_trips_including_unknown() {
        for k in SpanKind::KNOWN.iter() {
            let j = serde_json::to_string(k).unwrap();
            let back: SpanKind = serde_json::from_str(&j).unwrap();
            assert_eq!(&back, k);
        }
        let old: SpanKind = serde_json::from_str("\"b_g2_msm\"").unwrap();
        assert_eq!(old, SpanKind::CpuMsmBG2);
        assert_eq!(SpanKind::known("warp_drive"), None);
        let back: SpanKind = serde_json::from_str("\"warp_drive\"").unwrap();
        assert_eq!(back, SpanKind::Other("warp_drive".into()));
        assert_eq!(serde_json::to_string(&back).unwrap(), "\"warp_drive\"");
    }

    #[test]
    fn a_window_keeps_what_overlaps_it_clipped_and_shifted() {
        let mut run = Run::new(RunMeta::new("t"));
        let mut open = Span::new(SpanKind::Gpu, 150, 0);
        open.end_ns = None;
        run.spans = vec![
            Span::new(SpanKind::Synthesis, 0, 50),  // before: dropped
            Span::new(SpanKind::Gpu, 90, 120),      // straddles the start: 0..20
            Span::new(SpanKind::MsmH, 110, 140),    // inside: 10..40
            Span::new(SpanKind::Ntt, 190, 260),     // straddles the end: 90..100
            Span::new(SpanKind::Finalize, 200, 300), // after: dropped
            open,                                   // open, started inside: stays open at 50
        ];
        run.counters = vec![Counter { name: "c".into(), t_ns: 99, value: 1.0, device: None }, Counter { name: "c".into(), t_ns: 100, value: 2.0, device: None }];
        let w = run.window(100, 200);
        let got: Vec<_> = w.spans.iter().map(|s| (s.kind.clone(), s.start_ns, s.end_ns)).collect();
        assert_eq!(got, vec![(SpanKind::Gpu, 0, Some(20)), (SpanKind::MsmH, 10, Some(40)), (SpanKind::Gpu, 50, None), (SpanKind::Ntt, 90, Some(100))]);
        assert_eq!(w.counters.iter().map(|c| (c.t_ns, c.value)).collect::<Vec<_>>(), vec![(0, 2.0)]);
        assert_eq!(w.meta.extra.get("window_ns"), Some(&serde_json::json!([100, 200])));
    }

    #[test]
    fn record_is_tagged() {
        let r = Record::Span(Span::new(SpanKind::Ntt, 5, 9).job("j").device(1));
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.starts_with("{\"type\":\"span\""), "{s}");
        assert_eq!(serde_json::from_str::<Record>(&s).unwrap(), r);
    }

    #[test]
    fn open_span_has_no_duration() {
        let mut s = Span::new(SpanKind::Gpu, 10, 20);
        assert_eq!(s.duration_ns(), 10);
        s.end_ns = None;
        assert_eq!(s.duration_ns(), 0);
        assert!(s.is_open());
    }
}
