//! Issue 17 (interop): another tool's Chrome / Perfetto trace read as a run
//! (`timeline::read::chrome`). The Kineto-shaped fixture `data/kineto-small.json` (two
//! GPUs, two streams on GPU 0, kernels, copies, a memset, CPU ops, idle gaps) against
//! figures computed by hand; bad inputs; our own `trace.json` of a real run read back.
//!
//! The fixture, in µs since its first event (ProfilerStep#1 at ts 1000):
//! - GPU 0: memcpy 20–30, sgemm 30–70.5 (stream 7), elementwise 50–80 (stream 20), memset
//!   4080–4082.25, reduce 4085–7085. Busy: 20–80, 4080–4082.25, 4085–7085 = 3062.25 µs
//!   of a 20–7085 window (7065 µs). Gaps: the leading 0–20, 80–4080 (4 ms), 4082.25–4085.
//! - GPU 1: all-reduce 60–2060, memcpy 5060–5072. Busy 2012 µs of 60–5072 (5012 µs).
//!   Gaps: the leading 0–60, 2060–5060 (3 ms).
//! - Host: ProfilerStep#1 0–10000, forward, aten::mm, two runtime calls, aten::add as a
//!   B/E pair (100–110.5), the profiler's own `Trace` slice; `gpu_user_annotation` on
//!   GPU 0 (not device work). Two flow events and two instants are ignored.

use std::path::Path;

use timeline::analysis::{gaps, phases, summarize, utilization, AnalyzeOptions};
use timeline::read::{read_bytes, read_path, read_str, Format, ReadError};
use timeline::{Run, SpanKind};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kineto-small.json");

fn fixture() -> Run {
    read_path(Path::new(FIXTURE), None).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn the_kineto_fixture_reads_as_a_run_of_two_devices() {
    let run = fixture();
    let d = &run.diagnostics;
    assert_eq!(d.format, "chrome-trace");
    assert!(!d.has_warnings(), "{d:?}");
    assert_eq!((d.lines_total, d.event_lines, d.lines_rejected, d.lines_ignored), (29, 25, 0, 4));
    assert_eq!(run.meta.source, "chrome-trace");
    assert_eq!(run.meta.gpus, vec!["NVIDIA H100 80GB HBM3".to_string(); 2]);
    assert!(close(run.meta.machine.gpu_mem_gib[1], 85045231616.0 / (1u64 << 30) as f64));
    assert_eq!(run.devices(), vec![0, 1]);
    let count = |k: &str| run.spans.iter().filter(|s| s.kind.as_str() == k).count();
    assert_eq!((count("kernel"), count("memcpy"), count("memset")), (4, 2, 1));
    assert_eq!((count("cpu_op"), count("cuda_runtime"), count("python_function"), count("user_annotation")), (2, 2, 1, 1));
    assert_eq!((count("gpu_user_annotation"), count("Trace")), (1, 1));
    assert_eq!(run.spans.len(), 15);
    // Times: ns since the first event, exact.
    assert_eq!(run.spans[0].start_ns, 0);
    assert_eq!(run.end_ns(), 10_000_000);
    let named = |n: &str| run.spans.iter().find(|s| s.args.get("name").and_then(|v| v.as_str()) == Some(n)).unwrap_or_else(|| panic!("{n}"));
    let sgemm = named("ampere_sgemm_128x64_nn");
    assert_eq!((sgemm.kind.clone(), sgemm.start_ns, sgemm.end_ns, sgemm.device), (SpanKind::Kernel, 30_000, Some(70_500), Some(0)));
    assert_eq!(sgemm.args["stream"], 7);
    assert_eq!(sgemm.args["grid"], serde_json::json!([8, 4, 1]));
    assert_eq!(named("void at::native::vectorized_elementwise_kernel<4>").args["stream"], 20);
    // GPU 1's events carry no `args.device`: the process label says GPU 1; the stream is the tid.
    let nccl = named("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    assert_eq!((nccl.device, nccl.args["stream"].as_u64()), (Some(1), Some(7)));
    assert_eq!(named("Memset (Device)").kind, SpanKind::Memset);
    assert_eq!(named("Memcpy DtoH (Device -> Pinned)").kind, SpanKind::Memcpy);
    // Host spans: no device, not device work; the B/E pair closed at its E.
    let add = named("aten::add");
    assert_eq!((add.start_ns, add.end_ns, add.device), (100_000, Some(110_500), None));
    assert!(!add.kind.is_device_work() && !add.kind.is_synthesis_side());
    assert_eq!(named("aten::mm").args["thread"], "thread 4242 (python3)");
    let ann = named("## forward ##");
    assert_eq!((ann.device, ann.kind.is_device_work()), (Some(0), false));
    // Drawn a row per stream.
    let laid = timeline::lanes::LaidOut::new(&run);
    let rows: Vec<(String, usize)> = laid.lanes().iter().filter(|l| l.stream.is_some()).map(|l| (l.name(), l.spans.len())).collect();
    assert_eq!(rows, vec![("gpu0 stream 7".to_string(), 4), ("gpu0 stream 20".into(), 1), ("gpu1 stream 7".into(), 2)]);
}

#[test]
fn utilisation_gaps_and_phases_are_the_hand_computed_ones() {
    let run = fixture();
    let u = utilization::analyze(&run);
    assert_eq!(u.devices.len(), 2);
    let (d0, d1) = (&u.devices[0], &u.devices[1]);
    assert_eq!((d0.device, d1.device), (0, 1));
    assert!(close(d0.kernel_busy_ms.unwrap(), 3.06225) && close(d0.window_ms, 7.065) && close(d0.window_start_ms, 0.02), "{d0:?}");
    assert!(close(d0.kernel_utilization.unwrap(), 3062.25 / 7065.0), "{d0:?}");
    assert!(close(d1.kernel_busy_ms.unwrap(), 2.012) && close(d1.window_ms, 5.012), "{d1:?}");
    assert!(close(d1.kernel_utilization.unwrap(), 2012.0 / 5012.0), "{d1:?}");
    assert!(close(u.kernel_utilization.unwrap(), 5074.25 / 12077.0));
    // No `gpu` spans: nothing at that level.
    assert_eq!((u.gpu_utilization, d0.gpu_spans), (None, 0));

    // Gaps: two of at least 1 ms, caused by nothing the trace shows; three below.
    let g = gaps::analyze(&run, &AnalyzeOptions { min_gap_ms: 1.0, ..Default::default() });
    let listed: Vec<(u32, u64, u64, gaps::GapCause)> = g.gaps.iter().map(|x| (x.device, x.start_ns, x.end_ns, x.cause)).collect();
    assert_eq!(listed, vec![(0, 80_000, 4_080_000, gaps::GapCause::Other), (1, 2_060_000, 5_060_000, gaps::GapCause::Other)]);
    assert_eq!(g.totals.below_threshold_count, 3);
    assert!(close(g.totals.below_threshold_ms, 0.02 + 0.00275 + 0.06), "{}", g.totals.below_threshold_ms);
    let t0 = &g.totals.devices[0];
    assert_eq!((t0.level.as_str(), t0.gaps_in_window), ("kernel", 2));
    assert!(close(t0.idle_in_window_ms, 4.00275) && close(t0.leading_idle_ms, 0.02), "{t0:?}");
    // Every gap, listed or not, with no threshold: the leading ones are cold starts.
    let all = gaps::analyze(&run, &AnalyzeOptions { min_gap_ms: 0.0, ..Default::default() });
    let durs: Vec<(u32, u64, bool)> = all.gaps.iter().map(|x| (x.device, x.end_ns - x.start_ns, x.leading)).collect();
    assert_eq!(durs, vec![(0, 20_000, true), (0, 4_000_000, false), (0, 2_750, false), (1, 60_000, true), (1, 3_000_000, false)]);
    assert!(all.gaps.iter().all(|x| x.cause == if x.leading { gaps::GapCause::ColdStart } else { gaps::GapCause::Other }));

    // Phases: per kind and per device.
    let p = phases::analyze(&run);
    assert!(close(p.wall_ms, 10.0));
    let k = p.kind("kernel").unwrap();
    assert_eq!(k.count, 4);
    assert!(close(k.total_ms, 5.0705) && close(k.max_ms, 3.0) && close(k.min_ms, 0.03), "{k:?}");
    assert!(close(p.kind("memcpy").unwrap().total_ms, 0.022));
    assert!(close(p.kind("memset").unwrap().total_ms, 0.00225));
    assert_eq!(p.kind("cpu_op").unwrap().count, 2);
    let k1 = p.by_kind_device.iter().find(|r| r.kind == "kernel" && r.device == Some(1)).unwrap();
    assert!(close(k1.total_ms, 2.0));

    // The whole summary, as `analyze` writes it: no proofs, and no panic.
    let s = summarize(&run, &AnalyzeOptions::default());
    assert_eq!(s.proofs_completed, 0);
    assert!(close(s.kernel_utilization.unwrap(), 5074.25 / 12077.0));
    assert_eq!(s.run.devices, vec![0, 1]);
}

#[test]
fn gzipped_and_bare_array_forms_read_the_same() {
    use std::io::Write;
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let plain = fixture();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text.as_bytes()).unwrap();
    let gz = read_bytes(&enc.finish().unwrap()[..], "kineto-small.json.gz", None).unwrap();
    assert_eq!(gz.spans, plain.spans);
    // The array form: the events alone, with or without the closing `]`.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let arr = serde_json::to_string_pretty(&v["traceEvents"]).unwrap();
    let run = read_str(&arr, None);
    assert_eq!(run.diagnostics.format, "chrome-trace");
    assert_eq!(run.spans, plain.spans);
    let open = arr.trim_end().strip_suffix(']').unwrap();
    let run = read_str(open, None);
    assert_eq!((run.spans.len(), run.diagnostics.lines_rejected), (15, 0));
    let open = open.trim_end().strip_suffix('}').unwrap();
    let run = read_str(open, None);
    assert_eq!(run.diagnostics.lines_rejected, 1);
    assert!(run.diagnostics.warnings[0].message.contains("event #29: cut off"), "{:?}", run.diagnostics.warnings);
    // Forced, or found on one long line.
    let one_line = serde_json::to_string(&v).unwrap();
    assert_eq!(read_str(&one_line, None).spans, plain.spans);
    assert_eq!(read_str(&one_line, Some(Format::ChromeTrace)).spans, plain.spans);
    assert_eq!("chrome-trace".parse::<Format>(), Ok(Format::ChromeTrace));
}

fn read_err(text: &str, format: Option<Format>) -> String {
    match read_bytes(text.as_bytes(), "bad.json", format) {
        Err(e @ ReadError::Format { .. }) => e.to_string(),
        other => panic!("expected a format error, got {other:?}"),
    }
}

fn warnings(run: &Run) -> Vec<(u64, String)> {
    run.diagnostics.warnings.iter().map(|w| (w.line, w.message.clone())).collect()
}

#[test]
fn bad_inputs_are_named_by_file_event_and_field() {
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    // Truncated inside the object form: an error naming the file, the place and the event.
    let cut = &text[..text.find("ampere_sgemm").unwrap()];
    let e = read_err(cut, None);
    assert!(e.starts_with("bad.json: ") && e.contains("ends in the middle") && e.contains("event #9"), "{e}");
    // (Read from memory, the error is the empty run's problem, never a quiet empty run.)
    let run = read_str(cut, None);
    assert!(run.spans.is_empty() && run.diagnostics.problems[0].contains("ends in the middle"), "{:?}", run.diagnostics);
    // Not JSON at all, forced.
    let e = read_err("TIMELINE,0,SYNTH_START,a,partition=0\n", Some(Format::ChromeTrace));
    assert!(e.contains("not valid JSON") && e.contains("line 1"), "{e}");
    // Our JSON lines forced as a Chrome trace.
    let e = read_err("{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5}\n{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5}\n", Some(Format::ChromeTrace));
    assert!(e.contains("no `traceEvents`") && e.contains("--format jsonl"), "{e}");
    // A top-level value of another type; `traceEvents` of another type.
    assert!(read_err("42", Some(Format::ChromeTrace)).contains("expected a Chrome trace"));
    assert!(read_err("{\"traceEvents\": {}}", None).contains("expected an array of trace events"));

    // Events of the wrong shape: rejected by number, field and line; the rest loads.
    let k = |extra: &str| format!("{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,{extra}}}");
    let doc = format!(
        "{{\"traceEvents\":[\n{},\n{},\n{},\n{},\n{},\n5,\n{{\"ts\":1}},\n{},\n{}\n]}}\n",
        k("\"ts\":1,\"dur\":\"5\""),
        k("\"ts\":1,\"dur\":-5"),
        k("\"dur\":5"),
        k("\"ts\":[1],\"dur\":5"),
        k("\"ts\":10,\"dur\":5,\"args\":3"),
        k("\"ts\":2,\"dur\":5,\"pid\":{}"),
        k("\"ts\":0,\"dur\":2"),
    );
    let run = read_str(&doc, None);
    assert_eq!(run.diagnostics.format, "chrome-trace");
    assert_eq!(
        warnings(&run),
        vec![
            (2, "event #1: `dur` is not a number but a string".to_string()),
            (3, "event #2: `dur` is negative (-5)".into()),
            (4, "event #3: `ts` is missing".into()),
            (5, "event #4: `ts` is not a number but an array".into()),
            (6, "event #5: `args` is not an object but a number".into()),
            (7, "event #6: not a JSON object but a number".into()),
            (8, "event #7: `ph` is missing".into()),
            (9, "event #8: `pid` is neither a number nor a string but an object".into()),
        ]
    );
    assert_eq!((run.diagnostics.lines_rejected, run.spans.len()), (8, 1));
    assert!(run.diagnostics.has_warnings());

    // B without E: a span that never ended; E without B: rejected.
    let doc = "[\n{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":0},\n{\"ph\":\"E\",\"pid\":0,\"tid\":2,\"ts\":3},\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"j\",\"pid\":0,\"tid\":3,\"ts\":1,\"dur\":1}\n]";
    let run = read_str(doc, None);
    assert_eq!((run.diagnostics.open_spans, run.diagnostics.lines_rejected), (1, 1));
    let w = warnings(&run);
    assert_eq!(w[0], (2, "event #1: `B` of `k` (pid 0 tid 1) has no matching `E`: kept as a span that never ended".to_string()));
    assert_eq!(w[1], (3, "event #2: `E` without an open `B` on pid 0 tid 2".to_string()));
    assert!(run.spans.iter().any(|s| s.is_open()));
    // An open kernel never counts as busy.
    let u = utilization::analyze(&run);
    assert!(close(u.devices[0].kernel_busy_ms.unwrap(), 0.001));

    // No device event at all: a problem saying what was found.
    let doc = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1},{\"ph\":\"i\",\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":0},{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"python3\"}}]}";
    let p = read_str(doc, None).diagnostics.problems;
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("a Chrome trace with 4 events, none on a device (kernel, memcpy, memset): slices found: 2 cpu_op, 1 metadata, 1 other events (`i`)"), "{p:?}");
    let p = read_str("[]", None).diagnostics.problems;
    assert!(p[0].contains("a Chrome trace with no events at all"), "{p:?}");
}

#[test]
fn no_cut_or_mangling_of_the_fixture_panics() {
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let bytes = text.as_bytes();
    for cut in (0..bytes.len()).step_by(37) {
        let _ = read_bytes(&bytes[..cut], "cut", None);
        let _ = read_bytes(&bytes[..cut], "cut", Some(Format::ChromeTrace));
    }
    for (i, b) in bytes.iter().enumerate().step_by(53) {
        let mut m = bytes.to_vec();
        m[i] = match b {
            b'{' => b'[',
            b'"' => b'\'',
            b'0'..=b'9' => b'-',
            _ => b'}',
        };
        let _ = read_bytes(&m[..], "mangled", None);
    }
    // Extreme numbers.
    for ts in ["1e300", "-1e300", "1e15", "-5", "0.0001"] {
        let doc = format!("[{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":{ts},\"dur\":1e300}},{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":0,\"dur\":1}}]");
        let run = read_str(&doc, None);
        assert!(run.spans.iter().all(|s| s.end_ns.is_none_or(|e| e <= timeline::event::MAX_TIME_NS)));
    }
}

/// Our own `trace.json` of a real run (two H200s, CUDA events for the kernels and copies)
/// read back: the same busy time on each device, to the rounding of µs to ns.
#[test]
fn our_own_trace_of_a_real_run_reads_back_with_the_same_device_busy_time() {
    let real = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/gpu/data/2026-11-30-multi-gpu-d2.jsonl.gz");
    let run = read_path(Path::new(real), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    timeline::export::trace::write_trace(&timeline::lanes::LaidOut::new(&run), &trace).unwrap();
    let back = read_path(&trace, None).unwrap();
    assert_eq!(back.diagnostics.format, "chrome-trace");
    assert_eq!(back.diagnostics.lines_rejected, 0, "{:?}", back.diagnostics.warnings);
    assert_eq!(back.devices(), run.devices());
    let (a, b) = (utilization::analyze(&run), utilization::analyze(&back));
    assert_eq!(a.devices.len(), b.devices.len());
    let work = |r: &Run, d: u32| r.spans.iter().filter(|s| s.kind.is_device_work() && s.device_or_0() == d).count();
    for (x, y) in a.devices.iter().zip(&b.devices) {
        assert_eq!(x.device, y.device);
        assert_eq!(work(&run, x.device), work(&back, y.device), "device {}", x.device);
        let (kx, ky) = (x.kernel_busy_ms.unwrap(), y.kernel_busy_ms.unwrap());
        // (The original's window is its `gpu` calls, the trace's its device work.)
        assert!((kx - ky).abs() <= 1e-6, "device {}: busy {kx} ms, read back {ky} ms", x.device);
    }
}

/// The device of a device event: `args.device`, else the number in its process's label or
/// name, else a small pid, else the next free index; counters go with their process's device.
#[test]
fn devices_come_from_args_names_or_pids_and_counters_follow() {
    let k = |pid: u64, args: &str| format!("{{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"k\",\"pid\":{pid},\"tid\":\"stream 3\",\"ts\":1,\"dur\":2,\"args\":{{{args}}}}}");
    let doc = format!(
        "[{},{},{},{},{},{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":200,\"args\":{{\"name\":\"GPU 3: NVIDIA A100\"}}}},{{\"ph\":\"C\",\"name\":\"mem\",\"pid\":200,\"ts\":2,\"args\":{{\"value\":7}}}},{{\"ph\":\"C\",\"name\":\"load\",\"pid\":9999,\"ts\":3,\"args\":{{\"a\":1,\"b\":2}}}}]",
        k(31337, ""),
        k(5, ""),
        k(200, ""),
        k(77777, "\"device\":2"),
        "{\"ph\":\"X\",\"cat\":\"Memset\",\"name\":\"m\",\"pid\":5,\"tid\":1,\"ts\":0,\"dur\":1}",
    );
    let run = read_str(&doc, None);
    assert!(!run.diagnostics.has_warnings(), "{:?}", run.diagnostics);
    let mut devs: Vec<(u32, String)> = run.spans.iter().map(|s| (s.device.unwrap(), s.kind.as_str().to_string())).collect();
    devs.sort();
    // pid 31337: neither an argument, a name nor a small pid: the first free index, 0.
    assert_eq!(devs, vec![(0, "kernel".into()), (2, "kernel".into()), (3, "kernel".into()), (5, "kernel".into()), (5, "memset".into())]);
    assert_eq!(run.meta.gpus[3], "NVIDIA A100");
    // The stream from the tid `stream 3`.
    assert!(run.spans.iter().filter(|s| s.kind == SpanKind::Kernel).all(|s| s.args["stream"] == 3));
    let c: Vec<(&str, u64, f64, Option<u32>)> = run.counters.iter().map(|c| (c.name.as_str(), c.t_ns, c.value, c.device)).collect();
    assert_eq!(c, vec![("mem", 2_000, 7.0, Some(3)), ("load.a", 3_000, 1.0, None), ("load.b", 3_000, 2.0, None)]);
}
