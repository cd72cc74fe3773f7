//! Host memory over time against the RAM budget: the process's resident set (`rss_bytes`,
//! sampled), the bytes reserved from the engine's budget (`ram_reserved_bytes`, a step at
//! every reservation and release) and the budget itself (the run meta's
//! `extra.ram_budget_bytes`) as a horizontal line; spans of kind `ram_wait` (syntheses
//! waiting for RAM) are shaded under the curves. What a reader looks at to see whether
//! memory bound the run and whether the estimate of a partition's working set held.

use std::path::Path;

use plotters::prelude::*;

use super::style::si;
use super::{render_svg, text, ChartError};
use crate::event::{counters, extra, Run, SpanKind};

const GIB: f64 = (1u64 << 30) as f64;

/// Draw the memory chart of `run` as SVG ("no memory counters" when there are none).
pub fn memory_svg(run: &Run, path: &Path) -> Result<String, ChartError> {
    let series = |name: &str| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = run.counters.iter().filter(|c| c.name == name && c.value.is_finite()).map(|c| (c.t_ns as f64 / 1e9, c.value / GIB)).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let rss = series(counters::RSS_BYTES);
    let reserved = series(counters::RAM_RESERVED_BYTES);
    let budget = run.meta.extra.get(extra::RAM_BUDGET_BYTES).and_then(|v| v.as_f64()).filter(|b| b.is_finite() && *b > 0.0).map(|b| b / GIB);
    let end_s = run.end_ns().max(run.counters.iter().map(|c| c.t_ns).max().unwrap_or(0)) as f64 / 1e9;
    let end_s = if end_s.is_finite() && end_s > 0.0 { end_s } else { 1.0 };
    let waits: Vec<(f64, f64)> = run.spans_of(&SpanKind::RamWait).filter_map(|s| s.end_ns.map(|e| (s.start_ns as f64 / 1e9, e as f64 / 1e9))).collect();
    let title = "Host memory: RSS and reserved bytes against the RAM budget";
    render_svg(path, (1100, 480), |root| {
        if rss.is_empty() && reserved.is_empty() {
            return super::draw_empty(root, title, "no memory counters (rss_bytes, ram_reserved_bytes) in this run");
        }
        let top = rss.iter().chain(&reserved).map(|p| p.1).fold(budget.unwrap_or(0.0), f64::max).max(1e-6) * 1.1;
        let mut chart = ChartBuilder::on(root)
            .caption(title, text(18.0))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d(0.0..end_s, 0.0..top)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("GiB")
            .label_style(text(12.0))
            .axis_desc_style(text(13.0))
            .light_line_style(RGBColor(240, 240, 240))
            .x_label_formatter(&|v| si(*v))
            .y_label_formatter(&|v| si(*v))
            .draw()?;
        let wait_c = super::style::kind_color(&SpanKind::RamWait);
        if !waits.is_empty() {
            chart
                .draw_series(waits.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, top * 0.03)], wait_c.mix(0.5).filled())))?
                .label("a synthesis waiting for RAM (ram_wait)")
                .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 18, y + 4)], wait_c.mix(0.5).filled()));
        }
        let rss_c = RGBColor(31, 119, 180);
        if !rss.is_empty() {
            chart
                .draw_series(LineSeries::new(rss.iter().copied(), rss_c.stroke_width(2)))?
                .label("RSS (rss_bytes)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], rss_c.stroke_width(3)));
        }
        let res_c = RGBColor(255, 127, 14);
        if !reserved.is_empty() {
            // A step function: each value holds until the next change.
            let mut steps: Vec<(f64, f64)> = Vec::with_capacity(reserved.len() * 2 + 1);
            for (i, &(t, v)) in reserved.iter().enumerate() {
                if i > 0 {
                    steps.push((t, reserved[i - 1].1));
                }
                steps.push((t, v));
            }
            if let Some(&(_, v)) = reserved.last() {
                steps.push((end_s, v));
            }
            chart
                .draw_series(LineSeries::new(steps, res_c.stroke_width(2)))?
                .label("reserved from the budget (ram_reserved_bytes)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], res_c.stroke_width(3)));
        }
        if let Some(b) = budget {
            let c = RGBColor(214, 39, 40);
            chart
                .draw_series(LineSeries::new([(0.0, b), (end_s, b)], c.stroke_width(2)))?
                .label(format!("RAM budget ({b:.2} GiB)"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
        }
        super::draw_legend(&mut chart, SeriesLabelPosition::LowerRight, 0.9, 13.0)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Counter, RunMeta, Span};

    #[test]
    fn draws_rss_reserved_budget_and_waits() {
        let mut run = Run::new(RunMeta::new("t"));
        run.meta.extra.insert(extra::RAM_BUDGET_BYTES.into(), (4u64 << 30).into());
        let c = |name: &str, t: u64, g: f64| Counter { name: name.into(), t_ns: t * 1_000_000_000, value: g * GIB, device: None };
        run.counters = vec![c("rss_bytes", 0, 1.0), c("rss_bytes", 1, 3.0), c("ram_reserved_bytes", 0, 1.5), c("ram_reserved_bytes", 1, 3.5), c("rss_bytes", 2, f64::NAN)];
        run.spans.push(Span::new(SpanKind::RamWait, 500_000_000, 1_000_000_000).job("a").partition(1).worker(1));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.svg");
        memory_svg(&run, &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("RAM budget (4.00 GiB)") && s.contains("ram_wait") && s.contains("RSS"), "legend");
        memory_svg(&Run::default(), &p).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("no memory counters"));
        if let Ok(d) = std::env::var("PROOFSCOPE_CHART_DIR") {
            memory_svg(&run, &Path::new(&d).join("memory.svg")).unwrap();
        }
    }
}
