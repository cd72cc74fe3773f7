//! GPU utilisation per device as the sweep-line **union** of busy intervals over all the
//! device's workers — never a sum: two workers whose `gpu` calls overlap make the device
//! 100 % busy, not 200 %. The window is the device's first GPU start to its last GPU end.
//!
//! Two levels, as in the reference's "TIMELINE util vs true kernel util":
//! - `gpu_utilization`: union of `gpu` spans (a prove call, including its CPU preparation
//!   and lock waits, counts as busy): what a cuzk TIMELINE log can tell;
//! - `kernel_utilization`: union of device-work spans ([`SpanKind::is_device_work`]:
//!   kernels and copies, a copy counting only its device time: [`Span::device_interval`]),
//!   when the producer reports them.
//!
//! Open spans (a killed run) never count as busy.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ms, RunView};
pub use crate::stats::{busy_intervals, max_concurrency, merge_intervals, overlap_ns, total_ns};
use crate::event::{counters, SpanKind};

/// Busy fraction of `[start, end)` in consecutive windows of `window_ns` (the last one may
/// be shorter): `(window start ns, fraction 0..=1)` pairs. For utilisation-over-time charts.
pub fn busy_fraction_windows(merged: &[(u64, u64)], start: u64, end: u64, window_ns: u64) -> Vec<(u64, f64)> {
    let mut out = Vec::new();
    if window_ns == 0 || end <= start {
        return out;
    }
    let mut t = start;
    while t < end {
        let w_end = t.saturating_add(window_ns).min(end);
        out.push((t, overlap_ns(merged, t, w_end) as f64 / (w_end - t) as f64));
        t = w_end;
    }
    out
}

/// Utilisation of one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceUtilization {
    pub device: u32,
    /// Distinct GPU workers seen on this device.
    pub workers: u32,
    /// Closed `gpu` spans.
    pub gpu_spans: u64,
    /// `gpu` spans that never ended (not counted as busy).
    pub open_gpu_spans: u64,
    /// First GPU start on the device (ms since the run epoch).
    pub window_start_ms: f64,
    /// Last GPU end on the device.
    pub window_end_ms: f64,
    pub window_ms: f64,
    /// Union of `gpu` spans over all workers.
    pub gpu_busy_ms: f64,
    /// `gpu_busy_ms / window_ms`, 0..=1.
    pub gpu_utilization: f64,
    /// The naive per-worker sum of `gpu` span durations, for contrast (can exceed the
    /// window when workers overlap; never use it as busy time).
    pub gpu_span_sum_ms: f64,
    /// Union of device-work spans (kernels, copies) in the same window, when reported.
    pub kernel_busy_ms: Option<f64>,
    /// `kernel_busy_ms / window_ms`.
    pub kernel_utilization: Option<f64>,
    /// Mean of NVML `gpu_util_pct` samples within the window, when recorded.
    pub nvml_gpu_util_mean_pct: Option<f64>,
}

/// Utilisation of every device, plus the overall figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Utilization {
    pub devices: Vec<DeviceUtilization>,
    /// Sum of busy time over sum of windows, all devices; `None` without GPU spans.
    pub gpu_utilization: Option<f64>,
    /// Same at kernel level; `None` without device-work spans.
    pub kernel_utilization: Option<f64>,
}

#[derive(Default)]
struct DevAcc {
    gpu: Vec<(u64, u64)>,
    work: Vec<(u64, u64)>,
    workers: Vec<u32>,
    open_gpu: u64,
}

fn collect(run: RunView<'_>, acc: &mut BTreeMap<u32, DevAcc>) {
    for s in run.spans() {
        let is_gpu = s.kind == SpanKind::Gpu;
        if !is_gpu && !s.kind.is_device_work() {
            continue;
        }
        let a = acc.entry(s.device_or_0()).or_default();
        match (is_gpu, s.end_ns) {
            (true, Some(e)) => {
                a.gpu.push((s.start_ns, e));
                if let Some(w) = s.worker {
                    a.workers.push(w);
                }
            }
            (true, None) => a.open_gpu += 1,
            (false, Some(_)) => a.work.extend(s.device_interval()),
            (false, None) => {}
        }
    }
}

/// Utilisation per device (see the module doc).
pub fn analyze<'a>(run: impl Into<RunView<'a>>) -> Utilization {
    let run: RunView<'a> = run.into();
    let mut acc: BTreeMap<u32, DevAcc> = BTreeMap::new();
    collect(run, &mut acc);
    let mut out = Utilization::default();
    let (mut busy_sum, mut win_sum, mut kbusy_sum, mut kwin_sum) = (0u64, 0u64, 0u64, 0u64);
    for (device, mut a) in acc {
        let gpu_spans = a.gpu.len() as u64;
        let span_sum: u64 = a.gpu.iter().fold(0u64, |acc, &(s, e)| acc.saturating_add(e.saturating_sub(s)));
        let gpu = merge_intervals(std::mem::take(&mut a.gpu));
        let work = merge_intervals(std::mem::take(&mut a.work));
        // The window: first GPU start .. last GPU end; device work alone if no gpu spans.
        let basis = if gpu.is_empty() { &work } else { &gpu };
        let (Some(first), Some(last)) = (basis.first(), basis.last()) else {
            // Only open spans on this device: report it, with nothing busy.
            out.devices.push(DeviceUtilization {
                device,
                workers: 0,
                gpu_spans: 0,
                open_gpu_spans: a.open_gpu,
                window_start_ms: 0.0,
                window_end_ms: 0.0,
                window_ms: 0.0,
                gpu_busy_ms: 0.0,
                gpu_utilization: 0.0,
                gpu_span_sum_ms: 0.0,
                kernel_busy_ms: None,
                kernel_utilization: None,
                nvml_gpu_util_mean_pct: None,
            });
            continue;
        };
        let (w0, w1) = (first.0, last.1);
        let window = w1 - w0;
        let busy = total_ns(&gpu);
        let kbusy = (!work.is_empty()).then(|| overlap_ns(&work, w0, w1));
        a.workers.sort_unstable();
        a.workers.dedup();
        let frac = |b: u64| if window > 0 { b as f64 / window as f64 } else { 0.0 };
        let nvml: Vec<f64> = run
            .counters
            .iter()
            .filter(|c| c.name == counters::GPU_UTIL_PCT && c.device.unwrap_or(0) == device && c.t_ns >= w0 && c.t_ns <= w1)
            .map(|c| c.value)
            .collect();
        // Saturating: many devices of long windows could pass u64 (hand-built runs).
        if !gpu.is_empty() {
            busy_sum = busy_sum.saturating_add(busy);
            win_sum = win_sum.saturating_add(window);
        }
        if let Some(k) = kbusy {
            kbusy_sum = kbusy_sum.saturating_add(k);
            kwin_sum = kwin_sum.saturating_add(window);
        }
        out.devices.push(DeviceUtilization {
            device,
            workers: a.workers.len() as u32,
            gpu_spans,
            open_gpu_spans: a.open_gpu,
            window_start_ms: ms(w0),
            window_end_ms: ms(w1),
            window_ms: ms(window),
            gpu_busy_ms: ms(busy),
            gpu_utilization: frac(busy),
            gpu_span_sum_ms: ms(span_sum),
            kernel_busy_ms: kbusy.map(ms),
            kernel_utilization: kbusy.map(frac),
            nvml_gpu_util_mean_pct: (!nvml.is_empty()).then(|| nvml.iter().sum::<f64>() / nvml.len() as f64),
        });
    }
    out.gpu_utilization = (win_sum > 0).then(|| busy_sum as f64 / win_sum as f64);
    out.kernel_utilization = (kwin_sum > 0).then(|| kbusy_sum as f64 / kwin_sum as f64);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Run, RunMeta, Span};

    fn gpu(s: u64, e: u64, w: u32) -> Span {
        Span::new(SpanKind::Gpu, s, e).worker(w).device(0)
    }

    #[test]
    fn busy_fractions_per_window() {
        let m = merge_intervals(vec![(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]);
        let w = busy_fraction_windows(&m, 0, 12, 6);
        assert_eq!(w, vec![(0, 5.0 / 6.0), (6, 1.0)]);
    }

    #[test]
    fn overlapping_workers_are_not_double_counted() {
        let mut run = Run::new(RunMeta::new("t"));
        run.spans = vec![gpu(0, 10, 0), gpu(5, 15, 1)];
        let u = analyze(&run);
        let d = &u.devices[0];
        assert_eq!(d.gpu_busy_ms, 15e-6);
        assert_eq!(d.gpu_utilization, 1.0);
        assert_eq!(d.gpu_span_sum_ms, 20e-6);
        assert_eq!(d.workers, 2);
    }

    #[test]
    fn open_spans_are_not_busy() {
        let mut run = Run::new(RunMeta::new("t"));
        let mut open = gpu(10, 0, 1);
        open.end_ns = None;
        run.spans = vec![gpu(0, 10, 0), open, gpu(20, 30, 0)];
        let u = analyze(&run);
        assert_eq!(u.devices[0].gpu_utilization, 20.0 / 30.0);
        assert_eq!(u.devices[0].open_gpu_spans, 1);
    }
}
