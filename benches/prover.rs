//! Prover benches (criterion): our CPU prover against bellperson's CPU prover on the same
//! circuit and parameters, our CPU MSM against blst's multi_exp, and the engine with
//! timeline events on vs off. Sizes default to 2^14 and 2^16 constraints; set
//! `PROOFSCOPE_BENCH_MAX_LOG=18` for 2^18. Ratios are what matter: both sides of each
//! comparison run in the same process, on the same inputs.

use std::sync::Arc;
use std::time::Duration;

use bellperson::groth16 as bp;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ff::Field;
use group::{Curve, Group};
use prover::circuit::PorepLike;
use prover::cpu::CpuBackend;
use prover::engine::{self, Engine, EngineConfig};
use prover::events::{EventSink, SinkConfig};
use prover::{msm, setup, Bls12, G1Affine, G1Projective, Parameters, Scalar};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn max_log() -> u32 {
    std::env::var("PROOFSCOPE_BENCH_MAX_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(16)
}

fn to_bellperson(p: &Parameters) -> bp::Parameters<Bls12> {
    bp::Parameters {
        vk: bp::VerifyingKey {
            alpha_g1: p.vk.alpha_g1,
            beta_g1: p.vk.beta_g1,
            beta_g2: p.vk.beta_g2,
            gamma_g2: p.vk.gamma_g2,
            delta_g1: p.vk.delta_g1,
            delta_g2: p.vk.delta_g2,
            ic: p.vk.ic.clone(),
        },
        h: Arc::new(p.h.to_vec()),
        l: Arc::new(p.l.to_vec()),
        a: Arc::new(p.a.to_vec()),
        b_g1: Arc::new(p.b_g1.to_vec()),
        b_g2: Arc::new(p.b_g2.to_vec()),
    }
}

fn prove(c: &mut Criterion) {
    let mut g = c.benchmark_group("prove");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for log in (14..=max_log()).step_by(2) {
        let n = 1u64 << log;
        let circuit = PorepLike::new(n, 3);
        let params = setup::generate_test_params(circuit.clone(), &circuit.id(), 1).expect("setup");
        let bp_params = to_bellperson(&params);
        let cpu = CpuBackend::with_msm(0, msm::CpuMsm::Blst);
        let own = CpuBackend::with_msm(0, msm::CpuMsm::Proofscope);
        g.bench_with_input(BenchmarkId::new("proofscope_cpu", format!("2^{log}")), &n, |b, _| {
            b.iter(|| prover::prover::prove(circuit.clone(), &params, &cpu, &mut rng).expect("prove"))
        });
        g.bench_with_input(BenchmarkId::new("proofscope_cpu_own_msm", format!("2^{log}")), &n, |b, _| {
            b.iter(|| prover::prover::prove(circuit.clone(), &params, &own, &mut rng).expect("prove"))
        });
        g.bench_with_input(BenchmarkId::new("bellperson_cpu", format!("2^{log}")), &n, |b, _| {
            b.iter(|| bp::create_random_proof(circuit.clone(), &bp_params, &mut rng).expect("bellperson prove"))
        });
    }
    g.finish();
}

fn msm_vs_blst(c: &mut Criterion) {
    let mut g = c.benchmark_group("g1_msm");
    g.sample_size(10).warm_up_time(Duration::from_secs(1));
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for log in [14u32, 16] {
        let n = 1usize << log;
        // Distinct points cheaply: multiples of a random point.
        let p = G1Projective::random(&mut rng);
        let mut acc = p;
        let proj: Vec<G1Projective> = (0..n)
            .map(|_| {
                acc += p;
                acc
            })
            .collect();
        let mut bases = vec![G1Affine::default(); n];
        G1Projective::batch_normalize(&proj, &mut bases);
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let limbs: Vec<msm::Limbs> = scalars.iter().map(msm::to_limbs).collect();
        g.bench_with_input(BenchmarkId::new("proofscope_pippenger", format!("2^{log}")), &n, |b, _| {
            b.iter(|| msm::pippenger::<G1Projective>(&bases, None, &limbs))
        });
        g.bench_with_input(BenchmarkId::new("proofscope_batch_affine", format!("2^{log}")), &n, |b, _| {
            b.iter(|| prover::msm_affine::batch_affine(&bases, None, &limbs))
        });
        g.bench_with_input(BenchmarkId::new("blst_multi_exp", format!("2^{log}")), &n, |b, _| b.iter(|| G1Projective::multi_exp(&proj, &scalars)));
        assert_eq!(msm::pippenger::<G1Projective>(&bases, None, &limbs), G1Projective::multi_exp(&proj, &scalars));
    }
    g.finish();
}

fn engine_events(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_events");
    g.sample_size(10).measurement_time(Duration::from_secs(15)).warm_up_time(Duration::from_secs(1));
    let n = 1u64 << 12;
    let circuit = PorepLike::new(n, 0);
    let params = Arc::new(setup::generate_test_params(circuit.clone(), &circuit.id(), 1).expect("setup"));
    let dir = std::env::temp_dir();
    for events in [false, true] {
        let name = if events { "events_on" } else { "events_off" };
        g.bench_function(BenchmarkId::new(name, "2x4 partitions of 2^12"), |b| {
            b.iter(|| {
                let cfg = EngineConfig { pw: 2, gw: 2, events, backend: "cpu".into(), rss_sample_ms: if events { 50 } else { 0 }, ..EngineConfig::default() };
                let backends = engine::backends_for("cpu", 1).expect("cpu");
                let mut sc = SinkConfig { meta: engine::run_meta(&cfg, &backends), ..Default::default() };
                if events {
                    sc = sc.jsonl_file(&dir.join("proofscope-bench.jsonl")).expect("jsonl").cuzk_file(&dir.join("proofscope-bench.log")).expect("log");
                }
                let e = Engine::start(cfg, params.clone(), backends, EventSink::start(sc).expect("sink")).expect("engine");
                for j in engine::porep_jobs(2, 4, n, 1) {
                    e.submit(j);
                }
                let r = e.collect(2, Duration::from_secs(600)).expect("done");
                e.shutdown().expect("shutdown");
                r
            })
        });
    }
    g.finish();
}

/// The density split of prep_msm: classifying the density-selected scalars serially (the
/// path before, still `Split::classify` over a filtered iterator) against in parallel
/// (`Split::classify_selected_par`), 2^20 scalars, half of them selected, a third of the
/// selected ones 0 or 1 (a PoRep-like mix).
fn prep_split(c: &mut Criterion) {
    let mut g = c.benchmark_group("prep_split");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    let n = 1usize << 20;
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let scalars: Vec<Scalar> = (0..n)
        .map(|i| match i % 3 {
            0 => Scalar::from((i % 2) as u64),
            _ => Scalar::random(&mut rng),
        })
        .collect();
    let keep: Vec<bool> = (0..n).map(|i| (i * 2654435761usize) % 7 < 4).collect();
    let serial = || msm::Split::classify(scalars.iter().enumerate().filter(|(i, _)| keep[*i]).map(|(_, s)| s));
    assert_eq!(msm::Split::classify_selected_par(&scalars, |i| keep[i]), serial());
    g.bench_function(BenchmarkId::new("serial", "2^20"), |b| b.iter(serial));
    g.bench_function(BenchmarkId::new("parallel", "2^20"), |b| b.iter(|| msm::Split::classify_selected_par(&scalars, |i| keep[i])));
    g.finish();
}

/// prep_msm's density splits of one partition, the path before (`prep::plan_by_chunks`: every
/// scalar converted, each query on its own, per-chunk splits joined by a copy) against the
/// one-pass in-place `prep::plan`: a PoRep-like partition synthesised at 2^20 constraints,
/// and a synthetic 2^20-aux assignment of the mix measured at 2^27 on the H200 (~25 % zeros,
/// ~25 % ones, the rest random; A's density ~87 %, B's ~25 %). The mix of each is printed.
fn prep_msm(c: &mut Criterion) {
    let mut g = c.benchmark_group("prep_msm");
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    let porep = prover::synthesis::synthesize(PorepLike::new(1 << 20, 1)).expect("satisfied");
    // The porep-like mix at 2^27: ~25 % zeros, ~25 % ones; A takes ~87 % of the aux, B ~25 %.
    let synthetic = prover::prep::random_assignment(4, 2, 1 << 20, [0.25, 0.25], [0.87, 1.0, 0.25]);
    for (name, asg) in [("porep-like 2^20", &porep), ("synthetic 2^20", &synthetic)] {
        let plan = prover::prep::plan(asg);
        assert_eq!(plan, prover::prep::plan_by_chunks(asg), "{name}");
        let aux = asg.aux_assignment.len() as f64;
        let l = &plan.l;
        eprintln!(
            "prep_msm {name}: {} inputs, {} aux: zeros {:.1} %, ones {:.1} %, tail {:.1} %; A takes {:.1} % of the aux, B {:.1} %",
            asg.input_assignment.len(),
            asg.aux_assignment.len(),
            100.0 * l.zeros as f64 / aux,
            100.0 * l.ones.len() as f64 / aux,
            100.0 * l.tail.len() as f64 / aux,
            100.0 * asg.a_aux_density.count() as f64 / aux,
            100.0 * asg.b_aux_density.count() as f64 / aux,
        );
        g.bench_function(BenchmarkId::new("by_chunks", name), |b| b.iter(|| prover::prep::plan_by_chunks(asg)));
        g.bench_function(BenchmarkId::new("in_place", name), |b| b.iter(|| prover::prep::plan(asg)));
    }
    g.finish();
}

/// Synthesis of one partition (witness, A/B/C evaluations, densities) for both circuit
/// families at 2^18 constraints, what binds every engine run on the H200 host: vectors grown
/// by doubling (`grow`, the path before the engine passed its parameter sizes) against sized
/// up front (`sized`, `synthesize_with_capacity`).
fn synthesis(c: &mut Criterion) {
    use prover::synthesis::{synthesize, synthesize_with_capacity, SizeHint};
    let mut g = c.benchmark_group("synthesis");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    let n = 1u64 << 18;
    for f in prover::circuit::Family::ALL {
        let circuit = f.circuit(n, 1);
        let first = synthesize(circuit.clone()).expect("satisfied");
        let hint = SizeHint { constraints: first.num_constraints(), inputs: first.input_assignment.len(), aux: first.aux_assignment.len() };
        assert_eq!(synthesize_with_capacity(circuit.clone(), hint).expect("satisfied").a, first.a);
        drop(first);
        g.bench_function(BenchmarkId::new(format!("{}/grow", f.name()), "2^18"), |b| b.iter(|| synthesize(circuit.clone()).expect("satisfied")));
        g.bench_function(BenchmarkId::new(format!("{}/sized", f.name()), "2^18"), |b| b.iter(|| synthesize_with_capacity(circuit.clone(), hint).expect("satisfied")));
    }
    g.finish();
}

/// One partition's synthesis, the circuit path against the pre-compiled constraints (PCE:
/// witness only, then the sparse products on all cores), PoRep-like at 2^16 and 2^18 (2^20
/// with `PROOFSCOPE_BENCH_MAX_LOG=20`); the products alone for several row-chunk sizes; and,
/// printed, the same comparison timed by hand (median of 5) with the STREAM-like bandwidth
/// probe, the products' floor (their bytes ÷ the triad rate) and measured ÷ floor.
fn synthesis_pce(c: &mut Criterion) {
    use criterion::BatchSize;
    use prover::pce::{self, bandwidth, PceRun};
    use prover::synthesis::{synthesize_with_capacity, SizeHint};
    let mut g = c.benchmark_group("synthesis_pce");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    let bw = bandwidth::probe(0, bandwidth::DEFAULT_ARRAY_BYTES, 3).expect("probe");
    eprintln!("synthesis_pce: bandwidth with {} threads: copy {:.1} GB/s, triad {:.1} GB/s", bw.threads, bw.copy_gbs, bw.triad_gbs);
    let median = |f: &mut dyn FnMut() -> f64| {
        let mut v: Vec<f64> = (0..5).map(|_| f()).collect();
        v.sort_by(f64::total_cmp);
        v[2]
    };
    for log in (16..=max_log().max(18)).step_by(2) {
        let n = 1u64 << log;
        let circuit = PorepLike::new(n, 1);
        let t = std::time::Instant::now();
        let p = pce::extract(circuit.clone()).expect("extract");
        let extract_s = t.elapsed().as_secs_f64();
        let hint = SizeHint { constraints: p.num_constraints(), inputs: p.num_inputs(), aux: p.num_aux() };
        let want = synthesize_with_capacity(circuit.clone(), hint).expect("satisfied");
        let got = pce::synthesize_pce(circuit.clone(), &p, PceRun::default()).expect("satisfied");
        assert!(got.a == want.a && got.b == want.b && got.c == want.c && got.aux_assignment == want.aux_assignment);
        drop((want, got));
        let size = p.size();
        let at = format!("2^{log}");
        g.bench_function(BenchmarkId::new("circuit", &at), |b| b.iter(|| synthesize_with_capacity(circuit.clone(), hint).expect("satisfied")));
        g.bench_function(BenchmarkId::new("pce", &at), |b| b.iter(|| pce::synthesize_pce(circuit.clone(), &p, PceRun::default()).expect("satisfied")));
        g.bench_function(BenchmarkId::new("pce_witness", &at), |b| b.iter(|| pce::witness::generate(circuit.clone(), p.num_inputs(), p.num_aux()).expect("witness")));
        let w = pce::witness::generate(circuit.clone(), p.num_inputs(), p.num_aux()).expect("witness");
        for chunk_rows in [1usize << 10, 1 << 12, 1 << 14, 1 << 16] {
            let run = PceRun { pool: None, chunk_rows };
            g.bench_function(BenchmarkId::new(format!("pce_products/chunk_{chunk_rows}"), &at), |b| {
                b.iter_batched(|| w.clone(), |w| pce::assemble(w, &p, run).expect("satisfied"), BatchSize::LargeInput)
            });
        }
        // The same comparison by hand, for the ratios.
        let circuit_s = median(&mut || {
            let t = std::time::Instant::now();
            std::hint::black_box(synthesize_with_capacity(circuit.clone(), hint).expect("satisfied"));
            t.elapsed().as_secs_f64()
        });
        let witness_s = median(&mut || {
            let t = std::time::Instant::now();
            std::hint::black_box(pce::witness::generate(circuit.clone(), p.num_inputs(), p.num_aux()).expect("witness"));
            t.elapsed().as_secs_f64()
        });
        let products_s = median(&mut || {
            let w = w.clone();
            let t = std::time::Instant::now();
            std::hint::black_box(pce::assemble(w, &p, PceRun::default()).expect("satisfied"));
            t.elapsed().as_secs_f64()
        });
        let floor = bw.floor_s(p.traffic_bytes());
        let pce_s = witness_s + products_s;
        eprintln!(
            "synthesis_pce {at}: {:.1} B/constraint (extracted in {extract_s:.2} s); circuit {circuit_s:.4} s, pce {pce_s:.4} s (witness {witness_s:.4} + products {products_s:.4}): {:.2}x; products floor {floor:.4} s ({:.1} MiB at {:.1} GB/s), products / floor {:.2}, synthesis / floor {:.2}",
            size.bytes_per_constraint,
            circuit_s / pce_s,
            p.traffic_bytes() as f64 / (1 << 20) as f64,
            bw.triad_gbs,
            products_s / floor,
            pce_s / floor
        );
    }
    g.finish();
}

/// The witness in pieces (`pce::pieces::generate_parallel` on rayon's global pool of the
/// machine's cores, as many threads as the engine's default pool per synthesis worker) against the same witness on one thread
/// (`pce::witness::generate`), both families, checked equal first; the ratio printed from
/// hand-timed medians of the same run.
fn witness(c: &mut Criterion) {
    use prover::circuit::{BenchCircuit, Mix16};
    use prover::pce;
    let mut g = c.benchmark_group("witness");
    g.sample_size(10).measurement_time(Duration::from_secs(6)).warm_up_time(Duration::from_secs(1));
    let threads = rayon::current_num_threads();
    for log in (16..=max_log().max(18)).step_by(2) {
        let n = 1u64 << log;
        for circuit in [BenchCircuit::PorepLike(PorepLike::new(n, 1)), BenchCircuit::Mix16(Mix16::new(n, 1))] {
            let p = pce::extract(circuit.clone()).expect("extract");
            let (inputs, aux) = (p.num_inputs(), p.num_aux());
            drop(p);
            let seq = pce::witness::generate(circuit.clone(), inputs, aux).expect("witness");
            let (par, pieces) = pce::pieces::generate_parallel(circuit.clone(), inputs, aux, None).expect("witness");
            assert!(seq.inputs == par.inputs && seq.aux == par.aux && seq.constraints == par.constraints, "the witness in pieces differs");
            drop((seq, par));
            let family = match &circuit {
                BenchCircuit::PorepLike(_) => "porep-like",
                BenchCircuit::Mix16(_) => "mix16",
            };
            let at = format!("{family}/2^{log}");
            g.bench_function(BenchmarkId::new("sequential", &at), |b| b.iter(|| pce::witness::generate(circuit.clone(), inputs, aux).expect("witness")));
            g.bench_function(BenchmarkId::new("pieces", &at), |b| b.iter(|| pce::pieces::generate_parallel(circuit.clone(), inputs, aux, None).expect("witness")));
            let median = |f: &dyn Fn()| {
                let mut v: Vec<f64> = (0..5)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        f();
                        t.elapsed().as_secs_f64()
                    })
                    .collect();
                v.sort_by(f64::total_cmp);
                v[2]
            };
            let seq_s = median(&|| drop(std::hint::black_box(pce::witness::generate(circuit.clone(), inputs, aux).expect("witness"))));
            let par_s = median(&|| drop(std::hint::black_box(pce::pieces::generate_parallel(circuit.clone(), inputs, aux, None).expect("witness"))));
            eprintln!("witness {at}: one thread {seq_s:.4} s, {pieces} pieces on {threads} threads {par_s:.4} s: {:.2}x", seq_s / par_s);
        }
    }
    g.finish();
}

/// Loading a parameter file (mapped, hash over all cores, points decoded in parallel): the
/// uncompressed file against the compressed one (a square root per point), written from the
/// same parameters in this process. Also the write of each.
fn params_load(c: &mut Criterion) {
    use prover::params::PointEncoding;
    let mut g = c.benchmark_group("params_load");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    let dir = tempfile::tempdir().expect("temp dir");
    for log in (14..=max_log()).step_by(2) {
        let circuit = PorepLike::new(1u64 << log, 3);
        let params = setup::generate_test_params(circuit.clone(), &circuit.id(), 1).expect("setup");
        for enc in [PointEncoding::Uncompressed, PointEncoding::Compressed] {
            // The file the reads load is written first (a filter may leave the writes out).
            let path = dir.path().join(format!("p{log}-{}.bin", enc.name()));
            params.write_file_as(&path, enc).expect("write");
            let scratch = dir.path().join(format!("w{log}-{}.bin", enc.name()));
            g.bench_with_input(BenchmarkId::new(format!("write_{}", enc.name()), format!("2^{log}")), &log, |b, _| b.iter(|| params.write_file_as(&scratch, enc).expect("write")));
            g.bench_with_input(BenchmarkId::new(format!("read_{}", enc.name()), format!("2^{log}")), &log, |b, _| b.iter(|| Parameters::read_file(&path).expect("read")));
        }
    }
    g.finish();
}

criterion_group!(benches, prove, msm_vs_blst, engine_events, prep_split, prep_msm, synthesis, synthesis_pce, witness, params_load);
criterion_main!(benches);
