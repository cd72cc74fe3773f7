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

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, RngCore};

/// Rows per group: 15 bits and one packing multiplication.
pub const GROUP: usize = 16;

/// Rows needed for the seed row and one group.
pub const MIN_ROWS: usize = 1 + GROUP;

/// Synthesise exactly `rows` constraints; returns the last full-width value and its variable.
pub fn synthesize<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    rows: usize,
    rng: &mut dyn RngCore,
) -> Result<(Variable, Option<Scalar>), SynthesisError> {
    if rows < MIN_ROWS {
        return Err(SynthesisError::Unsatisfiable);
    }
    let v0 = Scalar::random(&mut *rng);
    let mut v_var = cs.alloc(|| "v0", || Ok(v0))?;
    let mut v = Some(v0);
    cs.enforce(|| "seed", |lc| lc + v_var, |lc| lc + CS::one(), |lc| lc + v_var);
    let mut row = 1usize;
    let bits_per_group = GROUP - 1;
    // Powers of two for the packing row.
    let pow2: Vec<Scalar> = (0..bits_per_group).map(|i| Scalar::from(1u64 << i)).collect();
    let mut bits: Vec<(Variable, bool)> = Vec::with_capacity(bits_per_group);
    while row < rows {
        // Whole groups while they fit, then single booleanity rows.
        let group = rows - row >= GROUP;
        let take = if group { bits_per_group } else { rows - row };
        bits.clear();
        for _ in 0..take {
            let b: bool = rng.gen();
            let var = cs.alloc(|| "b", || Ok(if b { Scalar::ONE } else { Scalar::ZERO }))?;
            cs.enforce(|| "bool", |lc| lc + var, |lc| lc + CS::one() - var, |lc| lc);
            bits.push((var, b));
            row += 1;
        }
        if !group {
            break;
        }
        // (v + sum 2^i b_i) * v = v'
        let packed = bits.iter().zip(&pow2).fold(Scalar::ZERO, |acc, ((_, b), p)| if *b { acc + p } else { acc });
        let next = v.map(|x| (x + packed) * x);
        let next_var = cs.alloc(|| "v", || next.ok_or(SynthesisError::AssignmentMissing))?;
        let a = bits.iter().zip(&pow2).fold(LinearCombination::zero() + v_var, |lc, ((var, _), p)| lc + (*p, *var));
        cs.enforce(|| "pack", |_| a, |lc| lc + v_var, |lc| lc + next_var);
        v_var = next_var;
        v = next;
        row += 1;
    }
    Ok((v_var, v))
}
