//! Issue 17 through the built binary: a provider's logs on stdin (journalctl -o json,
//! zstd), a fleet given as a directory, a glob or files with --labels, and input from
//! which nothing can be read.

mod common;

use std::path::PathBuf;

use common::{CLI_LIMIT, SAMPLE, go, json, spawn, strings};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("timeline/tests/data/fleet")
}

fn journal_json(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::json!({"__REALTIME_TIMESTAMP": (1_733_058_000_000_000u64 + i as u64).to_string(), "_HOSTNAME": "gpu-7", "MESSAGE": l}).to_string() + "\n")
        .collect()
}

#[test]
fn journalctl_json_on_stdin_plain_or_zstd() {
    let d = tempfile::tempdir().unwrap();
    let jj = journal_json(SAMPLE);
    for (what, bytes) in [("json", jj.clone().into_bytes()), ("zstd", zstd::encode_all(jj.as_bytes(), 3).unwrap())] {
        let r = spawn(&strings(&["analyze", "-", "--json", "--strict"]), d.path(), Some(&bytes)).wait(CLI_LIMIT);
        assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
        let s = json(&r.stdout);
        assert_eq!(s["proofs_completed"], 3, "{what}");
        assert_eq!(s["steady_state_s_per_proof"], 47.6425, "{what}");
        assert_eq!(s["meta"]["host"], "gpu-7", "{what}");
        assert_eq!(s["proof_types"][0]["proof_type"], "porep-c2", "{what}");
    }
}

#[test]
fn nothing_read_is_loud_and_strict_fails() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("x.log"), "{\"level\":\"INFO\",\"fields\":{\"message\":\"daemon started\"}}\n").unwrap();
    let r = go(d.path(), &["analyze", "x.log", "-o", "o"]);
    assert_eq!(r.code, Some(0));
    assert!(r.stderr.contains("no event could be built") && r.stderr.contains("daemon started"), "{}", r.stderr);
    let r = go(d.path(), &["analyze", "x.log", "-o", "o", "--strict"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
}

#[test]
fn a_fleet_from_a_directory_a_glob_or_labelled_files() {
    let d = tempfile::tempdir().unwrap();
    let fx = fixture();
    let fxs = fx.to_str().unwrap();
    let r = go(d.path(), &["analyze", fxs, "-o", "fleet", "--strict"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("worst       host-b:"), "{}", r.stdout);
    let f = json(&std::fs::read_to_string(d.path().join("fleet/fleet.json")).unwrap());
    let labels: Vec<&str> = f["hosts"].as_array().unwrap().iter().map(|h| h["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["host-a", "host-b", "host-c", "host-d"]);
    assert_eq!(f["worst_host"]["label"], "host-b");
    assert_eq!(f["types"][0]["median_s_per_proof"], 2.0);
    for h in &labels {
        assert!(d.path().join("fleet").join(h).join("summary.json").is_file(), "{h}");
    }
    // One process per host in the combined trace, which validates.
    let t = json(&std::fs::read_to_string(d.path().join("fleet/trace.json")).unwrap());
    let names: Vec<&str> = t["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "process_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, labels);
    let v = go(d.path(), &["validate-trace", "fleet/trace.json"]);
    assert_eq!(v.code, Some(0), "{}{}", v.stdout, v.stderr);

    // A glob (quoted: the program expands it) and --json.
    let pattern = format!("{fxs}/host-[ab]*");
    let r = go(d.path(), &["analyze", &pattern, "--json", "--no-charts"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let f = json(&r.stdout);
    assert_eq!(f["hosts"].as_array().unwrap().len(), 2);

    // Files with labels; a wrong count of labels is an error naming the flag.
    let a = format!("{fxs}/host-a.log.gz");
    let c = format!("{fxs}/host-c.jsonl");
    let r = go(d.path(), &["analyze", &a, &c, "--labels", "alpha,gamma", "-o", "two", "--no-charts"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(d.path().join("two/alpha/report.md").is_file() && d.path().join("two/gamma/report.md").is_file());
    let r = go(d.path(), &["analyze", &a, &c, "--labels", "alpha"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("--labels gives 1 labels for 2 logs"), "{}", r.stderr);
    // A fleet with a host whose log gives nothing: the worst host, and --strict fails.
    std::fs::write(d.path().join("empty.log"), "just a line\n").unwrap();
    let r = go(d.path(), &["analyze", &a, "empty.log", "-o", "three", "--no-charts", "--strict"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let f = json(&std::fs::read_to_string(d.path().join("three/fleet.json")).unwrap());
    assert_eq!(f["worst_host"]["label"], "empty");
}
