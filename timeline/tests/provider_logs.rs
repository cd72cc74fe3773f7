//! Logs as providers have them (issue 17): mixed proof types, wrapped lines (journald,
//! `journalctl -o json`, Docker), compressed files, daemon restarts, and input from which
//! nothing can be read. The first three tests are the failures the issue names.

use std::io::Write;

use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::read::{read_bytes, read_str, Format};
use timeline::Run;

const SAMPLE: &str = include_str!("../assets/cuzk-sample.log");

/// A WindowPoSt whole-proof job that completes after the sample's last PoRep.
const WINDOW_POST: &str = "\
TIMELINE,170000,SYNTH_START,wpost-1,kind=window-post
TIMELINE,172000,SYNTH_END,wpost-1,synth_ms=2000
TIMELINE,172001,GPU_QUEUE,wpost-1,monolithic
TIMELINE,172002,GPU_PICKUP,wpost-1,worker=0
TIMELINE,172003,GPU_START,wpost-1,worker=0
TIMELINE,181740,GPU_END,wpost-1,worker=0,gpu_ms=9737
";

fn analyse(run: &Run) -> Summary {
    summarize(run, &AnalyzeOptions::default())
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// Issue 17: one whole-proof job added to the sample moved the headline 47.6 → 35.7 s/proof.
#[test]
fn a_whole_proof_job_does_not_move_the_porep_headline() {
    let base = analyse(&read_str(SAMPLE, None));
    assert!(close(base.steady_state_s_per_proof, 47.6425), "{:?}", base.steady_state_s_per_proof);
    let mixed = analyse(&read_str(&format!("{SAMPLE}{WINDOW_POST}"), None));
    assert!(close(mixed.steady_state_s_per_proof, 47.6425), "headline moved: {:?}", mixed.steady_state_s_per_proof);
    assert_eq!(mixed.primary_proof_type.as_deref(), Some("porep-c2"));
    let types: Vec<(&str, &str, u64)> = mixed.proof_types.iter().map(|t| (t.proof_type.as_str(), t.inferred_from.as_str(), t.proofs_completed)).collect();
    assert_eq!(types, [("porep-c2", "partition_count", 3), ("window-post", "kind", 1)]);
    let porep = &mixed.proof_types[0];
    assert!(close(porep.steady_state_s_per_proof, 47.6425));
    assert_eq!(porep.verdict.floors.partitions_per_proof, Some(10.0));
    let wpost = &mixed.proof_types[1];
    // One proof: first SYNTH_START → GPU_END.
    assert!(close(wpost.total_s_per_proof, 11.74), "{:?}", wpost.total_s_per_proof);
    assert!(close(wpost.latency_p50_s, 11.74));
    assert_eq!(wpost.steady_state_s_per_proof, None);
    assert!(wpost.verdict.headline.starts_with("window-post: "), "{}", wpost.verdict.headline);
    assert!(mixed.verdict.headline.contains("window-post (1 proofs"), "{}", mixed.verdict.headline);
    // The whole-proof job reads as one GPU call without a partition, with its flag.
    let run = read_str(&format!("{SAMPLE}{WINDOW_POST}"), None);
    assert_eq!(run.diagnostics.lines_rejected, 0, "{:?}", run.diagnostics.warnings);
    let gpu: Vec<_> = run.spans.iter().filter(|s| s.job.as_deref() == Some("wpost-1") && s.kind == timeline::SpanKind::Gpu).collect();
    assert_eq!(gpu.len(), 1);
    assert_eq!((gpu[0].partition, gpu[0].worker), (None, Some(0)));
    let q = run.spans.iter().find(|s| s.job.as_deref() == Some("wpost-1") && s.kind == timeline::SpanKind::GpuQueue).unwrap();
    assert_eq!(q.args["monolithic"], serde_json::json!(true));
    // Gaps stay per device over all types, and name the types around them.
    let last = mixed.idle_gaps.iter().find(|g| g.after_job.as_deref() == Some("wpost-1")).expect("the gap before the PoSt");
    assert_eq!((last.before_type.as_deref(), last.after_type.as_deref()), (Some("porep-c2"), Some("window-post")));
    let jobs: Vec<&str> = mixed.jobs.iter().map(|j| j.proof_type.as_str()).collect();
    assert_eq!(jobs, ["porep-c2", "porep-c2", "porep-c2", "window-post"]);
}

/// The sample's lines as `journalctl -o json` writes them (`MESSAGE`, µs wall clock).
fn journal_json(text: &str, host: &str, t0_us: i64) -> String {
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        let m = serde_json::json!({"__CURSOR": format!("s={i}"), "__REALTIME_TIMESTAMP": (t0_us + i as i64).to_string(), "_HOSTNAME": host, "SYSLOG_IDENTIFIER": "cuzk", "MESSAGE": l, "_PID": "4242"});
        out.push_str(&m.to_string());
        out.push('\n');
    }
    out
}

/// Issue 17: JSON-wrapped lines were read as our JSON lines, every line rejected, exit 0.
#[test]
fn journal_json_lines_read_like_the_plain_log() {
    let plain = read_str(SAMPLE, None);
    let run = read_str(&journal_json(SAMPLE, "gpu-7", 1_733_058_000_000_000), None);
    assert_eq!(run.diagnostics.lines_rejected, 0, "{:?}", run.diagnostics.warnings);
    assert_eq!(run.spans, plain.spans);
    assert_eq!(run.meta.host.as_deref(), Some("gpu-7"));
    assert_eq!(run.diagnostics.wrappers.get("journal_json"), Some(&180));
    // Forced, too.
    assert_eq!(read_str(&journal_json(SAMPLE, "h", 0), Some(Format::JournalJson)).spans, plain.spans);
}

#[test]
fn journal_prefix_docker_and_the_daemons_json_log_mixed() {
    let plain = read_str(SAMPLE, None);
    let mut mixed = String::new();
    for (i, l) in SAMPLE.lines().enumerate() {
        match i % 4 {
            0 => mixed.push_str(&format!("Dec 01 13:{:02}:{:02} gpu-7 cuzk[1234]: {l}\n", i / 60, i % 60)),
            1 => mixed.push_str(&format!("{}\n", serde_json::json!({"log": format!("{l}\n"), "stream": "stderr", "time": format!("2024-12-01T13:00:{:02}.5Z", i % 60)}))),
            2 => {
                mixed.push_str(&format!("{l}\n"));
                mixed.push_str("{\"timestamp\":\"2024-12-01T13:00:00Z\",\"level\":\"INFO\",\"fields\":{\"message\":\"partition synthesis complete\"},\"target\":\"cuzk_core::engine\"}\n");
            }
            _ => mixed.push_str(&format!("{l}\n")),
        }
    }
    let run = read_str(&mixed, None);
    assert_eq!(run.diagnostics.lines_rejected, 0, "{:?}", run.diagnostics.warnings);
    assert_eq!(run.spans, plain.spans);
    let w = &run.diagnostics.wrappers;
    assert!(w["journal"] > 0 && w["docker"] > 0 && w["plain"] > 0, "{w:?}");
    // The daemon's JSON log lines are ordinary lines: counted as ignored, not rejected.
    let daemon_json = (0..SAMPLE.lines().count()).filter(|i| i % 4 == 2).count() as u64;
    assert_eq!(run.diagnostics.lines_ignored, plain.diagnostics.lines_ignored + daemon_json);
}

/// Issue 17: gzip on stdin was read as garbage. Any byte source (stdin is one) is
/// decompressed by its magic: gzip and zstd.
#[test]
fn gzip_and_zstd_streams_read_like_the_plain_log() {
    let plain = read_str(SAMPLE, None);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(SAMPLE.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zs = zstd::encode_all(SAMPLE.as_bytes(), 3).unwrap();
    for (name, bytes) in [("gzip", gz), ("zstd", zs.clone())] {
        let run = read_bytes(&bytes[..], name, None).unwrap();
        assert_eq!(run.spans, plain.spans, "{name}");
        assert_eq!(run.diagnostics, plain.diagnostics, "{name}");
    }
    // Two zstd frames one after the other (a log appended to) read as one log.
    let half = SAMPLE.len() / 2;
    let cut = SAMPLE[..half].rfind('\n').unwrap() + 1;
    let mut two = zstd::encode_all(&SAMPLE.as_bytes()[..cut], 3).unwrap();
    two.extend(zstd::encode_all(&SAMPLE.as_bytes()[cut..], 3).unwrap());
    assert_eq!(read_bytes(&two[..], "two", None).unwrap().spans, plain.spans);
    // A truncated zstd stream is an error naming the input.
    let e = read_bytes(&zs[..zs.len() / 2], "cut.zst", None).unwrap_err().to_string();
    assert!(e.contains("cut.zst"), "{e}");
    // journald JSON, zstd-compressed.
    let jj = zstd::encode_all(journal_json(SAMPLE, "h", 0).as_bytes(), 3).unwrap();
    assert_eq!(read_bytes(&jj[..], "jj.zst", None).unwrap().spans, plain.spans);
}

/// The sample, then the daemon restarted and ran the sample again.
#[test]
fn a_restart_splits_the_log_into_daemon_runs() {
    let twice = format!("{SAMPLE}{SAMPLE}");
    let run = read_str(&twice, None);
    assert_eq!(run.diagnostics.lines_rejected, 0, "{:?}", run.diagnostics.warnings.first());
    let d = &run.diagnostics.daemon_runs;
    assert_eq!(d.len(), 2);
    assert_eq!((d[0].first_line, d[1].first_line), (1, SAMPLE.lines().count() as u64 + 1));
    assert_eq!(d[1].placed_by, "end_to_end");
    // No wall clock: end to end, a second apart.
    assert!((d[1].start_ms - (169_928.0 + 1000.0)).abs() < 1e-6, "{d:?}");
    let s = analyse(&run);
    assert_eq!(s.daemon_runs.len(), 2);
    for r in &s.daemon_runs {
        assert_eq!(r.proof_types.len(), 1);
        assert!(close(r.proof_types[0].steady_state_s_per_proof, 47.6425), "{r:?}");
        assert_eq!(r.proof_types[0].proofs_completed, 3);
    }
    // Job ids of the second run are other requests.
    assert_eq!(s.proofs_completed, 6);
    assert!(s.jobs.iter().any(|j| j.job.ends_with("@run2")));

    // With journald's wall clock: the second daemon started an hour after the first.
    let t0 = 1_733_058_000_000_000i64;
    let mut jj = journal_json(SAMPLE, "h", t0);
    jj.push_str(&journal_json(SAMPLE, "h", t0 + 3_600_000_000));
    let run = read_str(&jj, None);
    let d = &run.diagnostics.daemon_runs;
    assert_eq!(d.len(), 2);
    assert_eq!(d[1].placed_by, "wall_clock");
    // Anchors: wall − offset, smallest per run; the lines' µs steps shift it a little.
    assert!((d[1].start_ms - 3_600_000.0).abs() < 200.0, "{d:?}");
}

#[test]
fn nothing_read_is_a_problem_naming_what_the_lines_looked_like() {
    let run = read_str("hello world\nanother line\n", None);
    let p = run.diagnostics.problems.join(" / ");
    assert!(p.contains("not one TIMELINE line") && p.contains("line 1: hello world"), "{p}");
    assert!(run.diagnostics.has_warnings());
    // JSON objects that carry no TIMELINE line (the daemon's JSON log alone).
    let run = read_str("{\"level\":\"INFO\",\"fields\":{\"message\":\"started\"}}\n", None);
    let p = run.diagnostics.problems.join(" / ");
    assert!(p.contains("first lines look like") && p.contains("\"level\""), "{p}");
}
