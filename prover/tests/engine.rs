//! Engine tests: real CPU proofs through workers, locks and finalisers; the timeline
//! shows the knobs at work (kernels: compute serialised per device while prep overlaps
//! it; whole: nothing overlaps); faults (an unsatisfied partition fails its proof only; a
//! device fault is retried elsewhere; an abort flushes the timeline with open spans);
//! and the engine's own JSON-lines and cuzk logs read back with zero warnings.

use std::sync::Arc;
use std::time::Duration;

use prover::backend::{Backend, Blinding, Gate, GateGuard, Pending, ProveError};
use prover::circuit::PorepLike;
use prover::cpu::CpuBackend;
use prover::engine::{self, Engine, EngineConfig, Job, LockMode};
use prover::events::{EventSink, SinkConfig};
use prover::{setup, Parameters, ProvingAssignment};
use timeline::event::{Run, Span, SpanKind};

const N: u64 = 1 << 8;

fn params() -> Arc<Parameters> {
    let c = PorepLike::new(N, 0);
    Arc::new(setup::generate_test_params(c.clone(), &c.id(), 3).unwrap())
}

/// Wraps a backend to stretch its CPU prep (outside any lock) and its device compute
/// (inside the compute gate), so overlaps are visible at any machine speed.
struct Slow {
    inner: Arc<dyn Backend>,
    prep: Duration,
    kernel: Duration,
    fail: bool,
}

struct SlowGate<'a> {
    inner: &'a dyn Gate,
    kernel: Duration,
}

impl Gate for SlowGate<'_> {
    fn alloc(&self) -> GateGuard<'_> {
        self.inner.alloc()
    }
    fn compute(&self) -> GateGuard<'_> {
        let g = self.inner.compute();
        let s = tracing::info_span!("ntt", simulated = true);
        {
            let _e = s.enter();
            std::thread::sleep(self.kernel);
        }
        g
    }
}

impl Backend for Slow {
    fn name(&self) -> &str {
        "cpu"
    }
    fn device(&self) -> u32 {
        self.inner.device()
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        {
            let s = tracing::info_span!("prep_msm", simulated = true);
            let _e = s.enter();
            std::thread::sleep(self.prep);
        }
        if self.fail {
            return Err(ProveError::Device("injected device fault".into()));
        }
        self.inner.prove_start(a, p, b, &SlowGate { inner: gate, kernel: self.kernel })
    }
}

fn slow(device: u32, prep_ms: u64, kernel_ms: u64, fail: bool) -> Arc<dyn Backend> {
    Arc::new(Slow { inner: Arc::new(CpuBackend::new(device)), prep: Duration::from_millis(prep_ms), kernel: Duration::from_millis(kernel_ms), fail })
}

fn cfg(pw: u32, gw: u32, lock: LockMode) -> EngineConfig {
    EngineConfig { pw, gw, lock, verify: true, rss_sample_ms: 5, seed: Some(1), ..EngineConfig::default() }
}

struct Outcome {
    run: Run,
    results: Vec<engine::JobResult>,
    jsonl: Run,
    cuzk: Run,
}

fn run_engine(cfg: EngineConfig, backends: Vec<Arc<dyn Backend>>, jobs: Vec<Job>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let (jp, cp) = (dir.path().join("run.jsonl"), dir.path().join("run.log"));
    let meta = engine::run_meta(&cfg, &backends);
    let sink_cfg = SinkConfig { collect: true, rss_every: Some(Duration::from_millis(5)), meta, ..Default::default() }
        .jsonl_file(&jp)
        .unwrap()
        .cuzk_file(&cp)
        .unwrap();
    let sink = EventSink::start(sink_cfg).unwrap();
    let e = Engine::start(cfg, params(), backends, sink).unwrap();
    let n = jobs.len();
    for j in jobs {
        e.submit(j);
    }
    let results = e.collect(n, Duration::from_secs(60)).expect("jobs finish");
    let (_, run) = e.shutdown().unwrap();
    let jsonl = timeline::read::read_path(&jp, None).unwrap();
    let cuzk = timeline::read::read_path(&cp, None).unwrap();
    Outcome { run, results, jsonl, cuzk }
}

fn overlaps(a: &Span, b: &Span) -> bool {
    let (ae, be) = (a.end_ns.unwrap(), b.end_ns.unwrap());
    a.start_ns < be && b.start_ns < ae
}

fn is_compute(s: &Span) -> bool {
    s.kind.is_device_work() || (s.kind == SpanKind::LockHold && s.args.get("lock").and_then(|v| v.as_str()) != Some("alloc"))
}

#[test]
fn cpu_engine_proves_verifies_and_its_timeline_reads_clean() {
    let out = run_engine(cfg(2, 2, LockMode::Kernels), engine::backends_for("cpu", 1).unwrap(), engine::porep_jobs(2, 3, N, 9));
    for r in &out.results {
        let proofs = r.proofs.as_ref().expect("proof ok");
        assert_eq!(proofs.len(), 3);
    }
    // JSON lines: zero warnings, same spans as collected in memory.
    assert!(!out.jsonl.diagnostics.has_warnings(), "{:?}", out.jsonl.diagnostics);
    assert_eq!(out.jsonl.spans.len(), out.run.spans.len());
    assert_eq!(out.jsonl.meta.config.pw, Some(2));
    for kind in ["synthesis", "gpu_queue", "gpu_pickup", "gpu", "prep_msm", "ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1", "batch_add", "tail_msm", "b_g2_msm", "finalize", "lock_wait", "lock_hold"] {
        let k: SpanKind = kind.parse().unwrap();
        assert!(out.jsonl.spans_of(&k).count() >= 6, "at least one {kind} per partition");
    }
    for s in out.jsonl.spans.iter().filter(|s| s.kind != SpanKind::GpuQueue) {
        assert!(s.job.is_some() && s.partition.is_some() && s.worker.is_some(), "identity on {s:?}");
    }
    assert!(out.jsonl.counters.iter().any(|c| c.name == "rss_bytes" && c.value > 1e6));
    assert!(out.jsonl.counters.iter().any(|c| c.name == "queue_depth"));
    // cuzk log: zero warnings, the six events paired into spans per partition.
    assert!(!out.cuzk.diagnostics.has_warnings(), "{:?}", out.cuzk.diagnostics);
    assert_eq!(out.cuzk.spans_of(&SpanKind::Synthesis).count(), 6);
    assert_eq!(out.cuzk.spans_of(&SpanKind::Gpu).count(), 6);
    assert!(out.cuzk.spans_of(&SpanKind::Gpu).all(|s| s.args.contains_key("gpu_ms")));
}

#[test]
fn kernels_lock_serialises_compute_and_lets_prep_overlap_it() {
    let out = run_engine(cfg(2, 2, LockMode::Kernels), vec![slow(0, 40, 40, false)], engine::porep_jobs(1, 6, N, 1));
    assert!(out.results[0].proofs.is_ok());
    let spans = &out.jsonl.spans;
    let compute: Vec<&Span> = spans.iter().filter(|s| is_compute(s)).collect();
    for a in &compute {
        for b in &compute {
            if a.worker != b.worker {
                assert!(!overlaps(a, b), "compute of two workers overlaps: {a:?} {b:?}");
            }
        }
    }
    let prep_overlaps_other_compute = spans
        .iter()
        .filter(|s| s.kind == SpanKind::PrepMsm)
        .any(|p| compute.iter().any(|c| c.worker != p.worker && overlaps(p, c)));
    assert!(prep_overlaps_other_compute, "with gw=2 and lock=kernels one worker's prep overlaps the other's compute");
}

#[test]
fn whole_lock_lets_nothing_overlap() {
    let out = run_engine(cfg(2, 2, LockMode::Whole), vec![slow(0, 20, 20, false)], engine::porep_jobs(1, 4, N, 2));
    assert!(out.results[0].proofs.is_ok());
    let gpu_side: Vec<&Span> = out
        .jsonl
        .spans
        .iter()
        .filter(|s| s.kind.is_device_work() || s.kind == SpanKind::PrepMsm || s.kind == SpanKind::LockHold)
        .collect();
    assert!(gpu_side.len() > 8);
    for a in &gpu_side {
        for b in &gpu_side {
            if a.worker != b.worker {
                assert!(!overlaps(a, b), "`whole` lets two workers overlap: {a:?} {b:?}");
            }
        }
    }
}

#[test]
fn a_failing_partition_fails_its_proof_and_the_others_are_served() {
    let mut jobs = engine::porep_jobs(2, 2, N, 3);
    let mut bad = PorepLike::new(N, 99);
    bad.corrupt_row = Some(20);
    jobs[0].partitions[1] = Box::new(bad);
    let out = run_engine(cfg(2, 1, LockMode::Kernels), engine::backends_for("cpu", 1).unwrap(), jobs);
    let by_id = |id: &str| out.results.iter().find(|r| r.id == id).unwrap();
    let err = by_id("proof-0000").proofs.as_ref().unwrap_err();
    assert!(err.contains("partition 1") && err.contains("constraint #20"), "{err}");
    assert!(by_id("proof-0001").proofs.is_ok());
}

#[test]
fn a_device_fault_is_retried_on_another_device() {
    let backends = vec![slow(0, 0, 0, true), Arc::new(CpuBackend::new(1)) as Arc<dyn Backend>];
    let out = run_engine(cfg(1, 1, LockMode::Kernels), backends, engine::porep_jobs(1, 3, N, 4));
    let proofs = out.results[0].proofs.as_ref().expect("retried proofs succeed");
    assert!(proofs.iter().all(|p| p.device == 1));
    assert!(!out.jsonl.diagnostics.has_warnings(), "{:?}", out.jsonl.diagnostics);
}

#[test]
fn abort_flushes_the_timeline_and_marks_open_spans() {
    let dir = tempfile::tempdir().unwrap();
    let jp = dir.path().join("run.jsonl");
    let c = cfg(1, 1, LockMode::Kernels);
    let backends = vec![slow(0, 0, 400, false)];
    let sink = EventSink::start(SinkConfig { meta: engine::run_meta(&c, &backends), ..Default::default() }.jsonl_file(&jp).unwrap()).unwrap();
    let e = Engine::start(c, params(), backends, sink).unwrap();
    for j in engine::porep_jobs(1, 2, N, 5) {
        e.submit(j);
    }
    std::thread::sleep(Duration::from_millis(150));
    let (stats, _) = e.abort_and_flush().unwrap();
    assert!(stats.open_spans >= 1, "{stats:?}");
    let run = timeline::read::read_path(&jp, None).unwrap();
    assert_eq!(run.diagnostics.lines_rejected, 0, "every line intact: {:?}", run.diagnostics);
    assert!(run.spans.iter().any(|s| s.is_open() && s.kind == SpanKind::Gpu));
}

#[test]
fn two_lock_takes_both_locks_and_still_serialises_compute() {
    let out = run_engine(cfg(2, 2, LockMode::TwoLock), vec![slow(0, 10, 20, false)], engine::porep_jobs(1, 4, N, 6));
    assert!(out.results[0].proofs.is_ok());
    let spans = &out.jsonl.spans;
    let holds = |lock: &str| spans.iter().filter(|s| s.kind == SpanKind::LockHold && s.args.get("lock").and_then(|v| v.as_str()) == Some(lock)).count();
    assert_eq!(holds("alloc"), 4, "one allocation-lock hold per partition");
    assert_eq!(holds("compute"), 4, "one compute-lock hold per partition");
    let compute: Vec<&Span> = spans.iter().filter(|s| is_compute(s)).collect();
    for a in &compute {
        for b in &compute {
            if a.worker != b.worker {
                assert!(!overlaps(a, b), "compute of two workers overlaps under two_lock: {a:?} {b:?}");
            }
        }
    }
}
