//! Scoring of a measurement campaign: how well the simulator, calibrated on one configuration
//! of a grid, predicts the others (`proofscope campaign score`, called by
//! `scripts/campaign-analyze.sh`).
//!
//! Why a module: the scoring used to live in Python heredocs of that script, keyed on the
//! display labels of [`crate::parity`]'s metrics; a renamed label silently emptied a column.
//! Here it is typed and tested: the inputs are the parity reports ([`Parity`], keyed by each
//! metric's stable `key`, the `summary.json` field it comes from), the prediction
//! ([`SimResult`]) and the measured [`Summary`] of every configuration; the outputs are serde
//! structs whose JSON is the `campaign.json` / `host-runs.json` the Python wrote (same field
//! names, same order), and the figures are computed exactly as it did (same means, same
//! ordinal ranks, same tie rules), so reports stay comparable across the move.
//!
//! Also here: the base config of a campaign ([`base_config`]: the reference config with the
//! measured machine's sizes) and the run-by-run host table ([`host_run`]).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use timeline::analysis::Summary;
use timeline::event::counters;
use timeline::{Run, SpanKind};

use crate::parity::{MetricParity, Parity, METRICS};
use crate::SimResult;

/// Metric keys the campaign scores (see [`crate::parity::METRICS`]).
pub mod key {
    /// Steady s/proof from partition completions: the campaign's headline throughput.
    pub const PARTITION_RATE: &str = "throughput.partition_rate_s_per_proof";
    /// Steady s/proof from proof completions.
    pub const STEADY: &str = "throughput.steady_state_s_per_proof";
    pub const GPU_UTILIZATION: &str = "utilization.gpu_utilization";
    pub const LATENCY_MEAN: &str = "throughput.latency_mean_s";
    pub const TOTAL: &str = "throughput.total_s_per_proof";
    /// Peak RSS (GiB).
    pub const PEAK_RSS: &str = "memory.peak_rss_gib";
}

/// Configurations predicted within this many percent of the lowest prediction are the
/// model's tied best.
pub const TIE_PREDICTED_PCT: f64 = 0.5;
/// The campaign's target: MAPE of the steady s/proof at most this (and the same best).
pub const TARGET_MAPE_PCT: f64 = 5.0;
/// Peak RSS predicted within this many percent counts as right.
pub const RSS_TOLERANCE_PCT: f64 = 10.0;

/// The key of a metric of a parity report: its `key` field, or, for reports written before
/// metrics had one, the key [`METRICS`] gives its display label.
pub fn metric_key(m: &MetricParity) -> &str {
    if !m.key.is_empty() {
        return &m.key;
    }
    METRICS.iter().find(|(_, label, _, _)| *label == m.metric).map_or("", |(k, _, _, _)| k)
}

/// The first metric of `p` with this key.
pub fn metric<'a>(p: &'a Parity, key: &str) -> Option<&'a MetricParity> {
    p.metrics.iter().find(|m| metric_key(m) == key)
}

/// One metric over the runs of a configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MetricMean {
    /// Mean of the measured values over the runs that have the metric.
    pub measured: Option<f64>,
    /// The prediction (the first report's: every run of a configuration has the same one).
    pub predicted: Option<f64>,
    /// (predicted − mean) ÷ mean, percent (the first report's error when nothing was measured).
    pub error_pct: Option<f64>,
    /// (max − min) ÷ mean of the measured values, percent; only with two runs or more.
    pub spread_pct: Option<f64>,
}

/// `key` over the parity reports of one configuration (the first is the main run, then the
/// repeats): the measured mean, the prediction, its error against the mean, the spread.
pub fn mean_metric(parities: &[Parity], key: &str) -> MetricMean {
    let vals = run_values(parities, key);
    let first = parities.first().and_then(|p| metric(p, key));
    let predicted = first.map(|m| m.predicted);
    let mut error_pct = first.map(|m| m.error_pct);
    if vals.is_empty() {
        return MetricMean { measured: None, predicted, error_pct, spread_pct: None };
    }
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    if let Some(p) = predicted {
        if mean != 0.0 {
            error_pct = Some(100.0 * (p - mean) / mean);
        }
    }
    let spread_pct = (vals.len() > 1 && mean != 0.0).then(|| {
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        100.0 * (max - min) / mean
    });
    MetricMean { measured: Some(mean), predicted, error_pct, spread_pct }
}

/// The measured value of `key` in each run's parity, in run order.
fn run_values(parities: &[Parity], key: &str) -> Vec<f64> {
    parities.iter().filter_map(|p| metric(p, key)).map(|m| m.measured).collect()
}

/// Mean absolute percentage error of (measured, predicted) pairs: 100 × mean(|p − m| ÷ m).
/// `None` without pairs.
pub fn mape(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let sum: f64 = pairs.iter().map(|(m, p)| (p - m).abs() / m).sum();
    Some(100.0 * sum / pairs.len() as f64)
}

/// Ordinal ranks (1-based): ties ranked in the order they come, as the campaign always did
/// (not the average ranks of the textbook Spearman).
pub fn ordinal_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].partial_cmp(&values[b]).unwrap_or(std::cmp::Ordering::Equal));
    let mut r = vec![0.0; values.len()];
    for (pos, i) in order.into_iter().enumerate() {
        r[i] = pos as f64 + 1.0;
    }
    r
}

/// Spearman's rank correlation of two equally long series, 1 − 6 Σd² ÷ (n (n² − 1)) over
/// [`ordinal_ranks`]; `None` under three points.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len().min(b.len());
    if n < 3 {
        return None;
    }
    let (ra, rb) = (ordinal_ranks(&a[..n]), ordinal_ranks(&b[..n]));
    let d2: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - y) * (x - y)).sum();
    Some(1.0 - 6.0 * d2 / (n * (n * n - 1)) as f64)
}

/// The names whose value is at most `best × (1 + pct/100)`, in the given order.
pub fn within_pct<'a>(items: &[(&'a str, f64)], best: f64, pct: f64) -> Vec<&'a str> {
    items.iter().filter(|(_, v)| *v <= best * (1.0 + pct / 100.0)).map(|(n, _)| *n).collect()
}

/// What the campaign knows about one configuration.
#[derive(Clone, Debug)]
pub struct ConfigInput {
    pub name: String,
    /// The configuration the model was calibrated on (left out of the MAPEs).
    pub calibration: bool,
    /// Parity reports: the main run first, then the repeats.
    pub parities: Vec<Parity>,
    /// `simulate --json` of the configuration.
    pub prediction: SimResult,
    /// The analyzer's summary of the main run.
    pub measured: Summary,
    /// The binding resource the model names in the analyzer's words (`verdict.binding` of the
    /// simulated timeline's summary: a pre-registered prediction's `binding`); `None` where the
    /// prediction does not say (the two-half flow).
    pub predicted_binding: Option<String>,
    /// The registered 80 % intervals [lo, hi] of the steady s/proof (partition rate) and of
    /// the total s/proof (a pre-registered prediction's `lo`/`hi`): coverage is counted
    /// against them as registered; `None` computes them from `prediction`'s interval around
    /// the predicted value (the two-half flow).
    pub registered_steady_interval: Option<(f64, f64)>,
    pub registered_total_interval: Option<(f64, f64)>,
    /// The grid line it ran (a pre-registered campaign's `grid_line`): what tells a one-change
    /// what-if ([`effects`]); `None` in the two-half flow.
    pub grid: Option<crate::prereg::GridLine>,
}

/// One row of `campaign.json`'s `configs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfigRow {
    pub config: String,
    pub calibration: bool,
    pub runs: usize,
    /// (max − min) ÷ mean of the runs' steady s/proof (partition rate), percent.
    pub measured_spread_pct: Option<f64>,
    /// Steady s/proof from partition completions (mean over the runs).
    pub measured_steady_s: Option<f64>,
    /// The same, one per run (the track record's residuals, [`crate::track_record`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_steady_runs: Vec<f64>,
    pub predicted_steady_s: Option<f64>,
    pub error_pct: Option<f64>,
    /// Steady s/proof from proof completions.
    pub measured_steady_proof_ends_s: Option<f64>,
    pub predicted_steady_proof_ends_s: Option<f64>,
    pub proof_ends_error_pct: Option<f64>,
    pub measured_gpu_util_pct: Option<f64>,
    pub predicted_gpu_util_pct: Option<f64>,
    pub util_error_pct: Option<f64>,
    pub measured_latency_s: Option<f64>,
    pub predicted_latency_s: Option<f64>,
    pub latency_error_pct: Option<f64>,
    /// Makespan ÷ proofs.
    pub measured_total_s: Option<f64>,
    /// The same, one per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_total_runs: Vec<f64>,
    pub predicted_total_s: Option<f64>,
    pub total_error_pct: Option<f64>,
    /// The analyzer's verdict on the main run.
    pub measured_binding: String,
    pub measured_headline: String,
    pub gpu_floor_s: Option<f64>,
    pub synthesis_floor_s: Option<f64>,
    pub cpu_floor_s: Option<f64>,
    pub efficiency_vs_floor: Option<f64>,
    /// The simulator's floors.
    pub predicted_verdict: String,
    pub predicted_theoretical_floor_s: f64,
    pub predicted_practical_floor_s: f64,
    pub predicted_practical_binding: String,
    /// The prediction's 80 % interval of the steady s/proof (partition rate) and of the
    /// total s/proof, around the predicted values ([`crate::interval`]); absent when the
    /// prediction has no interval (`simulate --replications 0`, older prediction.json).
    #[serde(default)]
    pub predicted_steady_interval: Option<(f64, f64)>,
    #[serde(default)]
    pub predicted_total_interval: Option<(f64, f64)>,
    /// The measured runs' values (one per run) that fall inside those intervals, and how many
    /// were checked.
    #[serde(default)]
    pub runs_inside_steady: usize,
    #[serde(default)]
    pub runs_checked_steady: usize,
    #[serde(default)]
    pub runs_inside_total: usize,
    #[serde(default)]
    pub runs_checked_total: usize,
    /// Peak RSS (GiB), mean over the runs, predicted, and the error (percent).
    #[serde(default)]
    pub measured_peak_rss_gib: Option<f64>,
    #[serde(default)]
    pub predicted_peak_rss_gib: Option<f64>,
    #[serde(default)]
    pub rss_error_pct: Option<f64>,
    /// The binding resource the model names in the analyzer's words, and whether it is the
    /// measured one (`measured_binding`); absent where the prediction does not say.
    #[serde(default)]
    pub predicted_binding: Option<String>,
    #[serde(default)]
    pub binding_correct: Option<bool>,
}

/// `campaign.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CampaignScore {
    pub calibrated_on: String,
    pub configs: Vec<ConfigRow>,
    /// MAPE of the steady s/proof (partition rate), calibration configuration excluded.
    pub mape_pct: Option<f64>,
    pub mape_proof_ends_pct: Option<f64>,
    pub mape_gpu_util_pct: Option<f64>,
    pub mape_latency_pct: Option<f64>,
    pub mape_total_pct: Option<f64>,
    /// Configurations with a measured and a predicted steady s/proof, fastest first.
    pub ranking_measured: Vec<String>,
    pub ranking_predicted: Vec<String>,
    pub spearman_rho: Option<f64>,
    pub best_measured: Option<String>,
    pub best_predicted: Option<String>,
    /// The measured and the predicted best have the same name.
    pub same_best_strict: bool,
    /// Configurations within the measured best's run-to-run spread of it (grid order).
    pub tied_best_measured: Vec<String>,
    /// Configurations predicted within [`TIE_PREDICTED_PCT`] of the lowest prediction.
    pub tied_best_predicted: Vec<String>,
    /// The measured best is among the model's tied best.
    pub same_best: bool,
    /// MAPE ≤ [`TARGET_MAPE_PCT`] and `same_best`.
    pub target_met: bool,
    /// Coverage: the share of measured runs (every run of the predicted configurations)
    /// inside their predicted 80 % interval, percent (honest: 70–90 %), for the steady
    /// s/proof (partition rate) and the total; with the number of runs checked.
    #[serde(default)]
    pub coverage_pct: Option<f64>,
    #[serde(default)]
    pub coverage_runs: usize,
    #[serde(default)]
    pub coverage_total_pct: Option<f64>,
    #[serde(default)]
    pub coverage_total_runs: usize,
    /// Predicted configurations whose binding resource the model named as the analyzer did
    /// on the measured (main) run, of those where the model names one.
    #[serde(default)]
    pub binding_correct: usize,
    #[serde(default)]
    pub binding_checked: usize,
    /// Predicted configurations whose peak RSS is predicted within [`RSS_TOLERANCE_PCT`], of
    /// those with both figures.
    #[serde(default)]
    pub rss_within_10pct: usize,
    #[serde(default)]
    pub rss_checked: usize,
    /// A pre-registered campaign: what the check of predictions.json found (its hash, its
    /// timestamp, the first predicted run after it); absent in the two-half flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preregistration: Option<crate::prereg::Registration>,
    /// The scores per regime (the configurations' name prefix, [`regime_of`]), predicted
    /// configurations only.
    #[serde(default)]
    pub regimes: Vec<RegimeRow>,
    /// The what-if validation: every predicted configuration one change away from a
    /// calibration configuration, its effect measured against predicted ([`effects`]).
    #[serde(default)]
    pub effects: Vec<EffectRow>,
    /// Where RAM or the GPU starts to bind along each pw series of the grid, measured and
    /// predicted ([`switch_points`]).
    #[serde(default)]
    pub switch_points: Vec<SwitchRow>,
}

/// One pw series of a grid: configurations alike in everything but pw (calibration ones
/// included), and the first pw at which RAM or the GPU binds — the analyzer's verdict
/// `memory`, `gpu` or `dispatch/lock` ([`binds_ram_or_gpu`]) — on the measured runs and on the
/// simulated ones (issue 21: predicted within one step of the grid).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SwitchRow {
    /// What the series shares (`gw 2, lock kernels, split true, finalizers 1`, and its knobs).
    pub series: String,
    /// Its configurations in pw order, and their pws.
    pub configs: Vec<String>,
    pub pws: Vec<u32>,
    /// The first pw at which RAM or the GPU binds; `None`: at no pw of the series.
    pub measured_pw: Option<u32>,
    pub predicted_pw: Option<u32>,
    /// Steps of the series between the two (a switch at no pw counts as one step past the
    /// last), and whether that is at most one.
    pub steps_apart: usize,
    pub within_one_step: bool,
}

/// Whether the analyzer's binding resource is host RAM or the GPU side (its kernels or its
/// dispatch and lock).
pub fn binds_ram_or_gpu(binding: &str) -> bool {
    matches!(binding, "memory" | "gpu" | "dispatch/lock")
}

/// [`SwitchRow`]s: the grid's configurations grouped by every field but pw, the groups with
/// at least two pws (one configuration per pw: the first in grid order), in the order of
/// their first configuration; configurations without a grid line or a predicted binding are
/// left out.
pub fn switch_points(configs: &[ConfigInput], rows: &[ConfigRow]) -> Vec<SwitchRow> {
    let mut groups: Vec<(String, Vec<(u32, &str, &str, &str)>)> = Vec::new();
    for c in configs {
        let (Some(g), Some(r)) = (c.grid.as_ref(), rows.iter().find(|r| r.config == c.name)) else { continue };
        let Some(pred) = r.predicted_binding.as_deref() else { continue };
        let mut knobs: Vec<String> = g.knobs.iter().filter(|(k, v)| !(k == "circuit" && v == "porep-like")).map(|(k, v)| format!("{k}={v}")).collect();
        knobs.sort();
        let mut key = format!("gw {}, lock {}, split {}, finalizers {}", g.gw, g.lock, g.split, g.finalizers);
        if !knobs.is_empty() {
            key.push_str(&format!(", {}", knobs.join(" ")));
        }
        let item = (g.pw, c.name.as_str(), r.measured_binding.as_str(), pred);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) if v.iter().any(|x| x.0 == g.pw) => {}
            Some((_, v)) => v.push(item),
            None => groups.push((key, vec![item])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(series, mut v)| {
            v.sort_by_key(|x| x.0);
            let (m, p) = (v.iter().position(|x| binds_ram_or_gpu(x.2)), v.iter().position(|x| binds_ram_or_gpu(x.3)));
            let steps = m.unwrap_or(v.len()).abs_diff(p.unwrap_or(v.len()));
            SwitchRow {
                series,
                configs: v.iter().map(|x| x.1.to_string()).collect(),
                pws: v.iter().map(|x| x.0).collect(),
                measured_pw: m.map(|i| v[i].0),
                predicted_pw: p.map(|i| v[i].0),
                steps_apart: steps,
                within_one_step: steps <= 1,
            }
        })
        .collect()
}

/// The regime of a configuration: its name up to the first `-` (`syn-pw1-whole` → `syn`;
/// the pre-registered grid names each configuration after its regime).
pub fn regime_of(name: &str) -> &str {
    name.split('-').next().unwrap_or(name)
}

/// The scores of one regime (`campaign.json`'s `regimes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RegimeRow {
    pub regime: String,
    /// Its predicted configurations, grid order.
    pub configs: Vec<String>,
    /// MAPE of the steady s/proof (partition rate) and of the total s/proof, percent.
    pub mape_pct: Option<f64>,
    pub mape_total_pct: Option<f64>,
    /// Runs inside their predicted 80 % interval (steady s/proof), percent, and runs checked.
    pub coverage_pct: Option<f64>,
    pub coverage_runs: usize,
    pub binding_correct: usize,
    pub binding_checked: usize,
}

/// [`RegimeRow`]s of the predicted configurations, in the order their regimes first appear.
pub fn regimes(rows: &[ConfigRow]) -> Vec<RegimeRow> {
    let mut order: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| !r.calibration) {
        let g = regime_of(&r.config);
        if !order.contains(&g) {
            order.push(g);
        }
    }
    order
        .into_iter()
        .map(|g| {
            let sub: Vec<ConfigRow> = rows.iter().filter(|r| !r.calibration && regime_of(&r.config) == g).cloned().collect();
            let cov = coverage(&sub, |r| (r.runs_inside_steady, r.runs_checked_steady));
            let (binding_correct, binding_checked) = binding_tally(&sub);
            RegimeRow {
                regime: g.to_string(),
                configs: sub.iter().map(|r| r.config.clone()).collect(),
                mape_pct: mape_of(&sub, |r| r.measured_steady_s, |r| r.predicted_steady_s),
                mape_total_pct: mape_of(&sub, |r| r.measured_total_s, |r| r.predicted_total_s),
                coverage_pct: cov.0,
                coverage_runs: cov.1,
                binding_correct,
                binding_checked,
            }
        })
        .collect()
}

/// A what-if checked (`campaign.json`'s `effects`): a predicted configuration that differs
/// from a calibration configuration in one thing only, so its effect — its steady s/proof
/// against the calibration configuration's, measured and as the registered predictions have
/// it — is the effect of that change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EffectRow {
    pub config: String,
    /// The calibration configuration it changes.
    pub base: String,
    /// The change, `field base → config` (`split true → false`, `prep_threads — → 2`).
    pub change: String,
    /// (config ÷ base − 1) × 100 of the steady s/proof (partition rate, mean over the runs).
    pub measured_effect_pct: Option<f64>,
    pub predicted_effect_pct: Option<f64>,
    /// predicted − measured effect, percentage points.
    pub error_points: Option<f64>,
    /// |error_points| ≤ [`EFFECT_TOLERANCE_POINTS`].
    pub within_tolerance: Option<bool>,
}

/// A what-if holds when its predicted effect is within this many percentage points of the
/// measured one (issue 21: "predicted within 5 %").
pub const EFFECT_TOLERANCE_POINTS: f64 = 5.0;

/// The one field in which `b` differs from `a` (`pw`, `gw`, `lock`, `split`, `finalizers`,
/// or a knob), as `field a → b`; `None` when they differ in none or in more than one.
pub fn one_change(a: &crate::prereg::GridLine, b: &crate::prereg::GridLine) -> Option<String> {
    let mut d = Vec::new();
    let mut field = |k: &str, x: String, y: String| {
        if x != y {
            d.push(format!("{k} {x} → {y}"));
        }
    };
    field("pw", a.pw.to_string(), b.pw.to_string());
    field("gw", a.gw.to_string(), b.gw.to_string());
    field("lock", a.lock.clone(), b.lock.clone());
    field("split", a.split.to_string(), b.split.to_string());
    field("finalizers", a.finalizers.to_string(), b.finalizers.to_string());
    let mut keys: Vec<&str> = a.knobs.iter().chain(&b.knobs).map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    let or_dash = |v: Option<&str>| v.unwrap_or("—").to_string();
    for k in keys {
        let (x, y) = (a.knob(k), b.knob(k));
        // The circuit's default is porep-like.
        let (x, y) = if k == "circuit" { (Some(a.circuit()), Some(b.circuit())) } else { (x, y) };
        field(k, or_dash(x), or_dash(y));
    }
    (d.len() == 1).then(|| d.remove(0))
}

/// [`EffectRow`]s: each predicted configuration with a grid line one change away from a
/// calibration configuration's (the first such one, grid order).
pub fn effects(configs: &[ConfigInput], rows: &[ConfigRow]) -> Vec<EffectRow> {
    let row_of = |n: &str| rows.iter().find(|r| r.config == n);
    let bases: Vec<(&ConfigInput, &crate::prereg::GridLine)> = configs.iter().filter(|c| c.calibration).filter_map(|c| Some((c, c.grid.as_ref()?))).collect();
    let mut out = Vec::new();
    for c in configs.iter().filter(|c| !c.calibration) {
        let Some(g) = c.grid.as_ref() else { continue };
        let Some((base, change)) = bases.iter().find_map(|(b, bg)| Some((*b, one_change(bg, g)?))) else { continue };
        let (Some(r), Some(br)) = (row_of(&c.name), row_of(&base.name)) else { continue };
        let effect = |x: Option<f64>, y: Option<f64>| Some((nonzero(x)? / nonzero(y)? - 1.0) * 100.0);
        let measured = effect(r.measured_steady_s, br.measured_steady_s);
        let predicted = effect(r.predicted_steady_s, br.predicted_steady_s);
        let error = measured.zip(predicted).map(|(m, p)| p - m);
        out.push(EffectRow {
            config: c.name.clone(),
            base: base.name.clone(),
            change,
            measured_effect_pct: measured,
            predicted_effect_pct: predicted,
            error_points: error,
            within_tolerance: error.map(|e| e.abs() <= EFFECT_TOLERANCE_POINTS),
        });
    }
    out
}

/// Per-run values of `key` inside the interval `iv`: (inside, checked).
fn inside(parities: &[Parity], key: &str, iv: Option<(f64, f64)>) -> (usize, usize) {
    let Some((lo, hi)) = iv else { return (0, 0) };
    let vals: Vec<f64> = parities.iter().filter_map(|p| metric(p, key)).map(|m| m.measured).filter(|v| *v != 0.0).collect();
    (vals.iter().filter(|v| **v >= lo && **v <= hi).count(), vals.len())
}

/// Predicted configurations whose binding resource the model named as the analyzer did, and
/// those where the model names one: (right, checked).
fn binding_tally(rows: &[ConfigRow]) -> (usize, usize) {
    let b: Vec<bool> = rows.iter().filter(|r| !r.calibration).filter_map(|r| r.binding_correct).collect();
    (b.iter().filter(|x| **x).count(), b.len())
}

/// Predicted configurations with a measured peak RSS whose prediction is within
/// [`RSS_TOLERANCE_PCT`], and those checked: (within, checked).
fn rss_tally(rows: &[ConfigRow]) -> (usize, usize) {
    let r: Vec<bool> = rows.iter().filter(|r| !r.calibration).filter(|r| r.measured_peak_rss_gib.is_some()).filter_map(|r| r.rss_error_pct).map(|e| e.abs() <= RSS_TOLERANCE_PCT).collect();
    (r.iter().filter(|x| **x).count(), r.len())
}

/// Coverage in percent of (inside, checked) pairs summed over the predicted configurations.
pub fn coverage(rows: &[ConfigRow], pick: fn(&ConfigRow) -> (usize, usize)) -> (Option<f64>, usize) {
    let (i, n) = rows.iter().filter(|r| !r.calibration).map(pick).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    ((n > 0).then(|| 100.0 * i as f64 / n as f64), n)
}

fn row(c: &ConfigInput) -> ConfigRow {
    let m = |k| mean_metric(&c.parities, k);
    let (s, q, u, l, t) = (m(key::PARTITION_RATE), m(key::STEADY), m(key::GPU_UTILIZATION), m(key::LATENCY_MEAN), m(key::TOTAL));
    let rss = m(key::PEAK_RSS);
    let iv = c.prediction.interval.as_ref();
    let steady_iv = c.registered_steady_interval.or_else(|| iv.zip(s.predicted).map(|(i, p)| i.steady_partitions_s_per_proof.around(p)));
    let total_iv = c.registered_total_interval.or_else(|| iv.zip(t.predicted).map(|(i, p)| i.total_s_per_proof.around(p)));
    let (in_s, n_s) = inside(&c.parities, key::PARTITION_RATE, steady_iv);
    let (in_t, n_t) = inside(&c.parities, key::TOTAL, total_iv);
    let v = &c.measured.verdict;
    let f = &c.prediction.floors;
    ConfigRow {
        config: c.name.clone(),
        calibration: c.calibration,
        runs: c.parities.len(),
        measured_spread_pct: s.spread_pct,
        measured_steady_s: s.measured,
        measured_steady_runs: run_values(&c.parities, key::PARTITION_RATE),
        predicted_steady_s: s.predicted,
        error_pct: s.error_pct,
        measured_steady_proof_ends_s: q.measured,
        predicted_steady_proof_ends_s: q.predicted,
        proof_ends_error_pct: q.error_pct,
        measured_gpu_util_pct: u.measured,
        predicted_gpu_util_pct: u.predicted,
        util_error_pct: u.error_pct,
        measured_latency_s: l.measured,
        predicted_latency_s: l.predicted,
        latency_error_pct: l.error_pct,
        measured_total_s: t.measured,
        measured_total_runs: run_values(&c.parities, key::TOTAL),
        predicted_total_s: t.predicted,
        total_error_pct: t.error_pct,
        measured_binding: v.binding.clone(),
        measured_headline: v.headline.clone(),
        gpu_floor_s: v.floors.gpu_floor_s_per_proof,
        synthesis_floor_s: v.floors.synthesis_floor_s_per_proof,
        cpu_floor_s: v.floors.cpu_floor_s_per_proof,
        efficiency_vs_floor: v.efficiency_vs_floor,
        predicted_verdict: f.verdict.clone(),
        predicted_theoretical_floor_s: f.theoretical_s_per_proof,
        predicted_practical_floor_s: f.practical_s_per_proof,
        predicted_practical_binding: f.practical_binding.clone(),
        predicted_steady_interval: steady_iv,
        predicted_total_interval: total_iv,
        runs_inside_steady: in_s,
        runs_checked_steady: n_s,
        runs_inside_total: in_t,
        runs_checked_total: n_t,
        measured_peak_rss_gib: rss.measured,
        predicted_peak_rss_gib: rss.predicted,
        rss_error_pct: rss.error_pct,
        predicted_binding: c.predicted_binding.clone(),
        binding_correct: c.predicted_binding.as_ref().map(|b| *b == v.binding),
    }
}

/// A value that counts: present and non-zero (what the scoring skips otherwise).
fn nonzero(x: Option<f64>) -> Option<f64> {
    x.filter(|v| *v != 0.0)
}

/// MAPE over the predicted configurations (the calibration one excluded) that have a
/// non-zero measurement and a prediction.
pub fn mape_of(rows: &[ConfigRow], measured: fn(&ConfigRow) -> Option<f64>, predicted: fn(&ConfigRow) -> Option<f64>) -> Option<f64> {
    let pairs: Vec<(f64, f64)> = rows.iter().filter(|r| !r.calibration).filter_map(|r| Some((nonzero(measured(r))?, predicted(r)?))).collect();
    mape(&pairs)
}

/// Score a campaign: `configs` in grid order, `calibrated_on` the calibration configuration.
pub fn score(calibrated_on: &str, configs: &[ConfigInput]) -> CampaignScore {
    let rows: Vec<ConfigRow> = configs.iter().map(row).collect();
    let cov = coverage(&rows, |r| (r.runs_inside_steady, r.runs_checked_steady));
    let cov_total = coverage(&rows, |r| (r.runs_inside_total, r.runs_checked_total));
    let (binding_correct, binding_checked) = binding_tally(&rows);
    let (rss_within, rss_checked) = rss_tally(&rows);
    // Configurations with a measured and a predicted steady s/proof, in grid order.
    let ranked: Vec<(&str, f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.config.as_str(), nonzero(r.measured_steady_s)?, nonzero(r.predicted_steady_s)?)))
        .collect();
    let sorted_by = |f: fn(&(&str, f64, f64)) -> f64| {
        let mut v = ranked.clone();
        v.sort_by(|a, b| f(a).partial_cmp(&f(b)).unwrap_or(std::cmp::Ordering::Equal));
        v.into_iter().map(|r| r.0.to_string()).collect::<Vec<_>>()
    };
    let ranking_measured = sorted_by(|r| r.1);
    let ranking_predicted = sorted_by(|r| r.2);
    let measured: Vec<f64> = ranked.iter().map(|r| r.1).collect();
    let predicted: Vec<f64> = ranked.iter().map(|r| r.2).collect();
    let spearman_rho = spearman(&measured, &predicted);
    let best_measured = ranking_measured.first().cloned();
    let best_predicted = ranking_predicted.first().cloned();
    // Ties. Measured: configurations whose mean is within the best's run-to-run spread of it
    // are not told apart by the measurements (only with repeats; else the best alone).
    // Predicted: within TIE_PREDICTED_PCT of the lowest prediction. The best configurations
    // agree when the measured best is among the model's tied best.
    let names = |col: &[f64]| ranked.iter().zip(col).map(|(r, v)| (r.0, *v)).collect::<Vec<_>>();
    let tied_best_measured = match ranked.iter().find(|r| Some(r.0) == best_measured.as_deref()) {
        Some(best) => {
            let spread = rows.iter().find(|r| r.config == best.0).and_then(|r| r.measured_spread_pct).unwrap_or(0.0);
            within_pct(&names(&measured), best.1, spread)
        }
        None => Vec::new(),
    };
    let low = predicted.iter().copied().reduce(f64::min);
    let tied_best_predicted = low.map_or_else(Vec::new, |low| within_pct(&names(&predicted), low, TIE_PREDICTED_PCT));
    let to_strings = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
    let (tied_best_measured, tied_best_predicted) = (to_strings(tied_best_measured), to_strings(tied_best_predicted));
    let mape_pct = mape_of(&rows, |r| r.measured_steady_s, |r| r.predicted_steady_s);
    let same_best = best_measured.as_ref().is_some_and(|b| tied_best_predicted.contains(b));
    CampaignScore {
        calibrated_on: calibrated_on.to_string(),
        mape_pct,
        mape_proof_ends_pct: mape_of(&rows, |r| r.measured_steady_proof_ends_s, |r| r.predicted_steady_proof_ends_s),
        mape_gpu_util_pct: mape_of(&rows, |r| r.measured_gpu_util_pct, |r| r.predicted_gpu_util_pct),
        mape_latency_pct: mape_of(&rows, |r| r.measured_latency_s, |r| r.predicted_latency_s),
        mape_total_pct: mape_of(&rows, |r| r.measured_total_s, |r| r.predicted_total_s),
        ranking_measured,
        ranking_predicted,
        spearman_rho,
        same_best_strict: best_measured.is_some() && best_measured == best_predicted,
        best_measured,
        best_predicted,
        tied_best_measured,
        tied_best_predicted,
        same_best,
        target_met: mape_pct.is_some_and(|m| m <= TARGET_MAPE_PCT) && same_best,
        coverage_pct: cov.0,
        coverage_runs: cov.1,
        coverage_total_pct: cov_total.0,
        coverage_total_runs: cov_total.1,
        binding_correct,
        binding_checked,
        rss_within_10pct: rss_within,
        rss_checked,
        preregistration: None,
        regimes: regimes(&rows),
        effects: effects(configs, &rows),
        switch_points: switch_points(configs, &rows),
        configs: rows,
    }
}

/// `x` with `d` decimals, `—` when absent.
fn num(x: Option<f64>, d: usize) -> String {
    x.map_or_else(|| "—".to_string(), |v| format!("{v:.d$}"))
}

/// A signed percentage with one decimal, `—` when absent.
fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "—".to_string(), |v| format!("{v:+.1}%"))
}

impl CampaignScore {
    /// `campaign.md` (without the host section, [`host_runs_markdown`]). `cal_runs`: how many
    /// runs of the calibration configuration the model was fitted on.
    pub fn markdown(&self, cal_runs: usize) -> String {
        let rows = &self.configs;
        let cal = &self.calibrated_on;
        let repeated = rows.iter().any(|r| r.runs > 1);
        let mut md = vec![
            format!(
                "| config | {}measured s/proof | predicted | error | GPU util meas. | pred. | error | latency meas. s | pred. | error | measured bottleneck | predicted verdict |",
                if repeated { "runs | spread | " } else { "" }
            ),
            format!("|---|{}---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|", if repeated { "---:|---:|" } else { "" }),
        ];
        for r in rows {
            let name = if r.calibration { format!("{} (calibration)", r.config) } else { r.config.clone() };
            let rep = if repeated {
                let spread = r.measured_spread_pct.map_or_else(|| "—".to_string(), |s| format!("{s:.1}%"));
                format!("{} | {} | ", r.runs, spread)
            } else {
                String::new()
            };
            md.push(format!(
                "| {name} | {rep}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                num(r.measured_steady_s, 2),
                num(r.predicted_steady_s, 2),
                pct(r.error_pct),
                num(r.measured_gpu_util_pct, 1),
                num(r.predicted_gpu_util_pct, 1),
                pct(r.util_error_pct),
                num(r.measured_latency_s, 2),
                num(r.predicted_latency_s, 2),
                pct(r.latency_error_pct),
                r.measured_binding,
                r.predicted_verdict
            ));
        }
        if repeated {
            md.push(String::new());
            md.push("With repeated runs (`REPEATS`), the measured figures are the mean over a configuration's runs, errors are against that mean, and *spread* is (max − min) ÷ mean of its runs' steady s/proof: the run-to-run noise the prediction is up against.".into());
        }
        let mut fl = vec![
            "| config | measured s/proof (steady) | GPU floor | synthesis floor | CPU floor | best floor ÷ measured | predicted theoretical floor | predicted practical floor (binding) |".to_string(),
            "|---|---:|---:|---:|---:|---:|---:|---|".to_string(),
        ];
        for r in rows {
            fl.push(format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} ({}) |",
                r.config,
                num(r.measured_steady_s, 2),
                num(r.gpu_floor_s, 2),
                num(r.synthesis_floor_s, 2),
                num(r.cpu_floor_s, 2),
                num(r.efficiency_vs_floor, 2),
                num(Some(r.predicted_theoretical_floor_s), 2),
                num(Some(r.predicted_practical_floor_s), 2),
                r.predicted_practical_binding
            ));
        }
        let runs_txt = if cal_runs > 1 { format!("its {cal_runs} runs together") } else { "one run".to_string() };
        let dash_if_empty = |v: &[String]| if v.is_empty() { "—".to_string() } else { v.join(", ") };
        let best = |b: &Option<String>| b.clone().unwrap_or_else(|| "None".into());
        let predicted_n = rows.iter().filter(|r| !r.calibration).count();
        let mut lines = vec!["# Campaign: predictions vs measurements".to_string(), String::new()];
        if let Some(reg) = &self.preregistration {
            lines.extend(registration_markdown(reg));
        }
        lines.extend([
            format!("Model calibrated on **{cal}** only ({runs_txt}; {}), then simulated at every other configuration. Steady-state s/proof, GPU union utilisation and mean latency are computed the same way on the measured and the simulated timelines: both go through the analyzer's `summarize`, so each figure is the number `summary.json` gives for that run. Steady-state s/proof is the partition completion rate × partitions per proof ((last − first partition end) ÷ (n − 1)): with a handful of proofs whose partitions interleave, the spacing of *proof* completions depends on which partition happens to finish last (its MAPE is given too). Errors are (predicted − measured) ÷ measured.", if self.preregistration.is_some() { "one model per circuit family, `cal/<family>/model.toml`, fit notes in `cal/<family>/calibrate.txt`" } else { "`model.toml`, fit notes in `calibrate.txt`" }),
            String::new(),
        ]);
        lines.extend(md);
        lines.push(String::new());
        lines.push(format!(
            "- **MAPE (steady s/proof, {predicted_n} predicted configurations): {} %** (target ≤ 5 %); GPU utilisation {} %; latency {} %; total s/proof (makespan ÷ proofs) {} %; steady s/proof from proof completions {} %.",
            num(self.mape_pct, 2),
            num(self.mape_gpu_util_pct, 2),
            num(self.mape_latency_pct, 2),
            num(self.mape_total_pct, 2),
            num(self.mape_proof_ends_pct, 2)
        ));
        if self.coverage_runs > 0 || self.coverage_total_runs > 0 {
            let how = match self.preregistration.as_ref().and_then(|r| r.track_record.as_ref()) {
                Some(t) => format!(
                    "intervals: the model's track record — point × e^q10 … point × e^q90 of ln(measured ÷ predicted) over {} runs of {} earlier campaign(s) ({}): steady {:+.3} … {:+.3}, total {:+.3} … {:+.3}; `campaign predict --track-record`",
                    t.steady.runs,
                    t.sources.len(),
                    t.sources.iter().map(|s| format!("`{}`", s.path)).collect::<Vec<_>>().join(", "),
                    t.steady.q10,
                    t.steady.q90,
                    t.total.q10,
                    t.total.q90
                ),
                None => "intervals: p10–p90 of the replications with other seeds, widened by the calibrated run spread; `simulate --replications`".to_string(),
            };
            lines.push(format!(
                "- **Coverage: {} % of {} measured runs inside their predicted 80 % interval (steady s/proof)**, {} % of {} (total s/proof); honest is 70–90 % ({how}).",
                num(self.coverage_pct, 0),
                self.coverage_runs,
                num(self.coverage_total_pct, 0),
                self.coverage_total_runs
            ));
        }
        if self.binding_checked > 0 {
            lines.push(format!(
                "- **Binding resource named correctly: {} of {} predicted configurations** (the analyzer's verdict on the simulated timeline against its verdict on the measured run; target ≥ 90 %).",
                self.binding_correct, self.binding_checked
            ));
        }
        if self.rss_checked > 0 {
            lines.push(format!("- **Peak RSS within {RSS_TOLERANCE_PCT:.0} %: {} of {} predicted configurations.**", self.rss_within_10pct, self.rss_checked));
        }
        lines.push(format!(
            "- Best configuration measured: **{}**; predicted: **{}** ({}). Tied best measured (within the best's run-to-run spread): {}; tied best predicted (within 0.5 % of the lowest prediction): {}. The measured best is {} the model's tied best, so the best configurations {}.",
            best(&self.best_measured),
            best(&self.best_predicted),
            if self.same_best_strict { "same" } else { "different names" },
            dash_if_empty(&self.tied_best_measured),
            dash_if_empty(&self.tied_best_predicted),
            if self.same_best { "among" } else { "NOT among" },
            if self.same_best { "agree" } else { "DISAGREE" }
        ));
        lines.push(format!("- Ranking measured: {}", self.ranking_measured.join(", ")));
        lines.push(format!("- Ranking predicted: {}", self.ranking_predicted.join(", ")));
        lines.push(format!("- Spearman rank correlation: {}.", num(self.spearman_rho, 3)));
        lines.push(format!("- Target (MAPE ≤ 5 % and the same best configuration): **{}**.", if self.target_met { "met" } else { "NOT met" }));
        if rows.iter().any(|r| r.predicted_steady_interval.is_some() || r.predicted_binding.is_some()) {
            lines.push(String::new());
            lines.push("## Intervals, binding resource and peak RSS".into());
            lines.push(String::new());
            lines.extend(self.interval_table());
        }
        if !self.regimes.is_empty() {
            lines.push(String::new());
            lines.push("## By regime".into());
            lines.push(String::new());
            lines.extend(self.regime_table());
        }
        if !self.effects.is_empty() {
            lines.push(String::new());
            lines.push("## What-if validation: one change from a calibration configuration".into());
            lines.push(String::new());
            lines.extend(self.effect_table());
        }
        if !self.switch_points.is_empty() {
            lines.push(String::new());
            lines.push("## Where RAM or the GPU starts to bind, along each pw series".into());
            lines.push(String::new());
            lines.extend(self.switch_table());
        }
        lines.push(String::new());
        lines.push("## Floors and bottlenecks".into());
        lines.push(String::new());
        lines.extend(fl);
        lines.push(String::new());
        lines.push("Measured floors are the analyzer's (`summary.json` → `verdict.floors`); predicted ones the simulator's (`prediction.json` → `floors`).".into());
        lines.push(String::new());
        lines.push("Parity plot: [parity-campaign.svg](parity-campaign.svg). Throughput evolution: [evolution.md](evolution.md).".into());
        lines.push(String::new());
        lines.join("\n")
    }

    /// Per pw series: the first pw at which RAM or the GPU binds, measured and predicted.
    fn switch_table(&self) -> Vec<String> {
        let held = self.switch_points.iter().filter(|r| r.within_one_step).count();
        let seen = self.switch_points.iter().filter(|r| r.measured_pw.is_some()).count();
        let pw = |p: Option<u32>| p.map_or_else(|| "none in the series".to_string(), |p| format!("pw {p}"));
        let mut t = vec![
            format!(
                "Configurations alike but for pw (calibration ones included); the first pw whose binding resource is `memory`, `gpu` or `dispatch/lock` (the analyzer's verdict, measured run against simulated). **{held} of {} series within one step of the grid** ({seen} with a switch measured; the issue's target: within one step).",
                self.switch_points.len()
            ),
            String::new(),
            "| series | configurations (pw) | RAM or GPU binds from, measured | predicted | steps apart | within one step? |".to_string(),
            "|---|---|---|---|---:|:---:|".to_string(),
        ];
        for r in &self.switch_points {
            let cfgs: Vec<String> = r.configs.iter().zip(&r.pws).map(|(c, p)| format!("{c} ({p})")).collect();
            t.push(format!("| {} | {} | {} | {} | {} | {} |", r.series, cfgs.join(", "), pw(r.measured_pw), pw(r.predicted_pw), r.steps_apart, if r.within_one_step { "yes" } else { "**no**" }));
        }
        t
    }

    /// Per regime: MAPE (steady, total), coverage and the binding resource's score.
    fn regime_table(&self) -> Vec<String> {
        let mut t = vec![
            "| regime | configurations | MAPE steady | MAPE total | coverage (runs) | binding right |".to_string(),
            "|---|---|---:|---:|---:|---:|".to_string(),
        ];
        for g in &self.regimes {
            t.push(format!(
                "| {} | {} | {} % | {} % | {} % ({}) | {} of {} |",
                g.regime,
                g.configs.join(", "),
                num(g.mape_pct, 2),
                num(g.mape_total_pct, 2),
                num(g.coverage_pct, 0),
                g.coverage_runs,
                g.binding_correct,
                g.binding_checked
            ));
        }
        t
    }

    /// Per one-change configuration: the effect of the change, measured and predicted.
    fn effect_table(&self) -> Vec<String> {
        let held = self.effects.iter().filter(|e| e.within_tolerance == Some(true)).count();
        let checked = self.effects.iter().filter(|e| e.within_tolerance.is_some()).count();
        let mut t = vec![
            format!(
                "Each configuration below differs from a calibration configuration in one thing; its effect is its steady s/proof (partition rate, mean of its runs) against that configuration's, measured and as registered before it ran. **{held} of {checked} held** (predicted within {EFFECT_TOLERANCE_POINTS:.0} points of the measured effect)."
            ),
            String::new(),
            "| configuration | change (from) | effect measured | effect predicted | error (points) | held? |".to_string(),
            "|---|---|---:|---:|---:|:---:|".to_string(),
        ];
        for e in &self.effects {
            t.push(format!(
                "| {} | {} ({}) | {} | {} | {} | {} |",
                e.config,
                e.change,
                e.base,
                pct(e.measured_effect_pct),
                pct(e.predicted_effect_pct),
                e.error_points.map_or_else(|| "—".to_string(), |v| format!("{v:+.1}")),
                e.within_tolerance.map_or("—", |b| if b { "yes" } else { "**no**" })
            ));
        }
        t
    }

    /// Per configuration: the measured steady and total s/proof against the predicted 80 %
    /// intervals (runs inside), the binding resource measured and predicted, peak RSS.
    fn interval_table(&self) -> Vec<String> {
        let iv = |i: Option<(f64, f64)>| i.map_or_else(|| "—".to_string(), |(lo, hi)| format!("{lo:.2}–{hi:.2}"));
        let inside = |i: usize, n: usize| if n == 0 { "—".to_string() } else { format!("{i}/{n}") };
        let mut t = vec![
            "| config | steady s/proof meas. | 80 % interval | runs inside | total s/proof meas. | 80 % interval | runs inside | binding measured | binding predicted | right? | peak RSS meas. GiB | pred. | error |".to_string(),
            "|---|---:|---:|---:|---:|---:|---:|---|---|:---:|---:|---:|---:|".to_string(),
        ];
        for r in &self.configs {
            let name = if r.calibration { format!("{} (calibration)", r.config) } else { r.config.clone() };
            t.push(format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                num(r.measured_steady_s, 2),
                iv(r.predicted_steady_interval),
                inside(r.runs_inside_steady, r.runs_checked_steady),
                num(r.measured_total_s, 2),
                iv(r.predicted_total_interval),
                inside(r.runs_inside_total, r.runs_checked_total),
                r.measured_binding,
                r.predicted_binding.as_deref().unwrap_or("—"),
                r.binding_correct.map_or("—", |b| if b { "yes" } else { "**no**" }),
                num(r.measured_peak_rss_gib, 3),
                num(r.predicted_peak_rss_gib, 3),
                pct(r.rss_error_pct)
            ));
        }
        t
    }

    /// The campaign's parity plot (predicted against measured steady s/proof, log axes said
    /// so on their labels, y = x and a ±5 % band; the model's pick, its best predicted
    /// configuration, ringed, and the measured best too where it differs), as SVG text
    /// written by hand; `None` when no configuration has both.
    pub fn parity_svg(&self) -> Option<String> {
        let pts: Vec<(f64, f64, &str, bool)> = self
            .configs
            .iter()
            .filter_map(|r| Some((nonzero(r.measured_steady_s)?, nonzero(r.predicted_steady_s)?, r.config.as_str(), r.calibration)))
            .collect();
        if pts.is_empty() {
            return None;
        }
        const W: i64 = 720;
        const H: i64 = 640;
        const M: i64 = 70;
        let lo = pts.iter().map(|p| p.0.min(p.1)).fold(f64::INFINITY, f64::min) * 0.8;
        let hi = pts.iter().map(|p| p.0.max(p.1)).fold(f64::NEG_INFINITY, f64::max) * 1.25;
        let span = hi.ln() - lo.ln();
        let lx = |v: f64| M as f64 + (v.ln() - lo.ln()) / span * (W - 2 * M) as f64;
        let ly = |v: f64| (H - M) as f64 - (v.ln() - lo.ln()) / span * (H - 2 * M) as f64;
        let (w2, h2) = (W as f64 / 2.0, H as f64 / 2.0);
        let mut s = vec![
            format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="DejaVu Sans, sans-serif" font-size="11">"#),
            format!(r#"<rect width="{W}" height="{H}" fill="white"/>"#),
            format!(
                r#"<text x="{}" y="24" text-anchor="middle" font-size="14">Campaign parity: steady s/proof, MAPE {} % (calibrated on {})</text>"#,
                py_float(w2),
                num(self.mape_pct, 2),
                self.calibrated_on
            ),
        ];
        let band = [(lo, lo * 0.95), (hi, hi * 0.95), (hi, hi * 1.05), (lo, lo * 1.05)];
        let points: Vec<String> = band.iter().map(|&(x, y)| format!("{:.1},{:.1}", lx(x), ly(y.max(lo).min(hi)))).collect();
        s.push(format!(r##"<polygon fill="#2ca02c" fill-opacity="0.2" points="{}"/>"##, points.join(" ")));
        s.push(format!(r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#, lx(lo), ly(lo), lx(hi), ly(hi)));
        s.push(format!(r##"<rect x="{M}" y="{M}" width="{}" height="{}" fill="none" stroke="#444"/>"##, W - 2 * M, H - 2 * M));
        let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        for e in e0..=e1 {
            // 10^e as Python computes it: exact for e ≥ 0, 1 ÷ 10^−e (correctly rounded) below.
            let p10 = if e >= 0 { 10f64.powi(e) } else { 1.0 / 10f64.powi(-e) };
            for k in [1.0, 2.0, 5.0] {
                let v = k * p10;
                if lo <= v && v <= hi {
                    let g = fmt_g(v);
                    s.push(format!(
                        r##"<text x="{:.1}" y="{}" text-anchor="middle">{g}</text><line x1="{:.1}" y1="{}" x2="{:.1}" y2="{}" stroke="#444"/>"##,
                        lx(v),
                        H - M + 16,
                        lx(v),
                        H - M,
                        lx(v),
                        H - M + 4
                    ));
                    s.push(format!(
                        r##"<text x="{}" y="{:.1}" text-anchor="end">{g}</text><line x1="{}" y1="{:.1}" x2="{M}" y2="{:.1}" stroke="#444"/>"##,
                        M - 6,
                        ly(v) + 4.0,
                        M - 4,
                        ly(v),
                        ly(v)
                    ));
                }
            }
        }
        s.push(format!(r#"<text x="{}" y="{}" text-anchor="middle">measured steady s/proof (log scale)</text>"#, py_float(w2), H - 24));
        s.push(format!(
            r#"<text x="20" y="{h}" text-anchor="middle" transform="rotate(-90 20 {h})">predicted steady s/proof (log scale)</text>"#,
            h = py_float(h2)
        ));
        for (x, y, name, is_cal) in &pts {
            let colour = if *is_cal { "#d62728" } else { "#1f77b4" };
            s.push(format!(
                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{colour}"/><text x="{:.1}" y="{:.1}" font-size="9">{name}</text>"#,
                lx(*x),
                ly(*y),
                lx(*x) + 6.0,
                ly(*y) - 6.0
            ));
        }
        // The recommended configuration (the model's best), and the measured best beside it.
        let mut rings = Vec::new();
        if let Some(b) = &self.best_predicted {
            rings.push((b.as_str(), "recommended (model's best)"));
        }
        if let Some(b) = self.best_measured.as_deref().filter(|b| Some(*b) != self.best_predicted.as_deref()) {
            rings.push((b, "measured best"));
        }
        for (k, (name, what)) in rings.into_iter().enumerate() {
            let Some(&(x, y, _, _)) = pts.iter().find(|p| p.2 == name) else { continue };
            s.push(format!(
                r#"<circle cx="{:.1}" cy="{:.1}" r="9" fill="none" stroke="black" stroke-width="{}"/><text x="{:.1}" y="{:.1}" font-size="10">{what}: {name}</text>"#,
                lx(x),
                ly(y),
                2 - k,
                lx(x) + 6.0,
                ly(y) + 16.0 + 12.0 * k as f64
            ));
        }
        s.push(format!(r#"<text x="{}" y="{}">green band: ±5 %; line: y = x; red: the calibration run; ringed: the recommended configuration</text>"#, M + 8, M + 16));
        s.push("</svg>".into());
        Some(s.join("\n") + "\n")
    }
}

/// The pre-registration paragraph of `campaign.md`.
fn registration_markdown(reg: &crate::prereg::Registration) -> Vec<String> {
    let models: Vec<String> = reg.models.iter().map(|m| format!("`{}` ({}, sha256 `{}`)", m.path, m.circuit, m.sha256)).collect();
    let first = match (&reg.first_predicted_run, &reg.first_predicted_start_utc, reg.lead_s) {
        (Some(r), Some(t), Some(l)) => format!("the first predicted run, **{r}**, started at **{t}**, {l:.1} s later"),
        _ => "no predicted run has a start time".to_string(),
    };
    vec![
        "## Pre-registration".to_string(),
        String::new(),
        format!(
            "The predictions were made on the measuring machine before any predicted configuration ran: `predictions.json` (sha256 `{}`, equal to `predictions.sha256`) was written at **{}** from {}; {first}. All {} runs of predicted configurations started after it (checked by `campaign score --predictions`, which fails otherwise). The figures below are the registered ones, read from `predictions.json`, not predicted again.",
            reg.predictions_sha256,
            reg.created_utc,
            if models.is_empty() { "no model".to_string() } else { models.join(", ") },
            reg.runs_checked
        ),
        String::new(),
    ]
}

/// A float as Python's `str` writes it when it is integral and small (`360.0`), else Rust's
/// shortest form (which agrees with Python's `repr` there).
fn py_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// Python's `format(v, "g")`: six significant digits, trailing zeros dropped, the exponent
/// form below 1e-4 and from 1e6 on (`1e-05`, `1e+06`).
pub fn fmt_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let sci = format!("{v:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if (-4..6).contains(&exp) {
        strip(format!("{v:.*}", (5 - exp) as usize))
    } else {
        format!("{}e{}{:02}", strip(mant.to_string()), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// One run of the campaign in `host-runs.json`: its synthesis times and what else the host
/// did meanwhile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostRun {
    pub run: String,
    /// Start, seconds from the campaign's start (campaign.log).
    pub start_s: u64,
    /// Mean, min and max duration of one partition's synthesis, seconds.
    pub synthesis_mean_s: Option<f64>,
    pub synthesis_min_s: Option<f64>,
    pub synthesis_max_s: Option<f64>,
    /// Mean of the prover's `cpu_busy_cores` samples.
    pub process_cores: Option<f64>,
    /// Mean `host_busy_cores` − mean `cpu_busy_cores` (at least 0): other processes.
    pub other_cores: Option<f64>,
    /// Mean `host_steal_cores`: the hypervisor's steal.
    pub steal_cores: Option<f64>,
}

/// The runs of `campaign.log` (`campaign [<s>s]: <run>: pw=…` lines) in the order they
/// started, each once, with their start in seconds; `keep` says which runs to list.
pub fn run_order(log: &str, keep: impl Fn(&str) -> bool) -> Vec<(u64, String)> {
    let mut order: Vec<(u64, String)> = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix("campaign [") else { continue };
        let Some((secs, rest)) = rest.split_once("s]: ") else { continue };
        if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some((name, rest)) = rest.split_once(": ") else { continue };
        if name.is_empty() || name.contains(char::is_whitespace) || !rest.starts_with("pw=") {
            continue;
        }
        let Ok(start) = secs.parse() else { continue };
        if keep(name) && !order.iter().any(|(_, n)| n == name) {
            order.push((start, name.to_string()));
        }
    }
    order
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The row of one run: synthesis span durations and the host counters' means.
pub fn host_run(name: &str, start_s: u64, run: &Run) -> HostRun {
    // (end − start) in integer nanoseconds, then seconds: as exact as the timeline.
    let secs = |start: u64, end: u64| if end >= start { (end - start) as f64 / 1e9 } else { -((start - end) as f64) / 1e9 };
    let syn: Vec<f64> = run.spans.iter().filter(|s| s.kind == SpanKind::Synthesis).filter_map(|s| s.end_ns.map(|e| secs(s.start_ns, e))).collect();
    let counter = |n: &str| mean(&run.counters.iter().filter(|c| c.name == n).map(|c| c.value).collect::<Vec<_>>());
    let (proc_, host, steal) = (counter(counters::CPU_BUSY_CORES), counter(counters::HOST_BUSY_CORES), counter(counters::HOST_STEAL_CORES));
    HostRun {
        run: name.to_string(),
        start_s,
        synthesis_mean_s: mean(&syn),
        synthesis_min_s: syn.iter().copied().reduce(f64::min),
        synthesis_max_s: syn.iter().copied().reduce(f64::max),
        process_cores: proc_,
        other_cores: match (host, proc_) {
            (Some(h), Some(p)) => Some((h - p).max(0.0)),
            _ => None,
        },
        steal_cores: steal,
    }
}

/// The section of `campaign.md` on the runs, one line each.
pub fn host_runs_markdown(rows: &[HostRun]) -> String {
    let mut md = String::from("## Synthesis and the host, run by run\n\n");
    md.push_str("Every run in the order it ran (start in seconds from the campaign's start): the mean, min and max synthesis time of one partition, the cores the prover kept busy, what other processes on the machine took, and the hypervisor's steal (other tenants of the host). The last two come from the prover's `host_busy_cores` and `host_steal_cores` counters (/proc/stat); — where the binary did not record them. Data: [host-runs.json](host-runs.json).\n\n");
    md.push_str("| run | start s | synthesis mean s | min | max | prover cores | other processes | steal |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.run,
            r.start_s,
            num(r.synthesis_mean_s, 2),
            num(r.synthesis_min_s, 2),
            num(r.synthesis_max_s, 2),
            num(r.process_cores, 1),
            num(r.other_cores, 2),
            num(r.steal_cores, 2)
        );
    }
    md
}

/// Parse JSON text into a `T`. serde_json is built with `float_roundtrip`, so every float
/// reads back as the value that was written (the campaign's figures equal the committed
/// ones to the bit); errors give serde's line and column or the missing field.
pub fn from_json_exact<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// Errors of [`base_config`].
#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    #[error("the reference config has no `name = ` line")]
    NoName,
    #[error("the reference config has no `{0} = ` line")]
    MissingKey(&'static str),
    #[error("machine.txt: `{key}: {value}` is not a number")]
    BadNumber { key: &'static str, value: String },
}

/// Does `line` set `key` (`key = …`, spaces allowed before the `=`)?
fn sets_key(line: &str, key: &str) -> bool {
    line.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('='))
}

/// The VRAM of `gpu: <name>, <MiB> MiB, …` in machine.txt (nvidia-smi's memory.total), GiB.
fn vram_gib(machine: &str) -> Option<f64> {
    machine.match_indices("gpu: ").find_map(|(i, pat)| {
        let rest = &machine[i + pat.len()..];
        let after = &rest[rest.find(',')? + 1..];
        let after = after.strip_prefix(' ')?;
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !after[digits..].starts_with(" MiB") {
            return None;
        }
        after[..digits].parse::<u64>().ok().map(|mib| mib as f64 / 1024.0)
    })
}

/// The base config of a campaign: the reference config (`reference`, normally
/// `simulator/configs/phase8.toml`) with the measured machine's cores, RAM and VRAM
/// (`machine`: machine.txt's `key: value` lines), footprints from the calibration run's
/// `rss_bytes` counter and its pw/gw/gpus, and a comment on every changed key saying where
/// it comes from (GUESS and ROUGH mark what is not measured). What a timeline cannot tell;
/// `calibrate` replaces the costs and contention.
pub fn base_config(reference: &str, machine: &str, cal: &Run) -> Result<String, BaseError> {
    // Drop the reference's header: it describes the reference box.
    let start = {
        let mut at = 0;
        let mut found = None;
        for line in reference.split_inclusive('\n') {
            if sets_key(line, "name") {
                found = Some(at);
                break;
            }
            at += line.len();
        }
        found.ok_or(BaseError::NoName)?
    };
    let mut lines: Vec<String> = reference[start..].split('\n').map(|l| if l.starts_with("[machine]") { "[machine]".to_string() } else { l.to_string() }).collect();
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for l in machine.lines() {
        if let Some((k, v)) = l.split_once(": ") {
            fields.retain(|(key, _)| *key != k);
            fields.push((k, v));
        }
    }
    let field = |k: &str| fields.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let cores: i64 = match field("nproc") {
        Some(v) => v.trim().parse().map_err(|_| BaseError::BadNumber { key: "nproc", value: v.into() })?,
        None => 16,
    };
    let ram: f64 = match field("ram_gib") {
        Some(v) => v.trim().parse().map_err(|_| BaseError::BadNumber { key: "ram_gib", value: v.into() })?,
        None => 128.0,
    };
    let vram = vram_gib(machine).unwrap_or(80.0);
    let rss: Vec<f64> = cal.counters.iter().filter(|c| c.name == counters::RSS_BYTES).map(|c| c.value).collect();
    const GIB: f64 = (1u64 << 30) as f64;
    let base_gib = rss.iter().copied().reduce(f64::min).map_or(1.0, |v| v / GIB);
    let peak_gib = rss.iter().copied().reduce(f64::max).map_or(2.0, |v| v / GIB);
    let c = &cal.meta.config;
    let holders = (c.pw.unwrap_or(1) as i64 + c.gw.unwrap_or(1) as i64 * c.gpus.unwrap_or(1) as i64).max(1);
    let part_gib = ((peak_gib - base_gib) / holders as f64).max(0.01);
    let puts: [(&'static str, String, &str); 13] = [
        ("name", "\"campaign-base\"".into(), "derived by scripts/campaign-analyze.sh from phase8.toml"),
        ("cpu_cores", cores.to_string(), "machine.txt (nproc)"),
        ("ram_gib", format!("{ram:.1}"), "machine.txt (MemTotal)"),
        ("gpus", "1".into(), "the campaign uses one device"),
        ("vram_gib", format!("{vram:.1}"), "machine.txt (nvidia-smi memory.total), else 80"),
        ("baseline_gib", format!("{base_gib:.3}"), "smallest rss_bytes sample of the calibration run"),
        ("partition_gib", format!("{part_gib:.3}"), "ROUGH: (peak - smallest rss) / (pw + gw) of the calibration run"),
        ("abc_gib", format!("{:.3}", 0.75 * part_gib), "ROUGH: 3/4 of partition_gib"),
        ("vram_baseline_gib", "1.0".into(), "GUESS"),
        ("call_vram_gib", "1.0".into(), "GUESS"),
        ("synth_cores", "1.0".into(), "GUESS: one partition's synthesis runs on one thread"),
        ("prep_cores", format!("{:.1}", (cores as f64 / 2.0).max(1.0)), "GUESS (fitted from cpu_busy_cores when present): rayon-parallel"),
        (
            "finalize_cores",
            format!("{:.1}", (0.75 * cores as f64).max(1.0)),
            "GUESS (calibrate fits it from cpu_busy_cores when the run has it): blst's G2 MSM uses the cores it finds",
        ),
    ];
    for (key, value, why) in puts {
        let line = lines.iter_mut().find(|l| sets_key(l, key)).ok_or(BaseError::MissingKey(key))?;
        *line = format!("{key} = {value}  # {why}");
    }
    Ok(String::from(
        "# Base config of the measured machine: what a timeline cannot tell (written by scripts/campaign-analyze.sh\n\
         # from simulator/configs/phase8.toml; values marked GUESS or ROUGH are not measured). Costs and\n\
         # contention below are phase8's and are replaced by `proofscope calibrate`.\n",
    ) + &lines.join("\n"))
}

/// A finished campaign re-predicted by another model (`campaign posthoc`): its measured
/// rows with the new predictions in place of the registered ones, every error recomputed
/// the way [`score`] computes it. A post-hoc figure, never a registered one.
#[derive(Clone, Debug, PartialEq)]
pub struct Posthoc {
    pub rows: Vec<ConfigRow>,
    pub mape_pct: Option<f64>,
    pub mape_total_pct: Option<f64>,
    pub coverage_pct: Option<f64>,
    pub binding: (usize, usize),
    pub rss_within_10pct: (usize, usize),
}

/// Score `pred` (a `predictions.json` made after the fact) against the measured rows of
/// `measured` (that campaign's `campaign.json`). Configurations missing from either side are
/// left out.
pub fn posthoc(pred: &crate::prereg::Predictions, measured: &CampaignScore) -> Posthoc {
    let err = |m: Option<f64>, p: Option<f64>| Some(100.0 * (p? - nonzero(m)?) / m?);
    let inside = |runs: &[f64], iv: Option<(f64, f64)>| iv.map_or((0, 0), |(lo, hi)| (runs.iter().filter(|v| **v >= lo && **v <= hi).count(), runs.len()));
    let rows: Vec<ConfigRow> = measured
        .configs
        .iter()
        .filter_map(|m| {
            let p = pred.config(&m.config)?;
            let steady_iv = p.steady_s_per_proof.lo.zip(p.steady_s_per_proof.hi);
            let total_iv = p.total_s_per_proof.lo.zip(p.total_s_per_proof.hi);
            let (in_s, n_s) = inside(&m.measured_steady_runs, steady_iv);
            let (in_t, n_t) = inside(&m.measured_total_runs, total_iv);
            let (ps, pt, pe) = (Some(p.steady_s_per_proof.point), Some(p.total_s_per_proof.point), Some(p.steady_proof_ends_s_per_proof.point));
            Some(ConfigRow {
                calibration: p.calibration,
                predicted_steady_s: ps,
                error_pct: err(m.measured_steady_s, ps),
                predicted_steady_proof_ends_s: pe,
                proof_ends_error_pct: err(m.measured_steady_proof_ends_s, pe),
                predicted_total_s: pt,
                total_error_pct: err(m.measured_total_s, pt),
                predicted_steady_interval: steady_iv,
                predicted_total_interval: total_iv,
                runs_inside_steady: in_s,
                runs_checked_steady: n_s,
                runs_inside_total: in_t,
                runs_checked_total: n_t,
                predicted_peak_rss_gib: p.peak_rss_gib,
                rss_error_pct: err(m.measured_peak_rss_gib, p.peak_rss_gib),
                predicted_binding: Some(p.binding.clone()),
                binding_correct: Some(p.binding == m.measured_binding),
                predicted_verdict: p.model_verdict.clone(),
                ..m.clone()
            })
        })
        .collect();
    Posthoc {
        mape_pct: mape_of(&rows, |r| r.measured_steady_s, |r| r.predicted_steady_s),
        mape_total_pct: mape_of(&rows, |r| r.measured_total_s, |r| r.predicted_total_s),
        coverage_pct: coverage(&rows, |r| (r.runs_inside_steady, r.runs_checked_steady)).0,
        binding: binding_tally(&rows),
        rss_within_10pct: rss_tally(&rows),
        rows,
    }
}

impl Posthoc {
    /// The table `campaign posthoc` prints: one line a configuration, then the scores.
    pub fn text(&self) -> String {
        let mut s = format!("{:<22} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}  {:<26} {:>8}\n", "config", "steady m", "pred", "err", "total m", "pred", "err", "binding m / p", "RSS err");
        for r in &self.rows {
            let name = if r.calibration { format!("{} (cal)", r.config) } else { r.config.clone() };
            let b = format!("{} / {}", r.measured_binding, r.predicted_binding.as_deref().unwrap_or("—"));
            let _ = writeln!(
                s,
                "{name:<22} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}  {b:<26} {:>8}",
                num(r.measured_steady_s, 3),
                num(r.predicted_steady_s, 3),
                pct(r.error_pct),
                num(r.measured_total_s, 3),
                num(r.predicted_total_s, 3),
                pct(r.total_error_pct),
                pct(r.rss_error_pct)
            );
        }
        let _ = writeln!(
            s,
            "post hoc: MAPE steady {} %, total {} %, coverage {} %, binding right {} of {}, peak RSS within {RSS_TOLERANCE_PCT:.0} % {} of {}",
            num(self.mape_pct, 2),
            num(self.mape_total_pct, 2),
            num(self.coverage_pct, 0),
            self.binding.0,
            self.binding.1,
            self.rss_within_10pct.0,
            self.rss_within_10pct.1
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp(key: &str, label: &str, measured: f64, predicted: f64) -> MetricParity {
        MetricParity { key: key.into(), metric: label.into(), unit: "s".into(), measured, predicted, error_pct: 100.0 * (predicted - measured) / measured }
    }

    fn parity(metrics: Vec<MetricParity>) -> Parity {
        Parity { metrics, ..Default::default() }
    }

    /// A configuration whose runs measured `measured` s/proof (partition rate) and whose
    /// prediction is `predicted`.
    fn config(name: &str, calibration: bool, measured: &[f64], predicted: f64) -> ConfigInput {
        let parities = measured.iter().map(|&m| parity(vec![mp(key::PARTITION_RATE, "steady s/proof (partition rate)", m, predicted)])).collect();
        ConfigInput {
            name: name.into(),
            calibration,
            parities,
            prediction: SimResult::default(),
            measured: Summary::default(),
            predicted_binding: None,
            registered_steady_interval: None,
            registered_total_interval: None,
            grid: None,
        }
    }

    fn grid(line: &str) -> Option<crate::prereg::GridLine> {
        crate::prereg::parse_grid(line).unwrap().pop()
    }

    #[test]
    fn one_change_names_the_single_field_or_nothing() {
        let cal = grid("cal 4 2 kernels true 1").unwrap();
        let one = |l: &str| one_change(&cal, &grid(l).unwrap());
        assert_eq!(one("x 4 2 kernels false 1").as_deref(), Some("split true → false"));
        assert_eq!(one("x 4 2 kernels true 1 prep_threads=2").as_deref(), Some("prep_threads — → 2"));
        assert_eq!(one("x 4 2 kernels true 1 threads=2").as_deref(), Some("threads — → 2"));
        assert_eq!(one("x 8 2 whole true 1"), None, "two changes");
        assert_eq!(one("x 4 2 kernels true 1"), None, "no change");
        // The circuit's default is porep-like: naming it is no change; another one is.
        assert_eq!(one("x 4 2 kernels true 1 circuit=porep-like threads=2").as_deref(), Some("threads — → 2"));
        assert_eq!(one("x 4 2 kernels true 1 circuit=mix16").as_deref(), Some("circuit porep-like → mix16"));
    }

    #[test]
    fn switch_points_are_the_first_pw_binding_ram_or_the_gpu() {
        // Series A (kernels, gw 2): pw 1 synthesis/synthesis, pw 4 synthesis/gpu, pw 8
        // gpu/gpu, pw 12 gpu/gpu: measured from pw 8, predicted from pw 4, one step apart.
        // Series B (threads=2): pw 8 synthesis/synthesis, pw 16 synthesis/memory: never
        // measured, predicted at 16 — one step (none counts as past the last). A lone
        // configuration (whole lock) makes no series; a second pw 8 of series A is skipped.
        let mk = |name: &str, line: &str, measured: &str, predicted: &str| {
            let mut c = config(name, name.starts_with("cal"), &[1.0], 1.0);
            c.grid = grid(&format!("{name} {line}"));
            c.measured.verdict.binding = measured.into();
            c.predicted_binding = Some(predicted.into());
            c
        };
        let cs = [
            mk("cal-pw1", "1 2 kernels true 1", "synthesis", "synthesis"),
            mk("syn-pw4", "4 2 kernels true 1", "synthesis", "gpu"),
            mk("cal-pw8", "8 2 kernels true 1", "gpu", "gpu"),
            mk("again-pw8", "8 2 kernels true 1 circuit=porep-like", "synthesis", "synthesis"),
            mk("mid-pw12", "12 2 kernels true 1", "dispatch/lock", "gpu"),
            mk("cpu-pw8-t2", "8 2 kernels true 1 threads=2", "synthesis", "synthesis"),
            mk("cpu-pw16-t2", "16 2 kernels true 1 threads=2", "synthesis", "memory"),
            mk("whole", "8 2 whole false 1", "gpu", "gpu"),
        ];
        let s = score("cal-pw1,cal-pw8", &cs);
        assert_eq!(s.switch_points.len(), 2, "{:?}", s.switch_points);
        let a = &s.switch_points[0];
        assert_eq!(a.series, "gw 2, lock kernels, split true, finalizers 1");
        assert_eq!((a.pws.clone(), a.configs.clone()), (vec![1, 4, 8, 12], vec!["cal-pw1".to_string(), "syn-pw4".into(), "cal-pw8".into(), "mid-pw12".into()]));
        assert_eq!((a.measured_pw, a.predicted_pw, a.steps_apart, a.within_one_step), (Some(8), Some(4), 1, true));
        let b = &s.switch_points[1];
        assert_eq!(b.series, "gw 2, lock kernels, split true, finalizers 1, threads=2");
        assert_eq!((b.measured_pw, b.predicted_pw, b.steps_apart, b.within_one_step), (None, Some(16), 1, true));
        // Two steps apart is a miss.
        let mut cs2 = cs.clone();
        cs2[1].predicted_binding = Some("synthesis".into());
        cs2[2].predicted_binding = Some("synthesis".into());
        cs2[4].predicted_binding = Some("synthesis".into());
        cs2[0].predicted_binding = Some("memory".into());
        let s2 = score("cal-pw1,cal-pw8", &cs2);
        assert_eq!((s2.switch_points[0].predicted_pw, s2.switch_points[0].steps_apart, s2.switch_points[0].within_one_step), (Some(1), 2, false));
        let md = s2.markdown(1);
        assert!(md.contains("**1 of 2 series within one step of the grid** (1 with a switch measured"), "{md}");
        assert!(md.contains("| gw 2, lock kernels, split true, finalizers 1 | cal-pw1 (1), syn-pw4 (4), cal-pw8 (8), mid-pw12 (12) | pw 8 | pw 1 | 2 | **no** |"), "{md}");
    }

    #[test]
    fn effects_and_regimes_are_computed_by_hand() {
        // cal measured 10 s/proof, predicted 11; x (split off) measured 12 (+20 %), predicted
        // 12.1 (+10 %): 10 points short, not held. y (prep_threads 2) measured 15 (+50 %),
        // predicted 16.5 (+50 %): held. z (two changes) has no effect row.
        let mut cal = config("cal", true, &[10.0], 11.0);
        cal.grid = grid("cal 4 2 kernels true 1");
        let mut x = config("wif-split-off", false, &[12.0], 12.1);
        x.grid = grid("wif-split-off 4 2 kernels false 1");
        let mut y = config("wif-prep2", false, &[14.0, 16.0], 16.5);
        y.grid = grid("wif-prep2 4 2 kernels true 1 prep_threads=2");
        let mut z = config("mid-pw8-whole", false, &[20.0], 19.0);
        z.grid = grid("mid-pw8-whole 8 2 whole false 1");
        let s = score("cal", &[cal, x, y, z]);
        assert_eq!(s.effects.len(), 2);
        let e = &s.effects[0];
        assert_eq!((e.config.as_str(), e.base.as_str(), e.change.as_str()), ("wif-split-off", "cal", "split true → false"));
        assert!((e.measured_effect_pct.unwrap() - 20.0).abs() < 1e-9 && (e.predicted_effect_pct.unwrap() - 10.0).abs() < 1e-9);
        assert!((e.error_points.unwrap() + 10.0).abs() < 1e-9);
        assert_eq!(e.within_tolerance, Some(false));
        let e = &s.effects[1];
        assert!((e.measured_effect_pct.unwrap() - 50.0).abs() < 1e-9 && (e.predicted_effect_pct.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(e.within_tolerance, Some(true));
        // Regimes: wif (x: |12.1 − 12|/12 = 0.833 %, y: |16.5 − 15|/15 = 10 %: MAPE 5.4167 %)
        // and mid (|19 − 20|/20 = 5 %); the calibration configuration in none.
        let names: Vec<&str> = s.regimes.iter().map(|g| g.regime.as_str()).collect();
        assert_eq!(names, ["wif", "mid"]);
        assert!((s.regimes[0].mape_pct.unwrap() - (0.8333333333333334 + 10.0) / 2.0).abs() < 1e-9, "{:?}", s.regimes[0]);
        assert_eq!(s.regimes[0].configs, ["wif-split-off", "wif-prep2"]);
        assert!((s.regimes[1].mape_pct.unwrap() - 5.0).abs() < 1e-9);
        let md = s.markdown(1);
        assert!(md.contains("## What-if validation") && md.contains("**1 of 2 held**") && md.contains("| wif-split-off | split true → false (cal) | +20.0% | +10.0% | -10.0 | **no** |"), "{md}");
        assert!(md.contains("## By regime") && md.contains("| mid | mid-pw8-whole | 5.00 % |"), "{md}");
    }

    #[test]
    fn binding_and_peak_rss_are_scored_on_the_predicted_configurations() {
        let mut a = config("a", false, &[10.0], 10.0);
        a.predicted_binding = Some("gpu".into());
        a.measured.verdict.binding = "gpu".into();
        a.parities[0].metrics.push(mp(key::PEAK_RSS, "peak RAM", 2.0, 2.1));
        let mut b = config("b", false, &[10.0], 10.0);
        b.predicted_binding = Some("gpu".into());
        b.measured.verdict.binding = "synthesis".into();
        b.parities[0].metrics.push(mp(key::PEAK_RSS, "peak RAM", 2.0, 2.4));
        // The calibration configuration does not count; nor one whose prediction names nothing.
        let mut cal = config("cal", true, &[10.0], 10.0);
        cal.predicted_binding = Some("memory".into());
        let none = config("n", false, &[10.0], 10.0);
        let mut s = score("cal", &[a, b, cal, none]);
        // a: right, +5 % RSS; b: wrong, +20 %.
        assert_eq!((s.binding_correct, s.binding_checked), (1, 2));
        assert_eq!((s.rss_within_10pct, s.rss_checked), (1, 2));
        assert_eq!((s.configs[0].binding_correct, s.configs[1].binding_correct, s.configs[3].binding_correct), (Some(true), Some(false), None));
        let md = s.markdown(1);
        assert!(md.contains("- **Binding resource named correctly: 1 of 2 predicted configurations**"), "{md}");
        assert!(md.contains("- **Peak RSS within 10 %: 1 of 2 predicted configurations.**"), "{md}");
        assert!(md.contains("| b | 10.00 | — | — | — | — | — | synthesis | gpu | **no** | 2.000 | 2.400 | +20.0% |"), "{md}");
        assert!(!md.contains("Pre-registration"), "{md}");
        s.preregistration = Some(crate::prereg::Registration {
            predictions_sha256: "ab".repeat(32),
            created_utc: "2026-12-03T10:00:00.000000000Z".into(),
            runs_checked: 3,
            first_predicted_run: Some("b".into()),
            first_predicted_start_utc: Some("2026-12-03T10:00:02Z".into()),
            lead_s: Some(2.0),
            track_record: None,
            ..Default::default()
        });
        let md = s.markdown(1);
        assert!(md.starts_with("# Campaign: predictions vs measurements\n\n## Pre-registration\n\n"), "{md}");
        assert!(md.contains("was written at **2026-12-03T10:00:00.000000000Z**") && md.contains("the first predicted run, **b**, started at **2026-12-03T10:00:02Z**, 2.0 s later") && md.contains("All 3 runs"), "{md}");
        // Without binding or RSS figures (the two-half flow's old reports), no such lines.
        let md = score("x", &[config("x", true, &[1.0], 1.0), config("y", false, &[1.0], 1.0)]).markdown(1);
        assert!(!md.contains("Binding resource") && !md.contains("Peak RSS within") && !md.contains("## Intervals"), "{md}");
    }

    #[test]
    fn coverage_counts_runs_inside_their_interval() {
        use crate::interval::{Band, Interval};
        // Predicted 10 s with a ±10 % band (p50 100, lo 90, hi 110 in the replications' own
        // units: only the proportions carry over to the parity's predicted value).
        let iv = Interval { replications: 20, steady_partitions_s_per_proof: Band { p10: 92.0, p50: 100.0, p90: 108.0, lo: 90.0, hi: 110.0 }, ..Default::default() };
        let mut a = config("a", false, &[9.5, 10.5, 11.5], 10.0);
        a.prediction.interval = Some(iv.clone());
        let mut b = config("b", false, &[8.0], 10.0);
        b.prediction.interval = Some(iv.clone());
        // The calibration configuration does not count; nor does one without an interval.
        let mut cal = config("cal", true, &[20.0], 10.0);
        cal.prediction.interval = Some(iv);
        let none = config("n", false, &[10.0], 10.0);
        let s = score("cal", &[a, b, cal, none]);
        // a: 9.5 and 10.5 inside [9, 11], 11.5 outside; b: 8 outside: 2 of 4.
        assert_eq!(s.configs[0].predicted_steady_interval, Some((9.0, 11.0)));
        assert_eq!((s.coverage_pct, s.coverage_runs), (Some(50.0), 4));
        assert_eq!(s.coverage_total_pct, None);
        assert!(s.markdown(1).contains("Coverage: 50 % of 4 measured runs"), "{}", s.markdown(1));
        // Without any interval, no coverage line.
        assert!(!score("x", &[config("x", true, &[1.0], 1.0)]).markdown(1).contains("Coverage"));
    }

    #[test]
    fn coverage_uses_the_registered_interval_as_registered() {
        use crate::interval::{Band, Interval};
        // The prediction's replications would give [9, 11] around 10 s; the registered
        // interval is [10.8, 12]: 9.5 and 10.5 fall outside it, 11.5 inside.
        let iv = Interval { replications: 20, steady_partitions_s_per_proof: Band { p10: 92.0, p50: 100.0, p90: 108.0, lo: 90.0, hi: 110.0 }, ..Default::default() };
        let mut a = config("a", false, &[9.5, 10.5, 11.5], 10.0);
        a.prediction.interval = Some(iv);
        a.registered_steady_interval = Some((10.8, 12.0));
        let s = score("cal", &[config("cal", true, &[1.0], 1.0), a]);
        assert_eq!(s.configs[1].predicted_steady_interval, Some((10.8, 12.0)));
        assert_eq!((s.configs[1].runs_inside_steady, s.configs[1].runs_checked_steady), (1, 3));
        assert_eq!((s.coverage_runs, s.coverage_total_runs), (3, 0));
        assert!((s.coverage_pct.unwrap() - 100.0 / 3.0).abs() < 1e-9, "{:?}", s.coverage_pct);
        // A registered total interval counts without any replications in the prediction.
        let mut b = config("b", false, &[4.0], 4.0);
        b.parities[0].metrics.push(mp(key::TOTAL, "total s/proof", 5.0, 4.0));
        b.registered_total_interval = Some((3.0, 4.5));
        let s = score("cal", &[b]);
        assert_eq!((s.coverage_total_pct, s.coverage_total_runs, s.coverage_runs), (Some(0.0), 1, 0));
    }

    #[test]
    fn posthoc_swaps_in_the_new_predictions_and_rescores() {
        use crate::prereg::{parse_grid, Figure, Predictions, RegisteredConfig, Workload};
        // Measured: cal 1.0 (calibration), a 10.0 and 12.0 (mean 11), b 4.0; registered
        // predictions 1.0, 20.0, 4.0 (a +81.8 %).
        let measured = score("cal", &[config("cal", true, &[1.0], 1.0), config("a", false, &[10.0, 12.0], 20.0), config("b", false, &[4.0], 4.0)]);
        let g = parse_grid("cal 1 2 kernels true 1\na 8 2 kernels true 1\n").unwrap();
        let reg = |g: &crate::prereg::GridLine, cal: bool, point: f64, lo: f64, hi: f64, binding: &str| RegisteredConfig {
            steady_s_per_proof: Figure { point, lo: Some(lo), hi: Some(hi), ..Figure::default() },
            binding: binding.into(),
            ..RegisteredConfig::new(g, cal, "m.toml", vec![], SimResult::default(), &Summary::default())
        };
        // New predictions: cal 1.1, a 12.1 (interval 11-13: holds the 12.0 run only); b absent.
        let pred = Predictions {
            format: crate::prereg::FORMAT.into(),
            created_utc: "2026-12-04T00:00:00Z".into(),
            tool_version: "0".into(),
            workload: Workload { size: "2^22".into(), proofs: 10, partitions: 3, backend: "cuda".into() },
            calibrated_on: vec!["cal".into()],
            models: vec![],
            replications: 0,
            track_record: None,
            configs: vec![reg(&g[0], true, 1.1, 1.0, 1.2, "synthesis"), reg(&g[1], false, 12.1, 11.0, 13.0, "x")],
        };
        let p = posthoc(&pred, &measured);
        assert_eq!(p.rows.len(), 2);
        // a: (12.1 − 11) / 11 = +10 %; the calibration row is left out of the MAPE.
        assert!((p.rows[1].error_pct.unwrap() - 10.0).abs() < 1e-9, "{:?}", p.rows[1].error_pct);
        assert!((p.mape_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!((p.rows[1].runs_inside_steady, p.rows[1].runs_checked_steady), (1, 2));
        assert_eq!(p.coverage_pct, Some(50.0));
        // The measured binding of the test rows is the default summary's ("") against "x".
        assert_eq!(p.binding, (0, 1));
        assert!(p.text().contains("post hoc: MAPE steady 10.00 %"), "{}", p.text());
    }

    #[test]
    fn mape_by_hand() {
        // |110 − 100| / 100 = 10 %, |45 − 50| / 50 = 10 %, |3 − 2| / 2 = 50 %: mean 70/3 %.
        let m = mape(&[(100.0, 110.0), (50.0, 45.0), (2.0, 3.0)]).unwrap();
        assert!((m - 70.0 / 3.0).abs() < 1e-12, "{m}");
        assert_eq!(mape(&[]), None);
    }

    #[test]
    fn the_calibration_configuration_is_left_out_of_the_mape() {
        let s = score("b", &[config("a", false, &[10.0], 11.0), config("b", true, &[10.0], 20.0), config("c", false, &[10.0], 9.0)]);
        // a: +10 %, c: −10 %; b (+100 %) is the calibration run.
        assert!((s.mape_pct.unwrap() - 10.0).abs() < 1e-12, "{:?}", s.mape_pct);
        assert!(s.configs[1].calibration && !s.configs[0].calibration);
        // Zero and missing measurements are skipped too.
        let rows = vec![
            ConfigRow { measured_total_s: Some(0.0), predicted_total_s: Some(1.0), ..s.configs[0].clone() },
            ConfigRow { measured_total_s: Some(4.0), predicted_total_s: Some(5.0), ..s.configs[2].clone() },
            ConfigRow { measured_total_s: Some(4.0), predicted_total_s: None, ..s.configs[0].clone() },
        ];
        assert_eq!(mape_of(&rows, |r| r.measured_total_s, |r| r.predicted_total_s), Some(25.0));
    }

    #[test]
    fn spearman_perfect_reversed_and_tied() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0, 4.0], &[40.0, 30.0, 20.0, 10.0]), Some(-1.0));
        // Ordinal ranks: the tie [5, 5] ranks 1, 2 in order of appearance, so
        // a = [1, 2, 3], b = [1, 2, 3]: ρ = 1 (average ranks would give 1.5, 1.5, 3).
        assert_eq!(ordinal_ranks(&[5.0, 5.0, 7.0]), vec![1.0, 2.0, 3.0]);
        assert_eq!(ordinal_ranks(&[7.0, 5.0, 5.0]), vec![3.0, 1.0, 2.0]);
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[5.0, 5.0, 7.0]), Some(1.0));
        // One swap of neighbours among 4: Σd² = 2, ρ = 1 − 12/60 = 0.8.
        assert_eq!(spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]), Some(0.8));
        assert_eq!(spearman(&[1.0, 2.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn mean_and_spread_over_repeats() {
        let runs = [9.0, 10.0, 11.0];
        let pars: Vec<Parity> = runs.iter().map(|&m| parity(vec![mp(key::PARTITION_RATE, "x", m, 12.0)])).collect();
        let m = mean_metric(&pars, key::PARTITION_RATE);
        assert_eq!(m.measured, Some(10.0));
        assert_eq!(m.predicted, Some(12.0));
        // Error against the mean, not against the first run: (12 − 10) / 10.
        assert_eq!(m.error_pct, Some(20.0));
        // (11 − 9) / 10.
        assert_eq!(m.spread_pct, Some(20.0));
        // One run: no spread; a metric nobody has: nothing.
        assert_eq!(mean_metric(&pars[..1], key::PARTITION_RATE).spread_pct, None);
        assert_eq!(mean_metric(&pars, key::TOTAL), MetricMean::default());
    }

    #[test]
    fn old_reports_without_keys_are_read_by_label() {
        let old = r#"{"metrics":[{"metric":"GPU union utilisation","unit":"%","measured":50.0,"predicted":55.0,"error_pct":10.0}],"within_5pct":0,"max_abs_error_pct":10.0}"#;
        let p: Parity = serde_json::from_str(old).unwrap();
        assert_eq!(p.metrics[0].key, "");
        assert_eq!(metric_key(&p.metrics[0]), key::GPU_UTILIZATION);
        assert_eq!(mean_metric(&[p], key::GPU_UTILIZATION).measured, Some(50.0));
        // A key wins over the label.
        let p = parity(vec![mp(key::TOTAL, "GPU union utilisation", 1.0, 1.0)]);
        assert!(metric(&p, key::GPU_UTILIZATION).is_none() && metric(&p, key::TOTAL).is_some());
        for k in [key::PARTITION_RATE, key::STEADY, key::GPU_UTILIZATION, key::LATENCY_MEAN, key::TOTAL] {
            assert!(METRICS.iter().any(|m| m.0 == k), "{k} is not a parity metric");
        }
    }

    #[test]
    fn rankings_best_and_ties() {
        // Measured means: a 2.0, b 1.0 (spread (1.05 − 0.95) / 1 = 10 %), c 1.08, d 1.2.
        // Predicted: a 2.2, b 1.003, c 1.0, d 1.3.
        let s = score(
            "a",
            &[config("a", true, &[2.0], 2.2), config("b", false, &[0.95, 1.05], 1.003), config("c", false, &[1.08], 1.0), config("d", false, &[1.2], 1.3)],
        );
        assert_eq!(s.ranking_measured, ["b", "c", "d", "a"]);
        assert_eq!(s.ranking_predicted, ["c", "b", "d", "a"]);
        assert_eq!(s.best_measured.as_deref(), Some("b"));
        assert_eq!(s.best_predicted.as_deref(), Some("c"));
        assert!(!s.same_best_strict);
        // Within b's 10 % spread of 1.0: b and c (1.08), not d (1.2); grid order.
        assert_eq!(s.tied_best_measured, ["b", "c"]);
        // Within 0.5 % of 1.0: c and b (1.003), listed in grid order.
        assert_eq!(s.tied_best_predicted, ["b", "c"]);
        assert!(s.same_best);
        // Ranks: measured [4, 1, 2, 3], predicted [4, 2, 1, 3]: Σd² = 2, ρ = 1 − 12/60.
        assert_eq!(s.spearman_rho, Some(0.8));
        // MAPE over b, c, d: |1.003 − 1| / 1, |1 − 1.08| / 1.08, |1.3 − 1.2| / 1.2.
        let want = 100.0 * (0.003f64 / 1.0 + 0.08 / 1.08 + 0.1 / 1.2) / 3.0;
        assert!((s.mape_pct.unwrap() - want).abs() < 1e-9);
        assert!(!s.target_met, "MAPE {:?} is over 5 %", s.mape_pct);
        // Without repeats the measured tie band is the best alone.
        let s = score("x", &[config("p", false, &[1.0], 1.0), config("q", false, &[1.001], 1.2)]);
        assert_eq!(s.tied_best_measured, ["p"]);
        assert_eq!(s.spearman_rho, None);
        assert!(s.same_best && !s.target_met, "MAPE {:?}", s.mape_pct);
        let s = score("x", &[config("p", false, &[1.0], 1.01), config("q", false, &[2.0], 2.02)]);
        assert!(s.target_met && s.same_best_strict);
    }

    #[test]
    fn markdown_and_svg() {
        let s = score("a", &[config("a", true, &[2.0, 2.2], 2.2), config("b", false, &[1.0, 1.0], 1.1)]);
        let md = s.markdown(2);
        assert!(md.contains("calibrated on **a** only (its 2 runs together;"), "{md}");
        assert!(md.contains("| a (calibration) | 2 | 9.5% | 2.10 | 2.20 | +4.8% | — |"), "{md}");
        assert!(md.contains("| b | 2 | 0.0% | 1.00 | 1.10 | +10.0% |"), "{md}");
        assert!(md.contains("**MAPE (steady s/proof, 1 predicted configurations): 10.00 %**"), "{md}");
        assert!(md.contains("- Spearman rank correlation: —."), "{md}");
        assert!(md.ends_with("[evolution.md](evolution.md).\n"), "{md}");
        let svg = s.parity_svg().unwrap();
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert!(svg.contains(r#"<text x="360.0" y="24""#) && svg.contains(">b</text>") && svg.contains("#d62728"), "{svg}");
        // Log axes say so; the recommended configuration is ringed and named.
        assert_eq!(svg.matches("steady s/proof (log scale)</text>").count(), 2, "{svg}");
        let pick = s.best_predicted.clone().unwrap();
        assert!(svg.contains(&format!("recommended (model's best): {pick}</text>")), "{svg}");
        assert_eq!(score("a", &[]).parity_svg(), None);
    }

    #[test]
    fn exact_json_numbers() {
        // 17 significant digits: serde_json's default reader may land one ulp off; ours is
        // str::parse's correctly rounded value.
        for t in ["13.888771046829469", "0.0025173521374001234", "4.488466937225891", "1e-7", "-2.5E3", "5", "-7"] {
            let v: f64 = from_json_exact(t).unwrap();
            assert_eq!(v, t.parse::<f64>().unwrap(), "{t}");
        }
        let p: Parity = from_json_exact(" {\"metrics\": [{\"metric\": \"a\\\"b\\u00e9\", \"unit\": \"s\", \"measured\": 1.5, \"predicted\": 2, \"error_pct\": 33.3}],\n \"within_5pct\": 0, \"max_abs_error_pct\": 0.0} ").unwrap();
        assert_eq!((p.metrics[0].metric.as_str(), p.metrics[0].predicted), ("a\"bé", 2.0));
        assert_eq!(from_json_exact::<Vec<Option<bool>>>("[true, false, null]").unwrap(), [Some(true), Some(false), None]);
        let e = from_json_exact::<Parity>("{\"metrics\": [],\n \"within_5pct\": 0,").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        let e = from_json_exact::<Parity>("{\"metrics\": []}").unwrap_err();
        assert!(e.contains("missing field `within_5pct`"), "{e}");
        assert!(from_json_exact::<f64>("1 2").is_err() && from_json_exact::<f64>("NaN").is_err() && from_json_exact::<String>("\"abc").is_err());
        assert!(from_json_exact::<serde_json::Value>(&"[".repeat(200)).is_err());
    }

    #[test]
    fn python_g_format() {
        for (v, want) in [(1.0, "1"), (2.0, "2"), (0.5, "0.5"), (0.02, "0.02"), (0.0002, "0.0002"), (0.00005, "5e-05"), (100000.0, "100000"), (1e6, "1e+06"), (20.0, "20")] {
            assert_eq!(fmt_g(v), want, "{v}");
        }
    }

    #[test]
    fn host_runs_in_log_order() {
        let log = "campaign [1s]: probe: 1 proof x 2 partitions at 2^20, pw=1 gw=1 whole lock\n\
                   campaign [20s]: b: pw=4 gw=2 lock=kernels\n\
                   campaign [29s]: b: ok wall_s=9.1\n\
                   campaign [29s]: a: pw=1 gw=1 lock=whole\n\
                   campaign [40s]: b: pw=4 gw=2 lock=kernels\n\
                   campaign [50s]: a@2: pw=1 gw=1 lock=whole\n";
        let order = run_order(log, |n| n != "probe");
        assert_eq!(order, [(20, "b".to_string()), (29, "a".to_string()), (50, "a@2".to_string())]);
        let mut run = Run::default();
        for (s, e) in [(0u64, 1_000_000_000u64), (0, 3_000_000_000)] {
            run.spans.push(timeline::Span::new(SpanKind::Synthesis, s, e));
        }
        run.spans.push(timeline::Span::new(SpanKind::Gpu, 0, 9_000_000_000));
        for (name, v) in [(counters::CPU_BUSY_CORES, 2.0), (counters::CPU_BUSY_CORES, 4.0), (counters::HOST_BUSY_CORES, 2.5)] {
            run.counters.push(timeline::Counter { name: name.into(), t_ns: 0, value: v, device: None });
        }
        let r = host_run("a", 29, &run);
        assert_eq!((r.synthesis_mean_s, r.synthesis_min_s, r.synthesis_max_s), (Some(2.0), Some(1.0), Some(3.0)));
        // Other processes: 2.5 − 3 < 0 → 0; no steal counter.
        assert_eq!((r.process_cores, r.other_cores, r.steal_cores), (Some(3.0), Some(0.0), None));
        let md = host_runs_markdown(&[r]);
        assert!(md.ends_with("| a | 29 | 2.00 | 1.00 | 3.00 | 3.0 | 0.00 | — |\n"), "{md}");
        let j = serde_json::to_value(host_run("empty", 0, &Run::default())).unwrap();
        assert_eq!(j["synthesis_mean_s"], serde_json::Value::Null);
    }

    #[test]
    fn base_config_from_the_reference() {
        let reference = "# header about the reference box\n\nname = \"phase8\"   # old\nseed = 1\n\n[machine]   # the box\ncpu_cores = 96 # c\nram_gib = 512.0\ngpus = 1\nvram_gib = 16.0\n\n[memory]\nbaseline_gib = 69.0\npartition_gib = 16.0\nabc_gib = 12.0\nvram_baseline_gib = 2.0\ncall_vram_gib = 12.0\n\n[cpu]\nsynth_cores = 4.0\nprep_cores = 8.0\nfinalize_cores = 8.0\n";
        let machine = "date: 2026-11-30T15:57:35Z\nram_gib: 126\nnproc: 16\ngpu: NVIDIA H200, 143771 MiB, 580.159.04, 1980 MHz\n";
        let mut run = Run::default();
        run.meta.config.pw = Some(4);
        run.meta.config.gw = Some(2);
        // 1 GiB idle, 4 GiB peak: (4 − 1) / (4 + 2 × 1) = 0.5 GiB per partition.
        for v in [1.0, 4.0, 2.0] {
            run.counters.push(timeline::Counter { name: counters::RSS_BYTES.into(), t_ns: 0, value: v * (1u64 << 30) as f64, device: None });
        }
        let out = base_config(reference, machine, &run).unwrap();
        let want = "# Base config of the measured machine: what a timeline cannot tell (written by scripts/campaign-analyze.sh\n\
# from simulator/configs/phase8.toml; values marked GUESS or ROUGH are not measured). Costs and\n\
# contention below are phase8's and are replaced by `proofscope calibrate`.\n\
name = \"campaign-base\"  # derived by scripts/campaign-analyze.sh from phase8.toml\nseed = 1\n\n[machine]\n\
cpu_cores = 16  # machine.txt (nproc)\nram_gib = 126.0  # machine.txt (MemTotal)\ngpus = 1  # the campaign uses one device\n\
vram_gib = 140.4  # machine.txt (nvidia-smi memory.total), else 80\n\n[memory]\n\
baseline_gib = 1.000  # smallest rss_bytes sample of the calibration run\n\
partition_gib = 0.500  # ROUGH: (peak - smallest rss) / (pw + gw) of the calibration run\n\
abc_gib = 0.375  # ROUGH: 3/4 of partition_gib\nvram_baseline_gib = 1.0  # GUESS\ncall_vram_gib = 1.0  # GUESS\n\n[cpu]\n\
synth_cores = 1.0  # GUESS: one partition's synthesis runs on one thread\n\
prep_cores = 8.0  # GUESS (fitted from cpu_busy_cores when present): rayon-parallel\n\
finalize_cores = 12.0  # GUESS (calibrate fits it from cpu_busy_cores when the run has it): blst's G2 MSM uses the cores it finds\n";
        assert_eq!(out, want);
        // Without machine.txt values or RSS samples: 16 cores, 128 GiB, 80 GiB VRAM, 1 and 2 GiB.
        let out = base_config(reference, "", &Run::default()).unwrap();
        assert!(out.contains("ram_gib = 128.0 ") && out.contains("vram_gib = 80.0 ") && out.contains("partition_gib = 0.500 "), "{out}");
        assert!(matches!(base_config("seed = 1\n", "", &Run::default()), Err(BaseError::NoName)));
        assert!(matches!(base_config("name = 1\n", "", &Run::default()), Err(BaseError::MissingKey("cpu_cores"))));
        assert!(matches!(base_config(reference, "nproc: many\n", &Run::default()), Err(BaseError::BadNumber { key: "nproc", .. })));
    }

    #[test]
    fn the_embedded_reference_gives_a_valid_base() {
        let out = base_config(crate::calibrate::DEFAULT_BASE, "nproc: 16\nram_gib: 126\n", &Run::default()).unwrap();
        crate::Config::from_toml_str(&out, "base").unwrap().validate().unwrap();
    }
}
