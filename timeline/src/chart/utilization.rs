//! Utilisation over time: for each device, the busy fraction of fixed time windows,
//! (at least two median GPU calls long) computed on the union of its `gpu` spans (cuzk's "TIMELINE util") and, when the
//! producer recorded them, of its device-work spans (true kernel/copy utilisation).
//! NVML's `gpu_util_pct` is overlaid on the same percent axis; every other counter
//! (memory, power, clocks, queue depth, RSS) gets a panel of its own below.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{duration_ms, si};
use crate::stats::merge_intervals as union;
use super::{render_svg, text, ChartError, DrawResult};
use crate::event::{counters, Run, SpanKind};

/// Number of windows across the run (fewer when GPU calls are long).
const WINDOWS: usize = 120;
const PANEL_H: u32 = 230;
const MAIN_H: u32 = 420;
const MAX_COUNTER_PANELS: usize = 6;

/// Busy fraction of each window `[k·w, (k+1)·w)` of `n` windows under the (merged) `busy`.
fn windowed(busy: &[(u64, u64)], w: u64, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n];
    for &(a, b) in busy {
        if n == 0 || w == 0 {
            break;
        }
        let (k0, k1) = ((a / w) as usize, ((b.saturating_sub(1)) / w) as usize);
        for (k, slot) in out.iter_mut().enumerate().take(k1.min(n - 1) + 1).skip(k0) {
            let (ws, we) = ((k as u64).saturating_mul(w), (k as u64).saturating_add(1).saturating_mul(w));
            *slot += b.min(we).saturating_sub(a.max(ws)) as f64 / w as f64;
        }
    }
    out
}

type Series = (String, RGBColor, Vec<(f64, f64)>);

/// Device palette: one hue per device, darker for device work, lighter for NVML.
fn device_color(d: u32) -> RGBColor {
    const P: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(23, 190, 207),
    ];
    P[d as usize % P.len()]
}

/// Draw the utilisation chart of `run` as SVG.
pub fn utilization_svg(run: &Run, path: &Path) -> Result<String, ChartError> {
    let end = run.end_ns().max(run.counters.last().map_or(0, |c| c.t_ns)).max(1);
    // Windows: about WINDOWS across the run, but never shorter than two median GPU calls,
    // or the fraction only shows the rhythm of single calls.
    let mut gpu_ns: Vec<u64> = run.spans_of(&SpanKind::Gpu).filter(|s| !s.is_open()).map(|s| s.duration_ns()).collect();
    gpu_ns.sort_unstable();
    let w = end.div_ceil(WINDOWS as u64).max(gpu_ns.get(gpu_ns.len() / 2).copied().unwrap_or(0).saturating_mul(2)).max(1);
    let nw = end.div_ceil(w) as usize;
    let t_end = w as f64 * nw as f64 / 1e9;
    // Each window as a flat step from its start to its end.
    let steps = |v: Vec<f64>| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .flat_map(|(k, f)| [(k as f64 * w as f64 / 1e9, f * 100.0), ((k + 1) as f64 * w as f64 / 1e9, f * 100.0)])
            .collect()
    };

    let mut main: Vec<Series> = Vec::new();
    for d in run.devices() {
        let closed = |pred: &dyn Fn(&SpanKind) -> bool| {
            union(run.spans.iter().filter(|s| pred(&s.kind) && s.device_or_0() == d).filter_map(|s| s.device_interval()).collect())
        };
        let c = device_color(d);
        let gpu = closed(&|k| *k == SpanKind::Gpu);
        if !gpu.is_empty() {
            main.push((format!("gpu{d}: gpu calls (TIMELINE util)"), c, steps(windowed(&gpu, w, nw))));
        }
        let work = closed(&|k| k.is_device_work());
        if !work.is_empty() {
            main.push((format!("gpu{d}: device work (kernel util)"), RGBColor(c.0 / 2, c.1 / 2, c.2 / 2), steps(windowed(&work, w, nw))));
        }
    }
    // NVML utilisation on the main panel; other counters by name, one series per device.
    let mut panels: BTreeMap<&str, BTreeMap<Option<u32>, Vec<(f64, f64)>>> = BTreeMap::new();
    for c in run.counters.iter().filter(|c| c.value.is_finite()) {
        panels.entry(c.name.as_str()).or_default().entry(c.device).or_default().push((c.t_ns as f64 / 1e9, c.value));
    }
    if let Some(util) = panels.remove(counters::GPU_UTIL_PCT) {
        for (d, pts) in util {
            let c = super::style::lighten(device_color(d.unwrap_or(0)), 0.45);
            main.push((format!("gpu{}: NVML gpu_util_pct", d.unwrap_or(0)), c, pts));
        }
    }
    let panels: Vec<(&str, Vec<Series>)> = panels
        .into_iter()
        .take(MAX_COUNTER_PANELS)
        .map(|(name, by_dev)| {
            let series = by_dev
                .into_iter()
                .map(|(d, pts)| {
                    let label = d.map_or_else(|| name.to_string(), |d| format!("gpu{d}: {name}"));
                    (label, device_color(d.unwrap_or(0)), pts)
                })
                .collect();
            (name, series)
        })
        .collect();

    let height = MAIN_H + PANEL_H * panels.len() as u32;
    let title = format!("Utilisation per device — windows of {}", duration_ms(w as f64 / 1e6));
    let x_desc = run.time_axis_label();
    render_svg(path, (1400, height), |root| {
        if main.is_empty() && panels.is_empty() {
            return super::draw_empty(root, &title, "no GPU spans and no counters");
        }
        let (top, rest) = root.split_vertically(MAIN_H);
        panel(&top, &title, "busy (%)", &x_desc, (0.0, t_end), (0.0, 105.0), &main, true)?;
        let areas = if panels.is_empty() { vec![] } else { rest.split_evenly((panels.len(), 1)) };
        for ((name, series), area) in panels.iter().zip(areas.iter()) {
            let (lo, hi) = series.iter().flat_map(|s| s.2.iter().map(|p| p.1)).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
            let (lo, hi) = if hi - lo <= hi.abs() * 1e-9 {
                let pad = (hi.abs() * 0.05).max(1.0);
                (lo - pad, hi + pad)
            } else {
                (lo.min(0.0), hi + (hi - lo) * 0.08)
            };
            panel(area, name, name, &x_desc, (0.0, t_end), (lo, hi), series, false)?;
        }
        Ok(())
    })
}

/// One panel: lines over time with a legend; `pct` labels the y axis as a percentage.
#[allow(clippy::too_many_arguments)]
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    x_desc: &str,
    x: (f64, f64),
    y: (f64, f64),
    series: &[Series],
    pct: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .caption(title, text(18.0))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(text(12.0))
        .axis_desc_style(text(13.0))
        .light_line_style(RGBColor(240, 240, 240))
        .x_label_formatter(&|v| si(*v))
        .y_label_formatter(&|v| if pct { format!("{v:.0}") } else { si(*v) })
        .draw()?;
    for (label, c, pts) in series {
        let c = *c;
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
        // Sparse counter samples are marked, so that a single sample still shows.
        if !pct && pts.len() <= 200 {
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
    }
    if !series.is_empty() {
        super::draw_legend(&mut chart, SeriesLabelPosition::LowerRight, 0.85, 12.0)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixtures::{sample_run, synthetic};

    #[test]
    fn windows_split_busy_time_exactly() {
        // Busy [5, 25) and [30, 40) in windows of 10: 0.5, 1.0, 0.5, 1.0.
        assert_eq!(windowed(&[(5, 25), (30, 40)], 10, 4), vec![0.5, 1.0, 0.5, 1.0]);
        assert_eq!(windowed(&[], 10, 2), vec![0.0, 0.0]);
        // A span past the last window is cut off, not a panic.
        assert_eq!(windowed(&[(15, 100)], 10, 3), vec![0.0, 0.5, 1.0]);
    }

    #[test]
    fn renders_sample_synthetic_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("u.svg");
        utilization_svg(&synthetic(5, 10, 2, true), &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        for needle in ["gpu1: device work (kernel util)", "gpu0: NVML gpu_util_pct", "gpu_power_w", "rss_bytes"] {
            assert!(s.contains(needle), "missing {needle}");
        }
        utilization_svg(&sample_run(), &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("gpu0: gpu calls (TIMELINE util)") && !s.contains("kernel util"));
        utilization_svg(&Run::default(), &p).unwrap();
        if let Ok(d) = std::env::var("PROOFSCOPE_CHART_DIR") {
            utilization_svg(&synthetic(5, 10, 2, true), &Path::new(&d).join("utilization.svg")).unwrap();
        }
    }
}
