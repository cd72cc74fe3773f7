//! Issue 17 (interop) through the built binary: an Nsight Systems SQLite export (the
//! fixture of timeline/tests/nsys.rs, built to the documented schema: nsys is not installed
//! where we run) analysed as a run, as a file and on stdin, and a SQLite file that is not one.

mod common;

use std::path::PathBuf;

use common::{analyze_strict, CLI_LIMIT, go, json, spawn, strings};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("timeline/tests/data/nsys-small.sqlite")
}

/// The fixture's figures (see timeline/tests/nsys.rs): GPU 0 busy 0.9 ms of a 1.9 ms window.
fn check_summary(s: &serde_json::Value) {
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap_or(f64::NAN) - want).abs() < 1e-9;
    assert_eq!(s["diagnostics"]["format"], "nsys-sqlite");
    assert_eq!(s["run"]["devices"], serde_json::json!([0]));
    assert!(close(&s["kernel_utilization"], 9.0 / 19.0), "{}", s["kernel_utilization"]);
    let d = &s["utilization"]["devices"];
    assert!(close(&d[0]["kernel_utilization"], 9.0 / 19.0), "{}", d[0]);
    assert!(close(&d[0]["kernel_busy_ms"], 0.9), "{}", d[0]);
    let kernel = s["phases"]["by_kind"].as_array().unwrap().iter().find(|r| r["kind"] == "kernel").unwrap();
    assert_eq!(kernel["count"], 3);
}

#[test]
fn an_nsys_export_is_analysed_as_a_run() {
    let d = tempfile::tempdir().unwrap();
    let fx = fixture();
    let (printed, written) = analyze_strict(d.path(), &fx);
    check_summary(&printed);
    check_summary(&written);
    let trace = std::fs::read_to_string(d.path().join("out/trace.json")).unwrap();
    assert!(trace.contains("msm_bucket") && trace.contains("ntt_forward"));
    // Forced, and on stdin (written to a temporary file: SQLite reads files).
    let r = go(d.path(), &["analyze", fx.to_str().unwrap(), "--format", "nsys-sqlite", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    check_summary(&json(&r.stdout));
    let bytes = std::fs::read(&fx).unwrap();
    let r = spawn(&strings(&["analyze", "-", "--json", "--strict"]), d.path(), Some(&bytes)).wait(CLI_LIMIT);
    assert!(r.misbehaved().is_none(), "{}", r.misbehaved().unwrap_or_default());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    check_summary(&json(&r.stdout));
}

#[test]
fn an_sqlite_file_that_is_not_an_nsys_export_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("app.db");
    rusqlite::Connection::open(&p).unwrap().execute_batch("CREATE TABLE users (id INTEGER);").unwrap();
    let r = go(d.path(), &["analyze", "app.db", "-o", "o1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("app.db") && r.stderr.contains("CUPTI_ACTIVITY_KIND_KERNEL") && r.stderr.contains("tables found: users"), "{}", r.stderr);
    assert!(!d.path().join("o1/summary.json").exists());
    let r = go(d.path(), &["analyze", "--help"]);
    assert!(r.stdout.contains("nsys-sqlite"), "{}", r.stdout);
}
