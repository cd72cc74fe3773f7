//! Box plots of span durations per kind, on a log axis: synthesis (tens of seconds)
//! and kernels (tens of milliseconds) on one picture, each with its spread. Boxes are
//! the quartiles, the bar the median, whiskers reach p5 and p95, and the extremes are
//! dots; open spans are left out (they have no duration).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{duration_ms, kind_color, quantile};
use super::{render_svg, text, ChartError};
use crate::event::{Run, SpanKind};

struct BoxStats {
    kind: SpanKind,
    n: usize,
    min: f64,
    p5: f64,
    q1: f64,
    median: f64,
    q3: f64,
    p95: f64,
    max: f64,
}

/// Most boxes one chart draws: the most frequent kinds (a log with thousands of unknown
/// kinds would otherwise ask for a canvas kilometres wide).
const MAX_BOXES: usize = 60;

fn stats(run: &Run) -> Vec<BoxStats> {
    // One pass, grouped by kind (not one scan of the run per kind).
    let mut by_kind: std::collections::BTreeMap<&SpanKind, Vec<f64>> = Default::default();
    for s in run.spans.iter().filter(|s| !s.is_open()) {
        by_kind.entry(&s.kind).or_default().push(s.duration_ns() as f64 / 1e6);
    }
    let mut groups: Vec<(&SpanKind, Vec<f64>)> = by_kind.into_iter().collect();
    if groups.len() > MAX_BOXES {
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        groups.truncate(MAX_BOXES);
        groups.sort_by(|a, b| a.0.cmp(b.0));
    }
    groups
        .into_iter()
        .map(|(kind, mut v)| {
            v.sort_by(f64::total_cmp);
            BoxStats {
                n: v.len(),
                min: v[0],
                p5: quantile(&v, 0.05),
                q1: quantile(&v, 0.25),
                median: quantile(&v, 0.5),
                q3: quantile(&v, 0.75),
                p95: quantile(&v, 0.95),
                max: v[v.len() - 1],
                kind: kind.clone(),
            }
        })
        .collect()
}

/// Draw the per-kind duration box plots of `run` as SVG.
pub fn phases_svg(run: &Run, path: &Path) -> Result<String, ChartError> {
    let boxes = stats(run);
    let n = boxes.len();
    let title = "Span durations per kind (box: quartiles, bar: median, whiskers: p5–p95, dots: min/max)";
    let width = (140 + 115 * n as u32).max(1000);
    // Durations of zero are drawn at the floor of the log axis.
    let lo = boxes.iter().map(|b| b.min).filter(|&x| x > 0.0).fold(f64::INFINITY, f64::min);
    let hi = boxes.iter().map(|b| b.max).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > 0.0 { (lo / 2.0, hi * 2.0) } else { (1e-3, 1.0) };
    let floor = |v: f64| v.max(lo);
    render_svg(path, (width, 600), |root| {
        if boxes.is_empty() {
            return super::draw_empty(root, title, "no closed spans");
        }
        let mut chart = ChartBuilder::on(root)
            .caption(title, text(17.0))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(75)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("duration (log scale)")
            .label_style(text(12.0))
            .axis_desc_style(text(13.0))
            .light_line_style(RGBColor(240, 240, 240))
            .y_label_formatter(&|v| duration_ms(*v))
            .draw()?;
        for (i, b) in boxes.iter().enumerate() {
            let x = i as f64;
            let c = kind_color(&b.kind);
            let (h, w) = (0.32, 0.12);
            chart.draw_series([
                PathElement::new(vec![(x, floor(b.p5)), (x, floor(b.q1))], BLACK.stroke_width(1)),
                PathElement::new(vec![(x, floor(b.q3)), (x, floor(b.p95))], BLACK.stroke_width(1)),
                PathElement::new(vec![(x - w, floor(b.p5)), (x + w, floor(b.p5))], BLACK.stroke_width(1)),
                PathElement::new(vec![(x - w, floor(b.p95)), (x + w, floor(b.p95))], BLACK.stroke_width(1)),
            ])?;
            chart.draw_series([
                Rectangle::new([(x - h, floor(b.q1)), (x + h, floor(b.q3))], c.mix(0.75).filled()),
                Rectangle::new([(x - h, floor(b.q1)), (x + h, floor(b.q3))], BLACK.stroke_width(1)),
            ])?;
            chart.draw_series([PathElement::new(vec![(x - h, floor(b.median)), (x + h, floor(b.median))], BLACK.stroke_width(3))])?;
            chart.draw_series([Circle::new((x, floor(b.min)), 3, BLACK.filled()), Circle::new((x, floor(b.max)), 3, BLACK.filled())])?;
            // Category label and count under the axis.
            let (px, py) = chart.backend_coord(&(x, lo));
            let style = text(12.0).pos(Pos::new(HPos::Center, VPos::Top));
            root.draw(&Text::new(b.kind.as_str().to_string(), (px, py + 8), style.clone()))?;
            root.draw(&Text::new(format!("n={} · p50 {}", b.n, duration_ms(b.median)), (px, py + 24), text(10.0).pos(Pos::new(HPos::Center, VPos::Top))))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Span;
    use crate::export::fixtures::{sample_run, synthetic};

    #[test]
    fn stats_per_kind_skip_open_spans() {
        let mut r = Run::default();
        for d in [10u64, 20, 30, 40, 50] {
            r.spans.push(Span::new(SpanKind::Ntt, 0, d * 1_000_000));
        }
        let mut open = Span::new(SpanKind::Gpu, 0, 0);
        open.end_ns = None;
        r.spans.push(open);
        let s = stats(&r);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].n, s[0].min, s[0].median, s[0].max, s[0].q1, s[0].q3), (5, 10.0, 30.0, 50.0, 20.0, 40.0));
    }

    #[test]
    fn renders_sample_synthetic_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.svg");
        phases_svg(&sample_run(), &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("synthesis") && s.contains("gpu_pickup") && s.contains("n=30"), "labels");
        phases_svg(&synthetic(3, 10, 1, true), &p).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("tail_msm"));
        phases_svg(&Run::default(), &p).unwrap();
        if let Ok(d) = std::env::var("PROOFSCOPE_CHART_DIR") {
            phases_svg(&synthetic(3, 10, 1, true), &Path::new(&d).join("phases.svg")).unwrap();
            phases_svg(&sample_run(), &Path::new(&d).join("phases-sample.svg")).unwrap();
        }
    }
}
