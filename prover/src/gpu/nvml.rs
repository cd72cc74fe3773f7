//! NVML sampler: every `period` a background thread reads utilisation, memory used, power
//! and SM clock of each device and turns them into timeline counters
//! ([`counters::GPU_UTIL_PCT`], ...), either straight into a run's [`EventSink`]
//! ([`NvmlSampler::start_to_sink`], what `proofscope prove` does with the cuda backend)
//! or into a list returned by [`NvmlSampler::stop`] (`gpu bench`).
//!
//! libnvidia-ml is loaded at run time; without it opening the source fails with a message
//! saying why, and the caller goes on without samples. Devices are named by their CUDA
//! ordinal (as in the rest of the timeline) and matched to NVML's by UUID, since the two
//! orders differ when CUDA_DEVICE_ORDER / CUDA_VISIBLE_DEVICES reorder devices.
//!
//! [`EventSink`]: crate::events::EventSink

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::Nvml;
use timeline::event::{counters, Counter};

use crate::events::CounterHandle;

/// What the sampler reads: the current values of one device (NVML, or a fake in tests).
pub trait Source: Send + 'static {
    /// Push `(counter name, value)` pairs of CUDA device `device` into `out`.
    fn sample(&mut self, device: u32, out: &mut Vec<(&'static str, f64)>);
}

/// NVML, with the NVML index of each CUDA ordinal.
struct NvmlSource {
    nvml: Nvml,
    index: Vec<(u32, u32)>,
}

impl Source for NvmlSource {
    fn sample(&mut self, device: u32, out: &mut Vec<(&'static str, f64)>) {
        let idx = self.index.iter().find(|(d, _)| *d == device).map(|(_, i)| *i).unwrap_or(device);
        let Ok(dev) = self.nvml.device_by_index(idx) else { return };
        if let Ok(u) = dev.utilization_rates() {
            out.push((counters::GPU_UTIL_PCT, u.gpu as f64));
            out.push(("mem_util_pct", u.memory as f64));
        }
        if let Ok(m) = dev.memory_info() {
            out.push((counters::GPU_MEM_USED_BYTES, m.used as f64));
        }
        if let Ok(p) = dev.power_usage() {
            out.push((counters::GPU_POWER_W, p as f64 / 1000.0));
        }
        if let Ok(c) = dev.clock_info(Clock::SM) {
            out.push((counters::SM_CLOCK_MHZ, c as f64));
        }
    }
}

/// The UUID of CUDA device `ordinal` in NVML's spelling (`GPU-xxxxxxxx-xxxx-...`).
fn cuda_uuid(ordinal: u32) -> Option<String> {
    // SAFETY: only tries to dlopen libcuda.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return None;
    }
    let id = std::panic::catch_unwind(|| {
        use cudarc::driver::result;
        result::init().ok()?;
        result::device::get_uuid(result::device::get(ordinal as i32).ok()?).ok()
    })
    .ok()??;
    let h: Vec<String> = id.bytes.iter().map(|b| format!("{:02x}", *b as u8)).collect();
    Some(format!("GPU-{}-{}-{}-{}-{}", h[0..4].concat(), h[4..6].concat(), h[6..8].concat(), h[8..10].concat(), h[10..16].concat()))
}

/// Open NVML for CUDA devices `devices`, or say why it cannot be used.
pub fn open_nvml(devices: &[u32]) -> Result<Box<dyn Source>, String> {
    let nvml = Nvml::init().map_err(|e| format!("NVML unavailable (libnvidia-ml): {e}"))?;
    let index = devices
        .iter()
        .map(|&d| {
            let by_uuid = cuda_uuid(d).and_then(|u| nvml.device_by_uuid(u.as_str()).ok()).and_then(|dev| dev.index().ok());
            (d, by_uuid.unwrap_or(d))
        })
        .collect();
    Ok(Box::new(NvmlSource { nvml, index }))
}

/// A running sampler; [`NvmlSampler::stop`] ends it.
pub struct NvmlSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    collected: Arc<Mutex<Vec<Counter>>>,
    /// Why nothing is sampled (NVML missing), if so.
    pub error: Arc<Mutex<Option<String>>>,
}

impl NvmlSampler {
    fn spawn(mut source: Box<dyn Source>, devices: Vec<u32>, period: Duration, now: impl Fn() -> u64 + Send + 'static, mut emit: impl FnMut(Counter) + Send + 'static) -> NvmlSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::Builder::new().name("nvml-sampler".into()).spawn(move || {
            let mut values = Vec::new();
            while !s.load(Ordering::Relaxed) {
                let t_ns = now();
                for &d in &devices {
                    values.clear();
                    source.sample(d, &mut values);
                    for &(name, value) in &values {
                        emit(Counter { name: name.to_string(), t_ns, value, device: Some(d) });
                    }
                }
                crate::events::sleep_unless_stopped(&s, period);
            }
        });
        let error = Arc::new(Mutex::new(handle.as_ref().err().map(|e| format!("cannot start the NVML sampler thread: {e}"))));
        NvmlSampler { stop, handle: handle.ok(), collected: Arc::new(Mutex::new(Vec::new())), error }
    }

    /// Samples devices `devices` every `period` into a list (times are ns since `epoch`)
    /// returned by [`NvmlSampler::stop`]. Without NVML, `error` says why.
    pub fn start(devices: Vec<u32>, period: Duration, epoch: Instant) -> NvmlSampler {
        let collected = Arc::new(Mutex::new(Vec::new()));
        let mut s = match open_nvml(&devices) {
            Ok(source) => {
                let c = collected.clone();
                NvmlSampler::spawn(source, devices, period, move || epoch.elapsed().as_nanos() as u64, move |x| {
                    if let Ok(mut v) = c.lock() {
                        v.push(x);
                    }
                })
            }
            Err(e) => NvmlSampler { stop: Arc::new(AtomicBool::new(true)), handle: None, collected: collected.clone(), error: Arc::new(Mutex::new(Some(e))) },
        };
        s.collected = collected;
        s
    }

    /// Samples `source` for `devices` every `period` straight into a run's sink.
    pub fn start_with(source: Box<dyn Source>, devices: Vec<u32>, period: Duration, sink: CounterHandle) -> NvmlSampler {
        let clock = sink.clone();
        NvmlSampler::spawn(source, devices, period, move || clock.now_ns(), move |c| sink.counter_at(&c.name, c.t_ns, c.value, c.device))
    }

    /// NVML samples of CUDA devices `devices` into a run's sink, or why NVML is unusable.
    pub fn start_to_sink(devices: Vec<u32>, period: Duration, sink: CounterHandle) -> Result<NvmlSampler, String> {
        Ok(NvmlSampler::start_with(open_nvml(&devices)?, devices, period, sink))
    }

    /// Stops the thread and returns the samples it collected (none when it fed a sink).
    pub fn stop(mut self) -> Vec<Counter> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.collected.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default()
    }
}

impl Drop for NvmlSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{EventSink, SinkConfig};

    struct Fake(u32);

    impl Source for Fake {
        fn sample(&mut self, device: u32, out: &mut Vec<(&'static str, f64)>) {
            self.0 += 1;
            out.push((counters::GPU_UTIL_PCT, 50.0 + device as f64));
            out.push((counters::GPU_POWER_W, 300.0));
        }
    }

    #[test]
    fn samples_reach_the_run_sink_with_their_device() {
        let sink = EventSink::start(SinkConfig { collect: true, ..Default::default() }).unwrap();
        let s = NvmlSampler::start_with(Box::new(Fake(0)), vec![0, 3], Duration::from_millis(2), sink.counters());
        std::thread::sleep(Duration::from_millis(40));
        assert!(s.stop().is_empty(), "a sink sampler keeps nothing itself");
        let (stats, run) = sink.finish(false).unwrap();
        let util: Vec<&Counter> = run.counters.iter().filter(|c| c.name == counters::GPU_UTIL_PCT).collect();
        assert!(util.len() >= 4, "{stats:?}");
        assert!(util.iter().any(|c| c.device == Some(3) && c.value == 53.0));
        assert!(util.iter().any(|c| c.device == Some(0) && c.value == 50.0));
        assert!(run.counters.iter().any(|c| c.name == counters::GPU_POWER_W));
        // Stamped in the sink's time: increasing, from near 0.
        assert!(util.windows(2).all(|w| w[0].t_ns <= w[1].t_ns) && util[0].t_ns < 1_000_000_000);
    }

    #[test]
    fn without_nvml_the_sampler_says_why_and_samples_nothing() {
        match open_nvml(&[0]) {
            // A machine without libnvidia-ml (this one when there is no GPU).
            Err(e) => {
                assert!(e.contains("NVML"), "{e}");
                let s = NvmlSampler::start(vec![0], Duration::from_millis(1), Instant::now());
                assert!(s.error.lock().unwrap().as_deref().is_some_and(|m| m.contains("NVML")));
                assert!(s.stop().is_empty());
            }
            // A GPU machine: NVML answers for device 0.
            Ok(mut src) => {
                let mut v = Vec::new();
                src.sample(0, &mut v);
                assert!(v.iter().any(|(n, _)| *n == counters::GPU_MEM_USED_BYTES), "{v:?}");
            }
        }
    }
}
