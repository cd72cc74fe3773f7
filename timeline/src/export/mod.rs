//! Exports of a [`Run`](crate::event::Run) for other tools: `summary.json` written on two
//! cores ([`summary_json`]), `trace.json` for Perfetto
//! ([`trace`], checked by [`validate`]) and, with the `analysis` feature, the tables for
//! polars, pandas, DuckDB ([`tables`], [`parquet`], each starting with the run's [`keys`])
//! and spreadsheets ([`csv`]).

pub mod summary_json;
pub mod trace;
pub mod validate;
#[cfg(feature = "analysis")]
pub mod parquet;
#[cfg(feature = "analysis")]
pub mod tables;
#[cfg(feature = "analysis")]
pub mod keys;
#[cfg(feature = "analysis")]
pub mod csv;
#[cfg(test)]
pub(crate) mod fixtures;
