//! Charts of a run, drawn with plotters into SVG (and PNG for the waterfall): the
//! pictures of `report.md`. They read a [`Run`](crate::event::Run) (and the gaps the
//! analyzer found, as [`GapMark`]s) and never recompute an analysis beyond what the
//! picture itself needs (windowed busy fractions, box-plot quartiles, histogram bins).
//!
//! - [`waterfall_svg`] / [`waterfall_png`]: one row per synthesis worker and per GPU worker,
//!   grouped per device, bars coloured by kind, kernels nested inside their `gpu` call,
//!   idle gaps shaded by cause. They take the run laid out on its lanes
//!   ([`LaidOut`](crate::lanes::LaidOut)), shared with `report.html` and `trace.json`.
//! - [`utilization_svg`]: busy fraction per time window and device, NVML counters overlaid.
//! - [`gaps_svg`]: histogram of idle-gap durations by cause (log bins).
//! - [`phases_svg`]: box plots of span durations per kind.
//! - [`memory_svg`]: host RSS and the bytes reserved from the RAM budget over time, against
//!   the budget; syntheses waiting for RAM shaded.
//! - [`lines_svg`] / [`line_chart_svg`] (call-outs, reference lines, a log x axis when the
//!   values span two decades), [`bar_chart_svg`]: small generic charts (the simulator's sweeps).
//!
//! Text uses a font embedded in the binary ([`ensure_font`]); no system font is needed.

mod font;
mod gaps;
mod generic;
mod memory;
mod phases;
pub mod style;
mod utilization;
mod waterfall;

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

pub use font::{ensure_font, FAMILY};
pub use gaps::gaps_svg;
pub use generic::{bar_chart_svg, line_chart_svg, lines_svg, Callout, HLine, LineChart, LOG_SCALE};
pub use memory::memory_svg;
pub use phases::phases_svg;
pub use utilization::utilization_svg;
pub use waterfall::{waterfall_png, waterfall_svg, Waterfall};

/// An idle gap on a device, as the analyzer attributed it (`cause`: `cold_start`,
/// `synthesis_starved`, `memory`, `dispatch`, `lock`, `cpu_prep`, `other`). One type with the
/// analyzer's: `analysis::gaps::marks` produces exactly what the charts take.
pub use crate::analysis::gaps::GapMark;

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("cannot draw {path}: {message}")]
    Draw { path: String, message: String },
    #[error("the embedded chart font could not be loaded")]
    Font,
}

/// What the drawing code returns; plotters' errors are generic over the backend.
pub(crate) type DrawResult = Result<(), Box<dyn Error>>;

/// Draw into an SVG file of `size` with `draw`, then write it (whole or not at all:
/// drawn in memory, written through [`crate::atomic`]).
pub(crate) fn render_svg(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> Result<String, ChartError> {
    render_svg_with(path, size, |root| draw(root).map(|()| String::new()))
}

/// [`render_svg`] where `draw` also returns SVG elements of its own, put last in the
/// document (on top): what plotters cannot write, such as `<title>`s for hover text.
pub(crate) fn render_svg_with(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<String, Box<dyn Error>>,
) -> Result<String, ChartError> {
    ensure_font()?;
    let err = |e: Box<dyn Error>| ChartError::Draw { path: path.display().to_string(), message: e.to_string() };
    let mut svg = String::new();
    let extra;
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.into()))?;
        extra = draw(&root).map_err(err)?;
        root.present().map_err(|e| err(e.into()))?;
    }
    if !extra.is_empty() {
        let at = svg.rfind("</svg>").ok_or_else(|| err("plotters wrote no closing </svg>".into()))?;
        svg.insert_str(at, &extra);
    }
    crate::atomic::write_atomic(path, svg.as_bytes()).map_err(|e| err(e.into()))?;
    Ok(svg)
}

/// Draw into a PNG file of `size` with `draw`, then encode and write it (to a temporary
/// file renamed into place: [`crate::atomic::with_temp_path`]).
pub(crate) fn render_png(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> DrawResult,
) -> Result<(), ChartError> {
    ensure_font()?;
    let err = |e: Box<dyn Error>| ChartError::Draw { path: path.display().to_string(), message: e.to_string() };
    crate::atomic::with_temp_path(path, |tmp| -> Result<(), Box<dyn Error>> {
        let root = BitMapBackend::new(tmp, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| -> Box<dyn Error> { e.to_string().into() })?;
        draw(&root)?;
        root.present().map_err(|e| -> Box<dyn Error> { e.to_string().into() })?;
        Ok(())
    })
    .map_err(|e| err(e.into()))?
    .map_err(err)
}

/// A text style in the embedded font.
pub(crate) fn text(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&BLACK)
}

/// Draw the charts' legend box at `pos`: white at `opacity`, grey border, labels of
/// `font` px (most charts: 0.9 and 13).
pub(crate) fn draw_legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
    opacity: f64,
    font: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(opacity))
        .border_style(RGBColor(180, 180, 180))
        .label_font(text(font))
        .draw()
}

/// Draw "nothing to show" in the middle of an area (empty runs still get a picture).
pub(crate) fn draw_empty<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str, what: &str) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, h) = root.dim_in_pixel();
    root.draw(&Text::new(title.to_string(), (20, 15), text(20.0)))?;
    let style = text(16.0).pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Center,
    ));
    root.draw(&Text::new(what.to_string(), (w as i32 / 2, h as i32 / 2), style))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixtures::extreme_run;

    #[test]
    fn hostile_runs_draw_without_panicking() {
        let run = extreme_run();
        let gaps = [GapMark { device: 7, start_ns: u64::MAX - 5, end_ns: 3, cause: "".into() }];
        let dir = tempfile::tempdir().unwrap();
        let p = |f: &str| dir.path().join(f);
        let laid = crate::lanes::LaidOut::new(&run);
        waterfall_svg(&laid, &gaps, &p("w.svg")).unwrap();
        waterfall_png(&laid, &gaps, &p("w.png")).unwrap();
        utilization_svg(&run, &p("u.svg")).unwrap();
        gaps_svg(&gaps, &p("g.svg")).unwrap();
        phases_svg(&run, &p("p.svg")).unwrap();
        memory_svg(&run, &p("m.svg")).unwrap();
        lines_svg("t", "x", "y", &[("inf".into(), vec![(f64::INFINITY, 1.0), (1.0, f64::NAN), (2.0, 3.0)])], &p("l.svg")).unwrap();
        bar_chart_svg("t", "y", &[("nan".into(), f64::NAN), ("neg".into(), -2.0)], &p("b.svg")).unwrap();
    }
}
