//! No silent wrong answer: inputs that are damaged in ways a reader cannot see line by line
//! (a log concatenated with itself, a lost or stray event, an empty or binary or foreign
//! file, a number from another era) are detected, named and kept out of the figures, so
//! that the verdict of what is left is the verdict of the intact run. Issue 18's cases,
//! each with the figure it used to get wrong.

use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::read::{read_str, unknown_schema, Format};

const SAMPLE: &str = include_str!("../assets/cuzk-sample.log");

fn analyse(text: &str, format: Option<Format>) -> Summary {
    summarize(&read_str(text, format), &AnalyzeOptions::default())
}

fn synth_floor(s: &Summary) -> f64 {
    s.verdict.floors.synthesis_floor_s_per_proof.unwrap()
}

/// The intact sample: synthesis-bound, −4 %, synthesis floor 49.6 s/proof over 6 workers.
fn intact() -> Summary {
    let s = analyse(SAMPLE, None);
    assert!(s.verdict.headline.starts_with("synthesis-bound: 47.6 s/proof in steady state against a synthesis floor of 49.6 s/proof (-4 %)"), "{}", s.verdict.headline);
    assert_eq!(s.verdict.floors.synthesis_workers, Some(6));
    assert!(!s.diagnostics.has_warnings());
    s
}

fn without_line(pred: impl Fn(&str) -> bool) -> String {
    let mut removed = false;
    let lines: Vec<&str> = SAMPLE
        .lines()
        .filter(|l| {
            if !removed && pred(l) {
                removed = true;
                return false;
            }
            true
        })
        .collect();
    assert!(removed);
    lines.join("\n") + "\n"
}

#[test]
fn a_lost_synth_end_leaves_the_verdict_and_is_reported_apart() {
    let base = intact();
    // Used to turn "synthesis-bound, −4 %" into "100 % above the floor".
    let text = without_line(|l| l.starts_with("TIMELINE,61329,SYNTH_END,"));
    let s = analyse(&text, None);
    assert_eq!(s.proofs_completed, 3, "{}", s.verdict.headline);
    assert_eq!(s.binding_resource, "synthesis", "{}", s.verdict.headline);
    assert!(s.verdict.headline.starts_with("synthesis-bound: 47.6 s/proof"), "{}", s.verdict.headline);
    assert!((synth_floor(&s) / synth_floor(&base) - 1.0).abs() < 0.01, "{} vs {}", synth_floor(&s), synth_floor(&base));
    assert_eq!(s.verdict.spans_unmatched, 1);
    assert!(s.verdict.headline.contains("1 span(s) lost their end event"), "{}", s.verdict.headline);
    assert_eq!(s.steady_state_s_per_proof, base.steady_state_s_per_proof);
    // Still a warning: --strict fails on it.
    assert!(s.diagnostics.has_warnings());
}

#[test]
fn a_stray_synth_start_moves_no_floor() {
    let base = intact();
    let job = "5bd21b6a-ec89-b7a6-8a0a-c984f71ab247";
    // After its partition finished (used to move the floor from 49.6 to 42.5 s: one more
    // "concurrent" synthesis running to the end of the run) ...
    let after = format!("{SAMPLE}TIMELINE,120000,SYNTH_START,{job},partition=1\n");
    // ... and before the real start of a partition: the end pairs with the latest start.
    let before = format!("TIMELINE,100,SYNTH_START,{job},partition=2\n{SAMPLE}");
    for text in [after, before] {
        let s = analyse(&text, None);
        assert_eq!(s.verdict.floors.synthesis_workers, Some(6));
        assert_eq!(synth_floor(&s), synth_floor(&base));
        assert_eq!(s.binding_resource, "synthesis");
        assert_eq!(s.proofs_completed, 3);
        assert!(s.diagnostics.has_warnings());
    }
}

#[test]
fn a_lost_gpu_end_leaves_its_proof_out_and_the_verdict_says_how_much() {
    let s = analyse(&without_line(|l| l.starts_with("TIMELINE,169928,GPU_END,")), None);
    assert_eq!(s.proofs_completed, 2);
    assert_eq!(s.verdict.partitions_seen, 30);
    assert_eq!(s.verdict.partitions_left_out, 10);
    assert!(s.verdict.headline.contains("10 of 30 partitions (33 %) belong to proofs that never completed"), "{}", s.verdict.headline);
}

#[test]
fn duplicated_spans_are_detected_named_and_dropped() {
    let base = intact();
    // The sample as our JSON lines, every span written twice.
    let run = read_str(SAMPLE, None);
    let mut buf = Vec::new();
    timeline::write::jsonl::write_run(&mut buf, &run).unwrap();
    let text = String::from_utf8(buf).unwrap();
    let mut doubled = String::new();
    for l in text.lines() {
        doubled.push_str(l);
        doubled.push('\n');
        if l.contains("\"type\":\"span\"") {
            doubled.push_str(l);
            doubled.push('\n');
        }
    }
    let again = read_str(&doubled, None);
    assert_eq!(again.spans, run.spans, "the repeats are dropped");
    assert_eq!(again.diagnostics.duplicates, run.spans.len() as u64);
    assert_eq!(again.diagnostics.lines_rejected, run.spans.len() as u64);
    let w = &again.diagnostics.warnings[0];
    assert!(w.message.starts_with("duplicate of line 2:") && w.line == 3, "{w:?}");
    let s = summarize(&again, &AnalyzeOptions::default());
    // Used to double the CPU floor and flip the verdict.
    assert_eq!(s.verdict.headline, base.verdict.headline);
    assert_eq!(s.verdict.floors, base.verdict.floors);
    assert!(s.diagnostics.has_warnings(), "--strict fails on duplicates");
}

#[test]
fn times_beyond_ten_years_are_rejected_by_line() {
    // A span ending near u64::MAX (used to panic in the tables and the chart).
    let text = "{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":18446744073709551000,\"job\":\"a\",\"partition\":0}\n{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5,\"job\":\"a\",\"partition\":1}\n";
    let run = read_str(text, None);
    assert_eq!(run.spans.len(), 1);
    assert_eq!(run.diagnostics.warnings[0].line, 1);
    assert!(run.diagnostics.warnings[0].message.contains("beyond 10 years"), "{:?}", run.diagnostics.warnings);
    let c = read_str("{\"type\":\"counter\",\"name\":\"x\",\"t_ns\":18446744073709551615,\"value\":1}\n", None);
    assert_eq!(c.diagnostics.lines_rejected, 1);
    // A cuzk offset of 9.3e12 ms (used to be accepted: "9300000000 s/proof", then a chart panic).
    let run = read_str("TIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,9300000000000,SYNTH_END,a,partition=0\n", None);
    assert_eq!(run.diagnostics.lines_rejected, 1);
    assert_eq!(run.diagnostics.warnings.iter().find(|w| w.message.contains("out of range")).map(|w| w.line), Some(2));
    let s = summarize(&run, &AnalyzeOptions::default());
    assert!(s.total_s_per_proof.is_none());
}

#[test]
fn inputs_that_are_not_a_run_are_problems() {
    let problems = |text: &str, f: Option<Format>| read_str(text, f).diagnostics.problems;
    assert!(problems("", None)[0].contains("empty input"));
    // Random bytes (read as a cuzk log: ordinary lines, no TIMELINE).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..1 << 16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let run = timeline::read::read_bytes(&bytes[..], "random", None).unwrap();
    assert!(run.diagnostics.problems.iter().any(|p| p.contains("no event") && p.contains("not text")), "{:?}", run.diagnostics.problems);
    assert!(run.diagnostics.has_warnings());
    // JSON lines read as a cuzk log.
    let jsonl = "{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5,\"job\":\"a\"}\n";
    assert!(problems(jsonl, Some(Format::Cuzk))[0].contains("not one TIMELINE line"));
    assert!(problems(jsonl, None).is_empty());
    // A Chrome trace with no events at all: the Chrome reader says so.
    let p = problems("{\n \"traceEvents\": [\n ]\n}\n", None);
    assert!(p.iter().any(|p| p.contains("a Chrome trace with no events at all")), "{p:?}");
    // One without a device event says what it holds.
    let p = problems("{\"traceEvents\":[\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}\n]}\n", None);
    assert!(p.iter().any(|p| p.contains("a Chrome trace with 1 event, none on a device") && p.contains("1 cpu_op")), "{p:?}");
    // A pretty-printed JSON document that is not a Chrome trace: every line rejected.
    let p = problems("{\n \"verdict\": {\n }\n}\n", None);
    assert!(p.iter().any(|p| p.contains("no usable event")), "{p:?}");
    // A schema from the future.
    let future = "{\"type\":\"meta\",\"schema_version\":999,\"source\":\"x\",\"tool_version\":\"9\"}\n{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5,\"job\":\"a\"}\n";
    let run = read_str(future, None);
    assert_eq!(unknown_schema(&run), Some(999));
    assert!(run.diagnostics.problems[0].contains("schema_version 999"));
    // The sample: none.
    assert!(read_str(SAMPLE, None).diagnostics.problems.is_empty());
}

#[test]
fn gzip_is_detected_on_any_byte_source() {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(SAMPLE.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    // (stdin goes through read_bytes too: read_path("-"))
    let run = timeline::read::read_bytes(&gz[..], "-", None).unwrap();
    assert_eq!(run.spans, read_str(SAMPLE, None).spans);
}
