//! Engine tests: real CPU proofs through workers, locks and finalisers; the timeline
//! shows the knobs at work (kernels: compute serialised per device while prep overlaps
//! it; whole: nothing overlaps); faults (an unsatisfied partition fails its proof only; a
//! device fault is retried elsewhere; an abort flushes the timeline with open spans);
//! and the engine's own JSON-lines and cuzk logs read back with zero warnings.

use std::sync::Arc;
use std::time::Duration;

use prover::backend::{Backend, Blinding, DeviceError, Gate, GateGuard, Pending, ProveError, StartFailure};
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
    fn abc_release(&self) -> Box<dyn FnOnce() + Send> {
        self.inner.abc_release()
    }
    fn cpu_pool(&self) -> Option<&rayon::ThreadPool> {
        self.inner.cpu_pool()
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
            return Err(ProveError::Device(DeviceError::backend(std::io::Error::other("injected device fault"))));
        }
        self.inner.prove_start(a, p, b, &SlowGate { inner: gate, kernel: self.kernel })
    }
    fn meta(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("slow_kernel_ms", self.kernel.as_millis().to_string().into())]
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
    // The machine, for calibrate: the cores always; RAM where /proc/meminfo exists.
    assert!(out.jsonl.meta.machine.cpu_cores.is_some_and(|c| c >= 1), "{:?}", out.jsonl.meta.machine);
    if std::path::Path::new("/proc/meminfo").exists() {
        assert!(out.jsonl.meta.machine.ram_gib.is_some_and(|r| r > 0.1), "{:?}", out.jsonl.meta.machine);
    }
    for kind in ["synthesis", "gpu_queue", "gpu_pickup", "gpu", "prep_msm", "ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1", "batch_add", "tail_msm", "cpu_msm_b_g2", "finalize", "lock_wait", "lock_hold"] {
        let k: SpanKind = kind.parse().unwrap();
        assert!(out.jsonl.spans_of(&k).count() >= 6, "at least one {kind} per partition");
    }
    // Every span the prover opened has a kind the analyzer knows (names come from
    // `timeline::event::kind`; a new span name must be added there).
    for s in &out.jsonl.spans {
        assert!(SpanKind::known(s.kind.as_str()).is_some(), "unknown span kind `{}`", s.kind);
    }
    for s in out.jsonl.spans.iter().filter(|s| s.kind != SpanKind::GpuQueue) {
        assert!(s.job.is_some() && s.partition.is_some() && s.worker.is_some(), "identity on {s:?}");
    }
    assert!(out.jsonl.counters.iter().any(|c| c.name == "rss_bytes" && c.value > 1e6));
    assert!(out.jsonl.counters.iter().any(|c| c.name == "queue_depth"));
    // The sampler's CPU rates: the prover's cores, and on Linux the machine's and its steal.
    let mut rates = vec!["cpu_busy_cores"];
    if std::path::Path::new("/proc/stat").exists() {
        rates.extend(["host_busy_cores", "host_steal_cores"]);
    }
    for name in rates {
        assert!(out.jsonl.counters.iter().any(|c| c.name == name && c.value >= 0.0 && c.value.is_finite()), "no {name} counter");
    }
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
    // Without split finalisation the lock also covers the G2 MSM and the assembly.
    for split in [true, false] {
        let c = EngineConfig { split_finalize: split, ..cfg(2, 2, LockMode::Whole) };
        let out = run_engine(c, vec![slow(0, 20, 20, false)], engine::porep_jobs(1, 4, N, 2));
        assert!(out.results[0].proofs.is_ok());
        let in_call = |k: &SpanKind| !split && matches!(k, SpanKind::CpuMsmBG2 | SpanKind::Finalize);
        let gpu_side: Vec<&Span> = out
            .jsonl
            .spans
            .iter()
            .filter(|s| s.kind.is_device_work() || s.kind == SpanKind::PrepMsm || s.kind == SpanKind::LockHold || in_call(&s.kind))
            .collect();
        assert!(gpu_side.len() > 8);
        if !split {
            assert!(gpu_side.iter().any(|s| s.kind == SpanKind::CpuMsmBG2));
        }
        for a in &gpu_side {
            for b in &gpu_side {
                if a.worker != b.worker {
                    assert!(!overlaps(a, b), "`whole` (split {split}) lets two workers overlap: {a:?} {b:?}");
                }
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
    // The failure is in the timeline (a `failed` span with its error, under the partition),
    // and the analyzer counts that proof as failed, not complete, and says so.
    let failed: Vec<&Span> = out.jsonl.spans.iter().filter(|s| s.kind == SpanKind::Failed).collect();
    assert!(!failed.is_empty(), "no `failed` span");
    let first = failed.iter().find(|s| s.partition == Some(1)).expect("partition 1's failure");
    assert_eq!(first.job.as_deref(), Some("proof-0000"));
    assert!(first.args.get("error").and_then(|v| v.as_str()).is_some_and(|e| e.contains("constraint #20")), "{first:?}");
    assert!(failed.iter().all(|s| s.job.as_deref() == Some("proof-0000")));
    let sum = timeline::analysis::summarize(&out.jsonl, &Default::default());
    assert_eq!((sum.proofs_completed, sum.proofs_failed), (1, 1));
    assert!(sum.diagnostics.problems.iter().any(|p| p.contains("1 of 2 proofs FAILED") && p.contains("constraint #20")), "{:?}", sum.diagnostics.problems);
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

/// A device that runs out of memory on every partition, the way the CUDA backend reports
/// it: `DeviceOutOfMemory`, with the assignment handed back (`hand_back`) or not.
struct OutOfMemory {
    device: u32,
    hand_back: bool,
}

impl Backend for OutOfMemory {
    fn name(&self) -> &str {
        "cuda"
    }
    fn device(&self) -> u32 {
        self.device
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, g: &dyn Gate) -> Result<Pending, ProveError> {
        self.prove_start_or_return(a, p, b, g).map_err(|f| f.error)
    }
    fn prove_start_or_return(&self, a: ProvingAssignment, _: &Parameters, _: Blinding, _: &dyn Gate) -> Result<Pending, StartFailure> {
        let error = ProveError::DeviceOutOfMemory(DeviceError::backend(std::io::Error::other("CUDA driver error in alloc H buffer: CUDA_ERROR_OUT_OF_MEMORY")));
        Err(StartFailure { error, assignment: self.hand_back.then(|| Box::new(a)) })
    }
}

#[test]
fn out_of_device_memory_falls_back_to_the_cpu_and_every_proof_verifies() {
    for split in [true, false] {
        let c = EngineConfig { split_finalize: split, ..cfg(1, 2, LockMode::Kernels) };
        let backends = vec![Arc::new(OutOfMemory { device: 0, hand_back: true }) as Arc<dyn Backend>];
        let out = run_engine(c, backends, engine::porep_jobs(2, 2, N, 11));
        let p = params();
        for r in &out.results {
            let proofs = r.proofs.as_ref().unwrap_or_else(|e| panic!("split={split}: the CPU fallback proves {}: {e}", r.id));
            assert_eq!(proofs.len(), 2);
            for pp in proofs {
                assert!(prover::verifier::verify(&p.vk, &pp.proof, &pp.public_inputs).unwrap());
            }
        }
        let fallbacks: Vec<&Span> = out.jsonl.spans.iter().filter(|s| s.kind.as_str() == "fallback").collect();
        assert_eq!(fallbacks.len(), 4, "one fallback span per partition (split={split})");
        for f in &fallbacks {
            assert_eq!(f.args.get("fallback").and_then(|v| v.as_str()), Some("cpu"));
            assert!(f.args.get("reason").and_then(|v| v.as_str()).is_some_and(|r| r.contains("OUT_OF_MEMORY")));
            // The CPU stages ran inside the fallback span.
            let inside = |k: SpanKind| out.jsonl.spans.iter().any(|s| s.kind == k && s.job == f.job && s.partition == f.partition && s.start_ns >= f.start_ns && s.end_ns <= f.end_ns);
            assert!(inside(SpanKind::MsmH) && inside(SpanKind::Ntt));
        }
        assert!(!out.jsonl.diagnostics.has_warnings(), "{:?}", out.jsonl.diagnostics);
    }
}

#[test]
fn out_of_device_memory_without_the_fallback_fails_that_job_only_as_before() {
    // Fallback off, one device: nowhere to go, the job fails and names the cause.
    let c = EngineConfig { cpu_fallback: false, ..cfg(1, 1, LockMode::Kernels) };
    let out = run_engine(c, vec![Arc::new(OutOfMemory { device: 0, hand_back: true }) as Arc<dyn Backend>], engine::porep_jobs(1, 1, N, 12));
    let err = out.results[0].proofs.as_ref().unwrap_err();
    assert!(err.contains("out of memory"), "{err}");
    // Fallback off, two devices: retried on the other device like any device error.
    let c = EngineConfig { cpu_fallback: false, ..cfg(1, 1, LockMode::Kernels) };
    let backends = vec![Arc::new(OutOfMemory { device: 0, hand_back: false }) as Arc<dyn Backend>, Arc::new(CpuBackend::new(1)) as Arc<dyn Backend>];
    let out = run_engine(c, backends, engine::porep_jobs(1, 2, N, 13));
    assert!(out.results[0].proofs.as_ref().expect("retried on device 1").iter().all(|p| p.device == 1));
}

/// A device whose proofs are wrong (H off by the generator) and that verifies in its
/// finish, as the CUDA backend does (`prover::finish_verified`).
struct WrongProofs {
    inner: CpuBackend,
}

impl Backend for WrongProofs {
    fn name(&self) -> &str {
        "cuda"
    }
    fn device(&self) -> u32 {
        self.inner.device()
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, g: &dyn Gate) -> Result<Pending, ProveError> {
        let mut pending = self.inner.prove_start(a, p, b, g)?;
        pending.h += <prover::G1Projective as group::Group>::generator();
        Ok(pending)
    }
    fn prove_finish(&self, pending: Pending, params: &Parameters) -> Result<prover::Proof, ProveError> {
        prover::prover::finish_verified(pending, params)
    }
    fn verifies_proofs(&self) -> bool {
        true
    }
}

#[test]
fn a_proof_that_does_not_verify_is_retried_on_another_device() {
    for split in [true, false] {
        let c = EngineConfig { split_finalize: split, verify: false, ..cfg(1, 1, LockMode::Kernels) };
        // Device 1 is slowed so that device 0 picks up partitions first.
        let backends = vec![Arc::new(WrongProofs { inner: CpuBackend::new(0) }) as Arc<dyn Backend>, slow(1, 30, 0, false)];
        let out = run_engine(c, backends, engine::porep_jobs(1, 4, N, 14));
        let proofs = out.results[0].proofs.as_ref().unwrap_or_else(|e| panic!("split={split}: {e}"));
        assert!(proofs.iter().all(|p| p.device == 1), "split={split}");
        let on0 = |k: &str| out.jsonl.spans.iter().filter(|s| s.kind.as_str() == k && s.device == Some(0)).count();
        assert!(on0("verify") >= 1, "device 0 proved something (split={split})");
        assert_eq!(on0("verify"), on0("gpu"), "each proof of device 0 was verified and rejected (split={split})");
    }
    // One device: the wrong proof is never returned, the job fails.
    let c = EngineConfig { verify: false, ..cfg(1, 1, LockMode::Kernels) };
    let out = run_engine(c, vec![Arc::new(WrongProofs { inner: CpuBackend::new(0) }) as Arc<dyn Backend>], engine::porep_jobs(1, 1, N, 15));
    assert!(out.results[0].proofs.as_ref().unwrap_err().contains("did not verify"));
}

#[test]
fn verifying_a_proof_costs_a_few_pairings() {
    // The price of `finish_verified` (the CUDA backend's check on every proof): one
    // 4-pair multi-Miller loop and a final exponentiation, independent of the circuit.
    let p = params();
    let mut rng = rand::rngs::OsRng;
    let (proof, inputs) = prover::prover::prove(PorepLike::new(N, 3), &p, &CpuBackend::new(0), &mut rng).unwrap();
    let runs = 20;
    let t = std::time::Instant::now();
    for _ in 0..runs {
        assert!(prover::verifier::verify(&p.vk, &proof, &inputs).unwrap());
    }
    let ms = t.elapsed().as_secs_f64() * 1e3 / runs as f64;
    eprintln!("verify: {ms:.2} ms per proof ({} public inputs)", inputs.len());
    let mut bad = proof;
    bad.c = <prover::G1Affine as group::prime::PrimeCurveAffine>::generator();
    assert!(!prover::verifier::verify(&p.vk, &bad, &inputs).unwrap());
}

#[test]
fn the_backends_knobs_reach_the_run_meta() {
    let meta = engine::run_meta(&cfg(1, 1, LockMode::Whole), &[slow(0, 1, 7, false)]);
    assert_eq!(meta.extra.get("slow_kernel_ms").and_then(|v| v.as_str()), Some("7"));
    // A backend without knobs adds nothing.
    let plain: Vec<Arc<dyn Backend>> = vec![Arc::new(CpuBackend::new(0))];
    assert!(!engine::run_meta(&cfg(1, 1, LockMode::Whole), &plain).extra.contains_key("slow_kernel_ms"));
}

/// A "device" that holds its own copy of the parameters (as a GPU holds its upload) and
/// proves from it on the CPU: with `memory.params_host = "auto"` the engine frees the host
/// copy of every query it holds.
struct OwnCopy {
    cpu: CpuBackend,
    own: Parameters,
    resident: prover::backend::ResidentQueries,
}

impl Backend for OwnCopy {
    fn name(&self) -> &str {
        "own-copy"
    }
    fn device(&self) -> u32 {
        0
    }
    fn make_resident(&self, _: &Parameters) -> Result<prover::backend::ResidentQueries, ProveError> {
        Ok(self.resident)
    }
    fn device_memory_bytes(&self) -> Option<u64> {
        Some(1 << 40)
    }
    fn prove_start(&self, a: ProvingAssignment, _: &Parameters, b: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        self.cpu.prove_start(a, &self.own, b, gate)
    }
    fn prove_finish(&self, p: Pending, _: &Parameters) -> Result<prover::proof::Proof, ProveError> {
        self.cpu.prove_finish(p, &self.own)
    }
}

#[test]
fn the_host_copy_of_queries_every_device_holds_is_released_and_the_budget_given_back() {
    use prover::backend::ResidentQueries;
    use prover::engine::budget::ParamsHost;
    let p = params();
    let query_bytes = ((p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) * 96 + p.b_g2.len() * 192) as u64;
    let h_bytes = (p.h.len() * 96) as u64;
    let start = |host: ParamsHost, resident: ResidentQueries| {
        let mut c = cfg(1, 1, LockMode::Kernels);
        c.memory.params_host = host;
        let dev: Arc<dyn Backend> = Arc::new(OwnCopy { cpu: CpuBackend::new(0), own: (*p).clone(), resident });
        let sink = EventSink::start(SinkConfig { collect: true, meta: engine::run_meta(&c, &[dev.clone()]), ..Default::default() }).unwrap();
        Engine::start(c, Arc::new((*p).clone()), vec![dev], sink).unwrap()
    };
    // Kept: the reservation holds the parameters' estimate.
    let kept = start(ParamsHost::Keep, ResidentQueries::ALL);
    let kept_resident = kept.ram().resident();
    // Every query held by the device: all freed, their bytes given back, proofs still verify.
    let e = start(ParamsHost::Auto, ResidentQueries::ALL);
    let freed = kept_resident - e.ram().resident();
    assert!(freed >= query_bytes.min(kept_resident) * 9 / 10 && freed > 0, "freed {freed} of {query_bytes} B");
    // ... and the GPU worker's call memory without the gathered bases, which a device holding
    // the queries does not gather on the host (one worker, no CPU fallback once the host copy
    // is gone). This test's device proves on the CPU from its own copy, so only the
    // reservations are checked here, not the memory its MSMs take.
    let plan = e.memory_plan().partition;
    assert!(plan.call_bases > 0 && plan.call_on_resident_queries() + plan.call_bases == plan.call);
    assert_eq!(freed, query_bytes + plan.call_bases, "the queries' bytes and the bases' share");
    e.submit(engine::porep_jobs(1, 2, N, 4).remove(0));
    let r = e.collect(1, Duration::from_secs(60)).expect("the job finishes");
    assert_eq!(r[0].proofs.as_ref().expect("proofs verify").len(), 2);
    e.shutdown().unwrap();
    // Only H held: only H's bytes come back; the MSM queries stream, the call keeps its bases.
    let only_h = start(ParamsHost::Auto, ResidentQueries { h: true, ..Default::default() });
    assert_eq!(kept_resident - only_h.ram().resident(), h_bytes);
    // Every MSM query held but H: the bases' share comes back with them.
    let msm = start(ParamsHost::Auto, ResidentQueries { h: false, ..ResidentQueries::ALL });
    assert_eq!(kept_resident - msm.ram().resident(), query_bytes - h_bytes + plan.call_bases);
    // B_G2 not held (the G2 MSM on the host): the call keeps its bases.
    let no_g2 = start(ParamsHost::Auto, ResidentQueries { b_g2: false, ..ResidentQueries::ALL });
    assert_eq!(kept_resident - no_g2.ram().resident(), query_bytes - (p.b_g2.len() * 192) as u64);
    // Nothing held (the CPU backend): nothing released.
    let none = start(ParamsHost::Auto, ResidentQueries::default());
    assert_eq!(none.ram().resident(), kept_resident);
    for e in [kept, only_h, msm, no_g2, none] {
        e.shutdown().unwrap();
    }
}

#[test]
fn a_budget_that_holds_the_run_once_the_devices_hold_the_parameters_is_not_refused() {
    use prover::backend::ResidentQueries;
    use prover::engine::budget::{Budget, ByteSize, MemoryPlan};
    // Run 131 (2^27, gw 3): the check counted the parameters' host copy and full calls beside a
    // synthesis, though the copy goes once the devices hold the queries and the calls then
    // gather no bases. A budget between the two: accepted when the device holds every query,
    // refused (naming what stays reserved) when it holds none and the copy stays.
    let p = params();
    let mut plan = MemoryPlan::new(&p, true, None, 2);
    plan.staging = 0;
    assert!(plan.needed_released() < plan.needed(), "{} vs {}", plan.needed_released(), plan.needed());
    let budget = (plan.needed_released() + plan.needed()) / 2;
    let start = |resident: ResidentQueries| {
        let mut c = cfg(1, 2, LockMode::Kernels);
        c.memory.total_budget = Budget::Bytes(ByteSize(budget));
        let dev: Arc<dyn Backend> = Arc::new(OwnCopy { cpu: CpuBackend::new(0), own: (*p).clone(), resident });
        let sink = EventSink::start(SinkConfig { collect: true, meta: engine::run_meta(&c, &[dev.clone()]), ..Default::default() }).unwrap();
        Engine::start(c, Arc::new((*p).clone()), vec![dev], sink)
    };
    let e = start(ResidentQueries::ALL).expect("the run fits once the device holds the parameters");
    e.submit(engine::porep_jobs(1, 2, N, 5).remove(0));
    let r = e.collect(1, Duration::from_secs(60)).expect("the job finishes");
    assert_eq!(r[0].proofs.as_ref().expect("proofs verify").len(), 2);
    assert!(e.ram().peak() <= budget);
    e.shutdown().unwrap();
    let err = start(ResidentQueries::default()).err().expect("refused: the host keeps the parameters");
    let msg = err.to_string();
    assert!(msg.contains("memory.total_budget") && (msg.contains("cannot hold one partition") || msg.contains("can never give it")), "{msg}");
}

#[test]
fn released_queries_are_refused_by_the_cpu_paths_and_the_file_writer() {
    let mut p = (*params()).clone();
    let n = p.l.len();
    p.l.release();
    assert_eq!((p.l.len(), p.l.host().is_none(), p.released_query()), (n, true, Some("l")));
    let asg = prover::prover::synthesize(PorepLike::new(N, 1)).unwrap();
    let err = CpuBackend::new(0).prove_start(asg, &p, Blinding::random(&mut rand::thread_rng()), &prover::backend::NoGate).err().expect("refused");
    assert!(err.to_string().contains("query l") && err.to_string().contains("released"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.params");
    let err = p.write_file(&path).expect_err("a released query is not written");
    assert!(err.to_string().contains("released") && !path.exists(), "{err}");
}

/// A device limited to `budget` bytes whose partitions need `need` (`memory.vram_budget`).
struct Budgeted {
    cpu: CpuBackend,
    budget: u64,
    need: u64,
}

impl Backend for Budgeted {
    fn name(&self) -> &str {
        "budgeted"
    }
    fn device(&self) -> u32 {
        0
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        self.cpu.prove_start(a, p, b, gate)
    }
    fn vram_budget(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn device_memory_bytes(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn device_free_bytes(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn partition_device_bytes(&self, _: &Parameters) -> Option<u64> {
        Some(self.need)
    }
}

#[test]
fn a_vram_budget_below_one_partition_is_refused_before_any_work_naming_both_figures() {
    let start = |budget: u64, need: u64| {
        let c = cfg(1, 1, LockMode::Kernels);
        let dev: Arc<dyn Backend> = Arc::new(Budgeted { cpu: CpuBackend::new(0), budget, need });
        let sink = EventSink::start(SinkConfig { collect: true, meta: engine::run_meta(&c, &[dev.clone()]), ..Default::default() }).unwrap();
        Engine::start(c, params(), vec![dev], sink)
    };
    // Before any parameter is loaded: the config against the file's shape.
    let mut c = cfg(1, 1, LockMode::Kernels);
    c.memory.vram_budget = Some(prover::engine::budget::ByteSize(1 << 10));
    let err = engine::check_ram_budget(&c, &params().shape(), None).expect_err("refused").to_string();
    assert!(err.contains("memory.vram_budget") && err.contains("1.0 KiB"), "{err}");
    let err = start(16 << 30, 23 << 30).err().expect("refused").to_string();
    assert!(err.contains("memory.vram_budget") && err.contains("16.00 GiB") && err.contains("23.00 GiB"), "{err}");
    // Enough: it starts and proves.
    let e = start(24 << 30, 23 << 30).expect("starts");
    e.submit(engine::porep_jobs(1, 1, N, 2).remove(0));
    assert!(e.collect(1, Duration::from_secs(60)).expect("finishes")[0].proofs.is_ok());
    e.shutdown().unwrap();
}

/// A CPU backend that records on which thread its call's CPU work would run (the gate's pool
/// for it, as the CUDA and CPU backends run their MSM preparation).
struct Where {
    inner: CpuBackend,
    threads: std::sync::Mutex<Vec<String>>,
}

impl Backend for Where {
    fn name(&self) -> &'static str {
        "where"
    }
    fn device(&self) -> u32 {
        0
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        let name = prover::on_pool(gate.cpu_pool(), || std::thread::current().name().unwrap_or("").to_string());
        self.threads.lock().unwrap().push(name);
        self.inner.prove_start(a, p, b, gate)
    }
}

#[test]
fn the_gpu_workers_prepare_on_the_prep_pool_when_prep_threads_is_set() {
    for (prep_threads, lock) in [(0, LockMode::Kernels), (3, LockMode::Kernels), (3, LockMode::Whole)] {
        let backend = Arc::new(Where { inner: CpuBackend::new(0), threads: Default::default() });
        let c = EngineConfig { prep_threads, ..cfg(2, 2, lock) };
        let out = run_engine(c, vec![backend.clone()], engine::porep_jobs(1, 4, N, 3));
        assert!(out.results[0].proofs.is_ok(), "every proof verifies");
        let threads = backend.threads.lock().unwrap().clone();
        assert_eq!(threads.len(), 4);
        for t in &threads {
            if prep_threads == 0 {
                // Without a pool of its own the GPU worker prepares on its own thread (its
                // parallel iterators then use rayon's global pool).
                assert!(t.starts_with("gpu-0-"), "prep_threads 0 ran on {t:?}");
            } else {
                assert!(t.starts_with("prep-"), "prep_threads {prep_threads} ({lock:?}) ran on {t:?}");
            }
        }
        assert_eq!(out.jsonl.meta.extra.get("prep_threads").and_then(|v| v.as_u64()), Some(prep_threads as u64));
        // The preparation's span, opened on the pool's thread, still belongs to its partition
        // (runs 73-74 at 2^27 lost every `prep_msm` span with a pool of its own).
        let mut parts: Vec<u32> = out.jsonl.spans_of(&SpanKind::PrepMsm).filter_map(|s| s.partition).collect();
        parts.sort_unstable();
        assert_eq!(parts, vec![0, 1, 2, 3], "prep_threads {prep_threads} ({lock:?}): one prep_msm span per partition");
        // Each says the threads of the pool it ran on and the CPU time its pieces took there:
        // some, and no more than those threads could give over its wall time.
        let pool = if prep_threads == 0 { rayon::current_num_threads() as u64 } else { prep_threads as u64 };
        for s in out.jsonl.spans_of(&SpanKind::PrepMsm) {
            assert_eq!(s.args.get("threads").and_then(|v| v.as_u64()), Some(pool), "{s:?}");
            let cpu = s.args.get("cpu_ns").and_then(|v| v.as_u64()).unwrap_or_else(|| panic!("no cpu_ns: {s:?}"));
            let wall = s.end_ns.unwrap() - s.start_ns;
            assert!(cpu > 0 && cpu <= pool * wall, "cpu_ns {cpu} on {pool} threads in {wall} ns: {s:?}");
        }
    }
}

/// The CPU backend with its a/b/c pooled as `cuda.abc_upload = "pooled"` pools them for a
/// device: a pinner that counts the vectors locked now and ever, and a count of the
/// partitions whose a, b and c arrived pooled and locked.
struct Pooling {
    cpu: CpuBackend,
    locked_now: Arc<std::sync::atomic::AtomicI64>,
    locked_ever: Arc<std::sync::atomic::AtomicU64>,
    pooled: std::sync::atomic::AtomicU64,
    partitions: std::sync::atomic::AtomicU64,
}

impl Pooling {
    fn new() -> Arc<Pooling> {
        Arc::new(Pooling { cpu: CpuBackend::new(0), locked_now: Arc::default(), locked_ever: Arc::default(), pooled: Default::default(), partitions: Default::default() })
    }
}

impl Backend for Pooling {
    fn name(&self) -> &str {
        "cpu"
    }
    fn device(&self) -> u32 {
        0
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        use std::sync::atomic::Ordering::SeqCst;
        self.partitions.fetch_add(1, SeqCst);
        if a.a.pinned() && a.b.pinned() && a.c.pinned() {
            self.pooled.fetch_add(1, SeqCst);
        }
        self.cpu.prove_start(a, p, b, gate)
    }
    fn abc_pinner(&self) -> Option<prover::abc_pool::Pinner> {
        use std::sync::atomic::Ordering::SeqCst;
        struct Unlock(Arc<std::sync::atomic::AtomicI64>);
        impl Drop for Unlock {
            fn drop(&mut self) {
                self.0.fetch_sub(1, SeqCst);
            }
        }
        let (now, ever) = (self.locked_now.clone(), self.locked_ever.clone());
        Some(Arc::new(move |_, _| {
            now.fetch_add(1, SeqCst);
            ever.fetch_add(1, SeqCst);
            Some(Box::new(Unlock(now.clone())) as prover::abc_pool::Keep)
        }))
    }
}

/// Waits up to a second for `f` (sets still being freed off the workers' paths).
fn eventually(f: impl Fn() -> bool) -> bool {
    (0..100).any(|_| f() || {
        std::thread::sleep(Duration::from_millis(10));
        false
    })
}

#[test]
fn pooled_abc_are_locked_once_lent_again_and_every_proof_verifies() {
    use std::sync::atomic::Ordering::SeqCst;
    let dev = Pooling::new();
    let c = cfg(2, 1, LockMode::Kernels);
    // A set per partition that can hold its a/b/c at once: 2 syntheses, the queue, 1 upload.
    let sets = (c.pw + c.queue_capacity + c.gw) as u64;
    let out = run_engine(c, vec![dev.clone()], engine::porep_jobs(6, 3, N, 21));
    for r in &out.results {
        assert_eq!(r.proofs.as_ref().expect("every proof verifies").len(), 3);
    }
    let (parts, pooled, ever) = (dev.partitions.load(SeqCst), dev.pooled.load(SeqCst), dev.locked_ever.load(SeqCst));
    assert_eq!(parts, 18);
    // Partitions admitted before the PCE was ready have fresh vectors (the circuit path
    // cannot write pooled ones); the others are pooled: never more sets than the cap, each
    // locked once and lent again.
    assert!(ever <= 3 * sets, "{ever} vectors locked, over {sets} sets");
    assert!(pooled > ever / 3, "{pooled} pooled partitions from {} sets: no set was lent twice", ever / 3);
    assert!(eventually(|| dev.locked_now.load(SeqCst) == 0), "every pooled vector is unlocked by the end: {}", dev.locked_now.load(SeqCst));
}

#[test]
fn pooled_abc_under_a_small_ram_budget_wait_hold_the_budget_and_verify() {
    use prover::engine::budget::{Budget, ByteSize, MemoryPlan};
    use std::sync::atomic::Ordering::SeqCst;
    use timeline::event::counters;
    let p = params();
    let plan = MemoryPlan::new(&p, true, None, 1);
    // The resident items and two syntheses, four synthesis workers: syntheses wait, sets come
    // back while they do (freed for them) or idle (lent again).
    let budget = plan.needed() + plan.partition.synthesis();
    let mut c = cfg(4, 1, LockMode::Kernels);
    c.memory.total_budget = Budget::Bytes(ByteSize(budget));
    let dev = Pooling::new();
    let out = run_engine(c, vec![dev.clone()], engine::porep_jobs(3, 3, N, 22));
    for r in &out.results {
        assert_eq!(r.proofs.as_ref().expect("every proof verifies").len(), 3);
    }
    assert!(out.run.spans_of(&SpanKind::RamWait).count() > 0, "no synthesis waited for RAM");
    assert!(dev.pooled.load(SeqCst) > 0, "no partition had pooled a/b/c");
    let max = out.run.counters.iter().filter(|c| c.name == counters::RAM_RESERVED_BYTES).map(|c| c.value).fold(0.0, f64::max);
    assert!(max <= budget as f64, "reserved {max} > budget {budget}");
    assert!(eventually(|| dev.locked_now.load(SeqCst) == 0), "every pooled vector is unlocked by the end");
}
