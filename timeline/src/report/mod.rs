//! Human-readable reports of a [`Summary`](crate::analysis::Summary): `report.md`
//! ([`markdown`]), readable on its own and embedding the charts by relative file name.

pub mod markdown;

pub use markdown::{render, ChartRef, STANDARD_CHARTS};
