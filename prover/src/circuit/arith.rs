//! The arithmetic hash section of the PoRep-like circuit: a chain of rows over a
//! three-element state, four rows per round, built so the section alone has ~2.5 / 1.0 /
//! 2.25 non-zeros per row in A / B / C and one aux variable in four appearing in B (PoRep
//! reports 2.4 / 1.0 / 2.2 and a b-aux density of 25%). One row per round multiplies;
//! the witness is full-width field elements, unlike the SHA section's bits.
//!
//! For the parallel witness and extraction ([`crate::pce::pieces`]) the section is cut into
//! pieces of [`PIECE_ROWS`] rows at round boundaries ([`Plan`]): the state entering each
//! piece is computed first by running the same round code on values only (into a system that
//! keeps nothing, on one thread; skipped when the constraint system wants no values), then
//! each piece allocates and enforces its rounds from the variables of that state, which are
//! the previous piece's last rows (one aux a row, so their indices follow from the piece's
//! first). [`synthesize`], the sequential reference, runs the same seed and round code.

use bellpepper_core::{ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::RngCore;

/// Rows needed to hold the initial state definition and at least one round.
pub const MIN_ROWS: usize = 8;

/// Rows of the seed rows (the initial state).
const SEED_ROWS: usize = 3;

/// Rows a round enforces.
const ROUND_ROWS: usize = 4;

/// Rows per piece of the parallel witness and extraction (after the seed rows, which go with
/// the first piece): 8,192 rounds, about the rows of one SHA-256 block piece (~27k), so
/// that at 2^27 the section's 2^26 rows are ~2,000 pieces as even as the blocks. A multiple
/// of [`ROUND_ROWS`] (pieces start at round boundaries).
pub const PIECE_ROWS: usize = 8192 * ROUND_ROWS;

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

/// Synthesise exactly `rows` constraints; returns the last wire (the digest).
/// `corrupt_row` (relative to this section) gets a wrong witness value. The sequential
/// reference of [`Plan`].
pub fn synthesize<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    rows: usize,
    rng: &mut dyn RngCore,
    corrupt_row: Option<usize>,
) -> Result<Wire, SynthesisError> {
    let values = [0; SEED_ROWS].map(|_| Some(Scalar::random(&mut *rng)));
    let state = seed(cs, values)?;
    Ok(rounds(cs, state, SEED_ROWS, rows, corrupt_row)?.1)
}

/// `v`, bumped when `row` is the corrupted one.
fn bump(corrupt_row: Option<usize>, row: usize, v: Option<Scalar>) -> Option<Scalar> {
    if corrupt_row == Some(row) {
        v.map(|v| v + Scalar::ONE)
    } else {
        v
    }
}

/// The initial state: three witnessed seeds, each pinned by a row `s * 1 = s` so that no
/// variable is unconstrained (Groth16 setup requires every aux variable to be used). A
/// corrupted row among them changes nothing (only round rows are bumped).
fn seed<CS: ConstraintSystem<Scalar>>(cs: &mut CS, values: [Option<Scalar>; SEED_ROWS]) -> Result<[Wire; 3], SynthesisError> {
    let mut state = [Wire { var: CS::one(), value: None }; 3];
    for (s, v) in state.iter_mut().zip(values) {
        let w = alloc(cs, v)?;
        cs.enforce(|| "seed", |lc| lc + w.var, |lc| lc + CS::one(), |lc| lc + w.var);
        *s = w;
    }
    Ok(state)
}

/// Rows `from..to` of the section (`from` at a round boundary: `SEED_ROWS` + a multiple of
/// `ROUND_ROWS`), chained from `state`; returns the state after them (meaningful at a round
/// boundary) and the last wire.
fn rounds<CS: ConstraintSystem<Scalar>>(cs: &mut CS, mut state: [Wire; 3], from: usize, to: usize, corrupt_row: Option<usize>) -> Result<([Wire; 3], Wire), SynthesisError> {
    let mut row = from;
    let bump = |row: usize, v: Option<Scalar>| bump(corrupt_row, row, v);
    let mut round = (from - SEED_ROWS) / ROUND_ROWS;
    let mut last = state[2];
    while row < to {
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
        if row == to {
            break;
        }
        // 2. (u + y + k2) * 1 = v + z            A 3, B 1 (ONE), C 2
        let v_val = (|| Some(u.value? + y.value? + k2 - z.value?))();
        let v = alloc(cs, bump(row, v_val))?;
        cs.enforce(|| "r2", |lc| lc + u.var + y.var + (k2, CS::one()), |lc| lc + CS::one(), |lc| lc + v.var + z.var);
        row += 1;
        last = v;
        if row == to {
            break;
        }
        // 3. (v + x) * 1 = w + u + k3            A 2, B 1 (ONE), C 3
        let w_val = (|| Some(v.value? + x.value? - u.value? - k3))();
        let w = alloc(cs, bump(row, w_val))?;
        cs.enforce(|| "r3", |lc| lc + v.var + x.var, |lc| lc + CS::one(), |lc| lc + w.var + u.var + (k3, CS::one()));
        row += 1;
        last = w;
        if row == to {
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
    Ok((state, last))
}

/// The section cut into pieces of `piece_rows` rows (see the module docs): the values of the
/// state entering every piece.
pub struct Plan {
    rows: usize,
    piece_rows: usize,
    corrupt_row: Option<usize>,
    seeds: [Option<Scalar>; SEED_ROWS],
    /// `entering[k]`: the state values entering piece `k` (`entering[0]` unused), and after
    /// the last piece; all `None` without values.
    entering: Vec<[Option<Scalar>; 3]>,
}

impl Plan {
    /// Draw the seeds from `rng` (as [`synthesize`] does) and, when `values`, chain the
    /// rounds on values only to every piece's entering state. `piece_rows`: a positive
    /// multiple of 4 ([`PIECE_ROWS`]).
    pub fn draw(rows: usize, rng: &mut dyn RngCore, corrupt_row: Option<usize>, values: bool, piece_rows: usize) -> Result<Plan, SynthesisError> {
        if rows < MIN_ROWS || piece_rows == 0 || piece_rows % ROUND_ROWS != 0 {
            return Err(SynthesisError::Unsatisfiable);
        }
        let seeds = [0; SEED_ROWS].map(|_| values.then(|| Scalar::random(&mut *rng)));
        let mut plan = Plan { rows, piece_rows, corrupt_row, seeds, entering: Vec::new() };
        let pieces = plan.pieces();
        plan.entering.reserve(pieces + 1);
        let mut cs = ValuesCs;
        let mut state = seed(&mut cs, seeds)?;
        plan.entering.push(state.map(|w| w.value));
        for k in 0..pieces {
            let (from, to) = plan.range(k);
            if values {
                state = rounds(&mut cs, state, from.max(SEED_ROWS), to, corrupt_row)?.0;
            }
            plan.entering.push(state.map(|w| w.value));
        }
        Ok(plan)
    }

    pub fn pieces(&self) -> usize {
        (self.rows - SEED_ROWS).div_ceil(self.piece_rows)
    }

    /// The section's rows of piece `k` (the first has the seed rows).
    fn range(&self, k: usize) -> (usize, usize) {
        let from = if k == 0 { 0 } else { SEED_ROWS + k * self.piece_rows };
        (from, (SEED_ROWS + (k + 1) * self.piece_rows).min(self.rows))
    }

    /// Aux values piece `k` allocates: one a row (each seed row pins a fresh seed, each
    /// round row defines a fresh wire).
    pub fn aux(&self, k: usize) -> usize {
        let (from, to) = self.range(k);
        to - from
    }

    /// Run piece `k` into `cs`, whose first aux variable is `first` (the witness index of
    /// the piece's first row's value); returns its last wire (the digest for the last
    /// piece). Fails when its state at the end is not the plan's (a bug of the plan).
    pub fn piece<CS: ConstraintSystem<Scalar>>(&self, cs: &mut CS, k: usize, first: usize) -> Result<Wire, SynthesisError> {
        let (from, to) = self.range(k);
        let state = if k == 0 {
            seed(cs, self.seeds)?
        } else {
            // The previous round's w, v, t: the three rows before this piece.
            let at = |back: usize, i: usize| -> Result<Wire, SynthesisError> {
                let var = first.checked_sub(back).ok_or_else(|| SynthesisError::IncompatibleLengthVector(format!("arithmetic piece {k} starts at aux {first}")))?;
                Ok(Wire { var: Variable::new_unchecked(Index::Aux(var)), value: self.entering[k][i] })
            };
            [at(2, 0)?, at(3, 1)?, at(1, 2)?]
        };
        let (end, last) = rounds(cs, state, from.max(SEED_ROWS), to, self.corrupt_row)?;
        if k + 1 < self.pieces() && end.map(|w| w.value) != self.entering[k + 1] {
            return Err(SynthesisError::IncompatibleLengthVector(format!("arithmetic piece {k} ends on another state than the plan's (a bug of the plan)")));
        }
        Ok(last)
    }
}

/// The values-only system of [`Plan::draw`]: allocations compute nothing more than the round
/// code does (their values are the wires'), rows are dropped unbuilt.
struct ValuesCs;

impl ConstraintSystem<Scalar> for ValuesCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Ok(Variable::new_unchecked(Index::Aux(0)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Ok(Variable::new_unchecked(Index::Input(0)))
    }

    crate::enforce_nothing!();

    crate::flat_namespaces!();
}
