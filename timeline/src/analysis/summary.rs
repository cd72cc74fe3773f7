//! [`Summary`]: every analysis of a run in one serde struct — what `summary.json` holds.
//! The headline numbers are repeated at the top level so that a reader of the JSON (or a
//! notebook) finds them without knowing the nesting. Units are in every field name.
//! Schema versioned by [`SUMMARY_SCHEMA_VERSION`]; the field-by-field documentation is
//! in the README and in the docs of each analysis module.

use serde::{Deserialize, Serialize};

use super::gaps::{GapTotals, IdleGap};
use super::devices::{self, MultiDevice};
use super::host::{self, HostLoad};
use super::memory::{self, Memory};
use super::phases::Phases;
use super::tables::{JobRow, PartitionRow};
use super::throughput::Throughput;
use super::transitions::Transition;
use super::utilization::Utilization;
use super::verdict::Verdict;
use super::{gaps, ms, phases, tables, throughput, transitions, utilization, verdict, AnalyzeOptions, RunView};
use crate::event::{Diagnostics, Run, RunMeta};

/// Version of the `summary.json` schema. Bump on any breaking change; the history is in
/// `docs/reference/summary-json.md`.
///
/// - 2: `throughput.partition_rate_s_per_proof` and `memory` (peak RSS, device memory) added
///   (the simulator's parity now compares two summaries); span kinds `cpu_msm_b_g2` (was
///   `b_g2_msm`), `ntt_msm_h`, `msm_rest`, `shift_table`, `verify`, `fallback`; the partition
///   table's `b_g2_msm_ms` is `cpu_msm_b_g2_ms`.
/// - 3: proof types: `proof_types` (the headline per type), `primary_proof_type` (whose
///   headline the top-level numbers are when a log mixes types), `jobs[].proof_type`,
///   `idle_gaps[].before_type`/`after_type`; `daemon_runs` (a log spanning restarts) and
///   `diagnostics.wrappers` / `diagnostics.daemon_runs`.
/// - 4: `multi_device` (runs with two or more devices): each device's share of the work and
///   why it idled, and the host-level verdict (issue 22).
pub const SUMMARY_SCHEMA_VERSION: u32 = 4;

/// The headline of one proof type: never averaged with another type's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProofTypeSummary {
    /// `porep-c2`, `window-post`, … or `unknown` (see `analysis::proof_type`).
    pub proof_type: String,
    /// How the type was decided: `kind` (the log's `kind=`), `partition_count`, `unknown`.
    pub inferred_from: String,
    pub jobs: u64,
    pub proofs_completed: u64,
    pub total_s_per_proof: Option<f64>,
    pub steady_state_s_per_proof: Option<f64>,
    pub latency_p50_s: Option<f64>,
    /// The type's verdict's binding resource.
    pub binding_resource: String,
    /// Union of this type's GPU calls, summed over devices, ms.
    pub gpu_busy_ms: f64,
    /// Listed idle time of the gaps that ended at this type's work, ms.
    pub idle_before_ms: f64,
    pub throughput: Throughput,
    pub verdict: Verdict,
}

impl ProofTypeSummary {
    /// Steady-state s/proof, else total.
    pub fn s_per_proof(&self) -> Option<f64> {
        self.steady_state_s_per_proof.or(self.total_s_per_proof)
    }
}

/// One daemon run of a log that spans restarts, analysed on its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaemonRunSummary {
    /// 1-based, in file order (as `diagnostics.daemon_runs`).
    pub index: u32,
    pub first_line: u64,
    /// Where it sits on the report's time axis, ms.
    pub start_ms: f64,
    pub end_ms: f64,
    /// `wall_clock` or `end_to_end`.
    pub placed_by: String,
    pub proof_types: Vec<ProofTypeSummary>,
}

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
    /// Proofs (jobs) with a partition that failed for good (`failed` spans): never counted
    /// in s/proof, latency or the steady state; also a problem in `diagnostics` (so
    /// `--strict` exits 1).
    pub proofs_failed: u64,
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
    // The four large tables: serialised as a `Vec` is, except inside
    // `export::summary_json::write`, which writes their rows on two threads.
    #[serde(serialize_with = "crate::export::summary_json::rows")]
    pub idle_gaps: Vec<IdleGap>,
    pub idle_gap_totals: GapTotals,
    #[serde(serialize_with = "crate::export::summary_json::rows")]
    pub cross_job_transitions: Vec<Transition>,
    pub phases: Phases,
    #[serde(serialize_with = "crate::export::summary_json::rows")]
    pub jobs: Vec<JobRow>,
    #[serde(serialize_with = "crate::export::summary_json::rows")]
    pub partitions: Vec<PartitionRow>,
    /// Peak host RSS and device memory (from the counters; empty without them).
    pub memory: Memory,
    /// Other processes and steal on the host during the run; absent without the counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostLoad>,
    /// Two or more devices: each device's share and idle causes, and the host-level verdict
    /// (GPUs, host, imbalance or one device binds); absent with one device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_device: Option<MultiDevice>,
    /// The headline per proof type, in order of first job. With one type its figures are
    /// the top-level ones; with several, the top-level throughput and verdict are those of
    /// `primary_proof_type` (the type with the most completed proofs), never an average.
    pub proof_types: Vec<ProofTypeSummary>,
    pub primary_proof_type: Option<String>,
    /// A log spanning daemon restarts: each daemon run analysed on its own (the top-level
    /// figures cover all of them on one time axis). Empty for one daemon run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub daemon_runs: Vec<DaemonRunSummary>,
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
    let s = summarize_inner(run, opts, run.spans.len() >= THREADED_SPANS);
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

/// From this many spans on, [`summarize`] spreads the analyses over threads.
const THREADED_SPANS: usize = 50_000;

/// Every analysis; `threaded`: the analyses that need no index (utilisation, phases) run
/// beside the index and what needs it, and so do the analyses of each proof type when a log
/// mixes types (the target machine has two cores); else all on this thread (small runs:
/// threads cost more than they save). Both give the same summary (tested).
fn summarize_inner(run: &Run, opts: &AnalyzeOptions, threaded: bool) -> Summary {
    let side = || (utilization::analyze(run), phases::analyze(run), run.devices());
    std::thread::scope(|outer| {
        let side_h = threaded.then(|| outer.spawn(side));
        let ix = tables::Index::build(run);
        let host = host::analyze(run);
        // The gaps of the whole run, for the proof types' verdicts (set once below).
        let gaps_done: std::sync::OnceLock<gaps::GapAnalysis> = std::sync::OnceLock::new();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (t, tr, tp, util, ph, devices, mem, v, multi, types, primary) = std::thread::scope(|inner| {
            // Owned here: should anything below panic, the sender goes with this closure and
            // the types' thread, waiting for the gaps, ends instead of waiting for ever.
            let tx = tx;
            let types_h = (ix.types.len() > 1).then(|| {
                let (ix, host, gaps_done) = (&ix, host.as_ref(), &gaps_done);
                let work = move || types_analyse(run, ix, || rx.recv().ok().and_then(|_| gaps_done.get()), host, opts);
                if threaded { Ok(inner.spawn(work)) } else { Err(work) }
            });
            let t = tables::from_index(&ix);
            let _ = gaps_done.set(gaps::analyze_with(run, &ix, opts));
            let _ = tx.send(());
            let g = gaps_done.get().expect("set just above");
            let tr = transitions::analyze_with(run, &ix);
            let tp = throughput::analyze_with(run, &ix);
            let (util, ph, devices) = match side_h {
                Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                None => side(),
            };
            let mem = memory::analyze(run);
            // The whole run's verdict while the types' analyses run.
            let v = verdict::decide(run, &ix, &tp, &util, &g.gaps, &g.totals, &tr, host.as_ref(), opts);
            let multi = devices::analyze(run, g, host.as_ref());
            let types = types_h.map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Err(work) => work(),
            });
            let (types, primary) = by_type(&ix, &tp, &v, &util, &g.gaps, types);
            (t, tr, tp, util, ph, devices, mem, v, multi, types, primary)
        });
        let daemon_runs = if run.diagnostics.daemon_runs.len() > 1 { by_daemon_run(run, opts) } else { Vec::new() };
        let (tp, v) = match primary {
            Some(p) if types.len() > 1 => (types[p].throughput.clone(), types[p].verdict.clone()),
            _ => (tp, v),
        };
        let failed = failures(run, &ix);
        let g = gaps_done.into_inner().unwrap_or_default();
        let mut s = assemble(run, opts, ix.jobs.len(), devices, t, util, g, tr, tp, ph, v, host, mem);
        if let Some((n, first)) = failed {
            s.proofs_failed = n;
            s.diagnostics.problem(format!("{n} of {} proofs FAILED ({first}): they are not counted in s/proof, latency or the steady state", ix.jobs.len()));
        }
        s.multi_device = multi;
        s.primary_proof_type = primary.map(|p| types[p].proof_type.clone());
        s.proof_types = types;
        s.daemon_runs = daemon_runs;
        s
    })
}

/// Jobs with a `failed` span: their count and the first failure in words (job, partition,
/// the span's `error`), or None.
fn failures(run: &Run, ix: &tables::Index<'_>) -> Option<(u64, String)> {
    let mut jobs: Vec<bool> = vec![false; ix.jobs.len()];
    let mut first: Option<&crate::event::Span> = None;
    for (s, p) in run.spans.iter().zip(&ix.part_of_span) {
        if s.kind != crate::event::SpanKind::Failed {
            continue;
        }
        if let Some(p) = p {
            jobs[ix.parts[*p as usize].job as usize] = true;
        }
        if first.is_none_or(|f| s.start_ns < f.start_ns) {
            first = Some(s);
        }
    }
    let n = jobs.iter().filter(|&&f| f).count() as u64;
    let f = first?;
    let error = f.args.get("error").and_then(|v| v.as_str()).unwrap_or("no error given");
    let at = match (&f.job, f.partition) {
        (Some(j), Some(p)) => format!("first: {j} partition {p}: {error}"),
        (Some(j), None) => format!("first: {j}: {error}"),
        _ => format!("first: {error}"),
    };
    Some((n.max(1), at))
}

/// Each proof type's jobs analysed as a run of their own: their spans picked by index (a
/// [`RunView`], no copy), then their throughput, utilisation and transitions; the verdicts
/// wait for the whole run's gaps (`gaps`, which blocks until they are known): each type's
/// are the gaps that ended at its work (a gap is a gap whatever ran around it).
fn types_analyse<'g>(
    run: &Run,
    ix: &tables::Index<'_>,
    gaps: impl FnOnce() -> Option<&'g gaps::GapAnalysis>,
    host: Option<&HostLoad>,
    opts: &AnalyzeOptions,
) -> Vec<ProofTypeSummary> {
    let mut picks: Vec<Vec<u32>> = vec![Vec::new(); ix.types.len()];
    for (i, p) in ix.part_of_span.iter().enumerate() {
        if let Some(p) = p {
            picks[ix.job_type[ix.parts[*p as usize].job as usize] as usize].push(i as u32);
        }
    }
    let subs: Vec<RunView<'_>> = picks.iter().map(|p| RunView::subset(run, p)).collect();
    let pre: Vec<_> = subs
        .iter()
        .map(|&sub| {
            let sub_ix = tables::Index::build(sub);
            let tp = throughput::analyze_with(sub, &sub_ix);
            let util = utilization::analyze(sub);
            let tr = transitions::analyze_with(sub, &sub_ix);
            (sub_ix, tp, util, tr)
        })
        .collect();
    let all: &[IdleGap] = gaps().map_or(&[], |g| &g.gaps);
    ix.types
        .iter()
        .zip(subs.iter().zip(pre))
        .enumerate()
        .map(|(t, ((name, src), (&sub, (sub_ix, tp, util, tr))))| {
            let mine: Vec<IdleGap> = all.iter().filter(|g| g.after_type.as_deref() == Some(name.as_str())).cloned().collect();
            let totals = gaps::totals_of(&mine, opts.min_gap_ms);
            let mut v = verdict::decide(sub, &sub_ix, &tp, &util, &mine, &totals, &tr, host, opts);
            v.headline = format!("{name}: {}", v.headline);
            let jobs = ix.job_type.iter().filter(|&&x| x as usize == t).count() as u64;
            let idle: f64 = mine.iter().map(|g| g.duration_ms).sum();
            type_summary(name, src.as_str(), jobs, &tp, &v, &util, idle)
        })
        .collect()
}

/// The headline per proof type (see [`Summary::proof_types`]) and the index of the primary
/// type. One type: the whole-run figures. Several: each type's jobs analysed as a run of
/// their own (`types`, from [`types_analyse`]).
fn by_type(
    ix: &tables::Index<'_>,
    tp: &Throughput,
    v: &Verdict,
    util: &Utilization,
    gaps: &[IdleGap],
    types: Option<Vec<ProofTypeSummary>>,
) -> (Vec<ProofTypeSummary>, Option<usize>) {
    let mut out = match types {
        Some(t) if ix.types.len() > 1 => t,
        _ => {
            let Some((name, src)) = ix.types.first() else { return (Vec::new(), None) };
            let idle = gaps.iter().filter(|g| g.after_type.as_deref() == Some(name.as_str())).map(|g| g.duration_ms).sum::<f64>();
            return (vec![type_summary(name, src.as_str(), ix.jobs.len() as u64, tp, v, util, idle)], Some(0));
        }
    };
    // The primary type: most completed proofs, then most jobs, then first seen.
    let primary = (0..out.len()).max_by(|&a, &b| {
        (out[a].proofs_completed, out[a].jobs).cmp(&(out[b].proofs_completed, out[b].jobs)).then(b.cmp(&a))
    });
    if let Some(p) = primary {
        let others: Vec<String> = out
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != p)
            .map(|(_, o)| format!("{} ({} proofs{})", o.proof_type, o.proofs_completed, o.s_per_proof().map_or(String::new(), |s| format!(", {} s/proof", verdict::num(s)))))
            .collect();
        let h = &mut out[p].verdict.headline;
        h.push_str(&format!(" Other proof types in this log, each with its own headline: {}.", others.join(", ")));
    }
    (out, primary)
}

fn type_summary(name: &str, src: &str, jobs: u64, tp: &Throughput, v: &Verdict, util: &Utilization, idle_before_ms: f64) -> ProofTypeSummary {
    ProofTypeSummary {
        proof_type: name.to_string(),
        inferred_from: src.to_string(),
        jobs,
        proofs_completed: tp.proofs_completed,
        total_s_per_proof: tp.total_s_per_proof,
        steady_state_s_per_proof: tp.steady_state_s_per_proof,
        latency_p50_s: tp.latency_p50_s,
        binding_resource: v.binding.clone(),
        gpu_busy_ms: util.devices.iter().map(|d| d.gpu_busy_ms).sum(),
        idle_before_ms,
        throughput: tp.clone(),
        verdict: v.clone(),
    }
}

/// Each daemon run of a log spanning restarts, analysed on its own: the spans that start
/// within its stretch of the time axis.
fn by_daemon_run(run: &Run, opts: &AnalyzeOptions) -> Vec<DaemonRunSummary> {
    let runs = &run.diagnostics.daemon_runs;
    runs.iter()
        .map(|d| {
            let (a, b) = ((d.start_ms * 1e6).round() as u64, (d.end_ms * 1e6).round() as u64);
            let mut sub = Run::new(run.meta.clone());
            sub.spans = run.spans.iter().filter(|s| (a..=b).contains(&s.start_ns)).cloned().collect();
            let s = summarize_inner(&sub, opts, sub.spans.len() >= THREADED_SPANS);
            DaemonRunSummary { index: d.index, first_line: d.first_line, start_ms: d.start_ms, end_ms: d.end_ms, placed_by: d.placed_by.clone(), proof_types: s.proof_types }
        })
        .collect()
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
        proofs_failed: 0,
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
        multi_device: None,
        proof_types: Vec::new(),
        primary_proof_type: None,
        daemon_runs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared cuzk sample (PoRep, 10 partitions) with a WindowPoSt whole-proof job and a
    /// job cut short by the log's end: three proof types, so every path of the per-type
    /// analyses runs.
    fn mixed() -> Run {
        let post = "TIMELINE,170000,SYNTH_START,wpost-1,kind=window-post\nTIMELINE,172000,SYNTH_END,wpost-1,synth_ms=2000\nTIMELINE,172001,GPU_QUEUE,wpost-1,monolithic\nTIMELINE,172003,GPU_START,wpost-1,worker=0\nTIMELINE,181740,GPU_END,wpost-1,worker=0,gpu_ms=9737\nTIMELINE,182000,SYNTH_START,cut-1,partition=0\nTIMELINE,183000,SYNTH_END,cut-1,partition=0\n";
        crate::read::read_str(&format!("{}{post}", include_str!("../../assets/cuzk-sample.log")), None)
    }

    #[test]
    fn threaded_and_single_threaded_analyses_agree() {
        let run = mixed();
        let opts = AnalyzeOptions::default();
        let one = summarize_inner(&run, &opts, false);
        assert_eq!(one.proof_types.len(), 3, "{:?}", one.proof_types.iter().map(|t| &t.proof_type).collect::<Vec<_>>());
        let two = summarize_inner(&run, &opts, true);
        assert_eq!(serde_json::to_string(&one).unwrap(), serde_json::to_string(&two).unwrap());
    }

    /// A type's figures are those of its jobs alone (the PoSt's single call, first synthesis
    /// → GPU end).
    #[test]
    fn a_types_figures_are_its_jobs_alone() {
        let s = summarize_inner(&mixed(), &AnalyzeOptions::default(), true);
        let post = s.proof_types.iter().find(|t| t.proof_type == "window-post").expect("the PoSt type");
        assert_eq!(post.proofs_completed, 1);
        assert!(post.total_s_per_proof.is_some_and(|t| (t - 11.74).abs() < 1e-9), "{:?}", post.total_s_per_proof);
    }
}
