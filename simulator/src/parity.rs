//! Parity between a measured and a simulated run of the same configuration: both timelines
//! go through the analyzer's one [`summarize`], so every figure here ("steady s/proof",
//! "GPU utilisation", ...) is the number `summary.json` gives for that run — the project
//! computes each metric once. This module only pairs the two summaries' figures, computes
//! the error of the prediction per metric, and draws the parity plot (predicted against
//! measured on log axes, the y = x line and a ±5% band).

use serde::{Deserialize, Serialize};
use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::Run;

/// One metric of the parity report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricParity {
    /// Stable key: the `summary.json` field the figure comes from (e.g.
    /// `throughput.partition_rate_s_per_proof`); what scripts and `campaign score` key on.
    /// Empty in reports written before it existed: [`crate::campaign::metric_key`] then maps
    /// the label through [`METRICS`].
    #[serde(default)]
    pub key: String,
    /// Display label.
    pub metric: String,
    pub unit: String,
    pub measured: f64,
    pub predicted: f64,
    /// (predicted − measured) / measured, percent.
    pub error_pct: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Parity {
    pub metrics: Vec<MetricParity>,
    /// Metrics whose error is within ±5%.
    pub within_5pct: usize,
    pub max_abs_error_pct: f64,
}

/// The metrics of a parity report, in report order: key (a `summary.json` path), label,
/// unit and how to read it from a [`Summary`].
#[allow(clippy::type_complexity)]
pub const METRICS: [(&str, &str, &str, fn(&Summary) -> Option<f64>); 9] = [
    ("throughput.total_s_per_proof", "total s/proof", "s", |s| s.throughput.total_s_per_proof),
    ("throughput.steady_state_s_per_proof", "steady s/proof", "s", |s| s.throughput.steady_state_s_per_proof),
    ("throughput.partition_rate_s_per_proof", "steady s/proof (partition rate)", "s", |s| s.throughput.partition_rate_s_per_proof),
    ("throughput.latency_mean_s", "latency (mean)", "s", |s| s.throughput.latency_mean_s),
    ("utilization.gpu_utilization", "GPU union utilisation", "%", |s| s.utilization.gpu_utilization.map(|u| 100.0 * u)),
    ("phases.synthesis.mean_ms", "synthesis (mean)", "s", |s| phase_mean_s(s, timeline::event::kind::SYNTHESIS)),
    ("phases.gpu.mean_ms", "GPU call (mean)", "s", |s| phase_mean_s(s, timeline::event::kind::GPU)),
    ("phases.gpu_queue.mean_ms", "GPU queue wait (mean)", "s", |s| phase_mean_s(s, timeline::event::kind::GPU_QUEUE)),
    ("memory.peak_rss_gib", "peak RAM", "GiB", |s| s.memory.peak_rss_gib),
];

fn phase_mean_s(s: &Summary, kind: &str) -> Option<f64> {
    s.phases.kind(kind).filter(|r| r.count > 0).map(|r| r.mean_ms / 1e3)
}

/// Compare the summary of a measured run with the summary of a simulated one.
pub fn compare(measured: &Summary, simulated: &Summary) -> Parity {
    compare_with(measured, |key| METRICS.iter().find(|m| m.0 == key).and_then(|m| (m.3)(simulated)))
}

/// Compare the summary of a measured run with predicted figures given by key (a
/// pre-registered prediction's `metrics`, [`crate::prereg`]): the same report as
/// [`compare`] with those figures as the predicted ones.
pub fn compare_registered(measured: &Summary, predicted: &std::collections::BTreeMap<String, f64>) -> Parity {
    compare_with(measured, |key| predicted.get(key).copied())
}

fn compare_with(measured: &Summary, predicted: impl Fn(&str) -> Option<f64>) -> Parity {
    let mut metrics = Vec::new();
    for (key, name, unit, get) in METRICS {
        if let (Some(a), Some(b)) = (get(measured), predicted(key)) {
            if a.abs() > 1e-12 && a.is_finite() && b.is_finite() {
                metrics.push(MetricParity { key: key.into(), metric: name.into(), unit: unit.into(), measured: a, predicted: b, error_pct: 100.0 * (b - a) / a });
            }
        }
    }
    let within = metrics.iter().filter(|x| x.error_pct.abs() <= 5.0).count();
    let max = metrics.iter().map(|x| x.error_pct.abs()).fold(0.0, f64::max);
    Parity { metrics, within_5pct: within, max_abs_error_pct: max }
}

/// [`compare`] on two runs, each summarised with the default analysis options.
pub fn compare_runs(measured: &Run, simulated: &Run) -> Parity {
    let opts = AnalyzeOptions::default();
    compare(&summarize(measured, &opts), &summarize(simulated, &opts))
}

impl Parity {
    pub fn markdown(&self) -> String {
        let mut s = String::from("| metric | measured | predicted | error |\n|---|---:|---:|---:|\n");
        for m in &self.metrics {
            s.push_str(&format!("| {} | {:.3} {} | {:.3} {} | {:+.1}% |\n", m.metric, m.measured, m.unit, m.predicted, m.unit, m.error_pct));
        }
        s.push_str(&format!("\n{} of {} metrics within ±5%; largest error {:.1}%.\n", self.within_5pct, self.metrics.len(), self.max_abs_error_pct));
        s
    }
}

#[cfg(feature = "analysis")]
pub mod plot {
    //! The parity plot (SVG).
    use std::path::Path;

    use plotters::prelude::*;

    use super::Parity;

    /// Predicted vs measured on log axes, y = x and a ±5% band, one labelled point per metric.
    pub fn parity_svg(p: &Parity, path: &Path) -> anyhow::Result<()> {
        timeline::chart::ensure_font()?;
        let font = timeline::chart::FAMILY;
        let vals: Vec<f64> = p.metrics.iter().flat_map(|m| [m.measured, m.predicted]).filter(|v| *v > 0.0 && v.is_finite()).collect();
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min).min(1.0) * 0.7;
        // Room on the right for the labels.
        let hi = vals.iter().copied().fold(0.0, f64::max).max(lo * 10.0) * 3.0;
        // Drawn in memory, written whole or not at all (timeline::atomic).
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (800, 760)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(format!("parity: predicted vs measured ({} of {} within ±5%)", p.within_5pct, p.metrics.len()), (font, 18))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(60)
                .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            chart
                .configure_mesh()
                .x_desc(format!("measured{}", timeline::chart::LOG_SCALE))
                .y_desc(format!("predicted{}", timeline::chart::LOG_SCALE))
                .label_style((font, 12))
                .axis_desc_style((font, 13))
                .draw()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let steps = 100;
            let xs: Vec<f64> = (0..=steps).map(|i| lo * (hi / lo).powf(i as f64 / steps as f64)).collect();
            let band: Vec<(f64, f64)> = xs.iter().map(|&x| (x, x * 1.05)).chain(xs.iter().rev().map(|&x| (x, x * 0.95))).collect();
            chart.draw_series(std::iter::once(Polygon::new(band, RGBColor(44, 160, 44).mix(0.18)))).map_err(|e| anyhow::anyhow!("{e}"))?.label("±5%");
            chart.draw_series(LineSeries::new(xs.iter().map(|&x| (x, x)), BLACK.stroke_width(1))).map_err(|e| anyhow::anyhow!("{e}"))?.label("y = x");
            for m in &p.metrics {
                if m.measured <= 0.0 || m.predicted <= 0.0 {
                    continue;
                }
                let color = if m.error_pct.abs() <= 5.0 { RGBColor(31, 119, 180) } else { RGBColor(214, 39, 40) };
                chart
                    .draw_series(std::iter::once(Circle::new((m.measured, m.predicted), 5, color.filled())))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{} ({:+.1}%)", m.metric, m.error_pct),
                        (m.measured * 1.06, m.predicted),
                        (font, 12).into_font().color(&BLACK),
                    )))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            root.present().map_err(|e| anyhow::anyhow!("cannot draw {}: {e}", path.display()))?;
        }
        timeline::atomic::write_atomic(path, svg.as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeline::{RunMeta, Span, SpanKind};

    #[cfg(feature = "analysis")]
    #[test]
    fn the_parity_plot_says_its_axes_are_logarithmic() {
        let mut run = Run::new(RunMeta::new("test"));
        let s = 1_000_000_000u64;
        for (job, end) in [("A", 1), ("B", 2), ("C", 3)] {
            run.spans.push(Span::new(SpanKind::Synthesis, 0, end * s / 2).job(job).partition(0));
            run.spans.push(Span::new(SpanKind::Gpu, end * s / 2, end * s).job(job).partition(0).worker(0));
        }
        run.normalize();
        let sum = summarize(&run, &AnalyzeOptions::default());
        let p = std::env::temp_dir().join(format!("parity-log-{}.svg", std::process::id()));
        plot::parity_svg(&compare(&sum, &sum), &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        std::fs::remove_file(&p).ok();
        assert!(svg.contains("measured (log scale)") && svg.contains("predicted (log scale)"), "{svg}");
    }

    #[test]
    fn every_figure_is_the_summary_s_own() {
        // Partitions end at 1, 2, 3, 4 s; proof A owns the first and the last.
        let mut run = Run::new(RunMeta::new("test"));
        let s = 1_000_000_000u64;
        for (job, p, end) in [("A", 0, 1), ("B", 0, 2), ("B", 1, 3), ("A", 1, 4)] {
            run.spans.push(Span::new(SpanKind::Synthesis, 0, end * s / 2).job(job).partition(p));
            run.spans.push(Span::new(SpanKind::Gpu, end * s / 2, end * s).job(job).partition(p).worker(0));
        }
        run.normalize();
        let sum = summarize(&run, &AnalyzeOptions::default());
        let par = compare(&sum, &sum);
        for m in &par.metrics {
            assert_eq!(m.error_pct, 0.0, "{}", m.key);
        }
        let get = |k: &str| par.metrics.iter().find(|m| m.key == k).map(|m| m.measured);
        assert_eq!(get("throughput.steady_state_s_per_proof"), sum.throughput.steady_state_s_per_proof);
        assert_eq!(get("throughput.partition_rate_s_per_proof"), Some(2.0));
        assert_eq!(get("throughput.steady_state_s_per_proof"), Some(1.0));
    }
}
