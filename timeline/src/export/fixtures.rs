//! Test inputs shared by the exporters' and charts' tests: the cuzk sample log (a copy of
//! `shared/reference/cuzk-sample.log` kept in `timeline/assets/`) and a synthetic
//! Phase-8-like run of any size.

use crate::event::{Counter, Run, RunMeta, Span, SpanKind};

/// The cuzk sample log, parsed.
pub(crate) fn sample_run() -> Run {
    crate::read::read_str(include_str!("../../assets/cuzk-sample.log"), None)
}

/// `proofs` × `parts` partitions: synthesis without worker ids (6 at a time, ~30 s), two
/// GPU workers per device taking partitions round-robin over `devices`, queue waits, and
/// with `kernels` nested CPU/kernel spans (one kernel per partition overshoots its
/// `lock_hold` parent by 300 ns, as rounding would), plus NVML-like counters.
pub(crate) fn synthetic(proofs: u32, parts: u32, devices: u32, kernels: bool) -> Run {
    let mut r = Run::new(RunMeta::new("test"));
    let ms = 1_000_000u64;
    let mut gpu_free = vec![[0u64; 2]; devices as usize];
    for j in 0..proofs {
        for p in 0..parts {
            let job = format!("job{j}");
            let n = (j * parts + p) as u64;
            let s0 = n / 6 * 30_000 * ms / 3;
            let s1 = s0 + 30_000 * ms + p as u64 * 7 * ms;
            r.spans.push(Span::new(SpanKind::Synthesis, s0, s1).job(&job).partition(p));
            let d = (j * parts + p) % devices;
            let free = &mut gpu_free[d as usize];
            let w = if free[0] <= free[1] { 0 } else { 1 };
            let g0 = s1.max(free[w]) + ms;
            let g1 = g0 + 5_000 * ms;
            free[w] = g1;
            let w = w as u32;
            r.spans.push(Span::new(SpanKind::GpuQueue, s1, g0).job(&job).partition(p).device(d));
            r.spans.push(Span::new(SpanKind::Gpu, g0, g1).job(&job).partition(p).device(d).worker(w));
            if kernels {
                let k = |kind, a, b| Span::new(kind, a, b).job(&job).partition(p).device(d).worker(w);
                r.spans.push(k(SpanKind::PrepMsm, g0, g0 + 1_300 * ms));
                r.spans.push(k(SpanKind::LockHold, g0 + 1_300 * ms, g1 - 700 * ms));
                r.spans.push(k(SpanKind::Ntt, g0 + 1_300 * ms, g0 + 2_000 * ms));
                r.spans.push(k(SpanKind::MsmH, g0 + 2_000 * ms, g0 + 3_600 * ms));
                r.spans.push(k(SpanKind::TailMsm, g0 + 3_600 * ms, g1 - 700 * ms + 300));
                r.spans.push(k(SpanKind::Finalize, g1 - 700 * ms, g1));
            }
            r.counters.push(Counter { name: "gpu_util_pct".into(), t_ns: g0, value: 60.0 + (n % 40) as f64, device: Some(d) });
            r.counters.push(Counter { name: "gpu_power_w".into(), t_ns: g0, value: 250.0 + (n % 50) as f64, device: Some(d) });
        }
    }
    r.counters.push(Counter { name: "rss_bytes".into(), t_ns: 0, value: 7.0e10, device: None });
    r.normalize();
    r
}

/// A run a hostile or buggy producer could send: times near `u64::MAX`, an end before its
/// start, open spans, unknown kinds, non-finite and far-future counters, an empty job id.
pub(crate) fn extreme_run() -> Run {
    let mut r = Run::new(RunMeta::new("extreme"));
    let big = u64::MAX - 10;
    r.spans.push(Span::new(SpanKind::Gpu, big, u64::MAX).worker(0).device(7).job("").partition(u32::MAX));
    r.spans.push(Span::new(SpanKind::Ntt, big + 1, u64::MAX).worker(0).device(7));
    r.spans.push(Span::new(SpanKind::Synthesis, 500, 100).job("backwards").partition(0));
    let mut open = Span::new(SpanKind::Other("warp drive".into()), 0, 0).worker(3);
    open.end_ns = None;
    r.spans.push(open);
    r.spans.push(Span::new(SpanKind::GpuQueue, 0, 0).arg("note", "zero length"));
    r.counters.push(Counter { name: "gpu_util_pct".into(), t_ns: u64::MAX, value: f64::NAN, device: Some(7) });
    r.counters.push(Counter { name: "gpu_power_w".into(), t_ns: u64::MAX, value: f64::INFINITY, device: Some(7) });
    r.counters.push(Counter { name: "rss_bytes".into(), t_ns: 3, value: -1.0, device: None });
    r.normalize();
    r
}
