//! What-if tables: causal profiling without touching code. From one model (typically
//! calibrated on a measured run), every lever — each phase made 10, 25 or 50 % faster, each
//! resource made larger — is simulated, and the table says what the change buys in s/proof
//! and what binds afterwards: the table an engineer needs to decide what to optimise first.
//!
//! A phase lever scales its cost distribution ([`Dist::scaled`]) by (1 − x); a resource
//! lever multiplies the machine's cores or RAM by (1 + x) (GPUs: one more, then doubled), and
//! the partition workers (a knob that often binds) by (1 + x).
//! Every point runs the same model with the same seed, so the differences are the lever's
//! alone. The binding resource is the simulator's (the practical floor's binding).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::costs::Dist;
use crate::{simulate, Options};

/// One simulated change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WhatIfRow {
    /// What is changed (`synthesis`, `kernels`, `cpu_cores`, ...).
    pub lever: String,
    /// How, in words (`25 % faster`, `2× larger`, `+1`).
    pub change: String,
    /// Steady-state s/proof with the change (the sweep's steady state).
    pub steady_state_s_per_proof: Option<f64>,
    pub total_s_per_proof: Option<f64>,
    /// (base − changed) ÷ base of steady s/proof, percent: what the change buys.
    pub gain_pct: Option<f64>,
    /// What binds after the change (the model's practical binding).
    pub binding: String,
    /// Why a point could not run (out of RAM, out of VRAM), else none.
    pub failure: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WhatIf {
    pub base_steady_state_s_per_proof: Option<f64>,
    pub base_total_s_per_proof: Option<f64>,
    pub base_binding: String,
    pub rows: Vec<WhatIfRow>,
}

/// The phase levers: name and the cost keys they scale.
const PHASES: [(&str, &[&str]); 8] = [
    ("synthesis", &["synth"]),
    ("prep_msm", &["prep_msm"]),
    ("ntt_msm_h", &["ntt_msm_h"]),
    ("batch_add + tail_msm", &["batch_add", "tail_msm"]),
    ("msm_rest (L, A, B_G1)", &["msm_rest", "msm_b_g2"]),
    ("all kernels", &["ntt_msm_h", "batch_add", "tail_msm", "msm_rest", "msm_b_g2"]),
    ("upload", &["upload"]),
    ("G2 MSM on the CPU + epilogue", &["b_g2_msm", "epilogue"]),
];

fn cost_mut<'a>(c: &'a mut Config, key: &str) -> Option<&'a mut Dist> {
    let k = &mut c.costs;
    Some(match key {
        "synth" => &mut k.synth,
        "prep_msm" => &mut k.prep_msm,
        "ntt_msm_h" => &mut k.ntt_msm_h,
        "batch_add" => &mut k.batch_add,
        "tail_msm" => &mut k.tail_msm,
        "msm_rest" => &mut k.msm_rest,
        "msm_b_g2" => &mut k.msm_b_g2,
        "b_g2_msm" => &mut k.b_g2_msm,
        "epilogue" => &mut k.epilogue,
        _ => return None,
    })
}

/// Every change to simulate: (lever, change, config).
pub fn changes(base: &Config, levels_pct: &[f64]) -> Vec<(String, String, Config)> {
    let mut out = Vec::new();
    for (name, keys) in PHASES {
        for &x in levels_pct {
            let f = (1.0 - x / 100.0).max(0.0);
            let mut c = base.clone();
            for k in keys {
                if *k == "upload" {
                    c.costs.scale_upload(f);
                } else if let Some(d) = cost_mut(&mut c, k) {
                    *d = d.scaled(f);
                }
            }
            out.push((name.to_string(), format!("{x} % faster"), c));
        }
    }
    for &x in levels_pct {
        let mut c = base.clone();
        more_cores(&mut c, 1.0 + x / 100.0);
        out.push(("cpu_cores".into(), format!("{x} % more ({:.0})", c.machine.cpu_cores), c));
    }
    let mut c = base.clone();
    more_cores(&mut c, 2.0);
    out.push(("cpu_cores".into(), format!("2× ({:.0})", c.machine.cpu_cores), c));
    for (change, gpus) in [("+1", base.machine.gpus + 1), ("2×", base.machine.gpus * 2)] {
        if change == "2×" && base.machine.gpus == 1 {
            continue; // the same as +1
        }
        let mut c = base.clone();
        c.machine.gpus = gpus;
        out.push(("gpus".into(), format!("{change} ({gpus})"), c));
    }
    // The partition workers are a knob, not a resource, but they bind often: more of them.
    for &x in levels_pct {
        let mut c = base.clone();
        c.pipeline.pw = ((base.pipeline.pw as f64) * (1.0 + x / 100.0)).ceil() as u32;
        if c.pipeline.pw != base.pipeline.pw {
            out.push(("pw".into(), format!("{x} % more ({})", c.pipeline.pw), c));
        }
    }
    let mut c = base.clone();
    c.machine.ram_gib *= 2.0;
    out.push(("ram_gib".into(), format!("2× ({:.0} GiB)", c.machine.ram_gib), c));
    out
}

fn steady(r: &crate::SimResult) -> Option<f64> {
    (r.feasible && r.proofs_completed > 0).then_some(r.steady_state_s_per_proof)
}

/// Simulate the base and every change (in parallel).
pub fn run(base: &Config, levels_pct: &[f64]) -> WhatIf {
    let b = simulate(base, Options::default()).result;
    let base_steady = steady(&b);
    let rows = changes(base, levels_pct)
        .into_par_iter()
        .map(|(lever, change, c)| {
            let r = simulate(&c, Options::default()).result;
            let s = steady(&r);
            WhatIfRow {
                lever,
                change,
                steady_state_s_per_proof: s,
                total_s_per_proof: r.feasible.then_some(r.total_s_per_proof),
                gain_pct: match (base_steady, s) {
                    (Some(b0), Some(s)) if b0 > 0.0 => Some(100.0 * (b0 - s) / b0),
                    _ => None,
                },
                binding: r.floors.practical_binding.clone(),
                failure: r.failure.as_ref().map(|f| format!("{}: {}", f.kind, f.detail)),
            }
        })
        .collect();
    WhatIf {
        base_steady_state_s_per_proof: base_steady,
        base_total_s_per_proof: b.feasible.then_some(b.total_s_per_proof),
        base_binding: b.floors.practical_binding.clone(),
        rows,
    }
}

impl WhatIf {
    /// The table, Markdown.
    pub fn markdown(&self) -> String {
        let f = |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{x:.3}"));
        let mut s = format!(
            "Base: **{} s/proof** steady state ({} total), binding: **{}**.\n\n| lever | change | steady s/proof | gain | binds then |\n|---|---|---:|---:|---|\n",
            f(self.base_steady_state_s_per_proof),
            f(self.base_total_s_per_proof),
            self.base_binding
        );
        for r in &self.rows {
            let gain = r.gain_pct.map_or("—".to_string(), |g| format!("{g:+.1} %"));
            let bind = match &r.failure {
                Some(why) => format!("fails: {why}"),
                None => r.binding.clone(),
            };
            s.push_str(&format!("| {} | {} | {} | {} | {} |\n", r.lever, r.change, f(r.steady_state_s_per_proof), gain, bind));
        }
        s
    }
}

/// The machine with `f` times the cores: the capacity they deliver scales with them.
fn more_cores(c: &mut Config, f: f64) {
    c.machine.cpu_cores *= f;
    if let Some(cap) = c.machine.cpu_capacity.as_mut() {
        *cap *= f;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase8() -> Config {
        Config::load(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap()
    }

    #[test]
    fn scaling_a_distribution_scales_its_mean() {
        for d in [Dist::Fixed(10.0), Dist::Normal { mean: 10.0, sd: 2.0 }, Dist::Lognormal { median: 10.0, sigma: 0.1 }, Dist::Empirical(vec![5.0, 15.0])] {
            assert!((d.scaled(0.75).mean_ms() - 0.75 * d.mean_ms()).abs() < 1e-9, "{d:?}");
        }
    }

    /// Phase 8 is GPU-bound (37.46 s/proof against 37.5 of serial kernel time, the
    /// reference), with synthesis right behind: 36.5 s × 10 partitions ÷ pw 10 = 36.5
    /// s/proof. Kernels 25 % faster would be 28.1 s/proof, so synthesis binds next at 36.5:
    /// the lever buys (37.46 − 36.5) ÷ 37.46 = 2.6 %, and says so; faster synthesis alone
    /// buys nothing.
    #[test]
    fn a_gpu_bound_model_gains_from_kernels_until_synthesis_binds() {
        let w = run(&phase8(), &[25.0]);
        let row = |lever: &str| w.rows.iter().find(|r| r.lever == lever).unwrap();
        let kernels = row("all kernels");
        assert!((kernels.steady_state_s_per_proof.unwrap() - 36.5).abs() < 0.05, "{}", w.markdown());
        assert!((kernels.gain_pct.unwrap() - 2.56).abs() < 0.2, "{}", w.markdown());
        assert_eq!(kernels.binding, "partition workers");
        assert_eq!(w.base_binding, "gpu kernels");
        assert!(row("synthesis").gain_pct.unwrap().abs() < 0.01, "{}", w.markdown());
        // Every phase lever at the level, plus cores and pw at the level; the resources once or twice.
        assert_eq!(w.rows.iter().filter(|r| r.change.starts_with("25 %")).count(), PHASES.len() + 2);
        assert!(w.rows.iter().any(|r| r.lever == "gpus") && w.rows.iter().any(|r| r.lever == "ram_gib"));
    }

    /// A synthesis-bound model (synthesis 4× slower than the reference) gains from
    /// synthesis and from cores, not from the kernels.
    #[test]
    fn a_synthesis_bound_model_gains_from_synthesis() {
        let mut c = phase8();
        c.costs.synth = c.costs.synth.scaled(4.0);
        let w = run(&c, &[50.0]);
        let row = |lever: &str| w.rows.iter().find(|r| r.lever == lever).unwrap();
        let synth = row("synthesis").gain_pct.unwrap();
        let kernels = row("all kernels").gain_pct.unwrap();
        assert!(synth > 20.0, "synthesis {synth}: {}", w.markdown());
        assert!(kernels.abs() < 2.0, "kernels {kernels}: {}", w.markdown());
    }
}
