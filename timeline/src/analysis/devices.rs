//! Several devices in one host (issue 22): each device's share of the work and why it
//! idled, and a host-level verdict — do the GPUs bind, the shared host (CPU, RAM) that feeds
//! them, the placement of partitions on devices, or one device?
//!
//! It exists because the run-level [`verdict`](super::verdict) pools the devices: two GPUs
//! idle 30 % each for the same host cause and one GPU busy beside one that was never given
//! work read alike there, and they call for opposite fixes (a faster host vs. a better
//! placement).
//!
//! Per device, over the **common window** (the first busy moment of any device to the last
//! of any, so that a device that started late or ran dry early shows it), at the gaps' level
//! (kernel spans when reported, else `gpu` spans; [`super::gaps`]):
//! - `placement_idle_ms`: idle while partitions waited in the shared GPU queue (`gpu_queue`
//!   spans) and no worker of the device had a call (`gpu_pickup`/`gpu` spans): work existed,
//!   this device did not get it;
//! - the rest of its listed gaps by cause (`synthesis_starved`, `memory`, `cpu_prep`, `lock`,
//!   `dispatch`, `cold_start`, `other`), less what is placement idle;
//! - `tail_idle_ms`: after its last busy moment while another device still worked (and no
//!   partition waited), `unlisted_idle_ms` the short gaps.
//!
//! The device's reason is the largest group among host (`synthesis_starved` + `memory` +
//! `cpu_prep`: the shared CPU and RAM), placement (placement idle + `dispatch`) and device
//! (`lock`); a device idle less than [`BUSY_IDLE_SHARE`] of the window, not counting its
//! warm-up (`cold_start`) and its drain (`tail_idle_ms`), is `busy`. The host
//! verdict ([`HostVerdict::binding`]):
//! - `gpus` — every device busy: the GPUs bind (another GPU would add throughput);
//! - `imbalance` — a device idled mostly while work waited for it elsewhere (placement);
//! - `host` — every idle device idled mostly for host causes (`host_cause` names the
//!   largest): the shared CPU/RAM cannot feed the devices;
//! - `device` — the idle devices idled for device-local reasons (their lock) or the only
//!   busy device is the one that binds (`device` names it);
//! - `unknown` — idle for no visible reason, or no completed work.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::gaps::{GapAnalysis, GapCause};
use super::host::HostLoad;
use super::utilization::{merge_intervals, overlap_ns, total_ns};
use super::verdict::num;
use super::ms;
use crate::event::{Run, SpanKind};

/// A device idle less than this share of the common window is busy.
pub const BUSY_IDLE_SHARE: f64 = 0.10;

/// One device of a several-device run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceShare {
    pub device: u32,
    /// Closed `gpu` calls on the device.
    pub partitions: u64,
    /// Its share of all closed `gpu` calls, 0..=1.
    pub share_of_partitions: f64,
    /// Mean closed `gpu` call, ms.
    pub mean_gpu_call_ms: Option<f64>,
    /// `kernel` or `gpu`: what busy means here (as in `idle_gap_totals.devices`).
    pub level: String,
    /// Busy time within the common window, ms.
    pub busy_ms: f64,
    /// Idle time within the common window, ms, and its share of the window.
    pub idle_ms: f64,
    pub idle_share: f64,
    /// The idle share without the warm-up (`cold_start`) and the drain (`tail_idle_ms`):
    /// what `reason` judges against [`BUSY_IDLE_SHARE`].
    pub judged_idle_share: f64,
    /// Idle while partitions waited in the GPU queue and no worker of this device had a call.
    pub placement_idle_ms: f64,
    /// Listed gaps by cause within the common window (placement idle taken out), ms, in
    /// `GapCause::ALL` order; causes with none left out.
    pub idle_by_cause_ms: BTreeMap<String, f64>,
    /// After its last busy moment while another device still worked, nothing waiting.
    pub tail_idle_ms: f64,
    /// Idle not in a listed gap (gaps below the threshold), ms.
    pub unlisted_idle_ms: f64,
    /// `busy`, `host`, `placement`, `device` or `unknown`: why it idled (see the module doc).
    pub reason: String,
}

/// The host-level verdict of a several-device run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostVerdict {
    /// `gpus`, `host`, `imbalance`, `device` or `unknown` (see the module doc).
    pub binding: String,
    /// With `host`: the gap cause that idled the devices most (`synthesis_starved`,
    /// `memory`, `cpu_prep`).
    pub host_cause: Option<String>,
    /// With `device` or `imbalance`: the device that binds, or the one left idle.
    pub device: Option<u32>,
    /// One sentence with the deciding numbers.
    pub headline: String,
    /// One line per device and the host's load, when sampled.
    pub evidence: Vec<String>,
}

/// The per-device view and the host verdict (only for runs with two or more devices).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MultiDevice {
    /// The common window: first busy moment of any device → last of any, ms.
    pub window_start_ms: f64,
    pub window_end_ms: f64,
    pub devices: Vec<DeviceShare>,
    pub host: HostVerdict,
}

/// `a` less the union `b` (both merged, sorted).
fn subtract(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut cur = s;
        while j < b.len() && b[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > cur {
                out.push((cur, b[k].0));
            }
            cur = cur.max(b[k].1);
            k += 1;
        }
        if cur < e {
            out.push((cur, e));
        }
    }
    out
}

/// Intersection of two merged unions.
fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if s < e {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[derive(Default)]
struct Acc {
    gpu: Vec<(u64, u64)>,
    work: Vec<(u64, u64)>,
    engaged: Vec<(u64, u64)>,
    calls: u64,
    call_ns: u64,
}

fn group(cause: GapCause) -> Option<&'static str> {
    match cause {
        GapCause::SynthesisStarved | GapCause::Memory | GapCause::CpuPrep => Some("host"),
        GapCause::Dispatch => Some("placement"),
        GapCause::Lock => Some("device"),
        GapCause::ColdStart | GapCause::Other => None,
    }
}

/// The several-device view of a run; `None` with fewer than two devices (those seen in
/// spans, and `meta.config.gpus`: a device given no work at all still counts).
pub fn analyze(run: &Run, gaps: &GapAnalysis, host: Option<&HostLoad>) -> Option<MultiDevice> {
    let mut acc: BTreeMap<u32, Acc> = BTreeMap::new();
    let mut waiting = Vec::new();
    for s in &run.spans {
        let Some(e) = s.end_ns else { continue };
        match &s.kind {
            SpanKind::GpuQueue => waiting.push((s.start_ns, e)),
            SpanKind::Gpu => {
                let a = acc.entry(s.device_or_0()).or_default();
                a.gpu.push((s.start_ns, e));
                a.engaged.push((s.start_ns, e));
                a.calls += 1;
                a.call_ns = a.call_ns.saturating_add(e.saturating_sub(s.start_ns));
            }
            SpanKind::GpuPickup => acc.entry(s.device_or_0()).or_default().engaged.push((s.start_ns, e)),
            k if k.is_device_work() => acc.entry(s.device_or_0()).or_default().work.extend(s.device_interval()),
            _ => {}
        }
    }
    for d in 0..run.meta.config.gpus.unwrap_or(0) {
        acc.entry(d).or_default();
    }
    if acc.len() < 2 {
        return None;
    }
    let waiting = merge_intervals(waiting);
    // Busy unions at the gaps' level.
    let busy: BTreeMap<u32, (String, Vec<(u64, u64)>)> = acc
        .iter_mut()
        .map(|(&d, a)| {
            let level = gaps.totals.devices.iter().find(|g| g.device == d).map_or(if a.work.is_empty() { "gpu" } else { "kernel" }, |g| g.level.as_str());
            let iv = if level == "kernel" { merge_intervals(std::mem::take(&mut a.work)) } else { merge_intervals(a.gpu.clone()) };
            (d, (level.to_string(), iv))
        })
        .collect();
    let w0 = busy.values().filter_map(|(_, b)| b.first().map(|x| x.0)).min()?;
    let w1 = busy.values().filter_map(|(_, b)| b.last().map(|x| x.1)).max()?;
    let window = w1.saturating_sub(w0);
    if window == 0 {
        return None;
    }
    let all_calls: u64 = acc.values().map(|a| a.calls).sum();
    let mut devices = Vec::new();
    for (&d, a) in &acc {
        let (level, b) = &busy[&d];
        let idle = subtract(&[(w0, w1)], b);
        let idle_ns = total_ns(&idle);
        let engaged = merge_intervals(a.engaged.clone());
        let placement = intersect(&idle, &subtract(&waiting, &engaged));
        let placement_ns = total_ns(&placement);
        let mut by_cause: BTreeMap<GapCause, u64> = BTreeMap::new();
        for g in gaps.gaps.iter().filter(|g| g.device == d) {
            let (s, e) = (g.start_ns.max(w0), g.end_ns.min(w1));
            if s >= e {
                continue;
            }
            let len = e - s;
            let rest = len.saturating_sub(overlap_ns(&placement, s, e));
            if rest > 0 {
                *by_cause.entry(g.cause).or_default() += rest;
            }
        }
        // After the device's last busy moment (no gap lists it), less placement idle; a
        // device that never worked has no tail: all its idle is a leading one.
        let last = b.last().map_or(w1, |x| x.1);
        let first = b.first().map_or(w1, |x| x.0);
        let tail_ns = (w1.saturating_sub(last)).saturating_sub(overlap_ns(&placement, last, w1));
        // Before its first busy moment, when no leading gap was listed for it.
        let lead_listed = gaps.gaps.iter().any(|g| g.device == d && g.leading);
        let lead_ns = if lead_listed { 0 } else { first.saturating_sub(w0).saturating_sub(overlap_ns(&placement, w0, first)) };
        if lead_ns > 0 {
            *by_cause.entry(GapCause::Other).or_default() += lead_ns;
        }
        let unlisted = idle_ns.saturating_sub(placement_ns.saturating_add(by_cause.values().sum::<u64>()).saturating_add(tail_ns));
        let idle_share = idle_ns as f64 / window as f64;
        // What the reason judges: the idle without the warm-up and the drain.
        let cold = by_cause.get(&GapCause::ColdStart).copied().unwrap_or(0);
        let judged = idle_ns.saturating_sub(tail_ns).saturating_sub(cold) as f64 / window as f64;
        // The reason: the largest group (placement idle counts as placement).
        let mut groups: BTreeMap<&str, u64> = BTreeMap::new();
        *groups.entry("placement").or_default() += placement_ns;
        for (&c, &v) in &by_cause {
            if let Some(g) = group(c) {
                *groups.entry(g).or_default() += v;
            }
        }
        let top = groups.iter().filter(|(_, &v)| v > 0).max_by_key(|(_, &v)| v).map(|(g, _)| *g);
        let reason = if judged < BUSY_IDLE_SHARE { "busy" } else { top.unwrap_or("unknown") };
        devices.push(DeviceShare {
            device: d,
            partitions: a.calls,
            share_of_partitions: if all_calls > 0 { a.calls as f64 / all_calls as f64 } else { 0.0 },
            mean_gpu_call_ms: (a.calls > 0).then(|| ms(a.call_ns) / a.calls as f64),
            level: level.clone(),
            busy_ms: ms(window - idle_ns.min(window)),
            idle_ms: ms(idle_ns),
            idle_share,
            judged_idle_share: judged,
            placement_idle_ms: ms(placement_ns),
            idle_by_cause_ms: GapCause::ALL.iter().filter_map(|c| by_cause.get(c).filter(|&&v| v > 0).map(|&v| (c.as_str().to_string(), ms(v)))).collect(),
            tail_idle_ms: ms(tail_ns),
            unlisted_idle_ms: ms(unlisted),
            reason: reason.to_string(),
        });
    }
    let host_verdict = decide(&devices, ms(window), run, host);
    Some(MultiDevice { window_start_ms: ms(w0), window_end_ms: ms(w1), devices, host: host_verdict })
}

fn pct(v: f64) -> String {
    format!("{:.0} %", v * 100.0)
}

fn decide(devices: &[DeviceShare], window_ms: f64, run: &Run, host: Option<&HostLoad>) -> HostVerdict {
    let mut evidence: Vec<String> = devices
        .iter()
        .map(|d| {
            let mut causes: Vec<String> = Vec::new();
            if d.placement_idle_ms > 0.0 {
                causes.push(format!("placement (idle while partitions waited) {} s", num(d.placement_idle_ms / 1e3)));
            }
            for (c, v) in &d.idle_by_cause_ms {
                causes.push(format!("{c} {} s", num(v / 1e3)));
            }
            if d.tail_idle_ms > 0.0 {
                causes.push(format!("ran dry before the others {} s", num(d.tail_idle_ms / 1e3)));
            }
            if d.unlisted_idle_ms > 0.0 {
                causes.push(format!("short gaps {} s", num(d.unlisted_idle_ms / 1e3)));
            }
            format!(
                "device {}: {} partitions ({}), {} busy at {} level over the common {} s, idle {} s{}",
                d.device,
                d.partitions,
                pct(d.share_of_partitions),
                pct(1.0 - d.idle_share),
                d.level,
                num(window_ms / 1e3),
                num(d.idle_ms / 1e3),
                if causes.is_empty() { String::new() } else { format!(": {}", causes.join(", ")) }
            )
        })
        .collect();
    if let Some(h) = host {
        let cores = run.meta.machine.cpu_cores.map_or(String::new(), |c| format!(" of {c}"));
        evidence.push(format!(
            "host CPU: the prover kept {}{cores} cores busy on average (the whole machine {:.1})",
            h.process_cores_mean.map_or("—".into(), |v| format!("{v:.1}")),
            h.host_busy_cores_mean
        ));
    }
    let mut v = HostVerdict { evidence, ..Default::default() };
    let names = |ds: &[&DeviceShare]| ds.iter().map(|d| d.device.to_string()).collect::<Vec<_>>().join(" and ");
    let idle: Vec<&DeviceShare> = devices.iter().filter(|d| d.reason != "busy").collect();
    let busy: Vec<&DeviceShare> = devices.iter().filter(|d| d.reason == "busy").collect();
    if devices.iter().all(|d| d.partitions == 0) {
        v.binding = "unknown".into();
        v.headline = "No device finished a GPU call: nothing to judge.".into();
    } else if idle.is_empty() {
        v.binding = "gpus".into();
        v.headline = format!(
            "GPU-bound host: every device was busy ({}) over the common window — the GPUs bind, another one would add throughput.",
            devices.iter().map(|d| format!("device {} {}", d.device, pct(1.0 - d.idle_share))).collect::<Vec<_>>().join(", ")
        );
    } else if let Some(d) = idle.iter().filter(|d| d.reason == "placement").max_by(|a, b| a.idle_share.total_cmp(&b.idle_share)) {
        v.binding = "imbalance".into();
        v.device = Some(d.device);
        let others: Vec<String> = devices.iter().filter(|o| o.device != d.device).map(|o| format!("device {} {} busy with {} of the partitions", o.device, pct(1.0 - o.idle_share), pct(o.share_of_partitions))).collect();
        v.headline = format!(
            "Imbalance: device {} idled {} of the common window, {} s of it while partitions waited in the queue, and proved {} of the partitions; {} — placement, not the host, left it idle.",
            d.device,
            pct(d.idle_share),
            num(d.placement_idle_ms / 1e3),
            pct(d.share_of_partitions),
            others.join("; ")
        );
    } else if idle.iter().all(|d| d.reason == "host") {
        // The host cause that idled the idle devices most.
        let mut by: BTreeMap<&str, f64> = BTreeMap::new();
        for d in &idle {
            for (c, x) in &d.idle_by_cause_ms {
                if matches!(c.as_str(), "synthesis_starved" | "memory" | "cpu_prep") {
                    *by.entry(c.as_str()).or_default() += x;
                }
            }
        }
        let (cause, total) = by.iter().max_by(|a, b| a.1.total_cmp(b.1)).map(|(c, x)| (c.to_string(), *x)).unwrap_or(("cpu_prep".into(), 0.0));
        let what = match cause.as_str() {
            "synthesis_starved" => "synthesis could not keep up (the shared CPU)",
            "memory" => "syntheses waited for the host-RAM budget (the shared RAM)",
            _ => "their workers were busy on CPU phases (prep, staging; the shared CPU)",
        };
        v.binding = "host".into();
        v.host_cause = Some(cause.clone());
        let who = if idle.len() == devices.len() { format!("every device idled ({})", idle.iter().map(|d| format!("device {} {}", d.device, pct(d.idle_share))).collect::<Vec<_>>().join(", ")) } else { format!("device {} idled {} beside busy device {}", names(&idle), idle.iter().map(|d| pct(d.idle_share)).collect::<Vec<_>>().join(" / "), names(&busy)) };
        v.headline = format!("Host-bound: {who}, mostly because {what}: {cause} {} s in all — the shared host, not a GPU, binds; another GPU would not help.", num(total / 1e3));
    } else {
        let local: Vec<&&DeviceShare> = idle.iter().filter(|d| d.reason == "device").collect();
        v.binding = if local.is_empty() { "unknown".into() } else { "device".into() };
        let bound = busy.iter().max_by(|a, b| a.share_of_partitions.total_cmp(&b.share_of_partitions)).copied().or_else(|| local.first().map(|d| **d));
        v.device = bound.map(|d| d.device);
        v.headline = match (&*v.binding, bound) {
            ("device", Some(b)) => format!(
                "Device-bound: device {} idled mostly waiting for its own lock; device {} sets the pace ({} busy, {} of the partitions).",
                names(&local.iter().map(|d| **d).collect::<Vec<_>>()),
                b.device,
                pct(1.0 - b.idle_share),
                pct(b.share_of_partitions)
            ),
            _ => format!("Mixed: the devices idled for different reasons ({}).", devices.iter().map(|d| format!("device {}: {}", d.device, d.reason)).collect::<Vec<_>>().join(", ")),
        };
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_arithmetic() {
        assert_eq!(subtract(&[(0, 10)], &[(2, 3), (5, 7)]), vec![(0, 2), (3, 5), (7, 10)]);
        assert_eq!(subtract(&[(0, 10), (20, 30)], &[(8, 22)]), vec![(0, 8), (22, 30)]);
        assert_eq!(subtract(&[(0, 10)], &[]), vec![(0, 10)]);
        assert_eq!(intersect(&[(0, 10), (20, 30)], &[(5, 25)]), vec![(5, 10), (20, 25)]);
        assert!(intersect(&[(0, 1)], &[(1, 2)]).is_empty());
    }
}
