//! Throughput and latency.
//!
//! - `total_s_per_proof`: run start (first event) → last completion, over the number of
//!   completed proofs;
//! - `steady_state_s_per_proof`: completion of the first proof → completion of the last,
//!   over `proofs − 1` (excludes the pipeline's warm-up; needs two proofs);
//! - `partition_rate_s_per_proof`: the same rate counted in partitions — (last − first
//!   partition completion) ÷ (completed partitions − 1) × partitions per proof, over the
//!   partitions of complete proofs (a partition completes at the latest end of its spans).
//!   With a handful of proofs whose partitions interleave, the spacing of *proof*
//!   completions says more about which partition happened to finish last than about
//!   throughput; partitions give n × partitions samples of the same rate. Campaigns score
//!   the simulator on it;
//! - latency per proof: its first synthesis start (or first event) → its completion
//!   (the latest end of any of its spans: for a cuzk log, its last GPU_END).
//!
//! A job is complete when none of its spans is open and at least one of its GPU calls
//! (or its finalisation) ended. Incomplete jobs are counted, never timed.

use serde::{Deserialize, Serialize};

use super::tables::{job_infos, Index};
use super::{ms, quantile_sorted, secs, RunView};
use crate::event::Run;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Throughput {
    /// Jobs seen in the log.
    pub jobs_seen: u64,
    pub proofs_completed: u64,
    pub incomplete_jobs: u64,
    /// First event of the run, ms since the epoch.
    pub run_start_ms: f64,
    /// Completion of the first proof.
    pub first_completion_ms: Option<f64>,
    /// Completion of the last proof.
    pub last_completion_ms: Option<f64>,
    /// Run start → last completion.
    pub wall_s: Option<f64>,
    pub total_s_per_proof: Option<f64>,
    pub steady_state_s_per_proof: Option<f64>,
    /// First → last completion.
    pub steady_state_window_s: Option<f64>,
    /// Steady state from partition completions (see the module doc); needs two partitions.
    pub partition_rate_s_per_proof: Option<f64>,
    /// 3600 / (steady state s/proof, else total s/proof).
    pub proofs_per_hour: Option<f64>,
    pub latency_mean_s: Option<f64>,
    pub latency_p50_s: Option<f64>,
    pub latency_min_s: Option<f64>,
    pub latency_max_s: Option<f64>,
}

pub fn analyze(run: &Run) -> Throughput {
    analyze_with(run, &Index::build(run))
}

/// The throughput of a run or of a part of one (`ix` built from the same view).
pub fn analyze_with<'a>(run: impl Into<RunView<'a>>, ix: &Index<'_>) -> Throughput {
    let run: RunView<'a> = run.into();
    let jobs = job_infos(ix);
    let run_start = run.spans().map(|s| s.start_ns).min().unwrap_or(0);
    let mut completions: Vec<u64> = jobs.iter().filter_map(|j| j.completed()).collect();
    completions.sort_unstable();
    let mut lat: Vec<f64> = jobs.iter().filter_map(|j| j.latency()).map(secs).collect();
    lat.sort_by(f64::total_cmp);
    let n = completions.len() as u64;
    let first = completions.first().copied();
    let last = completions.last().copied();
    let wall = last.map(|l| l.saturating_sub(run_start));
    let total = wall.filter(|_| n > 0).map(|w| secs(w) / n as f64);
    let steady_window = match (first, last) {
        (Some(f), Some(l)) if n >= 2 => Some(l - f),
        _ => None,
    };
    let steady = steady_window.map(|w| secs(w) / (n - 1) as f64);
    let complete: Vec<bool> = jobs.iter().map(|j| j.complete()).collect();
    let mut part_ends: Vec<u64> = ix.parts.iter().filter(|p| p.partition.is_some() && complete[p.job as usize]).filter_map(|p| p.last_end).collect();
    part_ends.sort_unstable();
    let np = part_ends.len();
    let partition_rate = match (part_ends.first(), part_ends.last()) {
        (Some(&f), Some(&l)) if np >= 2 && n > 0 => Some(secs(l - f) / (np - 1) as f64 * np as f64 / n as f64),
        _ => None,
    };
    let per_proof = steady.or(total).filter(|v| *v > 0.0);
    Throughput {
        jobs_seen: jobs.len() as u64,
        proofs_completed: n,
        incomplete_jobs: jobs.len() as u64 - n,
        run_start_ms: ms(run_start),
        first_completion_ms: first.map(ms),
        last_completion_ms: last.map(ms),
        wall_s: wall.map(secs),
        total_s_per_proof: total,
        steady_state_s_per_proof: steady,
        steady_state_window_s: steady_window.map(secs),
        partition_rate_s_per_proof: partition_rate,
        proofs_per_hour: per_proof.map(|s| 3600.0 / s),
        latency_mean_s: (!lat.is_empty()).then(|| lat.iter().sum::<f64>() / lat.len() as f64),
        latency_p50_s: quantile_sorted(&lat, 0.5),
        latency_min_s: lat.first().copied(),
        latency_max_s: lat.last().copied(),
    }
}
