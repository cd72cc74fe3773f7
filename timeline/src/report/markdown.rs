//! `report.md`: the verdict first, then throughput, utilisation (with several devices their
//! shares and the host verdict), idle gaps by cause, the
//! cross-proof transitions, phase statistics and the reader's warnings. Charts are
//! embedded by relative file name (they sit beside the report), so the directory can be
//! moved or published as is. Long tables are cut (the full ones are in `summary.json` and
//! the Parquet tables).

use std::fmt::Write as _;

use crate::analysis::compare::cell;
use crate::analysis::devices::{DeviceShare, MultiDevice};
use crate::analysis::Summary;

/// A chart beside the report.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartRef {
    /// Section it illustrates: `waterfall`, `utilization`, `gaps` or `phases`.
    pub section: String,
    /// Relative file name, e.g. `waterfall.svg`.
    pub file: String,
    /// Alt text / caption.
    pub caption: String,
}

impl ChartRef {
    pub fn new(section: &str, file: &str, caption: &str) -> Self {
        ChartRef { section: section.into(), file: file.into(), caption: caption.into() }
    }
}

/// The charts `proofscope analyze` writes: (section, file, caption).
pub const STANDARD_CHARTS: [(&str, &str, &str); 5] = [
    ("waterfall", "waterfall.svg", "Waterfall: one row per synthesis and GPU worker, idle gaps shaded by cause"),
    ("utilization", "utilization.svg", "GPU busy fraction over time, per device"),
    ("gaps", "gaps.svg", "Idle time by gap duration and cause (log bins; bar height = idle seconds)"),
    ("phases", "phases.svg", "Duration distribution per span kind"),
    ("memory", "memory.svg", "Host memory over time: RSS and bytes reserved from the RAM budget, against the budget"),
];

/// Rows shown in long tables before cutting.
const MAX_ROWS: usize = 40;

fn f(v: Option<f64>, d: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.d$}"))
}
fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.1} %", v * 100.0))
}
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("—".into(), |v| v.to_string())
}

fn chart(out: &mut String, charts: &[ChartRef], section: &str) {
    for c in charts.iter().filter(|c| c.section == section) {
        let _ = writeln!(out, "![{}]({})\n", c.caption, c.file);
    }
}

fn more(out: &mut String, total: usize, shown: usize, where_: &str) {
    if total > shown {
        let _ = writeln!(out, "\n… {} more rows in {where_}.", total - shown);
    }
}

/// The columns of the *Devices and the host* table (several devices): name, and whether the
/// column is numeric (right-aligned). report.md and report.html draw the same table.
pub(crate) const DEVICE_COLUMNS: [(&str, bool); 11] = [
    ("device", true),
    ("partitions", true),
    ("share", true),
    ("mean call (ms)", true),
    ("level", false),
    ("busy (s)", true),
    ("idle (s)", true),
    ("placement idle (s)", true),
    ("idle by cause (s)", false),
    ("ran dry (s)", true),
    ("reason", false),
];

/// One device's row of that table: the analyzer's figures ([`DeviceShare`]) formatted, none
/// computed here.
pub(crate) fn device_cells(d: &DeviceShare) -> [String; 11] {
    let causes: Vec<String> = d.idle_by_cause_ms.iter().map(|(c, v)| format!("{c} {:.2}", v / 1e3)).collect();
    [
        d.device.to_string(),
        d.partitions.to_string(),
        pct(Some(d.share_of_partitions)),
        f(d.mean_gpu_call_ms, 1),
        d.level.clone(),
        format!("{:.2}", d.busy_ms / 1e3),
        format!("{:.2}", d.idle_ms / 1e3),
        format!("{:.2}", d.placement_idle_ms / 1e3),
        if causes.is_empty() { "—".into() } else { causes.join(", ") },
        format!("{:.2}", d.tail_idle_ms / 1e3),
        d.reason.clone(),
    ]
}

/// The sentence under the host verdict: the common window and what placement idle means.
pub(crate) fn devices_note(md: &MultiDevice) -> String {
    format!(
        "Over the common window {:.2}–{:.2} s (first busy moment of any device to the last of any). Placement idle = idle while partitions waited in the GPU queue and no worker of the device had a call.",
        md.window_start_ms / 1e3,
        md.window_end_ms / 1e3
    )
}

/// What the report calls the proving device ([`crate::event::RunMeta::device_word`]).
pub fn device_word(s: &Summary) -> &'static str {
    s.meta.device_word()
}

/// Render the report. `charts`: the chart files written beside it (missing ones are
/// simply not embedded).
pub fn render(s: &Summary, charts: &[ChartRef]) -> String {
    let dev = device_word(s);
    let mut o = String::new();
    let title = s.input.as_deref().unwrap_or("run");
    let _ = writeln!(o, "# proofscope report — {}\n", cell(title));
    let m = &s.meta;
    let mut facts = vec![
        format!("format `{}`", s.run.format),
        format!("producer `{}`", m.source),
        format!("{} spans", s.run.spans),
        format!("{} jobs", s.run.jobs),
        format!("devices {:?}", s.run.devices),
        format!("wall {:.1} s", s.run.wall_s),
    ];
    let c = &m.config;
    for (k, v) in [
        ("pw", c.pw.map(|v| v.to_string())),
        ("gw", c.gw.map(|v| v.to_string())),
        ("lock", c.lock.map(|l| l.to_string())),
        ("gpus", c.gpus.map(|v| v.to_string())),
        ("partitions", c.partitions.map(|v| v.to_string())),
        ("backend", c.backend.clone()),
    ] {
        if let Some(v) = v {
            facts.push(format!("{k}={v}"));
        }
    }
    if let Some(h) = &m.host {
        facts.push(format!("host {h}"));
    }
    if let [t] = s.proof_types.as_slice() {
        facts.push(format!("proof type `{}` (from {})", t.proof_type, t.inferred_from.replace('_', " ")));
    }
    if !m.gpus.is_empty() {
        facts.push(format!("GPU {}", m.gpus.join(", ")));
    }
    let _ = writeln!(o, "_{}; proofscope {} (summary schema v{})._\n", facts.join(" · "), s.tool_version, s.schema_version);

    // Proof types and daemon runs: said before any figure they qualify.
    if s.proof_types.len() > 1 {
        let _ = writeln!(o, "## Proof types
");
        let _ = writeln!(
            o,
            "This log mixes {} proof types; each has its own headline (never averaged). The verdict and throughput below are **{}**'s (the most completed proofs); GPU utilisation and idle gaps are per device over all types.\n",
            s.proof_types.len(),
            s.primary_proof_type.as_deref().unwrap_or("?")
        );
        let _ = writeln!(o, "| proof type | from | jobs | proofs | total s/proof | steady s/proof | latency p50 s | GPU busy s | idle before it s | binding |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for t in &s.proof_types {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} |",
                cell(&t.proof_type),
                t.inferred_from,
                t.jobs,
                t.proofs_completed,
                f(t.total_s_per_proof, 2),
                f(t.steady_state_s_per_proof, 2),
                f(t.latency_p50_s, 2),
                t.gpu_busy_ms / 1e3,
                t.idle_before_ms / 1e3,
                cell(&t.binding_resource)
            );
        }
        o.push('\n');
        for t in &s.proof_types {
            let _ = writeln!(o, "- {}", t.verdict.headline);
        }
        o.push('\n');
    }
    if !s.daemon_runs.is_empty() {
        let placed = s.daemon_runs.iter().any(|r| r.placed_by == "wall_clock");
        let _ = writeln!(o, "## Daemon runs
");
        let _ = writeln!(
            o,
            "This log spans **{} daemon runs** (the offsets jump back: the daemon restarted). Each is analysed on its own below; the rest of the report covers all of them on one time axis, {}.\n",
            s.daemon_runs.len(),
            if placed { "placed by the wall clock the log's wrapper gives" } else { "placed end to end (the log has no wall clock), a second apart" }
        );
        let _ = writeln!(o, "| run | first line | from s | to s | proof type | proofs | s/proof | binding |\n|---:|---:|---:|---:|---|---:|---:|---|");
        for r in &s.daemon_runs {
            for t in &r.proof_types {
                let _ = writeln!(
                    o,
                    "| {} | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
                    r.index,
                    r.first_line,
                    r.start_ms / 1e3,
                    r.end_ms / 1e3,
                    cell(&t.proof_type),
                    t.proofs_completed,
                    f(t.s_per_proof(), 2),
                    cell(&t.binding_resource)
                );
            }
        }
        o.push('\n');
    }

    // Verdict.
    let v = &s.verdict;
    // (The binding key stays `gpu` in summary.json; a CPU-backend run's heading names its device.)
    let heading = if v.binding == "gpu" && dev != "GPU" { dev } else { v.binding.as_str() };
    let _ = writeln!(o, "## Verdict: {}\n", cell(heading));
    let _ = writeln!(o, "**{}**\n", v.headline);
    for e in &v.evidence {
        let _ = writeln!(o, "- {e}");
    }
    let fl = &v.floors;
    let _ = writeln!(o, "\n| floor | s/proof | basis |\n|---|---:|---|");
    let _ = writeln!(
        o,
        "| {dev} | {} | {} ms/partition ({}) × {} partitions ÷ {} {dev}(s) |",
        f(fl.gpu_floor_s_per_proof, 2),
        f(fl.serial_gpu_ms_per_partition, 0),
        fl.serial_gpu_source.as_deref().unwrap_or("—"),
        f(fl.partitions_per_proof, 0),
        fl.gpus
    );
    let _ = writeln!(
        o,
        "| synthesis | {} | {} ms/partition × {} partitions ÷ {} workers |",
        f(fl.synthesis_floor_s_per_proof, 2),
        f(fl.synthesis_ms_per_partition, 0),
        f(fl.partitions_per_proof, 0),
        opt(fl.synthesis_workers)
    );
    if fl.cpu_floor_s_per_proof.is_some() {
        let _ = writeln!(
            o,
            "| CPU in GPU workers | {} | {} ms/partition (prep_msm + cpu_msm_b_g2 + finalize) × {} partitions ÷ ({} GPU × {} workers) |",
            f(fl.cpu_floor_s_per_proof, 2),
            f(fl.cpu_side_ms_per_partition, 0),
            f(fl.partitions_per_proof, 0),
            fl.gpus,
            opt(fl.gpu_workers_per_device)
        );
    } else {
        let _ = writeln!(o, "| CPU in GPU workers | — | no prep_msm / cpu_msm_b_g2 / finalize spans in this log |");
    }
    let _ = writeln!(
        o,
        "| **measured** | **{}** | {} |\n",
        f(v.measured_s_per_proof, 2),
        v.measured_basis.as_deref().unwrap_or("—")
    );
    chart(&mut o, charts, "waterfall");

    // Throughput.
    let t = &s.throughput;
    let _ = writeln!(o, "## Throughput\n");
    let _ = writeln!(o, "| | |\n|---|---:|");
    let _ = writeln!(o, "| proofs completed | {} of {} jobs |", t.proofs_completed, t.jobs_seen);
    let _ = writeln!(o, "| total s/proof (run start → last completion) | {} |", f(t.total_s_per_proof, 2));
    let _ = writeln!(o, "| steady-state s/proof (first → last completion) | {} |", f(t.steady_state_s_per_proof, 2));
    let _ = writeln!(o, "| proofs per hour | {} |", f(t.proofs_per_hour, 1));
    let _ = writeln!(o, "| latency mean / p50 / max (s) | {} / {} / {} |\n", f(t.latency_mean_s, 1), f(t.latency_p50_s, 1), f(t.latency_max_s, 1));
    if !s.jobs.is_empty() {
        let _ = writeln!(o, "| job | partitions | first synth start (s) | first GPU start (s) | completed (s) | latency (s) |\n|---|---:|---:|---:|---:|---:|");
        for j in s.jobs.iter().take(MAX_ROWS) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} |",
                cell(&j.job),
                j.partitions,
                f(j.first_synth_start_ms.map(|v| v / 1e3), 2),
                f(j.first_gpu_start_ms.map(|v| v / 1e3), 2),
                f(j.completed_ms.map(|v| v / 1e3), 2),
                f(j.latency_s, 2)
            );
        }
        more(&mut o, s.jobs.len(), MAX_ROWS, "jobs.parquet / summary.json");
        o.push('\n');
    }

    // Utilisation.
    let _ = writeln!(o, "## {dev} utilisation\n");
    let _ = writeln!(
        o,
        "Busy = the union over all workers of a device (two overlapping workers are 100 %, not 200 %), over the window from its first GPU start to its last GPU end. Kernel level = union of kernel and copy spans, where the producer reports them.\n"
    );
    let _ = writeln!(o, "| device | workers | window (s) | busy (s) | utilisation | kernel util | sum of worker spans (s) | NVML mean |\n|---:|---:|---:|---:|---:|---:|---:|---:|");
    for d in &s.utilization.devices {
        let _ = writeln!(
            o,
            "| {} | {} | {:.2} | {:.2} | {} | {} | {:.2} | {} |",
            d.device,
            d.workers,
            d.window_ms / 1e3,
            d.gpu_busy_ms / 1e3,
            pct(Some(d.gpu_utilization)),
            pct(d.kernel_utilization),
            d.gpu_span_sum_ms / 1e3,
            d.nvml_gpu_util_mean_pct.map_or("—".into(), |v| format!("{v:.1} %"))
        );
    }
    o.push('\n');
    if let Some(h) = &s.host {
        let f = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.2}"));
        let _ = writeln!(
            o,
            "Host CPU over {} samples: the prover kept {} cores busy, other processes {}, the hypervisor's steal {} on average ({} at most); the whole machine {:.2}.\n",
            h.samples,
            f(h.process_cores_mean),
            f(h.other_cores_mean),
            f(h.steal_cores_mean),
            f(h.steal_cores_max),
            h.host_busy_cores_mean
        );
    }
    chart(&mut o, charts, "utilization");

    // Several devices: each one's share and idle, and the host verdict.
    if let Some(md) = &s.multi_device {
        let h = &md.host;
        let _ = writeln!(o, "## Devices and the host: {}\n", cell(&h.binding));
        let _ = writeln!(o, "**{}**\n", cell(&h.headline));
        for e in &h.evidence {
            let _ = writeln!(o, "- {}", cell(e));
        }
        let _ = writeln!(o, "\n{}\n", devices_note(md));
        let head: Vec<&str> = DEVICE_COLUMNS.iter().map(|c| c.0).collect();
        let align: Vec<&str> = DEVICE_COLUMNS.iter().map(|c| if c.1 { "---:" } else { "---" }).collect();
        let _ = writeln!(o, "| {} |\n|{}|", head.join(" | "), align.join("|"));
        for d in &md.devices {
            let _ = writeln!(o, "| {} |", device_cells(d).join(" | "));
        }
        o.push('\n');
    }

    // Gaps.
    let g = &s.idle_gap_totals;
    let _ = writeln!(o, "## Idle gaps by cause\n");
    let _ = writeln!(
        o,
        "{} gaps of ≥ {} ms, {:.2} s in all ({:.2} s between each device's first and last work); {} shorter gaps ({:.1} ms) not listed.\n",
        s.idle_gaps.len(),
        g.min_gap_ms,
        g.idle_total_ms / 1e3,
        g.idle_in_window_ms / 1e3,
        g.below_threshold_count,
        g.below_threshold_ms
    );
    let _ = writeln!(o, "| cause | meaning | gaps | idle (s) | share |\n|---|---|---:|---:|---:|");
    for c in &g.by_cause {
        let _ = writeln!(o, "| {} | {} | {} | {:.2} | {} |", c.cause, c.cause.describe(), c.count, c.total_ms / 1e3, pct(Some(c.share_of_idle)));
    }
    if !s.idle_gaps.is_empty() {
        let mut longest: Vec<_> = s.idle_gaps.iter().collect();
        longest.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms));
        let _ = writeln!(o, "\nLongest gaps:\n\n| device | start (s) | duration (ms) | cause | before (ended at its start) | after (started at its end) |\n|---:|---:|---:|---|---|---|");
        let typed = s.proof_types.len() > 1;
        for x in longest.iter().take(15) {
            let part = |j: &Option<String>, p: Option<u32>, t: &Option<String>| match (j, t) {
                (Some(j), Some(t)) if typed => format!("{} p{} ({})", cell(&short(j)), opt(p), cell(t)),
                (Some(j), _) => format!("{} p{}", cell(&short(j)), opt(p)),
                (None, _) => "—".into(),
            };
            let _ = writeln!(
                o,
                "| {} | {:.3} | {:.1} | {} | {} | {} |",
                x.device,
                x.start_ms / 1e3,
                x.duration_ms,
                x.cause,
                part(&x.before_job, x.before_partition, &x.before_type),
                part(&x.after_job, x.after_partition, &x.after_type)
            );
        }
    }
    o.push('\n');
    chart(&mut o, charts, "gaps");

    // Host memory (only when the producer said anything about it).
    let m = &s.memory;
    if m.has_host_data() {
        let _ = writeln!(o, "## Host memory
");
        let gib = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.2} GiB"));
        let _ = writeln!(o, "| RAM budget | peak reserved | peak RSS | lowest RSS | syntheses that waited for RAM | their wait (s) |\n|---:|---:|---:|---:|---:|---:|");
        let _ = writeln!(o, "| {} | {} | {} | {} | {} | {:.2} |\n", gib(m.ram_budget_gib), gib(m.peak_reserved_gib), gib(m.peak_rss_gib), gib(m.min_rss_gib), m.ram_waits, m.ram_wait_s);
        chart(&mut o, charts, "memory");
    }

    // Transitions.
    let _ = writeln!(o, "## Cross-proof transitions\n");
    if s.cross_job_transitions.is_empty() {
        let _ = writeln!(o, "Fewer than two proofs reached a GPU: no transition.\n");
    } else {
        let _ = writeln!(
            o,
            "Job N's second-to-last GPU end → job N+1's first GPU start (negative: N+1 started first), and how long N+1's first partition overlapped N's last.\n"
        );
        let _ = writeln!(o, "| device | from | to | N 2nd-to-last end (s) | N+1 first start (s) | gap (ms) | overlap (ms) | cause |\n|---:|---|---|---:|---:|---:|---:|---|");
        for x in s.cross_job_transitions.iter().take(MAX_ROWS) {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {:.3} | {:.0} | {:.0} | {} |",
                x.device,
                cell(&short(&x.from_job)),
                cell(&short(&x.to_job)),
                f(x.from_second_to_last_gpu_end_ms.map(|v| v / 1e3), 3),
                x.to_first_gpu_start_ms / 1e3,
                x.gap_ms,
                x.overlap_ms,
                x.cause.map_or("—".to_string(), |c| c.to_string())
            );
        }
        more(&mut o, s.cross_job_transitions.len(), MAX_ROWS, "summary.json");
        o.push('\n');
    }

    // Phases.
    let _ = writeln!(o, "## Phase statistics\n");
    let _ = writeln!(
        o,
        "Durations in ms. Share of wall = total ÷ run wall time ({:.1} s; above 100 % when spans of the kind run concurrently); busy = fraction of the wall with at least one span of the kind running.\n",
        s.phases.wall_ms / 1e3
    );
    let header = "| kind | device | count | open | mean | p50 | p95 | p99 | max | total (s) | share of wall | busy |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
    let _ = writeln!(o, "{header}");
    for r in s.phases.by_kind.iter().chain(s.phases.by_kind_device.iter().filter(|_| s.run.devices.len() > 1)) {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {} |",
            cell(&r.kind),
            r.device.map_or("all".into(), |d| d.to_string()),
            r.count,
            r.open,
            r.mean_ms,
            r.p50_ms,
            r.p95_ms,
            r.p99_ms,
            r.max_ms,
            r.total_ms / 1e3,
            pct(Some(r.share_of_wall)),
            pct(Some(r.busy_share_of_wall))
        );
    }
    o.push('\n');
    chart(&mut o, charts, "phases");

    // Reader warnings.
    let d = &s.diagnostics;
    let _ = writeln!(o, "## Reader warnings\n");
    let _ = writeln!(
        o,
        "{} lines read: {} event lines, {} ordinary lines ignored, **{} rejected**, **{} open spans** (started, never ended: shown, never counted busy).\n",
        d.lines_total, d.event_lines, d.lines_ignored, d.lines_rejected, d.open_spans
    );
    if d.duplicates > 0 {
        let _ = writeln!(o, "Of the rejected lines, **{} repeat an earlier event** exactly (same kind, job, partition, worker, start and end) and were dropped.\n", d.duplicates);
    }
    for p in &d.problems {
        let _ = writeln!(o, "**The input as a whole:** {}.\n", p.replace('\n', " "));
    }
    if d.warnings.is_empty() {
        let _ = writeln!(o, "No warnings.");
    } else {
        for w in d.warnings.iter().take(20) {
            let _ = writeln!(o, "- line {}: {}", w.line, w.message.replace('\n', " "));
        }
        let extra = (d.lines_rejected + d.open_spans).saturating_sub(d.warnings.len().min(20) as u64);
        if extra > 0 {
            let _ = writeln!(o, "- … and {extra} more");
        }
    }
    o
}

/// Shorten a UUID-like job id for tables (first 8 characters).
fn short(job: &str) -> String {
    if job.len() > 12 && job.is_char_boundary(8) {
        format!("{}…", &job[..8])
    } else {
        job.to_string()
    }
}
