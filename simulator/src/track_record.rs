//! The model's track record: how wrong its registered predictions were in earlier campaigns,
//! turned into the intervals of new ones.
//!
//! Why this exists: the replications' interval ([`crate::interval`]) says how the model's
//! own figure moves with its seeds and the calibrated run spread; it does not say how far the
//! model is from the machine out of sample. On the H200 the three newest registered campaigns
//! at 2^22 (campaigns 9–11) put 17–58 % of the measured runs inside such intervals, where an
//! honest 80 % interval holds 70–90 %. Their errors say it instead: the 10th and 90th
//! percentiles of ln(measured ÷ predicted) over every run of their predicted configurations
//! bound the next prediction at point × e^q10 … point × e^q90 (split-conformal prediction:
//! calibration on earlier, exchangeable errors; asymmetric where the model leans one way).
//! Left out of those campaigns one at a time, the other two put 83, 67 and 67 % of its runs
//! inside (docs/reference/fidelity.md).
//!
//! The residuals come from scored campaigns (`campaign.json`): one per run where the row
//! lists its runs (`measured_steady_runs`, `measured_total_runs`), else, for the rows of two
//! runs written before those lists, the two runs rebuilt from their mean and spread
//! (mean × (1 ± spread ÷ 2), exact for two), else the mean once. Calibration configurations
//! (predicted in-sample) are left out.

use serde::{Deserialize, Serialize};

use crate::campaign::{CampaignScore, ConfigRow};
use crate::interval::quantile;

/// Fewer residuals than this and the track record says nothing (an error).
pub const MIN_RESIDUALS: usize = 10;

/// One figure's errors: the quantiles of ln(measured ÷ predicted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Residuals {
    /// How many measured runs.
    pub runs: usize,
    /// 10th and 90th percentile of ln(measured ÷ predicted).
    pub q10: f64,
    pub q90: f64,
    /// Their median (the model's lean: > 0, it predicted short).
    pub median: f64,
}

impl Residuals {
    fn of(mut v: Vec<f64>) -> Residuals {
        v.sort_by(f64::total_cmp);
        Residuals { runs: v.len(), q10: quantile(&v, 0.1), q90: quantile(&v, 0.9), median: quantile(&v, 0.5) }
    }

    /// The 80 % interval around a new prediction `point`: [point × e^q10, point × e^q90].
    pub fn interval(&self, point: f64) -> (f64, f64) {
        (point * self.q10.exp(), point * self.q90.exp())
    }
}

/// A scored campaign the track record read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrackSource {
    /// The `campaign.json` as given.
    pub path: String,
    pub sha256: String,
    /// Predicted configurations with a measured and a predicted steady s/proof.
    pub configs: usize,
}

/// What `campaign predict --track-record` registers beside the predictions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrackRecord {
    pub sources: Vec<TrackSource>,
    /// Steady s/proof (partition rate).
    pub steady: Residuals,
    /// Total s/proof (makespan ÷ proofs).
    pub total: Residuals,
}

/// ln(measured ÷ predicted) of a row's figure, one per run (the runs' values, or rebuilt: see
/// the module doc).
fn residuals(measured: &[f64], mean: Option<f64>, spread_pct: Option<f64>, runs: usize, predicted: Option<f64>) -> Vec<f64> {
    let Some(p) = predicted.filter(|p| p.is_finite() && *p > 0.0) else { return Vec::new() };
    let vals: Vec<f64> = if !measured.is_empty() {
        measured.to_vec()
    } else {
        match (mean, spread_pct) {
            (Some(m), Some(s)) if runs == 2 => vec![m * (1.0 - s / 200.0), m * (1.0 + s / 200.0)],
            (Some(m), _) => vec![m],
            _ => Vec::new(),
        }
    };
    vals.into_iter().filter(|m| m.is_finite() && *m > 0.0).map(|m| (m / p).ln()).collect()
}

/// ln(measured ÷ predicted) of the steady and of the total s/proof of a row's runs.
pub fn row_residuals(r: &ConfigRow) -> (Vec<f64>, Vec<f64>) {
    if r.calibration {
        return (Vec::new(), Vec::new());
    }
    // (The total s/proof's spread is not in the rows written before the lists: its mean once.)
    (
        residuals(&r.measured_steady_runs, r.measured_steady_s, r.measured_spread_pct, r.runs, r.predicted_steady_s),
        residuals(&r.measured_total_runs, r.measured_total_s, None, r.runs, r.predicted_total_s),
    )
}

/// The track record of scored campaigns: `(path, contents of campaign.json)` each. An error
/// names the file that is no scored campaign, or says how few residuals there are.
pub fn from_campaigns(files: &[(String, Vec<u8>)]) -> Result<TrackRecord, String> {
    let (mut steady, mut total, mut sources) = (Vec::new(), Vec::new(), Vec::new());
    for (path, bytes) in files {
        let text = std::str::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8 text"))?;
        let c: CampaignScore = crate::campaign::from_json_exact(text).map_err(|e| format!("{path}: not a scored campaign (campaign.json): {e}"))?;
        let mut configs = 0;
        for r in &c.configs {
            let (s, t) = row_residuals(r);
            configs += usize::from(!s.is_empty());
            steady.extend(s);
            total.extend(t);
        }
        sources.push(TrackSource { path: path.clone(), sha256: crate::prereg::sha256_hex(bytes), configs });
    }
    if steady.len() < MIN_RESIDUALS || total.len() < MIN_RESIDUALS {
        return Err(format!(
            "the track record has {} steady and {} total residuals (measured runs of predicted configurations) in {} campaign(s); at least {MIN_RESIDUALS} of each are needed",
            steady.len(),
            total.len(),
            files.len()
        ));
    }
    Ok(TrackRecord { sources, steady: Residuals::of(steady), total: Residuals::of(total) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, cal: bool, runs: usize, steady: (f64, f64, f64), total: (f64, f64)) -> ConfigRow {
        let mut r: ConfigRow = serde_json::from_value(serde_json::json!({
            "config": name, "calibration": cal, "runs": runs,
            "measured_spread_pct": steady.1, "measured_steady_s": steady.0, "predicted_steady_s": steady.2,
            "error_pct": null, "measured_steady_proof_ends_s": null, "predicted_steady_proof_ends_s": null,
            "proof_ends_error_pct": null, "measured_gpu_util_pct": null, "predicted_gpu_util_pct": null,
            "util_error_pct": null, "measured_latency_s": null, "predicted_latency_s": null, "latency_error_pct": null,
            "measured_total_s": total.0, "predicted_total_s": total.1, "total_error_pct": null,
            "measured_binding": "gpu", "measured_headline": "", "gpu_floor_s": null, "synthesis_floor_s": null,
            "cpu_floor_s": null, "efficiency_vs_floor": null, "predicted_verdict": "",
            "predicted_theoretical_floor_s": 0.0, "predicted_practical_floor_s": 0.0, "predicted_practical_binding": ""
        }))
        .unwrap();
        r.measured_steady_runs = Vec::new();
        r
    }

    #[test]
    fn two_runs_are_rebuilt_from_mean_and_spread_and_calibration_rows_are_left_out() {
        // Mean 1.0 with a 20 % spread: runs 0.9 and 1.1; predicted 1.0.
        let (s, t) = row_residuals(&row("a", false, 2, (1.0, 20.0, 1.0), (2.0, 1.0)));
        assert_eq!(s.len(), 2);
        assert!((s[0] - 0.9f64.ln()).abs() < 1e-12 && (s[1] - 1.1f64.ln()).abs() < 1e-12, "{s:?}");
        assert_eq!(t, vec![2.0f64.ln()], "the total: its mean once");
        assert_eq!(row_residuals(&row("cal", true, 2, (1.0, 20.0, 1.0), (2.0, 1.0))), (vec![], vec![]));
        // The runs' own values win over the rebuilt ones.
        let mut r = row("b", false, 2, (1.0, 20.0, 2.0), (1.0, 1.0));
        r.measured_steady_runs = vec![1.0, 4.0];
        assert_eq!(row_residuals(&r).0, vec![0.5f64.ln(), 2.0f64.ln()]);
    }

    #[test]
    fn the_interval_is_the_residuals_deciles_around_the_point() {
        // Eleven configurations, one run each, measured e^(k/10) × predicted, k = -5..5:
        // q10 = -0.4, q90 = +0.4 (interpolated order statistics), median 0.
        let rows: Vec<ConfigRow> = (-5..=5).map(|k| row(&format!("c{k}"), false, 1, ((k as f64 / 10.0).exp(), 0.0, 1.0), (1.0, 1.0))).collect();
        // (The rest of campaign.json as `campaign score` writes it: a committed one's.)
        let full: CampaignScore = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/campaign-2026-12-03-prereg11/campaign.json")).unwrap()).unwrap();
        let mut base = serde_json::to_value(&full).unwrap();
        base["configs"] = serde_json::to_value(&rows).unwrap();
        let bytes = serde_json::to_vec(&base).unwrap();
        let tr = from_campaigns(&[("c.json".into(), bytes.clone())]).unwrap();
        assert_eq!(tr.steady.runs, 11);
        assert!((tr.steady.q10 + 0.4).abs() < 1e-12 && (tr.steady.q90 - 0.4).abs() < 1e-12 && tr.steady.median.abs() < 1e-12, "{:?}", tr.steady);
        let (lo, hi) = tr.steady.interval(2.0);
        assert!((lo - 2.0 * (-0.4f64).exp()).abs() < 1e-12 && (hi - 2.0 * 0.4f64.exp()).abs() < 1e-12);
        assert_eq!(tr.total.runs, 11);
        assert_eq!(tr.total.q10, 0.0);
        assert_eq!(tr.sources[0].configs, 11);
        assert_eq!(tr.sources[0].sha256, crate::prereg::sha256_hex(&bytes));
    }

    #[test]
    fn too_few_residuals_or_a_file_that_is_no_campaign_is_an_error_naming_it() {
        let e = from_campaigns(&[("x.json".into(), b"{}".to_vec())]).unwrap_err();
        assert!(e.starts_with("x.json: not a scored campaign"), "{e}");
        let e = from_campaigns(&[]).unwrap_err();
        assert!(e.contains("0 steady and 0 total residuals") && e.contains("at least 10"), "{e}");
    }

    #[test]
    fn the_three_newest_registered_campaigns_give_an_interval_about_the_point() {
        let read = |n: u32| {
            let p = format!("{}/../reports/campaign-2026-12-03-prereg{n}/campaign.json", env!("CARGO_MANIFEST_DIR"));
            (p.clone(), std::fs::read(&p).unwrap())
        };
        let tr = from_campaigns(&[read(9), read(10), read(11)]).unwrap();
        // 12 predicted configurations × 2 runs each × 3 campaigns.
        assert_eq!(tr.steady.runs, 72);
        assert!(tr.steady.q10 < 0.0 && tr.steady.q90 > 0.0, "{:?}", tr.steady);
    }
}
