//! Several devices in one host (issue 22): each device's share and idle causes, and the
//! host-level verdict, on constructed runs whose answers are computed by hand and on the
//! real two-H200 run of 2026-11-30 (`reports/gpu/data/2026-11-30-multi-gpu-d2.jsonl.gz`).

use timeline::analysis::{summarize, AnalyzeOptions};
use timeline::event::{Run, RunMeta, Span, SpanKind};

const MS: u64 = 1_000_000;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-6 * b.abs().max(1.0), "{a} != {b}");
}

fn run_of(gpus: u32, spans: Vec<Span>) -> Run {
    let mut meta = RunMeta::new("test");
    meta.config.gpus = Some(gpus);
    let mut r = Run::new(meta);
    r.spans = spans;
    r.normalize();
    r
}

fn synth(p: u32, s: u64, e: u64) -> Span {
    Span::new(SpanKind::Synthesis, s * MS, e * MS).job("j").partition(p).worker(p)
}
fn queue(p: u32, s: u64, e: u64) -> Span {
    Span::new(SpanKind::GpuQueue, s * MS, e * MS).job("j").partition(p)
}
fn gpu(p: u32, d: u32, s: u64, e: u64) -> Span {
    Span::new(SpanKind::Gpu, s * MS, e * MS).job("j").partition(p).worker(0).device(d)
}

/// A partition synthesised until `q`, queued `q..start`, proven on `d` `start..end`.
fn part(p: u32, q: u64, d: u32, start: u64, end: u64) -> Vec<Span> {
    vec![synth(p, q.saturating_sub(50), q), queue(p, q, start), gpu(p, d, start, end)]
}

#[test]
fn a_device_left_idle_while_work_waited_is_an_imbalance() {
    // Device 0 proves p0..p4 back to back, 100–600 ms; device 1 proves p5 at 100–200 and
    // nothing after, while p1..p4 wait in the queue from 150–180 until device 0 takes them
    // (200, 300, 400, 500). Common window 100–600 = 500 ms. Device 1: busy 100, idle 400 =
    // placement 200–500 (300 ms: partitions waited, none of its workers had a call) + ran
    // dry 500–600 (100 ms, nothing waiting). Judged idle (400 − 100) / 500 = 60 %: placement.
    let run = run_of(2, spans_of_imbalance());
    let s = summarize(&run, &AnalyzeOptions::default());
    let md = s.multi_device.clone().expect("two devices");
    close(md.window_start_ms, 100.0);
    close(md.window_end_ms, 600.0);
    let (d0, d1) = (&md.devices[0], &md.devices[1]);
    assert_eq!((d0.partitions, d1.partitions), (5, 1));
    close(d0.share_of_partitions, 5.0 / 6.0);
    assert_eq!(d0.reason, "busy");
    close(d0.idle_ms, 0.0);
    close(d1.busy_ms, 100.0);
    close(d1.idle_ms, 400.0);
    close(d1.placement_idle_ms, 300.0);
    close(d1.tail_idle_ms, 100.0);
    close(d1.judged_idle_share, 0.6);
    assert_eq!(d1.reason, "placement");
    assert_eq!(md.host.binding, "imbalance", "{}", md.host.headline);
    assert_eq!(md.host.device, Some(1));
    assert!(md.host.headline.contains("device 1 idled 80 %") && md.host.headline.contains("0.300 s"), "{}", md.host.headline);
    // The report says so.
    let report = timeline::report::markdown::render(&s, &[]);
    assert!(report.contains("## Devices and the host: imbalance"), "{report}");
    assert!(report.contains("| device | partitions | share | mean call (ms) | level | busy (s) | idle (s) | placement idle (s) | idle by cause (s) | ran dry (s) | reason |\n|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---|\n"), "{report}");
    assert!(report.contains("\n| 1 | 1 | 16.7 % | 100.0 | gpu | 0.10 | 0.40 | 0.30 | — | 0.10 | placement |\n"), "{report}");
    // And report.html, the same row.
    #[cfg(feature = "analysis")]
    {
        let page = html(&run);
        let rows = device_rows(&page);
        assert_eq!(rows.len(), 2, "{page}");
        assert_eq!(rows[1], ["1", "1", "16.7 %", "100.0", "gpu", "0.10", "0.40", "0.30", "—", "0.10", "placement"]);
        assert_eq!(rows[0][..3], ["0", "5", "83.3 %"]);
        assert!(page.contains("<h2 id=\"devices\">Devices and the host: imbalance</h2>"));
        assert!(page.contains("Over the common window 0.10–0.60 s"), "the common window, 100–600 ms");
        assert!(page.contains(&format!("<p><b>{}</b></p>", md.host.headline)), "the host verdict's headline");
    }
}

/// The spans of [`a_device_left_idle_while_work_waited_is_an_imbalance`].
fn spans_of_imbalance() -> Vec<Span> {
    let mut spans = part(0, 90, 0, 100, 200);
    spans.extend(part(5, 90, 1, 100, 200));
    for (p, q) in [(1u32, 150u64), (2, 160), (3, 170), (4, 180)] {
        spans.extend(part(p, q, 0, 100 * p as u64 + 100, 100 * p as u64 + 200));
    }
    spans
}

/// report.html of a run, as `analyze` writes it (no charts embedded).
#[cfg(feature = "analysis")]
fn html(run: &Run) -> String {
    let s = summarize(run, &AnalyzeOptions::default());
    timeline::report::html::render(&timeline::lanes::LaidOut::new(run), &s, &[])
}

/// The cells of report.html's devices table, a row per device (no header).
#[cfg(feature = "analysis")]
fn device_rows(page: &str) -> Vec<Vec<String>> {
    let Some(at) = page.find("<table class=\"devices\">") else { return Vec::new() };
    let table = &page[at..at + page[at..].find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(2)
        .map(|row| row.split("<td").skip(1).map(|c| c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()].to_string()).collect())
        .collect()
}

#[test]
#[cfg(feature = "analysis")]
fn one_device_has_no_devices_section_in_report_html_or_report_md() {
    let spans = part(0, 90, 0, 100, 200);
    let run = run_of(1, spans);
    let page = html(&run);
    assert!(!page.contains("Devices and the host") && device_rows(&page).is_empty());
    let md = timeline::report::markdown::render(&summarize(&run, &AnalyzeOptions::default()), &[]);
    assert!(!md.contains("Devices and the host"));
    // The check can fail: two devices do show it.
    assert!(html(&run_of(2, part(0, 90, 0, 100, 200))).contains("Devices and the host"));
}

#[test]
fn a_device_given_no_work_at_all_still_counts() {
    // meta says 2 GPUs; every call ran on device 0 (100–300) while p1 waited 150–200.
    let mut spans = part(0, 90, 0, 100, 200);
    spans.extend(part(1, 150, 0, 200, 300));
    let md = summarize(&run_of(2, spans), &AnalyzeOptions::default()).multi_device.expect("config.gpus = 2");
    let d1 = &md.devices[1];
    assert_eq!((d1.device, d1.partitions), (1, 0));
    close(d1.idle_ms, 200.0);
    close(d1.placement_idle_ms, 50.0);
    // The rest (150 ms) is idle before any work (`other`: no gap lists a device that never
    // worked), and placement is the only grouped cause: still an imbalance.
    close(d1.idle_by_cause_ms["other"], 150.0);
    assert_eq!(md.host.binding, "imbalance", "{}", md.host.headline);
    // One device in the meta, one seen: no section.
    let spans = part(0, 90, 0, 100, 200);
    assert!(summarize(&run_of(1, spans), &AnalyzeOptions::default()).multi_device.is_none());
}

#[test]
fn two_devices_starved_by_synthesis_are_host_bound() {
    // Each device proves at 100–200, 300–400, 500–600; every partition is queued 5 ms
    // before its call (synthesis ends then): the gaps 200–300 and 400–500 on each device are
    // synthesis_starved, 95 ms of each after the 5 ms of placement idle (queued, not yet
    // taken). Idle 200 of 500 ms per device (40 %): host, synthesis_starved 4 × 95 = 380 ms.
    let mut spans = Vec::new();
    let mut p = 0;
    for d in 0..2u32 {
        for start in [100u64, 300, 500] {
            spans.extend(part(p, start - 5, d, start, start + 100));
            p += 1;
        }
    }
    let md = summarize(&run_of(2, spans), &AnalyzeOptions::default()).multi_device.expect("two devices");
    for d in &md.devices {
        close(d.idle_ms, 200.0);
        close(d.placement_idle_ms, 10.0);
        close(d.idle_by_cause_ms["synthesis_starved"], 190.0);
        assert_eq!(d.reason, "host");
    }
    assert_eq!(md.host.binding, "host", "{}", md.host.headline);
    assert_eq!(md.host.host_cause.as_deref(), Some("synthesis_starved"));
    assert!(md.host.headline.contains("0.380 s"), "{}", md.host.headline);
}

#[test]
fn two_busy_devices_are_gpu_bound() {
    // Back-to-back calls on both devices, every partition queued long before: no idle.
    let mut spans = Vec::new();
    for p in 0..6u32 {
        let (d, k) = (p % 2, (p / 2) as u64);
        spans.extend(part(p, 60, d, 100 + 100 * k, 200 + 100 * k));
    }
    let md = summarize(&run_of(2, spans), &AnalyzeOptions::default()).multi_device.expect("two devices");
    assert!(md.devices.iter().all(|d| d.reason == "busy" && d.idle_ms == 0.0));
    assert_eq!(md.host.binding, "gpus", "{}", md.host.headline);
}

/// The real two-H200 run of 2026-11-30 (pw 8, gw 2, kernels lock, 4 proofs × 8 partitions
/// of 2^20 on devices 0 and 1; its report: reports/gpu/2026-11-30-multi-gpu/d2/).
#[test]
fn the_real_two_h200_run_is_host_bound_by_cpu_prep() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/gpu/data/2026-11-30-multi-gpu-d2.jsonl.gz");
    let run = timeline::read::read_path(std::path::Path::new(path), None).expect("the committed log");
    let s = summarize(&run, &AnalyzeOptions::default());
    let md = s.multi_device.expect("two devices");
    let (d0, d1) = (&md.devices[0], &md.devices[1]);
    // 16 calls on each device (the GPU table of its report: 16 `gpu` spans per device).
    assert_eq!((d0.partitions, d1.partitions), (16, 16));
    assert_eq!((d0.level.as_str(), d1.level.as_str()), ("kernel", "kernel"));
    assert_eq!(md.host.binding, "host", "{}\n{:#?}", md.host.headline, md.devices);
    assert_eq!(md.host.host_cause.as_deref(), Some("cpu_prep"));
    // Checked by hand against the rest of the summary: the common window runs from device
    // 0's first device work (747.3 ms, the end of its cold start) to the last of either
    // (4333.5 ms); device 0's kernel-level busy time is its utilisation row's (1.43 s, 39 % of
    // its gpu window, which holds all its device work); the two devices' cpu_prep idle adds up to the run's cpu_prep gaps (3.67 s) and
    // device 1's synthesis_starved to the run's one such gap (0.516 s) less the 3 ms in it
    // when a partition already waited in the queue.
    let lead0 = s.idle_gaps.iter().find(|g| g.device == 0 && g.leading).expect("device 0's cold start");
    close(md.window_start_ms, lead0.end_ms);
    assert!((md.window_start_ms - 747.3).abs() < 0.1 && (md.window_end_ms - 4333.5).abs() < 0.1, "{} – {}", md.window_start_ms, md.window_end_ms);
    let u0 = &s.utilization.devices[0];
    assert!((d0.busy_ms - u0.kernel_busy_ms.unwrap()).abs() < 1.0, "{} vs {:?}", d0.busy_ms, u0.kernel_busy_ms);
    let cpu_prep: f64 = md.devices.iter().map(|d| d.idle_by_cause_ms.get("cpu_prep").copied().unwrap_or(0.0)).sum();
    let run_cpu_prep = s.idle_gap_totals.total_ms(timeline::analysis::gaps::GapCause::CpuPrep);
    assert!(cpu_prep <= run_cpu_prep + 1e-6 && cpu_prep > run_cpu_prep - 10.0, "{cpu_prep} vs {run_cpu_prep}");
    let starved = d1.idle_by_cause_ms["synthesis_starved"];
    let run_starved = s.idle_gap_totals.total_ms(timeline::analysis::gaps::GapCause::SynthesisStarved);
    assert!(starved <= run_starved && starved > run_starved - 10.0, "{starved} vs {run_starved}");
    assert!(d0.placement_idle_ms + d1.placement_idle_ms < 10.0, "gw 2 on each device: work never waited while a device sat idle");
    assert_eq!((d0.reason.as_str(), d1.reason.as_str()), ("host", "host"));
    // report.html shows the section with these figures.
    #[cfg(feature = "analysis")]
    {
        let page = html(&run);
        assert!(page.contains("<h2 id=\"devices\">Devices and the host: host</h2>"));
        assert!(page.contains("Over the common window 0.75–4.33 s"));
        let rows = device_rows(&page);
        assert_eq!(rows.len(), 2);
        for (row, d) in rows.iter().zip([d0, d1]) {
            assert_eq!(row[..3], [d.device.to_string(), "16".into(), "50.0 %".into()]);
            assert_eq!((row[4].as_str(), row[10].as_str()), ("kernel", "host"));
            assert_eq!(row[5], format!("{:.2}", d.busy_ms / 1e3));
            assert!(row[8].contains(&format!("cpu_prep {:.2}", d.idle_by_cause_ms["cpu_prep"] / 1e3)), "{row:?}");
        }
    }
}
