//! Parity between a measured and a simulated run of the same configuration: the same
//! figures computed the same way from both ([`measure`] works on any [`Run`]), the error
//! of the prediction per metric, and a parity plot (predicted against measured on log
//! axes, the y = x line and a ±5% band).

use serde::{Deserialize, Serialize};
use timeline::analysis::utilization::{busy_intervals, total_ns};
use timeline::{Run, SpanKind};

/// Figures of a run, from its spans and counters alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub proofs: usize,
    pub total_s_per_proof: Option<f64>,
    pub steady_s_per_proof: Option<f64>,
    /// Steady state from partition completions: (last − first partition end) ÷ (n − 1) ×
    /// partitions per proof. With few proofs whose partitions interleave, the order in
    /// which proofs complete says more about scheduling than about throughput; partitions
    /// give n × partitions samples of the same rate.
    pub partition_rate_s_per_proof: Option<f64>,
    pub latency_mean_s: Option<f64>,
    /// Union of `gpu` spans over the first-start..last-end window of the busiest device.
    pub gpu_union_util: Option<f64>,
    pub synth_mean_s: Option<f64>,
    pub gpu_call_mean_s: Option<f64>,
    pub queue_wait_mean_s: Option<f64>,
    pub peak_ram_gib: Option<f64>,
}

fn mean_dur_s(run: &Run, kind: &SpanKind) -> Option<f64> {
    let v: Vec<u64> = run.spans_of(kind).filter_map(|s| s.end_ns.map(|e| e.saturating_sub(s.start_ns))).collect();
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e9)
    }
}

/// Compute [`Measured`] from a run: a job completes at the end of its last span and
/// arrives at its first span's start; s/proof uses the run epoch (t = 0) as the start,
/// as the simulator does.
pub fn measure(run: &Run) -> Measured {
    use std::collections::HashMap;
    let mut jobs: HashMap<&str, (u64, u64)> = HashMap::new();
    for s in &run.spans {
        if let (Some(j), Some(e)) = (&s.job, s.end_ns) {
            let x = jobs.entry(j.as_str()).or_insert((s.start_ns, e));
            x.0 = x.0.min(s.start_ns);
            x.1 = x.1.max(e);
        }
    }
    let mut parts: HashMap<(&str, u32), u64> = HashMap::new();
    for s in &run.spans {
        if let (Some(j), Some(p), Some(e)) = (&s.job, s.partition, s.end_ns) {
            let x = parts.entry((j.as_str(), p)).or_insert(e);
            *x = (*x).max(e);
        }
    }
    let mut part_ends: Vec<u64> = parts.values().copied().collect();
    part_ends.sort_unstable();
    let mut done: Vec<u64> = jobs.values().map(|x| x.1).collect();
    done.sort_unstable();
    let n = done.len();
    let secs = |ns: u64| ns as f64 / 1e9;
    let total = done.last().map(|&e| secs(e) / n as f64);
    let steady = if n >= 2 { Some(secs(done[n - 1] - done[0]) / (n - 1) as f64) } else { total };
    let np = part_ends.len();
    let partition_rate = (np >= 2 && n > 0).then(|| secs(part_ends[np - 1] - part_ends[0]) / (np - 1) as f64 * np as f64 / n as f64);
    let latency = if n > 0 { Some(jobs.values().map(|x| secs(x.1 - x.0)).sum::<f64>() / n as f64) } else { None };
    let mut util: Option<f64> = None;
    for d in run.devices() {
        let iv = busy_intervals(run.spans_of(&SpanKind::Gpu).filter(|s| s.device_or_0() == d));
        if let (Some(f), Some(l)) = (iv.first(), iv.last()) {
            let u = total_ns(&iv) as f64 / (l.1 - f.0).max(1) as f64;
            util = Some(util.map_or(u, |x: f64| x.max(u)));
        }
    }
    let peak = run.counters.iter().filter(|c| c.name == "rss_bytes").map(|c| c.value / (1u64 << 30) as f64).fold(None, |a: Option<f64>, v| Some(a.map_or(v, |x| x.max(v))));
    Measured {
        proofs: n,
        total_s_per_proof: total,
        steady_s_per_proof: steady,
        partition_rate_s_per_proof: partition_rate,
        latency_mean_s: latency,
        gpu_union_util: util,
        synth_mean_s: mean_dur_s(run, &SpanKind::Synthesis),
        gpu_call_mean_s: mean_dur_s(run, &SpanKind::Gpu),
        queue_wait_mean_s: mean_dur_s(run, &SpanKind::GpuQueue),
        peak_ram_gib: peak,
    }
}

/// One metric of the parity report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricParity {
    pub metric: String,
    pub unit: String,
    pub measured: f64,
    pub predicted: f64,
    /// (predicted − measured) / measured, percent.
    pub error_pct: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Parity {
    pub metrics: Vec<MetricParity>,
    /// Metrics whose error is within ±5%.
    pub within_5pct: usize,
    pub max_abs_error_pct: f64,
}

/// Compare a measured run with a simulated one (both measured the same way).
pub fn compare(measured: &Run, simulated: &Run) -> Parity {
    let m = measure(measured);
    let p = measure(simulated);
    let mut metrics = Vec::new();
    let mut add = |name: &str, unit: &str, a: Option<f64>, b: Option<f64>| {
        if let (Some(a), Some(b)) = (a, b) {
            if a.abs() > 1e-12 {
                metrics.push(MetricParity { metric: name.into(), unit: unit.into(), measured: a, predicted: b, error_pct: 100.0 * (b - a) / a });
            }
        }
    };
    add("total s/proof", "s", m.total_s_per_proof, p.total_s_per_proof);
    add("steady s/proof", "s", m.steady_s_per_proof, p.steady_s_per_proof);
    add("steady s/proof (partition rate)", "s", m.partition_rate_s_per_proof, p.partition_rate_s_per_proof);
    add("latency (mean)", "s", m.latency_mean_s, p.latency_mean_s);
    add("GPU union utilisation", "%", m.gpu_union_util.map(|x| 100.0 * x), p.gpu_union_util.map(|x| 100.0 * x));
    add("synthesis (mean)", "s", m.synth_mean_s, p.synth_mean_s);
    add("GPU call (mean)", "s", m.gpu_call_mean_s, p.gpu_call_mean_s);
    add("GPU queue wait (mean)", "s", m.queue_wait_mean_s, p.queue_wait_mean_s);
    add("peak RAM", "GiB", m.peak_ram_gib, p.peak_ram_gib);
    let within = metrics.iter().filter(|x| x.error_pct.abs() <= 5.0).count();
    let max = metrics.iter().map(|x| x.error_pct.abs()).fold(0.0, f64::max);
    Parity { metrics, within_5pct: within, max_abs_error_pct: max }
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
        let root = SVGBackend::new(path, (800, 760)).into_drawing_area();
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
            .x_desc("measured")
            .y_desc("predicted")
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
        root.present().map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeline::{RunMeta, Span};

    #[test]
    fn partition_rate_is_not_fooled_by_interleaved_proofs() {
        // Partitions end at 1, 2, 3, 4 s; proof A owns the first and the last, so the two
        // proofs end 1 s apart although a partition ends every second (2 s per proof).
        let mut run = Run::new(RunMeta::new("test"));
        let s = 1_000_000_000u64;
        for (job, p, end) in [("A", 0, 1), ("B", 0, 2), ("B", 1, 3), ("A", 1, 4)] {
            run.spans.push(Span::new(SpanKind::Synthesis, 0, end * s).job(job).partition(p));
        }
        let m = measure(&run);
        assert!((m.steady_s_per_proof.unwrap() - 1.0).abs() < 1e-9);
        assert!((m.partition_rate_s_per_proof.unwrap() - 2.0).abs() < 1e-9, "{:?}", m.partition_rate_s_per_proof);
    }
}
