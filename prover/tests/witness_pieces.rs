//! The parallel witness (`pce::pieces`) against the sequential one (`pce::witness::generate`,
//! the circuit's code on one thread): bit-identical inputs, aux values and constraint counts
//! on both benchmark families, at sizes from the smallest to several SHA-256 blocks and
//! mix16 pieces (numbers of pieces that the threads do not divide, an uneven last piece, a
//! mix16 tail), on 1 to 5 threads; a corrupted row caught as before; and proofs from the
//! parallel witness that verify.

use blstrs::Scalar;
use prover::backend::{Backend, Blinding, NoGate};
use prover::circuit::{mix16, BenchCircuit, Family, PorepLike};
use prover::cpu::CpuBackend;
use prover::pce::{self, pieces, witness, PceRun, Witness};
use prover::{setup, verifier, SynthesisFailure};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
}

fn sequential(c: BenchCircuit) -> Witness {
    witness::generate(c, 2, 0).expect("sequential witness")
}

/// The parallel witness and the number of pieces it ran.
fn parallel(c: BenchCircuit, threads: usize) -> (Witness, usize) {
    pieces::generate_parallel(c, 2, 0, Some(&pool(threads))).expect("parallel witness")
}

fn assert_same(got: &Witness, want: &Witness, what: &str) {
    assert_eq!(got.inputs, want.inputs, "{what}: inputs");
    assert_eq!(got.aux.len(), want.aux.len(), "{what}: aux count");
    if let Some(i) = (0..want.aux.len()).find(|&i| got.aux[i] != want.aux[i]) {
        panic!("{what}: aux value {i} of {} differs", want.aux.len());
    }
    assert_eq!(got.constraints, want.constraints, "{what}: constraints");
}

/// SHA-256 blocks of a porep-like circuit of `n` constraints.
fn blocks(n: u64) -> usize {
    PorepLike::new(n, 0).layout().unwrap().sha_blocks
}

/// Pieces of the arithmetic section (the seed rows, then `PIECE_ROWS` rows a piece).
fn arith_pieces(n: u64) -> usize {
    (PorepLike::new(n, 0).layout().unwrap().arith_rows - 3).div_ceil(prover::circuit::arith::PIECE_ROWS)
}

#[test]
fn porep_like_parallel_witness_is_the_sequential_one() {
    // 2^8: the arithmetic section alone; 2^16: one block (against the IV); 100 003 and 2^17:
    // two (one chained); 2^18: four, 5 pieces on 2 and 3 threads.
    let sizes = [1u64 << 8, 1 << 12, 1 << 16, 100_003, 1 << 17, 1 << 18];
    assert_eq!(sizes.map(blocks), [0, 0, 1, 1, 2, 4]);
    // The arithmetic section in several pieces from 2^16 (~39k rows: 2 pieces).
    assert_eq!(sizes.map(arith_pieces), [1, 1, 2, 3, 3, 5]);
    for n in sizes {
        let want = sequential(Family::PorepLike.circuit(n, 7));
        assert_eq!(want.constraints + want.inputs.len(), n as usize, "{n}: the circuit's size");
        for threads in [1, 2, 3] {
            let (got, ran) = parallel(Family::PorepLike.circuit(n, 7), threads);
            assert_eq!(ran, blocks(n) + arith_pieces(n), "{n}: one piece a block and the arithmetic section's pieces");
            assert_same(&got, &want, &format!("porep-like {n}, {threads} threads"));
        }
    }
}

#[test]
fn mix16_parallel_witness_is_the_sequential_one() {
    // 2^8: one piece; 2^15: two; 2^16 + 5: four, the last one short with a tail of booleanity
    // rows; 2^17: eight.
    for n in [1u64 << 8, 1 << 15, (1 << 16) + 5, 1 << 17] {
        let rows = n as usize - 3;
        let pieces = ((rows - 1) / mix16::GROUP).div_ceil(mix16::PIECE_GROUPS);
        let want = sequential(Family::Mix16.circuit(n, 11));
        for threads in [1, 2, 3] {
            let (got, ran) = parallel(Family::Mix16.circuit(n, 11), threads);
            assert_eq!(ran, pieces, "{n}");
            assert_same(&got, &want, &format!("mix16 {n}, {threads} threads"));
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
    /// Any size (up to three SHA-256 blocks), seed and thread count, both families.
    #[test]
    fn any_size_and_threads_give_the_sequential_witness(n in 256u64..180_000, seed in 0u64..1_000_000, threads in 1usize..6, mix in proptest::bool::ANY) {
        let family = if mix { Family::Mix16 } else { Family::PorepLike };
        let want = sequential(family.circuit(n, seed));
        let (got, _) = parallel(family.circuit(n, seed), threads);
        proptest::prop_assert!(got.inputs == want.inputs && got.aux == want.aux && got.constraints == want.constraints, "{} {n} seed {seed}, {threads} threads", family.name());
    }
}

#[test]
fn a_corrupted_row_is_caught_at_the_same_constraint() {
    // The corrupted arithmetic row is inside the section's piece; two blocks before it.
    let n = 1u64 << 17;
    let p = pce::extract(PorepLike::new(n, 1)).unwrap();
    let mut c = PorepLike::new(n, 1);
    c.corrupt_row = Some(1000);
    let want = match prover::synthesis::synthesize(c.clone()) {
        Err(SynthesisFailure::Unsatisfied { index, .. }) => index,
        other => panic!("circuit path: {other:?}"),
    };
    match pce::synthesize_pce(c, &p, PceRun { pool: Some(&pool(3)), ..PceRun::default() }) {
        Err(SynthesisFailure::Unsatisfied { index, .. }) => assert_eq!(index, want),
        other => panic!("pce path: {other:?}"),
    }
}

#[test]
fn proofs_from_the_parallel_witness_verify() {
    // 2^16: a SHA-256 block and the arithmetic section as two pieces; mix16 in four pieces.
    for (family, n) in [(Family::PorepLike, 1u64 << 16), (Family::Mix16, (1 << 16) + 5)] {
        let c = family.circuit(n, 4);
        let params = setup::generate_test_params(c.clone(), &c.id(), 2).unwrap();
        let p = pce::extract(c.clone()).unwrap();
        let asg = pce::synthesize_pce(c, &p, PceRun { pool: Some(&pool(2)), ..PceRun::default() }).unwrap();
        let inputs: Vec<Scalar> = asg.public_inputs().to_vec();
        let cpu = CpuBackend::new(0);
        let pending = cpu.prove_start(asg, &params, Blinding::random(&mut ChaCha20Rng::seed_from_u64(3)), &NoGate).unwrap();
        let proof = cpu.prove_finish(pending, &params).unwrap();
        assert_eq!(verifier::verify(&params.vk, &proof, &inputs), Ok(true), "{} {n}", family.name());
    }
}
