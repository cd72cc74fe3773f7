//! Several runs side by side — the seeds' "throughput evolution" table: s/proof (steady
//! state where there are two proofs or more), total s/proof, GPU utilisation, the binding
//! resource, the speed-up against the first run (baseline) and the previous one, what else
//! the host did (other processes, steal) where the prover sampled it, and the p50 of every
//! phase that any run reports.

use serde::{Deserialize, Serialize};

use super::summary::Summary;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareRow {
    pub label: String,
    pub proofs_completed: u64,
    /// Steady state, else total.
    pub s_per_proof: Option<f64>,
    pub steady_state_s_per_proof: Option<f64>,
    pub total_s_per_proof: Option<f64>,
    pub gpu_utilization: Option<f64>,
    pub kernel_utilization: Option<f64>,
    pub binding_resource: String,
    /// baseline s/proof ÷ this s/proof (> 1: faster than the baseline).
    pub speedup_vs_baseline: Option<f64>,
    /// previous s/proof ÷ this s/proof.
    pub speedup_vs_previous: Option<f64>,
    /// p50 per phase, in the order of [`Comparison::phase_kinds`] (`None`: not in this run).
    pub phase_p50_ms: Vec<Option<f64>>,
    /// Mean cores other processes and the hypervisor's steal took during the run
    /// ([`super::host`]); `None` without the prover's host counters.
    #[serde(default)]
    pub host_other_cores: Option<f64>,
    #[serde(default)]
    pub host_steal_cores: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    pub phase_kinds: Vec<String>,
    pub rows: Vec<CompareRow>,
}

fn ratio(base: Option<f64>, this: Option<f64>) -> Option<f64> {
    match (base, this) {
        (Some(b), Some(t)) if t > 0.0 && b.is_finite() => Some(b / t),
        _ => None,
    }
}

/// Compare labelled summaries; the first is the baseline.
pub fn compare(runs: &[(String, Summary)]) -> Comparison {
    let mut kinds: Vec<String> = Vec::new();
    for (_, s) in runs {
        for r in &s.phases.by_kind {
            if r.count > 0 && !kinds.contains(&r.kind) {
                kinds.push(r.kind.clone());
            }
        }
    }
    let base = runs.first().and_then(|(_, s)| s.s_per_proof());
    let mut prev: Option<f64> = None;
    let rows = runs
        .iter()
        .map(|(label, s)| {
            let this = s.s_per_proof();
            let row = CompareRow {
                label: label.clone(),
                proofs_completed: s.proofs_completed,
                s_per_proof: this,
                steady_state_s_per_proof: s.steady_state_s_per_proof,
                total_s_per_proof: s.total_s_per_proof,
                gpu_utilization: s.gpu_utilization,
                kernel_utilization: s.kernel_utilization,
                binding_resource: s.binding_resource.clone(),
                speedup_vs_baseline: ratio(base, this),
                speedup_vs_previous: ratio(prev, this),
                phase_p50_ms: kinds.iter().map(|k| s.phases.kind(k).filter(|r| r.count > 0).map(|r| r.p50_ms)).collect(),
                host_other_cores: s.host.as_ref().and_then(|h| h.other_cores_mean),
                host_steal_cores: s.host.as_ref().and_then(|h| h.steal_cores_mean),
            };
            prev = this;
            row
        })
        .collect();
    Comparison { phase_kinds: kinds, rows }
}

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.digits$}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.1} %", v * 100.0))
}

fn times(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{v:.2}×"))
}

/// Escape a cell for a Markdown table.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

impl Comparison {
    /// The comparison as a Markdown table (plus a second one of phase p50s).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        // The host column only when some run sampled the host.
        let host = self.rows.iter().any(|r| r.host_other_cores.is_some() || r.host_steal_cores.is_some());
        out.push_str("| run | proofs | s/proof | steady s/proof | total s/proof | GPU util | kernel util | binding | × baseline | × previous |");
        out.push_str(if host { " host: other / steal cores |\n" } else { "\n" });
        out.push_str("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|");
        out.push_str(if host { "---:|\n" } else { "\n" });
        for r in &self.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&r.label),
                r.proofs_completed,
                f(r.s_per_proof, 2),
                f(r.steady_state_s_per_proof, 2),
                f(r.total_s_per_proof, 2),
                pct(r.gpu_utilization),
                pct(r.kernel_utilization),
                cell(&r.binding_resource),
                times(r.speedup_vs_baseline),
                times(r.speedup_vs_previous),
            ));
            if host {
                out.push_str(&format!(" {} / {} |", f(r.host_other_cores, 2), f(r.host_steal_cores, 2)));
            }
            out.push('\n');
        }
        if !self.phase_kinds.is_empty() {
            out.push_str("\nPhase p50 (ms):\n\n| run |");
            for k in &self.phase_kinds {
                out.push_str(&format!(" {} |", cell(k)));
            }
            out.push_str("\n|---|");
            out.push_str(&"---:|".repeat(self.phase_kinds.len()));
            out.push('\n');
            for r in &self.rows {
                out.push_str(&format!("| {} |", cell(&r.label)));
                for v in &r.phase_p50_ms {
                    out.push_str(&format!(" {} |", f(*v, 1)));
                }
                out.push('\n');
            }
        }
        out
    }
}
