//! The whole command line against hostile but fair input (issue 18): random logs (the
//! sample mutated, JSON lines with extreme numbers, random bytes, gzip, empty files, a
//! future schema, every span twice), random configs and `--set`/`--vary` values (zero,
//! negative, NaN, 2^32 − 1, 1e300, words), random flags. Every run of the built binary
//! must exit 0, 1 or 2 — never a panic (101), an abort or a signal — within a memory limit
//! (RLIMIT_AS, [`common::memory_limit`]: 4 GiB and 16 MiB per core) and a time limit, and say nothing of a panic.
//!
//! Configs are phase8.toml with numbers replaced or lines dropped. A few hundred runs in all (`PROOFSCOPE_CLI_CASES` per property, default 100), small
//! inputs, about a minute on two cores; CI runs it through `cargo test`.

mod common;

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use common::{spawn, strings, PHASE8, SAMPLE};
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestRunner};

/// Runs of a valid small input take well under this on two cores, debug build.
const LIMIT: Duration = Duration::from_secs(60);

fn cases() -> u32 {
    std::env::var("PROOFSCOPE_CLI_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100)
}

fn config() -> PtConfig {
    PtConfig { cases: cases(), failure_persistence: None, max_shrink_iters: 64, ..PtConfig::default() }
}

/// Files every case may name, made once.
struct Fixtures {
    dir: tempfile::TempDir,
}

fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("sample.log"), SAMPLE).unwrap();
        std::fs::write(p.join("phase8.toml"), PHASE8).unwrap();
        let run = timeline::read::read_str(SAMPLE, None);
        let mut jsonl = Vec::new();
        timeline::write::jsonl::write_run(&mut jsonl, &run).unwrap();
        std::fs::write(p.join("sample.jsonl"), &jsonl).unwrap();
        std::fs::write(p.join("trace.json"), "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}\n]}\n").unwrap();
        std::fs::write(p.join("random.bin"), (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect::<Vec<u8>>()).unwrap();
        std::fs::write(p.join("empty.log"), "").unwrap();
        let s = timeline::analysis::summarize(&run, &Default::default());
        let mut v = serde_json::to_value(&s).unwrap();
        v["schema_version"] = 999.into();
        std::fs::write(p.join("summary999.json"), serde_json::to_vec(&v).unwrap()).unwrap();
        // A small TEST-ONLY parameter file (2^8 constraints) for `prove`.
        let r = common::run(&["setup", "--constraints", "2^8", "--params", "params.bin"], p, LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        Fixtures { dir }
    })
}

/// Run one command line in a fresh folder beside the fixtures; fail on misbehaviour.
fn check(args: Vec<String>, files: &[(&str, Vec<u8>)], stdin: Option<Vec<u8>>) -> Result<(), TestCaseError> {
    let fx = fixtures();
    let work = tempfile::tempdir_in(fx.dir.path()).unwrap();
    for (name, bytes) in files {
        std::fs::write(work.path().join(name), bytes).unwrap();
    }
    for f in ["sample.log", "sample.jsonl", "phase8.toml", "trace.json", "random.bin", "empty.log", "summary999.json", "params.bin"] {
        let _ = std::fs::hard_link(fx.dir.path().join(f), work.path().join(f));
    }
    let ran = spawn(&args, work.path(), stdin.as_deref()).wait(LIMIT);
    tally(&args[0], ran.code);
    if std::env::var("PROOFSCOPE_CLI_VERBOSE").is_ok() {
        eprintln!("{:?} -> {:?}\n{}", args, ran.code, ran.stderr.lines().last().unwrap_or(""));
    }
    if let Some(why) = ran.misbehaved() {
        return Err(TestCaseError::fail(why));
    }
    // Exit 1 means the work failed: only `--strict` (analyze, compare) may say so here,
    // where no fault is injected (a sweep whose Parquet columns clashed once exited 1).
    if ran.code == Some(1) && !matches!(args[0].as_str(), "analyze" | "compare") {
        return Err(TestCaseError::fail(format!("{args:?}: exit 1 without a fault\n{}", ran.stderr)));
    }
    // Exit 2 says why, naming something.
    if ran.code == Some(2) {
        prop_assert!(ran.stderr.contains("error"), "exit 2 without an error message: {:?}\n{}", args, ran.stderr);
    }
    // No temporary file is left behind by a run that ended on its own.
    for e in walk(work.path()) {
        let name = e.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        prop_assert!(!name.starts_with(".tmp-"), "temporary file left: {} after {:?}", e.display(), args);
    }
    Ok(())
}

/// Runs per (command, exit code), printed at the end of each property (`--nocapture`).
fn tally(cmd: &str, code: Option<i32>) {
    let mut t = TALLY.lock().unwrap_or_else(|e| e.into_inner());
    *t.entry((cmd.to_string(), code)).or_insert(0) += 1;
}

static TALLY: std::sync::Mutex<std::collections::BTreeMap<(String, Option<i32>), u32>> = std::sync::Mutex::new(std::collections::BTreeMap::new());

fn report(what: &str) {
    let t = TALLY.lock().unwrap_or_else(|e| e.into_inner());
    let runs: u32 = t.values().sum();
    eprintln!("{what}: {runs} runs of the binary so far, by (command, exit code): {t:?}");
}

fn walk(p: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

// ---- inputs -------------------------------------------------------------------------

fn extreme() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..100_000).prop_map(|v| v.to_string()),
        Just(u64::MAX.to_string()),
        Just((u64::MAX - 1).to_string()),
        Just("315576000000000001".to_string()),
        Just("-1".to_string()),
        Just("1e300".to_string()),
        Just("NaN".to_string()),
        Just("\"x\"".to_string()),
        Just("null".to_string()),
    ]
}

/// A log: the sample mutated, JSON lines at the edges, bytes, gzip, empty, doubled.
fn log() -> impl Strategy<Value = Vec<u8>> {
    let n = SAMPLE.lines().count();
    prop_oneof![
        Just(SAMPLE.as_bytes().to_vec()),
        proptest::collection::vec((0..n, 0..4u8, "[ -~]{0,30}"), 1..6).prop_map(move |muts| {
            let mut lines: Vec<String> = SAMPLE.lines().map(str::to_string).collect();
            for (i, op, text) in muts {
                let i = i % lines.len().max(1);
                match op {
                    0 if !lines.is_empty() => {
                        lines.remove(i);
                    }
                    1 => lines.insert(i, lines.get(i).cloned().unwrap_or_default()),
                    2 => lines.insert(i, format!("TIMELINE,{text},SYNTH_START,j,partition=0")),
                    _ => lines.insert(i, text),
                }
            }
            (lines.join("\n") + "\n").into_bytes()
        }),
        proptest::collection::vec((prop_oneof![Just("gpu"), Just("synthesis"), Just("ntt"), Just("finalize"), Just("zz")], extreme(), extreme(), 0u32..3, prop_oneof![Just("0"), Just("4294967295"), Just("-3")]), 0..20).prop_map(|spans| {
            let mut s = String::from("{\"type\":\"meta\",\"schema_version\":1,\"source\":\"t\",\"tool_version\":\"0\"}\n");
            for (k, a, b, p, d) in spans {
                s.push_str(&format!("{{\"type\":\"span\",\"kind\":\"{k}\",\"start_ns\":{a},\"end_ns\":{b},\"job\":\"j{p}\",\"partition\":{p},\"worker\":{d},\"device\":{d}}}\n"));
                s.push_str(&format!("{{\"type\":\"counter\",\"name\":\"rss_bytes\",\"t_ns\":{a},\"value\":{b}}}\n"));
            }
            s.into_bytes()
        }),
        proptest::collection::vec(any::<u8>(), 0..2048),
        Just({
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(SAMPLE.as_bytes()).unwrap();
            e.finish().unwrap()
        }),
        Just(Vec::new()),
        Just(b"{\"type\":\"meta\",\"schema_version\":999,\"source\":\"x\",\"tool_version\":\"9\"}\n".to_vec()),
        proptest::collection::vec(("[0-9]{1,14}", prop_oneof![Just("SYNTH_START"), Just("SYNTH_END"), Just("GPU_START"), Just("GPU_END"), Just("GPU_QUEUE"), Just("GPU_PICKUP")], 0u32..3, 0u32..3), 0..40)
            .prop_map(|ev| ev.iter().map(|(t, e, j, p)| format!("TIMELINE,{t},{e},job{j},partition={p},worker=0\n")).collect::<String>().into_bytes()),
    ]
}

fn ms_flag() -> impl Strategy<Value = &'static str> {
    // Mostly valid, so that most runs get past the arguments to the work.
    prop_oneof![8 => Just("1"), 2 => Just("0"), 1 => Just("NaN"), 1 => Just("-1"), 1 => Just("inf"), 1 => Just("1e308"), 1 => Just("abc")]
}

fn window() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![12 => Just(None), 1 => Just(Some("0..1")), 1 => Just(Some("1..0")), 1 => Just(Some("0..1e300")), 1 => Just(Some("NaN..1")), 1 => Just(Some("5..")), 2 => Just(Some("20..60"))]
}

fn set_key() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("pw"), Just("gw"), Just("lock"), Just("gpus"), Just("c"), Just("j"), Just("partitions"), Just("queue"), Just("split"),
        Just("finalizers"), Just("prestage"), Just("ram"), Just("vram"), Just("cores"), Just("bandwidth"), Just("pcie"), Just("slope"),
        Just("knee"), Just("b_g2_msm"), Just("msm_b_g2"), Just("seed"), Just("costs.synth"), Just("costs.upload_gib"), Just("cpu.prep_cores"),
        Just("memory.early_release"), Just("pipeline.arrival"), Just("nope"), Just("machine"),
    ]
}

fn set_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just("1".to_string()), 3 => Just("2".to_string()), 3 => Just("3".to_string()), 2 => Just("64".to_string()), 1 => Just("0".to_string()),
        1 => Just("4097".to_string()), 1 => Just("4294967295".to_string()), 1 => Just("-1".to_string()), 1 => Just("1e300".to_string()), 1 => Just("1e9".to_string()),
        1 => Just("NaN".to_string()), 1 => Just("inf".to_string()), 1 => Just("abc".to_string()), 1 => Just("true".to_string()), 1 => Just("whole".to_string()),
        1 => Just("unbounded".to_string()), 1 => Just("{ dist = \"lognormal\", median_ms = 1e300, sigma = 50 }".to_string()),
        1 => Just("{ kind = \"periodic\", period_s = 1e-300 }".to_string()),
        1 => Just("{ dist = \"lognormal\", median_ms = 1000, sigma = 9 }".to_string()),
    ]
}

fn vary() -> impl Strategy<Value = String> {
    let key = prop_oneof![Just("pw"), Just("gw"), Just("c"), Just("lock"), Just("seed"), Just("slope"), Just("queue"), Just("bogus")];
    let values = prop_oneof![
        8 => (1i64..4, 1i64..8, 1i64..4).prop_map(|(a, b, s)| format!("{a}..{}:{s}", a.max(b))),
        1 => Just("1..4294967295:4294967294".to_string()),
        1 => Just("-9223372036854775808..9223372036854775807".to_string()),
        1 => Just("1..2000000".to_string()),
        1 => Just("9223372036854775806..9223372036854775807".to_string()),
        1 => Just("kernels,two_lock,half".to_string()),
        1 => Just("1,2,NaN".to_string()),
        1 => Just("".to_string()),
    ];
    (key, values).prop_map(|(k, v)| format!("{k}={v}"))
}

/// A random config: phase8.toml with some of its numbers replaced (zero, negative, huge,
/// NaN, a word), a line dropped, or left as it is.
fn config_text() -> impl Strategy<Value = String> {
    let n = PHASE8.lines().count();
    let value = prop_oneof![
        Just("0"), Just("-1"), Just("1e300"), Just("4294967295"), Just("4097"), Just("nan"), Just("inf"), Just("\"x\""), Just("2"), Just("1e-300"), Just("[]"),
    ];
    prop_oneof![
        2 => Just(PHASE8.to_string()),
        3 => proptest::collection::vec((0..n, value, any::<bool>()), 1..4).prop_map(move |edits| {
            let mut lines: Vec<String> = PHASE8.lines().map(str::to_string).collect();
            for (i, v, drop) in edits {
                let i = i % lines.len();
                if drop {
                    lines[i] = String::new();
                } else if let Some((k, _)) = lines[i].split_once('=') {
                    let k = k.to_string();
                    lines[i] = format!("{k}= {v}");
                }
            }
            lines.join("\n") + "\n"
        }),
    ]
}

// ---- properties ----------------------------------------------------------------------

#[test]
fn analyze_never_misbehaves() {
    let strategy = (log(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), ms_flag(), prop_oneof![10 => Just(None), 1 => Just(Some("jsonl")), 1 => Just(Some("cuzk")), 1 => Just(Some("xml"))], window(), any::<bool>());
    TestRunner::new(config())
        .run(&strategy, |(log, strict, json, charts, force, gap, format, window, stdin)| {
            let mut args = strings(&["analyze", if stdin { "-" } else { "in.log" }, "-o", "out", "--min-gap-ms", gap]);
            if strict {
                args.push("--strict".into());
            }
            if json {
                args.push("--json".into());
            }
            if !charts {
                args.push("--no-charts".into());
            }
            if force {
                args.push("--force".into());
            }
            if let Some(f) = format {
                args.extend(strings(&["--format", f]));
            }
            if let Some(w) = window {
                args.extend(strings(&["--window", w]));
            }
            if stdin {
                check(args, &[], Some(log))
            } else {
                check(args, &[("in.log", log)], None)
            }
        })
        .unwrap();
    report(module_path!());
}

#[test]
fn simulate_and_sweep_never_misbehave() {
    let strategy = (config_text(), proptest::collection::vec((set_key(), set_value()), 0..3), proptest::collection::vec(vary(), 0..3), any::<bool>(), any::<bool>(), any::<u64>());
    TestRunner::new(config())
        .run(&strategy, |(text, sets, varies, record, sweep, seed)| {
            let mut args = if sweep && !varies.is_empty() { strings(&["sweep", "cfg.toml", "-o", "out", "--no-charts"]) } else { strings(&["simulate", "cfg.toml", "--json"]) };
            for (k, v) in &sets {
                args.push("--set".into());
                args.push(format!("{k}={v}"));
            }
            if args[0] == "sweep" {
                for v in &varies {
                    args.push("--vary".into());
                    args.push(v.clone());
                }
            } else {
                args.extend(strings(&["--seed", &seed.to_string()]));
                if record {
                    args.extend(strings(&["--timeline", "sim.jsonl", "--compare-to", "sample.log", "-o", "parity"]));
                }
            }
            check(args, &[("cfg.toml", text.into_bytes())], None)
        })
        .unwrap();
    report(module_path!());
}

#[test]
fn compare_calibrate_predict_never_misbehave() {
    let inputs = prop_oneof![Just("sample.log"), Just("sample.jsonl"), Just("trace.json"), Just("random.bin"), Just("empty.log"), Just("summary999.json"), Just("in.log"), Just("missing.log"), Just(".")];
    let strategy = (log(), proptest::collection::vec(inputs, 1..4), 0..3u8, any::<bool>(), any::<bool>(), ms_flag(), proptest::collection::vec(vary(), 0..2));
    TestRunner::new(config())
        .run(&strategy, |(log, inputs, cmd, strict, force, gap, varies)| {
            let mut args = match cmd {
                0 => strings(&["compare", "--min-gap-ms", gap]),
                1 => strings(&["calibrate", "-o", "model"]),
                _ => strings(&["predict", "-o", "pred", "--no-charts"]),
            };
            args.extend(inputs.iter().map(|s| s.to_string()));
            if cmd == 0 && strict {
                args.push("--strict".into());
            }
            if force {
                args.push("--force".into());
            }
            if cmd == 2 {
                for v in &varies {
                    args.push("--vary".into());
                    args.push(v.clone());
                }
            }
            check(args, &[("in.log", log)], None)
        })
        .unwrap();
    report(module_path!());
}

#[test]
fn prove_and_setup_arguments_never_misbehave() {
    // Valid counts stay small (2^8 constraints, a second or two); the others are refused.
    let proofs = prop_oneof![4 => Just("1"), 3 => Just("2"), 1 => Just("0"), 1 => Just("100001"), 1 => Just("4294967295"), 1 => Just("-1"), 1 => Just("x")];
    let partitions = prop_oneof![4 => Just("1"), 3 => Just("2"), 1 => Just("0"), 1 => Just("1025"), 1 => Just("100000"), 1 => Just("4294967295"), 1 => Just("x")];
    let params = prop_oneof![6 => Just("params.bin"), 1 => Just("random.bin"), 1 => Just("empty.log"), 1 => Just("missing.bin"), 1 => Just("sample.log")];
    let sets = proptest::collection::vec(
        (prop_oneof![Just("queue_capacity"), Just("pw"), Just("gw"), Just("max_attempts"), Just("finalizers"), Just("rss_sample_ms"), Just("cuda.nope"), Just("backend")], set_value()),
        0..2,
    );
    let setup = prop_oneof![Just("0"), Just("1"), Just("2^7"), Just("2^28"), Just("2^64"), Just("x"), Just("1<<70")];
    let strategy = (proofs, partitions, params, sets, prop::bool::weighted(0.2), setup);
    TestRunner::new(config())
        .run(&strategy, |(proofs, partitions, params, sets, do_setup, size)| {
            let args = if do_setup {
                strings(&["setup", "--constraints", size, "--params", "new.bin"])
            } else {
                let mut a = strings(&["prove", "--params", params, "--proofs", proofs, "--partitions", partitions, "--backend", "cpu", "--quiet", "--timeline", "run.jsonl", "-o", "proofs"]);
                for (k, v) in &sets {
                    a.push("--set".into());
                    a.push(format!("{k}={v}"));
                }
                a
            };
            check(args, &[], None)
        })
        .unwrap();
    report(module_path!());
}
