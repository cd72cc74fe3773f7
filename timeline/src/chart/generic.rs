//! Two small generic charts for callers outside the analyzer (the simulator's sweeps:
//! s/proof against pw, one line per gw, the recommended point called out and the RAM
//! budgets drawn as lines; a comparison of runs as bars). Same font, colours and error
//! handling as the analyzer's charts. An x axis whose values span two decades or more is
//! drawn logarithmic, and its label says so.

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::si;
use super::{render_svg, text, ChartError, DrawResult};

/// What an axis label gets when the axis is logarithmic.
pub const LOG_SCALE: &str = " (log scale)";

/// An x range of positive values this many times wide (or more) is drawn on a log axis.
const LOG_X_FROM_RATIO: f64 = 100.0;

/// A point called out on a line chart (the recommended configuration): a ring and a label.
#[derive(Clone, Debug, PartialEq)]
pub struct Callout {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// A labelled horizontal reference line (a RAM budget).
#[derive(Clone, Debug, PartialEq)]
pub struct HLine {
    pub y: f64,
    pub label: String,
}

/// A line chart: named series over a shared x axis, with call-outs and reference lines.
#[derive(Clone, Debug, Default)]
pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: &'a [(String, Vec<(f64, f64)>)],
    pub callouts: Vec<Callout>,
    pub hlines: Vec<HLine>,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Padded range of values (a flat series still gets a visible axis).
fn padded(lo: f64, hi: f64, from_zero: bool) -> (f64, f64) {
    let lo = if from_zero { lo.min(0.0) } else { lo };
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        return (lo - 1.0, hi + 1.0);
    }
    let pad = (hi - lo) * 0.06;
    (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

/// Lines with point markers, one per named series (e.g. `gw=2`), over a shared x axis.
/// Non-finite points are skipped.
pub fn lines_svg(title: &str, x_label: &str, y_label: &str, series: &[(String, Vec<(f64, f64)>)], path: &Path) -> Result<(), ChartError> {
    line_chart_svg(&LineChart { title, x_label, y_label, series, ..Default::default() }, path)
}

/// [`lines_svg`] with call-outs and reference lines (which widen the y range to show them).
pub fn line_chart_svg(c: &LineChart<'_>, path: &Path) -> Result<(), ChartError> {
    let ok = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let pts = || c.series.iter().flat_map(|s| s.1.iter()).filter(|p| ok(p));
    let (x0, x1) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let ys = pts().map(|p| p.1).chain(c.hlines.iter().map(|h| h.y)).chain(c.callouts.iter().map(|m| m.y)).filter(|y| y.is_finite());
    let (y0, y1) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
    let log_x = x0 > 0.0 && x1 / x0 >= LOG_X_FROM_RATIO;
    let (y0, y1) = padded(y0, y1, true);
    render_svg(path, (1000, 600), |root| {
        if pts().next().is_none() {
            return super::draw_empty(root, c.title, "no data");
        }
        if log_x {
            // A tenth of a decade of room on each side.
            draw_lines(root, c, (x0 / 1.26..x1 * 1.26).log_scale(), y0..y1, &format!("{}{LOG_SCALE}", c.x_label))
        } else {
            let (x0, x1) = padded(x0, x1, false);
            draw_lines(root, c, x0..x1, y0..y1, c.x_label)
        }
    })
    .map(drop)
}

fn draw_lines<DB: DrawingBackend, X>(root: &DrawingArea<DB, Shift>, c: &LineChart<'_>, x: X, y: Range<f64>, x_desc: &str) -> DrawResult
where
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let (ylo, yhi) = (y.start, y.end);
    let mut chart = ChartBuilder::on(root)
        .caption(c.title, text(18.0))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(c.y_label)
        .label_style(text(12.0))
        .axis_desc_style(text(13.0))
        .light_line_style(RGBColor(240, 240, 240))
        .x_label_formatter(&|v| si(*v))
        .y_label_formatter(&|v| si(*v))
        .draw()?;
    let (xlo, xhi) = {
        let r = chart.x_range();
        (r.start, r.end)
    };
    // Reference lines under the data, labelled at their left end (the legend is on the right).
    for h in c.hlines.iter().filter(|h| h.y.is_finite() && h.y >= ylo && h.y <= yhi) {
        let grey = RGBColor(110, 110, 110);
        chart.draw_series(DashedLineSeries::new([(xlo, h.y), (xhi, h.y)], 6, 4, grey.stroke_width(1)))?;
        let (px, py) = chart.backend_coord(&(xlo, h.y));
        root.draw(&Text::new(h.label.clone(), (px + 6, py - 3), text(11.0).color(&grey).pos(Pos::new(HPos::Left, VPos::Bottom))))?;
    }
    for (i, (name, data)) in c.series.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        let mut d: Vec<(f64, f64)> = data.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        d.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(d.iter().copied(), col.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(3)));
        chart.draw_series(d.iter().map(|&p| Circle::new(p, 4, col.filled())))?;
    }
    for m in c.callouts.iter().filter(|m| m.x.is_finite() && m.y.is_finite()) {
        chart.draw_series([Circle::new((m.x, m.y), 9, BLACK.stroke_width(2))])?;
        let (px, py) = chart.backend_coord(&(m.x, m.y));
        let (w, _) = root.dim_in_pixel();
        // Left of the point when it sits in the right half, so the label stays inside.
        let (dx, h) = if px > w as i32 / 2 { (-14, HPos::Right) } else { (14, HPos::Left) };
        root.draw(&Text::new(m.label.clone(), (px + dx, py - 14), text(13.0).pos(Pos::new(h, VPos::Bottom))))?;
    }
    super::draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 0.9, 13.0)?;
    Ok(())
}

/// Vertical bars, one per label, with the value printed above each.
pub fn bar_chart_svg(title: &str, y_label: &str, bars: &[(String, f64)], path: &Path) -> Result<(), ChartError> {
    let n = bars.len();
    let hi = bars.iter().map(|b| b.1).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let lo = bars.iter().map(|b| b.1).filter(|v| v.is_finite()).fold(0.0, f64::min);
    let (lo, hi) = padded(lo, hi.max(lo + f64::MIN_POSITIVE), true);
    let width = (160 + 90 * n as u32).max(800);
    render_svg(path, (width, 560), |root| {
        if n == 0 {
            return super::draw_empty(root, title, "no data");
        }
        let mut chart = ChartBuilder::on(root)
            .caption(title, text(18.0))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(65)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, lo..hi * 1.08)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(y_label)
            .label_style(text(12.0))
            .axis_desc_style(text(13.0))
            .light_line_style(RGBColor(240, 240, 240))
            .y_label_formatter(&|v| si(*v))
            .draw()?;
        for (i, (label, v)) in bars.iter().enumerate() {
            let x = i as f64;
            let c = PALETTE[i % PALETTE.len()];
            if v.is_finite() {
                chart.draw_series([Rectangle::new([(x - 0.35, 0.0), (x + 0.35, *v)], c.filled())])?;
                let (px, py) = chart.backend_coord(&(x, *v));
                root.draw(&Text::new(si(*v), (px, py - 4), text(12.0).pos(Pos::new(HPos::Center, VPos::Bottom))))?;
            }
            let (px, py) = chart.backend_coord(&(x, lo));
            root.draw(&Text::new(label.clone(), (px, py + 8), text(12.0).pos(Pos::new(HPos::Center, VPos::Top))))?;
        }
        Ok(())
    })
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_bars_render() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.svg");
        let series = vec![
            ("gw=1".to_string(), vec![(10.0, 44.0), (12.0, 43.5), (20.0, 44.9)]),
            ("gw=2".to_string(), vec![(10.0, 37.4), (20.0, f64::NAN), (30.0, 60.4)]),
        ];
        lines_svg("s/proof vs pw", "pw", "s/proof", &series, &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("gw=2") && s.contains("s/proof vs pw"));
        lines_svg("empty", "x", "y", &[], &p).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("no data"));
        let flat = vec![("one".to_string(), vec![(1.0, 5.0)])];
        lines_svg("flat", "x", "y", &flat, &p).unwrap();
        assert!(!std::fs::read_to_string(&p).unwrap().contains(LOG_SCALE));

        let b = dir.path().join("b.svg");
        bar_chart_svg("throughput", "s/proof", &[("baseline".into(), 360.0), ("phase 8".into(), 37.4)], &b).unwrap();
        let s = std::fs::read_to_string(&b).unwrap();
        assert!(s.contains("phase 8") && s.contains("37.4"));
        bar_chart_svg("none", "y", &[], &b).unwrap();

        // Call-outs and reference lines are drawn and labelled; x over 3 decades goes log.
        let wide = vec![("gw=1".to_string(), vec![(1.0, 40.0), (10.0, 20.0), (1000.0, 30.0)])];
        let c = LineChart {
            title: "t",
            x_label: "pw",
            y_label: "s",
            series: &wide,
            callouts: vec![Callout { x: 10.0, y: 20.0, label: "recommended: pw=10".into() }],
            hlines: vec![HLine { y: 35.0, label: "budget 35".into() }, HLine { y: f64::NAN, label: "nan".into() }],
        };
        line_chart_svg(&c, &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("pw (log scale)") && s.contains("recommended: pw=10") && s.contains("budget 35"), "{s}");
        assert!(!s.contains(">nan"));
        if let Ok(d) = std::env::var("PROOFSCOPE_CHART_DIR") {
            lines_svg("s/proof vs pw", "pw", "s/proof", &series, &Path::new(&d).join("lines.svg")).unwrap();
        }
    }
}
