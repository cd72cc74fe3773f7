//! Several devices through the built binary: `proofscope analyze` of the real two-H200 run of
//! 2026-11-30 (`reports/gpu/data/2026-11-30-multi-gpu-d2.jsonl.gz`, 4 proofs × 8 partitions
//! on devices 0 and 1) prints the host verdict and a line per device in its terminal
//! summary and writes the *Devices and the host* section into report.html, both from
//! summary.json's `multi_device`; a one-device run (the cuzk sample log) shows neither.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{run, Ran, SAMPLE};

const LIMIT: Duration = Duration::from_secs(120);

fn two_h200() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reports/gpu/data/2026-11-30-multi-gpu-d2.jsonl.gz")
}

fn analyze(d: &Path, log: &Path) -> Ran {
    let r = run(&["analyze", log.to_str().unwrap(), "-o", "rep"], d, LIMIT);
    assert!(r.misbehaved().is_none(), "{}", r.misbehaved().unwrap_or_default());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r
}

#[test]
fn the_two_h200_run_shows_its_devices_in_the_terminal_and_in_report_html() {
    let d = tempfile::tempdir().unwrap();
    let r = analyze(d.path(), &two_h200());
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(d.path().join("rep/summary.json")).unwrap()).unwrap();
    let md = &s["multi_device"];
    let host = &md["host"];
    assert_eq!((host["binding"].as_str(), host["host_cause"].as_str()), (Some("host"), Some("cpu_prep")));

    // Terminal: the verdict line, then each evidence line of summary.json as it is.
    let lines: Vec<&str> = r.stdout.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("devices ")).unwrap_or_else(|| panic!("no devices line:\n{}", r.stdout));
    assert_eq!(lines[at], format!("devices     host (cpu_prep): {}", host["headline"].as_str().unwrap()));
    let evidence: Vec<&str> = host["evidence"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    assert_eq!(evidence.len(), 2, "one line per device (the run sampled no host counters)");
    for (k, e) in evidence.iter().enumerate() {
        assert_eq!(lines[at + 1 + k], format!("            {e}"));
    }
    // The figures checked by hand (timeline/tests/multi_device.rs): 16 of the 32 calls on
    // each device, kernel level, a common window of 4333.5 − 747.3 ms, cpu_prep idle.
    for (k, dev) in ["device 0: 16 partitions (50 %)", "device 1: 16 partitions (50 %)"].iter().enumerate() {
        let l = lines[at + 1 + k];
        assert!(l.contains(dev) && l.contains("at kernel level over the common 3.59 s") && l.contains("cpu_prep "), "{l}");
    }
    assert!(lines[at].contains("Host-bound") && lines[at].contains("cpu_prep"), "{}", lines[at]);
    // The section sits after the devices' utilisation lines and before the idle causes.
    let gpu1 = lines.iter().position(|l| l.starts_with("GPU 1 ")).expect("GPU 1's utilisation line");
    let idle = lines.iter().position(|l| l.starts_with("idle ")).expect("the idle line");
    assert!(gpu1 < at && at + 2 < idle, "{}", r.stdout);

    // report.html: the section, its headline, and each device's row from summary.json.
    let page = std::fs::read_to_string(d.path().join("rep/report.html")).expect("report.html");
    assert!(page.contains("<h2 id=\"devices\">Devices and the host: host</h2>"));
    assert!(page.contains("Over the common window 0.75–4.33 s"));
    for dev in md["devices"].as_array().unwrap() {
        let f = |k: &str| format!("{:.2}", dev[k].as_f64().unwrap() / 1e3);
        let row = format!(
            "<tr><td class=\"num\">{}</td><td class=\"num\">16</td><td class=\"num\">50.0 %</td><td class=\"num\">{:.1}</td><td>kernel</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            dev["device"],
            dev["mean_gpu_call_ms"].as_f64().unwrap(),
            f("busy_ms"),
            f("idle_ms"),
            f("placement_idle_ms"),
        );
        assert!(page.contains(&row), "no row {row} in report.html");
    }
}

#[test]
fn one_device_shows_no_devices_section() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sample.log"), SAMPLE).unwrap();
    let r = analyze(d.path(), Path::new("sample.log"));
    assert!(r.stdout.lines().any(|l| l.starts_with("GPU 0 ")), "{}", r.stdout);
    assert!(!r.stdout.lines().any(|l| l.starts_with("devices ")), "{}", r.stdout);
    let page = std::fs::read_to_string(d.path().join("rep/report.html")).expect("report.html");
    assert!(page.contains("<h2>Verdict</h2>") && !page.contains("Devices and the host"));
}
