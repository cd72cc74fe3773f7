//! Issue 17 (interop) through the built binary: another tool's Chrome / Perfetto trace
//! (the Kineto-shaped fixture of timeline/tests/chrome_trace.rs) analysed as a run — as a
//! file, forced with `--format chrome-trace`, gzipped on stdin — and what is not one.

mod common;

use std::path::{Path, PathBuf};

use common::{analyze_strict, CLI_LIMIT, SAMPLE, go, json, spawn, strings};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("timeline/tests/data/kineto-small.json")
}

/// The fixture's figures (see timeline/tests/chrome_trace.rs): GPU 0 busy 3062.25 µs of
/// 7065, GPU 1 2012 of 5012.
fn check_summary(s: &serde_json::Value) {
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap_or(f64::NAN) - want).abs() < 1e-9;
    assert_eq!(s["diagnostics"]["format"], "chrome-trace");
    assert_eq!(s["run"]["devices"], serde_json::json!([0, 1]));
    assert!(close(&s["kernel_utilization"], 5074.25 / 12077.0), "{}", s["kernel_utilization"]);
    let d = &s["utilization"]["devices"];
    assert!(close(&d[0]["kernel_utilization"], 3062.25 / 7065.0), "{}", d[0]);
    assert!(close(&d[0]["kernel_busy_ms"], 3.06225), "{}", d[0]);
    assert!(close(&d[1]["kernel_utilization"], 2012.0 / 5012.0), "{}", d[1]);
    let gaps = s["idle_gaps"].as_array().unwrap();
    let durs: Vec<f64> = gaps.iter().map(|g| g["duration_ms"].as_f64().unwrap()).collect();
    assert_eq!(durs, vec![4.0, 3.0]);
    let kernel = s["phases"]["by_kind"].as_array().unwrap().iter().find(|r| r["kind"] == "kernel").unwrap();
    assert_eq!(kernel["count"], 4);
}

#[test]
fn a_kineto_trace_is_analysed_as_a_run() {
    let d = tempfile::tempdir().unwrap();
    let fx = fixture();
    let (printed, written) = analyze_strict(d.path(), &fx);
    check_summary(&printed);
    check_summary(&written);
    // It keeps the data contract: summary.json validates against its published schema.
    let schema = json(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/schemas/summary.schema.json")).unwrap());
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&written).take(5).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // The outputs are drawn from it too; the trace names the kernels.
    let trace = std::fs::read_to_string(d.path().join("out/trace.json")).unwrap();
    assert!(trace.contains("ampere_sgemm_128x64_nn"));
    assert!(d.path().join("out/report.md").is_file());
    // The terminal summary counts events and gives each GPU its kernel-level figure.
    let r = go(d.path(), &["analyze", fx.to_str().unwrap(), "-o", "out2", "--no-charts"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("chrome-trace log, 29 events, 15 spans, 0 jobs, 2 device(s)"), "{}", r.stdout);
    assert!(r.stdout.contains("GPU 0       kernels 43.3 % busy over 0.00707 s"), "{}", r.stdout);
    assert!(r.stdout.contains("GPU 1       kernels 40.1 % busy over 0.00501 s"), "{}", r.stdout);
    // Forced, the same.
    let r = go(d.path(), &["analyze", fx.to_str().unwrap(), "--format", "chrome-trace", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    check_summary(&json(&r.stdout));
}

#[test]
fn a_gzipped_trace_on_stdin_is_read() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&std::fs::read(fixture()).unwrap()).unwrap();
    let gz = e.finish().unwrap();
    let r = spawn(&strings(&["analyze", "-", "--json", "--strict"]), d.path(), Some(&gz)).wait(CLI_LIMIT);
    assert!(r.misbehaved().is_none(), "{}", r.misbehaved().unwrap_or_default());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    check_summary(&json(&r.stdout));
}

#[test]
fn what_is_not_a_chrome_trace_or_has_no_device_work_is_said() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // JSON lines forced as a Chrome trace: an error naming the file and what it found.
    let mut jsonl = Vec::new();
    timeline::write::jsonl::write_run(&mut jsonl, &timeline::read::read_str(SAMPLE, None)).unwrap();
    std::fs::write(p.join("run.jsonl"), &jsonl).unwrap();
    let r = go(p, &["analyze", "run.jsonl", "--format", "chrome-trace", "-o", "o1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("run.jsonl") && r.stderr.contains("no `traceEvents`") && r.stderr.contains("--format jsonl"), "{}", r.stderr);
    assert!(!p.join("o1/summary.json").exists());
    // A truncated trace: an error naming the file and the event.
    let text = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(p.join("cut.json"), &text[..text.len() / 2]).unwrap();
    let r = go(p, &["analyze", "cut.json", "-o", "o2"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("cut.json") && r.stderr.contains("ends in the middle") && r.stderr.contains("event #"), "{}", r.stderr);
    // A CPU-only profile: loud, and --strict fails.
    std::fs::write(p.join("cpu.json"), "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}]}").unwrap();
    let r = go(p, &["analyze", "cpu.json", "-o", "o3"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("cpu.json") && r.stderr.contains("none on a device") && r.stderr.contains("1 cpu_op"), "{}", r.stderr);
    let r = go(p, &["analyze", "cpu.json", "-o", "o4", "--strict"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    // No events at all.
    std::fs::write(p.join("empty.json"), "{\"traceEvents\": []}\n").unwrap();
    let r = go(p, &["analyze", "empty.json", "--json", "--strict"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("a Chrome trace with no events at all"), "{}", r.stderr);
    // A rejected event names its number and field, and --strict fails on it.
    std::fs::write(p.join("bad.json"), "{\"traceEvents\":[\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":5},\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":9,\"dur\":\"x\"}\n]}\n").unwrap();
    let r = go(p, &["analyze", "bad.json", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("line 3: event #2: `dur` is not a number"), "{}", r.stderr);
    assert!(r.stderr.contains("1 events rejected"), "{}", r.stderr);
    let r = go(p, &["analyze", "bad.json", "--json", "--strict"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    // The flag is documented.
    let r = go(p, &["analyze", "--help"]);
    assert!(r.stdout.contains("chrome-trace"), "{}", r.stdout);
}
