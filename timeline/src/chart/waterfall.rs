//! The waterfall: the picture a performance engineer reads first. One row per serial
//! lane (synthesis workers, then for each device an "idle" row and its GPU workers),
//! bars coloured by kind with alternating shades per job, nested spans (kernels inside
//! their `gpu` call) drawn thinner inside their parent, idle gaps shaded by cause across
//! the device's rows, a legend, and a time axis in seconds. The canvas grows with the
//! number of rows (height) and of bars per row (width), so 50 proofs × 10 partitions
//! stay legible.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{cause_color, kind_color, lighten, CAUSES};
use crate::stats::merge_intervals as union;
use super::{render_png, render_svg, text, ChartError, DrawResult, GapMark};
use crate::event::{Run, SpanKind};
use crate::lanes::{self, Lane, LaneGroup};

const TITLE_H: u32 = 50;
const AXIS_H: u32 = 50;
const LEGEND_ITEM_H: u32 = 24;
/// Minimum width of the median GPU call, in pixels.
const MIN_BAR_PX: f64 = 10.0;

enum RowKind {
    /// A serial lane (index into `Layout::lanes`).
    Lane(usize),
    /// The device's summary row: union of its `gpu` spans, and its gaps.
    Device(u32),
}

struct Row {
    label: String,
    kind: RowKind,
}

struct Layout {
    lanes: Vec<Lane>,
    rows: Vec<Row>,
    /// Device -> (first row, last row) of its worker lanes.
    device_rows: HashMap<u32, (usize, usize)>,
    legend: Vec<(String, RGBColor)>,
    width: u32,
    height: u32,
    row_px: u32,
    label_w: u32,
    legend_h: u32,
    t_end_s: f64,
}

fn legend_item_w(label: &str) -> u32 {
    36 + (label.chars().count() as u32) * 7
}

impl Layout {
    fn new(run: &Run, gaps: &[GapMark]) -> Layout {
        let lanes = lanes::assign(run);
        let mut rows = Vec::new();
        let mut device_rows: HashMap<u32, (usize, usize)> = HashMap::new();
        let mut seen_device: Option<u32> = None;
        for (i, lane) in lanes.iter().enumerate() {
            if let LaneGroup::Device(d) = lane.group {
                if seen_device != Some(d) {
                    seen_device = Some(d);
                    rows.push(Row { label: format!("gpu{d} busy/idle"), kind: RowKind::Device(d) });
                }
                let r = rows.len();
                device_rows.entry(d).and_modify(|e| e.1 = r).or_insert((r, r));
            }
            rows.push(Row { label: lane.name(), kind: RowKind::Lane(i) });
        }

        // Legend: the kinds drawn, in pipeline order, then the gap causes present.
        let mut kinds: BTreeSet<SpanKind> = BTreeSet::new();
        for lane in &lanes {
            for p in &lane.spans {
                kinds.insert(run.spans[p.index].kind.clone());
            }
        }
        let mut legend: Vec<(String, RGBColor)> = SpanKind::KNOWN
            .iter()
            .filter(|k| kinds.contains(k))
            .map(|k| (k.as_str().to_string(), kind_color(k)))
            .collect();
        legend.extend(kinds.iter().filter(|k| matches!(k, SpanKind::Other(_))).map(|k| (k.as_str().to_string(), kind_color(k))));
        if !device_rows.is_empty() {
            legend.push(("device busy (union of gpu)".into(), RGBColor(80, 80, 80)));
        }
        let mut causes: Vec<&str> = gaps.iter().map(|g| g.cause.as_str()).collect();
        causes.sort_by_key(|c| (CAUSES.iter().position(|k| k == c).unwrap_or(CAUSES.len()), *c));
        causes.dedup();
        legend.extend(causes.iter().map(|c| (format!("idle: {c}"), cause_color(c))));

        let n = rows.len().max(1) as u32;
        let row_px = if n <= 30 {
            26
        } else if n <= 60 {
            18
        } else {
            12
        };
        let t_end_s = (run.end_ns().max(gaps.iter().map(|g| g.end_ns).max().unwrap_or(0)) as f64 / 1e9 * 1.01).max(1e-3);
        // Width: room for every bar of the busiest row, and the median GPU call at least
        // MIN_BAR_PX wide (GPU calls are the short bars that must stay visible).
        let max_bars = lanes.iter().map(|l| l.spans.iter().filter(|p| p.depth == 0).count()).max().unwrap_or(0) as f64;
        let mut gpu_s: Vec<f64> = run.spans_of(&SpanKind::Gpu).filter_map(|s| s.end_ns.map(|e| (e - s.start_ns.min(e)) as f64 / 1e9)).collect();
        gpu_s.sort_by(f64::total_cmp);
        let by_duration = gpu_s.get(gpu_s.len() / 2).filter(|&&m| m > 0.0).map_or(0.0, |m| MIN_BAR_PX * t_end_s / m);
        let plot_w = (250.0 + 9.0 * max_bars).max(by_duration).clamp(1400.0, 6000.0) as u32;
        let label_w = 30 + 8 * rows.iter().map(|r| r.label.chars().count() as u32).max().unwrap_or(8);
        let width = plot_w + label_w;
        // Legend wraps over the chart's width.
        let mut lines = 1;
        let mut x = 0;
        for (label, _) in &legend {
            let w = legend_item_w(label);
            if x + w > width - 40 && x > 0 {
                lines += 1;
                x = 0;
            }
            x += w;
        }
        let legend_h = lines * LEGEND_ITEM_H + 16;
        let height = TITLE_H + n * row_px + AXIS_H + legend_h;
        Layout { lanes, rows, device_rows, legend, width, height, row_px, label_w, legend_h, t_end_s }
    }
}

/// Most rows a waterfall draws (≈ 5000 px high, a 90 MB PNG canvas at most): a log whose
/// workers need more lanes than that (thousands of overlapping spans on one worker) is
/// refused with an error rather than drawn on a canvas of gigabytes; trace.json still
/// shows it.
pub const MAX_ROWS: usize = 400;

fn checked_layout(run: &Run, gaps: &[GapMark], path: &Path) -> Result<Layout, ChartError> {
    let layout = Layout::new(run, gaps);
    if layout.rows.len() > MAX_ROWS {
        return Err(ChartError::Draw {
            path: path.display().to_string(),
            message: format!("{} rows (worker lanes) are more than a waterfall draws ({MAX_ROWS}); open trace.json in Perfetto instead", layout.rows.len()),
        });
    }
    Ok(layout)
}

/// Draw the waterfall of `run` (with the analyzer's `gaps`) as SVG.
pub fn waterfall_svg(run: &Run, gaps: &[GapMark], path: &Path) -> Result<(), ChartError> {
    let layout = checked_layout(run, gaps, path)?;
    render_svg(path, (layout.width, layout.height), |root| draw(root, run, gaps, &layout))
}

/// The same chart as [`waterfall_svg`], as PNG (for viewers without SVG, and the README).
pub fn waterfall_png(run: &Run, gaps: &[GapMark], path: &Path) -> Result<(), ChartError> {
    let layout = checked_layout(run, gaps, path)?;
    render_png(path, (layout.width, layout.height), |root| draw(root, run, gaps, &layout))
}

fn title_of(run: &Run, gaps: &[GapMark]) -> String {
    let gpu = run.spans_of(&SpanKind::Gpu).count();
    let devices = run.devices().len();
    format!(
        "Waterfall — {} · {} job(s) · {} GPU call(s) on {} device(s) · {} idle gap(s)",
        run.meta.source,
        run.jobs().len(),
        gpu,
        devices,
        gaps.len()
    )
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, run: &Run, gaps: &[GapMark], l: &Layout) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if l.rows.is_empty() {
        return super::draw_empty(root, &title_of(run, gaps), "no spans to draw");
    }
    let (top, rest) = root.split_vertically(TITLE_H);
    let (mid, bottom) = rest.split_vertically(l.height - TITLE_H - l.legend_h);
    top.draw(&Text::new(title_of(run, gaps), (20, 14), text(20.0)))?;

    let n = l.rows.len();
    let nf = n as f64;
    let mut chart = ChartBuilder::on(&mid)
        .margin_right(30)
        .x_label_area_size(AXIS_H)
        .y_label_area_size(l.label_w)
        .build_cartesian_2d(0f64..l.t_end_s, 0f64..nf)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(((l.width - l.label_w) / 110) as usize)
        .x_desc(run.time_axis_label())
        .label_style(text(13.0))
        .axis_desc_style(text(14.0))
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| {
            if l.t_end_s >= 10.0 {
                format!("{x:.0}")
            } else {
                format!("{x:.2}")
            }
        })
        .draw()?;

    // Row i (from the top) spans y in [n-1-i, n-i].
    let base = |i: usize| nf - 1.0 - i as f64;
    let t = |ns: u64| ns as f64 / 1e9;

    // Zebra background, device-row tint and group separators.
    let mut bg = Vec::new();
    for (i, row) in l.rows.iter().enumerate() {
        let c = match row.kind {
            RowKind::Device(_) => RGBColor(236, 236, 242),
            RowKind::Lane(_) if i % 2 == 0 => RGBColor(250, 250, 250),
            RowKind::Lane(_) => WHITE,
        };
        bg.push(Rectangle::new([(0.0, base(i)), (l.t_end_s, base(i) + 1.0)], c.filled()));
    }
    chart.draw_series(bg)?;

    // Gaps: shaded across the device's worker rows, solid on its summary row.
    for g in gaps {
        let Some(&(r0, r1)) = l.device_rows.get(&g.device) else { continue };
        let c = cause_color(&g.cause);
        chart.draw_series([Rectangle::new([(t(g.start_ns), base(r1)), (t(g.end_ns), base(r0) + 1.0)], c.mix(0.16).filled())])?;
    }
    for (i, row) in l.rows.iter().enumerate() {
        if let RowKind::Device(d) = row.kind {
            let busy = union(
                run.spans
                    .iter()
                    .filter(|s| s.kind == SpanKind::Gpu && s.device_or_0() == d)
                    .filter_map(|s| s.end_ns.map(|e| (s.start_ns, e)))
                    .collect(),
            );
            chart.draw_series(busy.iter().map(|&(a, b)| {
                Rectangle::new([(t(a), base(i) + 0.3), (t(b), base(i) + 0.7)], RGBColor(80, 80, 80).filled())
            }))?;
            chart.draw_series(gaps.iter().filter(|g| g.device == d).map(|g| {
                Rectangle::new([(t(g.start_ns), base(i) + 0.1), (t(g.end_ns), base(i) + 0.9)], cause_color(&g.cause).filled())
            }))?;
        }
    }

    // Spans, depth by depth so that kernels are drawn on top of their call.
    let jobs: HashMap<String, usize> = run.jobs().into_iter().enumerate().map(|(i, j)| (j, i)).collect();
    // A log mixing proof types labels each bar with its job's type.
    let types: HashMap<String, String> = {
        let ix = crate::analysis::tables::Index::build(run);
        if ix.types.len() > 1 {
            ix.jobs.iter().enumerate().map(|(j, name)| (name.to_string(), ix.type_of_job(j as u32).to_string())).collect()
        } else {
            HashMap::new()
        }
    };
    let (x_px0, _) = chart.backend_coord(&(0.0, 0.0));
    let (x_px1, _) = chart.backend_coord(&(l.t_end_s, 0.0));
    let px_per_s = (x_px1 - x_px0) as f64 / l.t_end_s;
    let label_size = (l.row_px as f64 * 0.5).min(12.0);
    let mut labels = Vec::new();
    for (i, row) in l.rows.iter().enumerate() {
        let RowKind::Lane(li) = row.kind else { continue };
        let (by_depth, mut row_labels) = lane_bars(run, &l.lanes[li], &jobs, &types, base(i), px_per_s, label_size, l.row_px >= 16);
        labels.append(&mut row_labels);
        for bars in by_depth {
            chart.draw_series(bars.iter().flat_map(|b| {
                let r = [(b.x0, b.y0), (b.x1, b.y1)];
                let first = if b.open { Rectangle::new(r, b.color.mix(0.3).filled()) } else { Rectangle::new(r, b.color.filled()) };
                let outline = match (b.open, b.hairline) {
                    (true, _) => Some(Rectangle::new(r, b.color.stroke_width(1))),
                    // A hairline so that back-to-back bars of one job stay distinct.
                    (false, true) => Some(Rectangle::new(r, WHITE.stroke_width(1))),
                    (false, false) => None,
                };
                std::iter::once(first).chain(outline)
            }))?;
        }
    }
    let label_style = text(label_size).pos(Pos::new(HPos::Left, VPos::Center));
    chart.draw_series(labels.into_iter().map(|(s, x, y)| Text::new(s, (x, y), label_style.clone())))?;

    // Separators between groups (host / each device).
    let mut prev: Option<LaneGroup> = None;
    for (i, row) in l.rows.iter().enumerate() {
        let g = match row.kind {
            RowKind::Device(d) => LaneGroup::Device(d),
            RowKind::Lane(li) => l.lanes[li].group,
        };
        if prev.is_some_and(|p| p != g) {
            chart.draw_series([PathElement::new(vec![(0.0, base(i) + 1.0), (l.t_end_s, base(i) + 1.0)], BLACK.stroke_width(1))])?;
        }
        prev = Some(g);
    }

    // Row labels, right-aligned in the label area.
    let lab = text(13.0).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, row) in l.rows.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(0.0, base(i) + 0.5));
        root.draw(&Text::new(row.label.clone(), (x - 8, y), lab.clone()))?;
    }

    // Legend.
    let (bw, _) = bottom.dim_in_pixel();
    let (mut x, mut y) = (20i32, 8i32);
    for (label, c) in &l.legend {
        let w = legend_item_w(label) as i32;
        if x + w > bw as i32 - 20 && x > 20 {
            x = 20;
            y += LEGEND_ITEM_H as i32;
        }
        bottom.draw(&Rectangle::new([(x, y + 3), (x + 16, y + 17)], c.filled()))?;
        bottom.draw(&Text::new(label.clone(), (x + 22, y + 10), text(13.0).pos(Pos::new(HPos::Left, VPos::Center))))?;
        x += w;
    }
    Ok(())
}

/// One rectangle of the waterfall, in chart coordinates (seconds, row units).
#[derive(Debug, Clone, PartialEq)]
struct Bar {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    color: RGBColor,
    open: bool,
    hairline: bool,
}

/// Bars narrower than this many pixels merge with a same-coloured neighbour less than a
/// pixel away: a picture of a million spans stays a picture, not a 100 MB SVG.
const MERGE_BELOW_PX: f64 = 1.5;

/// The bars of one lane, by depth (draw depth 0 first), and the labels of wide bars.
#[allow(clippy::too_many_arguments)]
fn lane_bars(
    run: &Run,
    lane: &Lane,
    jobs: &HashMap<String, usize>,
    types: &HashMap<String, String>,
    y_base: f64,
    px_per_s: f64,
    label_size: f64,
    with_labels: bool,
) -> (Vec<Vec<Bar>>, Vec<(String, f64, f64)>) {
    let t = |ns: u64| ns as f64 / 1e9;
    let mut by_depth: Vec<Vec<Bar>> = Vec::new();
    let mut labels = Vec::new();
    for p in &lane.spans {
        let s = &run.spans[p.index];
        let d = p.depth as usize;
        let inset = [0.08, 0.26, 0.36, 0.42][d.min(3)];
        let job = s.job.as_ref().and_then(|j| jobs.get(j)).copied();
        let mut color = kind_color(&s.kind);
        if job.is_some_and(|j| j % 2 == 1) {
            color = lighten(color, 0.35);
        }
        let (x0, x1) = (t(p.start_ns), t(p.end_ns));
        let w_px = (x1 - x0) * px_per_s;
        if by_depth.len() <= d {
            by_depth.resize_with(d + 1, Vec::new);
        }
        let list = &mut by_depth[d];
        let thin = w_px < MERGE_BELOW_PX && !p.open;
        match list.last_mut() {
            Some(last) if thin && !last.open && last.color == color && (x0 - last.x1) * px_per_s < 1.0 && (last.x1 - last.x0) * px_per_s < MERGE_BELOW_PX => {
                last.x1 = last.x1.max(x1);
            }
            _ => list.push(Bar {
                x0,
                x1,
                y0: y_base + inset,
                y1: y_base + 1.0 - inset,
                color,
                open: p.open,
                hairline: d == 0 && w_px >= 4.0,
            }),
        }
        if with_labels && d == 0 && matches!(s.kind, SpanKind::Gpu | SpanKind::Synthesis) {
            let mut label = match (job, s.partition) {
                (Some(j), Some(pn)) => format!("J{j} p{pn}"),
                (None, Some(pn)) => format!("p{pn}"),
                (Some(j), None) => format!("J{j}"),
                (None, None) => String::new(),
            };
            if let Some(t) = s.job.as_ref().and_then(|j| types.get(j)) {
                label = format!("{t} {label}");
            }
            if p.open {
                label.push_str(" (open)");
            }
            let need = label.chars().count() as f64 * label_size * 0.62 + 6.0;
            if !label.is_empty() && w_px >= need {
                labels.push((label, x0, y_base + 0.5));
            }
        }
    }
    (by_depth, labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixtures::{sample_run, synthetic};

    fn gaps_of(run: &Run) -> Vec<GapMark> {
        // Simple stand-in for the analyzer: holes in the union of gpu spans per device.
        let mut out = Vec::new();
        for d in run.devices() {
            let busy = union(
                run.spans.iter().filter(|s| s.kind == SpanKind::Gpu && s.device_or_0() == d).filter_map(|s| s.end_ns.map(|e| (s.start_ns, e))).collect(),
            );
            for (k, w) in busy.windows(2).enumerate() {
                let cause = CAUSES[k % CAUSES.len()].to_string();
                out.push(GapMark { device: d, start_ns: w[0].1, end_ns: w[1].0, cause });
            }
        }
        out
    }

    #[test]
    fn sample_log_waterfall_renders_both_formats() {
        let run = sample_run();
        // The analyzer's own gaps, as `proofscope analyze` passes them.
        let analysis = crate::analysis::gaps::analyze(&run, &crate::analysis::AnalyzeOptions::default());
        let gaps = crate::analysis::gaps::marks(&analysis.gaps);
        assert!(!gaps.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("waterfall.svg");
        let png = dir.path().join("waterfall.png");
        waterfall_svg(&run, &gaps, &svg).unwrap();
        waterfall_png(&run, &gaps, &png).unwrap();
        let s = std::fs::read_to_string(&svg).unwrap();
        assert!(s.starts_with("<svg"), "{}", &s[..80.min(s.len())]);
        // Labels of rows and legend are there as text.
        for needle in ["gpu0 w0", "gpu0 w1", "synth 0", "time since run start (s)", "synthesis", "J0 p4"] {
            assert!(s.contains(needle), "missing {needle}");
        }
        for g in &gaps {
            assert!(s.contains(&format!("idle: {}", g.cause)), "legend lacks cause {}", g.cause);
        }
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        if let Ok(dir) = std::env::var("PROOFSCOPE_CHART_DIR") {
            let dir = Path::new(&dir);
            waterfall_png(&run, &gaps, &dir.join("waterfall-sample.png")).unwrap();
            waterfall_svg(&run, &gaps, &dir.join("waterfall-sample.svg")).unwrap();
        }
    }

    #[test]
    fn large_run_sizes_the_canvas_from_its_rows_and_bars() {
        let run = synthetic(50, 10, 2, true);
        let gaps = gaps_of(&run);
        let l = Layout::new(&run, &gaps);
        let lanes = l.rows.iter().filter(|r| matches!(r.kind, RowKind::Lane(_))).count();
        assert_eq!(l.rows.len(), lanes + 2, "one summary row per device");
        assert!(l.height > 40 + l.rows.len() as u32 * 12, "{}x{}", l.width, l.height);
        // The median GPU call (5 s) stays at least MIN_BAR_PX wide.
        let px = (l.width - l.label_w) as f64 * 5.0 / l.t_end_s;
        assert!(px >= MIN_BAR_PX * 0.9, "{px} px per GPU call at {}x{}", l.width, l.height);
        let small = Layout::new(&synthetic(2, 10, 1, true), &[]);
        assert!(small.width < l.width);
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("w.png");
        waterfall_png(&run, &gaps, &png).unwrap();
        waterfall_svg(&run, &gaps, &dir.path().join("w.svg")).unwrap();
        if let Ok(dir) = std::env::var("PROOFSCOPE_CHART_DIR") {
            waterfall_png(&run, &gaps, &Path::new(&dir).join("waterfall-50x10.png")).unwrap();
        }
    }

    #[test]
    fn sub_pixel_bars_merge_but_visible_ones_do_not() {
        let mut run = Run::default();
        // 10 000 back-to-back 1 ms kernels inside one long call, then a wide call.
        run.spans.push(crate::event::Span::new(SpanKind::Gpu, 0, 10_000_000_000).worker(0).job("a"));
        for k in 0..10_000u64 {
            run.spans.push(crate::event::Span::new(SpanKind::Ntt, k * 1_000_000, (k + 1) * 1_000_000).worker(0).job("a"));
        }
        run.normalize();
        let lanes = crate::lanes::assign(&run);
        let jobs: HashMap<String, usize> = [("a".to_string(), 0)].into();
        // 10 s over 1000 px: each kernel is 0.1 px and they merge; the call does not.
        let (bars, _) = lane_bars(&run, &lanes[0], &jobs, &HashMap::new(), 0.0, 100.0, 12.0, true);
        assert_eq!(bars[0].len(), 1);
        assert!(bars[1].len() <= 10 * 1000 / 15 + 1, "{} kernel bars", bars[1].len());
        let covered: f64 = bars[1].iter().map(|b| b.x1 - b.x0).sum();
        assert!((covered - 10.0).abs() < 1e-6, "merged bars cover the kernels: {covered}");
        // Zoomed in (1 ms = 10 px), every kernel is its own bar.
        let (bars, _) = lane_bars(&run, &lanes[0], &jobs, &HashMap::new(), 0.0, 10_000.0, 12.0, true);
        assert_eq!(bars[1].len(), 10_000);
    }

    #[test]
    fn a_mixed_log_labels_bars_with_their_proof_type() {
        let mut run = Run::default();
        run.spans.push(crate::event::Span::new(SpanKind::Gpu, 0, 1_000_000_000).worker(0).job("a").partition(3));
        run.spans.push(crate::event::Span::new(SpanKind::Gpu, 1_000_000_000, 2_000_000_000).worker(0).job("w"));
        run.normalize();
        let lanes = crate::lanes::assign(&run);
        let jobs: HashMap<String, usize> = [("a".to_string(), 0), ("w".to_string(), 1)].into();
        let types: HashMap<String, String> = [("a".to_string(), "porep-c2".to_string()), ("w".to_string(), "winning-post".to_string())].into();
        let (_, labels) = lane_bars(&run, &lanes[0], &jobs, &types, 0.0, 1000.0, 12.0, true);
        let texts: Vec<&str> = labels.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(texts, ["porep-c2 J0 p3", "winning-post J1"]);
    }

    #[test]
    fn empty_run_and_bad_path() {
        let dir = tempfile::tempdir().unwrap();
        waterfall_svg(&Run::default(), &[], &dir.path().join("e.svg")).unwrap();
        let err = waterfall_png(&sample_run(), &[], Path::new("/nonexistent/dir/w.png")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/w.png"), "{err}");
    }
}
