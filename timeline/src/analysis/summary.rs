//! [`Summary`]: every analysis of a run in one serde struct — what `summary.json` holds.
//! The headline numbers are repeated at the top level so that a reader of the JSON (or a
//! notebook) finds them without knowing the nesting. Units are in every field name.
//! Schema versioned by [`SUMMARY_SCHEMA_VERSION`]; the field-by-field documentation is
//! in the README and in the docs of each analysis module.

use serde::{Deserialize, Serialize};

use super::gaps::{GapTotals, IdleGap};
use super::host::{self, HostLoad};
use super::memory::{self, Memory};
use super::phases::Phases;
use super::tables::{JobRow, PartitionRow};
use super::throughput::Throughput;
use super::transitions::Transition;
use super::utilization::Utilization;
use super::verdict::Verdict;
use super::{gaps, ms, phases, tables, throughput, transitions, utilization, verdict, AnalyzeOptions};
use crate::event::{Diagnostics, Run, RunMeta};

/// Version of the `summary.json` schema. Bump on any breaking change; the history is in
/// `docs/reference/summary-json.md`.
///
/// - 2: `throughput.partition_rate_s_per_proof` and `memory` (peak RSS, device memory) added
///   (the simulator's parity now compares two summaries); span kinds `cpu_msm_b_g2` (was
///   `b_g2_msm`), `ntt_msm_h`, `msm_rest`, `shift_table`, `verify`, `fallback`; the partition
///   table's `b_g2_msm_ms` is `cpu_msm_b_g2_ms`.
pub const SUMMARY_SCHEMA_VERSION: u32 = 2;

/// The run as a whole.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInfo {
    /// Input format (`cuzk`, `jsonl`).
    pub format: String,
    /// Producer (`cuzk-log`, `prover`, `simulator`, ...).
    pub producer: String,
    pub spans: u64,
    pub counters: u64,
    pub jobs: u64,
    pub devices: Vec<u32>,
    pub open_spans: u64,
    /// First event, ms since the epoch.
    pub start_ms: f64,
    /// Last end (or start, for open spans).
    pub end_ms: f64,
    pub wall_s: f64,
}

/// Everything `proofscope analyze` knows about a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Summary {
    pub schema_version: u32,
    /// proofscope version that wrote this.
    pub tool_version: String,
    /// The analysed file (as given on the command line), when known.
    pub input: Option<String>,
    pub meta: RunMeta,
    pub diagnostics: Diagnostics,
    pub options: AnalyzeOptions,
    pub run: RunInfo,

    // Headline numbers (copies of the nested ones).
    pub proofs_completed: u64,
    pub total_s_per_proof: Option<f64>,
    pub steady_state_s_per_proof: Option<f64>,
    /// Union of `gpu` spans ÷ window, all devices (0..=1).
    pub gpu_utilization: Option<f64>,
    /// Union of device-work spans ÷ window, when kernel spans exist.
    pub kernel_utilization: Option<f64>,
    /// The verdict's binding resource.
    pub binding_resource: String,

    pub verdict: Verdict,
    pub throughput: Throughput,
    pub utilization: Utilization,
    pub idle_gaps: Vec<IdleGap>,
    pub idle_gap_totals: GapTotals,
    pub cross_job_transitions: Vec<Transition>,
    pub phases: Phases,
    pub jobs: Vec<JobRow>,
    pub partitions: Vec<PartitionRow>,
    /// Peak host RSS and device memory (from the counters; empty without them).
    pub memory: Memory,
    /// Other processes and steal on the host during the run; absent without the counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostLoad>,
}

impl Summary {
    /// Steady-state s/proof, else total s/proof: the number runs are compared on.
    pub fn s_per_proof(&self) -> Option<f64> {
        self.steady_state_s_per_proof.or(self.total_s_per_proof)
    }
}

/// Run every analysis.
pub fn summarize(run: &Run, opts: &AnalyzeOptions) -> Summary {
    let t0 = std::time::Instant::now();
    let s = summarize_inner(run, opts);
    tracing::debug!(
        "analysed {} spans, {} jobs ({} complete) in {:.1} ms: binding {}",
        s.run.spans,
        s.run.jobs,
        s.proofs_completed,
        t0.elapsed().as_secs_f64() * 1e3,
        s.binding_resource
    );
    s
}

fn summarize_inner(run: &Run, opts: &AnalyzeOptions) -> Summary {
    // Two independent halves on two threads (the target machine has two cores); small
    // runs stay on one thread.
    let side = || (utilization::analyze(run), phases::analyze(run), run.devices());
    let main = || {
        let ix = tables::Index::build(run);
        let t = tables::from_index(&ix);
        let g = gaps::analyze_with(run, &ix, opts);
        let tr = transitions::analyze_with(run, &ix);
        let tp = throughput::analyze_with(run, &ix);
        (ix, t, g, tr, tp)
    };
    std::thread::scope(|sc| {
        let ((ix, t, g, tr, tp), (util, ph, devices)) = if run.spans.len() >= 50_000 {
            let h = sc.spawn(side);
            let m = main();
            (m, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        } else {
            (main(), side())
        };
        let host = host::analyze(run);
        let mem = memory::analyze(run);
        let v = verdict::decide(run, &ix, &tp, &util, &g.gaps, &g.totals, &tr, host.as_ref(), opts);
        assemble(run, opts, ix.jobs.len(), devices, t, util, g, tr, tp, ph, v, host, mem)
    })
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    run: &Run,
    opts: &AnalyzeOptions,
    jobs: usize,
    devices: Vec<u32>,
    t: tables::Tables,
    util: Utilization,
    g: gaps::GapAnalysis,
    tr: Vec<Transition>,
    tp: Throughput,
    ph: Phases,
    v: Verdict,
    host: Option<HostLoad>,
    memory: Memory,
) -> Summary {
    let start = run.spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let end = run.end_ns().max(start);
    Summary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        input: None,
        meta: run.meta.clone(),
        diagnostics: run.diagnostics.clone(),
        options: opts.clone(),
        run: RunInfo {
            format: run.diagnostics.format.clone(),
            producer: run.meta.source.clone(),
            spans: run.spans.len() as u64,
            counters: run.counters.len() as u64,
            jobs: jobs as u64,
            devices,
            open_spans: run.spans.iter().filter(|s| s.is_open()).count() as u64,
            start_ms: ms(start),
            end_ms: ms(end),
            wall_s: (end - start) as f64 / 1e9,
        },
        proofs_completed: tp.proofs_completed,
        total_s_per_proof: tp.total_s_per_proof,
        steady_state_s_per_proof: tp.steady_state_s_per_proof,
        gpu_utilization: util.gpu_utilization,
        kernel_utilization: util.kernel_utilization,
        binding_resource: v.binding.clone(),
        verdict: v,
        throughput: tp,
        utilization: util,
        idle_gaps: g.gaps,
        idle_gap_totals: g.totals,
        cross_job_transitions: tr,
        phases: ph,
        jobs: t.jobs,
        partitions: t.partitions,
        memory,
        host,
    }
}
