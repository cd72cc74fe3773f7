//! The shape of a circuit's R1CS, measured by synthesising it into a counting
//! constraint system (no witness is computed): constraints, inputs, aux variables,
//! non-zeros per matrix and the densities that decide the MSM sizes. Counted as Groth16
//! sees it, i.e. with the input constraints `x_i * 0 = 0` appended.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use serde::Serialize;

/// Measured R1CS shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Shape {
    /// Including the input constraints.
    pub constraints: u64,
    /// Including the constant ONE.
    pub inputs: u64,
    pub aux: u64,
    pub nnz_a: u64,
    pub nnz_b: u64,
    pub nnz_c: u64,
    /// Fraction of aux variables with a non-zero in A (their A-query point exists).
    pub a_aux_density: f64,
    /// Fraction of inputs with a non-zero in B.
    pub b_input_density: f64,
    /// Fraction of aux variables with a non-zero in B.
    pub b_aux_density: f64,
    /// Evaluation domain: the next power of two at or above `constraints`.
    pub domain_size: u64,
}

impl Shape {
    pub fn per_row(&self, nnz: u64) -> f64 {
        nnz as f64 / self.constraints.max(1) as f64
    }
}

/// A constraint system that only counts (shape measurement here; the SHA section sizes
/// itself with it too).
#[derive(Default)]
pub(crate) struct ShapeCs {
    pub(crate) constraints: u64,
    inputs: usize,
    pub(crate) aux: usize,
    nnz: [u64; 3],
    a_aux: Vec<bool>,
    b_input: Vec<bool>,
    b_aux: Vec<bool>,
}

fn mark(v: &mut Vec<bool>, i: usize) {
    if v.len() <= i {
        v.resize(i + 1, false);
    }
    v[i] = true;
}

impl ShapeCs {
    fn count(&mut self, which: usize, lc: &LinearCombination<Scalar>) {
        for (var, coeff) in lc.iter() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            self.nnz[which] += 1;
            match (which, var.get_unchecked()) {
                (0, Index::Aux(i)) => mark(&mut self.a_aux, i),
                (1, Index::Aux(i)) => mark(&mut self.b_aux, i),
                (1, Index::Input(i)) => mark(&mut self.b_input, i),
                _ => {}
            }
        }
    }
}

impl ConstraintSystem<Scalar> for ShapeCs {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.constraints += 1;
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        self.count(0, &a);
        self.count(1, &b);
        self.count(2, &c);
    }
    crate::flat_namespaces!();
}

/// Synthesise `circuit` into a counting system and report its shape.
pub fn measure<C: Circuit<Scalar>>(circuit: C) -> Result<Shape, SynthesisError> {
    let mut cs = ShapeCs::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    // Groth16's input constraints: each input once in A.
    let inputs = cs.inputs;
    cs.constraints += inputs as u64;
    cs.nnz[0] += inputs as u64;
    let frac = |v: &Vec<bool>, n: usize| if n == 0 { 0.0 } else { v.iter().filter(|&&x| x).count() as f64 / n as f64 };
    Ok(Shape {
        constraints: cs.constraints,
        inputs: inputs as u64,
        aux: cs.aux as u64,
        nnz_a: cs.nnz[0],
        nnz_b: cs.nnz[1],
        nnz_c: cs.nnz[2],
        a_aux_density: frac(&cs.a_aux, cs.aux),
        b_input_density: frac(&cs.b_input, inputs),
        b_aux_density: frac(&cs.b_aux, cs.aux),
        domain_size: cs.constraints.max(1).next_power_of_two(),
    })
}
