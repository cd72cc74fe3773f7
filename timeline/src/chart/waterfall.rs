//! The waterfall: the picture a performance engineer reads first. One row per serial
//! lane (synthesis workers, then for each device an "idle" row and its GPU workers, and
//! the lanes its MSMs ran on), bars coloured by kind with alternating shades per job,
//! nested spans (kernels inside their `gpu` call) drawn thinner inside their parent, idle
//! gaps shaded by cause across the device's rows, a legend, and a time axis in seconds.
//!
//! Made to be read at any size:
//! - The canvas grows with the number of rows (height) and of bars per row (width, up to
//!   6000 px), so 50 proofs × 10 partitions stay legible.
//! - Level of detail: bars (and gaps, and the device's busy stretches) narrower than a
//!   pixel that follow each other within a pixel merge into one band, coloured by the kind
//!   with the most time in it; so the number of drawn elements, the SVG's size and the
//!   drawing time are bounded by the canvas, not by the number of partitions.
//! - Bar labels (`J3 p7`) only where they fit and not closer than [`LABEL_GAP_PX`] to the
//!   previous one on the row; with many proofs, only where a proof starts on a row and for
//!   every Nth proof (N = 1, 2, 5, 10, 20, … so that at most [`LABELLED_JOBS`] are).
//! - In the SVG every bar, band, busy stretch and gap carries a `<title>` (kind, job,
//!   partition, duration; for a band what it merged), which a browser shows on hover.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{cause_color, duration_ms, kind_color, lighten, BUSY_COLOR, CAUSES, JOB_SHADE};
use super::{render_png, render_svg_with, text, ChartError, GapMark, FAMILY};
use crate::event::{Run, SpanKind};
use crate::lanes::{Lane, LaneGroup, LaidOut};
use crate::stats::merge_intervals as union;

const TITLE_H: u32 = 50;
const AXIS_H: u32 = 50;
const LEGEND_ITEM_H: u32 = 24;
/// Right margin of the plot area, px.
const MARGIN_RIGHT: u32 = 30;
/// Minimum width of the median GPU call, in pixels.
const MIN_BAR_PX: f64 = 10.0;
/// Bars narrower than this many pixels merge with a neighbour less than a pixel away (a
/// bar of 2 px is as much as a viewer can tell apart from its neighbours).
const MERGE_BELOW_PX: f64 = 2.0;
/// Least room between two bar labels of a row, px.
pub const LABEL_GAP_PX: f64 = 12.0;
/// Runs with at most this many jobs label every bar that fits; beyond, only proof starts.
const LABEL_EVERY_BAR_UP_TO: usize = 8;
/// Most jobs that get labels (every Nth job beyond).
pub const LABELLED_JOBS: usize = 12;

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

struct Layout<'a> {
    /// The run's lanes (shared with the other outputs through [`LaidOut`]).
    lanes: &'a [Lane],
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

impl<'a> Layout<'a> {
    fn new(laid: &'a LaidOut<'_>, gaps: &[GapMark]) -> Layout<'a> {
        let run = laid.run();
        let lanes = laid.lanes();
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
            rows.push(Row { label: lane.label(run), kind: RowKind::Lane(i) });
        }

        // Legend: the kinds drawn, in pipeline order, then the gap causes present.
        let mut kinds: BTreeSet<SpanKind> = BTreeSet::new();
        for lane in lanes {
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
            legend.push(("device busy (union of gpu)".into(), BUSY_COLOR));
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

    /// Pixels per second of the plot area (as plotters maps it, ± rounding).
    fn px_per_s(&self) -> f64 {
        (self.width.saturating_sub(self.label_w + MARGIN_RIGHT)).max(1) as f64 / self.t_end_s
    }

    /// Bar labels' font size, px.
    fn label_size(&self) -> f64 {
        (self.row_px as f64 * 0.5).min(12.0)
    }
}

/// Most rows a waterfall draws (≈ 5000 px high, a 90 MB PNG canvas at most): a log whose
/// workers need more lanes than that (thousands of overlapping spans on one worker) is
/// refused with an error rather than drawn on a canvas of gigabytes; trace.json still
/// shows it.
pub const MAX_ROWS: usize = 400;

/// The layout, refused when it has more rows than a waterfall draws (the message).
fn checked<'a>(laid: &'a LaidOut<'_>, gaps: &[GapMark]) -> Result<Layout<'a>, String> {
    let layout = Layout::new(laid, gaps);
    if layout.rows.len() > MAX_ROWS {
        return Err(format!("{} rows (worker lanes) are more than a waterfall draws ({MAX_ROWS}); open trace.json in Perfetto instead", layout.rows.len()));
    }
    Ok(layout)
}

/// A run's waterfall laid out and its scene built (the level of detail, the labels, the
/// titles: a pass over every span and the job index), once for both the SVG and the PNG.
pub struct Waterfall<'a> {
    run: &'a Run,
    gaps: &'a [GapMark],
    /// The layout and scene, or why the run cannot be drawn.
    drawn: Result<(Layout<'a>, Scene), String>,
}

impl<'a> Waterfall<'a> {
    pub fn new(laid: &'a LaidOut<'_>, gaps: &'a [GapMark]) -> Waterfall<'a> {
        let run = laid.run();
        let drawn = checked(laid, gaps).map(|layout| {
            let scene = Scene::build(run, gaps, &layout);
            (layout, scene)
        });
        Waterfall { run, gaps, drawn }
    }

    fn parts(&self, path: &Path) -> Result<&(Layout<'a>, Scene), ChartError> {
        self.drawn.as_ref().map_err(|message| ChartError::Draw { path: path.display().to_string(), message: message.clone() })
    }

    /// The waterfall as SVG at `path` (its text returned).
    pub fn svg(&self, path: &Path) -> Result<String, ChartError> {
        let (layout, scene) = self.parts(path)?;
        render_svg_with(path, (layout.width, layout.height), |root| {
            let map = draw(root, self.run, self.gaps, layout, scene, false)?;
            Ok(map.map_or_else(String::new, |m| scene.svg(&m, layout.label_size())))
        })
    }

    /// The waterfall as PNG at `path`.
    pub fn png(&self, path: &Path) -> Result<(), ChartError> {
        let (layout, scene) = self.parts(path)?;
        render_png(path, (layout.width, layout.height), |root| draw(root, self.run, self.gaps, layout, scene, true).map(|_| ()))
    }
}

/// Draw the waterfall of a run laid out on its lanes (with the analyzer's `gaps`) as SVG.
pub fn waterfall_svg(laid: &LaidOut<'_>, gaps: &[GapMark], path: &Path) -> Result<(), ChartError> {
    Waterfall::new(laid, gaps).svg(path).map(drop)
}

/// The same chart as [`waterfall_svg`], as PNG (for viewers without SVG, and the README).
pub fn waterfall_png(laid: &LaidOut<'_>, gaps: &[GapMark], path: &Path) -> Result<(), ChartError> {
    Waterfall::new(laid, gaps).png(path)
}

fn title_of(run: &Run, gaps: &[GapMark], jobs: usize) -> String {
    let gpu = run.spans_of(&SpanKind::Gpu).count();
    let devices = run.devices().len();
    format!(
        "Waterfall — {} · {} job(s) · {} GPU call(s) on {} device(s) · {} idle gap(s)",
        run.meta.source,
        jobs,
        gpu,
        devices,
        gaps.len()
    )
}
/// Chart coordinates (seconds, row units) to SVG pixels, taken from plotters' own mapping
/// of the plot area, for what the SVG draws itself (bars with titles).
struct Mapping {
    px0: f64,
    px1: f64,
    py_top: f64,
    py_bot: f64,
    t_end: f64,
    nf: f64,
}

impl Mapping {
    fn x(&self, t: f64) -> f64 {
        self.px0 + t / self.t_end * (self.px1 - self.px0)
    }
    fn y(&self, v: f64) -> f64 {
        self.py_top + (self.nf - v) / self.nf * (self.py_bot - self.py_top)
    }
}

/// Draw everything but the scene's bars and labels with plotters (the scene too when
/// `with_scene`: the PNG); returns the mapping for drawing the scene into the SVG.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    run: &Run,
    gaps: &[GapMark],
    l: &Layout,
    scene: &Scene,
    with_scene: bool,
) -> Result<Option<Mapping>, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    if l.rows.is_empty() {
        super::draw_empty(root, &title_of(run, gaps, scene.jobs), "no spans to draw")?;
        return Ok(None);
    }
    let (top, rest) = root.split_vertically(TITLE_H);
    let (mid, bottom) = rest.split_vertically(l.height - TITLE_H - l.legend_h);
    top.draw(&Text::new(title_of(run, gaps, scene.jobs), (20, 14), text(20.0)))?;

    let n = l.rows.len();
    let nf = n as f64;
    let mut chart = ChartBuilder::on(&mid)
        .margin_right(MARGIN_RIGHT)
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

    // Zebra background and device-row tint.
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

    // Gaps, shaded across the device's worker rows (merged at pixel resolution).
    chart.draw_series(scene.shades.iter().filter_map(|g| {
        let &(r0, r1) = l.device_rows.get(&g.device)?;
        Some(Rectangle::new([(g.x0, base(r1)), (g.x1, base(r0) + 1.0)], g.color.mix(0.16).filled()))
    }))?;

    if with_scene {
        chart.draw_series(scene.rects.iter().flat_map(|b| {
            let r = [(b.x0, b.y0), (b.x1, b.y1)];
            let first = match b.look {
                Look::Open => Rectangle::new(r, b.color.mix(0.3).filled()),
                _ => Rectangle::new(r, b.color.filled()),
            };
            let outline = match b.look {
                Look::Open => Some(Rectangle::new(r, b.color.stroke_width(1))),
                // A hairline so that back-to-back bars of one job stay distinct.
                Look::Hairline => Some(Rectangle::new(r, WHITE.stroke_width(1))),
                Look::Solid => None,
            };
            std::iter::once(first).chain(outline)
        }))?;
        let label_style = text(l.label_size()).pos(Pos::new(HPos::Left, VPos::Center));
        chart.draw_series(scene.labels.iter().map(|b| Text::new(b.text.clone(), (b.x, b.y), label_style.clone())))?;
    }

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

    let (px0, py_top) = chart.backend_coord(&(0.0, nf));
    let (px1, py_bot) = chart.backend_coord(&(l.t_end_s, 0.0));
    Ok(Some(Mapping { px0: px0 as f64, px1: px1 as f64, py_top: py_top as f64, py_bot: py_bot as f64, t_end: l.t_end_s, nf }))
}

/// How a rectangle is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Look {
    Solid,
    /// An open span (never ended): pale, outlined in its colour.
    Open,
    /// Solid with a white outline, so that back-to-back bars of one job stay apart.
    Hairline,
}

/// One rectangle of the waterfall, in chart coordinates (seconds, row units), with the
/// text a browser shows on hover.
#[derive(Debug, Clone, PartialEq)]
struct Rect {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    color: RGBColor,
    look: Look,
    title: String,
}

/// A bar label at its left end (seconds, row units).
#[derive(Debug, Clone, PartialEq)]
struct Label {
    text: String,
    x: f64,
    y: f64,
}

/// A gap (or gaps merged) shaded across its device's rows.
struct Shade {
    device: u32,
    x0: f64,
    x1: f64,
    color: RGBColor,
}

/// What the waterfall draws in the plot area beyond its background: every rectangle
/// (device busy stretches, gaps, bars) at the canvas's level of detail, and the bar labels.
struct Scene {
    rects: Vec<Rect>,
    labels: Vec<Label>,
    shades: Vec<Shade>,
    /// Jobs in the run (for the title).
    jobs: usize,
}

/// A rectangle under construction: one item, or a band of items each narrower than
/// [`MERGE_BELOW_PX`] that follow each other within a pixel.
struct Acc<K> {
    x0: f64,
    x1: f64,
    /// The first item (an index the caller gives meaning to).
    first: usize,
    n: u32,
    busy_ns: u64,
    /// Time per key (kind, cause) of the items merged.
    tally: Vec<(K, u64)>,
    /// Started narrower than a pixel, so later thin items may merge into it.
    band: bool,
    open: bool,
}

impl<K: PartialEq + Copy> Acc<K> {
    /// The key with the most time (the first one at a tie).
    fn dominant(&self) -> K {
        let mut best = self.tally[0];
        for &(k, t) in &self.tally[1..] {
            if t > best.1 {
                best = (k, t);
            }
        }
        best.0
    }

    /// `kind 62 %, other 38 %` over the tally, three at most.
    fn shares(&self, name: impl Fn(K) -> String) -> String {
        let total: u64 = self.tally.iter().map(|t| t.1).sum::<u64>().max(1);
        let mut t = self.tally.clone();
        t.sort_by(|a, b| b.1.cmp(&a.1));
        let mut parts: Vec<String> = t.iter().take(3).map(|&(k, ns)| format!("{} {:.0} %", name(k), ns as f64 * 100.0 / total as f64)).collect();
        if t.len() > 3 {
            parts.push("…".into());
        }
        parts.join(", ")
    }
}

/// Add an item [x0, x1] (seconds) to `list`: merged into the last rectangle when both are
/// narrower than [`MERGE_BELOW_PX`] and less than a pixel apart, else a rectangle of its own.
#[allow(clippy::too_many_arguments)]
fn push_lod<K: PartialEq + Copy>(list: &mut Vec<Acc<K>>, x0: f64, x1: f64, ns: u64, key: K, first: usize, open: bool, px_per_s: f64) {
    let thin = (x1 - x0) * px_per_s < MERGE_BELOW_PX && !open;
    if let Some(last) = list.last_mut() {
        if thin && last.band && !last.open && (x0 - last.x1) * px_per_s < 1.0 {
            last.x1 = last.x1.max(x1);
            last.n += 1;
            last.busy_ns += ns;
            match last.tally.iter_mut().find(|t| t.0 == key) {
                Some(t) => t.1 += ns,
                None => last.tally.push((key, ns)),
            }
            return;
        }
    }
    list.push(Acc { x0, x1, first, n: 1, busy_ns: ns, tally: vec![(key, ns)], band: thin, open });
}

fn secs(t: f64) -> String {
    format!("{t:.3} s")
}

fn ns_text(ns: u64) -> String {
    duration_ms(ns as f64 / 1e6)
}

/// Each span's job number (order of first appearance, through the analyzer's index: no
/// string hashing per span), job types (in a log mixing proof types) and which jobs' bars
/// get labels.
struct Jobs<'a> {
    ix: crate::analysis::tables::Index<'a>,
    /// The log mixes proof types: labels and titles name them.
    mixed: bool,
    /// Label every bar that fits (few jobs), else only where a labelled job starts on a row.
    every_bar: bool,
    /// Label jobs whose number is a multiple of this.
    stride: usize,
}

impl<'a> Jobs<'a> {
    fn new(run: &'a Run) -> Jobs<'a> {
        let ix = crate::analysis::tables::Index::build(run);
        let n = ix.jobs.len();
        Jobs { mixed: ix.types.len() > 1, every_bar: n <= LABEL_EVERY_BAR_UP_TO, stride: label_stride(n), ix }
    }

    /// The job number of span `i`.
    fn of(&self, i: usize) -> Option<usize> {
        let p = (*self.ix.part_of_span.get(i)?)?;
        Some(self.ix.parts[p as usize].job as usize)
    }

    /// The proof type of job `j`, in a log that mixes them.
    fn type_of(&self, j: usize) -> Option<&str> {
        self.mixed.then(|| self.ix.type_of_job(j as u32))
    }
}

/// The smallest of 1, 2, 5, 10, 20, 50, … that labels at most [`LABELLED_JOBS`] of `jobs`.
fn label_stride(jobs: usize) -> usize {
    let mut decade = 1usize;
    loop {
        for m in [1, 2, 5] {
            let s = m * decade;
            if jobs.div_ceil(s) <= LABELLED_JOBS {
                return s;
            }
        }
        decade = decade.saturating_mul(10);
    }
}

impl Scene {
    fn build(run: &Run, gaps: &[GapMark], l: &Layout) -> Scene {
        let px = l.px_per_s();
        let nf = l.rows.len() as f64;
        let base = |i: usize| nf - 1.0 - i as f64;
        let t = |ns: u64| ns as f64 / 1e9;
        let jobs = Jobs::new(run);
        let mut scene = Scene { rects: Vec::new(), labels: Vec::new(), shades: Vec::new(), jobs: jobs.ix.jobs.len() };
        // One pass over the spans for the devices' busy unions.
        let mut gpu_of: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        if !l.device_rows.is_empty() {
            for s in run.spans.iter().filter(|s| s.kind == SpanKind::Gpu) {
                if let Some(e) = s.end_ns {
                    gpu_of.entry(s.device_or_0()).or_default().push((s.start_ns, e));
                }
            }
        }
        for (i, row) in l.rows.iter().enumerate() {
            match row.kind {
                RowKind::Device(d) => {
                    let busy = union(gpu_of.remove(&d).unwrap_or_default());
                    let mut acc: Vec<Acc<()>> = Vec::new();
                    for (k, &(a, b)) in busy.iter().enumerate() {
                        push_lod(&mut acc, t(a), t(b), b - a, (), k, false, px);
                    }
                    for a in acc {
                        let title = if a.n == 1 {
                            format!("device {d} busy {}\n{} – {}", ns_text(a.busy_ns), secs(a.x0), secs(a.x1))
                        } else {
                            format!("device {d} busy {} of {}: {} stretches under a pixel, merged\n{} – {}", ns_text(a.busy_ns), duration_ms((a.x1 - a.x0) * 1e3), a.n, secs(a.x0), secs(a.x1))
                        };
                        scene.rects.push(Rect { x0: a.x0, x1: a.x1, y0: base(i) + 0.3, y1: base(i) + 0.7, color: BUSY_COLOR, look: Look::Solid, title });
                    }
                    let mut mine: Vec<&GapMark> = gaps.iter().filter(|g| g.device == d).collect();
                    mine.sort_by_key(|g| (g.start_ns, g.end_ns));
                    let mut acc: Vec<Acc<&str>> = Vec::new();
                    for (k, g) in mine.iter().enumerate() {
                        let end = g.end_ns.max(g.start_ns);
                        push_lod(&mut acc, t(g.start_ns), t(end), end - g.start_ns, g.cause.as_str(), k, false, px);
                    }
                    for a in acc {
                        let cause = a.dominant();
                        let color = cause_color(cause);
                        let title = if a.n == 1 {
                            format!("idle: {cause} {}\n{} – {}", ns_text(a.busy_ns), secs(a.x0), secs(a.x1))
                        } else {
                            format!("{} idle gaps under a pixel, merged: {} idle ({})\n{} – {}", a.n, ns_text(a.busy_ns), a.shares(str::to_string), secs(a.x0), secs(a.x1))
                        };
                        scene.shades.push(Shade { device: d, x0: a.x0, x1: a.x1, color });
                        scene.rects.push(Rect { x0: a.x0, x1: a.x1, y0: base(i) + 0.1, y1: base(i) + 0.9, color, look: Look::Solid, title });
                    }
                }
                RowKind::Lane(li) => {
                    let (rects, mut labels) = lane_bars(run, &l.lanes[li], &jobs, base(i), px, l.label_size(), l.row_px >= 16);
                    scene.rects.extend(rects);
                    scene.labels.append(&mut labels);
                }
            }
        }
        scene
    }

    /// The scene as SVG elements in pixels: rectangles with `<title>`s, then the labels.
    fn svg(&self, m: &Mapping, label_size: f64) -> String {
        let mut o = String::with_capacity(self.rects.len() * 160 + self.labels.len() * 80 + 256);
        o.push_str("<g class=\"bars\">\n");
        for r in &self.rects {
            let (x0, x1) = (m.x(r.x0), m.x(r.x1));
            let (y0, y1) = (m.y(r.y1), m.y(r.y0));
            let c = hex(r.color);
            let _ = write!(o, "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{c}\"", (x1 - x0).max(0.0), (y1 - y0).max(0.0));
            match r.look {
                Look::Solid => {}
                Look::Open => {
                    let _ = write!(o, " fill-opacity=\"0.3\" stroke=\"{c}\" stroke-width=\"1\"");
                }
                Look::Hairline => o.push_str(" stroke=\"#FFFFFF\" stroke-width=\"1\""),
            }
            o.push_str("><title>");
            escape_into(&mut o, &r.title);
            o.push_str("</title></rect>\n");
        }
        o.push_str("</g>\n");
        // Labels do not take the hover from the bar under them.
        let _ = writeln!(o, "<g class=\"labels\" font-family=\"{FAMILY}\" font-size=\"{}\" fill=\"#000000\" pointer-events=\"none\">", label_size / 1.24);
        for b in &self.labels {
            let _ = write!(o, "<text x=\"{:.1}\" y=\"{:.1}\" dy=\"0.5ex\">", m.x(b.x), m.y(b.y));
            escape_into(&mut o, &b.text);
            o.push_str("</text>\n");
        }
        o.push_str("</g>\n");
        o
    }
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

fn escape_into(o: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
}

/// The rectangles of one lane, depth by depth (depth 0 first, so kernels are drawn over
/// their call), at the level of detail of `px_per_s`; and the labels of its bars.
fn lane_bars(run: &Run, lane: &Lane, jobs: &Jobs<'_>, y_base: f64, px_per_s: f64, label_size: f64, with_labels: bool) -> (Vec<Rect>, Vec<Label>) {
    let t = |ns: u64| ns as f64 / 1e9;
    let mut by_depth: Vec<Vec<Acc<&SpanKind>>> = Vec::new();
    let mut labels = Vec::new();
    // The right end of the last label of the row (px) and the job it named.
    let mut label_end_px = f64::NEG_INFINITY;
    let mut labelled_job: Option<usize> = None;
    for (k, p) in lane.spans.iter().enumerate() {
        let s = &run.spans[p.index];
        let d = p.depth as usize;
        let (x0, x1) = (t(p.start_ns), t(p.end_ns));
        if by_depth.len() <= d {
            by_depth.resize_with(d + 1, Vec::new);
        }
        push_lod(&mut by_depth[d], x0, x1, p.end_ns - p.start_ns, &s.kind, k, p.open, px_per_s);
        if !(with_labels && d == 0 && matches!(s.kind, SpanKind::Gpu | SpanKind::Synthesis)) {
            continue;
        }
        let job = jobs.of(p.index);
        if !jobs.every_bar && (job.is_none_or(|j| j % jobs.stride != 0) || job == labelled_job) {
            continue;
        }
        let mut label = match (job, s.partition) {
            (Some(j), Some(pn)) => format!("J{j} p{pn}"),
            (None, Some(pn)) => format!("p{pn}"),
            (Some(j), None) => format!("J{j}"),
            (None, None) => continue,
        };
        if let Some(ty) = job.and_then(|j| jobs.type_of(j)) {
            label = format!("{ty} {label}");
        }
        if p.open {
            label.push_str(" (open)");
        }
        let need = label.chars().count() as f64 * label_size * 0.62 + 6.0;
        let x0_px = x0 * px_per_s;
        if (x1 - x0) * px_per_s >= need && x0_px >= label_end_px + LABEL_GAP_PX {
            label_end_px = x0_px + need;
            labelled_job = job;
            labels.push(Label { text: label, x: x0, y: y_base + 0.5 });
        }
    }
    let mut rects = Vec::new();
    for (d, list) in by_depth.into_iter().enumerate() {
        let inset = [0.08, 0.26, 0.36, 0.42][d.min(3)];
        let (y0, y1) = (y_base + inset, y_base + 1.0 - inset);
        for a in list {
            let p = &lane.spans[a.first];
            let s = &run.spans[p.index];
            let (color, look, title) = if a.n == 1 {
                let job = jobs.of(p.index);
                let mut color = kind_color(&s.kind);
                // Top-level bars of every second job are lighter (jobs side by side stay apart).
                if d == 0 && job.is_some_and(|j| j % 2 == 1) {
                    color = lighten(color, JOB_SHADE);
                }
                let look = if a.open {
                    Look::Open
                } else if d == 0 && (a.x1 - a.x0) * px_per_s >= 4.0 {
                    Look::Hairline
                } else {
                    Look::Solid
                };
                (color, look, span_title(s, job, job.and_then(|j| jobs.type_of(j)), a.x0, a.x1, a.open))
            } else {
                let title = format!(
                    "{} spans under a pixel, merged: {} busy of {} ({})\n{} – {}",
                    a.n,
                    ns_text(a.busy_ns),
                    duration_ms((a.x1 - a.x0) * 1e3),
                    a.shares(|k| k.as_str().to_string()),
                    secs(a.x0),
                    secs(a.x1)
                );
                (kind_color(a.dominant()), Look::Solid, title)
            };
            rects.push(Rect { x0: a.x0, x1: a.x1, y0, y1, color, look, title });
        }
    }
    (rects, labels)
}

/// The hover text of one span: kind and duration, job (number, type and id), partition,
/// worker, start and end.
fn span_title(s: &crate::event::Span, job: Option<usize>, ty: Option<&str>, x0: f64, x1: f64, open: bool) -> String {
    let mut o = format!("{} {}", s.kind.as_str(), if open { "(open: never ended)".to_string() } else { ns_text(s.duration_ns()) });
    if let Some(id) = &s.job {
        let _ = write!(o, "\njob J{}", job.map_or("?".to_string(), |j| j.to_string()));
        if let Some(ty) = ty {
            let _ = write!(o, " ({ty})");
        }
        let _ = write!(o, ": {id}");
    }
    if let Some(p) = s.partition {
        let _ = write!(o, "\npartition {p}");
    }
    match (s.device, s.worker) {
        (Some(d), Some(w)) => {
            let _ = write!(o, "\ndevice {d} worker {w}");
        }
        (None, Some(w)) => {
            let _ = write!(o, "\nworker {w}");
        }
        _ => {}
    }
    let _ = write!(o, "\n{} – {}", secs(x0), secs(x1));
    o
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
        let laid = LaidOut::new(&run);
        waterfall_svg(&laid, &gaps, &svg).unwrap();
        waterfall_png(&laid, &gaps, &png).unwrap();
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
            waterfall_png(&laid, &gaps, &dir.join("waterfall-sample.png")).unwrap();
            waterfall_svg(&laid, &gaps, &dir.join("waterfall-sample.svg")).unwrap();
        }
    }

    #[test]
    fn large_run_sizes_the_canvas_from_its_rows_and_bars() {
        let run = synthetic(50, 10, 2, true);
        let gaps = gaps_of(&run);
        let laid = LaidOut::new(&run);
        let l = Layout::new(&laid, &gaps);
        let lanes = l.rows.iter().filter(|r| matches!(r.kind, RowKind::Lane(_))).count();
        assert_eq!(l.rows.len(), lanes + 2, "one summary row per device");
        assert!(l.height > 40 + l.rows.len() as u32 * 12, "{}x{}", l.width, l.height);
        // The median GPU call (5 s) stays at least MIN_BAR_PX wide.
        let px = (l.width - l.label_w) as f64 * 5.0 / l.t_end_s;
        assert!(px >= MIN_BAR_PX * 0.9, "{px} px per GPU call at {}x{}", l.width, l.height);
        let small_run = synthetic(2, 10, 1, true);
        let small_laid = LaidOut::new(&small_run);
        let small = Layout::new(&small_laid, &[]);
        assert!(small.width < l.width);
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("w.png");
        waterfall_png(&laid, &gaps, &png).unwrap();
        waterfall_svg(&laid, &gaps, &dir.path().join("w.svg")).unwrap();
        if let Ok(dir) = std::env::var("PROOFSCOPE_CHART_DIR") {
            waterfall_png(&laid, &gaps, &Path::new(&dir).join("waterfall-50x10.png")).unwrap();
        }
    }

    #[test]
    fn sub_pixel_bars_merge_into_a_band_but_visible_ones_do_not() {
        let mut run = Run::default();
        // 10 000 back-to-back 1 ms kernels inside one long call.
        run.spans.push(crate::event::Span::new(SpanKind::Gpu, 0, 10_000_000_000).worker(0).job("a"));
        for k in 0..10_000u64 {
            let kind = if k % 3 == 0 { SpanKind::Ntt } else { SpanKind::MsmH };
            run.spans.push(crate::event::Span::new(kind, k * 1_000_000, (k + 1) * 1_000_000).worker(0).job("a"));
        }
        run.normalize();
        let lanes = crate::lanes::assign(&run);
        let jobs = Jobs::new(&run);
        // 10 s over 1000 px: each kernel is 0.1 px; they merge into one band of the kind with
        // the most time (msm_h, 2/3), whose title says what it merged. The call stays itself.
        let (rects, _) = lane_bars(&run, &lanes[0], &jobs, 0.0, 100.0, 12.0, true);
        assert_eq!(rects.len(), 2, "{rects:?}");
        let band = &rects[1];
        assert_eq!((band.x0, band.x1), (0.0, 10.0));
        assert_eq!(band.color, kind_color(&SpanKind::MsmH));
        assert!(band.title.starts_with("10000 spans under a pixel, merged: 10 s busy of 10 s (msm_h 67 %, ntt 33 %)"), "{}", band.title);
        // Zoomed in (1 ms = 10 px), every kernel is its own bar.
        let (rects, _) = lane_bars(&run, &lanes[0], &jobs, 0.0, 10_000.0, 12.0, true);
        assert_eq!(rects.len(), 10_001);
        assert!(rects[1].title.starts_with("ntt 1 ms\njob J0: a"), "{}", rects[1].title);
    }

    #[test]
    fn a_mixed_log_labels_bars_with_their_proof_type() {
        let mut run = Run::default();
        // A partitioned job of 10 partitions (PoRep) and a whole proof naming its kind.
        for p in 0..10u64 {
            run.spans.push(crate::event::Span::new(SpanKind::Gpu, p * 100_000_000, (p + 1) * 100_000_000).worker(1).job("a").partition(p as u32));
        }
        run.spans.push(crate::event::Span::new(SpanKind::Gpu, 0, 1_000_000_000).worker(0).job("a").partition(3));
        run.spans.push(crate::event::Span::new(SpanKind::Gpu, 1_000_000_000, 2_000_000_000).worker(0).job("w").arg("kind", "winning-post"));
        run.normalize();
        let lanes = crate::lanes::assign(&run);
        let jobs = Jobs::new(&run);
        let (rects, labels) = lane_bars(&run, &lanes[0], &jobs, 0.0, 1000.0, 12.0, true);
        let texts: Vec<&str> = labels.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["porep-c2 J0 p3", "winning-post J1"]);
        assert!(rects[0].title.contains("job J0 (porep-c2): a\npartition 3"), "{}", rects[0].title);
    }

    /// The SVG's `<title>`s, unescaped enough for the tests.
    fn titles(svg: &str) -> Vec<&str> {
        svg.split("<title>").skip(1).map(|t| &t[..t.find("</title>").unwrap()]).collect()
    }

    /// The bar labels of the SVG (the text elements of its labels group).
    fn bar_labels(svg: &str) -> Vec<&str> {
        let g = &svg[svg.find("<g class=\"labels\"").unwrap()..];
        let g = &g[..g.find("</g>").unwrap()];
        g.split("<text").skip(1).map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()]).collect()
    }

    #[test]
    fn every_bar_has_a_title_with_kind_job_partition_and_duration() {
        let run = synthetic(2, 3, 1, true);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.svg");
        waterfall_svg(&LaidOut::new(&run), &gaps_of(&run), &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        let rects = svg[svg.find("<g class=\"bars\"").unwrap()..].matches("<rect").count();
        let t = titles(&svg);
        assert_eq!(t.len(), rects, "one title per bar");
        // Every span drawn (all but the queue waits) is one bar here (nothing is under a pixel).
        let drawn = run.spans.iter().filter(|s| s.kind != SpanKind::GpuQueue).count();
        assert!(t.len() >= drawn, "{} titles for {drawn} spans", t.len());
        // msm_h of job 1, partition 2: 1.6 s.
        assert!(t.iter().any(|t| t.starts_with("msm_h 1.6 s\njob J1: job1\npartition 2\ndevice 0 worker")), "{t:#?}");
        assert!(t.iter().any(|t| t.starts_with("device 0 busy ")));
    }

    #[test]
    fn labels_stay_readable_at_50_proofs_by_10_partitions() {
        let run = synthetic(50, 10, 2, true);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.svg");
        waterfall_svg(&LaidOut::new(&run), &gaps_of(&run), &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        let labels = bar_labels(&svg);
        // Every 5th proof (50 jobs, at most 12 labelled), once where it starts on a row.
        assert_eq!(label_stride(50), 5);
        let jobs: BTreeSet<usize> = labels.iter().map(|l| l.split(' ').next().unwrap()[1..].parse().unwrap()).collect();
        assert!(jobs.iter().all(|j| j % 5 == 0), "{jobs:?}");
        assert!(jobs.len() >= 8, "most labelled proofs show: {jobs:?}");
        let lanes = crate::lanes::assign(&run).len();
        assert!(labels.len() <= LABELLED_JOBS * lanes, "{} labels on {lanes} lanes", labels.len());
        // Far fewer than one per bar: the rule before labelled all 500 synthesis bars here.
        assert!(labels.len() < 130, "{} labels", labels.len());
        let texts = svg.matches("<text").count();
        assert!(texts < 230, "{texts} text elements in all");
    }

    #[test]
    fn level_of_detail_bounds_the_svg_whatever_the_partition_count() {
        // Same canvas width (the 6000 px cap), 4× the partitions: the drawn elements stay put.
        let count = |proofs: u32| {
            let run = synthetic(proofs, 10, 1, false);
            let laid = LaidOut::new(&run);
            let l = Layout::new(&laid, &[]);
            assert_eq!(l.width - l.label_w, 6000);
            Scene::build(&run, &[], &l).rects.len()
        };
        let (small, large) = (count(1000), count(4000));
        assert!((large as f64) < 1.3 * small as f64, "{small} rects at 10k partitions, {large} at 40k");
        assert!(large < 60_000, "{large}");
    }

    #[test]
    fn empty_run_and_bad_path() {
        let dir = tempfile::tempdir().unwrap();
        waterfall_svg(&LaidOut::new(&Run::default()), &[], &dir.path().join("e.svg")).unwrap();
        let err = waterfall_png(&LaidOut::new(&sample_run()), &[], Path::new("/nonexistent/dir/w.png")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/w.png"), "{err}");
    }

    /// Timed script (not run by default): the waterfall's SVG size and drawing time on
    /// synthetic runs of 1k, 10k and 100k partitions (with kernels), as ratios to the 1k run
    /// of the same process. `cargo test -p timeline --lib waterfall_scaling -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn waterfall_scaling() {
        let dir = tempfile::tempdir().unwrap();
        let mut base: Option<(f64, f64)> = None;
        for proofs in [100u32, 1_000, 10_000] {
            let run = synthetic(proofs, 10, 1, true);
            let analysis = crate::analysis::gaps::analyze(&run, &crate::analysis::AnalyzeOptions::default());
            let gaps = crate::analysis::gaps::marks(&analysis.gaps);
            let p = dir.path().join("w.svg");
            // Best of 3.
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t = std::time::Instant::now();
                waterfall_svg(&LaidOut::new(&run), &gaps, &p).unwrap();
                best = best.min(t.elapsed().as_secs_f64());
            }
            let size = std::fs::metadata(&p).unwrap().len() as f64;
            let (t0, s0) = *base.get_or_insert((best, size));
            println!(
                "waterfall_scaling: {} partitions, {} spans: {:.3} s, {:.2} MB SVG; × the 1k run: time {:.1}, size {:.1}",
                proofs * 10,
                run.spans.len(),
                best,
                size / 1e6,
                best / t0,
                size / s0
            );
        }
    }
}
