//! The density splits of `prep_msm` ([`plan`]): the A, B and L queries' scalars classified
//! zero / one / tail, the tail converted to canonical limbs.
//!
//! Why it is shaped so: on the H200 at 2^27 constraints per partition the previous
//! implementation ([`plan_by_chunks`]) cost ~24–28 thread-seconds per partition (runs 73–74:
//! 11.7 s on a pool of 2 threads, 6.95 s on 4) and bound the GPU workers. It converted every
//! scalar out of Montgomery form before classifying it (zeros and ones too), converted each aux
//! scalar up to three times (once per query: L takes every aux scalar, A and B those of their
//! densities), and built one small `Split` per 16 384 scalars that `Split::concat_par` then
//! copied into place: several GiB of transient allocations per call at 2^27, not reserved by the
//! engine's RAM budget. [`plan`] instead
//! - classifies in Montgomery form (`==` against `Scalar::ZERO` / `Scalar::ONE`: four limb
//!   comparisons in blstrs; the Montgomery form of a field element is unique) and converts only
//!   the tail scalars;
//! - makes one pass over the aux scalars for L, A and B together: a tail scalar is converted
//!   once and its limbs written to L's tail and, where the densities select it, A's and B's;
//! - writes in place: a first parallel pass counts, per chunk, the points, zeros, ones and tail
//!   of each query; prefix sums give each chunk its offsets in the final vectors, allocated at
//!   their exact sizes; the second parallel pass writes each chunk's slices of them. Beyond its
//!   output it allocates a few hundred bytes per chunk of 16 384 scalars.
//!
//! The splits are bit-for-bit those of [`plan_by_chunks`] (tests below).

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::cpu_time::CpuMeter;
use crate::msm::{to_limbs, Limbs, Split};
use crate::prover::MsmPlan;
use crate::synthesis::ProvingAssignment;

/// Scalars per piece of work, in both passes.
const CHUNK: usize = 1 << 14;

/// Up to [`CHUNK`] consecutive scalars of the inputs or of the aux, from index `start`.
#[derive(Clone, Copy)]
struct Piece<'a> {
    scalars: &'a [Scalar],
    start: usize,
    aux: bool,
}

impl Piece<'_> {
    /// Which of the queries [A, B, L] take the piece's `j`-th scalar: A every input and the aux
    /// of `a_aux_density`; B the inputs of `b_input_density` and the aux of `b_aux_density`;
    /// L every aux.
    #[inline]
    fn takes(&self, asg: &ProvingAssignment, j: usize) -> [bool; 3] {
        let i = self.start + j;
        if self.aux {
            [asg.a_aux_density.get(i), asg.b_aux_density.get(i), true]
        } else {
            [true, asg.b_input_density.get(i), false]
        }
    }
}

#[derive(Clone, Copy)]
enum Class {
    Zero,
    One,
    Tail,
}

#[inline]
fn class(s: &Scalar) -> Class {
    if *s == Scalar::ZERO {
        Class::Zero
    } else if *s == Scalar::ONE {
        Class::One
    } else {
        Class::Tail
    }
}

/// What one piece gives one query.
#[derive(Clone, Copy, Default)]
struct Count {
    points: usize,
    zeros: usize,
    ones: usize,
    tail: usize,
}

fn count(asg: &ProvingAssignment, p: &Piece) -> [Count; 3] {
    let mut c = [Count::default(); 3];
    for (j, s) in p.scalars.iter().enumerate() {
        let takes = p.takes(asg, j);
        let k = class(s);
        for (q, _) in c.iter_mut().zip(takes).filter(|(_, t)| *t) {
            q.points += 1;
            match k {
                Class::Zero => q.zeros += 1,
                Class::One => q.ones += 1,
                Class::Tail => q.tail += 1,
            }
        }
    }
    c
}

/// One piece's share of one query's output: its first point index and its slices.
struct Out<'o> {
    first: u32,
    ones: &'o mut [u32],
    tail_idx: &'o mut [u32],
    tail: &'o mut [Limbs],
}

fn write(asg: &ProvingAssignment, p: &Piece, out: &mut [Out; 3]) {
    // Per query: points taken, ones and tail written so far in this piece.
    let (mut n, mut o, mut t) = ([0u32; 3], [0usize; 3], [0usize; 3]);
    for (j, s) in p.scalars.iter().enumerate() {
        let takes = p.takes(asg, j);
        match class(s) {
            Class::Zero => {}
            Class::One => {
                for q in (0..3).filter(|&q| takes[q]) {
                    out[q].ones[o[q]] = out[q].first + n[q];
                    o[q] += 1;
                }
            }
            Class::Tail => {
                let l = to_limbs(s);
                for q in (0..3).filter(|&q| takes[q]) {
                    out[q].tail_idx[t[q]] = out[q].first + n[q];
                    out[q].tail[t[q]] = l;
                    t[q] += 1;
                }
            }
        }
        for q in 0..3 {
            n[q] += takes[q] as u32;
        }
    }
    debug_assert!((0..3).all(|q| o[q] == out[q].ones.len() && t[q] == out[q].tail.len()));
}

/// The A, B and L splits of `asg` (see the module's doc): A = every input then the aux of
/// `a_aux_density`, B = the inputs of `b_input_density` then the aux of `b_aux_density`, L =
/// every aux; the k-th scalar a query takes belongs to its point k.
pub fn plan(asg: &ProvingAssignment) -> MsmPlan {
    plan_metered(asg, &CpuMeter::default())
}

/// [`plan`], adding the CPU time of every piece and of the steps between the passes to
/// `meter` (each on the thread that ran it; `prep_msm`'s `cpu_ns`).
pub fn plan_metered(asg: &ProvingAssignment, meter: &CpuMeter) -> MsmPlan {
    fn pieces_of(v: &[Scalar], aux: bool) -> impl Iterator<Item = Piece<'_>> {
        v.chunks(CHUNK).enumerate().map(move |(k, scalars)| Piece { scalars, start: k * CHUNK, aux })
    }
    let pieces: Vec<Piece> = meter.measure(|| pieces_of(&asg.input_assignment, false).chain(pieces_of(&asg.aux_assignment, true)).collect());
    // Pass 1: counts per piece, no conversion.
    let counts: Vec<[Count; 3]> = pieces.par_iter().map(|p| meter.measure(|| count(asg, p))).collect();
    // The final vectors, at their exact sizes.
    let mut splits: [Split; 3] = meter.measure(|| {
        std::array::from_fn(|q| {
            let sum = |f: fn(&Count) -> usize| counts.iter().map(|c| f(&c[q])).sum::<usize>();
            let (ones, tail) = (sum(|c| c.ones), sum(|c| c.tail));
            Split { len: sum(|c| c.points), zeros: sum(|c| c.zeros), ones: vec![0; ones], tail_idx: vec![0; tail], tail: vec![[0; 4]; tail] }
        })
    });
    // Each piece's slices of them, in order (prefix sums of the counts).
    let jobs: Vec<(Piece, [Out; 3])> = meter.measure(|| {
        let mut rest = splits.each_mut().map(|s| (&mut s.ones[..], &mut s.tail_idx[..], &mut s.tail[..]));
        let mut first = [0usize; 3];
        pieces
            .iter()
            .zip(&counts)
            .map(|(p, c)| {
                let out = std::array::from_fn(|q| {
                    let (ones, r) = std::mem::take(&mut rest[q].0).split_at_mut(c[q].ones);
                    rest[q].0 = r;
                    let (tail_idx, r) = std::mem::take(&mut rest[q].1).split_at_mut(c[q].tail);
                    rest[q].1 = r;
                    let (tail, r) = std::mem::take(&mut rest[q].2).split_at_mut(c[q].tail);
                    rest[q].2 = r;
                    let o = Out { first: first[q] as u32, ones, tail_idx, tail };
                    first[q] += c[q].points;
                    o
                });
                (*p, out)
            })
            .collect()
    });
    // Pass 2: classify again (cheap), convert each tail scalar once, write in place.
    jobs.into_par_iter().for_each(|(p, mut out)| meter.measure(|| write(asg, &p, &mut out)));
    let [a, b, l] = splits;
    MsmPlan { a, b, l }
}

/// The previous implementation of [`plan`], kept as the reference of its tests and of the
/// `prep_msm` bench (`benches/prover.rs`): each query classified on its own by chunks
/// ([`Split::classify_selected_chunks`], every scalar converted), then joined by
/// [`Split::concat_par`].
pub fn plan_by_chunks(asg: &ProvingAssignment) -> MsmPlan {
    let (inp, aux) = (&asg.input_assignment, &asg.aux_assignment);
    let (a, (b, l)) = rayon::join(
        || {
            let mut parts = vec![Split::classify(inp.iter())];
            parts.extend(Split::classify_selected_chunks(aux, |i| asg.a_aux_density.get(i)));
            Split::concat_par(parts)
        },
        || {
            rayon::join(
                || {
                    let mut parts = Split::classify_selected_chunks(inp, |i| asg.b_input_density.get(i));
                    parts.extend(Split::classify_selected_chunks(aux, |i| asg.b_aux_density.get(i)));
                    Split::concat_par(parts)
                },
                || Split::classify_par(aux),
            )
        },
    );
    MsmPlan { a, b, l }
}

/// A scalar of the mix: zero, one, a scalar whose Montgomery limbs are those of the
/// canonical one (R⁻¹: a tail scalar), -1, or random.
fn mix_scalar(rng: &mut impl rand::Rng, p_zero: f64, p_one: f64) -> Scalar {
    let u: f64 = rng.gen();
    if u < p_zero {
        Scalar::ZERO
    } else if u < p_zero + p_one {
        Scalar::ONE
    } else {
        match rng.gen_range(0..8) {
            0 => Scalar::from(blst::blst_fr { l: [1, 0, 0, 0] }),
            1 => -Scalar::ONE,
            2 => Scalar::from(rng.gen_range(2..5u64)),
            _ => Scalar::random(&mut *rng),
        }
    }
}

fn random_density(rng: &mut impl rand::Rng, len: usize, p: f64) -> crate::synthesis::Density {
    let mut d = crate::synthesis::Density::with_len(len);
    (0..len).filter(|_| rng.gen_bool(p)).for_each(|i| d.set(i));
    d
}

/// A random assignment for tests and benches: `inputs` and `aux` scalars, zero or one with
/// probabilities `[p_zero, p_one]` (the porep-like mix at 2^27: ~25 % each), and densities of
/// probabilities `[A aux, B input, B aux]` (porep-like: A ~87 %, B ~25 % of the aux).
pub fn random_assignment(seed: u64, inputs: usize, aux: usize, [p_zero, p_one]: [f64; 2], [da, dbi, dba]: [f64; 3]) -> ProvingAssignment {
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
    let mut asg = ProvingAssignment::default();
    asg.input_assignment = (0..inputs).map(|_| mix_scalar(&mut rng, p_zero, p_one)).collect();
    asg.aux_assignment = (0..aux).map(|_| mix_scalar(&mut rng, p_zero, p_one)).collect();
    asg.a_aux_density = random_density(&mut rng, aux, da);
    asg.b_input_density = random_density(&mut rng, inputs, dbi);
    asg.b_aux_density = random_density(&mut rng, aux, dba);
    asg
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splits by their definition: `Split::classify` over each query's filtered sequence.
    fn serial(asg: &ProvingAssignment) -> MsmPlan {
        let (inp, aux) = (&asg.input_assignment, &asg.aux_assignment);
        let a_aux = aux.iter().enumerate().filter(|(i, _)| asg.a_aux_density.get(*i)).map(|(_, s)| s);
        let b_inp = inp.iter().enumerate().filter(|(i, _)| asg.b_input_density.get(*i)).map(|(_, s)| s);
        let b_aux = aux.iter().enumerate().filter(|(i, _)| asg.b_aux_density.get(*i)).map(|(_, s)| s);
        MsmPlan { a: Split::classify(inp.iter().chain(a_aux)), b: Split::classify(b_inp.chain(b_aux)), l: Split::classify(aux.iter()) }
    }

    fn check(asg: &ProvingAssignment, what: &str) {
        let new = plan(asg);
        assert_eq!(new, serial(asg), "{what}: plan vs serial classify");
        assert_eq!(new, plan_by_chunks(asg), "{what}: plan vs plan_by_chunks");
    }

    #[test]
    fn plan_equals_the_previous_one_at_the_edges() {
        let c = CHUNK;
        // (inputs, aux, p_zero, p_one, A density, B input density, B aux density)
        let cases = [
            (0, 0, 0.3, 0.3, 0.5, 0.5, 0.5),
            (1, 0, 0.3, 0.3, 0.5, 1.0, 0.5),
            (3, 1, 0.3, 0.3, 1.0, 1.0, 1.0),
            (5, 1000, 1.0, 0.0, 0.9, 0.5, 0.3),                // all zeros
            (5, 1000, 0.0, 1.0, 0.9, 0.5, 0.3),                // all ones
            (5, 1000, 0.0, 0.0, 0.9, 0.5, 0.3),                // all tail
            (4, c - 1, 0.25, 0.25, 0.87, 0.0, 0.25),           // no input selected for B
            (4, c, 0.25, 0.25, 0.0, 0.5, 0.0),                 // no aux selected for A or B
            (4, c + 1, 0.25, 0.25, 1.0, 1.0, 1.0),
            (1, 2 * c - 1, 0.25, 0.25, 0.87, 1.0, 0.25),
            (1, 2 * c, 0.4, 0.1, 0.5, 0.5, 0.5),
            (7, 2 * c + 1, 0.1, 0.4, 0.87, 0.5, 0.25),
            (c + 1, 3 * c + 5, 0.25, 0.25, 0.87, 0.3, 0.25),   // inputs over a chunk
            (c - 1, 0, 0.25, 0.25, 0.5, 0.5, 0.5),
        ];
        for (k, &(inputs, aux, pz, po, da, dbi, dba)) in cases.iter().enumerate() {
            let asg = random_assignment(k as u64, inputs, aux, [pz, po], [da, dbi, dba]);
            check(&asg, &format!("case {k}: {inputs} inputs, {aux} aux, zeros {pz} ones {po}, densities {da}/{dbi}/{dba}"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn plan_equals_the_previous_one(seed in any::<u64>(), inputs in 0usize..40, aux in 0usize..(2 * CHUNK + 100),
                                        pz in 0.0f64..1.0, po in 0.0f64..1.0, da in 0.0f64..=1.0, dbi in 0.0f64..=1.0, dba in 0.0f64..=1.0) {
            let po = po * (1.0 - pz);
            let asg = random_assignment(seed, inputs, aux, [pz, po], [da, dbi, dba]);
            check(&asg, "proptest");
        }
    }
}
