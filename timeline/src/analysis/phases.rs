//! Per-phase statistics: for every span kind (and every kind on every device), the count,
//! mean, p50/p95/p99 (linear interpolation), min, max and total duration, plus the share
//! of the run's wall time: `share_of_wall` = total ÷ wall (above 1 when spans of the kind
//! run concurrently, e.g. 6 synthesis workers) and `busy_share_of_wall` = union ÷ wall
//! (the fraction of time at least one span of the kind was running).

use serde::{Deserialize, Serialize};

use super::utilization::{merge_intervals, total_ns};
use super::{ms, quantile_sorted};
use crate::event::{Run, Span, SpanKind};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseRow {
    pub kind: String,
    /// `None` in the per-kind rows; the device in the per-device rows.
    pub device: Option<u32>,
    /// Closed spans.
    pub count: u64,
    /// Spans that never ended (no duration).
    pub open: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub total_ms: f64,
    /// Union of the kind's spans.
    pub union_ms: f64,
    pub share_of_wall: f64,
    pub busy_share_of_wall: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phases {
    /// First event → last end of the run.
    pub wall_ms: f64,
    pub by_kind: Vec<PhaseRow>,
    pub by_kind_device: Vec<PhaseRow>,
}

impl Phases {
    /// The per-kind row of a kind.
    pub fn kind(&self, kind: &str) -> Option<&PhaseRow> {
        self.by_kind.iter().find(|r| r.kind == kind)
    }
}

/// Sort key: known kinds in pipeline order, then unknown ones by name.
fn order(kind: &SpanKind) -> (usize, String) {
    match SpanKind::KNOWN.iter().position(|k| k == kind) {
        Some(i) => (i, String::new()),
        None => (SpanKind::KNOWN.len(), kind.as_str().to_string()),
    }
}

/// Device a span counts for in the per-device rows.
fn device_of(s: &Span) -> Option<u32> {
    if s.device.is_some() || s.kind == SpanKind::Gpu || s.kind.is_device_work() {
        Some(s.device_or_0())
    } else {
        None
    }
}

#[derive(Default)]
struct Acc {
    durs: Vec<f64>,
    iv: Vec<(u64, u64)>,
    open: u64,
}

impl Acc {
    fn push(&mut self, s: &Span) {
        match s.end_ns {
            Some(e) => {
                self.durs.push(ms(e.saturating_sub(s.start_ns)));
                self.iv.push((s.start_ns, e));
            }
            None => self.open += 1,
        }
    }
    fn row(mut self, kind: String, device: Option<u32>, wall_ns: u64) -> PhaseRow {
        self.durs.sort_by(f64::total_cmp);
        let q = |p| quantile_sorted(&self.durs, p).unwrap_or(0.0);
        let total: f64 = self.durs.iter().sum();
        let union = total_ns(&merge_intervals(std::mem::take(&mut self.iv)));
        let wall_ms = ms(wall_ns);
        let share = |v: f64| if wall_ms > 0.0 { v / wall_ms } else { 0.0 };
        PhaseRow {
            kind,
            device,
            count: self.durs.len() as u64,
            open: self.open,
            mean_ms: if self.durs.is_empty() { 0.0 } else { total / self.durs.len() as f64 },
            p50_ms: q(0.5),
            p95_ms: q(0.95),
            p99_ms: q(0.99),
            min_ms: self.durs.first().copied().unwrap_or(0.0),
            max_ms: self.durs.last().copied().unwrap_or(0.0),
            total_ms: total,
            union_ms: ms(union),
            share_of_wall: share(total),
            busy_share_of_wall: share(ms(union)),
        }
    }
}

pub fn analyze(run: &Run) -> Phases {
    let start = run.spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let end = run.spans.iter().filter_map(|s| s.end_ns).max().unwrap_or(start).max(start);
    let wall = end - start;
    // Slot per kind: known kinds by their index, unknown ones after them.
    let known = SpanKind::KNOWN.len();
    let mut other: FxHashMap<&str, usize> = FxHashMap::default();
    let mut kinds: Vec<Option<(&SpanKind, Acc)>> = (0..known).map(|_| None).collect();
    let mut dev_slot: FxHashMap<(usize, u32), usize> = FxHashMap::default();
    let mut devs: Vec<(u32, &SpanKind, Acc)> = Vec::new();
    for s in &run.spans {
        let slot = match SpanKind::KNOWN.iter().position(|k| k == &s.kind) {
            Some(i) => i,
            None => {
                let n = known + other.len();
                *other.entry(s.kind.as_str()).or_insert(n)
            }
        };
        if slot >= kinds.len() {
            kinds.resize_with(slot + 1, || None);
        }
        kinds[slot].get_or_insert_with(|| (&s.kind, Acc::default())).1.push(s);
        if let Some(d) = device_of(s) {
            let n = devs.len();
            let i = *dev_slot.entry((slot, d)).or_insert(n);
            if i == n {
                devs.push((d, &s.kind, Acc::default()));
            }
            devs[i].2.push(s);
        }
    }
    let mut by_kind: Vec<((usize, String), PhaseRow)> =
        kinds.into_iter().flatten().map(|(k, a)| (order(k), a.row(k.as_str().to_string(), None, wall))).collect();
    by_kind.sort_by(|a, b| a.0.cmp(&b.0));
    let mut by_dev: Vec<((usize, String), u32, PhaseRow)> =
        devs.into_iter().map(|(d, k, a)| (order(k), d, a.row(k.as_str().to_string(), Some(d), wall))).collect();
    by_dev.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    Phases {
        wall_ms: ms(wall),
        by_kind: by_kind.into_iter().map(|(_, r)| r).collect(),
        by_kind_device: by_dev.into_iter().map(|(_, _, r)| r).collect(),
    }
}
