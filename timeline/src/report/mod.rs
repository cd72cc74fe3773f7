//! Human-readable reports of a [`Summary`](crate::analysis::Summary): `report.md`
//! ([`markdown`]), readable on its own and embedding the charts by relative file name, and
//! `report.html` ([`html`], with the `analysis` feature's charts), one self-contained page
//! with an interactive waterfall.

#[cfg(feature = "analysis")]
pub mod html;
pub mod markdown;

pub use markdown::{device_word, render, ChartRef, STANDARD_CHARTS};
