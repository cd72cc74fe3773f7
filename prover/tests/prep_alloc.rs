//! What `prep_msm`'s density splits allocate beyond their output, counted by a global
//! allocator (its own test binary, one test, so nothing else allocates meanwhile): the
//! in-place `prep::plan` a few hundred bytes per chunk of 16 384 scalars, the previous
//! `prep::plan_by_chunks` about its whole output again in per-chunk splits (printed).

mod counting;

use prover::msm::Split;
use prover::prep;

use counting::peak_of;

fn bytes(s: &Split) -> usize {
    s.ones.capacity() * 4 + s.tail_idx.capacity() * 4 + s.tail.capacity() * 32
}

#[test]
fn the_in_place_plan_allocates_little_beyond_its_output() {
    // The mix measured at 2^27 on the H200: ~25 % zeros, ~25 % ones; A takes ~87 % of the
    // aux, B ~25 %.
    let n = 1usize << 18;
    let asg = prep::random_assignment(5, 3, n, [0.25, 0.25], [0.87, 0.5, 0.25]);
    // Start the rayon pool (its threads allocate) before counting.
    let _ = prep::plan(&asg);

    let (new_peak, new) = peak_of(|| prep::plan(&asg));
    let (old_peak, old) = peak_of(|| prep::plan_by_chunks(&asg));
    assert_eq!(new, old);
    let out = bytes(&new.a) + bytes(&new.b) + bytes(&new.l);
    let chunks = n.div_ceil(1 << 14) + 1;
    eprintln!(
        "2^18 aux: output {out} B; beyond it, in place {} B ({} B per chunk), by chunks {} B ({:.2}× the output)",
        new_peak - out,
        (new_peak - out) / chunks,
        old_peak.saturating_sub(out),
        old_peak.saturating_sub(out) as f64 / out as f64
    );
    assert!(new_peak >= out, "the counter saw the output ({new_peak} < {out})");
    assert!(new_peak - out <= 1024 * chunks, "in place: {} B beyond the output of {out} B", new_peak - out);
}
