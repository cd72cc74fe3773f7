//! The analyses on constructed logs whose answers are computed by hand, and on the shared
//! `cuzk-sample.log` (expected values derived from its lines, independently of this code:
//! see the comments by each number).

use timeline::analysis::gaps::GapCause;
use timeline::analysis::{self, summarize, AnalyzeOptions};
use timeline::event::{counters, Counter, Run, RunMeta, Span, SpanKind};
use timeline::read::{read_str, Format};

const MS: u64 = 1_000_000;
const SAMPLE: &str = include_str!("../assets/cuzk-sample.log");

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-6 * b.abs().max(1.0), "{a} != {b}");
}

fn run_of(spans: Vec<Span>) -> Run {
    let mut r = Run::new(RunMeta::new("test"));
    r.spans = spans;
    r.normalize();
    r
}

fn gpu(job: &str, p: u32, w: u32, s: u64, e: u64) -> Span {
    Span::new(SpanKind::Gpu, s * MS, e * MS).job(job).partition(p).worker(w).device(0)
}

fn queue(job: &str, p: u32, s: u64, e: u64) -> Span {
    Span::new(SpanKind::GpuQueue, s * MS, e * MS).job(job).partition(p)
}

#[test]
fn two_seamless_workers_are_fully_busy() {
    let run = run_of(vec![queue("a", 0, 0, 0), queue("a", 1, 0, 10), gpu("a", 0, 0, 0, 10), gpu("a", 1, 1, 10, 20)]);
    let u = analysis::utilization::analyze(&run);
    assert_eq!(u.devices.len(), 1);
    let d = &u.devices[0];
    assert_eq!((d.window_ms, d.gpu_busy_ms, d.gpu_utilization), (20.0, 20.0, 1.0));
    assert_eq!(u.gpu_utilization, Some(1.0));
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions { min_gap_ms: 0.0, ..Default::default() });
    assert!(g.gaps.is_empty(), "{:?}", g.gaps);
    assert_eq!(g.totals.idle_in_window_ms, 0.0);
}

#[test]
fn overlapping_workers_are_100_not_200_percent() {
    let run = run_of(vec![gpu("a", 0, 0, 0, 10), gpu("a", 1, 1, 5, 15)]);
    let d = &analysis::utilization::analyze(&run).devices[0];
    assert_eq!(d.gpu_busy_ms, 15.0);
    assert_eq!(d.gpu_utilization, 1.0);
    assert_eq!(d.gpu_span_sum_ms, 20.0);
    assert_eq!(d.workers, 2);
}

/// One synthesis worker at 100 ms per partition feeding a GPU that needs 10 ms: the GPU
/// waits for synthesis after each partition.
const STARVED: &str = "\
TIMELINE,0,SYNTH_START,a,partition=0
TIMELINE,100,SYNTH_END,a,partition=0,synth_ms=100
TIMELINE,100,GPU_QUEUE,a,partition=0
TIMELINE,100,SYNTH_START,a,partition=1
TIMELINE,100,GPU_PICKUP,a,worker=0,partition=0
TIMELINE,100,GPU_START,a,worker=0,partition=0
TIMELINE,110,GPU_END,a,worker=0,partition=0,gpu_ms=10
TIMELINE,200,SYNTH_END,a,partition=1,synth_ms=100
TIMELINE,200,GPU_QUEUE,a,partition=1
TIMELINE,200,SYNTH_START,a,partition=2
TIMELINE,200,GPU_PICKUP,a,worker=0,partition=1
TIMELINE,200,GPU_START,a,worker=0,partition=1
TIMELINE,210,GPU_END,a,worker=0,partition=1,gpu_ms=10
TIMELINE,300,SYNTH_END,a,partition=2,synth_ms=100
TIMELINE,300,GPU_QUEUE,a,partition=2
TIMELINE,300,GPU_PICKUP,a,worker=0,partition=2
TIMELINE,300,GPU_START,a,worker=0,partition=2
TIMELINE,310,GPU_END,a,worker=0,partition=2,gpu_ms=10
";

#[test]
fn starved_pipeline_gaps_are_synthesis_and_cold_start() {
    let run = read_str(STARVED, Some(Format::Cuzk));
    assert_eq!(run.diagnostics.lines_rejected, 0);
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions::default());
    type Row = (f64, f64, GapCause, Option<u32>, Option<u32>);
    let got: Vec<Row> =
        g.gaps.iter().map(|x| (x.start_ms, x.duration_ms, x.cause, x.before_partition, x.after_partition)).collect();
    assert_eq!(
        got,
        vec![
            (0.0, 100.0, GapCause::ColdStart, None, Some(0)),
            (110.0, 90.0, GapCause::SynthesisStarved, Some(0), Some(1)),
            (210.0, 90.0, GapCause::SynthesisStarved, Some(1), Some(2)),
        ]
    );
    assert_eq!(g.totals.total_ms(GapCause::SynthesisStarved), 180.0);
    assert_eq!(g.totals.total_ms(GapCause::ColdStart), 100.0);
    assert_eq!(g.totals.idle_in_window_ms, 180.0);
    assert_eq!(g.totals.devices[0].leading_idle_ms, 100.0);
    let u = analysis::utilization::analyze(&run);
    close(u.devices[0].gpu_utilization, 30.0 / 210.0);
    // The verdict: synthesis floor 3 × 100 ms ÷ 1 worker = 0.3 s/proof vs GPU floor
    // 3 × 10 ms = 0.03 s; one proof took 0.31 s overall.
    let s = summarize(&run, &AnalyzeOptions::default());
    assert_eq!(s.binding_resource, "synthesis", "{}", s.verdict.headline);
    close(s.verdict.floors.synthesis_floor_s_per_proof.unwrap(), 0.3);
    close(s.verdict.floors.gpu_floor_s_per_proof.unwrap(), 0.03);
    assert_eq!(s.verdict.floors.serial_gpu_source.as_deref(), Some("gpu_span_median"));
    close(s.total_s_per_proof.unwrap(), 0.31);
    assert_eq!(s.steady_state_s_per_proof, None);
}

#[test]
fn threshold_hides_short_gaps_but_counts_them() {
    let run = read_str(STARVED, Some(Format::Cuzk));
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions { min_gap_ms: 95.0, ..Default::default() });
    assert_eq!(g.gaps.len(), 1);
    assert_eq!(g.gaps[0].cause, GapCause::ColdStart);
    assert_eq!(g.totals.below_threshold_count, 2);
    assert_eq!(g.totals.below_threshold_ms, 180.0);
    assert_eq!(g.totals.idle_in_window_ms, 0.0);
    assert_eq!(g.totals.devices[0].idle_in_window_ms, 180.0);
}

#[test]
fn cold_start_only_when_nothing_was_queued() {
    // p0 is queued at 0 but the GPU starts only at 50: that wait is dispatch, not a cold
    // start. p1 is queued at 55 (while p0 runs) and picked up at 90 after p0 ended at 60.
    let run = run_of(vec![
        Span::new(SpanKind::Synthesis, 0, 0).job("a").partition(0),
        queue("a", 0, 0, 50),
        gpu("a", 0, 0, 50, 60),
        queue("a", 1, 55, 90),
        gpu("a", 1, 0, 90, 100),
    ]);
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions::default());
    let causes: Vec<_> = g.gaps.iter().map(|x| (x.start_ms, x.duration_ms, x.cause)).collect();
    assert_eq!(causes, vec![(0.0, 50.0, GapCause::Dispatch), (60.0, 30.0, GapCause::Dispatch)]);

    // Queued only at 20: [0, 20) had nothing queued. The leading gap starts at the run's
    // first event (the synthesis start at 0) and is a cold start.
    let run = run_of(vec![
        Span::new(SpanKind::Synthesis, 0, 20 * MS).job("a").partition(0),
        queue("a", 0, 20, 20),
        gpu("a", 0, 0, 20, 30),
    ]);
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions::default());
    assert_eq!(g.gaps.len(), 1);
    assert_eq!((g.gaps[0].start_ms, g.gaps[0].duration_ms, g.gaps[0].cause), (0.0, 20.0, GapCause::ColdStart));
    assert!(g.gaps[0].leading);
}

fn k(kind: SpanKind, job_p: u32, w: u32, s: u64, e: u64) -> Span {
    Span::new(kind, s * MS, e * MS).job("a").partition(job_p).worker(w).device(0)
}

#[test]
fn a_copy_counts_only_its_device_time_and_its_host_fill_is_cpu_prep() {
    // One partition: gpu 0-100; an upload 0-50 whose copy took 10 ms of device time and
    // whose hand-over after the copy took 5 (host fill 0-35, copy 35-45, hand-over 45-50);
    // then msm_h 50-90. Device work: 35-45 and 50-90 (not 0-50): the gap 0-35 is the
    // copy's host fill (cpu_prep), 45-50 its hand-over.
    let h2d = k(SpanKind::H2d, 0, 0, 0, 50).arg("gpu_ns", 10 * MS).arg("finish_ns", 5 * MS).arg("fill_ns", 30 * MS);
    assert_eq!(h2d.device_interval(), Some((35 * MS, 45 * MS)));
    // A copy without gpu_ns (a cuzk log, the simulator) counts whole; so does a kernel.
    assert_eq!(k(SpanKind::H2d, 0, 0, 0, 50).device_interval(), Some((0, 50 * MS)));
    assert_eq!(k(SpanKind::MsmH, 0, 0, 0, 50).arg("gpu_ns", 10 * MS).device_interval(), Some((0, 50 * MS)));
    // gpu_ns longer than the span (clock skew): clamped to the span.
    assert_eq!(k(SpanKind::D2h, 0, 0, 10, 20).arg("gpu_ns", 50 * MS).device_interval(), Some((10 * MS, 20 * MS)));
    let run = run_of(vec![queue("a", 0, 0, 0), k(SpanKind::Gpu, 0, 0, 0, 100), h2d, k(SpanKind::MsmH, 0, 0, 50, 90)]);
    let u = analysis::utilization::analyze(&run);
    close(u.devices[0].kernel_utilization.unwrap(), 50.0 / 100.0);
    let t = analysis::tables::analyze(&run);
    assert_eq!(t.partitions[0].kernel_ms, Some(50.0));
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions::default());
    let got: Vec<_> = g.gaps.iter().map(|x| (x.start_ms, x.duration_ms, x.cause)).collect();
    assert_eq!(got, vec![(0.0, 35.0, GapCause::CpuPrep), (45.0, 5.0, GapCause::CpuPrep)]);
}

#[test]
fn the_parameter_upload_is_not_a_partitions_kernel_time() {
    // Two partitions of 40 ms of kernels each; the first also uploads the parameters (1000 ms,
    // once per parameter set). The device was busy for it, but the GPU floor per partition is
    // 40 ms, not (1040 + 40) / 2.
    let params = k(SpanKind::H2d, 0, 0, 0, 1000).arg("what", "params").arg("gpu_ns", 1000 * MS);
    assert!(params.is_setup_work());
    assert!(!k(SpanKind::H2d, 0, 0, 0, 10).arg("what", "abc").is_setup_work());
    assert!(k(SpanKind::Setup, 0, 0, 0, 10).is_setup_work() && !SpanKind::Setup.is_device_work());
    let run = run_of(vec![
        queue("a", 0, 0, 0),
        queue("a", 1, 0, 0),
        k(SpanKind::Gpu, 0, 0, 0, 1040),
        params,
        k(SpanKind::MsmH, 0, 0, 1000, 1040),
        k(SpanKind::Gpu, 1, 0, 1040, 1080),
        k(SpanKind::MsmH, 1, 0, 1040, 1080),
    ]);
    let t = analysis::tables::analyze(&run);
    assert_eq!(t.partitions.iter().map(|r| r.kernel_ms).collect::<Vec<_>>(), vec![Some(40.0), Some(40.0)]);
    let s = summarize(&run, &AnalyzeOptions::default());
    close(s.verdict.floors.serial_gpu_ms_per_partition.unwrap(), 40.0);
    // Utilisation still counts the upload: the device was busy.
    close(analysis::utilization::analyze(&run).devices[0].kernel_utilization.unwrap(), 1.0);
}

#[test]
fn copies_that_overlap_another_partitions_kernels_are_named_beside_the_gpu_floor() {
    // Two workers, two partitions: each uploads 30 ms (h2d, device time the whole span)
    // while the other's 60 ms kernel holds the device (p0: h2d 0-30, msm_h 30-90; p1: h2d
    // 30-60, msm_h 90-150). The GPU floor counts 90 ms a partition (copy + kernel); the
    // compute kernels alone are 60: the copies' 30 ms ran under the other's kernel.
    let spans = |workers: [u32; 2]| {
        vec![
            queue("a", 0, 0, 0),
            queue("a", 1, 0, 0),
            k(SpanKind::Gpu, 0, workers[0], 0, 90),
            k(SpanKind::H2d, 0, workers[0], 0, 30),
            k(SpanKind::MsmH, 0, workers[0], 30, 90),
            k(SpanKind::Gpu, 1, workers[1], 30, 150),
            k(SpanKind::H2d, 1, workers[1], 30, 60),
            k(SpanKind::MsmH, 1, workers[1], 90, 150),
        ]
    };
    let s = summarize(&run_of(spans([0, 1])), &AnalyzeOptions::default());
    close(s.verdict.floors.serial_gpu_ms_per_partition.unwrap(), 90.0);
    let line = s.verdict.evidence.iter().find(|e| e.contains("copies outside its kernels")).expect("the copies' line");
    assert!(line.starts_with("of that floor's 90 ms a partition, 30 ms are its copies") && line.contains("compute kernels alone take 60 ms"), "{line}");
    // One worker: its copies cannot overlap its own kernels' partner, no line.
    let one = summarize(&run_of(spans([0, 0])), &AnalyzeOptions::default());
    assert!(!one.verdict.evidence.iter().any(|e| e.contains("copies outside its kernels")), "{:?}", one.verdict.evidence);
}

#[test]
fn kernel_level_gaps_blame_lock_and_cpu_prep() {
    // Three partitions on two workers of one GPU, with kernel spans (hand-made):
    //   p0 (w0): gpu 0-100, prep 0-20, lock_hold 20-70, msm_h 20-60, finalize 60-100
    //   p1 (w1): gpu 5-160, prep 5-25, lock_wait 25-70, lock_hold 70-120, ntt 70-110,
    //            b_g2_msm 110-130
    //   p2 (w0): gpu 100-200, prep 100-140, ntt 140-180
    // All queued at 0; p0 picked at 0, p1 at 5, p2 at 100.
    // Kernel busy: 20-60, 70-110, 140-180 → gaps 0-20 (prep of p0: cpu_prep),
    // 60-70 (w1 waits for the lock w0 holds: lock; finalize ties, lock wins), 110-140
    // (lock 110-120 = 10 ms vs CPU 110-140 = 30 ms: cpu_prep).
    let run = run_of(vec![
        queue("a", 0, 0, 0),
        queue("a", 1, 0, 5),
        queue("a", 2, 0, 100),
        k(SpanKind::Gpu, 0, 0, 0, 100),
        k(SpanKind::PrepMsm, 0, 0, 0, 20),
        k(SpanKind::LockHold, 0, 0, 20, 70),
        k(SpanKind::MsmH, 0, 0, 20, 60),
        k(SpanKind::Finalize, 0, 0, 60, 100),
        k(SpanKind::Gpu, 1, 1, 5, 160),
        k(SpanKind::PrepMsm, 1, 1, 5, 25),
        k(SpanKind::LockWait, 1, 1, 25, 70),
        k(SpanKind::LockHold, 1, 1, 70, 120),
        k(SpanKind::Ntt, 1, 1, 70, 110),
        k(SpanKind::CpuMsmBG2, 1, 1, 110, 130),
        k(SpanKind::Gpu, 2, 0, 100, 200),
        k(SpanKind::PrepMsm, 2, 0, 100, 140),
        k(SpanKind::Ntt, 2, 0, 140, 180),
    ]);
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions::default());
    assert_eq!(g.totals.devices[0].level, "kernel");
    let got: Vec<_> = g.gaps.iter().map(|x| (x.start_ms, x.duration_ms, x.cause)).collect();
    assert_eq!(got, vec![(0.0, 20.0, GapCause::CpuPrep), (60.0, 10.0, GapCause::Lock), (110.0, 30.0, GapCause::CpuPrep)]);
    let u = analysis::utilization::analyze(&run);
    assert_eq!(u.devices[0].gpu_utilization, 1.0);
    close(u.devices[0].kernel_utilization.unwrap(), 120.0 / 200.0);
    let t = analysis::tables::analyze(&run);
    let kern: Vec<_> = t.partitions.iter().map(|r| r.kernel_ms).collect();
    assert_eq!(kern, vec![Some(40.0), Some(40.0), Some(40.0)]);
    assert_eq!(t.partitions[1].lock_wait_ms, Some(45.0));
    // Serial GPU time from the kernel spans: 40 ms per partition.
    let s = summarize(&run, &AnalyzeOptions::default());
    assert_eq!(s.verdict.floors.serial_gpu_source.as_deref(), Some("kernel_spans"));
    close(s.verdict.floors.serial_gpu_ms_per_partition.unwrap(), 40.0);
    // CPU side per partition: (20 + 40 + 20 + 20 + 40) ms / 3 partitions.
    close(s.verdict.floors.cpu_side_ms_per_partition.unwrap(), 140.0 / 3.0);
}

#[test]
fn transition_table_by_hand() {
    // A: A0 w0 0-100, A1 w1 50-150, A2 w0 100-200; B: B0 w1 160-260 (queued 155),
    // B1 w0 200-300; C: C0 w1 240-340.
    let run = run_of(vec![
        gpu("A", 0, 0, 0, 100),
        gpu("A", 1, 1, 50, 150),
        gpu("A", 2, 0, 100, 200),
        queue("B", 0, 155, 160),
        gpu("B", 0, 1, 160, 260),
        gpu("B", 1, 0, 200, 300),
        queue("C", 0, 230, 240),
        gpu("C", 0, 1, 240, 340),
    ]);
    let t = analysis::transitions::analyze(&run);
    let got: Vec<_> = t
        .iter()
        .map(|x| (x.from_job.as_str(), x.to_job.as_str(), x.from_second_to_last_gpu_end_ms, x.to_first_gpu_start_ms, x.gap_ms, x.overlap_ms, x.cause))
        .collect();
    assert_eq!(
        got,
        vec![
            // A's ends 100, 150, 200: second-to-last 150 → B0 at 160: +10 ms; A2 (100-200)
            // and B0 (160-260) overlap 40 ms; B0 was queued at 155 > 150: starved.
            ("A", "B", Some(150.0), 160.0, 10.0, 40.0, Some(GapCause::SynthesisStarved)),
            // B's ends 260, 300: second-to-last 260 → C0 at 240: −20 ms (early);
            // B1 (200-300) and C0 (240-340) overlap 60 ms.
            ("B", "C", Some(260.0), 240.0, -20.0, 60.0, None),
        ]
    );
}

#[test]
fn open_spans_are_reported_not_busy_and_jobs_stay_incomplete() {
    let log = "\
TIMELINE,0,SYNTH_START,a,partition=0
TIMELINE,10,SYNTH_END,a,partition=0
TIMELINE,10,GPU_QUEUE,a,partition=0
TIMELINE,10,GPU_PICKUP,a,worker=0,partition=0
TIMELINE,10,GPU_START,a,worker=0,partition=0
TIMELINE,20,GPU_END,a,worker=0,partition=0
TIMELINE,20,SYNTH_START,b,partition=0
TIMELINE,30,SYNTH_END,b,partition=0
TIMELINE,30,GPU_QUEUE,b,partition=0
TIMELINE,30,GPU_PICKUP,b,worker=0,partition=0
TIMELINE,30,GPU_START,b,worker=0,partition=0
";
    let run = read_str(log, None);
    assert_eq!(run.diagnostics.open_spans, 1);
    let s = summarize(&run, &AnalyzeOptions::default());
    assert_eq!(s.utilization.devices[0].open_gpu_spans, 1);
    assert_eq!(s.utilization.devices[0].gpu_busy_ms, 10.0);
    assert_eq!(s.proofs_completed, 1);
    assert_eq!(s.throughput.incomplete_jobs, 1);
    assert!(!s.jobs[1].complete);
    assert_eq!(s.jobs[1].completed_ms, None);
    assert!(s.partitions[1].open);
    assert_eq!(s.partitions[1].gpu_wall_ms, None);
    assert_eq!(s.run.open_spans, 1);
}

#[test]
fn empty_and_garbage_runs_summarize() {
    for text in ["", "\n\n", "hello\nworld\n", "TIMELINE,x,y,z\n", "{\"type\":\"span\"}\n"] {
        let run = read_str(text, None);
        let s = summarize(&run, &AnalyzeOptions::default());
        assert_eq!(s.proofs_completed, 0);
        assert_eq!(s.binding_resource, "unknown");
        assert!(s.idle_gaps.is_empty());
        let md = timeline::report::render(&s, &[]);
        assert!(md.contains("## Verdict"));
        let json = serde_json::to_string(&s).unwrap();
        let back: analysis::Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(back.binding_resource, "unknown");
    }
}

// ---- The shared sample log -------------------------------------------------------------
// Expected values derived by reading the log's 180 TIMELINE lines (an independent Python
// pass over the lines, not this crate): 3 jobs × 10 partitions, 2 GPU workers, 1 device.

fn sample() -> analysis::Summary {
    let run = read_str(SAMPLE, None);
    summarize(&run, &AnalyzeOptions::default())
}

#[test]
fn sample_reader_counts() {
    let s = sample();
    let d = &s.diagnostics;
    assert_eq!(d.format, "cuzk");
    assert_eq!((d.lines_total, d.event_lines, d.lines_ignored, d.lines_rejected, d.open_spans), (238, 180, 58, 0, 0));
    // 30 partitions × 4 spans (synthesis, gpu_queue, gpu_pickup, gpu).
    assert_eq!(s.run.spans, 120);
    assert_eq!(s.run.jobs, 3);
    assert_eq!(s.run.devices, vec![0]);
}

#[test]
fn sample_throughput() {
    let s = sample();
    // Last GPU_END of each job: 74643, 129249, 169928 ms; first SYNTH_START: 0, 30578, 88346.
    assert_eq!(s.proofs_completed, 3);
    close(s.total_s_per_proof.unwrap(), 169.928 / 3.0);
    close(s.steady_state_s_per_proof.unwrap(), (169.928 - 74.643) / 2.0);
    let lat: Vec<f64> = s.jobs.iter().map(|j| j.latency_s.unwrap()).collect();
    close(lat[0], 74.643);
    close(lat[1], 98.671);
    close(lat[2], 81.582);
    assert_eq!(s.jobs[0].job, "e88b7591-31db-6e32-d8dc-b35f94c662cd");
    assert!(s.jobs.iter().all(|j| j.complete && j.partitions == 10 && j.gpu_partitions == 10));
}

#[test]
fn sample_utilization_is_the_union() {
    let s = sample();
    let d = &s.utilization.devices[0];
    // First GPU_START 29152, last GPU_END 169928; union of the 30 GPU calls 120998 ms;
    // their plain sum 216883 ms (two workers overlap).
    assert_eq!(d.window_start_ms, 29152.0);
    assert_eq!(d.window_end_ms, 169928.0);
    assert_eq!(d.gpu_busy_ms, 120998.0);
    assert_eq!(d.gpu_span_sum_ms, 216883.0);
    close(d.gpu_utilization, 120998.0 / 140776.0);
    assert_eq!(d.workers, 2);
    assert_eq!(d.kernel_utilization, None);
}

#[test]
fn sample_gaps_are_a_cold_start_then_synthesis_starvation() {
    let s = sample();
    let got: Vec<(f64, f64, GapCause)> = s.idle_gaps.iter().map(|g| (g.start_ms, g.end_ms, g.cause)).collect();
    // Holes in the union of GPU calls; the partition after each was queued at 57850,
    // 87329, 116162 and 145801 ms — after each gap began.
    assert_eq!(
        got,
        vec![
            (0.0, 29152.0, GapCause::ColdStart),
            (53349.0, 57862.0, GapCause::SynthesisStarved),
            (82041.0, 87349.0, GapCause::SynthesisStarved),
            (111582.0, 116170.0, GapCause::SynthesisStarved),
            (140447.0, 145816.0, GapCause::SynthesisStarved),
        ]
    );
    assert_eq!(s.idle_gaps[1].after_partition, Some(6));
    assert_eq!(s.idle_gaps[1].before_partition, Some(5));
    assert_eq!(s.idle_gaps[1].after_queued_ms, Some(57850.0));
    close(s.idle_gap_totals.idle_in_window_ms, 4513.0 + 5308.0 + 4588.0 + 5369.0);
    close(s.idle_gap_totals.idle_in_window_ms, 140776.0 - 120998.0);
}

#[test]
fn sample_transitions() {
    let s = sample();
    let t = &s.cross_job_transitions;
    assert_eq!(t.len(), 2);
    // Job 1 ends …70988, 74643; job 2 starts 71007 (p0, 71007-78380); job 1's last
    // partition p9 ran 67257-74643.
    assert_eq!(t[0].from_second_to_last_gpu_end_ms, Some(70988.0));
    assert_eq!((t[0].to_first_gpu_start_ms, t[0].gap_ms, t[0].overlap_ms), (71007.0, 19.0, 74643.0 - 71007.0));
    // Job 2 ends …121824, 129249; job 3 starts 118912 (p0, 118912-125502): early by
    // 2912 ms; job 2's last partition p9 ran 121831-129249.
    assert_eq!(t[1].from_second_to_last_gpu_end_ms, Some(121824.0));
    assert_eq!((t[1].to_first_gpu_start_ms, t[1].gap_ms, t[1].overlap_ms), (118912.0, -2912.0, 125502.0 - 121831.0));
    assert_eq!(t[1].cause, None);
}

#[test]
fn sample_phases() {
    let s = sample();
    let g = s.phases.kind("gpu").unwrap();
    // 30 GPU calls: min 5642, max 9342, median (7380 + 7385) / 2, total 216883 ms.
    assert_eq!((g.count, g.min_ms, g.max_ms, g.total_ms), (30, 5642.0, 9342.0, 216883.0));
    assert_eq!(g.p50_ms, 7383.5);
    close(g.mean_ms, 216883.0 / 30.0);
    let sy = s.phases.kind("synthesis").unwrap();
    // 30 syntheses totalling 893318 ms (mean 29777.27), median 29698.
    assert_eq!(sy.count, 30);
    close(sy.total_ms, 893318.0);
    assert_eq!(sy.p50_ms, 29698.0);
    close(s.phases.wall_ms, 169928.0);
    close(sy.share_of_wall, 893318.0 / 169928.0);
}

#[test]
fn sample_verdict_is_synthesis_bound() {
    let s = sample();
    let f = &s.verdict.floors;
    // Six syntheses run at once (p0-p5 of job 1 all start at 0).
    assert_eq!(f.synthesis_workers, Some(6));
    assert_eq!(f.partitions_per_proof, Some(10.0));
    assert_eq!(f.gpus, 1);
    assert_eq!(f.gpu_workers_per_device, Some(2));
    // 25 back-to-back GPU_END intervals, median 3718 ms (the lock-serialised kernels).
    assert_eq!(f.serial_gpu_source.as_deref(), Some("gpu_end_cadence"));
    assert_eq!(f.serial_gpu_ms_per_partition, Some(3718.0));
    close(f.gpu_floor_s_per_proof.unwrap(), 37.18);
    close(f.synthesis_floor_s_per_proof.unwrap(), 893318.0 / 30.0 * 10.0 / 6.0 / 1e3);
    assert_eq!(f.cpu_floor_s_per_proof, None);
    // Steady state 47.64 s/proof is within 10 % of the 49.6 s synthesis floor.
    assert_eq!(s.binding_resource, "synthesis", "{}", s.verdict.headline);
    assert!(s.verdict.headline.starts_with("synthesis-bound"), "{}", s.verdict.headline);
}

#[test]
fn summary_json_has_units_in_names_and_round_trips() {
    let s = sample();
    let v = serde_json::to_value(&s).unwrap();
    for key in ["schema_version", "steady_state_s_per_proof", "total_s_per_proof", "gpu_utilization", "idle_gaps", "cross_job_transitions", "verdict", "phases", "partitions", "jobs"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let gap = &v["idle_gaps"][1];
    for key in ["start_ms", "duration_ms", "cause"] {
        assert!(gap.get(key).is_some(), "gap lacks {key}");
    }
    assert_eq!(gap["cause"], "synthesis_starved");
    let tr = &v["cross_job_transitions"][0];
    assert!(tr.get("gap_ms").is_some() && tr.get("overlap_ms").is_some());
    let back: analysis::Summary = serde_json::from_value(v).unwrap();
    assert_eq!(back, s);
}

#[test]
fn report_sections_come_in_order() {
    let mut s = sample();
    s.input = Some("cuzk-sample.log".into());
    let charts: Vec<_> = timeline::report::STANDARD_CHARTS.iter().map(|(a, b, c)| timeline::report::ChartRef::new(a, b, c)).collect();
    let md = timeline::report::render(&s, &charts);
    let pos = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("report lacks {needle}:\n{md}"));
    let order = [
        "# proofscope report — cuzk-sample.log",
        "## Verdict: synthesis",
        "(waterfall.svg)",
        "## Throughput",
        "## GPU utilisation",
        "(utilization.svg)",
        "## Idle gaps by cause",
        "(gaps.svg)",
        "## Cross-proof transitions",
        "## Phase statistics",
        "(phases.svg)",
        "## Reader warnings",
    ];
    for w in order.windows(2) {
        assert!(pos(w[0]) < pos(w[1]), "{} should come before {}", w[0], w[1]);
    }
    assert!(md.contains("| synthesis_starved |"));
}

#[test]
fn compare_two_runs() {
    let base = sample();
    let mut faster = base.clone();
    faster.steady_state_s_per_proof = Some(base.steady_state_s_per_proof.unwrap() / 2.0);
    let c = analysis::compare::compare(&[("base".into(), base.clone()), ("2x".into(), faster), ("same".into(), base)]);
    assert_eq!(c.rows.len(), 3);
    assert_eq!(c.rows[0].speedup_vs_baseline, Some(1.0));
    assert_eq!(c.rows[0].speedup_vs_previous, None);
    close(c.rows[1].speedup_vs_baseline.unwrap(), 2.0);
    close(c.rows[2].speedup_vs_previous.unwrap(), 0.5);
    assert!(c.phase_kinds.contains(&"gpu".to_string()));
    let md = c.to_markdown();
    assert!(md.contains("| 2x | 3 | 23.82 |"), "{md}");
    assert!(md.contains("2.00×"));
    // No run sampled the host: no host column.
    assert!(!md.contains("host: other / steal"), "{md}");
}

#[test]
fn compare_shows_the_host_where_a_run_sampled_it() {
    let base = sample();
    let mut noisy = base.clone();
    noisy.host = Some(analysis::host::HostLoad { samples: 9, other_cores_mean: Some(1.5), steal_cores_mean: Some(0.75), ..Default::default() });
    let c = analysis::compare::compare(&[("cuzk".into(), base), ("noisy".into(), noisy)]);
    assert_eq!((c.rows[1].host_other_cores, c.rows[1].host_steal_cores), (Some(1.5), Some(0.75)));
    let md = c.to_markdown();
    assert!(md.lines().next().unwrap().ends_with("| host: other / steal cores |"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| noisy |") && l.ends_with("| 1.50 / 0.75 |")), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| cuzk |") && l.ends_with("| — / — |")), "{md}");
}

#[cfg(feature = "analysis")]
#[test]
fn partition_and_job_tables_round_trip_through_parquet() {
    use polars::prelude::*;
    let s = sample();
    let dir = tempfile::tempdir().unwrap();
    let run = timeline::read::read_str(SAMPLE, None);
    let keys = timeline::export::keys::RunKeys::new(&run, &s, "sample");
    let paths = timeline::export::tables::write_run_tables(&run, &s, &keys, dir.path()).unwrap();
    let (pp, jp) = (paths[2].clone(), paths[3].clone());
    let read = |p: &std::path::Path| ParquetReader::new(std::fs::File::open(p).unwrap()).finish().unwrap();
    let df = read(&pp);
    assert_eq!(df.height(), 30);
    let job = df.column("job").unwrap().str().unwrap();
    let part = df.column("partition").unwrap().u32().unwrap();
    let gpu_start = df.column("gpu_start_ms").unwrap().f64().unwrap();
    let wall = df.column("gpu_wall_ms").unwrap().f64().unwrap();
    let kernel = df.column("kernel_ms").unwrap().f64().unwrap();
    for (i, r) in s.partitions.iter().enumerate() {
        assert_eq!(job.get(i), Some(r.job.as_str()));
        assert_eq!(part.get(i), r.partition);
        assert_eq!(gpu_start.get(i), r.gpu_start_ms);
        assert_eq!(wall.get(i), r.gpu_wall_ms);
    }
    assert_eq!(kernel.null_count(), 30);
    let df = read(&jp);
    assert_eq!(df.height(), 3);
    let lat = df.column("latency_s").unwrap().f64().unwrap();
    close(lat.get(1).unwrap(), 98.671);
    assert!(df.column("complete").unwrap().bool().unwrap().all());
}

#[test]
fn back_to_back_gpu_is_gpu_bound() {
    // One worker, GPU calls of 10 ms back to back, synthesis long done: 2 jobs × 4
    // partitions, completions at 50 and 90 ms → 40 ms/proof = 4 × 10 ms ÷ 1 GPU.
    let mut spans = Vec::new();
    for (j, job) in ["a", "b"].iter().enumerate() {
        for p in 0..4u32 {
            let start = 10 + (j as u64 * 4 + p as u64) * 10;
            spans.push(Span::new(SpanKind::Synthesis, 0, 5 * MS).job(*job).partition(p));
            spans.push(queue(job, p, 5, start));
            spans.push(gpu(job, p, 0, start, start + 10));
        }
    }
    let s = summarize(&run_of(spans.clone()), &AnalyzeOptions::default());
    close(s.steady_state_s_per_proof.unwrap(), 0.040);
    assert_eq!(s.verdict.floors.serial_gpu_source.as_deref(), Some("gpu_span_median"));
    close(s.verdict.floors.gpu_floor_s_per_proof.unwrap(), 0.040);
    assert_eq!(s.binding_resource, "gpu", "{}", s.verdict.headline);
    assert!(s.verdict.headline.starts_with("GPU-bound"), "{}", s.verdict.headline);

    // The same run from the CPU backend: its "device" is no GPU, and the verdict says so.
    let mut run = run_of(spans);
    run.meta.config.backend = Some("cpu".into());
    let s = summarize(&run, &AnalyzeOptions::default());
    assert_eq!(s.binding_resource, "gpu", "the key stays; the words follow the device");
    assert!(s.verdict.headline.starts_with("CPU device-bound"), "{}", s.verdict.headline);
    for line in std::iter::once(&s.verdict.headline).chain(&s.verdict.evidence) {
        assert!(!line.contains("GPU"), "{line}");
    }
    assert!(s.verdict.evidence.iter().any(|e| e.starts_with("CPU device floor: 4 partitions")), "{:?}", s.verdict.evidence);
}

#[test]
fn late_pickups_make_it_dispatch_limited() {
    // Everything is queued at 1 ms, but each GPU call starts 20 ms after the previous one
    // ended: 2 jobs × 2 partitions of 10 ms at 10, 40, 70, 100 ms. Completions 50, 110 →
    // 60 ms/proof against a GPU floor of 2 × 10 ms: the 20 ms gaps are dispatch (the
    // first 10 ms are a cold start: nothing was queued at 0).
    let mut spans = Vec::new();
    for (i, (job, p)) in [("a", 0u32), ("a", 1), ("b", 0), ("b", 1)].into_iter().enumerate() {
        let start = 10 + 30 * i as u64;
        spans.push(Span::new(SpanKind::Synthesis, 0, MS).job(job).partition(p));
        spans.push(queue(job, p, 1, start));
        spans.push(gpu(job, p, 0, start, start + 10));
    }
    let s = summarize(&run_of(spans), &AnalyzeOptions::default());
    close(s.steady_state_s_per_proof.unwrap(), 0.060);
    let causes: Vec<_> = s.idle_gaps.iter().map(|g| (g.start_ms, g.cause)).collect();
    assert_eq!(
        causes,
        vec![(0.0, GapCause::ColdStart), (20.0, GapCause::Dispatch), (50.0, GapCause::Dispatch), (80.0, GapCause::Dispatch)]
    );
    assert_eq!(s.binding_resource, "dispatch/lock", "{}", s.verdict.headline);
}

/// The verdict names what else the host did when the prover sampled it, and calls a busy or
/// oversubscribed host noisy; runs without the counters (the cuzk sample) get no such line.
#[test]
fn verdict_reports_host_load_and_calls_a_noisy_host_noisy() {
    let base = read_str(SAMPLE, None);
    assert!(!summarize(&base, &AnalyzeOptions::default()).verdict.evidence.iter().any(|e| e.starts_with("host CPU")));
    for (steal, noisy) in [(0.1, false), (2.0, true)] {
        let mut run = base.clone();
        for t in 0..10u64 {
            for (name, v) in [(counters::CPU_BUSY_CORES, 4.0), (counters::HOST_BUSY_CORES, 4.2), (counters::HOST_STEAL_CORES, steal)] {
                run.counters.push(Counter { name: name.into(), t_ns: t * 50_000_000, value: v, device: None });
            }
        }
        let s = summarize(&run, &AnalyzeOptions::default());
        let line = s.verdict.evidence.iter().find(|e| e.starts_with("host CPU")).expect("a host line");
        assert!(line.contains("other processes 0.20"), "{line}");
        assert_eq!(line.contains("noisy host"), noisy, "{line}");
        assert!((s.host.as_ref().unwrap().steal_cores_mean.unwrap() - steal).abs() < 1e-9);
    }
}

/// Syntheses that split into normal ones and slow outliers get an evidence line; a run
/// without such outliers (the cuzk sample's syntheses are steady) gets none.
#[test]
fn verdict_names_slow_synthesis_outliers() {
    use timeline::event::{Span, SpanKind};
    let base = read_str(SAMPLE, None);
    let has = |r: &timeline::Run| summarize(r, &AnalyzeOptions::default()).verdict.evidence.iter().find(|e| e.starts_with("synthesis outliers")).cloned();
    assert_eq!(has(&base), None);
    let mut run = base.clone();
    let mut k = 0;
    for s in run.spans.iter_mut().filter(|s| s.kind == SpanKind::Synthesis) {
        // Every third synthesis 1.5x as long.
        if k % 3 == 0 {
            let d = s.end_ns.unwrap() - s.start_ns;
            s.end_ns = Some(s.start_ns + d * 3 / 2);
        }
        k += 1;
    }
    let line = has(&run).expect("an outlier line");
    assert!(line.contains("10 of 30 syntheses"), "{line}");
    // The ratio, recomputed independently from the modified spans.
    let mut d: Vec<f64> = run.spans.iter().filter(|s: &&Span| s.kind == SpanKind::Synthesis).map(|s| (s.end_ns.unwrap() - s.start_ns) as f64 / 1e6).collect();
    d.sort_by(f64::total_cmp);
    // The median as the analyses take it (numpy's: the mean of the two middle values here).
    let median = (d[d.len() / 2 - 1] + d[d.len() / 2]) / 2.0;
    let slow: Vec<f64> = d.iter().copied().filter(|&x| x > 1.25 * median).collect();
    let ratio = slow.iter().sum::<f64>() / slow.len() as f64 / median;
    assert!((1.3..1.6).contains(&ratio));
    assert!(line.contains(&format!("{ratio:.2}× the median")), "{line} vs {ratio:.2}");
}

#[test]
fn a_steady_state_that_only_drains_up_front_syntheses_is_not_the_measure() {
    // Three one-partition proofs, all synthesised at once (0-100 ms, three workers), then
    // proved one after the other in 10 ms each: completions at 110, 120, 130. The steady
    // state (10 ms/proof) is the GPU draining; the synthesis floor is 100 / 3 = 33 ms/proof.
    // The verdict measures the total (130 / 3 ms/proof) instead.
    let synth = |j: &str, w: u32| Span::new(SpanKind::Synthesis, 0, 100 * MS).job(j).partition(0).worker(w);
    let mut spans = vec![synth("a", 0), synth("b", 1), synth("c", 2)];
    for (i, j) in ["a", "b", "c"].iter().enumerate() {
        let s = 100 + 10 * i as u64;
        spans.push(queue(j, 0, 100, s));
        spans.push(gpu(j, 0, 0, s, s + 10));
    }
    let s = summarize(&run_of(spans.clone()), &AnalyzeOptions::default());
    close(s.throughput.steady_state_s_per_proof.unwrap(), 0.010);
    assert_eq!(s.verdict.measured_basis.as_deref(), Some("total"));
    close(s.verdict.measured_s_per_proof.unwrap(), 0.130 / 3.0);
    assert!(s.verdict.evidence.iter().any(|e| e.contains("drains")), "{:?}", s.verdict.evidence);
    assert!(s.verdict.headline.contains("No steady state"), "{}", s.verdict.headline);
    // A fourth proof synthesised after the first completion refills the pipeline: steady state.
    spans.push(Span::new(SpanKind::Synthesis, 111 * MS, 140 * MS).job("d").partition(0).worker(0));
    spans.push(queue("d", 0, 140, 140));
    spans.push(gpu("d", 0, 0, 140, 150));
    let s = summarize(&run_of(spans), &AnalyzeOptions::default());
    assert_eq!(s.verdict.measured_basis.as_deref(), Some("steady_state"));
    assert!(!s.verdict.headline.contains("No steady state"), "{}", s.verdict.headline);
}

/// A synthesis that waited for the RAM budget before it could start: the GPU idles for it
/// (`memory`); a later gap where the synthesis merely took long stays `synthesis_starved`.
#[test]
fn a_gap_behind_a_ram_wait_is_memory() {
    let synth = |p: u32, w: u32, s: u64, e: u64| Span::new(SpanKind::Synthesis, s * MS, e * MS).job("a").partition(p).worker(w);
    let wait = |p: u32, w: u32, s: u64, e: u64| Span::new(SpanKind::RamWait, s * MS, e * MS).job("a").partition(p).worker(w);
    let run = run_of(vec![
        synth(0, 0, 0, 100),
        queue("a", 0, 100, 100),
        gpu("a", 0, 0, 100, 150),
        // Partition 1 waited for RAM until 120 (partition 0's a/b/c given back), then 100 ms.
        wait(1, 1, 0, 120),
        synth(1, 1, 120, 220),
        queue("a", 1, 220, 220),
        gpu("a", 1, 0, 220, 270),
        // Partition 2 did not wait: its synthesis was just slow.
        synth(2, 0, 100, 400),
        queue("a", 2, 400, 400),
        gpu("a", 2, 0, 400, 450),
    ]);
    let g = analysis::gaps::analyze(&run, &AnalyzeOptions::default());
    let got: Vec<(f64, f64, GapCause)> = g.gaps.iter().map(|x| (x.start_ms, x.duration_ms, x.cause)).collect();
    assert_eq!(got, vec![(0.0, 100.0, GapCause::ColdStart), (150.0, 70.0, GapCause::Memory), (270.0, 130.0, GapCause::SynthesisStarved)]);
    assert_eq!(g.totals.total_ms(GapCause::Memory), 70.0);
    // A short wait (under half the lateness) does not make it a memory gap.
    let mut run2 = run.clone();
    for s in run2.spans.iter_mut().filter(|s| s.kind == SpanKind::RamWait) {
        s.start_ns = 90 * MS;
        s.end_ns = Some(120 * MS);
    }
    let g = analysis::gaps::analyze(&run2, &AnalyzeOptions::default());
    assert_eq!(g.gaps[1].cause, GapCause::SynthesisStarved, "{:?}", g.gaps[1]);
}

/// A RAM-bound verdict says whether the cores had room for the syntheses that waited: the
/// prover's busy cores averaged over the samples inside syntheses only, against the machine's
/// cores (saturated from 85 %); no line without the core count.
#[test]
fn a_ram_bound_verdict_says_whether_the_cores_had_room() {
    // Four one-partition proofs; proof j waits for RAM until 200j ms, synthesises 100 ms, then
    // 10 ms on the GPU: 200 ms/proof against a synthesis floor of 100, the GPU idle for RAM.
    let mut spans = Vec::new();
    for j in 0..4u64 {
        let name = format!("p{j}");
        if j > 0 {
            spans.push(Span::new(SpanKind::RamWait, 0, 200 * j * MS).job(&name).partition(0).worker(0));
        }
        spans.push(Span::new(SpanKind::Synthesis, 200 * j * MS, (200 * j + 100) * MS).job(&name).partition(0).worker(0));
        spans.push(queue(&name, 0, 200 * j + 100, 200 * j + 100));
        spans.push(gpu(&name, 0, 0, 200 * j + 100, 200 * j + 110));
    }
    let with = |inside: f64, cores: Option<u32>| {
        let mut run = run_of(spans.clone());
        run.meta.machine.cpu_cores = cores;
        for t in (5..720u64).step_by(10) {
            // Inside a synthesis (the first 100 ms of every 200): `inside` cores; outside 1.
            let v = if t % 200 < 100 { inside } else { 1.0 };
            run.counters.push(Counter { name: counters::CPU_BUSY_CORES.into(), t_ns: t * MS, value: v, device: None });
        }
        run.normalize();
        let v = summarize(&run, &AnalyzeOptions::default()).verdict;
        assert_eq!(v.binding, "memory", "{v:?}");
        v.evidence.iter().find(|e| e.starts_with("while syntheses ran")).cloned()
    };
    let line = with(15.0, Some(16)).expect("a cores line");
    assert!(line.contains("15.0 of 16 cores") && line.contains("(94 %, 40 samples)") && line.contains("nearly saturated"), "{line}");
    let line = with(8.0, Some(16)).expect("a cores line");
    assert!(line.contains("8.0 of 16 cores") && line.contains("cores to spare"), "{line}");
    assert_eq!(with(15.0, None), None, "no core count, no line");
}

/// Slow synthesis outliers on one shared pool (the PCE path with `synthesis_shared_pool`, or
/// `synthesis_threads = 0` in timelines from before that key, and syntheses side by side)
/// name the pool; with pools of their own, the host.
#[test]
fn synthesis_outliers_on_one_shared_pool_name_the_pool() {
    // Twelve syntheses, two at a time (workers 0 and 1); every third takes 3x the others.
    let mut spans = Vec::new();
    for i in 0..12u64 {
        let name = format!("p{i}");
        let (s, d) = (i / 2 * 400, if i % 3 == 0 { 300 } else { 100 });
        spans.push(Span::new(SpanKind::Synthesis, s * MS, (s + d) * MS).job(&name).partition(0).worker((i % 2) as u32));
        spans.push(queue(&name, 0, s + d, s + d));
        spans.push(gpu(&name, 0, 0, s + 300 + (i % 2) * 20, s + 310 + (i % 2) * 20));
    }
    // (synthesis_threads, synthesis_shared_pool) in the meta; None: a producer without them.
    let line = |meta: Option<(u64, Option<bool>)>| {
        let mut run = run_of(spans.clone());
        if let Some((t, shared)) = meta {
            run.meta.extra.insert("synthesis".into(), "pce".into());
            run.meta.extra.insert("synthesis_threads".into(), t.into());
            if let Some(b) = shared {
                run.meta.extra.insert("synthesis_shared_pool".into(), b.into());
            }
        }
        summarize(&run, &AnalyzeOptions::default()).verdict.evidence.iter().find(|e| e.starts_with("synthesis outliers")).cloned().expect("an outlier line")
    };
    for shared in [Some((0, None)), Some((16, Some(true)))] {
        let l = line(shared);
        assert!(l.contains("4 of 12 syntheses") && l.contains("up to 2 syntheses shared one thread pool"), "{shared:?}: {l}");
    }
    for other in [Some((16, Some(false))), Some((4, None)), None] {
        let l = line(other);
        assert!(l.contains("points at the host") && !l.contains("shared one thread pool"), "{other:?}: {l}");
    }
}
