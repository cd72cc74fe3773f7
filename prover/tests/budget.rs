//! The host-RAM budget on this machine (issue 19): a small budget, real CPU proofs. With
//! room for two partitions' working sets beside the resident items and four synthesis
//! workers, syntheses wait for RAM (`ram_wait` spans), every proof verifies, the reserved
//! bytes (counter `ram_reserved_bytes`) never exceed the budget, and the process's RSS
//! stays under the budget plus the RSS it had before the engine started. Its own test
//! binary: RSS is the whole process's, so no other test may run beside it.

use std::sync::Arc;
use std::time::Duration;

use prover::circuit::PorepLike;
use prover::engine::budget::{ByteSize, MemoryPlan, Budget};
use prover::engine::{self, Engine, EngineConfig, LockMode};
use prover::events::{rss_bytes, EventSink, SinkConfig};
use prover::{setup, Parameters};
use timeline::event::{counters, extra, SpanKind};

const N: u64 = 1 << 14;

/// At full scale every vector of a partition is far above glibc's largest mmap threshold
/// (32 MiB), so it is mapped on allocation and unmapped on free: RSS follows the live
/// bytes. This test's vectors are ~0.5 MiB, under the threshold glibc raises dynamically
/// (up to 32 MiB), where freed memory stays in the threads' arenas and RSS keeps its high
/// mark. A fixed threshold of 128 KiB puts this run in the full-scale regime.
fn large_allocations_are_mapped() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets an allocator parameter; any value is accepted or refused (0).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[test]
fn a_small_ram_budget_makes_syntheses_wait_and_holds() {
    large_allocations_are_mapped();
    let c = PorepLike::new(N, 0);
    let params: Arc<Parameters> = Arc::new(setup::generate_test_params(c.clone(), &c.id(), 3).unwrap());
    // gw 1 on one device: one GPU worker's call memory stays reserved.
    let plan = MemoryPlan::new(&params, true, None, 1);
    // The resident items and two syntheses.
    let budget = plan.needed() + plan.partition.synthesis();
    let mut cfg = EngineConfig { pw: 4, gw: 1, lock: LockMode::Kernels, verify: true, rss_sample_ms: 2, seed: Some(3), backend: "cpu".into(), ..EngineConfig::default() };
    cfg.memory.total_budget = Budget::Bytes(ByteSize(budget));
    let backends = engine::backends_for_config(&cfg).unwrap();
    let meta = engine::run_meta(&cfg, &backends);
    assert_eq!(meta.extra.get(extra::RAM_BUDGET_BYTES).and_then(|v| v.as_u64()), Some(budget));
    // The timeline to a file, read back after (collected in memory it would grow the RSS).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let sink = EventSink::start(SinkConfig { rss_every: Some(Duration::from_millis(5)), meta, ..Default::default() }.jsonl_file(&path).unwrap()).unwrap();
    // The process before the engine: parameters made, allocator warm.
    let baseline = rss_bytes().expect("this test needs /proc/self/statm");
    let e = Engine::start(cfg, params.clone(), backends, sink).unwrap();
    assert_eq!(e.memory_plan(), plan);
    let jobs = engine::porep_jobs(2, 3, N, 11);
    let n = jobs.len();
    for j in jobs {
        e.submit(j);
    }
    let results = e.collect(n, Duration::from_secs(600)).expect("jobs finish");
    let peak_reserved = e.ram().peak();
    let pce_bytes = e.pce().map_or(0, |p| p.heap_bytes());
    assert!(pce_bytes > 0, "the PCE was made");
    e.shutdown().unwrap();
    let run = timeline::read::read_path(&path, None).unwrap();
    // Diagnostics: RSS above the baseline against the reserved bytes, over time.
    {
        let mut res = 0.0;
        let mut worst = (0.0f64, 0u64, 0.0f64);
        let mut cs: Vec<_> = run.counters.iter().filter(|c| c.name == counters::RAM_RESERVED_BYTES || c.name == counters::RSS_BYTES).collect();
        cs.sort_by_key(|c| c.t_ns);
        for c in cs {
            if c.name == counters::RAM_RESERVED_BYTES {
                res = c.value;
            } else if c.value - baseline as f64 - res > worst.0 {
                worst = (c.value - baseline as f64 - res, c.t_ns, res);
            }
        }
        eprintln!("plan {plan:?}; worst RSS above baseline + reserved: {:.2} MiB at {:.3} s (reserved then {:.2} MiB)", worst.0 / 1048576.0, worst.1 as f64 / 1e9, worst.2 / 1048576.0);
    }
    for r in &results {
        let proofs = r.proofs.as_ref().unwrap_or_else(|e| panic!("{}: {e}", r.id));
        assert_eq!(proofs.len(), 3);
        for p in proofs {
            assert!(prover::verifier::verify(&params.vk, &p.proof, &p.public_inputs).unwrap(), "{}: a proof does not verify", r.id);
        }
    }
    // Syntheses waited for RAM: four workers, room for two partitions.
    let waits: Vec<_> = run.spans_of(&SpanKind::RamWait).collect();
    assert!(!waits.is_empty(), "no synthesis waited for RAM");
    assert!(waits.iter().all(|s| s.job.is_some() && s.partition.is_some() && s.worker.is_some()), "a ram_wait without its partition");
    // The budget held: every sample of the reserved bytes, and the budget's own peak.
    let reserved: Vec<f64> = run.counters.iter().filter(|c| c.name == counters::RAM_RESERVED_BYTES).map(|c| c.value).collect();
    assert!(reserved.len() >= 2 * n, "a sample per reservation and release: {}", reserved.len());
    let max = reserved.iter().cloned().fold(0.0, f64::max);
    assert!(max <= budget as f64 && peak_reserved <= budget, "reserved {max} (peak {peak_reserved}) > budget {budget}");
    assert!(max >= (plan.resident() + 2 * plan.partition.synthesis()) as f64 - 1.0, "two syntheses should have been in flight at once: {max} of {budget}");
    assert_eq!(*reserved.last().unwrap(), (plan.params + pce_bytes + plan.calls()) as f64, "everything but the resident items (parameters, PCE at its real size, the GPU worker's call) is given back");
    // RSS: the engine never held more than the budget beyond what the process held before.
    let rss_peak = run.counters.iter().filter(|c| c.name == counters::RSS_BYTES).map(|c| c.value as u64).max().expect("RSS samples");
    assert!(rss_peak <= baseline + budget, "RSS peaked at {rss_peak} B, above the baseline {baseline} B + the budget {budget} B");
    eprintln!(
        "budget {:.1} MiB (resident {:.1} MiB, one synthesis {:.1} MiB), {} ram_wait spans, reserved peak {:.1} MiB, RSS baseline {:.1} MiB, peak {:.1} MiB",
        budget as f64 / 1048576.0,
        plan.resident() as f64 / 1048576.0,
        plan.partition.synthesis() as f64 / 1048576.0,
        waits.len(),
        max / 1048576.0,
        baseline as f64 / 1048576.0,
        rss_peak as f64 / 1048576.0
    );
}

