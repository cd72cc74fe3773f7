//! Memory over the run, from the counters the producer sampled: the peak resident set of
//! the process (`rss_bytes`) and the peak device memory in use per device
//! (`gpu_mem_used_bytes`). What `simulate` predicts as `peak_ram_gib`, measured the same
//! way on any run (the simulator emits the same counters). `None` / empty without samples.
//! Under a host-RAM budget also the budget (run meta `extra.ram_budget_bytes`), the most
//! bytes ever reserved from it (`ram_reserved_bytes`) and the syntheses' waits for it
//! (`ram_wait` spans).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::{counters, extra, Run, SpanKind};

const GIB: f64 = (1u64 << 30) as f64;

/// Peak device memory of one device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceMemory {
    pub device: u32,
    /// Largest `gpu_mem_used_bytes` sample, GiB.
    pub peak_used_gib: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Memory {
    /// `rss_bytes` samples.
    pub rss_samples: u64,
    /// Largest `rss_bytes` sample, GiB (1 GiB = 2^30 bytes).
    pub peak_rss_gib: Option<f64>,
    /// Smallest `rss_bytes` sample, GiB: what the process holds before/between partitions.
    pub min_rss_gib: Option<f64>,
    pub devices: Vec<DeviceMemory>,
    /// The host-RAM budget the run was made under, GiB.
    pub ram_budget_gib: Option<f64>,
    /// Largest `ram_reserved_bytes` sample, GiB.
    pub peak_reserved_gib: Option<f64>,
    /// `ram_wait` spans (closed) and their total duration, s: syntheses waiting for RAM.
    pub ram_waits: u64,
    pub ram_wait_s: f64,
}

impl Memory {
    /// Whether the run says anything about host memory.
    pub fn has_host_data(&self) -> bool {
        self.rss_samples > 0 || self.ram_budget_gib.is_some() || self.peak_reserved_gib.is_some() || self.ram_waits > 0
    }
}

pub fn analyze(run: &Run) -> Memory {
    let mut m = Memory::default();
    let mut dev: BTreeMap<u32, f64> = BTreeMap::new();
    for c in run.counters.iter().filter(|c| c.value.is_finite()) {
        if c.name == counters::RSS_BYTES {
            m.rss_samples += 1;
            let g = c.value / GIB;
            m.peak_rss_gib = Some(m.peak_rss_gib.map_or(g, |p| p.max(g)));
            m.min_rss_gib = Some(m.min_rss_gib.map_or(g, |p| p.min(g)));
        } else if c.name == counters::RAM_RESERVED_BYTES {
            let g = c.value / GIB;
            m.peak_reserved_gib = Some(m.peak_reserved_gib.map_or(g, |p| p.max(g)));
        } else if c.name == counters::GPU_MEM_USED_BYTES {
            let e = dev.entry(c.device.unwrap_or(0)).or_insert(0.0);
            *e = e.max(c.value / GIB);
        }
    }
    m.devices = dev.into_iter().map(|(device, peak_used_gib)| DeviceMemory { device, peak_used_gib }).collect();
    m.ram_budget_gib = run.meta.extra.get(extra::RAM_BUDGET_BYTES).and_then(|v| v.as_f64()).filter(|b| b.is_finite() && *b > 0.0).map(|b| b / GIB);
    for s in run.spans_of(&SpanKind::RamWait).filter(|s| !s.is_open()) {
        m.ram_waits += 1;
        m.ram_wait_s += s.duration_ns() as f64 / 1e9;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Counter, RunMeta};

    #[test]
    fn peaks_per_series_and_device() {
        let mut run = Run::new(RunMeta::new("t"));
        let c = |name: &str, v: f64, d: Option<u32>| Counter { name: name.into(), t_ns: 0, value: v, device: d };
        run.counters = vec![
            c("rss_bytes", 2.0 * GIB, None),
            c("rss_bytes", 5.0 * GIB, None),
            c("rss_bytes", f64::NAN, None),
            c("gpu_mem_used_bytes", 1.0 * GIB, Some(1)),
            c("gpu_mem_used_bytes", 3.0 * GIB, Some(1)),
            c("gpu_mem_used_bytes", 2.0 * GIB, None),
        ];
        let m = analyze(&run);
        assert_eq!((m.rss_samples, m.peak_rss_gib, m.min_rss_gib), (2, Some(5.0), Some(2.0)));
        assert_eq!(m.devices, vec![DeviceMemory { device: 0, peak_used_gib: 2.0 }, DeviceMemory { device: 1, peak_used_gib: 3.0 }]);
        assert_eq!(analyze(&Run::default()), Memory::default());
        assert!(!Memory::default().has_host_data());
        // The budget, the reserved peak and the waits.
        run.meta.extra.insert(extra::RAM_BUDGET_BYTES.into(), (8u64 << 30).into());
        run.counters.push(c("ram_reserved_bytes", 6.0 * GIB, None));
        run.counters.push(c("ram_reserved_bytes", 7.5 * GIB, None));
        run.spans.push(crate::event::Span::new(SpanKind::RamWait, 0, 500_000_000));
        run.spans.push(crate::event::Span::new(SpanKind::RamWait, 0, 250_000_000));
        let m = analyze(&run);
        assert_eq!((m.ram_budget_gib, m.peak_reserved_gib, m.ram_waits, m.ram_wait_s), (Some(8.0), Some(7.5), 2, 0.75));
    }
}
