//! The pre-compiled path against the circuit path: identical assignments (a, b, c, inputs,
//! aux, densities) on both circuit families at several sizes, the same unsatisfied index,
//! byte-identical proofs, and the cache file's failure modes (corrupt, truncated, another
//! shape).

use std::path::Path;

use blstrs::Scalar;
use prover::backend::{Backend, Blinding, NoGate, ProveError};
use prover::circuit::{Family, PorepLike};
use prover::cpu::CpuBackend;
use prover::pce::{self, cache, OnCorrupt, PceKey, PceRun, PceSource};
use prover::synthesis::{synthesize, ProvingAssignment};
use prover::{setup, verifier, SynthesisFailure};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn assert_same(x: &ProvingAssignment, y: &ProvingAssignment, what: &str) {
    assert_eq!(x.num_constraints(), y.num_constraints(), "{what}: constraints");
    assert!(x.a == y.a, "{what}: a differs");
    assert!(x.b == y.b, "{what}: b differs");
    assert!(x.c == y.c, "{what}: c differs");
    assert_eq!(x.input_assignment, y.input_assignment, "{what}: inputs");
    assert!(x.aux_assignment == y.aux_assignment, "{what}: aux");
    assert_eq!(x.a_aux_density, y.a_aux_density, "{what}: a-aux density");
    assert_eq!(x.b_input_density, y.b_input_density, "{what}: b-input density");
    assert_eq!(x.b_aux_density, y.b_aux_density, "{what}: b-aux density");
}

fn pce_path<C: pce::CircuitPieces + Send>(c: C, pce: &pce::Pce) -> ProvingAssignment {
    pce::synthesize_pce(c, pce, PceRun::default()).expect("pce synthesis")
}

#[test]
fn pce_assignments_equal_the_circuit_path_on_every_family_and_size() {
    // 2^16 puts a SHA-256 block into the PoRep-like circuit (MultiEq rows, 2^k coefficients).
    for (family, logs) in [(Family::PorepLike, &[10u32, 12, 14, 16][..]), (Family::Mix16, &[10, 12, 14][..])] {
        for &log in logs {
            let n = 1u64 << log;
            // The shape does not depend on the witness: extracted from one seed, used for others.
            let p = pce::extract(family.circuit(n, 99)).expect("extract");
            assert_eq!(p.num_constraints() as u64, n, "{} 2^{log}", family.name());
            for seed in [1u64, 2] {
                let what = format!("{} 2^{log} seed {seed}", family.name());
                let want = synthesize(family.circuit(n, seed)).expect("circuit path");
                assert_same(&pce_path(family.circuit(n, seed), &p), &want, &what);
            }
            // Several chunk sizes and a small pool give the same result.
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let want = synthesize(family.circuit(n, 5)).unwrap();
            for chunk_rows in [1, 7, 1 << 20] {
                let got = pce::synthesize_pce(family.circuit(n, 5), &p, PceRun { pool: Some(&pool), chunk_rows }).unwrap();
                assert_same(&got, &want, &format!("{} 2^{log} chunk {chunk_rows}", family.name()));
            }
        }
    }
}

#[test]
fn pce_extraction_with_the_witness_gives_the_same_matrices_and_assignment() {
    let c = PorepLike::new(1 << 12, 3);
    let (p, w) = pce::extract_with_witness(c.clone()).unwrap();
    assert_eq!(p, pce::extract(PorepLike::new(1 << 12, 8)).unwrap(), "same shape, same PCE whatever the seed");
    let got = pce::assemble(w, &p, PceRun::default()).unwrap();
    assert_same(&got, &synthesize(c).unwrap(), "extract_with_witness");
}

#[test]
fn pce_products_into_reused_vectors_equal_fresh_ones() {
    // Vectors of an earlier partition (other values), too short, too long or empty: the
    // products overwrite them whole, and the unsatisfied row is found again.
    let p = pce::extract(PorepLike::new(1 << 12, 1)).unwrap();
    let columns = |seed: u64, corrupt: Option<usize>| {
        let mut c = PorepLike::new(1 << 12, seed);
        c.corrupt_row = corrupt;
        pce::witness::generate(c, p.num_inputs(), p.num_aux()).unwrap().into_columns()
    };
    let (w1, w2) = (columns(1, None), columns(2, None));
    let want = pce::products(&p, &w2, 64);
    assert_eq!(want.first_unsatisfied, None);
    let n = p.num_constraints();
    let junk = |len: usize| vec![-Scalar::from(7u64); len];
    // An earlier result large enough keeps its allocations.
    let earlier = pce::products(&p, &w1, 64);
    let ptrs = (earlier.a.as_ptr(), earlier.b.as_ptr(), earlier.c.as_ptr());
    let got = pce::eval::products_into(&p, &w2, 64, earlier);
    assert!(got == want && (got.a.as_ptr(), got.b.as_ptr(), got.c.as_ptr()) == ptrs, "the vectors are reused in place");
    for (what, out) in [
        ("an earlier partition's", pce::products(&p, &w1, 64)),
        ("short", pce::Products { a: junk(3), b: junk(n - 1), c: Vec::new(), first_unsatisfied: Some(9) }),
        ("long", pce::Products { a: junk(n + 5), b: junk(2 * n), c: junk(n), first_unsatisfied: None }),
        ("empty", pce::Products::default()),
    ] {
        let got = pce::eval::products_into(&p, &w2, 64, out);
        assert!(got == want, "{what} vectors");
    }
    let bad = pce::products(&p, &columns(2, Some(10)), 64).first_unsatisfied;
    assert!(bad.is_some());
    assert_eq!(pce::eval::products_into(&p, &columns(2, Some(10)), 64, want).first_unsatisfied, bad);
}

#[test]
fn pce_streamed_stores_give_the_same_products() {
    // Chunks shorter than, not a multiple of, and longer than the 32 rows a streamed chunk
    // evaluates at a time; both families; an unsatisfied row in a later sub-block of a chunk.
    use pce::eval::{products_into_with, Stores};
    for family in [Family::PorepLike, Family::Mix16] {
        let c = family.circuit(1 << 11, 4);
        let (p, w) = pce::extract_with_witness(c).unwrap();
        let w = w.into_columns();
        let want = pce::products(&p, &w, 64);
        for chunk in [1, 7, 32, 100, 4096] {
            for stores in [Stores::Streamed, Stores::Buffered] {
                let got = products_into_with(&p, &w, chunk, stores, pce::Products::default());
                assert!(got == want, "{family:?}, {stores:?}, chunks of {chunk} rows");
            }
        }
    }
    let p = pce::extract(PorepLike::new(1 << 12, 1)).unwrap();
    for bad_row in [10, 45, 300] {
        let mut c = PorepLike::new(1 << 12, 6);
        c.corrupt_row = Some(bad_row);
        let w = pce::witness::generate(c, p.num_inputs(), p.num_aux()).unwrap().into_columns();
        let want = pce::products(&p, &w, 100);
        assert!(want.first_unsatisfied.is_some());
        for stores in [Stores::Streamed, Stores::Buffered] {
            let got = products_into_with(&p, &w, 100, stores, pce::Products::with_capacity(3));
            assert!(got == want, "{stores:?}, corrupt row {bad_row}: {:?} against {:?}", got.first_unsatisfied, want.first_unsatisfied);
        }
    }
}

#[test]
fn pce_shape_hash_is_stable_and_tells_shapes_apart() {
    let h = |f: Family, n: u64, s: u64| pce::extract(f.circuit(n, s)).unwrap().shape_hash();
    assert_eq!(h(Family::PorepLike, 1 << 10, 1), h(Family::PorepLike, 1 << 10, 2));
    assert_ne!(h(Family::PorepLike, 1 << 10, 1), h(Family::PorepLike, 1 << 11, 1));
    assert_ne!(h(Family::PorepLike, 1 << 10, 1), h(Family::Mix16, 1 << 10, 1));
}

#[test]
fn pce_unsatisfied_witness_is_an_error_naming_the_same_constraint() {
    let mut c = PorepLike::new(1 << 10, 4);
    c.corrupt_row = Some(10);
    let p = pce::extract(PorepLike::new(1 << 10, 4)).unwrap();
    let want = match synthesize(c.clone()) {
        Err(SynthesisFailure::Unsatisfied { index, .. }) => index,
        other => panic!("circuit path: {other:?}"),
    };
    match pce::synthesize_pce(c, &p, PceRun::default()) {
        Err(e @ SynthesisFailure::Unsatisfied { .. }) => {
            let SynthesisFailure::Unsatisfied { index, .. } = &e else { unreachable!() };
            assert_eq!(*index, want);
            assert!(e.to_string().contains(&format!("constraint #{want}")), "{e}");
        }
        other => panic!("pce path: {other:?}"),
    }
}

#[test]
fn pce_of_another_shape_is_refused() {
    let p = pce::extract(PorepLike::new(1 << 10, 1)).unwrap();
    match pce::synthesize_pce(PorepLike::new(1 << 11, 1), &p, PceRun::default()) {
        Err(e @ SynthesisFailure::PceMismatch(_)) => assert!(e.to_string().contains("1024"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn pce_proof_is_byte_identical_to_the_circuit_path_and_verifies() {
    for family in Family::ALL {
        let c = family.circuit(1 << 10, 6);
        let params = setup::generate_test_params(c.clone(), &c.id(), 21).unwrap();
        let p = pce::extract(c.clone()).unwrap();
        let prove = |asg: ProvingAssignment| -> Result<(Vec<u8>, Vec<Scalar>), ProveError> {
            let cpu = CpuBackend::new(0);
            let inputs = asg.public_inputs().to_vec();
            let blinding = Blinding::random(&mut ChaCha20Rng::seed_from_u64(77));
            let pending = cpu.prove_start(asg, &params, blinding, &NoGate)?;
            let proof = cpu.prove_finish(pending, &params)?;
            assert_eq!(verifier::verify(&params.vk, &proof, &inputs), Ok(true));
            Ok((proof.to_bytes().to_vec(), inputs))
        };
        let a = prove(synthesize(c.clone()).unwrap()).unwrap();
        let b = prove(pce_path(c, &p)).unwrap();
        assert_eq!(a, b, "{}", family.name());
    }
}

fn key_of(p: &pce::Pce, id: &str) -> PceKey {
    PceKey::of(p, id)
}

#[test]
fn pce_cache_round_trips_and_names_a_corrupt_or_truncated_file() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params.bin");
    let path = cache::cache_path(&params);
    assert_eq!(path, dir.path().join("params.bin.pce"));
    let c = PorepLike::new(1 << 10, 1);
    let p = pce::extract(c.clone()).unwrap();
    let key = key_of(&p, &c.id());
    let (built, source) = pce::load_or_build(&params, &key, c.clone(), OnCorrupt::Error).unwrap();
    assert_eq!((source, &built), (PceSource::Built, &p));
    let (loaded, source) = pce::load_or_build(&params, &key, c.clone(), OnCorrupt::Error).unwrap();
    assert_eq!((source, &loaded), (PceSource::Loaded, &p));
    assert_eq!(loaded.shape_hash(), p.shape_hash());
    let good = std::fs::read(&path).unwrap();
    let name = path.display().to_string();
    let expect_corrupt = |bytes: &[u8], what: &str| {
        std::fs::write(&path, bytes).unwrap();
        match pce::load_or_build(&params, &key, c.clone(), OnCorrupt::Error) {
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains(&name) && msg.contains(what), "{msg}");
            }
            Ok((_, source)) => panic!("{what}: accepted ({source:?})"),
        }
    };
    // A flipped byte in the payload, in the header, the file cut short, cut to nothing.
    let mut bad = good.clone();
    let at = good.len() - 100;
    bad[at] ^= 1;
    expect_corrupt(&bad, "hash");
    let mut bad = good.clone();
    bad[20] ^= 1; // the input count: the header's own hash catches it before the key is compared
    expect_corrupt(&bad, "header hash");
    expect_corrupt(&good[..good.len() - 1], "truncated");
    expect_corrupt(&good[..300], "truncated");
    expect_corrupt(b"PSC", "not a PCE cache");
    expect_corrupt(b"hello world, not a cache at all", "not a PCE cache");
    // Asked to, a corrupt cache is rebuilt (and rewritten).
    let mut bad = good.clone();
    bad[at] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    let (rebuilt, source) = pce::load_or_build(&params, &key, c.clone(), OnCorrupt::Rebuild).unwrap();
    assert!(matches!(source, PceSource::Rebuilt(ref why) if why.contains("hash")), "{source:?}");
    assert_eq!(rebuilt, p);
    assert_eq!(std::fs::read(&path).unwrap(), good);
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn pce_cache_for_another_shape_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("p.bin");
    let small = PorepLike::new(1 << 10, 1);
    let p_small = pce::extract(small.clone()).unwrap();
    pce::load_or_build(&params, &key_of(&p_small, &small.id()), small.clone(), OnCorrupt::Error).unwrap();
    let big = PorepLike::new(1 << 11, 1);
    let p_big = pce::extract(big.clone()).unwrap();
    let key_big = key_of(&p_big, &big.id());
    let (got, source) = pce::load_or_build(&params, &key_big, big.clone(), OnCorrupt::Error).unwrap();
    assert!(matches!(source, PceSource::Rebuilt(ref why) if why.contains("n=1024")), "{source:?}");
    assert_eq!(got, p_big);
    // The cache now holds the new shape.
    assert!(matches!(cache::read(&cache::cache_path(&params), &key_big).unwrap(), cache::Lookup::Hit(ref x) if *x == p_big));
    // Same circuit id and counts, another parameter file: rebuilt too.
    let mut other = key_big.clone();
    other.params_hash = [7; 32];
    let (_, source) = pce::load_or_build(&params, &other, big, OnCorrupt::Error).unwrap();
    assert!(matches!(source, PceSource::Rebuilt(ref why) if why.contains("another parameter file")), "{source:?}");
}

#[test]
fn pce_key_of_a_parameter_file_carries_its_hash() {
    let dir = tempfile::tempdir().unwrap();
    let c = PorepLike::new(1 << 8, 1);
    let params = setup::generate_test_params(c.clone(), &c.id(), 3).unwrap();
    let path = dir.path().join("params.bin");
    params.write_file(&path).unwrap();
    let key = PceKey::for_params(&params.info, Some(&path)).unwrap();
    assert_ne!(key.params_hash, [0; 32]);
    assert_eq!((key.circuit_id.as_str(), key.constraints), (c.id().as_str(), 256));
    assert!(PceKey::for_params(&params.info, Some(Path::new("/nonexistent/params.bin"))).unwrap_err().to_string().contains("/nonexistent/params.bin"));
}

#[test]
fn pce_is_compact_on_the_porep_like_circuit() {
    // The target is ≤ 100 B/constraint; the arithmetic section's per-round constants are
    // the table's bulk.
    for log in [14u32, 16] {
        let p = pce::extract(PorepLike::new(1 << log, 1)).unwrap();
        let s = p.size();
        assert!(s.bytes_per_constraint <= 100.0, "2^{log}: {s:?}");
        assert_eq!(s.index_bytes[1], 1, "B's coefficients are few: {s:?}");
    }
}

mod engine_runs {
    //! The engine with `synthesis = "pce"`: proofs equal to the circuit path's, the PCE made
    //! once (span `pce_build`) and cached beside the parameter file, read back by the next
    //! engine, and a corrupt cache failing the partitions with the file's name (or rebuilt).

    use std::path::PathBuf;
    use std::sync::{Arc, OnceLock};
    use std::time::Duration;

    use prover::circuit::PorepLike;
    use prover::engine::{self, Engine, EngineConfig, JobResult, StartOptions, SynthesisMode};
    use prover::events::{EventSink, SinkConfig};
    use prover::pce::cache;
    use prover::{setup, Parameters};
    use timeline::event::{Run, SpanKind};

    const N: u64 = 1 << 10;

    fn params() -> Arc<Parameters> {
        static P: OnceLock<Arc<Parameters>> = OnceLock::new();
        P.get_or_init(|| {
            let c = PorepLike::new(N, 0);
            Arc::new(setup::generate_test_params(c.clone(), &c.id(), 5).unwrap())
        })
        .clone()
    }

    fn cfg(synthesis: SynthesisMode) -> EngineConfig {
        EngineConfig { pw: 2, gw: 1, backend: "cpu".into(), verify: true, seed: Some(4), rss_sample_ms: 0, synthesis, ..EngineConfig::default() }
    }

    fn run(cfg: EngineConfig, params_path: Option<PathBuf>) -> (Vec<JobResult>, Run) {
        let backends = engine::backends_for("cpu", 1).unwrap();
        let meta = engine::run_meta(&cfg, &backends);
        let sink = EventSink::start(SinkConfig { collect: true, meta, ..Default::default() }).unwrap();
        let e = Engine::start_with(cfg, params(), backends, sink, StartOptions { params_path, pce: None }).unwrap();
        for j in engine::porep_jobs(2, 3, N, 9) {
            e.submit(j);
        }
        let mut results = e.collect(2, Duration::from_secs(120)).expect("jobs finish");
        results.sort_by(|a, b| a.id.cmp(&b.id));
        let (_, run) = e.shutdown().unwrap();
        (results, run)
    }

    fn proof_bytes(results: &[JobResult]) -> Vec<Vec<u8>> {
        results.iter().flat_map(|r| r.proofs.as_ref().expect("proof ok").iter().map(|p| p.proof.to_bytes().to_vec())).collect()
    }

    fn builds(run: &Run) -> Vec<String> {
        run.spans_of(&SpanKind::PceBuild).map(|s| s.args.get("source").and_then(|v| v.as_str()).unwrap_or("?").to_string()).collect()
    }

    #[test]
    fn pce_engine_proves_like_the_circuit_path_and_reuses_its_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("params.bin");
        params().write_file(&path).unwrap();
        let (want, run_c) = run(cfg(SynthesisMode::Circuit), Some(path.clone()));
        assert_eq!(run_c.spans_of(&SpanKind::Witness).count(), 0);
        assert!(!cache::cache_path(&path).exists(), "the circuit path makes no cache");
        let want = proof_bytes(&want);
        assert_eq!(want.len(), 6);

        let (got, run_p) = run(cfg(SynthesisMode::Pce), Some(path.clone()));
        assert_eq!(proof_bytes(&got), want, "same proofs as the circuit path");
        assert_eq!(builds(&run_p), ["extracted"]);
        assert!(cache::cache_path(&path).exists());
        assert_eq!(run_p.meta.extra.get("synthesis").and_then(|v| v.as_str()), Some("pce"));
        // Every partition is one synthesis; on the pre-compiled path it holds a
        // `constraints` span with the bytes the products move (one without `witness`: the
        // extraction produced that partition's witness).
        let synth: Vec<_> = run_p.spans_of(&SpanKind::Synthesis).collect();
        assert_eq!(synth.len(), 6);
        let products: Vec<_> = run_p.spans_of(&SpanKind::Constraints).collect();
        assert!(!products.is_empty());
        let p = prover::pce::extract(PorepLike::new(N, 0)).unwrap();
        for s in &products {
            assert_eq!(s.args.get("bytes").and_then(|v| v.as_u64()), Some(p.traffic_bytes()), "{s:?}");
            assert!(synth.iter().any(|y| y.partition == s.partition && y.job == s.job && y.start_ns <= s.start_ns && s.end_ns <= y.end_ns), "nested in its synthesis");
        }
        assert_eq!(run_p.spans_of(&SpanKind::Witness).count() + 1, products.len());
        for s in &run_p.spans {
            assert!(SpanKind::known(s.kind.as_str()).is_some(), "unknown span kind `{}`", s.kind);
        }

        // The next engine reads the cache; its own pools of 2 threads change nothing.
        let (again, run_q) = run(EngineConfig { synthesis_threads: 2, ..cfg(SynthesisMode::Pce) }, Some(path.clone()));
        assert_eq!(proof_bytes(&again), want);
        assert_eq!(builds(&run_q), ["cache"]);
        // A partition that starts while the first reads the cache waits for it (`pce_wait`)
        // rather than taking the circuit path: every synthesis is on the pre-compiled path.
        let paths: Vec<_> = run_q.spans_of(&SpanKind::Synthesis).map(|s| s.args.get("path").and_then(|v| v.as_str()).unwrap_or("circuit").to_string()).collect();
        assert!(paths.iter().all(|p| p == "pce"), "{paths:?}");
        assert_eq!(run_q.spans_of(&SpanKind::Witness).count(), run_q.spans_of(&SpanKind::Constraints).count());
        // The witness spans say the threads of the pool their pieces ran on (the worker's
        // own: 2 when set, else the machine's cores) and how many pieces ran (2^10: no SHA-256 block, the
        // arithmetic section alone).
        let args = |run: &Run| -> Vec<(Option<u64>, Option<u64>, Option<u64>)> {
            run.spans_of(&SpanKind::Witness).map(|s| (s.args.get("aux").and_then(|v| v.as_u64()), s.args.get("threads").and_then(|v| v.as_u64()), s.args.get("pieces").and_then(|v| v.as_u64()))).collect()
        };
        let aux = Some(p.num_aux() as u64);
        assert!(args(&run_q).iter().all(|&a| a == (aux, Some(2), Some(1))), "{:?}", args(&run_q));
        let cores = Some(std::thread::available_parallelism().map_or(1, |n| n.get()) as u64);
        assert!(args(&run_p).iter().all(|&a| a == (aux, cores, Some(1))), "{:?}", args(&run_p));
        // Each synthesis on its worker's own pool carries that pool's CPU time over it
        // (`cpu_ns`: more than nothing, at most its threads × its wall time, with some slack
        // for the clocks' reads) and the pool's threads: the demand the simulator calibrates.
        for s in run_q.spans_of(&SpanKind::Synthesis) {
            let cpu = s.args.get("cpu_ns").and_then(|v| v.as_u64()).unwrap_or_else(|| panic!("no cpu_ns: {s:?}"));
            let wall = s.end_ns.unwrap() - s.start_ns;
            assert_eq!(s.args.get("threads").and_then(|v| v.as_u64()), Some(2), "{s:?}");
            assert!(cpu > 0 && cpu <= 2 * wall + 20_000_000, "cpu_ns {cpu} against 2 threads × {wall} ns");
        }
        // On one shared pool the others' work would count too: no cpu_ns.
        let (_, run_s) = run(EngineConfig { synthesis_threads: 2, synthesis_shared_pool: true, ..cfg(SynthesisMode::Pce) }, Some(path.clone()));
        assert!(run_s.spans_of(&SpanKind::Synthesis).all(|s| !s.args.contains_key("cpu_ns")));
    }

    #[test]
    fn pce_engine_fails_on_a_corrupt_cache_naming_it_or_rebuilds_it_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("params.bin");
        params().write_file(&path).unwrap();
        let pce_path = cache::cache_path(&path);
        std::fs::write(&pce_path, b"PSCOPEPC and then nothing much").unwrap();
        let (results, _) = run(cfg(SynthesisMode::Pce), Some(path.clone()));
        for r in &results {
            let e = r.proofs.as_ref().expect_err("a corrupt cache fails the proof");
            assert!(e.contains(&pce_path.display().to_string()) && e.contains("corrupt"), "{e}");
        }
        let (results, run_r) = run(EngineConfig { pce_rebuild_corrupt: true, ..cfg(SynthesisMode::Pce) }, Some(path.clone()));
        assert_eq!(proof_bytes(&results).len(), 6);
        assert_eq!(builds(&run_r), ["rebuilt"]);
        // Without a parameter file the PCE lives in memory only.
        let (results, run_m) = run(cfg(SynthesisMode::Pce), None);
        assert_eq!(proof_bytes(&results).len(), 6);
        assert_eq!(builds(&run_m), ["extracted"]);
    }
}
