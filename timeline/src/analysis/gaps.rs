//! Idle gaps on each device, each with a cause.
//!
//! A device is busy on the union of its device-work spans (kernels, copies: a copy that
//! reports its device time only for that time, `Span::device_interval`) when the producer
//! reports them — the `kernel` level — and otherwise on the union of its `gpu`
//! spans — the `gpu` level, all a cuzk TIMELINE log allows. A gap is a hole in that union
//! between the device's first and last busy moment, plus the *leading* gap from the start
//! of the run to the device's first busy moment.
//!
//! Causes, for a gap `[g0, g1)` followed by partition P (the one whose work starts at
//! `g1`), decided in this order:
//! 1. `cold_start` — nothing had been queued yet at `g0` (no partition anywhere was
//!    queued, or synthesised when queueing is not reported, at or before `g0`);
//! 2. `memory` — P was queued after the gap began, and host RAM is why: P's synthesis had
//!    waited for the RAM budget (`ram_wait` spans of P) at least half as long as P was late
//!    (queued − gap start), or synthesis workers waited for RAM during at least half of the
//!    gap;
//! 3. `synthesis_starved` — P was queued after the gap began (the GPU had nothing to do);
//! 4. otherwise the evidence that covers most of the gap wins (ties in this order):
//!    `dispatch` — P was queued but no worker had picked it up yet (`g0` → pickup);
//!    `lock` — a worker of the device held or waited for the lock (`lock_hold`/`lock_wait`);
//!    `cpu_prep` — workers of the device were busy on CPU phases (`prep_msm`, `cpu_msm_b_g2`,
//!    `finalize`, and the host steps of copies: allocation, staging, fill, hand-over);
//! 5. `other` — none of the above is visible in the log.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::tables::Index;
use super::utilization::{merge_intervals, overlap_ns};
use super::{ms, AnalyzeOptions};
use crate::event::{Run, SpanKind};

/// Why a device was idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GapCause {
    ColdStart,
    SynthesisStarved,
    /// The next partition's synthesis waited for the host-RAM budget.
    Memory,
    Dispatch,
    Lock,
    CpuPrep,
    Other,
}

impl GapCause {
    pub const ALL: [GapCause; 7] =
        [GapCause::ColdStart, GapCause::SynthesisStarved, GapCause::Memory, GapCause::Dispatch, GapCause::Lock, GapCause::CpuPrep, GapCause::Other];

    pub fn as_str(self) -> &'static str {
        match self {
            GapCause::ColdStart => "cold_start",
            GapCause::SynthesisStarved => "synthesis_starved",
            GapCause::Memory => "memory",
            GapCause::Dispatch => "dispatch",
            GapCause::Lock => "lock",
            GapCause::CpuPrep => "cpu_prep",
            GapCause::Other => "other",
        }
    }

    /// One line for reports and legends.
    pub fn describe(self) -> &'static str {
        match self {
            GapCause::ColdStart => "nothing had been queued yet",
            GapCause::SynthesisStarved => "the next partition was queued after the gap began",
            GapCause::Memory => "the next partition was late because its synthesis waited for host RAM (the budget)",
            GapCause::Dispatch => "work was queued but no worker had picked it up",
            GapCause::Lock => "a worker held or waited for the lock",
            GapCause::CpuPrep => "workers were busy on CPU phases",
            GapCause::Other => "no evidence in the log",
        }
    }
}

impl std::fmt::Display for GapCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One idle gap of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdleGap {
    pub device: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub start_ms: f64,
    pub end_ms: f64,
    pub duration_ms: f64,
    pub cause: GapCause,
    /// The gap from the start of the run to the device's first busy moment.
    pub leading: bool,
    /// The work that ended at the gap's start (none for the leading gap).
    pub before_job: Option<String>,
    pub before_partition: Option<u32>,
    /// The work that started at the gap's end.
    pub after_job: Option<String>,
    pub after_partition: Option<u32>,
    /// When the partition after the gap was queued (or synthesised), if known.
    pub after_queued_ms: Option<f64>,
    /// Proof types of the jobs before and after the gap (a gap is a gap whatever the
    /// types; these say between which it fell).
    #[serde(default)]
    pub before_type: Option<String>,
    #[serde(default)]
    pub after_type: Option<String>,
}

/// Idle time of one cause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CauseTotal {
    pub cause: GapCause,
    pub count: u64,
    pub total_ms: f64,
    /// Share of all listed idle time, 0..=1.
    pub share_of_idle: f64,
}

/// Per-device idle summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceGaps {
    pub device: u32,
    /// `kernel` (device-work spans) or `gpu` (`gpu` spans): what "busy" means here.
    pub level: String,
    /// Run start → first busy moment.
    pub leading_idle_ms: f64,
    /// Idle time between the first and the last busy moment, every gap (also those under
    /// the threshold): equals window − busy at this level.
    pub idle_in_window_ms: f64,
    pub gaps_in_window: u64,
}

/// Totals of the gaps of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapTotals {
    pub min_gap_ms: f64,
    /// One entry per cause, in [`GapCause::ALL`] order, over the listed gaps.
    pub by_cause: Vec<CauseTotal>,
    /// All listed idle time (leading gaps included).
    pub idle_total_ms: f64,
    /// Listed idle time between each device's first and last busy moment (no leading gap).
    pub idle_in_window_ms: f64,
    /// Gaps shorter than `min_gap_ms`: not listed, counted here.
    pub below_threshold_count: u64,
    pub below_threshold_ms: f64,
    pub devices: Vec<DeviceGaps>,
}

impl GapTotals {
    /// Listed idle time of one cause, ms.
    pub fn total_ms(&self, cause: GapCause) -> f64 {
        self.by_cause.iter().find(|t| t.cause == cause).map_or(0.0, |t| t.total_ms)
    }
}

/// All the gaps of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapAnalysis {
    /// Gaps of at least `min_gap_ms`, ordered by device then start.
    pub gaps: Vec<IdleGap>,
    pub totals: GapTotals,
}

/// A gap as the charts want it (the shape of `chart::GapMark`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapMark {
    pub device: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub cause: String,
}

/// The listed gaps as chart marks.
pub fn marks(gaps: &[IdleGap]) -> Vec<GapMark> {
    gaps.iter()
        .map(|x| GapMark { device: x.device, start_ns: x.start_ns, end_ns: x.end_ns, cause: x.cause.as_str().to_string() })
        .collect()
}

#[derive(Default)]
struct DevSpans {
    gpu: Vec<usize>,
    work: Vec<usize>,
    lock: Vec<(u64, u64)>,
    cpu: Vec<(u64, u64)>,
}

/// Idle gaps of every device (see the module doc).
pub fn analyze(run: &Run, opts: &AnalyzeOptions) -> GapAnalysis {
    analyze_with(run, &Index::build(run), opts)
}

/// [`analyze`] with a prebuilt index.
pub fn analyze_with(run: &Run, ix: &Index<'_>, opts: &AnalyzeOptions) -> GapAnalysis {
    let mut per: BTreeMap<u32, DevSpans> = BTreeMap::new();
    let mut run_start = u64::MAX;
    // RAM waits: all of them (merged), and each partition's total.
    let mut ram_wait: Vec<(u64, u64)> = Vec::new();
    let mut ram_wait_of: BTreeMap<u32, u64> = BTreeMap::new();
    for (i, s) in run.spans.iter().enumerate() {
        run_start = run_start.min(s.start_ns);
        let Some(e) = s.end_ns else { continue };
        let k = &s.kind;
        if *k == SpanKind::RamWait {
            ram_wait.push((s.start_ns, e));
            if let Some(p) = ix.part_of_span.get(i).copied().flatten() {
                *ram_wait_of.entry(p).or_default() += e.saturating_sub(s.start_ns);
            }
        } else if *k == SpanKind::Gpu {
            per.entry(s.device_or_0()).or_default().gpu.push(i);
        } else if k.is_device_work() {
            let d = per.entry(s.device_or_0()).or_default();
            d.work.push(i);
            // A copy's host steps (allocation, staging, fill; the hand-over) are CPU-side
            // preparation, not device work (see `Span::device_interval`).
            if let Some((a, b)) = s.device_interval() {
                d.cpu.extend([(s.start_ns, a), (b, e)].into_iter().filter(|&(x, y)| y > x));
            }
        } else if matches!(k, SpanKind::LockWait | SpanKind::LockHold) {
            per.entry(s.device_or_0()).or_default().lock.push((s.start_ns, e));
        } else if k.is_cpu_gpu_side() {
            per.entry(s.device_or_0()).or_default().cpu.push((s.start_ns, e));
        }
    }
    let ram_wait = merge_intervals(ram_wait);
    let first_available = ix.first_available();
    let min_gap_ns = (opts.min_gap_ms.max(0.0) * 1.0e6) as u64;
    let mut out = GapAnalysis::default();
    out.totals.min_gap_ms = opts.min_gap_ms;
    let part_name = |span: usize| -> (Option<String>, Option<u32>, Option<String>) {
        match ix.part_of_span.get(span).copied().flatten() {
            Some(p) => {
                let pi = &ix.parts[p as usize];
                (Some(ix.jobs[pi.job as usize].to_string()), pi.partition, Some(ix.type_of_job(pi.job).to_string()))
            }
            None => (None, run.spans[span].partition, None),
        }
    };

    for (device, mut d) in per {
        // Readers normalise runs (spans sorted by start); hand-built runs may not be.
        d.gpu.sort_by_key(|&i| run.spans[i].start_ns);
        let (level, busy) = if d.work.is_empty() { ("gpu", &d.gpu) } else { ("kernel", &d.work) };
        if busy.is_empty() {
            continue;
        }
        // Busy intervals: whole `gpu` spans, or the device part of device-work spans.
        let busy_iv = |i: usize| -> (u64, u64) {
            let s = &run.spans[i];
            if level == "kernel" {
                s.device_interval().unwrap_or((s.start_ns, s.start_ns))
            } else {
                (s.start_ns, s.end_ns.unwrap_or(s.start_ns))
            }
        };
        let mut busy = busy.clone();
        busy.sort_by_key(|&i| busy_iv(i).0);
        let lock = merge_intervals(std::mem::take(&mut d.lock));
        let cpu = merge_intervals(std::mem::take(&mut d.cpu));
        // Holes of the union: (g0, g1, span that ended at g0, span that starts at g1).
        let mut holes: Vec<(u64, u64, Option<usize>, usize)> = Vec::new();
        let first = busy[0];
        let (first_start, first_end) = busy_iv(first);
        if first_start > run_start {
            holes.push((run_start, first_start, None, first));
        }
        let mut cur_end = first_end;
        let mut cur_end_idx = first;
        for &i in &busy[1..] {
            let (start, e) = busy_iv(i);
            if start > cur_end {
                holes.push((cur_end, start, Some(cur_end_idx), i));
                cur_end = e;
                cur_end_idx = i;
            } else if e > cur_end {
                cur_end = e;
                cur_end_idx = i;
            }
        }
        let mut dg = DeviceGaps { device, level: level.to_string(), leading_idle_ms: 0.0, idle_in_window_ms: 0.0, gaps_in_window: 0 };
        let mut idle_window_ns = 0u64;
        for (g0, g1, before, after) in holes {
            let dur = g1 - g0;
            if before.is_none() {
                dg.leading_idle_ms = ms(dur);
            } else {
                idle_window_ns = idle_window_ns.saturating_add(dur);
                dg.gaps_in_window += 1;
            }
            if dur < min_gap_ns {
                out.totals.below_threshold_count += 1;
                out.totals.below_threshold_ms += ms(dur);
                continue;
            }
            let after_idx = ix.part_of_span[after];
            let after_part = after_idx.map(|p| &ix.parts[p as usize]);
            let avail = after_part.and_then(|p| p.available());
            let cold = match first_available {
                Some(fa) => fa > g0,
                None => before.is_none(),
            };
            let cause = if cold {
                GapCause::ColdStart
            } else if let Some(a) = avail.filter(|a| *a > g0) {
                let own_wait = after_idx.and_then(|p| ram_wait_of.get(&p)).copied().unwrap_or(0);
                let late = a - g0;
                let own = own_wait > 0 && own_wait.saturating_mul(2) >= late;
                let during = !ram_wait.is_empty() && overlap_ns(&ram_wait, g0, g1).saturating_mul(2) >= dur;
                if own || during {
                    GapCause::Memory
                } else {
                    GapCause::SynthesisStarved
                }
            } else {
                let dispatch_ns = match (avail, after_part.and_then(|p| p.taken())) {
                    (Some(_), Some(t)) if t > g0 => t.min(g1) - g0,
                    _ => 0,
                };
                let lock_ns = overlap_ns(&lock, g0, g1);
                let cpu_ns = overlap_ns(&cpu, g0, g1);
                let best = dispatch_ns.max(lock_ns).max(cpu_ns);
                if best == 0 {
                    GapCause::Other
                } else if dispatch_ns == best {
                    GapCause::Dispatch
                } else if lock_ns == best {
                    GapCause::Lock
                } else {
                    GapCause::CpuPrep
                }
            };
            let (before_job, before_partition, before_type) = before.map_or((None, None, None), part_name);
            let (after_job, after_partition, after_type) = part_name(after);
            out.gaps.push(IdleGap {
                device,
                start_ns: g0,
                end_ns: g1,
                start_ms: ms(g0),
                end_ms: ms(g1),
                duration_ms: ms(dur),
                cause,
                leading: before.is_none(),
                before_job,
                before_partition,
                after_job,
                after_partition,
                after_queued_ms: avail.map(ms),
                before_type,
                after_type,
            });
        }
        dg.idle_in_window_ms = ms(idle_window_ns);
        out.totals.devices.push(dg);
    }
    by_cause_into(&out.gaps, &mut out.totals);
    out
}

/// Fill the per-cause and overall idle figures of `totals` from listed `gaps`.
fn by_cause_into(gaps: &[IdleGap], totals: &mut GapTotals) {
    // Sums in u128: gaps of a whole u64 clock each (a mangled log) add up past u64, and a
    // saturated total would no longer be the sum of its causes.
    let mut counts: BTreeMap<GapCause, (u64, u128)> = BTreeMap::new();
    let (mut idle_ns, mut window_ns) = (0u128, 0u128);
    for g in gaps {
        let c = counts.entry(g.cause).or_default();
        let d = u128::from(g.end_ns.saturating_sub(g.start_ns));
        c.0 += 1;
        c.1 += d;
        idle_ns += d;
        if !g.leading {
            window_ns += d;
        }
    }
    totals.idle_total_ms = ms(idle_ns);
    totals.idle_in_window_ms = ms(window_ns);
    totals.by_cause = GapCause::ALL
        .iter()
        .map(|&cause| {
            let (count, ns) = counts.get(&cause).copied().unwrap_or_default();
            CauseTotal { cause, count, total_ms: ms(ns), share_of_idle: if idle_ns > 0 { ns as f64 / idle_ns as f64 } else { 0.0 } }
        })
        .collect();
}

/// Totals of a subset of the listed gaps (those before one proof type's work, say): per
/// cause and overall; no per-device rows, nothing below the threshold.
pub fn totals_of(gaps: &[IdleGap], min_gap_ms: f64) -> GapTotals {
    let mut t = GapTotals { min_gap_ms, ..Default::default() };
    by_cause_into(gaps, &mut t);
    t
}
