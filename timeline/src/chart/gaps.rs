//! Idle time by gap duration, stacked by cause, on log-spaced bins: gaps span
//! milliseconds (dispatch jitter) to seconds (a starved pipeline), and which causes sit
//! at which scale is the point of the picture. The height of a bar is the idle *time* its
//! gaps add up to, not their number: 39 "other" gaps of 0.08 s in all must not tower over
//! 3.75 s of synthesis starvation (the counts are in the legend).

use std::path::Path;

use plotters::prelude::*;

use super::style::{cause_color, duration_ms, CAUSES};
use super::{render_svg, text, ChartError, GapMark};

/// Log-spaced bin edges (in ms) covering `[lo, hi]`, `n` bins.
fn log_edges(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (a, b) = (lo.log10(), hi.log10());
    (0..=n).map(|i| 10f64.powf(a + (b - a) * i as f64 / n as f64)).collect()
}

/// Draw the gap histogram as SVG.
pub fn gaps_svg(gaps: &[GapMark], path: &Path) -> Result<String, ChartError> {
    // Durations in ms; a zero-length gap is put in the first bin.
    let durs: Vec<(f64, &str)> = gaps.iter().map(|g| (g.end_ns.saturating_sub(g.start_ns) as f64 / 1e6, g.cause.as_str())).collect();
    let mut causes: Vec<&str> = durs.iter().map(|d| d.1).collect();
    causes.sort_by_key(|c| (CAUSES.iter().position(|k| k == c).unwrap_or(CAUSES.len()), *c));
    causes.dedup();
    let positive = durs.iter().map(|d| d.0).filter(|&d| d > 0.0);
    let lo = positive.clone().fold(f64::INFINITY, f64::min);
    let hi = positive.fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() { (lo / 1.2, hi * 1.2) } else { (0.1, 10.0) };
    let nbins = ((durs.len() as f64).sqrt() * 2.0).clamp(6.0, 30.0) as usize;
    let edges = log_edges(lo, hi, nbins);
    // secs[bin][cause]: idle seconds of the bin's gaps of that cause.
    let mut secs = vec![vec![0f64; causes.len()]; nbins];
    for &(d, c) in &durs {
        let bin = edges.iter().skip(1).position(|&e| d <= e).unwrap_or(nbins - 1);
        let ci = causes.iter().position(|k| *k == c).unwrap_or(0);
        secs[bin][ci] += d / 1e3;
    }
    let ymax = secs.iter().map(|b| b.iter().sum::<f64>()).fold(0.0, f64::max);
    let ymax = if ymax > 0.0 { ymax } else { 1.0 };
    let total_s: f64 = durs.iter().map(|d| d.0).sum::<f64>() / 1e3;
    let title = format!("Idle time by gap duration and cause — {} gap(s), {:.2} s in total", durs.len(), total_s);

    render_svg(path, (1100, 560), |root| {
        if durs.is_empty() {
            return super::draw_empty(root, &title, "no idle gaps");
        }
        let mut chart = ChartBuilder::on(root)
            .caption(&title, text(18.0))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..ymax * 1.15)?;
        chart
            .configure_mesh()
            .x_desc("gap duration (log scale)")
            .y_desc("idle time (s)")
            .label_style(text(12.0))
            .axis_desc_style(text(13.0))
            .light_line_style(RGBColor(240, 240, 240))
            .x_label_formatter(&|v| duration_ms(*v))
            .draw()?;
        for (ci, cause) in causes.iter().enumerate() {
            let c = cause_color(cause);
            let bars = (0..nbins).filter(|&b| secs[b][ci] > 0.0).map(|b| {
                let below: f64 = secs[b][..ci].iter().sum();
                Rectangle::new([(edges[b], below), (edges[b + 1], below + secs[b][ci])], c.filled())
            });
            let n = durs.iter().filter(|d| d.1 == *cause).count();
            let total: f64 = durs.iter().filter(|d| d.1 == *cause).map(|d| d.0).sum::<f64>() / 1e3;
            chart
                .draw_series(bars)?
                .label(format!("{cause}: {total:.2} s in {n} gap(s)"))
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
        }
        // Thin white separators between bins.
        chart.draw_series((0..nbins).map(|b| {
            let h: f64 = secs[b].iter().sum();
            Rectangle::new([(edges[b], 0.0), (edges[b + 1], h)], WHITE.stroke_width(1))
        }))?;
        super::draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 0.9, 13.0)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_log_spaced() {
        let e = log_edges(1.0, 1000.0, 3);
        assert_eq!(e.len(), 4);
        for (x, want) in e.iter().zip([1.0, 10.0, 100.0, 1000.0]) {
            assert!((x - want).abs() < 1e-9 * want, "{x} vs {want}");
        }
    }

    #[test]
    fn renders_mixed_causes_and_no_gaps() {
        let ms = 1_000_000;
        let gaps: Vec<GapMark> = (0..40u64)
            .map(|i| GapMark { device: 0, start_ns: i * 1000 * ms, end_ns: i * 1000 * ms + (i * i + 1) * ms, cause: CAUSES[i as usize % 3].into() })
            .chain([GapMark { device: 1, start_ns: 5, end_ns: 5, cause: "mystery".into() }])
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.svg");
        gaps_svg(&gaps, &p).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.contains("in 14 gap(s)") && s.contains("mystery: 0.00 s in 1 gap(s)") && s.contains("idle time (s)"), "legend");
        // cold_start: gaps i = 0, 3, …, 39 of (i² + 1) ms.
        let cold: u64 = (0..40u64).filter(|i| i % 3 == 0).map(|i| i * i + 1).sum();
        assert!(s.contains(&format!("cold_start: {:.2} s in 14 gap(s)", cold as f64 / 1e3)), "legend: time per cause");
        gaps_svg(&[], &p).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("no idle gaps"));
        if let Ok(d) = std::env::var("PROOFSCOPE_CHART_DIR") {
            gaps_svg(&gaps, &Path::new(&d).join("gaps.svg")).unwrap();
        }
    }
}

#[cfg(test)]
mod time_not_count {
    use super::*;

    /// Issue 17: 39 short "other" gaps (0.08 s in all) used to tower over 3.75 s of starvation.
    #[test]
    fn bars_are_idle_seconds_so_one_long_gap_outweighs_many_short_ones() {
        let ms = 1_000_000u64;
        let mut gaps: Vec<GapMark> = (0..39u64).map(|i| GapMark { device: 0, start_ns: i * 100 * ms, end_ns: i * 100 * ms + 2 * ms, cause: "other".into() }).collect();
        gaps.push(GapMark { device: 0, start_ns: 10_000 * ms, end_ns: 13_750 * ms, cause: "synthesis_starved".into() });
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.svg");
        gaps_svg(&gaps, &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.contains("synthesis_starved: 3.75 s in 1 gap(s)"), "legend gives time first");
        assert!(svg.contains("other: 0.08 s in 39 gap(s)"));
        assert!(svg.contains("idle time (s)"));
        // The tallest filled bar is the starvation one: find the bars' heights by colour.
        let bar_h = |colour: plotters::style::RGBColor| -> f64 {
            let hex = format!("#{:02X}{:02X}{:02X}", colour.0, colour.1, colour.2);
            svg.lines()
                .filter(|l| l.contains("<rect") && l.to_uppercase().contains(&hex))
                .filter_map(|l| l.split("height=\"").nth(1)?.split('"').next()?.parse::<f64>().ok())
                .fold(0.0, f64::max)
        };
        let starved = bar_h(cause_color("synthesis_starved"));
        let other = bar_h(cause_color("other"));
        assert!(starved > 10.0 * other.max(0.1), "starvation bar {starved} px vs other {other} px");
    }
}
