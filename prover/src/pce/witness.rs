//! Witness generation without constraints: a constraint system whose allocations record
//! their values and whose `enforce` is a no-op, so the circuit's code computes its
//! variables but never builds the linear combinations of its constraints (that and their
//! evaluation are most of the circuit path's cost; the products replace them). Inputs and
//! aux come out exactly as [`crate::synthesis::ProvingAssignment`] has them: ONE is the
//! first input, allocated before the circuit runs; the Groth16 input constraints are not
//! the circuit's, so they are not counted here (the pre-compiled matrices hold them).
//!
//! [`generate`] runs the circuit on one thread: the reference. A circuit that knows how to
//! cut its witness into independent pieces generates it on a thread pool instead
//! ([`super::pieces`]), into the same [`WitnessCs`], with the same result.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

/// A partition's witness, and the rows its circuit enforced (to check it against the
/// pre-compiled constraints it will be multiplied with).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    /// Inputs, ONE first.
    pub inputs: Vec<Scalar>,
    pub aux: Vec<Scalar>,
    /// `enforce` calls (the input constraints not included).
    pub constraints: usize,
}

impl Witness {
    /// The values in the pre-compiled constraints' column order, as [`super::eval::products`]
    /// takes them: aux, then the inputs (ONE first). The aux vector has room for the inputs
    /// ([`WitnessCs::with_capacity`]): no copy.
    pub fn into_columns(self) -> Vec<Scalar> {
        let mut col = self.aux;
        col.extend_from_slice(&self.inputs);
        col
    }
}

/// The witness-only constraint system (see the module docs).
pub struct WitnessCs {
    pub(super) w: Witness,
    /// Pieces run in parallel so far ([`super::pieces`]).
    pub(super) pieces: usize,
}

impl WitnessCs {
    /// Room for `inputs` inputs and `aux` aux values; the aux vector gets `inputs` more so
    /// that the products can append the inputs to it without moving it.
    pub fn with_capacity(inputs: usize, aux: usize) -> Self {
        WitnessCs { w: Witness { inputs: Vec::with_capacity(inputs), aux: super::eval::with_capacity_huge(aux + inputs), constraints: 0 }, pieces: 0 }
    }
    pub fn into_witness(self) -> Witness {
        self.w
    }
    /// Pieces run in parallel into it so far ([`WitnessCs::pieces`]).
    pub fn pieces_run(&self) -> usize {
        self.pieces
    }
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    #[inline]
    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.w.aux.len() - 1)))
    }

    #[inline]
    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.w.inputs.len() - 1)))
    }

    #[inline]
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.w.constraints += 1;
    }

    crate::flat_namespaces!();
}

/// Run `circuit` for its witness only, on the calling thread, with room for `inputs` / `aux`
/// values (the PCE's counts; a wrong size only costs a reallocation). The sequential
/// reference of [`super::pieces::generate_parallel`].
pub fn generate<C: Circuit<Scalar>>(circuit: C, inputs: usize, aux: usize) -> Result<Witness, SynthesisError> {
    let mut cs = WitnessCs::with_capacity(inputs, aux);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs.into_witness())
}
