//! What the CPU fallback allocates while it proves a partition, beyond the assignment it is
//! given, against what the engine reserves for it: with `cpu_fallback` on every GPU worker
//! keeps one call's memory ([`timeline::bytes::WorkingSet::call`]: the MSM preparation and the
//! gathered bases) for the engine's life, and a fallback proof runs in that worker's thread in
//! place of its GPU call. Counted by a global allocator (its own test binary, one test, so
//! nothing else allocates meanwhile). Run 58 (two 2^27 fallbacks beside one reserved call)
//! took the host past its RAM: this pins what one fallback needs.

mod counting;

use prover::backend::{Backend, Blinding, NoGate};
use prover::circuit::PorepLike;
use prover::cpu::CpuBackend;
use prover::engine::budget::PartitionEstimate;
use prover::{prover as pv, setup};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
fn a_fallback_proof_fits_in_the_call_memory_its_worker_keeps() {
    let n = 1u64 << 14;
    let c = PorepLike::new(n, 3);
    let params = setup::generate_test_params(c.clone(), &c.id(), 7).unwrap();
    let call = PartitionEstimate::for_shape(&params.shape()).call as usize;
    let cpu = CpuBackend::new(0);
    let prove = |seed: u64| {
        let asg = pv::synthesize(c.clone()).unwrap();
        let blinding = Blinding::random(&mut ChaCha20Rng::seed_from_u64(seed));
        counting::peak_of(|| {
            let pending = cpu.prove_start(asg, &params, blinding, &NoGate).unwrap();
            cpu.prove_finish(pending, &params).unwrap()
        })
    };
    // The first proof starts rayon's pool and blst's tables; the second is the one counted.
    let _ = prove(1);
    let (peak, _) = prove(2);
    // The assignment (a, b, c and the witness) is live when counting starts: the peak is what
    // the fallback adds to it.
    eprintln!("2^14 porep-like: the CPU fallback's peak beyond its assignment {peak} B = {:.2}× one call's reserved memory ({call} B)", peak as f64 / call as f64);
    assert!(peak > call / 4, "the counter saw the fallback's work ({peak} B against a call of {call} B)");
    assert!(peak <= call, "a fallback proof needs {peak} B beyond its assignment, more than the {call} B its worker keeps");
}
