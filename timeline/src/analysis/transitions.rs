//! Cross-proof transitions: how seamlessly a device moves from one proof to the next.
//!
//! For consecutive jobs N → N+1 on a device (ordered by their first GPU start there), the
//! table of the reference's Phase 8 analysis: the gap from job N's **second-to-last**
//! GPU end to job N+1's first GPU start (with two workers per GPU, the worker that
//! finishes N's second-to-last partition is the one that should start N+1 at once, while
//! the other is still on N's last partition), and how long N+1's first partition ran
//! alongside N's last one (`overlap_ms`). A negative gap means N+1 started early.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::gaps::GapCause;
use super::tables::Index;
use super::{diff_ms, ms, RunView};
use crate::event::{Run, SpanKind};

/// One N → N+1 transition on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Transition {
    pub device: u32,
    pub from_job: String,
    pub to_job: String,
    /// Second-to-last GPU end of `from_job` on this device (`None` when it had one call).
    pub from_second_to_last_gpu_end_ms: Option<f64>,
    pub from_last_gpu_end_ms: f64,
    pub to_first_gpu_start_ms: f64,
    /// `to_first_gpu_start − from_second_to_last_gpu_end` (the last end when there is no
    /// second-to-last); negative when N+1 started before.
    pub gap_ms: f64,
    /// Time N+1's first partition ran alongside N's last partition, ≥ 0.
    pub overlap_ms: f64,
    /// When N+1's first partition was queued (or synthesised), if known.
    pub to_first_queued_ms: Option<f64>,
    /// For a positive gap: `synthesis_starved` when N+1's first partition was queued after
    /// the reference end, `dispatch` when it was waiting, `other` when unknown.
    pub cause: Option<GapCause>,
}

#[derive(Default)]
struct JobOnDevice {
    first: Option<(u64, u64, usize)>,
    last: Option<(u64, u64)>,
    ends: Vec<u64>,
}

/// Transitions on every device.
pub fn analyze(run: &Run) -> Vec<Transition> {
    analyze_with(run, &Index::build(run))
}

/// [`analyze`] with a prebuilt index.
pub fn analyze_with<'a>(run: impl Into<RunView<'a>>, ix: &Index<'_>) -> Vec<Transition> {
    let run: RunView<'a> = run.into();
    // device → job index → facts
    let mut per: BTreeMap<u32, BTreeMap<u32, JobOnDevice>> = BTreeMap::new();
    for (i, s) in run.spans().enumerate() {
        if s.kind != SpanKind::Gpu {
            continue;
        }
        let (Some(e), Some(p)) = (s.end_ns, ix.part_of_span[i]) else { continue };
        let job = ix.parts[p as usize].job;
        let j = per.entry(s.device_or_0()).or_default().entry(job).or_default();
        if j.first.is_none_or(|(fs, _, _)| s.start_ns < fs) {
            j.first = Some((s.start_ns, e, i));
        }
        if j.last.is_none_or(|(_, le)| e > le) {
            j.last = Some((s.start_ns, e));
        }
        j.ends.push(e);
    }
    let mut out = Vec::new();
    for (device, jobs) in per {
        let mut order: Vec<(u32, JobOnDevice)> = jobs.into_iter().collect();
        order.sort_by_key(|(j, x)| (x.first.map(|f| f.0), *j));
        for w in order.windows(2) {
            let ((jn, n), (jm, m)) = (&w[0], &w[1]);
            let (Some((ls, le)), Some((fs, fe, fi))) = (n.last, m.first) else { continue };
            let mut ends = n.ends.clone();
            ends.sort_unstable();
            let second = (ends.len() >= 2).then(|| ends[ends.len() - 2]);
            let reference = second.unwrap_or(le);
            let overlap = fe.min(le).saturating_sub(fs.max(ls));
            let queued = ix.part_of_span[fi].and_then(|p| ix.parts[p as usize].available());
            let cause = (fs > reference).then_some(match queued {
                Some(q) if q > reference => GapCause::SynthesisStarved,
                Some(_) => GapCause::Dispatch,
                None => GapCause::Other,
            });
            out.push(Transition {
                device,
                from_job: ix.jobs[*jn as usize].to_string(),
                to_job: ix.jobs[*jm as usize].to_string(),
                from_second_to_last_gpu_end_ms: second.map(ms),
                from_last_gpu_end_ms: ms(le),
                to_first_gpu_start_ms: ms(fs),
                gap_ms: diff_ms(fs, reference),
                overlap_ms: ms(overlap),
                to_first_queued_ms: queued.map(ms),
                cause,
            });
        }
    }
    out
}
