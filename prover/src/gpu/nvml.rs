//! NVML sampler: every `period` a background thread reads utilisation, memory used, power
//! and SM clock of each device and turns them into timeline counters. libnvidia-ml is
//! loaded at run time; without it the sampler reports why and samples nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::Nvml;
use timeline::event::{counters, Counter};

/// A running sampler; [`NvmlSampler::stop`] returns the counters.
pub struct NvmlSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<Counter>>>,
    pub error: Arc<Mutex<Option<String>>>,
}

impl NvmlSampler {
    /// Starts sampling devices `devices` every `period`; times are ns since `epoch`.
    pub fn start(devices: Vec<u32>, period: Duration, epoch: Instant) -> NvmlSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let error = Arc::new(Mutex::new(None));
        let (s, e) = (stop.clone(), error.clone());
        let handle = std::thread::spawn(move || {
            let mut out = Vec::new();
            let nvml = match Nvml::init() {
                Ok(n) => n,
                Err(err) => {
                    if let Ok(mut g) = e.lock() {
                        *g = Some(format!("NVML unavailable: {err}"));
                    }
                    return out;
                }
            };
            while !s.load(Ordering::Relaxed) {
                let t_ns = epoch.elapsed().as_nanos() as u64;
                for &d in &devices {
                    let Ok(dev) = nvml.device_by_index(d) else { continue };
                    let mut push = |name: &str, value: f64| out.push(Counter { name: name.to_string(), t_ns, value, device: Some(d) });
                    if let Ok(u) = dev.utilization_rates() {
                        push(counters::GPU_UTIL_PCT, u.gpu as f64);
                        push("mem_util_pct", u.memory as f64);
                    }
                    if let Ok(m) = dev.memory_info() {
                        push(counters::GPU_MEM_USED_BYTES, m.used as f64);
                    }
                    if let Ok(p) = dev.power_usage() {
                        push(counters::GPU_POWER_W, p as f64 / 1000.0);
                    }
                    if let Ok(c) = dev.clock_info(Clock::SM) {
                        push(counters::SM_CLOCK_MHZ, c as f64);
                    }
                }
                std::thread::sleep(period);
            }
            out
        });
        NvmlSampler { stop, handle: Some(handle), error }
    }

    /// Stops the thread and returns every sample taken.
    pub fn stop(mut self) -> Vec<Counter> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().and_then(|h| h.join().ok()).unwrap_or_default()
    }
}
