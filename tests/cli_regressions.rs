//! Issue 18's cases, one command line each, through the built binary: what used to panic,
//! run away, answer wrongly with exit 0 or write before checking now exits as documented
//! (docs/reliability.md). The library-level tests of the same cases are in
//! timeline/tests/faithful.rs, simulator/tests/limits.rs and prover/tests/groth16.rs; the
//! faults (full disk, kills, two writers) in tests/faults.rs.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{run, spawn, strings, Ran, PHASE8, SAMPLE};

const LIMIT: Duration = Duration::from_secs(60);

fn work() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sample.log"), SAMPLE).unwrap();
    std::fs::write(d.path().join("phase8.toml"), PHASE8).unwrap();
    d
}

fn go(d: &Path, args: &[&str]) -> Ran {
    let r = run(args, d, LIMIT);
    assert!(r.misbehaved().is_none(), "{}", r.misbehaved().unwrap_or_default());
    r
}

fn exits(d: &Path, args: &[&str], code: i32, stderr_has: &[&str]) -> Ran {
    let r = go(d, args);
    assert_eq!(r.code, Some(code), "{args:?}\n{}", r.stderr);
    for s in stderr_has {
        assert!(r.stderr.contains(s), "{args:?}: stderr lacks {s:?}\n{}", r.stderr);
    }
    r
}

fn jsonl_of_sample() -> String {
    let mut b = Vec::new();
    timeline::write::jsonl::write_run(&mut b, &timeline::read::read_str(SAMPLE, None)).unwrap();
    String::from_utf8(b).unwrap()
}

fn json_out(r: &Ran) -> serde_json::Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

#[test]
fn times_at_the_edge_are_rejected_by_line_not_a_panic_or_centuries() {
    let d = work();
    std::fs::write(d.path().join("big.jsonl"), "{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":18446744073709551000,\"job\":\"a\",\"partition\":0}\n").unwrap();
    exits(d.path(), &["analyze", "big.jsonl", "-o", "o1"], 0, &["line 1", "beyond 10 years"]);
    exits(d.path(), &["analyze", "big.jsonl", "-o", "o2", "--strict"], 1, &[]);
    std::fs::write(d.path().join("off.log"), "TIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,9300000000000,SYNTH_END,a,partition=0\n").unwrap();
    let r = exits(d.path(), &["analyze", "off.log", "--no-charts", "-o", "o3"], 0, &["line 2", "out of range"]);
    assert!(!r.stdout.contains("9300000000"), "{}", r.stdout);
    exits(d.path(), &["analyze", "off.log", "-o", "o4", "--strict"], 1, &[]);
}

#[test]
fn sizes_without_bound_are_refused_at_once() {
    let d = work();
    let t0 = Instant::now();
    exits(d.path(), &["simulate", "phase8.toml", "--set", "c=1000000000"], 2, &["pipeline.proofs"]);
    exits(d.path(), &["simulate", "phase8.toml", "--set", "c=100000000"], 2, &["pipeline.proofs"]);
    exits(d.path(), &["simulate", "phase8.toml", "--set", "pw=4000000000"], 2, &["pipeline.pw"]);
    exits(d.path(), &["sweep", "phase8.toml", "--vary", "pw=1..4294967295:4294967294", "-o", "s1"], 2, &["pw=4294967295", "pipeline.pw"]);
    exits(d.path(), &["sweep", "phase8.toml", "--vary", "pw=1..2000", "--vary", "seed=1..1000", "-o", "s2"], 2, &["combinations"]);
    exits(d.path(), &["sweep", "phase8.toml", "--vary", "seed=1..2000000", "-o", "s3"], 2, &["2000000 values"]);
    exits(d.path(), &["setup", "--constraints", "2^8", "--params", "p.bin"], 0, &[]);
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "100000", "--partitions", "100000", "--backend", "cpu"], 2, &["--partitions 100000"]);
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--set", "queue_capacity=4294967295", "--backend", "cpu"], 2, &["queue_capacity"]);
    // A sampler period of 49 days used to hold the end of the run for as long.
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--set", "rss_sample_ms=4294967295", "--backend", "cpu"], 2, &["rss_sample_ms"]);
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--nvml-ms", "18446744073709551615", "--backend", "cpu"], 2, &["--nvml-ms"]);
    // A RAM budget that cannot hold one partition: refused from the file's header, naming
    // what is needed and what the budget is.
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--ram-budget", "64KiB", "--backend", "cpu"], 2, &["memory.total_budget", "RAM budget of 64.0 KiB", "needed", "one partition's working set"]);
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--ram-budget", "0", "--backend", "cpu"], 2, &["larger than 0"]);
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--ram-budget", "lots", "--backend", "cpu"], 2, &["--ram-budget", "lots"]);
    // A VRAM budget below one partition of the domain: refused before the setup's minutes
    // (here on a machine without a GPU: the refusal comes first), naming the parts.
    // 12 GiB is below even the lean NTT's 13 GiB (`ntt_memory = "auto"`, the default); with the
    // twiddle tables forced, 16 GiB is below their 21 GiB.
    exits(d.path(), &["prove", "--setup-on-device", "--constraints", "2^27", "--vram-budget", "12", "--proofs", "1"], 2, &["memory.vram_budget", "12.00 GiB", "at least 13.00 GiB", "a/b/c 12.00 GiB", "lean NTT", "twiddle", "to spare"]);
    exits(d.path(), &["prove", "--setup-on-device", "--constraints", "2^27", "--vram-budget", "16", "--set", "cuda.ntt_memory=\"tables\"", "--proofs", "1"], 2, &["memory.vram_budget", "16.00 GiB", "at least 21.00 GiB", "a/b/c 12.00 GiB", "twiddle", "to spare"]);
    // In the file (and so in --set, whose values are TOML literals) an integer is bytes, as
    // in the cuzk daemon's config and the simulator's: 5 B cannot hold one partition.
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--set", "memory.total_budget=5", "--backend", "cpu"], 2, &["memory.total_budget", "RAM budget of 5 B"]);
    exits(d.path(), &["prove", "--params", "p.bin", "--proofs", "1", "--set", "memory.total_budget=\"5\"", "--backend", "cpu"], 2, &["memory.total_budget", "give a unit"]);
    assert!(t0.elapsed() < Duration::from_secs(30), "refusals take no time: {:?}", t0.elapsed());
    // Nothing was written by a refused sweep.
    assert!(!d.path().join("s1").exists() && !d.path().join("s2").exists());
}

#[test]
fn duplicated_spans_are_dropped_and_strict_fails() {
    let d = work();
    let text = jsonl_of_sample();
    let doubled: String = text.lines().flat_map(|l| if l.contains("\"span\"") { vec![l, l] } else { vec![l] }).map(|l| format!("{l}\n")).collect();
    std::fs::write(d.path().join("once.jsonl"), &text).unwrap();
    std::fs::write(d.path().join("twice.jsonl"), &doubled).unwrap();
    let once = json_out(&exits(d.path(), &["analyze", "once.jsonl", "--json"], 0, &[]));
    let twice = json_out(&exits(d.path(), &["analyze", "twice.jsonl", "--json"], 0, &["duplicate of line"]));
    assert_eq!(once["verdict"]["headline"], twice["verdict"]["headline"]);
    assert_eq!(once["verdict"]["floors"], twice["verdict"]["floors"]);
    assert_eq!(twice["diagnostics"]["duplicates"], 120);
    exits(d.path(), &["analyze", "twice.jsonl", "--json", "--strict"], 1, &[]);
    // Calibration fits the same model from the doubled file (it used to fit pw 4, not 2,
    // and a doubled G2 MSM).
    exits(d.path(), &["calibrate", "once.jsonl", "-o", "m1"], 0, &[]);
    exits(d.path(), &["calibrate", "twice.jsonl", "-o", "m2"], 0, &["duplicates"]);
    let model = |m: &str| std::fs::read_to_string(d.path().join(m).join("model.toml")).unwrap().lines().filter(|l| !l.starts_with('#') && !l.contains("twice") && !l.contains("once")).collect::<Vec<_>>().join("\n");
    assert_eq!(model("m1"), model("m2"));
}

#[test]
fn strict_fails_on_what_is_not_a_run_and_warns_without_it() {
    let d = work();
    let p = d.path();
    std::fs::write(p.join("empty.log"), "").unwrap();
    std::fs::write(p.join("random.bin"), (0..1u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect::<Vec<u8>>()).unwrap();
    std::fs::write(p.join("run.jsonl"), jsonl_of_sample()).unwrap();
    std::fs::write(p.join("future.jsonl"), jsonl_of_sample().replacen("\"schema_version\":1", "\"schema_version\":999", 1)).unwrap();
    std::fs::write(p.join("trace.json"), "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}\n]}\n").unwrap();
    for (args, warning) in [
        (vec!["analyze", "empty.log"], "empty input"),
        (vec!["analyze", "random.bin"], "not text"),
        (vec!["analyze", "run.jsonl", "--format", "cuzk"], "not one TIMELINE line"),
        (vec!["analyze", "future.jsonl", "--force"], "schema_version 999"),
        (vec!["compare", "sample.log", "trace.json"], "none on a device"),
        (vec!["compare", "sample.log", "random.bin"], "no completed proof"),
    ] {
        let mut a = args.clone();
        a.extend(["-o", "o"]);
        exits(p, &a, 0, &[warning]);
        a.push("--strict");
        exits(p, &a, 1, &[warning]);
    }
    // A schema from the future is an error without --force.
    exits(p, &["analyze", "future.jsonl", "-o", "o"], 2, &["schema_version 999", "--force"]);
    // gzip on stdin is read as the log it holds.
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(SAMPLE.as_bytes()).unwrap();
        e.finish().unwrap()
    };
    let r = spawn(&strings(&["analyze", "-", "--json", "--strict"]), p, Some(&gz)).wait(LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(json_out(&r)["proofs_completed"], 3);
}

#[test]
fn a_lost_or_stray_event_leaves_the_verdict() {
    let d = work();
    let lost: String = SAMPLE.lines().filter(|l| !l.starts_with("TIMELINE,61329,SYNTH_END,")).map(|l| format!("{l}\n")).collect();
    std::fs::write(d.path().join("lost.log"), lost).unwrap();
    std::fs::write(d.path().join("stray.log"), format!("{SAMPLE}TIMELINE,120000,SYNTH_START,5bd21b6a-ec89-b7a6-8a0a-c984f71ab247,partition=1\n")).unwrap();
    for log in ["lost.log", "stray.log"] {
        let s = json_out(&exits(d.path(), &["analyze", log, "--json"], 0, &[]));
        let h = s["verdict"]["headline"].as_str().unwrap();
        assert!(h.starts_with("synthesis-bound: 47.6 s/proof in steady state against a synthesis floor of 49.6"), "{log}: {h}");
        assert!(h.contains("lost their end event"), "{log}: {h}");
        exits(d.path(), &["analyze", log, "--json", "--strict"], 1, &[]);
    }
}

#[test]
fn arguments_are_checked_before_any_work() {
    let d = work();
    let p = d.path();
    exits(p, &["analyze", "sample.log", "--min-gap-ms", "NaN", "-o", "o"], 2, &["NaN"]);
    exits(p, &["compare", "sample.log", "--min-gap-ms", "-1"], 2, &["-1"]);
    assert!(!p.join("o").exists());
    // predict checks its --vary against the calibrated model before writing anything.
    std::fs::write(p.join("run.jsonl"), jsonl_of_sample()).unwrap();
    exits(p, &["predict", "run.jsonl", "--vary", "pw=0..2", "-o", "pred"], 2, &["pipeline.pw"]);
    assert!(!p.join("pred").join("model.toml").exists() && !p.join("pred").join("parity.json").exists());
    exits(p, &["predict", "run.jsonl", "--set", "pw=-1", "-o", "pred2"], 2, &["pw"]);
    assert!(!p.join("pred2").exists());
}

#[test]
fn a_report_folder_holds_one_run() {
    let d = work();
    let p = d.path();
    exits(p, &["analyze", "sample.log", "-o", "rep"], 0, &[]);
    assert!(p.join("rep/waterfall.svg").exists() && p.join("rep/trace.json").exists());
    exits(p, &["analyze", "sample.log", "-o", "rep", "--no-charts"], 0, &[]);
    for f in ["waterfall.svg", "waterfall.png", "trace.json", "utilization.svg", "gaps.svg", "phases.svg"] {
        assert!(!p.join("rep").join(f).exists(), "{f} of the earlier run is still there");
    }
    exits(p, &["sweep", "phase8.toml", "--vary", "pw=1..3", "-o", "sw"], 0, &[]);
    exits(p, &["sweep", "phase8.toml", "--vary", "lock=kernels,whole", "-o", "sw", "--no-charts"], 0, &[]);
    assert!(!p.join("sw/s_per_proof.svg").exists());
}

#[test]
fn a_parameter_file_with_its_test_only_flag_cleared_is_refused() {
    let d = work();
    let p = d.path();
    exits(p, &["setup", "--constraints", "2^8", "--params", "p.bin"], 0, &[]);
    let mut b = std::fs::read(p.join("p.bin")).unwrap();
    b[16] &= !1;
    std::fs::write(p.join("forged.bin"), &b).unwrap();
    exits(p, &["prove", "--params", "forged.bin", "--backend", "cpu", "--quiet"], 2, &["forged.bin", "hash mismatch"]);
    exits(p, &["prove", "--params", "p.bin", "--backend", "cpu", "--quiet"], 0, &["TEST-ONLY"]);
    // A RAM budget larger than the machine is a warning, not an error.
    exits(p, &["prove", "--params", "p.bin", "--backend", "cpu", "--quiet", "--ram-budget", "1000000", "-o", "big"], 0, &["larger than this machine's RAM"]);
}

/// Issue 17: a run of the CPU backend is not called a GPU run: the verdict (terminal and
/// summary.json), report.md and the trace's device process say "CPU device".
#[test]
fn a_cpu_backend_run_is_not_called_a_gpu_run() {
    let d = work();
    let p = d.path();
    exits(p, &["setup", "--constraints", "2^8", "--params", "p.bin"], 0, &[]);
    exits(p, &["prove", "--params", "p.bin", "--backend", "cpu", "--quiet", "--proofs", "3", "--partitions", "2", "--timeline", "run.jsonl", "-o", "proofs"], 0, &[]);
    let r = exits(p, &["analyze", "run.jsonl", "-o", "rep"], 0, &[]);
    let verdict = r.stdout.lines().find(|l| l.starts_with("verdict")).unwrap_or_default();
    assert!(!verdict.contains("GPU") && verdict.len() > 20, "{}", r.stdout);
    assert!(r.stdout.contains("CPU device 0"), "{}", r.stdout);
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p.join("rep/summary.json")).unwrap()).unwrap();
    let headline = s["verdict"]["headline"].as_str().unwrap();
    assert!(!headline.contains("GPU") && verdict.ends_with(headline), "{headline}");
    assert!(s["verdict"]["evidence"].as_array().unwrap().iter().all(|e| !e.as_str().unwrap().contains("GPU")), "{}", s["verdict"]["evidence"]);
    let md = std::fs::read_to_string(p.join("rep/report.md")).unwrap();
    assert!(md.contains("CPU device") && !md.contains("## Verdict: gpu"), "{md}");
    assert!(std::fs::read_to_string(p.join("rep/trace.json")).unwrap().contains("\"name\":\"CPU device 0\""));
}

#[test]
fn setup_caches_the_constraints_it_extracted_and_prove_reads_them() {
    // `setup` extracts the pre-compiled constraints anyway (the setup is made from them): it
    // writes them beside the file, and `prove --params` reads them instead of extracting
    // them again (~110 s at 2^27); `--no-pce-cache` writes none.
    let d = work();
    let p = d.path();
    let r = exits(p, &["setup", "--constraints", "2^10", "--params", "p.bin"], 0, &[]);
    assert!(r.stdout.contains("p.bin.pce: pre-compiled constraints"), "{}", r.stdout);
    assert!(p.join("p.bin.pce").is_file());
    exits(p, &["prove", "--params", "p.bin", "--proofs", "1", "--partitions", "2", "--verify", "--backend", "cpu", "--timeline", "t.jsonl", "-o", "proofs"], 0, &[]);
    let tl = std::fs::read_to_string(p.join("t.jsonl")).unwrap();
    let sources: Vec<String> = tl
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "pce_build")
        .map(|e| e["args"]["source"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(sources, ["cache"], "{tl}");
    // Without the cache the engine extracts them (and writes the cache itself).
    exits(p, &["setup", "--constraints", "2^10", "--params", "q.bin", "--no-pce-cache"], 0, &[]);
    assert!(!p.join("q.bin.pce").exists());
    exits(p, &["prove", "--params", "q.bin", "--proofs", "1", "--partitions", "1", "--backend", "cpu", "--timeline", "u.jsonl", "-o", "proofs2"], 0, &[]);
    let tl = std::fs::read_to_string(p.join("u.jsonl")).unwrap();
    assert!(tl.contains("\"source\":\"extracted\""), "{tl}");
}

/// `gpu upload` checks its sizes before it looks for a device: a bad one is a usage error
/// naming the flag, on a machine without a GPU too; an unknown fill mode is refused by clap.
#[cfg(feature = "cuda")]
#[test]
fn gpu_upload_refuses_bad_sizes_before_opening_a_device() {
    let d = work();
    let p = d.path();
    exits(p, &["gpu", "upload", "--gib", "0"], 2, &["--gib 0"]);
    exits(p, &["gpu", "upload", "--gib", "NaN"], 2, &["--gib NaN"]);
    exits(p, &["gpu", "upload", "--gib", "16"], 2, &["--gib 16"]);
    exits(p, &["gpu", "upload", "--chunks", "64,0"], 2, &["--chunks"]);
    exits(p, &["gpu", "upload", "--chunks", "99999999999999"], 2, &["--chunks"]);
    exits(p, &["gpu", "upload", "--load", "500"], 2, &["--load"]);
    exits(p, &["gpu", "upload", "--runs", "0"], 2, &["--runs 0"]);
    exits(p, &["gpu", "upload", "--modes", "eager"], 2, &["eager"]);
}
