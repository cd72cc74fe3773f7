//! Prediction intervals: how sure a prediction is. A simulation draws every phase's cost
//! from its distribution (calibrated: lognormal or empirical), so one seed is one
//! possible run; the interval comes from N replications with independent seeds, widened by
//! the run-to-run spread the calibration measured on the machine (repeats of one
//! configuration), which the cost distributions do not capture (lease noise, clocks).
//!
//! For each figure (total s/proof, steady s/proof from proof completions, steady s/proof
//! from partition completions):
//!
//! 1. p10, p50, p90 over the N replications (seeds `seed`, `seed + 1`, …; linear
//!    interpolation between order statistics);
//! 2. the run spread r (relative standard deviation, `uncertainty.run_spread`) and the
//!    model's error on its calibration runs m (`uncertainty.model_error`) make s = √(r² + m²),
//!    which adds, in quadrature, a half-width of z · s · p50 with z = 1.2816 (the normal's 90th
//!    percentile): lo = p50 − √((p50 − p10)² + (z·s·p50)²), hi = p50 + √((p90 − p50)² + (z·s·p50)²).
//!
//! [lo, hi] is the nominal 80 % interval; `campaign score` reports the share of measured
//! runs inside it (coverage; honest is 70–90 %).

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::pipeline::{simulate, Options};
use crate::report::SimResult;

/// The normal distribution's 90th percentile: an 80 % central interval is ±z·sd.
pub const Z80: f64 = 1.2816;

/// Default replications of `simulate` and `predict`.
pub const DEFAULT_REPLICATIONS: u32 = 20;

/// The interval of one figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Band {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    /// The 80 % interval with the run spread: lower and upper end.
    pub lo: f64,
    pub hi: f64,
}

impl Band {
    pub fn contains(&self, v: f64) -> bool {
        v >= self.lo && v <= self.hi
    }

    /// The band around another central value `center` with the same relative widths (for a
    /// figure computed elsewhere from the same model, e.g. the analyzer's on the timeline).
    pub fn around(&self, center: f64) -> (f64, f64) {
        if self.p50 > 0.0 {
            (center * self.lo / self.p50, center * self.hi / self.p50)
        } else {
            (center, center)
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    /// Replications with a completed run (infeasible ones are left out and counted).
    pub replications: u32,
    pub infeasible: u32,
    /// The run spread used (relative sd), and where it came from.
    pub run_spread: f64,
    /// The model's error on its calibration runs used (relative sd; 0 when not calibrated).
    #[serde(default)]
    pub model_error: f64,
    pub total_s_per_proof: Band,
    pub steady_state_s_per_proof: Band,
    pub steady_partitions_s_per_proof: Band,
}

/// The q-quantile of sorted values, interpolating linearly between order statistics.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let x = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let i = x.floor() as usize;
            let f = x - i as f64;
            if i + 1 < n {
                sorted[i] * (1.0 - f) + sorted[i + 1] * f
            } else {
                sorted[n - 1]
            }
        }
    }
}

/// The band of `values` with the run spread `s` (see the module doc).
pub fn band(values: &[f64], s: f64) -> Band {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let (p10, p50, p90) = (quantile(&v, 0.1), quantile(&v, 0.5), quantile(&v, 0.9));
    let extra = Z80 * s * p50;
    Band { p10, p50, p90, lo: p50 - (p50 - p10).hypot(extra), hi: p50 + (p90 - p50).hypot(extra) }
}

/// Run `n` replications of `cfg` (seeds cfg.seed, cfg.seed + 1, …) in parallel and make
/// the interval; `None` for n < 2 or when no replication completes.
pub fn replicate(cfg: &Config, n: u32) -> Option<Interval> {
    use rayon::prelude::*;
    if n < 2 {
        return None;
    }
    let results: Vec<SimResult> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut c = cfg.clone();
            c.seed = cfg.seed.wrapping_add(i as u64);
            simulate(&c, Options::default()).result
        })
        .collect();
    let ok: Vec<&SimResult> = results.iter().filter(|r| r.feasible).collect();
    if ok.is_empty() {
        return None;
    }
    let u = &cfg.uncertainty;
    let s = u.run_spread.hypot(u.model_error);
    let f = |g: fn(&SimResult) -> f64| band(&ok.iter().map(|r| g(r)).collect::<Vec<_>>(), s);
    Some(Interval {
        replications: ok.len() as u32,
        infeasible: n - ok.len() as u32,
        run_spread: u.run_spread,
        model_error: u.model_error,
        total_s_per_proof: f(|r| r.total_s_per_proof),
        steady_state_s_per_proof: f(|r| r.steady_state_s_per_proof),
        steady_partitions_s_per_proof: f(|r| r.steady_partitions_s_per_proof),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_bands_by_hand() {
        let v: Vec<f64> = (0..=10).map(|x| x as f64).collect();
        assert_eq!(quantile(&v, 0.1), 1.0);
        assert_eq!(quantile(&v, 0.5), 5.0);
        assert_eq!(quantile(&v, 0.9), 9.0);
        assert_eq!(quantile(&[1.0, 2.0], 0.5), 1.5);
        // No run spread: the band is p10..p90.
        let b = band(&v, 0.0);
        assert_eq!((b.lo, b.hi), (1.0, 9.0));
        // Identical replications (fixed costs) and a 10 % run spread: ±1.2816 × 0.1 × 5.
        let b = band(&[5.0; 4], 0.1);
        assert!((b.lo - (5.0 - 0.6408)).abs() < 1e-12 && (b.hi - (5.0 + 0.6408)).abs() < 1e-12, "{b:?}");
        // Both: √(4² + 0.6408²).
        let b = band(&v, 0.1);
        assert!((b.hi - (5.0 + (16.0f64 + 0.6408 * 0.6408).sqrt())).abs() < 1e-12);
        assert!(b.contains(5.0) && !b.contains(9.5));
        assert_eq!(b.around(10.0).0, 10.0 * b.lo / 5.0);
    }

    #[test]
    fn the_model_error_widens_the_interval_beside_the_run_spread() {
        // Fixed costs (every replication alike), run spread 3 %, model error 4 %: together 5 %
        // (√(3² + 4²)), a half-width of 1.2816 × 0.05 × p50.
        let mut c = crate::calibrate::default_base();
        c.pipeline.proofs = 4;
        c.pipeline.in_flight = 4;
        c.uncertainty.run_spread = 0.03;
        c.uncertainty.model_error = 0.04;
        let iv = replicate(&c, 4).unwrap();
        let b = iv.total_s_per_proof;
        assert_eq!(b.p10, b.p90, "fixed costs: {b:?}");
        assert!((b.hi - b.p50 - Z80 * 0.05 * b.p50).abs() < 1e-9 * b.p50, "{b:?}");
        assert_eq!((iv.run_spread, iv.model_error), (0.03, 0.04));
    }
}
