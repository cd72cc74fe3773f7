//! Placement of partitions on devices (issue 22), through the whole engine with real CPU
//! proofs on fake devices: each wraps the CPU backend, reports a device memory of its own
//! and a working set per partition, and stretches its compute (inside the compute gate) so
//! that devices of different speeds can be told apart at any machine speed. Every proof is
//! verified; the timeline records each decision.

use std::sync::Arc;
use std::time::Duration;

use prover::backend::{Backend, Blinding, Gate, GateGuard, Pending, ProveError};
use prover::circuit::PorepLike;
use prover::cpu::CpuBackend;
use prover::engine::{self, Engine, EngineConfig, LockMode};
use prover::events::{EventSink, SinkConfig};
use prover::{setup, Parameters, ProvingAssignment};
use timeline::event::{Run, SpanKind};

const N: u64 = 1 << 8;
const MIB: u64 = 1 << 20;

fn params() -> Arc<Parameters> {
    let c = PorepLike::new(N, 0);
    Arc::new(setup::generate_test_params(c.clone(), &c.id(), 3).unwrap())
}

/// A device with `free` bytes of memory, a working set of `need` bytes per partition, and
/// `kernel` of compute per partition.
struct FakeGpu {
    inner: CpuBackend,
    free: u64,
    need: u64,
    kernel: Duration,
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
        std::thread::sleep(self.kernel);
        g
    }
    fn abc_release(&self) -> Box<dyn FnOnce() + Send> {
        self.inner.abc_release()
    }
}

impl Backend for FakeGpu {
    fn name(&self) -> &str {
        "cpu"
    }
    fn device(&self) -> u32 {
        self.inner.device()
    }
    fn prove_start(&self, a: ProvingAssignment, p: &Parameters, b: Blinding, gate: &dyn Gate) -> Result<Pending, ProveError> {
        self.inner.prove_start(a, p, b, &SlowGate { inner: gate, kernel: self.kernel })
    }
    fn device_free_bytes(&self) -> Option<u64> {
        Some(self.free)
    }
    fn partition_device_bytes(&self, _params: &Parameters) -> Option<u64> {
        Some(self.need)
    }
}

fn fake(device: u32, free_mib: u64, kernel_ms: u64) -> Arc<dyn Backend> {
    Arc::new(FakeGpu { inner: CpuBackend::new(device), free: free_mib * MIB, need: 100 * MIB, kernel: Duration::from_millis(kernel_ms) })
}

fn cfg(pw: u32, gw: u32) -> EngineConfig {
    EngineConfig { pw, gw, lock: LockMode::Kernels, verify: true, rss_sample_ms: 0, seed: Some(3), ..EngineConfig::default() }
}

/// Run `proofs` × `partitions`; every job must succeed and every proof verify. Returns the
/// device of each partition proof and the timeline.
fn run(cfg: EngineConfig, backends: Vec<Arc<dyn Backend>>, proofs: u32, partitions: u32) -> (Vec<u32>, Run) {
    let meta = engine::run_meta(&cfg, &backends);
    let sink = EventSink::start(SinkConfig { collect: true, meta, ..Default::default() }).unwrap();
    let p = params();
    let e = Engine::start(cfg, p.clone(), backends, sink).unwrap();
    for j in engine::porep_jobs(proofs, partitions, N, 21) {
        e.submit(j);
    }
    let results = e.collect(proofs as usize, Duration::from_secs(120)).expect("jobs finish");
    let (_, run) = e.shutdown().unwrap();
    let mut devices = Vec::new();
    for r in &results {
        let proofs = r.proofs.as_ref().unwrap_or_else(|e| panic!("{}: {e}", r.id));
        assert_eq!(proofs.len(), partitions as usize);
        for pp in proofs {
            assert!(prover::verifier::verify(&p.vk, &pp.proof, &pp.public_inputs).unwrap(), "{} verifies", r.id);
            devices.push(pp.device);
        }
    }
    (devices, run)
}

fn count(devices: &[u32], d: u32) -> usize {
    devices.iter().filter(|&&x| x == d).count()
}

#[test]
fn a_device_too_small_for_a_partition_never_gets_one() {
    // Device 0 has 50 MiB free, a partition needs 100 MiB; device 1 has 1 GiB.
    let (devices, run) = run(cfg(2, 2), vec![fake(0, 50, 2), fake(1, 1024, 2)], 2, 4);
    assert_eq!(count(&devices, 0), 0, "{devices:?}");
    assert_eq!(count(&devices, 1), 8);
    // The decisions are in the timeline: every pickup on device 1 with its figures, and
    // the queue span of every partition names the device it went to.
    let pickups: Vec<_> = run.spans.iter().filter(|s| s.kind == SpanKind::GpuPickup).collect();
    assert_eq!(pickups.len(), 8);
    for s in &pickups {
        assert_eq!(s.device, Some(1));
        assert_eq!(s.args.get("need_bytes").and_then(|v| v.as_u64()), Some(100 * MIB));
        let avail = s.args.get("available_bytes").and_then(|v| v.as_u64()).expect("available_bytes");
        assert!(avail >= 100 * MIB && avail <= 1024 * MIB, "{avail}");
        let in_flight = s.args.get("in_flight").and_then(|v| v.as_u64()).expect("in_flight");
        assert!((1..=2).contains(&in_flight), "gw 2: at most 2 calls in flight ({in_flight})");
    }
    assert!(run.spans.iter().filter(|s| s.kind == SpanKind::GpuQueue).all(|s| s.device == Some(1)));
}

#[test]
fn calls_in_flight_hold_their_memory() {
    // One device of 250 MiB, 100 MiB per partition: at most two calls at once even with
    // four GPU workers.
    let (devices, run) = run(cfg(4, 4), vec![fake(0, 250, 20)], 1, 8);
    assert_eq!(count(&devices, 0), 8);
    let calls: Vec<(u64, u64)> = run.spans.iter().filter(|s| s.kind == SpanKind::Gpu).map(|s| (s.start_ns, s.end_ns.unwrap())).collect();
    assert_eq!(timeline::stats::max_concurrency(calls.iter().copied()), 2, "{calls:?}");
}

#[test]
fn with_equal_devices_work_spreads() {
    // Both devices busy (30 ms of compute per partition, the queue kept full): device 0
    // takes the first partition, device 1 (no call in flight) the next, and so on.
    let c = EngineConfig { queue_capacity: 8, ..cfg(4, 1) };
    let (devices, _) = run(c, vec![fake(0, 1024, 30), fake(1, 1024, 30)], 2, 6);
    let (a, b) = (count(&devices, 0), count(&devices, 1));
    eprintln!("equal devices: {a} and {b} partitions");
    assert_eq!(a + b, 12);
    assert!(a >= 4 && b >= 4, "12 partitions over two equal devices: {a} and {b}");
}

#[test]
fn with_one_slow_device_the_fast_one_takes_more() {
    // Device 0: 300 ms per partition; device 1: 20 ms. One worker each; synthesis (4
    // workers, the queue holds 8) keeps up with the fast device, which drains the queue while
    // the slow one holds a partition: the first partition goes to device 0 (both idle, the
    // lower index), the fast device takes the next ones while device 0 is busy.
    let c = EngineConfig { queue_capacity: 8, ..cfg(4, 1) };
    let (devices, _) = run(c, vec![fake(0, 1024, 300), fake(1, 1024, 20)], 2, 6);
    let (slow, fast) = (count(&devices, 0), count(&devices, 1));
    eprintln!("slow device {slow} partitions, fast device {fast}");
    // (Strictly more, not a ratio: the split depends on how fast synthesis refills the queue,
    // and a loaded 2-core CI machine gave 8 against 4 where an idle one gives 10 against 2.)
    assert!(fast > slow, "the fast device proves more: slow {slow}, fast {fast}");
}

#[test]
fn a_partition_no_device_can_hold_goes_to_the_cpu_fallback_or_fails_with_the_sizes() {
    // Both devices have 50 MiB: nowhere to put 100 MiB. With the fallback: proven on the
    // CPU (span `fallback` naming why), every proof verified.
    let (devices, run) = run(cfg(1, 1), vec![fake(0, 50, 0), fake(1, 50, 0)], 1, 2);
    assert_eq!(devices.len(), 2);
    let fb: Vec<_> = run.spans.iter().filter(|s| s.kind.as_str() == "fallback").collect();
    assert_eq!(fb.len(), 2);
    assert!(fb.iter().all(|s| s.args.get("reason").and_then(|v| v.as_str()).is_some_and(|r| r.contains("no device can hold"))));
    // Without it: the job fails, naming the sizes.
    let c = EngineConfig { cpu_fallback: false, ..cfg(1, 1) };
    let backends = vec![fake(0, 50, 0), fake(1, 50, 0)];
    let meta = engine::run_meta(&c, &backends);
    let sink = EventSink::start(SinkConfig { collect: true, meta, ..Default::default() }).unwrap();
    let e = Engine::start(c, params(), backends, sink).unwrap();
    for j in engine::porep_jobs(1, 1, N, 22) {
        e.submit(j);
    }
    let r = e.collect(1, Duration::from_secs(60)).expect("the job ends");
    let err = r[0].proofs.as_ref().unwrap_err();
    assert!(err.contains("no device can hold") && err.contains("100.0 MiB") && err.contains("device 1 50.0 MiB free"), "{err}");
    e.shutdown().unwrap();
}
