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
//! | [`devices`] | several devices: each one's share and idle causes; GPUs, host, placement or a device binds? |
//! | [`memory`] | peak host RSS and device memory, from the sampled counters |
//! | [`proof_type`] | which proof type is each job (PoRep, SnapDeals, the PoSts)? |
//! | [`compare`] | several runs side by side |
//! | [`fleet`] | many hosts: s/proof per type, utilisation, idle causes, the worst host |
//!
//! Conventions: every time in an output struct is a float with its unit in the field name
//! (`_ms`, `_s`); fractions are `0..=1` and named `utilization`/`share`. Internally all
//! arithmetic is on integer nanoseconds. Open spans (a killed run) are reported, never
//! counted as busy time or as a duration.
//!
//! None of this uses polars or plotters: it is always compiled, also without the
//! `analysis` feature, and handles a million events well under a second.

pub mod compare;
pub mod devices;
pub mod fleet;
pub mod gaps;
pub mod host;
pub mod memory;
pub mod phases;
pub mod proof_type;
pub mod summary;
pub mod tables;
pub mod throughput;
pub mod transitions;
pub mod utilization;
pub mod verdict;

use serde::{Deserialize, Serialize};

pub use summary::{summarize, Summary, SUMMARY_SCHEMA_VERSION};

/// Knobs of the analyses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
pub fn ms(ns: impl Into<u128>) -> f64 {
    ns.into() as f64 / 1.0e6
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

pub use crate::stats::{median, quantile_sorted};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_is_signed() {
        assert_eq!(diff_ms(1_000_000, 3_000_000), -2.0);
    }
}
