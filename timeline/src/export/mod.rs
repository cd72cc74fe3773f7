//! Exports of a [`Run`](crate::event::Run) for other tools: `trace.json` for Perfetto
//! ([`trace`], checked by [`validate`]) and, with the `analysis` feature, Parquet tables
//! for Python polars/pandas ([`parquet`]).

pub mod trace;
pub mod validate;
#[cfg(feature = "analysis")]
pub mod parquet;
#[cfg(feature = "analysis")]
pub mod tables;
#[cfg(test)]
pub(crate) mod fixtures;
