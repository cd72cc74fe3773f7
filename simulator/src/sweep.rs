//! `sweep`: every combination of the `--vary` values (`pw=1..16`, `pw=2..16:2`,
//! `gw=1,2,3`, `lock=kernels,two_lock`), simulated in parallel with rayon, gathered into a
//! table (Markdown, Parquet), charts (s/proof vs pw per gw, peak RAM vs pw, GPU
//! utilisation vs pw) and a recommendation per RAM budget: the best s/proof that fits
//! 128/256/384/512/768 GiB, like cuzk's RAM tier table.
//!
//! `sweep.json` holds [`JsonRow`]s: an infeasible or failed point has null figures and its
//! `failure`, as `sweep.parquet` ([`outputs::frame`]).
//!
//! Ranking uses total s/proof (makespan / proofs: what a batch of c proofs experiences,
//! and what the reference's pw sweep reports); points within 1% of each other are ranked
//! by peak RAM, then by their order in the sweep (fewer workers first).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::{canonical_key, Config, ConfigError, VARY_KEYS};
use crate::pipeline::{simulate, Options};
use crate::report::{Failure, SimResult};

/// RAM budgets of the recommendation table, GiB.
pub const RAM_BUDGETS_GIB: [f64; 5] = [128.0, 256.0, 384.0, 512.0, 768.0];

/// Most combinations one sweep may have (each is a config and a result in memory, and a
/// simulation of up to a few seconds).
pub const MAX_POINTS: usize = 10_000;

/// One `--vary key=values` axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

impl std::str::FromStr for Vary {
    type Err = String;
    fn from_str(s: &str) -> Result<Vary, String> {
        let (k, v) = s.split_once('=').ok_or_else(|| format!("--vary `{s}`: expected key=values (e.g. pw=1..16 or lock=kernels,two_lock)"))?;
        let key = k.trim().to_string();
        if canonical_key(&key).is_none() {
            return Err(format!("--vary `{s}`: unknown key `{key}` (known: {})", VARY_KEYS.join(", ")));
        }
        let v = v.trim();
        let values = if let Some((a, rest)) = v.split_once("..") {
            let (b, step) = match rest.split_once(':') {
                Some((b, st)) => (b, st),
                None => (rest, "1"),
            };
            let parse = |x: &str, what: &str| x.trim().parse::<i64>().map_err(|_| format!("--vary `{s}`: {what} `{x}` is not an integer"));
            let (a, b, step) = (parse(a, "range start")?, parse(b, "range end")?, parse(step, "step")?);
            if step <= 0 {
                return Err(format!("--vary `{s}`: the step must be positive"));
            }
            if b < a {
                return Err(format!("--vary `{s}`: the range end {b} is below its start {a}"));
            }
            // In i128: no range of i64s overflows it.
            let count = (b as i128 - a as i128) / step as i128 + 1;
            if count > MAX_POINTS as i128 {
                return Err(format!("--vary `{s}`: {count} values, more than a sweep takes ({MAX_POINTS})"));
            }
            (0..count).map(|i| (a as i128 + i * step as i128).to_string()).collect()
        } else {
            v.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect::<Vec<_>>()
        };
        if values.is_empty() {
            return Err(format!("--vary `{s}`: no values"));
        }
        Ok(Vary { key, values })
    }
}

/// One point of a sweep: the overrides and the config they make.
#[derive(Clone, Debug)]
pub struct Point {
    pub params: Vec<(String, String)>,
    pub config: Config,
}

/// All combinations (the last axis varies fastest). Every combination is validated; an
/// impossible one is an error naming the combination and the field.
pub fn expand(base: &Config, axes: &[Vary]) -> Result<Vec<Point>, ConfigError> {
    // One axis per key: two would overwrite each other and make the table's columns clash.
    for (i, a) in axes.iter().enumerate() {
        if let Some(b) = axes[..i].iter().find(|b| canonical_key(&b.key).is_some() && canonical_key(&b.key) == canonical_key(&a.key)) {
            return Err(ConfigError::Invalid {
                field: "--vary".into(),
                reason: format!("`{}` and `{}` vary the same key; give its values in one --vary", b.key, a.key),
            });
        }
    }
    let total = axes.iter().try_fold(1usize, |acc, a| acc.checked_mul(a.values.len()));
    match total {
        Some(n) if n <= MAX_POINTS => {}
        _ => {
            return Err(ConfigError::Invalid {
                field: "--vary".into(),
                reason: format!("the axes make more than {MAX_POINTS} combinations; narrow them or use a step (pw=1..64:4)"),
            })
        }
    }
    let mut points = vec![Point { params: Vec::new(), config: base.clone() }];
    for ax in axes {
        let mut next = Vec::with_capacity(points.len() * ax.values.len());
        for p in &points {
            for v in &ax.values {
                let mut c = p.config.clone();
                c.set(&ax.key, v)?;
                let mut params = p.params.clone();
                params.push((ax.key.clone(), v.clone()));
                next.push(Point { params, config: c });
            }
        }
        points = next;
    }
    for p in &points {
        p.config.validate().map_err(|e| ConfigError::Invalid {
            field: format!("combination {}", fmt_params(&p.params)),
            reason: e.to_string(),
        })?;
    }
    Ok(points)
}

fn fmt_params(p: &[(String, String)]) -> String {
    p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// One simulated point.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Row {
    pub params: Vec<(String, String)>,
    pub result: SimResult,
}

impl Row {
    pub fn param(&self, key: &str) -> Option<&str> {
        let want = canonical_key(key)?;
        self.params.iter().find(|(k, _)| canonical_key(k) == Some(want)).map(|(_, v)| v.as_str())
    }

    /// Why the point is infeasible: the simulation's failure, or `incomplete` when it
    /// ended without one but with proofs left; None for a feasible point.
    pub fn failure(&self) -> Option<Failure> {
        let r = &self.result;
        match (&r.failure, r.feasible) {
            (Some(f), _) => Some(f.clone()),
            (None, true) => None,
            (None, false) => Some(Failure {
                kind: "incomplete".into(),
                t_s: r.makespan_s,
                detail: format!("{} of {} proofs completed", r.proofs_completed, r.proofs),
            }),
        }
    }
}

/// One row of `sweep.json`. An infeasible or failed point carries null for its figures
/// (`result`), never numbers — a VRAM-OOM point's "s/proof" used to be the time at which
/// it failed — and says why in `failure`, as `sweep.parquet` does. Layout history in
/// docs/reference/summary-json.md#sweepjson.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JsonRow {
    /// The varied keys and their values, as given on the command line (`[["pw", "2"], ["gw", "1"]]`).
    pub params: Vec<(String, String)>,
    /// Whether the configuration ran every proof to completion.
    pub feasible: bool,
    /// Why not (`ram_oom`, `vram_oom`, `horizon`, `incomplete`; simulated time, detail);
    /// null when it ran.
    pub failure: Option<Failure>,
    /// The simulation's figures (as `simulate --json`); null when the point is infeasible.
    pub result: Option<SimResult>,
}

impl From<&Row> for JsonRow {
    fn from(r: &Row) -> JsonRow {
        JsonRow {
            params: r.params.clone(),
            feasible: r.result.feasible,
            failure: r.failure(),
            result: Some(r.result.clone()).filter(|x| x.feasible),
        }
    }
}

/// The rows as `sweep.json` holds them.
pub fn json_rows(rows: &[Row]) -> Vec<JsonRow> {
    rows.iter().map(JsonRow::from).collect()
}

/// Simulate every point in parallel; `tick` is called once per finished point (a progress bar).
pub fn run_points(points: &[Point], tick: &(dyn Fn() + Sync)) -> Vec<Row> {
    points
        .par_iter()
        .map(|p| {
            let r = simulate(&p.config, Options::default()).result;
            tick();
            Row { params: p.params.clone(), result: r }
        })
        .collect()
}

/// [`run_points`], each point with its prediction interval from `replications` seeds
/// (none for fewer than 2).
pub fn run_points_replicated(points: &[Point], replications: u32, tick: &(dyn Fn() + Sync)) -> Vec<Row> {
    points
        .par_iter()
        .map(|p| {
            let mut r = simulate(&p.config, Options::default()).result;
            r.interval = crate::interval::replicate(&p.config, replications);
            tick();
            Row { params: p.params.clone(), result: r }
        })
        .collect()
}

/// The best feasible result: lowest total s/proof; within 1%, lowest peak RAM; then first.
pub fn best_index(results: &[SimResult]) -> Option<usize> {
    let feasible: Vec<usize> = (0..results.len()).filter(|&i| results[i].feasible).collect();
    let min = feasible.iter().map(|&i| results[i].total_s_per_proof).fold(f64::INFINITY, f64::min);
    feasible
        .into_iter()
        .filter(|&i| results[i].total_s_per_proof <= min * 1.01)
        .min_by(|&a, &b| results[a].peak_ram_gib.total_cmp(&results[b].peak_ram_gib).then(a.cmp(&b)))
}

/// The recommendation for one RAM budget.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recommendation {
    pub ram_budget_gib: f64,
    /// Index into the rows, if any point fits.
    pub row: Option<usize>,
}

pub fn recommend(rows: &[Row]) -> Vec<Recommendation> {
    RAM_BUDGETS_GIB
        .iter()
        .map(|&b| {
            let fits: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].result.feasible && rows[i].result.peak_ram_gib <= b).collect();
            let rs: Vec<SimResult> = fits.iter().map(|&i| rows[i].result.clone()).collect();
            Recommendation { ram_budget_gib: b, row: best_index(&rs).map(|k| fits[k]) }
        })
        .collect()
}

/// The Markdown table of a sweep, then the recommendations.
pub fn markdown(rows: &[Row], axes: &[Vary]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
    let _ = write!(s, "|");
    for k in &keys {
        let _ = write!(s, " {k} |");
    }
    let bands = rows.iter().any(|r| r.result.interval.is_some());
    let _ = writeln!(
        s,
        " feasible | steady s/proof | total s/proof |{} latency s | GPU union % | CPU % | peak RAM GiB | peak VRAM GiB | practical floor | binding |",
        if bands { " total 80 % interval |" } else { "" }
    );
    let _ = write!(s, "|");
    for _ in &keys {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s, "---|---:|---:|{}---:|---:|---:|---:|---:|---:|---|", if bands { "---:|" } else { "" });
    for r in rows {
        let _ = write!(s, "|");
        for (_, v) in &r.params {
            let _ = write!(s, " {v} |");
        }
        let x = &r.result;
        let feas = match r.failure() {
            Some(f) => format!("{} at {:.0} s", f.kind, f.t_s),
            None => "yes".to_string(),
        };
        // An infeasible point has no figures (its "s/proof" would be when it failed).
        let num = |v: f64, digits: usize| if x.feasible { format!("{v:.digits$}") } else { "—".to_string() };
        let band = match (&x.interval, bands) {
            (_, false) => String::new(),
            (Some(iv), true) => format!(" {:.2}–{:.2} |", iv.total_s_per_proof.lo, iv.total_s_per_proof.hi),
            (None, true) => " — |".to_string(),
        };
        let _ = writeln!(
            s,
            " {feas} | {} | {} |{band} {} | {} | {} | {} | {} | {} | {} |",
            num(x.steady_state_s_per_proof, 2),
            num(x.total_s_per_proof, 2),
            num(x.latency_mean_s, 2),
            num(100.0 * x.busiest_gpu_utilization(), 1),
            num(100.0 * x.cpu_util, 1),
            num(x.peak_ram_gib, 0),
            num(x.peak_vram_gib, 1),
            num(x.floors.practical_s_per_proof, 2),
            if x.feasible { x.floors.practical_binding.as_str() } else { "—" }
        );
    }
    let _ = writeln!(s, "\n### Recommendation per RAM budget (best total s/proof that fits)\n");
    let _ = writeln!(s, "| RAM budget | configuration | total s/proof | steady s/proof | peak RAM GiB |");
    let _ = writeln!(s, "|---:|---|---:|---:|---:|");
    for rec in recommend(rows) {
        match rec.row {
            Some(i) => {
                let r = &rows[i];
                let _ = writeln!(
                    s,
                    "| {:.0} GiB | {} | {:.2} | {:.2} | {:.0} |",
                    rec.ram_budget_gib,
                    if r.params.is_empty() { "(base)".to_string() } else { fmt_params(&r.params) },
                    r.result.total_s_per_proof,
                    r.result.steady_state_s_per_proof,
                    r.result.peak_ram_gib
                );
            }
            None => {
                let _ = writeln!(s, "| {:.0} GiB | nothing fits | — | — | — |", rec.ram_budget_gib);
            }
        }
    }
    s
}

/// A value of an axis as a number for a chart: a number, or a size (`128GiB`) in GiB.
pub fn axis_number(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().or_else(|| v.parse::<timeline::bytes::ByteSize>().ok().map(|b| b.as_gib()))
}

/// Series for a chart: x = `x_key`'s value, one series per value of `series_key` (or one
/// series), y = `f(result)`, minimised over the other axes (the best each x can do).
pub fn series(rows: &[Row], x_key: &str, series_key: Option<&str>, f: impl Fn(&SimResult) -> f64) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.result.feasible) {
        let Some(x) = r.param(x_key).and_then(axis_number) else { continue };
        let name = match series_key {
            Some(k) => format!("{k}={}", r.param(k).unwrap_or("?")),
            None => "all".to_string(),
        };
        let y = f(&r.result);
        let idx = match out.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                out.push((name, Vec::new()));
                out.len() - 1
            }
        };
        let pts = &mut out[idx].1;
        match pts.iter_mut().find(|(px, _)| *px == x) {
            Some(p) => p.1 = p.1.min(y),
            None => pts.push((x, y)),
        }
    }
    for (_, pts) in out.iter_mut() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The x axis of the charts: pw when varied, else the first numeric axis.
pub fn chart_x_key(rows: &[Row], axes: &[Vary]) -> Option<String> {
    let numeric = |k: &str| rows.iter().all(|r| r.param(k).is_some_and(|v| axis_number(v).is_some()));
    if axes.iter().any(|a| canonical_key(&a.key) == Some("pipeline.pw")) {
        return axes.iter().find(|a| canonical_key(&a.key) == Some("pipeline.pw")).map(|a| a.key.clone());
    }
    axes.iter().find(|a| numeric(&a.key)).map(|a| a.key.clone())
}

#[cfg(feature = "analysis")]
pub mod outputs {
    //! The heavy outputs of a sweep: Parquet table and SVG charts.
    use std::path::{Path, PathBuf};

    use polars::prelude::*;

    use super::{axis_number, best_index, chart_x_key, fmt_params, series, Row, Vary, RAM_BUDGETS_GIB};
    use crate::config::canonical_key;
    use timeline::chart::{Callout, HLine, LineChart};

    /// The sweep as a DataFrame: one column per varied key — Int64 when every value is an
    /// integer (pw, gw), Float64 when every value is a number or a size (sizes in GiB, the
    /// column named `<key>_gib`), else String (lock) —, then the figures. An infeasible or
    /// failed row has nulls in every figure (and its reason in `failure`), never the time at
    /// which it failed; an interval edge the row does not have is null, not NaN.
    pub fn frame(rows: &[Row], axes: &[Vary]) -> PolarsResult<DataFrame> {
        let mut cols: Vec<Column> = Vec::new();
        for a in axes {
            let v: Vec<Option<&str>> = rows.iter().map(|r| r.param(&a.key)).collect();
            // Every present value through `parse`, or None when one does not parse.
            fn all<T>(v: &[Option<&str>], parse: impl Fn(&str) -> Option<T>) -> Option<Vec<Option<T>>> {
                v.iter().map(|x| match x {
                    None => Some(None),
                    Some(s) => parse(s.trim()).map(Some),
                }).collect()
            }
            let ints = all(&v, |s| s.parse::<i64>().ok());
            let plain = all(&v, |s| s.parse::<f64>().ok());
            let sizes = all(&v, super::axis_number);
            cols.push(match (ints, plain, sizes) {
                (Some(i), _, _) => Column::new(a.key.as_str().into(), i),
                (None, Some(f), _) => Column::new(a.key.as_str().into(), f),
                (None, None, Some(g)) => Column::new(format!("{}_gib", a.key).as_str().into(), g),
                _ => Column::new(a.key.as_str().into(), v),
            });
        }
        let f = |name: &str, g: &dyn Fn(&Row) -> f64| {
            Column::new(name.into(), rows.iter().map(|r| Some(g(r)).filter(|x| r.result.feasible && x.is_finite())).collect::<Vec<Option<f64>>>())
        };
        cols.push(Column::new("feasible".into(), rows.iter().map(|r| r.result.feasible).collect::<Vec<bool>>()));
        cols.push(Column::new(
            "failure".into(),
            rows.iter().map(|r| r.failure().map(|x| x.kind)).collect::<Vec<Option<String>>>(),
        ));
        cols.push(f("steady_state_s_per_proof", &|r| r.result.steady_state_s_per_proof));
        cols.push(f("total_s_per_proof", &|r| r.result.total_s_per_proof));
        cols.push(f("total_s_per_proof_lo", &|r| r.result.interval.as_ref().map_or(f64::NAN, |i| i.total_s_per_proof.lo)));
        cols.push(f("total_s_per_proof_hi", &|r| r.result.interval.as_ref().map_or(f64::NAN, |i| i.total_s_per_proof.hi)));
        cols.push(f("latency_mean_s", &|r| r.result.latency_mean_s));
        cols.push(f("busiest_gpu_utilization", &|r| r.result.busiest_gpu_utilization()));
        cols.push(f("cpu_util", &|r| r.result.cpu_util));
        cols.push(f("bandwidth_util", &|r| r.result.bandwidth_util));
        cols.push(f("peak_ram_gib", &|r| r.result.peak_ram_gib));
        cols.push(f("peak_vram_gib", &|r| r.result.peak_vram_gib));
        cols.push(f("theoretical_floor_s", &|r| r.result.floors.theoretical_s_per_proof));
        cols.push(f("practical_floor_s", &|r| r.result.floors.practical_s_per_proof));
        cols.push(Column::new(
            "binding".into(),
            rows.iter().map(|r| Some(r.result.floors.practical_binding.clone()).filter(|_| r.result.feasible)).collect::<Vec<Option<String>>>(),
        ));
        DataFrame::new_infer_height(cols)
    }

    pub fn write_parquet(rows: &[Row], axes: &[Vary], path: &Path) -> anyhow::Result<()> {
        let mut df = frame(rows, axes)?;
        timeline::export::parquet::write_frame(&mut df, path)?;
        Ok(())
    }

    /// The same table as CSV (`sweep --csv DIR`).
    pub fn write_csv(rows: &[Row], axes: &[Vary], path: &Path) -> anyhow::Result<()> {
        let mut df = frame(rows, axes)?;
        timeline::export::csv::write_csv(&mut df, path)?;
        Ok(())
    }

    /// The RAM budgets the peak-RAM chart draws as lines: the values of a varied memory
    /// budget (`total_budget`) or machine RAM (`ram`), in GiB; else the recommendation's
    /// budgets up to the first one above every peak.
    pub fn ram_lines(rows: &[Row], axes: &[Vary]) -> Vec<HLine> {
        for (key, what) in [("memory.total_budget", "RAM budget"), ("machine.ram_gib", "machine RAM")] {
            if let Some(a) = axes.iter().find(|a| canonical_key(&a.key) == Some(key)) {
                let mut v: Vec<f64> = a.values.iter().filter_map(|x| axis_number(x)).filter(|x| x.is_finite()).collect();
                v.sort_by(f64::total_cmp);
                v.dedup();
                if !v.is_empty() {
                    return v.into_iter().map(|g| HLine { y: g, label: format!("{what} {} GiB ({})", timeline::chart::style::si(g), a.key) }).collect();
                }
            }
        }
        let peak = rows.iter().filter(|r| r.result.feasible).map(|r| r.result.peak_ram_gib).fold(0.0, f64::max);
        let upto = RAM_BUDGETS_GIB.iter().position(|&b| b >= peak).unwrap_or(RAM_BUDGETS_GIB.len() - 1);
        RAM_BUDGETS_GIB[..=upto].iter().map(|&g| HLine { y: g, label: format!("RAM budget {g:.0} GiB") }).collect()
    }

    /// The recommended point (the best total s/proof, [`best_index`]) at `y(result)`, on the
    /// chart whose x axis is `x`.
    fn recommended(rows: &[Row], x: &str, y: impl Fn(&crate::report::SimResult) -> f64, unit: &str) -> Vec<Callout> {
        let results: Vec<crate::report::SimResult> = rows.iter().map(|r| r.result.clone()).collect();
        let Some(i) = best_index(&results) else { return Vec::new() };
        let r = &rows[i];
        let Some(xv) = r.param(x).and_then(axis_number) else { return Vec::new() };
        let yv = y(&r.result);
        vec![Callout { x: xv, y: yv, label: format!("recommended: {} — {yv:.1} {unit}", fmt_params(&r.params)) }]
    }

    /// The three charts; returns the files written (none when no axis is numeric). The
    /// recommended point is called out on the s/proof and peak-RAM charts, and the RAM
    /// budgets ([`ram_lines`]) are lines on the peak-RAM chart.
    pub fn write_charts(rows: &[Row], axes: &[Vary], dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        let Some(x) = chart_x_key(rows, axes) else { return Ok(Vec::new()) };
        let series_key = axes
            .iter()
            .find(|a| canonical_key(&a.key) == Some("pipeline.gw") && a.key != x)
            .map(|a| a.key.clone());
        let sk = series_key.as_deref();
        let mut out = Vec::new();
        let by = sk.map(|k| format!(" per {k}")).unwrap_or_default();
        let p = dir.join("s_per_proof.svg");
        let mut lines = series(rows, &x, sk, |r| r.total_s_per_proof);
        if rows.iter().any(|r| r.result.interval.is_some()) {
            // The 80 % interval as a band: its two edges, one line each.
            for (edge, g) in [("80% lo", (|r: &crate::report::SimResult| r.interval.as_ref().map_or(r.total_s_per_proof, |i| i.total_s_per_proof.lo)) as fn(&crate::report::SimResult) -> f64), ("80% hi", |r: &crate::report::SimResult| r.interval.as_ref().map_or(r.total_s_per_proof, |i| i.total_s_per_proof.hi))] {
                lines.extend(series(rows, &x, sk, g).into_iter().map(|(n, v)| (format!("{n} {edge}"), v)));
            }
        }
        let title = format!("s/proof vs {x}{by} (best over the other axes)");
        let chart = LineChart { title: &title, x_label: &x, y_label: "total s/proof", series: &lines, callouts: recommended(rows, &x, |r| r.total_s_per_proof, "s/proof"), hlines: Vec::new() };
        timeline::chart::line_chart_svg(&chart, &p)?;
        out.push(p);
        let p = dir.join("peak_ram.svg");
        let title = format!("peak RAM vs {x}{by}");
        let ram = series(rows, &x, sk, |r| r.peak_ram_gib);
        let chart = LineChart { title: &title, x_label: &x, y_label: "peak RAM, GiB", series: &ram, callouts: recommended(rows, &x, |r| r.peak_ram_gib, "GiB"), hlines: ram_lines(rows, axes) };
        timeline::chart::line_chart_svg(&chart, &p)?;
        out.push(p);
        let p = dir.join("gpu_util.svg");
        timeline::chart::lines_svg(&format!("GPU union utilisation vs {x}{by}"), &x, "GPU util, %", &series(rows, &x, sk, |r| -100.0 * r.busiest_gpu_utilization()).into_iter().map(|(n, v)| (n, v.into_iter().map(|(a, b)| (a, -b)).collect())).collect::<Vec<_>>(), &p)?;
        out.push(p);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_lists_and_steps() {
        let v: Vary = "pw=1..4".parse().unwrap();
        assert_eq!(v.values, ["1", "2", "3", "4"]);
        let v: Vary = "pw=2..9:3".parse().unwrap();
        assert_eq!(v.values, ["2", "5", "8"]);
        let v: Vary = "lock=kernels, two_lock".parse().unwrap();
        assert_eq!(v.values, ["kernels", "two_lock"]);
        // The extremes of i64 neither overflow nor allocate.
        let v: Vary = "seed=9223372036854775806..9223372036854775807".parse().unwrap();
        assert_eq!(v.values, ["9223372036854775806", "9223372036854775807"]);
        let v: Vary = "pw=1..4294967295:4294967294".parse().unwrap();
        assert_eq!(v.values, ["1", "4294967295"]);
        for bad in ["pw", "bogus=1,2", "pw=5..1", "pw=1..x", "pw=1..4:0", "pw=", "pw=-9223372036854775808..9223372036854775807", "pw=1..20000"] {
            assert!(bad.parse::<Vary>().is_err(), "{bad}");
        }
    }
}
