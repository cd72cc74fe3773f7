//! The arithmetic hash section of the PoRep-like circuit: a chain of rows over a
//! three-element state, four rows per round, built so the section alone has ~2.5 / 1.0 /
//! 2.25 non-zeros per row in A / B / C and one aux variable in four appearing in B (PoRep
//! reports 2.4 / 1.0 / 2.2 and a b-aux density of 25%). One row per round multiplies;
//! the witness is full-width field elements, unlike the SHA section's bits.

use bellpepper_core::{ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::RngCore;

/// Rows needed to hold the initial state definition and at least one round.
pub const MIN_ROWS: usize = 8;

/// A variable with its value (known when proving).
#[derive(Clone, Copy)]
pub struct Wire {
    pub var: Variable,
    pub value: Option<Scalar>,
}

fn konst(round: usize, row: u64) -> Scalar {
    // Round constants: fixed, distinct, cheap to derive.
    Scalar::from(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(round as u64 + 1) ^ row)
}

fn alloc<CS: ConstraintSystem<Scalar>>(cs: &mut CS, v: Option<Scalar>) -> Result<Wire, SynthesisError> {
    let var = cs.alloc(|| "w", || v.ok_or(SynthesisError::AssignmentMissing))?;
    Ok(Wire { var, value: v })
}

fn add(a: Option<Scalar>, b: Option<Scalar>) -> Option<Scalar> {
    Some(a? + b?)
}

/// Aux values [`synthesize`] allocates for `rows` rows: one a row (each seed row pins a fresh
/// seed, each round row defines a fresh wire). The parallel witness plans with it.
pub fn aux(rows: usize) -> usize {
    rows
}

/// Synthesise exactly `rows` constraints; returns the last wire (the digest).
/// `corrupt_row` (relative to this section) gets a wrong witness value.
pub fn synthesize<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    rows: usize,
    rng: &mut dyn RngCore,
    corrupt_row: Option<usize>,
) -> Result<Wire, SynthesisError> {
    let mut row = 0usize;
    let bump = |row: usize, v: Option<Scalar>| -> Option<Scalar> {
        if corrupt_row == Some(row) {
            v.map(|v| v + Scalar::ONE)
        } else {
            v
        }
    };
    // Initial state: three witnessed seeds, each pinned by a row `s * 1 = s` so that no
    // variable is unconstrained (Groth16 setup requires every aux variable to be used).
    let mut state = [Wire { var: CS::one(), value: None }; 3];
    for s in state.iter_mut() {
        let v = Some(Scalar::random(&mut *rng));
        let w = alloc(cs, v)?;
        cs.enforce(|| "seed", |lc| lc + w.var, |lc| lc + CS::one(), |lc| lc + w.var);
        *s = w;
        row += 1;
    }
    let mut round = 0usize;
    let mut last = state[2];
    while row < rows {
        let [x, y, z] = state;
        let k1 = konst(round, 1);
        let k2 = konst(round, 2);
        let k3 = konst(round, 3);
        // 1. (x + y + k1) * z = u + x            A 3, B 1 (z, aux), C 2
        let u_val = (|| Some((x.value? + y.value? + k1) * z.value? - x.value?))();
        let u = alloc(cs, bump(row, u_val))?;
        cs.enforce(|| "r1", |lc| lc + x.var + y.var + (k1, CS::one()), |lc| lc + z.var, |lc| lc + u.var + x.var);
        row += 1;
        last = u;
        if row == rows {
            break;
        }
        // 2. (u + y + k2) * 1 = v + z            A 3, B 1 (ONE), C 2
        let v_val = (|| Some(u.value? + y.value? + k2 - z.value?))();
        let v = alloc(cs, bump(row, v_val))?;
        cs.enforce(|| "r2", |lc| lc + u.var + y.var + (k2, CS::one()), |lc| lc + CS::one(), |lc| lc + v.var + z.var);
        row += 1;
        last = v;
        if row == rows {
            break;
        }
        // 3. (v + x) * 1 = w + u + k3            A 2, B 1 (ONE), C 3
        let w_val = (|| Some(v.value? + x.value? - u.value? - k3))();
        let w = alloc(cs, bump(row, w_val))?;
        cs.enforce(|| "r3", |lc| lc + v.var + x.var, |lc| lc + CS::one(), |lc| lc + w.var + u.var + (k3, CS::one()));
        row += 1;
        last = w;
        if row == rows {
            break;
        }
        // 4. (w + v) * 1 = t + y                 A 2, B 1 (ONE), C 2
        let t_val = (|| Some(add(w.value, v.value)? - y.value?))();
        let t = alloc(cs, bump(row, t_val))?;
        cs.enforce(|| "r4", |lc| lc + w.var + v.var, |lc| lc + CS::one(), |lc| lc + t.var + y.var);
        row += 1;
        last = t;
        // t is the next round's z: the one variable in four that appears in B.
        state = [w, v, t];
        round += 1;
    }
    Ok(last)
}
