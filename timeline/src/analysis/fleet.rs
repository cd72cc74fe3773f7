//! A fleet: the same daemon on many hosts, one log each. `proofscope analyze` writes each
//! host's own report and, across hosts, this table: s/proof per proof type, GPU busy and
//! kernel utilisation, idle time by cause, the binding resource, and the worst host with
//! the reason. It is built from one [`FleetHost`] row per host, taken from that host's
//! [`Summary`] as soon as the host is analysed, so that a fleet never holds more than one
//! host's events (plus these rows).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::summary::Summary;
use super::verdict::num;
use super::{median, AnalyzeOptions};

/// Version of `fleet.json`'s schema; history in docs/reference/summary-json.md.
pub const FLEET_SCHEMA_VERSION: u32 = 1;

/// One proof type on one host.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostType {
    pub proof_type: String,
    pub proofs_completed: u64,
    /// Steady state, else total (one proof).
    pub s_per_proof: Option<f64>,
    /// `steady_state` or `total`.
    pub basis: Option<String>,
    pub binding_resource: String,
}

/// One host's row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetHost {
    /// The host's label (`--labels`, else the log's file name).
    pub label: String,
    /// The log it was read from.
    pub input: String,
    /// The host the log names (journald's `_HOSTNAME`, the prefix), when it does.
    pub host: Option<String>,
    /// The host's report folder, relative to the fleet's.
    pub report: String,
    pub proofs_completed: u64,
    pub types: Vec<HostType>,
    /// Union of `gpu` spans over the window, all devices (0..=1).
    pub gpu_utilization: Option<f64>,
    pub kernel_utilization: Option<f64>,
    pub devices: u32,
    pub wall_s: f64,
    /// Listed idle time per cause, ms (every cause, zero included).
    pub idle_ms_by_cause: BTreeMap<String, f64>,
    pub idle_total_ms: f64,
    /// The primary type's binding resource.
    pub binding_resource: String,
    pub daemon_runs: u32,
    pub lines_total: u64,
    pub lines_rejected: u64,
    pub open_spans: u64,
    /// What is wrong with the log as a whole (no events, …).
    pub problems: Vec<String>,
}

impl FleetHost {
    /// The row of one analysed host.
    pub fn of(label: &str, report: &str, s: &Summary) -> FleetHost {
        let types = s
            .proof_types
            .iter()
            .map(|t| HostType {
                proof_type: t.proof_type.clone(),
                proofs_completed: t.proofs_completed,
                s_per_proof: t.s_per_proof(),
                basis: t.verdict.measured_basis.clone().or_else(|| t.s_per_proof().map(|_| if t.steady_state_s_per_proof.is_some() { "steady_state" } else { "total" }.to_string())),
                binding_resource: t.binding_resource.clone(),
            })
            .collect();
        FleetHost {
            label: label.to_string(),
            input: s.input.clone().unwrap_or_default(),
            host: s.meta.host.clone(),
            report: report.to_string(),
            proofs_completed: s.proof_types.iter().map(|t| t.proofs_completed).sum(),
            types,
            gpu_utilization: s.gpu_utilization,
            kernel_utilization: s.kernel_utilization,
            devices: s.run.devices.len() as u32,
            wall_s: s.run.wall_s,
            idle_ms_by_cause: s.idle_gap_totals.by_cause.iter().map(|c| (c.cause.as_str().to_string(), c.total_ms)).collect(),
            idle_total_ms: s.idle_gap_totals.idle_total_ms,
            binding_resource: s.binding_resource.clone(),
            daemon_runs: s.daemon_runs.len().max(1) as u32,
            lines_total: s.diagnostics.lines_total,
            lines_rejected: s.diagnostics.lines_rejected,
            open_spans: s.diagnostics.open_spans,
            problems: s.diagnostics.problems.clone(),
        }
    }

    /// s/proof of one type on this host.
    pub fn s_per_proof(&self, proof_type: &str) -> Option<f64> {
        self.types.iter().find(|t| t.proof_type == proof_type).and_then(|t| t.s_per_proof)
    }
}

/// One proof type across the fleet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetType {
    pub proof_type: String,
    /// Hosts with a completed proof of this type.
    pub hosts: u32,
    pub proofs_completed: u64,
    pub median_s_per_proof: Option<f64>,
    pub best_host: Option<String>,
    pub best_s_per_proof: Option<f64>,
    pub worst_host: Option<String>,
    pub worst_s_per_proof: Option<f64>,
}

/// The host that most needs a look, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorstHost {
    pub label: String,
    /// The proof type it was judged on (none when its log gave no proof at all).
    pub proof_type: Option<String>,
    pub s_per_proof: Option<f64>,
    /// Its s/proof ÷ the fleet's median for that type.
    pub vs_median: Option<f64>,
    pub binding_resource: String,
    /// One sentence.
    pub why: String,
}

/// The fleet table (`fleet.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fleet {
    pub schema_version: u32,
    pub tool_version: String,
    pub options: AnalyzeOptions,
    pub hosts: Vec<FleetHost>,
    /// Per proof type, most proofs first.
    pub types: Vec<FleetType>,
    /// Idle time per cause over all hosts, ms.
    pub idle_ms_by_cause: BTreeMap<String, f64>,
    pub worst_host: Option<WorstHost>,
}

/// Build the table from the hosts' rows.
pub fn build(hosts: Vec<FleetHost>, opts: &AnalyzeOptions) -> Fleet {
    let mut by_type: BTreeMap<String, Vec<(usize, f64, u64)>> = BTreeMap::new();
    let mut proofs: BTreeMap<String, u64> = BTreeMap::new();
    for (i, h) in hosts.iter().enumerate() {
        for t in &h.types {
            *proofs.entry(t.proof_type.clone()).or_default() += t.proofs_completed;
            if let Some(s) = t.s_per_proof {
                by_type.entry(t.proof_type.clone()).or_default().push((i, s, t.proofs_completed));
            }
        }
    }
    let mut types: Vec<FleetType> = proofs
        .iter()
        .map(|(name, &n)| {
            let v = by_type.get(name).cloned().unwrap_or_default();
            let best = v.iter().min_by(|a, b| a.1.total_cmp(&b.1));
            let worst = v.iter().max_by(|a, b| a.1.total_cmp(&b.1));
            FleetType {
                proof_type: name.clone(),
                hosts: v.len() as u32,
                proofs_completed: n,
                median_s_per_proof: median(v.iter().map(|x| x.1).collect()),
                best_host: best.map(|b| hosts[b.0].label.clone()),
                best_s_per_proof: best.map(|b| b.1),
                worst_host: worst.map(|w| hosts[w.0].label.clone()),
                worst_s_per_proof: worst.map(|w| w.1),
            }
        })
        .collect();
    types.sort_by(|a, b| b.proofs_completed.cmp(&a.proofs_completed).then(a.proof_type.cmp(&b.proof_type)));
    let mut idle: BTreeMap<String, f64> = BTreeMap::new();
    for h in &hosts {
        for (c, ms) in &h.idle_ms_by_cause {
            *idle.entry(c.clone()).or_default() += ms;
        }
    }
    let worst_host = worst(&hosts, &types);
    Fleet { schema_version: FLEET_SCHEMA_VERSION, tool_version: env!("CARGO_PKG_VERSION").to_string(), options: opts.clone(), hosts, types, idle_ms_by_cause: idle, worst_host }
}

/// The worst host: one whose log gave no event or no proof at all while others did;
/// else the slowest host (s/proof ÷ the fleet's median) on the fleet's main proof type.
fn worst(hosts: &[FleetHost], types: &[FleetType]) -> Option<WorstHost> {
    if hosts.len() < 2 {
        return None;
    }
    if let Some(h) = hosts.iter().find(|h| h.proofs_completed == 0) {
        let why = match h.problems.first() {
            Some(p) => format!("its log gave no completed proof: {p}"),
            None => format!("its log gave no completed proof ({} lines, {} rejected, {} spans never ended)", h.lines_total, h.lines_rejected, h.open_spans),
        };
        return Some(WorstHost { label: h.label.clone(), proof_type: None, s_per_proof: None, vs_median: None, binding_resource: h.binding_resource.clone(), why });
    }
    let main = types.iter().find(|t| t.median_s_per_proof.is_some())?;
    let med = main.median_s_per_proof?;
    let (h, s) = hosts.iter().filter_map(|h| h.s_per_proof(&main.proof_type).map(|s| (h, s))).max_by(|a, b| a.1.total_cmp(&b.1))?;
    let ratio = if med > 0.0 { s / med } else { 1.0 };
    let binding = h.types.iter().find(|t| t.proof_type == main.proof_type).map_or(h.binding_resource.clone(), |t| t.binding_resource.clone());
    let top_cause = h.idle_ms_by_cause.iter().filter(|(_, &ms)| ms > 0.0).max_by(|a, b| a.1.total_cmp(b.1));
    let fleet_util = median(hosts.iter().filter_map(|h| h.gpu_utilization).collect());
    let mut why = format!(
        "{} s/proof on {} is {:.2}× the fleet median ({} s/proof); binding: {}",
        num(s),
        main.proof_type,
        ratio,
        num(med),
        binding
    );
    if let (Some(u), Some(fu)) = (h.gpu_utilization, fleet_util) {
        let _ = write!(why, "; GPU busy {:.1} % (fleet median {:.1} %)", u * 100.0, fu * 100.0);
    }
    if let Some((c, ms)) = top_cause {
        let _ = write!(why, "; most of its GPU idle time is {c} ({} s)", num(ms / 1e3));
    }
    if h.daemon_runs > 1 {
        let _ = write!(why, "; its log spans {} daemon runs (restarts)", h.daemon_runs);
    }
    Some(WorstHost { label: h.label.clone(), proof_type: Some(main.proof_type.clone()), s_per_proof: Some(s), vs_median: Some(ratio), binding_resource: binding, why })
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.1} %", v * 100.0))
}

fn opt_s(v: Option<f64>) -> String {
    v.map_or("—".into(), num)
}

/// `fleet.md`.
pub fn render_markdown(f: &Fleet) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# proofscope fleet report — {} hosts\n", f.hosts.len());
    if let Some(w) = &f.worst_host {
        let _ = writeln!(o, "**Worst host: {}** — {}.\n", w.label, w.why);
    }
    let _ = writeln!(o, "## Per proof type\n\n| proof type | hosts | proofs | median s/proof | best | worst |\n|---|---:|---:|---:|---|---|");
    for t in &f.types {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            t.proof_type,
            t.hosts,
            t.proofs_completed,
            opt_s(t.median_s_per_proof),
            t.best_host.as_ref().map_or("—".into(), |h| format!("{h} ({})", opt_s(t.best_s_per_proof))),
            t.worst_host.as_ref().map_or("—".into(), |h| format!("{h} ({})", opt_s(t.worst_s_per_proof))),
        );
    }
    let names: Vec<&str> = f.types.iter().map(|t| t.proof_type.as_str()).collect();
    let causes: Vec<&str> = super::gaps::GapCause::ALL.iter().map(|c| c.as_str()).collect();
    let _ = writeln!(o, "\n## Hosts\n\ns/proof per type (steady state, else total); GPU busy = union of GPU calls over the window; idle = listed GPU idle time in seconds by cause.\n");
    let mut head = String::from("| host |");
    let mut rule = String::from("|---|");
    for n in &names {
        let _ = write!(head, " {n} s/proof |");
        rule.push_str("---:|");
    }
    head.push_str(" GPU busy | kernels | binding |");
    rule.push_str("---:|---:|---|");
    for c in &causes {
        let _ = write!(head, " idle {c} s |");
        rule.push_str("---:|");
    }
    head.push_str(" notes |");
    rule.push_str("---|");
    let _ = writeln!(o, "{head}\n{rule}");
    for h in &f.hosts {
        let mut row = format!("| [{}]({}/report.md) |", h.label, h.report);
        for n in &names {
            let _ = write!(row, " {} |", opt_s(h.s_per_proof(n)));
        }
        let _ = write!(row, " {} | {} | {} |", opt_pct(h.gpu_utilization), opt_pct(h.kernel_utilization), h.binding_resource);
        for c in &causes {
            let _ = write!(row, " {} |", num(h.idle_ms_by_cause.get(*c).copied().unwrap_or(0.0) / 1e3));
        }
        let mut notes = Vec::new();
        if h.daemon_runs > 1 {
            notes.push(format!("{} daemon runs", h.daemon_runs));
        }
        if h.lines_rejected > 0 {
            notes.push(format!("{} lines rejected", h.lines_rejected));
        }
        notes.extend(h.problems.iter().take(1).cloned());
        let _ = writeln!(o, "{row} {} |", notes.join("; ").replace('|', "\\|"));
    }
    let _ = writeln!(o, "\n## GPU idle time by cause, all hosts\n\n| cause | s |\n|---|---:|");
    for c in &causes {
        let _ = writeln!(o, "| {c} | {} |", num(f.idle_ms_by_cause.get(*c).copied().unwrap_or(0.0) / 1e3));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(label: &str, s: Option<f64>, util: f64) -> FleetHost {
        FleetHost {
            label: label.into(),
            report: label.into(),
            proofs_completed: u64::from(s.is_some()) * 5,
            types: vec![HostType { proof_type: "porep-c2".into(), proofs_completed: u64::from(s.is_some()) * 5, s_per_proof: s, basis: None, binding_resource: "gpu".into() }],
            gpu_utilization: Some(util),
            idle_ms_by_cause: [("synthesis_starved".to_string(), 2000.0)].into_iter().collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_worst_host_is_the_slowest_against_the_median_or_one_without_proofs() {
        let f = build(vec![host("a", Some(40.0), 0.9), host("b", Some(60.0), 0.6), host("c", Some(42.0), 0.88)], &AnalyzeOptions::default());
        let w = f.worst_host.unwrap();
        assert_eq!(w.label, "b");
        assert_eq!(w.vs_median, Some(60.0 / 42.0));
        assert!(w.why.contains("1.43× the fleet median (42.0 s/proof)") && w.why.contains("synthesis_starved"), "{}", w.why);
        assert_eq!(f.types[0].median_s_per_proof, Some(42.0));
        assert_eq!(f.idle_ms_by_cause["synthesis_starved"], 6000.0);
        let f = build(vec![host("a", Some(40.0), 0.9), host("d", None, 0.0)], &AnalyzeOptions::default());
        assert_eq!(f.worst_host.as_ref().unwrap().label, "d");
        let md = render_markdown(&f);
        assert!(md.contains("| [a](a/report.md) | 40.0 |"), "{md}");
    }
}
