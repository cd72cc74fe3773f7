//! The analyses: pure functions of a [`Run`](crate::event::Run) (plus [`AnalyzeOptions`])
//! that return serde structs. [`summary::summarize`] runs them all and gathers the results
//! into the [`Summary`](summary::Summary) that `summary.json` serialises; the Markdown
//! report, the charts and `compare` read that, never recompute.
//!
//! | module | question it answers |
//! |---|---|
//! | [`tables`] | when did each partition synthesise, queue, get picked up, run on the GPU? |
//! | [`utilization`] | how busy was each device (sweep-line union, never a sum)? |
//! | [`gaps`] | when was each device idle, and why? |
//! | [`transitions`] | how seamless are the hand-overs from one proof to the next? |
//! | [`throughput`] | seconds per proof, overall and in steady state; latency per proof |
//! | [`phases`] | distribution of every span kind, per kind and per device |
//! | [`verdict`] | which resource binds, with the numbers and the floors that follow |
//! | [`host`] | what else ran on the machine: other processes, the hypervisor's steal |
//! | [`compare`] | several runs side by side |
//!
//! Conventions: every time in an output struct is a float with its unit in the field name
//! (`_ms`, `_s`); fractions are `0..=1` and named `utilization`/`share`. Internally all
//! arithmetic is on integer nanoseconds. Open spans (a killed run) are reported, never
//! counted as busy time or as a duration.
//!
//! None of this uses polars or plotters: it is always compiled, also without the
//! `analysis` feature, and handles a million events well under a second.

pub mod compare;
pub mod gaps;
pub mod host;
pub mod phases;
pub mod summary;
pub mod tables;
pub mod throughput;
pub mod transitions;
pub mod utilization;
pub mod verdict;

use serde::{Deserialize, Serialize};

pub use summary::{summarize, Summary, SUMMARY_SCHEMA_VERSION};

/// Knobs of the analyses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeOptions {
    /// Idle gaps shorter than this are not listed (they are still counted in
    /// `idle_gap_totals.below_threshold_*`). Milliseconds.
    pub min_gap_ms: f64,
    /// Steady state is "within this factor of the best floor" for the verdict to call a
    /// resource binding outright (1.10 = within 10 %).
    pub binding_tolerance: f64,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions { min_gap_ms: 1.0, binding_tolerance: 1.10 }
    }
}

/// Nanoseconds to milliseconds.
#[inline]
pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1.0e6
}

/// Nanoseconds to seconds.
#[inline]
pub fn secs(ns: u64) -> f64 {
    ns as f64 / 1.0e9
}

/// Signed difference `a - b` in milliseconds.
#[inline]
pub fn diff_ms(a: u64, b: u64) -> f64 {
    (a as i128 - b as i128) as f64 / 1.0e6
}

/// Quantile `q` (0..=1) of sorted values, linear interpolation between closest ranks
/// (numpy's default), `None` for no values.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Median of unsorted values.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(4.0));
        assert!((quantile_sorted(&v, 0.95).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn diff_is_signed() {
        assert_eq!(diff_ms(1_000_000, 3_000_000), -2.0);
    }
}
