//! Synthesis of one partition: runs a bellpepper circuit against a
//! [`ProvingAssignment`], which records the witness, the A/B/C evaluations of every
//! constraint (the inputs of the H computation) and which variables appear in A and B
//! (the densities that decide which query points the MSMs use). An unsatisfied
//! constraint is caught here, with its index and name, before any MSM is spent on it.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

pub use crate::abc_pool::Evals;

/// Why a partition could not be synthesised.
#[derive(Debug, thiserror::Error)]
pub enum SynthesisFailure {
    #[error("unsatisfied witness: constraint #{index} (`{name}`) does not hold (A·B ≠ C)")]
    Unsatisfied { index: usize, name: String },
    #[error("synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    /// The witness does not fit the pre-compiled constraints it was to be multiplied with
    /// (another circuit, or a PCE of an older version of this one).
    #[error("the circuit does not match its pre-compiled constraints: {0}")]
    PceMismatch(String),
}

/// A packed bit per variable: does it have a non-zero coefficient in a matrix?
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    pub fn with_len(len: usize) -> Self {
        Density { words: vec![0; len.div_ceil(64)], len, ones: 0 }
    }
    pub fn push(&mut self) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        self.len += 1;
    }
    pub fn set(&mut self, i: usize) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & b == 0 {
            self.words[w] |= b;
            self.ones += 1;
        }
    }
    pub fn set_all(&mut self) {
        for i in 0..self.len {
            self.set(i);
        }
    }
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Number of variables present (the number of query points for them).
    pub fn count(&self) -> usize {
        self.ones
    }
    /// Bytes of the bitmap.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// Everything the prover needs from synthesis.
#[derive(Clone, Debug, Default)]
pub struct ProvingAssignment {
    /// A·w, B·w, C·w for every constraint (input constraints included), in order: vectors
    /// of their own, or lent by the engine's [`crate::abc_pool::AbcPool`] (page-locked once).
    pub a: Evals,
    pub b: Evals,
    pub c: Evals,
    /// Inputs, starting with the constant ONE.
    pub input_assignment: Vec<Scalar>,
    pub aux_assignment: Vec<Scalar>,
    pub a_aux_density: Density,
    pub b_input_density: Density,
    pub b_aux_density: Density,
    first_unsatisfied: Option<(usize, String)>,
}

impl ProvingAssignment {
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }
    /// Public inputs without the constant ONE (what the verifier is given).
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.input_assignment[1.min(self.input_assignment.len())..]
    }
    /// Bytes held by the evaluations and the witness (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        (self.a.len() + self.b.len() + self.c.len() + self.input_assignment.len() + self.aux_assignment.len()) * 32
    }

    #[inline]
    fn eval(&mut self, lc: &LinearCombination<Scalar>, which: u8) -> Scalar {
        let mut acc = Scalar::ZERO;
        for (var, coeff) in lc.iter() {
            let value = match var.get_unchecked() {
                Index::Input(i) => {
                    if which == 1 && !bool::from(coeff.is_zero()) {
                        self.b_input_density.set(i);
                    }
                    self.input_assignment[i]
                }
                Index::Aux(i) => {
                    if !bool::from(coeff.is_zero()) {
                        match which {
                            0 => self.a_aux_density.set(i),
                            1 => self.b_aux_density.set(i),
                            _ => {}
                        }
                    }
                    self.aux_assignment[i]
                }
            };
            if *coeff == Scalar::ONE {
                acc += value;
            } else {
                acc += value * coeff;
            }
        }
        acc
    }
}

impl ConstraintSystem<Scalar> for ProvingAssignment {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux_assignment.push(f()?);
        self.a_aux_density.push();
        self.b_aux_density.push();
        Ok(Variable::new_unchecked(Index::Aux(self.aux_assignment.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input_assignment.push(f()?);
        self.b_input_density.push();
        Ok(Variable::new_unchecked(Index::Input(self.input_assignment.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let av = self.eval(&a, 0);
        let bv = self.eval(&b, 1);
        let cv = self.eval(&c, 2);
        if self.first_unsatisfied.is_none() && av * bv != cv {
            self.first_unsatisfied = Some((self.a.len(), annotation().into()));
        }
        self.a.push(av);
        self.b.push(bv);
        self.c.push(cv);
    }

    crate::flat_namespaces!();
}

/// Expected sizes of a circuit (e.g. from its parameter file), so that synthesis allocates
/// its vectors once instead of growing them by doubling (each growth copies everything
/// written so far and touches fresh pages). A wrong hint only costs memory or copies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizeHint {
    /// Constraints including the input constraints.
    pub constraints: usize,
    /// Inputs including ONE.
    pub inputs: usize,
    pub aux: usize,
}

impl ProvingAssignment {
    /// An assignment made elsewhere (the pre-compiled path, [`crate::pce`]): the evaluations,
    /// the witness and the densities, exactly as synthesis would have recorded them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        (a, b, c): (Evals, Evals, Evals),
        input_assignment: Vec<Scalar>,
        aux_assignment: Vec<Scalar>,
        a_aux_density: Density,
        b_input_density: Density,
        b_aux_density: Density,
    ) -> Self {
        ProvingAssignment { a, b, c, input_assignment, aux_assignment, a_aux_density, b_input_density, b_aux_density, first_unsatisfied: None }
    }

    /// An empty assignment with room for a circuit of `hint`'s sizes.
    pub fn with_capacity(hint: SizeHint) -> Self {
        let mut a = ProvingAssignment {
            a: Vec::with_capacity(hint.constraints).into(),
            b: Vec::with_capacity(hint.constraints).into(),
            c: Vec::with_capacity(hint.constraints).into(),
            input_assignment: Vec::with_capacity(hint.inputs),
            aux_assignment: Vec::with_capacity(hint.aux),
            ..Default::default()
        };
        a.a_aux_density.words.reserve(hint.aux.div_ceil(64));
        a.b_aux_density.words.reserve(hint.aux.div_ceil(64));
        a.b_input_density.words.reserve(hint.inputs.div_ceil(64));
        a
    }
}

/// Synthesise a circuit for proving: allocates ONE, runs the circuit, appends the input
/// constraints `x_i * 0 = 0` (which make the IC query dense, as every Groth16 setup of
/// the bellman family expects), and fails on the first unsatisfied constraint.
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<ProvingAssignment, SynthesisFailure> {
    synthesize_with_capacity(circuit, SizeHint::default())
}

/// [`synthesize`] into vectors sized by `hint` up front.
pub fn synthesize_with_capacity<C: Circuit<Scalar>>(circuit: C, hint: SizeHint) -> Result<ProvingAssignment, SynthesisFailure> {
    let mut cs = ProvingAssignment::with_capacity(hint);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.input_assignment.len() {
        cs.a.push(cs.input_assignment[i]);
        cs.b.push(Scalar::ZERO);
        cs.c.push(Scalar::ZERO);
    }
    if let Some((index, name)) = cs.first_unsatisfied.take() {
        return Err(SynthesisFailure::Unsatisfied { index, name });
    }
    Ok(cs)
}
