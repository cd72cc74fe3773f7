//! Memory over the run, from the counters the producer sampled: the peak resident set of
//! the process (`rss_bytes`) and the peak device memory in use per device
//! (`gpu_mem_used_bytes`). What `simulate` predicts as `peak_ram_gib`, measured the same
//! way on any run (the simulator emits the same counters). `None` / empty without samples.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::{counters, Run};

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
        } else if c.name == counters::GPU_MEM_USED_BYTES {
            let e = dev.entry(c.device.unwrap_or(0)).or_insert(0.0);
            *e = e.max(c.value / GIB);
        }
    }
    m.devices = dev.into_iter().map(|(device, peak_used_gib)| DeviceMemory { device, peak_used_gib }).collect();
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
    }
}
