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
//! `PROOFSCOPE_BENCH_EVENTS=200000` changes the size.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::analysis::gaps::GapMark;
use timeline::event::{Counter, Run, RunMeta, Span, SpanKind};
use timeline::lanes::LaidOut;
use timeline::read::{read_str, Format};

fn events() -> usize {
    std::env::var("PROOFSCOPE_BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

/// Times (ms) of partition `i` in the model: (synth start, synth end, queued, pickup, gpu start, gpu end).
struct Model {
    gpu_free: [u64; 2],
    last_start: u64,
}

impl Model {
    fn new() -> Self {
        Model { gpu_free: [0, 0], last_start: 0 }
    }
    fn partition(&mut self, i: u64) -> (u64, u64, u64, u64, u64, u64, usize) {
        let (round, w) = (i / 6, i % 6);
        let s0 = round * 30_000 + w * 7;
        let s1 = s0 + 29_000 + (i * 7919) % 2_000;
        let q = s1 + 1;
        let worker = if self.gpu_free[0] <= self.gpu_free[1] { 0 } else { 1 };
        // One lock around ~3.7 s of kernels: starts at least 3.7 s apart.
        let start = (q + 8).max(self.gpu_free[worker]).max(self.last_start + 3_700);
        let end = start + 7_300 + (i * 104_729) % 300;
        self.gpu_free[worker] = end + 5;
        self.last_start = start;
        (s0, s1, q, start - 3, start, end, worker)
    }
}

/// A cuzk daemon log with `n` TIMELINE events (6 per partition, 10 partitions per job)
/// and an ordinary log line every 10 partitions, in time order as a daemon writes them
/// (written partition by partition instead, a GPU end seconds after the next partition's
/// synthesis start reads as a daemon restart: the reader split the 1M-event log into one
/// daemon run per partition, 166 666, from 2026-12-01 until 2026-12-02).
fn cuzk_log(n: usize) -> String {
    let parts = n / 6;
    let mut lines: Vec<(u64, String)> = Vec::with_capacity(parts * 6 + parts / 10);
    let mut m = Model::new();
    for i in 0..parts as u64 {
        let job = format!("{:08x}-31db-6e32-d8dc-b35f94c662cd", i / 10);
        let p = i % 10;
        let (s0, s1, q, pk, g0, g1, w) = m.partition(i);
        lines.push((s0, format!("TIMELINE,{s0},SYNTH_START,{job},partition={p}")));
        lines.push((s1, format!("TIMELINE,{s1},SYNTH_END,{job},partition={p},synth_ms={}", s1 - s0)));
        lines.push((q, format!("TIMELINE,{q},GPU_QUEUE,{job},partition={p}")));
        if i % 10 == 0 {
            lines.push((q, format!("2026-11-30T05:00:00.000Z  INFO cuzk_core::engine: partition synthesis complete, pushing to GPU queue job_id={job}")));
        }
        lines.push((pk, format!("TIMELINE,{pk},GPU_PICKUP,{job},worker={w},partition={p}")));
        lines.push((g0, format!("TIMELINE,{g0},GPU_START,{job},worker={w},partition={p}")));
        lines.push((g1, format!("TIMELINE,{g1},GPU_END,{job},worker={w},partition={p},gpu_ms={}", g1 - g0)));
    }
    // Stable: lines of one moment keep their order (a start before its end).
    lines.sort_by_key(|l| l.0);
    let mut s = String::with_capacity(parts * 6 * 90);
    for (_, l) in lines {
        s.push_str(&l);
        s.push('\n');
    }
    s
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
