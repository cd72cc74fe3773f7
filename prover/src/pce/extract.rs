//! Extraction: runs the circuit's own bellpepper code once through a constraint system
//! that records every enforced row of A, B and C, so the pre-compiled constraints come
//! from the same code as the circuit path (no second description of the circuit to keep
//! in step). Rows are appended in enforce order, coefficients deduplicated into each
//! matrix's table as they arrive, zero coefficients dropped (they add nothing, and the
//! circuit path sets no density bit for them). The Groth16 input constraints (`x_i · 0 = 0`,
//! one per input, ONE included) are appended at the end, as synthesis appends them.
//!
//! The recorder can also keep the witness (`with_values`): the engine's first partition of a
//! shape is extracted and proven from the same run.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rustc_hash::FxHashMap;

use super::matrix::{CoeffIndex, CsrMatrix, IDX_ONE};
use super::witness::Witness;
use super::{Pce, PceError};

/// Inputs are tagged in the column while recording (their count is known only at the
/// end); the column is remapped to `num_aux + i` when the matrix is finished.
const INPUT_TAG: u32 = 1 << 31;

/// One matrix while it is recorded.
struct Builder {
    row_ptr: Vec<u32>,
    cols: Vec<u32>,
    idx: Vec<u32>,
    table: Vec<Scalar>,
    /// Montgomery limbs of a coefficient → its table index.
    lookup: FxHashMap<[u64; 4], u32>,
    /// The last coefficient looked up (runs of equal coefficients are common).
    last: Option<(Scalar, u32)>,
}

impl Builder {
    /// A builder with room for `rows` rows of `per_row` non-zeros (capacity only: pages are
    /// touched as rows arrive; at 2^27 the doubling regrowth copied gigabytes).
    fn new(rows: usize, per_row: usize) -> Self {
        let mut lookup = FxHashMap::default();
        let table = CsrMatrix::base_table();
        for (i, s) in table.iter().enumerate() {
            lookup.insert(blst::blst_fr::from(*s).l, i as u32);
        }
        let mut row_ptr = Vec::with_capacity(rows + 1);
        row_ptr.push(0);
        let nnz = rows.saturating_mul(per_row);
        Builder { row_ptr, cols: Vec::with_capacity(nnz), idx: Vec::with_capacity(nnz), table, lookup, last: None }
    }

    #[inline]
    fn index_of(&mut self, coeff: &Scalar) -> u32 {
        if *coeff == Scalar::ONE {
            return IDX_ONE;
        }
        if let Some((c, i)) = self.last {
            if c == *coeff {
                return i;
            }
        }
        let next = self.table.len() as u32;
        let i = *self.lookup.entry(blst::blst_fr::from(*coeff).l).or_insert(next);
        if i == next {
            self.table.push(*coeff);
        }
        self.last = Some((*coeff, i));
        i
    }

    fn push_row(&mut self, lc: &LinearCombination<Scalar>) {
        for (var, coeff) in lc.iter() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let col = match var.get_unchecked() {
                Index::Input(i) => i as u32 | INPUT_TAG,
                Index::Aux(i) => i as u32,
            };
            let idx = self.index_of(coeff);
            self.cols.push(col);
            self.idx.push(idx);
        }
        // Checked in `finish`: more than u32::MAX non-zeros wraps here.
        self.row_ptr.push(self.cols.len() as u32);
    }

    fn finish(self, num_aux: usize) -> Result<CsrMatrix, PceError> {
        if self.cols.len() > u32::MAX as usize {
            return Err(PceError::TooLarge(format!("{} non-zeros in one matrix (at most {})", self.cols.len(), u32::MAX)));
        }
        let Builder { mut row_ptr, mut cols, idx, table, .. } = self;
        // Give back the reservation's unused tail (a shrinking realloc: no copy for large blocks).
        row_ptr.shrink_to_fit();
        cols.shrink_to_fit();
        let aux = num_aux as u32;
        for c in cols.iter_mut() {
            if *c & INPUT_TAG != 0 {
                *c = aux + (*c & !INPUT_TAG);
            }
        }
        let coeffs = CoeffIndex::narrow(idx, table.len());
        Ok(CsrMatrix { row_ptr, cols, coeffs, table })
    }
}

/// A constraint system that records the rows of A, B and C (see the module docs).
pub struct ExtractCs {
    num_inputs: usize,
    num_aux: usize,
    mats: [Builder; 3],
    /// The witness, when recorded too (inputs with ONE first, aux).
    values: Option<(Vec<Scalar>, Vec<Scalar>)>,
}

impl ExtractCs {
    /// A recorder; with `with_values` it keeps the witness as well (the value closures are
    /// called, as the circuit path calls them), else they are never called.
    pub fn new(with_values: bool) -> Self {
        Self::with_capacity(with_values, 0)
    }

    /// [`ExtractCs::new`] with room reserved for about `rows` constraints (a hint: more rows
    /// only regrow; the reservation is address space, touched as rows arrive).
    pub fn with_capacity(with_values: bool, rows: usize) -> Self {
        // Non-zeros per row reserved for A, B, C: the porep-like circuit has ~2.4 / 1.0 / 2.2.
        let mats = [Builder::new(rows, 3), Builder::new(rows, 1), Builder::new(rows, 3)];
        let values = with_values.then(|| (Vec::new(), Vec::with_capacity(rows)));
        ExtractCs { num_inputs: 0, num_aux: 0, mats, values }
    }

    /// Rows recorded so far (input constraints excluded).
    pub fn constraints(&self) -> usize {
        self.mats[0].row_ptr.len() - 1
    }

    /// Append the input constraints and build the three matrices, the densities and the
    /// shape hash; the witness too when it was recorded.
    pub fn finish(mut self) -> Result<(Pce, Option<Witness>), PceError> {
        let circuit_constraints = self.constraints();
        // x_i · 0 = 0 for every input, ONE included: x_i in A, nothing in B and C.
        for i in 0..self.num_inputs {
            let row = LinearCombination::zero() + Variable::new_unchecked(Index::Input(i));
            self.mats[0].push_row(&row);
            self.mats[1].push_row(&LinearCombination::zero());
            self.mats[2].push_row(&LinearCombination::zero());
        }
        if self.num_aux + self.num_inputs >= INPUT_TAG as usize {
            return Err(PceError::TooLarge(format!("{} variables (at most {})", self.num_aux + self.num_inputs, INPUT_TAG - 1)));
        }
        let [a, b, c] = self.mats;
        let (a, b, c) = (a.finish(self.num_aux)?, b.finish(self.num_aux)?, c.finish(self.num_aux)?);
        let witness = self.values.map(|(inputs, aux)| Witness { inputs, aux, constraints: circuit_constraints });
        Ok((Pce::from_matrices(self.num_inputs, self.num_aux, a, b, c, None)?, witness))
    }
}

impl ConstraintSystem<Scalar> for ExtractCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let Some((_, aux)) = &mut self.values {
            aux.push(f()?);
        }
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let Some((inputs, _)) = &mut self.values {
            inputs.push(f()?);
        }
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.mats[0].push_row(&a(LinearCombination::zero()));
        self.mats[1].push_row(&b(LinearCombination::zero()));
        self.mats[2].push_row(&c(LinearCombination::zero()));
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// Extract the pre-compiled constraints of `circuit` (its witness is not computed). ONE is
/// allocated first, as synthesis does.
pub fn extract<C: Circuit<Scalar>>(circuit: C) -> Result<Pce, PceError> {
    extract_sized(circuit, 0)
}

/// [`extract`] with room reserved for about `rows_hint` constraints (see
/// [`ExtractCs::with_capacity`]); the result does not depend on the hint.
pub fn extract_sized<C: Circuit<Scalar>>(circuit: C, rows_hint: usize) -> Result<Pce, PceError> {
    let mut cs = ExtractCs::with_capacity(false, rows_hint);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs.finish()?.0)
}

/// [`extract`], keeping the witness of this instance as well (one run of the circuit code
/// gives the pre-compiled constraints and this partition's witness).
pub fn extract_with_witness<C: Circuit<Scalar>>(circuit: C) -> Result<(Pce, Witness), PceError> {
    let mut cs = ExtractCs::new(true);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    let (pce, w) = cs.finish()?;
    Ok((pce, w.expect("values were recorded")))
}
