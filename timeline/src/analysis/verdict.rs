//! The bottleneck verdict: which resource binds the steady-state throughput, with the
//! numbers that support it and the floors that follow (the bottleneck law: a pipeline
//! cannot beat its slowest resource).
//!
//! Floors, in s/proof, each `time per partition × partitions per proof ÷ servers`:
//! - **GPU**: serial GPU time per partition ÷ GPUs. Serial GPU time is the true device
//!   time (union of kernel/copy spans) when the producer reports it; otherwise, from a
//!   TIMELINE log, the cadence of GPU ends while the device is continuously fed (the
//!   median interval between consecutive GPU_ENDs when the later call was already
//!   running: with workers serialised on a lock this is the time under the lock); with no
//!   such pairs, the median GPU call.
//! - **synthesis**: mean synthesis time per partition ÷ synthesis workers (`pw` from the
//!   run's configuration, else the largest number of concurrent synthesis spans).
//! - **CPU** (where `prep_msm`/`cpu_msm_b_g2`/`finalize` run inside the GPU workers, i.e. on
//!   the critical path): their time per partition ÷ (GPUs × GPU workers per GPU).
//!
//! The resource with the highest floor binds when the measured steady state is within
//! `binding_tolerance` of it (the reference's Phase 8: 37.4 s/proof measured vs 10 ×
//! 3.746 s = 37.5 s of serial kernel time ⇒ GPU-bound). When the run is slower than every
//! floor, the idle gaps decide: mostly `synthesis_starved` → synthesis, `dispatch`/`lock`
//! → dispatch/lock, `cpu_prep` → cpu_prep/finalize, `memory` → memory (syntheses waited for
//! the host-RAM budget; the evidence then says whether the cores, busy as they were while the
//! syntheses ran, had room for more of them).

use serde::{Deserialize, Serialize};

use super::gaps::{GapCause, GapTotals, IdleGap};
use super::host::HostLoad;
use super::tables::{job_infos, Index};
use super::throughput::Throughput;
use super::transitions::Transition;
use super::utilization::Utilization;
use super::{median, ms, AnalyzeOptions, RunView};
use crate::event::SpanKind;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Floors {
    /// Median GPU calls per completed proof (else the configured partitions).
    pub partitions_per_proof: Option<f64>,
    pub gpus: u32,
    pub gpu_workers_per_device: Option<u32>,
    pub synthesis_workers: Option<u32>,
    pub serial_gpu_ms_per_partition: Option<f64>,
    /// `kernel_spans`, `gpu_end_cadence` or `gpu_span_median`.
    pub serial_gpu_source: Option<String>,
    /// Serial GPU time of one proof: serial time per partition × partitions.
    pub serial_gpu_s_per_proof: Option<f64>,
    pub gpu_floor_s_per_proof: Option<f64>,
    pub synthesis_ms_per_partition: Option<f64>,
    pub synthesis_floor_s_per_proof: Option<f64>,
    /// prep_msm + cpu_msm_b_g2 + finalize inside the GPU workers, per partition.
    pub cpu_side_ms_per_partition: Option<f64>,
    pub cpu_floor_s_per_proof: Option<f64>,
}

/// A steady state under this share of the best floor is not one (see `analyze`): the floors
/// are estimates from medians, so a run a few per cent under one is within their error.
const BELOW_FLOOR: f64 = 0.95;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    /// `gpu`, `synthesis`, `cpu_prep/finalize`, `dispatch/lock` or `unknown`.
    pub binding: String,
    /// One sentence with the deciding numbers.
    pub headline: String,
    pub measured_s_per_proof: Option<f64>,
    /// `steady_state`, or `total` (one proof only, or every synthesis started before the first
    /// completion: the steady window then only drains what was synthesised up front), or
    /// `partition_rate` (the steady state fell below a floor: too few proofs to space evenly).
    pub measured_basis: Option<String>,
    pub best_floor_s_per_proof: Option<f64>,
    /// Best floor ÷ measured, 0..≈1: how close the run is to its bound.
    pub efficiency_vs_floor: Option<f64>,
    pub floors: Floors,
    /// The numbers behind the verdict, one line each.
    pub evidence: Vec<String>,
    /// Partitions seen in the log, and those of them in proofs that never completed (left
    /// out of every throughput figure: still running when the log ended).
    #[serde(default)]
    pub partitions_seen: u64,
    #[serde(default)]
    pub partitions_left_out: u64,
    /// Spans whose end event was lost although their partition went on to finish (a stray
    /// or missing line): left out of every figure.
    #[serde(default)]
    pub spans_unmatched: u64,
}

/// Other processes' mean busy cores from which the verdict calls the host noisy.
pub const NOISY_OTHER_CORES: f64 = 1.0;
/// Mean steal (cores) from which the verdict calls the host noisy.
pub const NOISY_STEAL_CORES: f64 = 0.5;

/// A synthesis slower than this many times the median is a slow outlier...
pub const SLOW_SYNTHESIS_FACTOR: f64 = 1.25;
/// ... and the evidence names them from this share of all syntheses.
pub const SLOW_SYNTHESIS_SHARE: f64 = 0.1;

/// One line when a run's syntheses (`synth`: the closed ones' durations, ms) split into
/// normal ones and slow outliers (the same circuit synthesised 1.5x slower at random on a
/// noisy host, as on the H200 VMs): how many, how much slower, and what they cost the
/// synthesis floor. `shared_pool`: the most syntheses that ran at once when they all shared
/// one thread pool ([`shared_synthesis_pool`]), which then is the likelier cause than the host
/// (run 122 at 2^27: 15 of 40 up to 6.7x the median with five on one pool; with pools of their
/// own none (run 123, 4 threads each) or a small one (run 125, 16 each: at most 1.52x)). `None`
/// below 10 syntheses or when fewer than [`SLOW_SYNTHESIS_SHARE`] of them are outliers.
fn slow_syntheses(synth: &[f64], shared_pool: Option<u32>) -> Option<String> {
    if synth.len() < 10 {
        return None;
    }
    let median = median(synth.to_vec()).filter(|&m| m > 0.0)?;
    let slow: Vec<f64> = synth.iter().copied().filter(|&x| x > SLOW_SYNTHESIS_FACTOR * median).collect();
    if (slow.len() as f64) < SLOW_SYNTHESIS_SHARE * synth.len() as f64 {
        return None;
    }
    let mean = synth.iter().sum::<f64>() / synth.len() as f64;
    let slow_mean = slow.iter().sum::<f64>() / slow.len() as f64;
    let cause = match shared_pool {
        Some(n) => format!(
            "up to {n} syntheses shared one thread pool, where a synthesis waiting for its own tasks runs the others': pools of their own (the engine's default, not synthesis_shared_pool) had a much smaller one (2^27: at most 1.5× the median against 6.7×)"
        ),
        None => "the same work running slower points at the host, not the configuration".to_string(),
    };
    Some(format!(
        "synthesis outliers: {} of {} syntheses took over {SLOW_SYNTHESIS_FACTOR}× the median {median:.0} ms (mean of those {slow_mean:.0} ms, {:.2}× the median); they raise the mean synthesis to {:.2}× the median — {cause}",
        slow.len(),
        synth.len(),
        slow_mean / median,
        mean / median
    ))
}

/// The most syntheses that ran at once on one shared pool: the run's meta says the PCE path
/// with one pool for every synthesis worker (`synthesis_shared_pool`, or in timelines written
/// before that key `synthesis_threads = 0`) and at least two syntheses overlapped. `None` for
/// other producers, pools of their own, or one at a time.
fn shared_synthesis_pool(run: RunView<'_>, concurrent: u32) -> Option<u32> {
    let pce = run.meta.extra.get("synthesis").and_then(|v| v.as_str()) == Some("pce");
    (pce && run.meta.synthesis_pool_shared() && concurrent >= 2).then_some(concurrent)
}

/// Share of the host's cores the prover keeps busy while its syntheses run from which a run
/// that waits for host RAM is called short of cores as well: more RAM would admit more
/// syntheses, which the cores could not run much faster.
pub const SATURATED_CORES_SHARE: f64 = 0.85;

/// The prover's mean busy cores (`cpu_busy_cores`) over the samples taken while at least one
/// synthesis ran, and how many samples that was; `None` without such samples.
fn cores_while_synthesising(run: RunView<'_>) -> Option<(f64, usize)> {
    // Disjoint intervals (empty ones hold no sample), then each sample by binary search.
    let merged = crate::stats::busy_intervals(run.spans_of(&SpanKind::Synthesis));
    if merged.is_empty() {
        return None;
    }
    // A sample is the CPU use of the period that ends at its stamp: it belongs to a
    // synthesis when stamped in (start, end].
    let inside = |t: u64| {
        let i = merged.partition_point(|&(a, _)| a < t);
        i > 0 && t <= merged[i - 1].1
    };
    let v: Vec<f64> = run
        .counters
        .iter()
        .filter(|c| c.name == crate::event::counters::CPU_BUSY_CORES && c.value.is_finite() && inside(c.t_ns))
        .map(|c| c.value)
        .collect();
    crate::stats::mean(&v).map(|m| (m, v.len()))
}

/// The evidence line of a RAM-bound verdict: whether the cores had room for the syntheses
/// that waited. With spare cores on one shared synthesis pool (`shared_pool`, as for
/// [`slow_syntheses`]) the pool is named first: run 122's 12.7 of 16 busy cores were the
/// pool's scheduling, and pools of their own made the same RAM GPU-bound (run 125). `None`
/// without the prover's CPU samples or the machine's core count.
fn memory_and_cores(run: RunView<'_>, shared_pool: Option<u32>) -> Option<String> {
    let cores = run.meta.machine.cpu_cores.filter(|&c| c > 0)? as f64;
    let (busy, n) = cores_while_synthesising(run)?;
    let share = busy / cores;
    let what = if share >= SATURATED_CORES_SHARE {
        "the cores were nearly saturated: more RAM would admit more syntheses that the cores could not run much faster — CPU binds beside the RAM"
    } else if shared_pool.is_some() {
        "cores to spare, while the syntheses shared one thread pool: pools of their own (the engine's default) first, which ran the same RAM GPU-bound at 2^27; then more RAM, or smaller reservations per synthesis"
    } else {
        "cores to spare: more RAM, or smaller reservations per synthesis, would admit more syntheses and run them"
    };
    Some(format!("while syntheses ran, the prover kept {busy:.1} of {cores:.0} cores busy on average ({:.0} %, {n} samples): {what}", share * 100.0))
}

/// Largest number of simultaneously running spans of a kind (ends before starts at ties;
/// an open span runs to the end of the run).
fn max_concurrency(run: RunView<'_>, kind: &SpanKind) -> u32 {
    // Closed spans only: an open one (a lost end, or a span running when the log ended)
    // would count as running to the end of the run.
    super::utilization::max_concurrency(run.spans().filter(|s| &s.kind == kind).filter_map(|s| s.end_ns.map(|e| (s.start_ns, e))))
}

/// Share of the GPU floor (from `kernel_spans`) under which a partition's copies are worth a
/// line: its copies outside its kernels add at least this much to its device work.
const COPY_SHARE_NOTED: f64 = 0.05;

/// The GPU floor counts each partition's copies (uploads, downloads) outside its kernels as
/// device time, but with several GPU workers the device runs one partition's copies while
/// another's kernels hold it: there the compute kernels alone are the tighter floor (runs
/// 127–130 at 2^22: the floor grew from 1.25 to 1.49 s/proof with 2 to 4 workers while the
/// compute lock was held ~115 ms a partition). A line saying so when the copies add at least
/// [`COPY_SHARE_NOTED`] and more than one GPU worker ran per device.
fn overlapped_copies(ix: &Index<'_>, f: &Floors) -> Option<String> {
    if f.serial_gpu_source.as_deref() != Some("kernel_spans") || f.gpu_workers_per_device.unwrap_or(1) < 2 || f.gpus == 0 {
        return None;
    }
    let both: Vec<(u64, u64)> = ix.parts.iter().filter_map(|p| p.work.as_deref().and_then(|w| Some((w.kernel_ns?, w.compute_ns?)))).collect();
    if both.is_empty() {
        return None;
    }
    let n = both.len() as f64;
    let all = both.iter().map(|b| ms(b.0)).sum::<f64>() / n;
    let compute = both.iter().map(|b| ms(b.1)).sum::<f64>() / n;
    if compute <= 0.0 || all - compute < COPY_SHARE_NOTED * all {
        return None;
    }
    let per_proof = f.partitions_per_proof.map(|p| compute * p / 1e3 / f.gpus as f64);
    Some(format!(
        "of that floor's {all:.0} ms a partition, {:.0} ms are its copies outside its kernels, which the device can run while another worker's kernels hold it: its compute kernels alone take {compute:.0} ms{}",
        all - compute,
        per_proof.map_or(String::new(), |v| format!(" ({v:.2} s/proof), the floor where the copies overlap"))
    ))
}

/// Serial GPU time per partition, ms, and where it comes from.
fn serial_gpu(run: RunView<'_>, ix: &Index<'_>) -> Option<(f64, &'static str)> {
    let kernels: Vec<u64> = ix.parts.iter().filter_map(|p| p.work.as_deref()?.kernel_ns).collect();
    if !kernels.is_empty() {
        return Some((kernels.iter().map(|&k| ms(k)).sum::<f64>() / kernels.len() as f64, "kernel_spans"));
    }
    let mut by_dev: std::collections::BTreeMap<u32, Vec<(u64, u64)>> = Default::default();
    for s in run.spans().filter(|s| s.kind == SpanKind::Gpu) {
        if let Some(e) = s.end_ns {
            by_dev.entry(s.device_or_0()).or_default().push((e, s.start_ns));
        }
    }
    let mut cadence = Vec::new();
    let mut durations = Vec::new();
    for (_, mut v) in by_dev {
        v.sort_unstable();
        durations.extend(v.iter().map(|&(e, s)| ms(e - s)));
        for w in v.windows(2) {
            let ((e0, _), (e1, s1)) = (w[0], w[1]);
            if s1 < e0 && e1 > e0 {
                cadence.push(ms(e1 - e0));
            }
        }
    }
    if !cadence.is_empty() {
        return median(cadence).map(|m| (m, "gpu_end_cadence"));
    }
    median(durations).map(|m| (m, "gpu_span_median"))
}

/// A number of seconds with precision to match its size (37.4, 2.78, 0.0312).
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let digits = (2 - a.log10().floor() as i32).clamp(3, 9) as usize;
        format!("{v:.digits$}")
    }
}

fn fmt_s(v: f64) -> String {
    format!("{} s", num(v))
}

/// The verdict from the other analyses' results, for a run or a part of one (`ix` built
/// from the same view).
#[allow(clippy::too_many_arguments)]
pub fn decide<'a>(
    run: impl Into<RunView<'a>>,
    ix: &Index<'_>,
    throughput: &Throughput,
    util: &Utilization,
    gaps: &[IdleGap],
    totals: &GapTotals,
    transitions: &[Transition],
    host: Option<&HostLoad>,
    opts: &AnalyzeOptions,
) -> Verdict {
    let run: RunView<'a> = run.into();
    let cfg = &run.meta.config;
    // "GPU", or "CPU device" on a run of the CPU backend: the wording follows the device.
    let dev = run.meta.device_word();
    let jobs = job_infos(ix);
    let per_proof: Vec<f64> = jobs.iter().filter(|j| j.complete() && j.gpu_partitions > 0).map(|j| j.gpu_partitions as f64).collect();
    let mut f = Floors {
        partitions_per_proof: median(per_proof).or(cfg.partitions.map(f64::from)),
        gpus: util.devices.iter().filter(|d| d.gpu_spans > 0 || d.kernel_busy_ms.is_some()).count() as u32,
        ..Default::default()
    };
    if f.gpus == 0 {
        f.gpus = cfg.gpus.unwrap_or(0);
    }
    f.gpu_workers_per_device = cfg.gw.or_else(|| util.devices.iter().map(|d| d.workers).max().filter(|&w| w > 0));
    let synth_conc = max_concurrency(run, &SpanKind::Synthesis);
    f.synthesis_workers = cfg.pw.or((synth_conc > 0).then_some(synth_conc));
    if let Some((g, src)) = serial_gpu(run, ix) {
        f.serial_gpu_ms_per_partition = Some(g);
        f.serial_gpu_source = Some(src.to_string());
    }
    let synth: Vec<f64> = run.spans().filter(|s| s.kind == SpanKind::Synthesis && !s.is_open()).map(|s| ms(s.duration_ns())).collect();
    if !synth.is_empty() {
        f.synthesis_ms_per_partition = Some(synth.iter().sum::<f64>() / synth.len() as f64);
    }
    let gpu_parts = ix.parts.iter().filter(|p| p.gpu_end.is_some() || p.work().kernel_ns.is_some()).count();
    let cpu_total: u64 = run
        .spans()
        .filter(|s| s.kind.is_cpu_gpu_side() && s.device.is_some() && !s.is_open())
        .fold(0u64, |a, s| a.saturating_add(s.duration_ns()));
    if cpu_total > 0 && gpu_parts > 0 {
        f.cpu_side_ms_per_partition = Some(ms(cpu_total) / gpu_parts as f64);
    }
    if let Some(p) = f.partitions_per_proof {
        if let Some(g) = f.serial_gpu_ms_per_partition {
            f.serial_gpu_s_per_proof = Some(g * p / 1e3);
            if f.gpus > 0 {
                f.gpu_floor_s_per_proof = Some(g * p / 1e3 / f.gpus as f64);
            }
        }
        if let (Some(s), Some(w)) = (f.synthesis_ms_per_partition, f.synthesis_workers) {
            f.synthesis_floor_s_per_proof = Some(s * p / 1e3 / w.max(1) as f64);
        }
        if let (Some(c), true) = (f.cpu_side_ms_per_partition, f.gpus > 0) {
            let servers = f.gpus * f.gpu_workers_per_device.unwrap_or(1).max(1);
            f.cpu_floor_s_per_proof = Some(c * p / 1e3 / servers as f64);
        }
    }

    // The steady state (first → last completion) is a pipeline's rate only if the pipeline
    // kept being fed in that window: some synthesis started after the first completion. When
    // every synthesis started before it (fewer proofs than synthesis workers can hold), that
    // window only drains work synthesised up front, faster than any floor: the total is used.
    let first_done_ns = throughput.first_completion_ms.map(|m| (m * 1e6).round() as u64);
    let refilled = first_done_ns.is_some_and(|t| run.spans_of(&SpanKind::Synthesis).any(|s| s.start_ns > t));
    let has_synthesis = run.spans_of(&SpanKind::Synthesis).next().is_some();
    let (measured, basis) = match (throughput.steady_state_s_per_proof, throughput.total_s_per_proof) {
        (Some(s), _) if refilled || !has_synthesis => (Some(s), Some("steady_state")),
        (_, Some(t)) => (Some(t), Some("total")),
        (Some(s), None) => (Some(s), Some("steady_state")),
        _ => (None, None),
    };
    let drained_only = basis == Some("total") && throughput.steady_state_s_per_proof.is_some();
    // A steady state faster than a floor is not one: with a few proofs whose partitions
    // interleave, a late partition of the first proof stretches the work the window holds
    // beyond the proofs it counts (run 146 at 2^27: 22.99 s/proof over four proofs against a
    // GPU floor of 31.9). The partition rate, n × partitions samples of the same rate, is
    // measured instead when it is not below the floor itself.
    let floors = [
        ("gpu", f.gpu_floor_s_per_proof),
        ("synthesis", f.synthesis_floor_s_per_proof),
        ("cpu_prep/finalize", f.cpu_floor_s_per_proof),
    ];
    let best = floors.iter().filter_map(|(n, v)| v.map(|v| (*n, v))).max_by(|a, b| a.1.total_cmp(&b.1));
    let below_floor = match (basis, measured, best.map(|b| b.1)) {
        (Some("steady_state"), Some(m), Some(fl)) if m < fl * BELOW_FLOOR => Some((m, fl)),
        _ => None,
    };
    let (measured, basis) = match (below_floor, throughput.partition_rate_s_per_proof) {
        (Some((_, fl)), Some(r)) if r >= fl * BELOW_FLOOR => (Some(r), Some("partition_rate")),
        _ => (measured, basis),
    };
    let mut ev = Vec::new();
    if let Some((m, fl)) = below_floor {
        ev.push(format!(
            "the steady state ({} s/proof, first → last of {} completions) is below the best floor ({} s/proof): too few proofs for their completions to space evenly (an early proof's late partition), so it is not a steady state{}",
            num(m),
            throughput.proofs_completed,
            num(fl),
            if basis == Some("partition_rate") { "; the partition rate is measured instead" } else { "; read the figures below with care" }
        ));
    }
    if drained_only {
        ev.push(format!(
            "every synthesis started before the first proof completed: the steady state ({} s/proof) only drains work synthesised up front, so the total is measured",
            num(throughput.steady_state_s_per_proof.unwrap_or(0.0))
        ));
    }
    if let Some(m) = measured {
        ev.push(format!(
            "measured: {} s/proof ({}) over {} completed proofs; total incl. warm-up {}",
            format_args!("{m:.2}"),
            match basis {
                Some("steady_state") => "steady state, first → last completion",
                Some("partition_rate") => "partition rate, first → last partition completion",
                _ => "run start → completion",
            },
            throughput.proofs_completed,
            throughput.total_s_per_proof.map_or("n/a".into(), |t| format!("{t:.2} s/proof")),
        ));
    }
    let p_txt = f.partitions_per_proof.map_or("?".into(), |p| format!("{p}"));
    if let (Some(g), Some(fl)) = (f.serial_gpu_ms_per_partition, f.gpu_floor_s_per_proof) {
        ev.push(format!(
            "{dev} floor: {p_txt} partitions × {:.0} ms ({}) ÷ {} {dev}(s) = {:.2} s/proof",
            g,
            f.serial_gpu_source.as_deref().unwrap_or("?"),
            f.gpus,
            fl
        ));
    }
    if let Some(line) = overlapped_copies(ix, &f) {
        ev.push(line);
    }
    if let (Some(s), Some(fl)) = (f.synthesis_ms_per_partition, f.synthesis_floor_s_per_proof) {
        ev.push(format!(
            "synthesis floor: {p_txt} partitions × {:.0} ms ÷ {} workers{} = {:.2} s/proof",
            s,
            f.synthesis_workers.unwrap_or(0),
            if cfg.pw.is_some() { " (pw)" } else { " (max concurrent)" },
            fl
        ));
    }
    if let Some(line) = slow_syntheses(&synth, shared_synthesis_pool(run, synth_conc)) {
        ev.push(line);
    }
    if let (Some(c), Some(fl)) = (f.cpu_side_ms_per_partition, f.cpu_floor_s_per_proof) {
        ev.push(format!(
            "CPU floor (prep_msm + cpu_msm_b_g2 + finalize in the {dev} workers): {p_txt} × {:.0} ms ÷ ({} {dev} × {} workers) = {:.2} s/proof",
            c,
            f.gpus,
            f.gpu_workers_per_device.unwrap_or(1),
            fl
        ));
    }
    if let Some(u) = util.gpu_utilization {
        let k = util.kernel_utilization.map_or(String::new(), |k| format!("; kernel-level {:.1} %", k * 100.0));
        ev.push(format!("{dev} utilisation (union of gpu spans over all workers): {:.1} %{k}", u * 100.0));
    }
    let idle_window = totals.idle_in_window_ms;
    if totals.idle_total_ms > 0.0 {
        let mut parts: Vec<String> = totals
            .by_cause
            .iter()
            .filter(|t| t.count > 0)
            .map(|t| format!("{} {} s ({}×)", t.cause, num(t.total_ms / 1e3), t.count))
            .collect();
        if parts.is_empty() {
            parts.push("none".into());
        }
        ev.push(format!(
            "{dev} idle {} s in {} gaps of ≥ {} ms ({} s between first and last {dev} work): {}",
            num(totals.idle_total_ms / 1e3),
            gaps.len(),
            totals.min_gap_ms,
            num(idle_window / 1e3),
            parts.join(", ")
        ));
    }
    if !transitions.is_empty() {
        let gs: Vec<String> = transitions.iter().take(8).map(|t| format!("{:.0}", t.gap_ms)).collect();
        ev.push(format!(
            "cross-proof transitions (second-to-last {dev} end → next proof's first {dev} start), ms: {}{}",
            gs.join(", "),
            if transitions.len() > 8 { ", …" } else { "" }
        ));
    }

    // What else the host did: a slow run on a busy or oversubscribed machine says so.
    if let Some(h) = host {
        let other = h.other_cores_mean.unwrap_or(0.0);
        let steal = h.steal_cores_mean.unwrap_or(0.0);
        let noisy = other >= NOISY_OTHER_CORES || steal >= NOISY_STEAL_CORES;
        ev.push(format!(
            "host CPU beside the prover: other processes {}, hypervisor steal {} cores on average{}{}",
            h.other_cores_mean.map_or("—".into(), |v| format!("{v:.2}")),
            h.steal_cores_mean.map_or("—".into(), |v| format!("{v:.2}")),
            h.steal_cores_max.map_or(String::new(), |m| format!(" (steal up to {m:.2})")),
            if noisy { " — a noisy host: CPU phases may run slower than this configuration would alone" } else { "" }
        ));
    }

    // What the figures could not use: partitions of proofs that never completed, spans
    // that lost their end.
    let numbered = ix.parts.iter().any(|p| p.partition.is_some());
    let counted = |p: &&super::tables::PartInfo| p.partition.is_some() || !numbered;
    let seen = ix.parts.iter().filter(counted).count() as u64;
    let left_out = ix.parts.iter().filter(counted).filter(|p| !jobs[p.job as usize].complete()).count() as u64;
    let unmatched: u64 = ix.parts.iter().map(|p| p.unmatched_spans as u64).sum();
    let left_out_txt = (left_out > 0 || unmatched > 0).then(|| {
        let mut t = Vec::new();
        if left_out > 0 {
            t.push(format!(
                "{left_out} of {seen} partitions ({:.0} %) belong to proofs that never completed",
                100.0 * left_out as f64 / seen.max(1) as f64
            ));
        }
        if unmatched > 0 {
            t.push(format!("{unmatched} span(s) lost their end event although their partition finished"));
        }
        format!("Left out of the figures: {}.", t.join("; "))
    });
    if let Some(t) = &left_out_txt {
        ev.push(t.clone());
    }

    let mut v = Verdict {
        measured_s_per_proof: measured,
        measured_basis: basis.map(str::to_string),
        best_floor_s_per_proof: best.map(|b| b.1),
        efficiency_vs_floor: match (best, measured) {
            (Some((_, b)), Some(m)) if m > 0.0 => Some(b / m),
            _ => None,
        },
        floors: f.clone(),
        evidence: ev,
        partitions_seen: seen,
        partitions_left_out: left_out,
        spans_unmatched: unmatched,
        ..Default::default()
    };
    let label = |n: &str| match n {
        "gpu" => dev,
        "synthesis" => "synthesis",
        "cpu_prep/finalize" => "CPU (prep_msm/cpu_msm_b_g2/finalize)",
        "memory" => "host-RAM",
        _ => "dispatch/lock",
    };
    let basis_txt = match basis {
        Some("total") => "overall",
        Some("partition_rate") => "by partition rate",
        _ => "in steady state",
    };
    match (measured, best) {
        (None, _) => {
            v.binding = "unknown".into();
            v.headline = "No completed proof in the log: no throughput to judge.".into();
        }
        (Some(m), None) => {
            v.binding = "unknown".into();
            v.headline = format!("{} s/proof {basis_txt}; the log has too little to derive any floor.", num(m));
        }
        (Some(m), Some((name, floor))) if m <= floor * opts.binding_tolerance => {
            v.binding = name.into();
            let others: Vec<String> = floors
                .iter()
                .filter(|(n, fv)| *n != name && fv.is_some())
                .map(|(n, fv)| format!("{} floor {}", label(n), fmt_s(fv.unwrap_or(0.0))))
                .collect();
            v.headline = format!(
                "{}-bound: {} s/proof {basis_txt} against a {} floor of {} s/proof ({:+.0} %){}.",
                label(name),
                num(m),
                label(name),
                num(floor),
                (m / floor - 1.0) * 100.0,
                if others.is_empty() { String::new() } else { format!("; {}", others.join(", ")) }
            );
        }
        (Some(m), Some((name, floor))) => {
            let by = |c: GapCause| totals.total_ms(c);
            let cands = [
                ("synthesis", by(GapCause::SynthesisStarved)),
                ("memory", by(GapCause::Memory)),
                ("dispatch/lock", by(GapCause::Dispatch) + by(GapCause::Lock)),
                ("cpu_prep/finalize", by(GapCause::CpuPrep)),
            ];
            let (top, top_ms) = cands.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(("unknown", 0.0));
            let window_ms: f64 = util.devices.iter().map(|d| d.window_ms).sum();
            if top_ms <= 0.0 || (window_ms > 0.0 && idle_window / window_ms < 0.05) {
                v.binding = "gpu".into();
                v.headline = format!(
                    "{dev}-bound but slow: {} s/proof {basis_txt} is {:.0} % above the best floor ({} {} s/proof) while the {dev} is rarely idle — the time per partition on the {dev} is inflated (contention, or CPU work inside the {dev} calls).",
                    num(m),
                    (m / floor - 1.0) * 100.0,
                    label(name),
                    num(floor)
                );
            } else {
                v.binding = top.into();
                if top == "memory" {
                    if let Some(line) = memory_and_cores(run, shared_synthesis_pool(run, synth_conc)) {
                        v.evidence.push(line);
                    }
                }
                v.headline = format!(
                    "{}-limited: {} s/proof {basis_txt} is {:.0} % above the best floor ({} {} s/proof); the {dev} idles {} s between its first and last work, of which {} s is due to {}.",
                    label(top),
                    num(m),
                    (m / floor - 1.0) * 100.0,
                    label(name),
                    num(floor),
                    num(idle_window / 1e3),
                    num(top_ms / 1e3),
                    top
                );
            }
        }
    }
    if let Some(t) = left_out_txt {
        v.headline.push(' ');
        v.headline.push_str(&t);
    }
    if drained_only {
        v.headline.push_str(" No steady state: every synthesis started before the first proof completed — run more proofs than the synthesis workers hold at once to measure a rate.");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{counters, Counter, Run, RunMeta, Span};

    /// Two syntheses, 100–200 and 150–300 ms (merged: 100–300), and `cpu_busy_cores` samples
    /// stamped at the end of their periods: one at 100 (the period before the first synthesis)
    /// is outside, one at 300 (the last period of the second) inside.
    fn run(samples: &[(u64, f64)]) -> Run {
        let ms = 1_000_000u64;
        let mut r = Run::new(RunMeta::new("prover"));
        r.meta.machine.cpu_cores = Some(16);
        r.spans = vec![Span::new(SpanKind::Synthesis, 100 * ms, 200 * ms).job("a").partition(0), Span::new(SpanKind::Synthesis, 150 * ms, 300 * ms).job("a").partition(1)];
        r.counters = samples.iter().map(|&(t, v)| Counter { name: counters::CPU_BUSY_CORES.into(), t_ns: t * ms, value: v, device: None }).collect();
        r
    }

    #[test]
    fn a_steady_state_below_the_floor_gives_way_to_the_partition_rate() {
        // Three proofs of two partitions on one device, 100 ms a call back to back; proof a's
        // second partition runs last. Completions b 300, c 500, a 600 ms: the steady state is
        // 150 ms a proof, below the GPU floor of 2 × 100 = 200; partitions complete every
        // 100 ms: 200 ms a proof by partition rate.
        let ms = 1_000_000u64;
        let mut r = Run::new(RunMeta::new("prover"));
        let order = [("a", 0), ("b", 0), ("b", 1), ("c", 0), ("c", 1), ("a", 1)];
        for (i, (job, p)) in order.into_iter().enumerate() {
            let t = i as u64 * 100 * ms;
            r.spans.push(Span::new(SpanKind::Synthesis, t.saturating_sub(60 * ms), t).job(job).partition(p));
            let mut g = Span::new(SpanKind::Gpu, t, t + 100 * ms).job(job).partition(p);
            g.device = Some(0);
            g.worker = Some(0);
            r.spans.push(g);
        }
        r.normalize();
        let s = crate::analysis::summarize(&r, &crate::analysis::AnalyzeOptions::default());
        assert!((s.throughput.steady_state_s_per_proof.unwrap() - 0.15).abs() < 1e-9);
        let v = &s.verdict;
        assert_eq!(v.measured_basis.as_deref(), Some("partition_rate"), "{v:?}");
        assert!((v.measured_s_per_proof.unwrap() - 0.2).abs() < 1e-9, "{v:?}");
        assert!(v.headline.contains("by partition rate"), "{}", v.headline);
        assert!(v.evidence.iter().any(|e| e.contains("is below the best floor") && e.contains("not a steady state")), "{:?}", v.evidence);
    }

    #[test]
    fn the_busy_cores_of_the_syntheses_are_the_samples_stamped_inside_them() {
        // At 100: the period before (16 cores, out); 200 and 300: inside (8, 12); 301: after;
        // a NaN sample is skipped.
        let r = run(&[(100, 16.0), (200, 8.0), (250, f64::NAN), (300, 12.0), (301, 16.0)]);
        assert_eq!(cores_while_synthesising(RunView::from(&r)), Some((10.0, 2)));
        assert_eq!(cores_while_synthesising(RunView::from(&run(&[(50, 4.0), (400, 4.0)]))), None, "no sample inside");
        // An open synthesis (no end) is left out, as in the concurrency.
        let mut open = run(&[(120, 4.0)]);
        open.spans.iter_mut().for_each(|s| s.end_ns = None);
        assert_eq!(cores_while_synthesising(RunView::from(&open)), None);
    }

    #[test]
    fn spare_cores_on_a_shared_pool_point_at_the_pool_first() {
        let r = run(&[(200, 8.0), (300, 8.0)]);
        let own = memory_and_cores(RunView::from(&r), None).unwrap();
        assert!(own.contains("8.0 of 16 cores") && own.contains("(50 %, 2 samples)") && own.starts_with("while syntheses ran") && own.contains("cores to spare: more RAM"), "{own}");
        let shared = memory_and_cores(RunView::from(&r), Some(2)).unwrap();
        assert!(shared.contains("while the syntheses shared one thread pool: pools of their own"), "{shared}");
        // Saturated: the pool does not change that line.
        let busy = run(&[(200, 15.0), (300, 15.0)]);
        assert_eq!(memory_and_cores(RunView::from(&busy), Some(2)), memory_and_cores(RunView::from(&busy), None));
        assert!(memory_and_cores(RunView::from(&busy), None).unwrap().contains("nearly saturated"));
        // No core count: no line.
        let mut none = busy.clone();
        none.meta.machine.cpu_cores = None;
        assert_eq!(memory_and_cores(RunView::from(&none), None), None);
        none.meta.machine.cpu_cores = Some(0);
        assert_eq!(memory_and_cores(RunView::from(&none), None), None);
    }
}
