//! Bad input never panics: random text, mutated real logs, garbage lines. Every rejected
//! line is counted, and the analyses' invariants hold whatever the reader let through.

use proptest::prelude::*;
use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::read::{read_str, Format};

const SAMPLE: &str = include_str!("../assets/cuzk-sample.log");

fn check_invariants(s: &Summary) {
    for d in &s.utilization.devices {
        assert!(d.gpu_utilization >= 0.0 && d.gpu_utilization <= 1.0 + 1e-9, "{d:?}");
        assert!(d.gpu_busy_ms <= d.window_ms + 1e-6, "{d:?}");
        if let Some(k) = d.kernel_utilization {
            assert!((0.0..=1.0 + 1e-9).contains(&k));
        }
    }
    for g in &s.idle_gaps {
        assert!(g.end_ns > g.start_ns && g.duration_ms > 0.0, "{g:?}");
    }
    let by_cause: f64 = s.idle_gap_totals.by_cause.iter().map(|c| c.total_ms).sum();
    assert!((by_cause - s.idle_gap_totals.idle_total_ms).abs() < 1e-6 * by_cause.max(1.0));
    for r in s.phases.by_kind.iter() {
        assert!(r.min_ms <= r.p50_ms && r.p50_ms <= r.p95_ms && r.p95_ms <= r.p99_ms && r.p99_ms <= r.max_ms, "{r:?}");
    }
    if let Some(v) = s.steady_state_s_per_proof {
        assert!(v >= 0.0 && v.is_finite());
    }
    assert!(s.proofs_completed <= s.throughput.jobs_seen);
    // The report and the JSON never fail either.
    let _ = timeline::report::render(s, &[]);
    serde_json::to_string(s).unwrap();
}

fn analyse(text: &str, format: Option<Format>) -> Summary {
    let run = read_str(text, format);
    let d = &run.diagnostics;
    assert_eq!(d.lines_total, text.lines().count() as u64, "every line is counted");
    assert!(d.event_lines + d.lines_ignored <= d.lines_total);
    assert!(d.lines_rejected <= d.event_lines);
    let s = summarize(&run, &AnalyzeOptions::default());
    check_invariants(&s);
    s
}

/// A mutation of one line of the sample.
#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Truncate(usize, usize),
    Replace(usize, String),
    FlipChar(usize, usize, char),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let n = SAMPLE.lines().count();
    prop_oneof![
        (0..n).prop_map(Mutation::Delete),
        (0..n).prop_map(Mutation::Duplicate),
        (0..n, 0..n).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (0..n, 0..80usize).prop_map(|(a, b)| Mutation::Truncate(a, b)),
        (0..n, ".{0,60}").prop_map(|(a, s)| Mutation::Replace(a, s)),
        (0..n, 0..80usize, any::<char>()).prop_map(|(a, b, c)| Mutation::FlipChar(a, b, c)),
    ]
}

fn apply(lines: &mut Vec<String>, m: &Mutation) {
    if lines.is_empty() {
        return;
    }
    let len = lines.len();
    match m {
        Mutation::Delete(i) => {
            lines.remove(i % len);
        }
        Mutation::Duplicate(i) => {
            let l = lines[i % len].clone();
            lines.insert(i % len, l);
        }
        Mutation::Swap(a, b) => lines.swap(a % len, b % len),
        Mutation::Truncate(i, at) => {
            let l = &mut lines[i % len];
            let mut at = (*at).min(l.len());
            while !l.is_char_boundary(at) {
                at -= 1;
            }
            l.truncate(at);
        }
        Mutation::Replace(i, s) => lines[i % len] = s.replace(['\n', '\r'], " "),
        Mutation::FlipChar(i, at, c) => {
            let l = &mut lines[i % len];
            let chars: Vec<char> = l.chars().collect();
            if !chars.is_empty() {
                let at = at % chars.len();
                let mut v = chars;
                v[at] = if *c == '\n' || *c == '\r' { ' ' } else { *c };
                *l = v.into_iter().collect();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "(.{0,80}\n){0,40}") {
        analyse(&text, None);
        analyse(&text, Some(Format::Cuzk));
        analyse(&text, Some(Format::Jsonl));
    }

    #[test]
    fn random_timeline_lines_never_panic(lines in proptest::collection::vec(
        ("[0-9x.-]{0,7}", prop_oneof![Just("SYNTH_START"), Just("SYNTH_END"), Just("GPU_QUEUE"), Just("GPU_PICKUP"), Just("GPU_START"), Just("GPU_END"), Just("NOPE")],
         "[ab]", "(partition=[0-3x]|worker=[0-1]|gpu_ms=[0-9]{1,3}|monolithic|=|,){0,4}"),
        0..60)) {
        let text: String = lines.iter().map(|(t, e, j, d)| format!("TIMELINE,{t},{e},{j},{d}\n")).collect();
        analyse(&text, None);
    }

    #[test]
    fn mutated_sample_never_panics(muts in proptest::collection::vec(mutation(), 1..12)) {
        let mut lines: Vec<String> = SAMPLE.lines().map(str::to_string).collect();
        for m in &muts {
            apply(&mut lines, m);
        }
        let text = lines.join("\n") + "\n";
        analyse(&text, None);
    }

    #[test]
    fn mutated_jsonl_never_panics(muts in proptest::collection::vec(mutation(), 1..8)) {
        // The sample converted to our JSON lines, then mutated.
        let run = read_str(SAMPLE, None);
        let mut buf = Vec::new();
        timeline::write::jsonl::write_run(&mut buf, &run).unwrap();
        let mut lines: Vec<String> = String::from_utf8(buf).unwrap().lines().map(str::to_string).collect();
        for m in &muts {
            apply(&mut lines, m);
        }
        analyse(&(lines.join("\n") + "\n"), Some(Format::Jsonl));
    }

    #[test]
    fn garbage_timeline_lines_are_each_counted(positions in proptest::collection::vec(0usize..238, 0..20)) {
        // Insert lines that look like events but cannot be used: each is rejected once,
        // and the analysis of the rest is unchanged.
        let mut lines: Vec<String> = SAMPLE.lines().map(str::to_string).collect();
        for (k, p) in positions.iter().enumerate() {
            let bad = match k % 3 {
                0 => format!("TIMELINE,{k},WARP_DRIVE,job,partition=1"),
                1 => "TIMELINE,not-a-number,GPU_END,job,partition=1".to_string(),
                _ => format!("prefix TIMELINE,{k},GPU_END,nojob-{k},partition=zz"),
            };
            lines.insert(p % (lines.len() + 1), bad);
        }
        let s = analyse(&(lines.join("\n") + "\n"), None);
        prop_assert_eq!(s.diagnostics.lines_rejected, positions.len() as u64);
        prop_assert_eq!(s.proofs_completed, 3);
        prop_assert_eq!(s.utilization.devices[0].gpu_busy_ms, 120998.0);
    }
}

#[test]
fn shuffled_sample_gives_the_same_analysis() {
    // Lines arrive roughly but not strictly in time order: the reader sorts by offset.
    let mut lines: Vec<&str> = SAMPLE.lines().collect();
    lines.reverse();
    let reversed = lines.join("\n");
    let a = summarize(&read_str(SAMPLE, None), &AnalyzeOptions::default());
    let b = summarize(&read_str(&reversed, None), &AnalyzeOptions::default());
    assert_eq!(a.idle_gaps, b.idle_gaps);
    assert_eq!(a.utilization, b.utilization);
    assert_eq!(a.throughput, b.throughput);
    assert_eq!(a.cross_job_transitions, b.cross_job_transitions);
}

#[test]
fn killed_run_reports_open_spans() {
    // Cut the sample in the middle of job 2's GPU work.
    let cut: Vec<&str> = SAMPLE.lines().take_while(|l| !l.starts_with("TIMELINE,100433,")).collect();
    let s = analyse(&(cut.join("\n") + "\n"), None);
    assert!(s.diagnostics.open_spans > 0);
    assert_eq!(s.proofs_completed, 1);
    assert!(s.diagnostics.warnings.iter().any(|w| w.message.contains("open span")));
}

#[test]
fn long_error_messages_are_cut_at_a_character_boundary() {
    // Regression (found by the `read_jsonl` fuzz target): serde's message quotes the
    // unknown variant; a multi-byte character across byte 200 of it used to panic.
    for pad in 0..8 {
        let tag = format!("{}{}", "x".repeat(170 + pad), "é".repeat(40));
        let line = format!("{{\"type\":\"{tag}\"}}\n");
        let run = read_str(&line, Some(Format::Jsonl));
        assert_eq!(run.diagnostics.lines_rejected, 1);
        assert!(run.diagnostics.warnings[0].message.len() <= 250);
    }
}

/// Numbers at the edges: times near `u64::MAX`, huge offsets, many devices and workers,
/// NaN and infinities where a float goes. The readers reject what is out of range (by
/// line); the analyses and charts of whatever gets through, and of hand-built runs that
/// skip the readers, never panic.
fn extreme_u64() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..10_000, Just(u64::MAX), Just(u64::MAX - 1), Just(u64::MAX / 2), Just(timeline::event::MAX_TIME_NS), Just(timeline::event::MAX_TIME_NS + 1), any::<u64>()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn extreme_jsonl_numbers_never_panic(spans in proptest::collection::vec(
        (prop_oneof![Just("gpu"), Just("synthesis"), Just("ntt"), Just("finalize"), Just("h2d"), Just("x")], extreme_u64(), extreme_u64(), 0u32..3, prop_oneof![Just(0u32), Just(u32::MAX), any::<u32>()], any::<bool>()),
        0..24)) {
        let text: String = spans
            .iter()
            .map(|(k, a, b, j, d, open)| {
                let end = if *open { String::new() } else { format!(",\"end_ns\":{b}") };
                format!("{{\"type\":\"span\",\"kind\":\"{k}\",\"start_ns\":{a}{end},\"job\":\"j{j}\",\"partition\":{},\"worker\":{d},\"device\":{d}}}\n", j % 2)
            })
            .collect();
        let s = analyse(&text, Some(Format::Jsonl));
        for r in &s.partitions {
            if let Some(v) = r.synth_end_ms { prop_assert!(v <= timeline::event::MAX_TIME_NS as f64 / 1e6 + 1.0); }
        }
    }

    #[test]
    fn extreme_cuzk_offsets_never_panic(lines in proptest::collection::vec(
        (prop_oneof![Just("0".to_string()), Just("9300000000000".to_string()), Just("1e300".to_string()), Just("NaN".to_string()), Just("-5".to_string()), Just("315576000000".to_string()), (0u64..1_000_000).prop_map(|v| v.to_string())],
         prop_oneof![Just("SYNTH_START"), Just("SYNTH_END"), Just("GPU_START"), Just("GPU_END")], 0u32..3),
        0..30)) {
        let text: String = lines.iter().map(|(t, e, p)| format!("TIMELINE,{t},{e},a,partition={p},worker=0\n")).collect();
        analyse(&text, None);
    }

    #[test]
    fn hand_built_runs_at_the_edges_analyse_and_draw(spans in proptest::collection::vec((extreme_u64(), extreme_u64(), 0u32..200, any::<bool>()), 0..16)) {
        use timeline::event::{Run, RunMeta, Span, SpanKind};
        let mut run = Run::new(RunMeta::new("t"));
        for (i, (a, b, d, open)) in spans.iter().enumerate() {
            let (a, b) = ((*a).min(*b), (*a).max(*b));
            let kind = [SpanKind::Gpu, SpanKind::Synthesis, SpanKind::Ntt, SpanKind::Finalize][i % 4].clone();
            let mut s = Span::new(kind, a, b).job(format!("j{}", i % 3)).partition(i as u32 % 2).device(*d).worker(*d);
            if *open { s.end_ns = None; }
            run.spans.push(s);
        }
        run.normalize();
        let s = summarize(&run, &AnalyzeOptions::default());
        check_invariants(&s);
        let dir = tempfile::tempdir().unwrap();
        let marks = timeline::analysis::gaps::marks(&s.idle_gaps);
        let laid = timeline::lanes::LaidOut::new(&run);
        let _ = timeline::chart::waterfall_svg(&laid, &marks, &dir.path().join("w.svg"));
        let _ = timeline::chart::utilization_svg(&run, &dir.path().join("u.svg"));
        let _ = timeline::chart::phases_svg(&run, &dir.path().join("p.svg"));
        let _ = timeline::chart::gaps_svg(&marks, &dir.path().join("g.svg"));
        let _ = timeline::export::trace::write_trace(&laid, &dir.path().join("t.json"));
    }
}

/// A case the proptest above found (CI, 2026-12-04): gaps spanning a whole u64 clock on two
/// devices add up past u64 nanoseconds; the total was saturated and no longer the sum of its
/// causes.
#[test]
fn gaps_adding_up_past_u64_still_sum_to_their_total() {
    use timeline::event::{Run, RunMeta, Span, SpanKind};
    let spans: [(u64, u64, u32); 7] = [(0, 0, 0), (i64::MAX as u64, 0, 0), (i64::MAX as u64, i64::MAX as u64, 113), (0, 0, 0), (u64::MAX, u64::MAX, 0), (0, 1, 0), (0, 244, 113)];
    let mut run = Run::new(RunMeta::new("t"));
    for (i, (a, b, d)) in spans.iter().enumerate() {
        let (a, b) = ((*a).min(*b), (*a).max(*b));
        let kind = [SpanKind::Gpu, SpanKind::Synthesis, SpanKind::Ntt, SpanKind::Finalize][i % 4].clone();
        run.spans.push(Span::new(kind, a, b).job(format!("j{}", i % 3)).partition(i as u32 % 2).device(*d).worker(*d));
    }
    run.normalize();
    let s = summarize(&run, &AnalyzeOptions::default());
    assert!(s.idle_gap_totals.idle_total_ms > u64::MAX as f64 / 1e6, "{:?}", s.idle_gap_totals);
    check_invariants(&s);
}
