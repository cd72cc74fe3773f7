//! Analyzer speed: parse + every analysis (charts excluded) of a 1M-event cuzk log and of
//! a 1M-event JSON-lines log, both generated in memory by a deterministic model of a
//! Phase-8-like pipeline (6 synthesis workers, 2 GPU workers on one GPU; the JSON lines
//! also carry kernel, lock and CPU-phase spans). Target: under 1 s per 1M events on a
//! 2-core machine. Prints events/s for each stage, then hands over to criterion.
//!
//! Then the outputs that draw the run's lanes (issue 17: lanes once per analyze) on the
//! cuzk log: `trace.json`, `waterfall.svg`, `waterfall.png` and `report.html`, written as
//! `analyze` writes them, with one lane assignment shared by the four (`LaidOut`, what
//! `analyze` does) and, as the baseline in the same run, one assignment per output (what
//! `analyze` did before); and the assignment alone.
//!
//! `trace_json` / `trace_json_values`: trace.json alone, the lanes given, written as
//! `analyze` writes it and by the reference writer it replaced (each event a
//! `serde_json::Value`; the same bytes).
//!
//! `whole_command/*`: what a user waits for (issue 17) — the `proofscope` binary built with
//! this bench (`CARGO_BIN_EXE_proofscope`, so a process start and the read from a file are
//! in the figure) run on the same cuzk log written to a file, outputs included:
//! `analyze LOG -o DIR` (every output: summary.json, report.md, the Parquet tables, the
//! charts, report.html, trace.json), `--no-charts` (summary, report, tables) and
//! `--json --no-charts` (summary.json on stdout, sent to /dev/null; no file). Targets on a
//! 2-core machine: under 2 s per 1M events with the charts, under 1 s for
//! `--json --no-charts`. `examples/cuzk_bench_log.rs` writes the same log to a file for
//! timing the command by hand (`/usr/bin/time -v`).
//!
//! `PROOFSCOPE_BENCH_EVENTS=200000` changes the size.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::analysis::gaps::GapMark;
use timeline::event::{Counter, Run, RunMeta, Span, SpanKind};
use timeline::lanes::LaidOut;
use timeline::read::{read_str, Format};

#[path = "common/cuzk_log.rs"]
mod cuzk_log;
use cuzk_log::{cuzk_log, Model};

fn events() -> usize {
    std::env::var("PROOFSCOPE_BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

/// Our JSON lines with `n` records: 13 spans per partition (synthesis, queue, pickup,
/// gpu, prep_msm, lock_wait, lock_hold, ntt, msm_h, batch_add, tail_msm, b_g2_msm,
/// finalize) and a GPU-utilisation counter per partition... until `n` records.
fn jsonl_log(n: usize) -> String {
    const MS: u64 = 1_000_000;
    let mut run = Run::new(RunMeta::new("bench"));
    let mut m = Model::new();
    let per = 14;
    for i in 0..(n / per) as u64 {
        let job = format!("job-{}", i / 10);
        let p = (i % 10) as u32;
        let (s0, s1, q, pk, g0, g1, w) = m.partition(i);
        let w = w as u32;
        let sp = |k: SpanKind, a: u64, b: u64| Span::new(k, a * MS, b * MS).job(job.clone()).partition(p);
        run.spans.push(sp(SpanKind::Synthesis, s0, s1).worker((i % 6) as u32));
        run.spans.push(sp(SpanKind::GpuQueue, q, pk));
        run.spans.push(sp(SpanKind::GpuPickup, pk, g0).worker(w).device(0));
        run.spans.push(sp(SpanKind::Gpu, g0, g1).worker(w).device(0));
        let k0 = g0 + 1_300;
        run.spans.push(sp(SpanKind::PrepMsm, g0, k0).worker(w).device(0));
        run.spans.push(sp(SpanKind::LockWait, k0, k0 + 50).worker(w).device(0));
        run.spans.push(sp(SpanKind::LockHold, k0 + 50, k0 + 3_800).worker(w).device(0));
        run.spans.push(sp(SpanKind::Ntt, k0 + 50, k0 + 1_200).worker(w).device(0));
        run.spans.push(sp(SpanKind::MsmH, k0 + 1_200, k0 + 2_480).worker(w).device(0));
        run.spans.push(sp(SpanKind::BatchAdd, k0 + 2_480, k0 + 3_120).worker(w).device(0));
        run.spans.push(sp(SpanKind::TailMsm, k0 + 3_120, k0 + 3_245).worker(w).device(0));
        run.spans.push(sp(SpanKind::CpuMsmBG2, k0 + 3_800, k0 + 4_180).worker(w).device(0));
        run.spans.push(sp(SpanKind::Finalize, k0 + 4_180, g1).worker(w).device(0));
        run.counters.push(Counter { name: "gpu_util_pct".into(), t_ns: g0 * MS, value: 97.0, device: Some(0) });
    }
    let mut buf = Vec::with_capacity(n * 160);
    timeline::write::jsonl::write_run(&mut buf, &run).expect("in-memory write");
    String::from_utf8(buf).expect("utf8")
}

fn report(name: &str, text: &str, format: Format) {
    let t = Instant::now();
    let run = read_str(text, Some(format));
    let parse = t.elapsed();
    let t = Instant::now();
    let s = summarize(&run, &AnalyzeOptions::default());
    let analyse = t.elapsed();
    // A generated log that the reader splits into daemon runs would time something else.
    assert!(run.diagnostics.daemon_runs.len() <= 1, "{name}: read as {} daemon runs", run.diagnostics.daemon_runs.len());
    let events = run.diagnostics.event_lines as f64;
    let total = (parse + analyse).as_secs_f64();
    println!(
        "{name}: {} events ({} lines, {:.0} MB): parse {:.3} s, analyses {:.3} s, total {:.3} s → {:.2} M events/s; {} proofs, {:.2} s/proof, verdict {}",
        run.diagnostics.event_lines,
        run.diagnostics.lines_total,
        text.len() as f64 / 1e6,
        parse.as_secs_f64(),
        analyse.as_secs_f64(),
        total,
        events / total / 1e6,
        s.proofs_completed,
        s.steady_state_s_per_proof.unwrap_or(f64::NAN),
        s.binding_resource
    );
}

fn bench(c: &mut Criterion) {
    let n = events();
    let cuzk = cuzk_log(n);
    let jsonl = jsonl_log(n);
    report("cuzk", &cuzk, Format::Cuzk);
    report("jsonl", &jsonl, Format::Jsonl);

    let mut g = c.benchmark_group("analyze");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(15));
    for (name, text, fmt) in [("cuzk", &cuzk, Format::Cuzk), ("jsonl", &jsonl, Format::Jsonl)] {
        let events = read_str(text, Some(fmt)).diagnostics.event_lines;
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("{name}_parse_and_analyze"), |b| {
            b.iter(|| {
                let run = read_str(black_box(text), Some(fmt));
                black_box(summarize(&run, &AnalyzeOptions::default()))
            })
        });
    }
    g.finish();
    outputs(c, &cuzk);
    whole_command(c, &cuzk);
}

/// The whole command on the cuzk log written to a file (see the module doc): one timed run
/// of each configuration first, then criterion's.
fn whole_command(c: &mut Criterion, text: &str) {
    use std::process::{Command, Stdio};
    let bin = env!("CARGO_BIN_EXE_proofscope");
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("cuzk.log");
    std::fs::write(&log, text).expect("write the log");
    let out = dir.path().join("out");
    let (log, out) = (log.to_str().expect("utf-8 path"), out.to_str().expect("utf-8 path"));
    let configs: [(&str, Vec<&str>); 3] = [
        ("default", vec!["analyze", log, "-o", out]),
        ("no_charts", vec!["analyze", log, "-o", out, "--no-charts"]),
        ("json_no_charts", vec!["analyze", log, "--json", "--no-charts"]),
    ];
    let analyze = |args: &[&str]| {
        let st = Command::new(bin).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().expect("run proofscope");
        assert!(st.success(), "proofscope {}: {st}", args.join(" "));
    };
    let events = read_str(text, Some(Format::Cuzk)).diagnostics.event_lines;
    let mut steps = Vec::new();
    for (name, args) in &configs {
        let t = Instant::now();
        analyze(args);
        let s = t.elapsed().as_secs_f64();
        steps.push(format!("{name} {s:.3} s ({:.3} s per 1M events)", s / events as f64 * 1e6));
    }
    println!("whole command, {events} events ({:.0} MB log): {}", text.len() as f64 / 1e6, steps.join(", "));

    let mut g = c.benchmark_group("whole_command");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(30));
    g.throughput(Throughput::Elements(events));
    for (name, args) in &configs {
        g.bench_function(*name, |b| b.iter(|| analyze(args)));
    }
    g.finish();
}

/// The four outputs that draw lanes, as `analyze` writes them, each from its `LaidOut`.
fn draw(laid: [&LaidOut<'_>; 4], s: &Summary, marks: &[GapMark], dir: &std::path::Path) {
    timeline::export::trace::write_trace(laid[0], &dir.join("trace.json")).expect("trace");
    timeline::chart::waterfall_svg(laid[1], marks, &dir.join("waterfall.svg")).expect("svg");
    timeline::chart::waterfall_png(laid[2], marks, &dir.join("waterfall.png")).expect("png");
    let page = timeline::report::html::render(laid[3], s, &[]);
    std::fs::write(dir.join("report.html"), page).expect("html");
}

fn outputs(c: &mut Criterion, text: &str) {
    let run = read_str(text, Some(Format::Cuzk));
    let s = summarize(&run, &AnalyzeOptions::default());
    let marks = timeline::analysis::gaps::marks(&s.idle_gaps);
    let dir = tempfile::tempdir().expect("temp dir");
    // Once, each step timed, so that the criterion figures below can be read.
    let t = Instant::now();
    let lanes = timeline::lanes::assign(&run).len();
    let assign = t.elapsed().as_secs_f64();
    let laid = LaidOut::new(&run);
    laid.lanes();
    let mut steps = Vec::new();
    let mut time = |name: &str, f: &dyn Fn()| {
        let t = Instant::now();
        f();
        steps.push(format!("{name} {:.3} s", t.elapsed().as_secs_f64()));
    };
    let p = |f: &str| dir.path().join(f);
    time("trace.json", &|| timeline::export::trace::write_trace(&laid, &p("trace.json")).expect("trace"));
    time("trace.json by serde_json values (before)", &|| timeline::export::trace::write_trace_values(&laid, &p("trace.json")).expect("trace"));
    time("waterfall.svg", &|| timeline::chart::waterfall_svg(&laid, &marks, &p("waterfall.svg")).expect("svg"));
    time("waterfall.png", &|| timeline::chart::waterfall_png(&laid, &marks, &p("waterfall.png")).expect("png"));
    time("report.html", &|| std::fs::write(p("report.html"), timeline::report::html::render(&laid, &s, &[])).expect("html"));
    println!("outputs: {} spans on {lanes} lanes: lanes::assign {assign:.3} s; with the lanes given: {}", run.spans.len(), steps.join(", "));

    let mut g = c.benchmark_group("outputs");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(30));
    g.throughput(Throughput::Elements(run.diagnostics.event_lines));
    g.bench_function("lanes_assign", |b| b.iter(|| black_box(timeline::lanes::assign(black_box(&run)))));
    // trace.json alone, the lanes given: the writer (bytes written directly) against the
    // reference it replaced (each event a serde_json::Value), same bytes (issue 17).
    g.bench_function("trace_json", |b| b.iter(|| timeline::export::trace::write_trace(&laid, &p("trace.json")).expect("trace")));
    g.bench_function("trace_json_values", |b| b.iter(|| timeline::export::trace::write_trace_values(&laid, &p("trace.json")).expect("trace")));
    g.bench_function("drawn_lanes_once", |b| {
        b.iter(|| {
            let l = LaidOut::new(&run);
            draw([&l, &l, &l, &l], &s, &marks, dir.path())
        })
    });
    g.bench_function("drawn_lanes_per_output", |b| {
        b.iter(|| {
            let l = [LaidOut::new(&run), LaidOut::new(&run), LaidOut::new(&run), LaidOut::new(&run)];
            draw([&l[0], &l[1], &l[2], &l[3]], &s, &marks, dir.path())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
