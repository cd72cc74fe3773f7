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

use crate::event::{Run, Span, SpanKind};

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

/// What an analysis reads of a run: all of it, or some of its spans picked by index (one
/// proof type's jobs, see [`summary`]) without copying them — a copy of most of a
/// million-span run cost ~0.1 s and ~80 MB. A subset has the run's meta and no counters
/// (the per-type analyses read spans and meta only). `&Run` converts into the whole view,
/// so the analyses taking a view are called with a run as before.
#[derive(Clone, Copy, Debug)]
pub struct RunView<'a> {
    pub meta: &'a crate::event::RunMeta,
    pub counters: &'a [crate::event::Counter],
    all: &'a [Span],
    /// Indices into `all`, ascending; `None`: every span.
    pick: Option<&'a [u32]>,
}

impl<'a> RunView<'a> {
    /// The spans of `run` at `pick` (ascending indices), with the run's meta, no counters.
    pub fn subset(run: &'a Run, pick: &'a [u32]) -> RunView<'a> {
        RunView { meta: &run.meta, counters: &[], all: &run.spans, pick: Some(pick) }
    }

    /// How many spans the view holds.
    pub fn len(&self) -> usize {
        self.pick.map_or(self.all.len(), <[u32]>::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The view's spans, in the run's order.
    pub fn spans(&self) -> Spans<'a> {
        match self.pick {
            None => Spans::All(self.all.iter()),
            Some(p) => Spans::Picked(self.all, p.iter()),
        }
    }

    /// The view's spans of one kind.
    pub fn spans_of(&self, kind: &'a SpanKind) -> impl Iterator<Item = &'a Span> + 'a {
        self.spans().filter(move |s| &s.kind == kind)
    }
}

impl<'a> From<&'a Run> for RunView<'a> {
    fn from(run: &'a Run) -> RunView<'a> {
        RunView { meta: &run.meta, counters: &run.counters, all: &run.spans, pick: None }
    }
}

/// The spans of a [`RunView`].
#[derive(Clone, Debug)]
pub enum Spans<'a> {
    All(std::slice::Iter<'a, Span>),
    Picked(&'a [Span], std::slice::Iter<'a, u32>),
}

impl<'a> Iterator for Spans<'a> {
    type Item = &'a Span;
    #[inline]
    fn next(&mut self) -> Option<&'a Span> {
        match self {
            Spans::All(it) => it.next(),
            Spans::Picked(all, it) => it.next().map(|&i| &all[i as usize]),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Spans::All(it) => it.size_hint(),
            Spans::Picked(_, it) => it.size_hint(),
        }
    }
}

impl ExactSizeIterator for Spans<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_is_signed() {
        assert_eq!(diff_ms(1_000_000, 3_000_000), -2.0);
    }
}
