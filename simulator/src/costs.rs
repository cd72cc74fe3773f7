//! Cost distributions of the pipeline's phases: a fixed duration, a normal, a lognormal
//! or an empirical sample set (e.g. fitted by `calibrate` from a measured timeline).
//!
//! In the TOML a cost is either a plain number of milliseconds (`synth = 36500`) or a
//! table: `{ dist = "normal", mean_ms = 36500, sd_ms = 900 }`,
//! `{ dist = "lognormal", median_ms = 36500, sigma = 0.03 }`,
//! `{ dist = "empirical", samples_ms = [36100, 36800, ...] }`,
//! `{ dist = "fixed", ms = 36500 }`. Samples are clamped at zero.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// The longest one phase of one partition may take, ms (10 years): larger numbers in a
/// config are refused, and samples (a wide lognormal's tail) are clamped to it, so that
/// no simulated time comes near `u64` nanoseconds' overflow.
pub const MAX_COST_MS: f64 = 10.0 * 365.25 * 86_400.0 * 1e3;

/// A duration distribution, in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Fixed(f64),
    Normal { mean: f64, sd: f64 },
    /// Lognormal given by its median (e^mu) and the sd of the log (sigma).
    Lognormal { median: f64, sigma: f64 },
    Empirical(Vec<f64>),
}

impl Dist {
    /// The mean in ms (used by the floors, which are computed from the model, not a run).
    pub fn mean_ms(&self) -> f64 {
        match self {
            Dist::Fixed(v) => *v,
            Dist::Normal { mean, .. } => *mean,
            Dist::Lognormal { median, sigma } => median * (0.5 * sigma * sigma).exp(),
            Dist::Empirical(v) => v.iter().sum::<f64>() / v.len().max(1) as f64,
        }
    }

    /// The same distribution with every duration multiplied by `f` (≥ 0): a phase made
    /// faster (f < 1) or slower, for what-if questions. The lognormal's sigma (its spread
    /// in proportion) is unchanged.
    pub fn scaled(&self, f: f64) -> Dist {
        match self {
            Dist::Fixed(v) => Dist::Fixed(v * f),
            Dist::Normal { mean, sd } => Dist::Normal { mean: mean * f, sd: sd * f },
            Dist::Lognormal { median, sigma } => Dist::Lognormal { median: (median * f).max(f64::MIN_POSITIVE), sigma: *sigma },
            Dist::Empirical(v) => Dist::Empirical(v.iter().map(|x| x * f).collect()),
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Dist::Fixed(v) if *v == 0.0)
    }

    /// Draw one duration in ns. Fixed costs consume no randomness, so a fully fixed
    /// model does not depend on the seed at all.
    pub fn sample_ns(&self, rng: &mut Rng) -> u64 {
        let ms = match self {
            Dist::Fixed(v) => *v,
            Dist::Normal { mean, sd } => rng.normal(*mean, *sd),
            Dist::Lognormal { median, sigma } => rng.lognormal(median.ln(), *sigma),
            Dist::Empirical(v) => v[rng.below(v.len() as u64) as usize],
        };
        // (NaN, from a degenerate distribution, becomes 0.)
        (ms.clamp(0.0, MAX_COST_MS) * 1.0e6).round() as u64
    }

    fn check(self) -> Result<Dist, String> {
        let finite_nonneg = |name: &str, v: f64| -> Result<(), String> {
            if !v.is_finite() || v < 0.0 {
                Err(format!("`{name}` must be a finite number ≥ 0 (got {v})"))
            } else if v > MAX_COST_MS && name != "sigma" {
                Err(format!("`{name}` = {v} ms is more than 10 years ({MAX_COST_MS} ms)"))
            } else {
                Ok(())
            }
        };
        match &self {
            Dist::Fixed(v) => finite_nonneg("ms", *v)?,
            Dist::Normal { mean, sd } => {
                finite_nonneg("mean_ms", *mean)?;
                finite_nonneg("sd_ms", *sd)?;
            }
            Dist::Lognormal { median, sigma } => {
                finite_nonneg("sigma", *sigma)?;
                if !(median.is_finite() && *median > 0.0 && *median <= MAX_COST_MS) {
                    return Err(format!("`median_ms` must be > 0 and at most 10 years in ms (got {median})"));
                }
                if *sigma > 10.0 {
                    return Err(format!("`sigma` = {sigma} is more than 10 (a spread of e^10 around the median)"));
                }
            }
            Dist::Empirical(v) => {
                if v.is_empty() {
                    return Err("`samples_ms` must not be empty".into());
                }
                for x in v {
                    finite_nonneg("samples_ms", *x)?;
                }
            }
        }
        Ok(self)
    }
}

/// The table form, parsed strictly (unknown keys are errors).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DistTable {
    dist: String,
    ms: Option<f64>,
    mean_ms: Option<f64>,
    sd_ms: Option<f64>,
    median_ms: Option<f64>,
    sigma: Option<f64>,
    samples_ms: Option<Vec<f64>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum DistRepr {
    Number(f64),
    Int(i64),
    Table(toml::Table),
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let repr = DistRepr::deserialize(d).map_err(|e: D::Error| {
            // A field left out reaches us as a "missing field" error: keep it as is.
            if e.to_string().starts_with("missing field") {
                e
            } else {
                D::Error::custom("a cost is a number of milliseconds or a table such as { dist = \"normal\", mean_ms = 100, sd_ms = 5 }")
            }
        })?;
        let dist = match repr {
            DistRepr::Number(v) => Dist::Fixed(v),
            DistRepr::Int(v) => Dist::Fixed(v as f64),
            DistRepr::Table(t) => {
                let t: DistTable = toml::Value::Table(t).try_into().map_err(|e: toml::de::Error| D::Error::custom(e.message()))?;
                let need = |v: Option<f64>, k: &str| v.ok_or_else(|| D::Error::custom(format!("dist = \"{}\" needs `{k}`", t.dist)));
                let extra = |ks: &[(&str, bool)]| -> Result<(), D::Error> {
                    for (k, present) in ks {
                        if *present {
                            return Err(D::Error::custom(format!("`{k}` does not apply to dist = \"{}\"", t.dist)));
                        }
                    }
                    Ok(())
                };
                match t.dist.as_str() {
                    "fixed" => {
                        extra(&[("mean_ms", t.mean_ms.is_some()), ("sd_ms", t.sd_ms.is_some()), ("median_ms", t.median_ms.is_some()), ("sigma", t.sigma.is_some()), ("samples_ms", t.samples_ms.is_some())])?;
                        Dist::Fixed(need(t.ms, "ms")?)
                    }
                    "normal" => {
                        extra(&[("ms", t.ms.is_some()), ("median_ms", t.median_ms.is_some()), ("sigma", t.sigma.is_some()), ("samples_ms", t.samples_ms.is_some())])?;
                        Dist::Normal { mean: need(t.mean_ms, "mean_ms")?, sd: need(t.sd_ms, "sd_ms")? }
                    }
                    "lognormal" => {
                        extra(&[("ms", t.ms.is_some()), ("mean_ms", t.mean_ms.is_some()), ("sd_ms", t.sd_ms.is_some()), ("samples_ms", t.samples_ms.is_some())])?;
                        Dist::Lognormal { median: need(t.median_ms, "median_ms")?, sigma: need(t.sigma, "sigma")? }
                    }
                    "empirical" => {
                        extra(&[("ms", t.ms.is_some()), ("mean_ms", t.mean_ms.is_some()), ("sd_ms", t.sd_ms.is_some()), ("median_ms", t.median_ms.is_some()), ("sigma", t.sigma.is_some())])?;
                        Dist::Empirical(t.samples_ms.clone().ok_or_else(|| D::Error::custom("dist = \"empirical\" needs `samples_ms`"))?)
                    }
                    other => {
                        return Err(D::Error::custom(format!(
                            "unknown dist `{other}` (expected fixed, normal, lognormal or empirical)"
                        )))
                    }
                }
            }
        };
        dist.check().map_err(D::Error::custom)
    }
}

impl schemars::JsonSchema for Dist {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Dist".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A cost in milliseconds: a number (fixed), or a distribution table.",
            "anyOf": [
                { "type": "number" },
                { "type": "object", "required": ["dist"], "properties": {
                    "dist": { "enum": ["fixed", "normal", "lognormal", "empirical"] },
                    "ms": { "type": "number" }, "mean_ms": { "type": "number" }, "sd_ms": { "type": "number" },
                    "median_ms": { "type": "number" }, "sigma": { "type": "number" },
                    "samples_ms": { "type": "array", "items": { "type": "number" } }
                } }
            ]
        })
    }
}

impl Serialize for Dist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Dist::Fixed(v) => s.serialize_f64(*v),
            Dist::Normal { mean, sd } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dist", "normal")?;
                m.serialize_entry("mean_ms", mean)?;
                m.serialize_entry("sd_ms", sd)?;
                m.end()
            }
            Dist::Lognormal { median, sigma } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dist", "lognormal")?;
                m.serialize_entry("median_ms", median)?;
                m.serialize_entry("sigma", sigma)?;
                m.end()
            }
            Dist::Empirical(v) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("dist", "empirical")?;
                m.serialize_entry("samples_ms", v)?;
                m.end()
            }
        }
    }
}

/// Fit a distribution to measured durations (ms): fixed when the spread is negligible
/// (coefficient of variation < 1%), otherwise a lognormal by the moments of the logs
/// (durations are positive and right-skewed), or empirical when asked to keep samples.
pub fn fit(samples_ms: &[f64], keep_samples: bool) -> Option<Dist> {
    let v: Vec<f64> = samples_ms.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    if v.len() < 3 || var.sqrt() / mean < 0.01 {
        return Some(Dist::Fixed(round3(mean)));
    }
    if keep_samples {
        return Some(Dist::Empirical(v.iter().map(|x| round3(*x)).collect()));
    }
    let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    let mu = logs.iter().sum::<f64>() / n;
    let s2 = logs.iter().map(|x| (x - mu) * (x - mu)).sum::<f64>() / (n - 1.0);
    // A lognormal over samples spread across orders of magnitude has a mean far above theirs
    // (exp(σ²/2) × the median): run 69's tail MSMs (~0.4 ms to ~100 ms, σ 4.5) became a mean of
    // 9.3 s a partition and a GPU floor of 121 s/proof. Keep the samples themselves instead.
    if s2.sqrt() > MAX_LOG_SIGMA {
        return Some(Dist::Empirical(v.iter().map(|x| round3(*x)).collect()));
    }
    Some(Dist::Lognormal { median: round3(mu.exp()), sigma: (s2.sqrt() * 1.0e4).round() / 1.0e4 })
}

/// The widest log-spread [`fit`] gives a lognormal (its mean 1.65× its median at 1.0).
const MAX_LOG_SIGMA: f64 = 1.0;

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_spread_over_orders_of_magnitude_stay_samples_with_their_mean() {
        // Mostly sub-millisecond with a few of ~100 ms (a tail MSM): a lognormal would have a
        // mean thousands of times theirs; the samples keep it.
        let v: Vec<f64> = (0..40).map(|i| if i % 10 == 0 { 100.0 } else { 0.4 + 0.01 * i as f64 }).collect();
        match fit(&v, false) {
            Some(Dist::Empirical(s)) => {
                let (m, want) = (s.iter().sum::<f64>() / s.len() as f64, v.iter().sum::<f64>() / v.len() as f64);
                assert!((m - want).abs() < 1e-3, "{m} {want}");
            }
            other => panic!("{other:?}"),
        }
        // A moderate spread is still a lognormal.
        let w: Vec<f64> = (0..40).map(|i| 2000.0 + 50.0 * (i % 7) as f64).collect();
        assert!(matches!(fit(&w, false), Some(Dist::Lognormal { .. })));
    }

    #[derive(Deserialize, Serialize, Debug, PartialEq, schemars::JsonSchema)]
    struct W {
        c: Dist,
    }

    #[test]
    fn parses_every_form_and_round_trips() {
        for src in [
            "c = 12.5",
            "c = 12",
            "c = { dist = \"fixed\", ms = 3 }",
            "c = { dist = \"normal\", mean_ms = 10, sd_ms = 2 }",
            "c = { dist = \"lognormal\", median_ms = 10, sigma = 0.1 }",
            "c = { dist = \"empirical\", samples_ms = [1, 2, 3] }",
        ] {
            let w: W = toml::from_str(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            let back: W = toml::from_str(&toml::to_string(&w).unwrap()).unwrap();
            assert_eq!(w, back);
        }
    }

    #[test]
    fn rejects_bad_tables_with_reasons() {
        let cases = [
            ("c = { dist = \"normal\", mean_ms = 10 }", "sd_ms"),
            ("c = { dist = \"weibull\", ms = 1 }", "unknown dist"),
            ("c = { dist = \"fixed\", ms = 1, bogus = 2 }", "bogus"),
            ("c = { dist = \"fixed\", ms = -1 }", "≥ 0"),
            ("c = { dist = \"empirical\", samples_ms = [] }", "empty"),
            ("c = \"fast\"", "number of milliseconds"),
            ("c = { dist = \"fixed\", ms = 1, sigma = 2 }", "does not apply"),
        ];
        for (src, want) in cases {
            let e = toml::from_str::<W>(src).unwrap_err().to_string();
            assert!(e.contains(want), "{src}: {e}");
        }
    }

    #[test]
    fn sampling_matches_means() {
        let mut r = Rng::new(3);
        for d in [
            Dist::Fixed(5.0),
            Dist::Normal { mean: 100.0, sd: 5.0 },
            Dist::Lognormal { median: 100.0, sigma: 0.2 },
            Dist::Empirical(vec![1.0, 2.0, 6.0]),
        ] {
            let n = 50_000;
            let m: f64 = (0..n).map(|_| d.sample_ns(&mut r) as f64 / 1e6).sum::<f64>() / n as f64;
            assert!((m - d.mean_ms()).abs() / d.mean_ms() < 0.01, "{d:?}: {m}");
        }
    }

    #[test]
    fn fit_picks_fixed_or_lognormal() {
        assert_eq!(fit(&[100.0, 100.2, 99.9], false), Some(Dist::Fixed(100.033)));
        let mut r = Rng::new(9);
        let v: Vec<f64> = (0..4000).map(|_| r.lognormal(4.0, 0.3)).collect();
        match fit(&v, false) {
            Some(Dist::Lognormal { median, sigma }) => {
                assert!((median - 4f64.exp()).abs() / 4f64.exp() < 0.02, "{median}");
                assert!((sigma - 0.3).abs() < 0.02, "{sigma}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fit(&[], false), None);
    }
}
