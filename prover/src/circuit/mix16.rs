//! A circuit whose witness is one full-width value in sixteen and 0/1 bits otherwise: the
//! witness mix of the bellperson/supraseal figure issue 5 compares against (a 2^24-constraint
//! circuit, 1/16 of its witness full-width). Unlike the PoRep-like family, whose SHA-256
//! witness is expensive to compute, its synthesis is a plain loop of allocations, so it
//! measures the prover rather than the witness generator.
//!
//! Groups of 16 rows: fifteen booleanity rows `b * (1 - b) = 0` on fresh random bits, then
//! one row `(v + sum 2^i b_i) * v = v'` that packs the bits into the running full-width value
//! (15 bits + 1 full-width witness value per 16 rows). A seed row `v0 * 1 = v0` starts the
//! chain; leftover rows at the end are booleanity rows; the last value is the public input.
//!
//! For the parallel witness ([`crate::pce::pieces`]) the groups are cut into pieces of
//! [`PIECE_GROUPS`] groups; the running value entering each piece comes from a first pass
//! that draws every group's bits (in parallel, the RNG seeked to each piece's draws) and a
//! chain of one addition and one multiplication per group (on one thread), so that the
//! pieces can then run [`synthesize`]'s own group code on their own ([`synthesize_pieces`]).

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, RngCore};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::pce::{Piece, PieceSystem};

/// Rows per group: 15 bits and one packing multiplication.
pub const GROUP: usize = 16;

/// Rows needed for the seed row and one group.
pub const MIN_ROWS: usize = 1 + GROUP;

/// Groups per piece of the parallel witness (16,384 rows: 2,048 pieces at 2^25).
pub const PIECE_GROUPS: usize = 1024;

/// Bits per group.
const BITS: usize = GROUP - 1;

/// Synthesise exactly `rows` constraints; returns the last full-width value and its variable.
pub fn synthesize<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    rows: usize,
    rng: &mut dyn RngCore,
) -> Result<(Variable, Option<Scalar>), SynthesisError> {
    if rows < MIN_ROWS {
        return Err(SynthesisError::Unsatisfiable);
    }
    let (v_var, v) = seed(cs, rng)?;
    // Whole groups while they fit, then single booleanity rows.
    let (groups, tail) = split(rows);
    let last = run_groups(cs, groups, rng, v_var, Some(v))?;
    booleans(cs, tail, rng, &mut Vec::new())?;
    Ok(last)
}

/// Whole groups and leftover booleanity rows after the seed row.
fn split(rows: usize) -> (usize, usize) {
    ((rows - 1) / GROUP, (rows - 1) % GROUP)
}

/// The seed row `v0 * 1 = v0` on a fresh random value.
fn seed<CS: ConstraintSystem<Scalar>>(cs: &mut CS, rng: &mut dyn RngCore) -> Result<(Variable, Scalar), SynthesisError> {
    let v0 = Scalar::random(&mut *rng);
    let v_var = cs.alloc(|| "v0", || Ok(v0))?;
    cs.enforce(|| "seed", |lc| lc + v_var, |lc| lc + CS::one(), |lc| lc + v_var);
    Ok((v_var, v0))
}

/// `n` booleanity rows `b * (1 - b) = 0` on fresh random bits, pushed to `bits`.
fn booleans<CS: ConstraintSystem<Scalar>>(cs: &mut CS, n: usize, rng: &mut dyn RngCore, bits: &mut Vec<(Variable, bool)>) -> Result<(), SynthesisError> {
    for _ in 0..n {
        let b: bool = rng.gen();
        let var = cs.alloc(|| "b", || Ok(if b { Scalar::ONE } else { Scalar::ZERO }))?;
        cs.enforce(|| "bool", |lc| lc + var, |lc| lc + CS::one() - var, |lc| lc);
        bits.push((var, b));
    }
    Ok(())
}

/// `groups` groups chained from the value `v` (variable `v_var`); returns the last value.
fn run_groups<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    groups: usize,
    rng: &mut dyn RngCore,
    mut v_var: Variable,
    mut v: Option<Scalar>,
) -> Result<(Variable, Option<Scalar>), SynthesisError> {
    // Powers of two for the packing row.
    let pow2: Vec<Scalar> = (0..BITS).map(|i| Scalar::from(1u64 << i)).collect();
    let mut bits: Vec<(Variable, bool)> = Vec::with_capacity(BITS);
    for _ in 0..groups {
        bits.clear();
        booleans(cs, BITS, rng, &mut bits)?;
        // (v + sum 2^i b_i) * v = v'
        let packed = bits.iter().zip(&pow2).fold(Scalar::ZERO, |acc, ((_, b), p)| if *b { acc + p } else { acc });
        let next = v.map(|x| (x + packed) * x);
        let next_var = cs.alloc(|| "v", || next.ok_or(SynthesisError::AssignmentMissing))?;
        let a = bits.iter().zip(&pow2).fold(LinearCombination::zero() + v_var, |lc, ((var, _), p)| lc + (*p, *var));
        cs.enforce(|| "pack", |_| a, |lc| lc + v_var, |lc| lc + next_var);
        v_var = next_var;
        v = next;
    }
    Ok((v_var, v))
}

/// [`synthesize`] in pieces of `piece_groups` groups (see the module docs;
/// [`PIECE_GROUPS`]), the seed row on `cs` itself, every piece through
/// [`PieceSystem::pieces`] (the witness or the extraction); `rng` as [`synthesize`] would
/// get it.
pub fn synthesize_pieces<S: PieceSystem>(cs: &mut S, rows: usize, mut rng: ChaCha20Rng, piece_groups: usize) -> Result<(Variable, Option<Scalar>), SynthesisError> {
    if rows < MIN_ROWS || piece_groups == 0 {
        return Err(SynthesisError::Unsatisfiable);
    }
    let (v0_var, v0) = seed(cs, &mut rng)?;
    let (groups, tail) = split(rows);
    let pieces = groups.div_ceil(piece_groups);
    // Piece k's first draw: one RNG word a bit (`Rng::gen::<bool>` reads one `u32`).
    let start = rng.get_word_pos();
    let rng_of = |k: usize| {
        let mut r = rng.clone();
        r.set_word_pos(start + (k * piece_groups * BITS) as u128);
        r
    };
    // Every group's bits, packed as the packing row sums them.
    let mut packed = vec![0u16; groups];
    packed.par_chunks_mut(piece_groups).enumerate().for_each(|(k, chunk)| {
        let mut r = rng_of(k);
        for p in chunk {
            *p = (0..BITS).fold(0u16, |acc, i| acc | (u16::from(r.gen::<bool>()) << i));
        }
    });
    // The chain: the value entering each piece, and the last.
    let mut entering = Vec::with_capacity(pieces);
    let mut v = v0;
    for (g, &p) in packed.iter().enumerate() {
        if g % piece_groups == 0 {
            entering.push(v);
        }
        v = (v + Scalar::from(u64::from(p))) * v;
    }
    drop(packed);
    let groups_of = |k: usize| piece_groups.min(groups - k * piece_groups);
    let aux: Vec<usize> = (0..pieces).map(|k| groups_of(k) * GROUP + if k + 1 == pieces { tail } else { 0 }).collect();
    let out = cs.pieces(&aux, |k, cs| {
        let mut r = rng_of(k);
        // The value entering piece k > 0 is the last one allocated before it.
        let v_var = if k == 0 { v0_var } else { Variable::new_unchecked(Index::Aux(cs.first() - 1)) };
        let last = run_groups(cs, groups_of(k), &mut r, v_var, Some(entering[k]))?;
        if k + 1 == pieces {
            booleans(cs, tail, &mut r, &mut Vec::new())?;
        }
        Ok(last)
    })?;
    // The pieces' own chain must meet the first pass's: a piece's last value enters the next.
    for (k, (_, got)) in out.iter().enumerate() {
        let want = entering.get(k + 1).copied().unwrap_or(v);
        if *got != Some(want) {
            return Err(SynthesisError::IncompatibleLengthVector(format!("mix16 piece {k} of {pieces} ends on another value than the chain's (a bug of the plan)")));
        }
    }
    out.last().copied().ok_or(SynthesisError::AssignmentMissing)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::pce::witness::{Witness, WitnessCs};

    fn sequential(rows: usize, seed: u64) -> (Witness, Option<Scalar>) {
        let mut cs = WitnessCs::with_capacity(0, rows);
        let (_, v) = synthesize(&mut cs, rows, &mut ChaCha20Rng::seed_from_u64(seed)).unwrap();
        (cs.into_witness(), v)
    }

    fn in_pieces(rows: usize, seed: u64, piece_groups: usize, threads: usize) -> (Witness, Option<Scalar>, usize) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut cs = WitnessCs::with_capacity(0, rows);
            let (_, v) = synthesize_pieces(&mut cs, rows, ChaCha20Rng::seed_from_u64(seed), piece_groups).unwrap();
            let pieces = cs.pieces_run();
            (cs.into_witness(), v, pieces)
        })
    }

    #[test]
    fn pieces_of_any_size_give_the_sequential_witness() {
        // 1 + 16·7 + 5 rows: 7 groups and a tail of 5; pieces of 1, 2 (uneven), 3, 7, 100.
        let rows = 1 + GROUP * 7 + 5;
        let (want, want_v) = sequential(rows, 3);
        assert_eq!((want.aux.len(), want.constraints), (rows, rows));
        for (piece_groups, pieces) in [(1, 7), (2, 4), (3, 3), (7, 1), (100, 1)] {
            for threads in [1, 3] {
                let (got, v, ran) = in_pieces(rows, 3, piece_groups, threads);
                assert_eq!(ran, pieces, "{piece_groups} groups a piece");
                assert!(got == want, "{piece_groups} groups a piece, {threads} threads: witness differs");
                assert_eq!(v, want_v);
            }
        }
        // No tail; the smallest circuit (one group).
        for rows in [1 + GROUP * 4, MIN_ROWS] {
            assert!(in_pieces(rows, 9, 3, 2).0 == sequential(rows, 9).0, "{rows} rows");
        }
    }

    #[test]
    fn too_few_rows_or_empty_pieces_are_refused() {
        let mut cs = WitnessCs::with_capacity(0, 0);
        assert!(synthesize_pieces(&mut cs, MIN_ROWS - 1, ChaCha20Rng::seed_from_u64(1), 4).is_err());
        assert!(synthesize_pieces(&mut cs, MIN_ROWS, ChaCha20Rng::seed_from_u64(1), 0).is_err());
        assert_eq!(cs.into_witness(), Witness::default());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Any size, piece size and thread count: the sequential witness, bit for bit.
        #[test]
        fn any_cut_gives_the_sequential_witness(rows in MIN_ROWS..1500usize, piece_groups in 1usize..40, threads in 1usize..5, seed in 0u64..1000) {
            let (want, want_v) = sequential(rows, seed);
            let (got, v, pieces) = in_pieces(rows, seed, piece_groups, threads);
            proptest::prop_assert_eq!(pieces, ((rows - 1) / GROUP).div_ceil(piece_groups));
            proptest::prop_assert!(got == want);
            proptest::prop_assert_eq!(v, want_v);
        }
    }
}
