//! proofscope's timeline layer: the event model every producer speaks ([`event`]), the
//! readers and writers of our JSON lines and of cuzk daemon logs ([`read`], [`write`]),
//! and the analyses that turn a [`Run`](event::Run) into a verdict.
//!
//! This crate depends on neither the prover nor the simulator, so it can judge any
//! producer, including engines that are not ours. Heavy outputs (Parquet, charts) sit
//! behind the default `analysis` feature.

pub mod analysis;
pub mod atomic;
pub mod bytes;
#[cfg(feature = "analysis")]
pub mod chart;
pub mod event;
pub mod export;
pub mod lanes;
pub mod read;
pub mod report;
pub mod settings;
pub mod stats;
pub mod write;

pub use event::{Counter, Diagnostics, LockMode, MachineInfo, Record, Run, RunConfig, RunMeta, Span, SpanKind, SCHEMA_VERSION};
