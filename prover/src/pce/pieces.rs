//! Witness generation on a thread pool. This module exists because on the pre-compiled path
//! the witness is what is left of a partition's synthesis once the products run on every
//! core (26.7 s of 28.8 s at 2^27 on the H200 host, on one thread), and a circuit's witness
//! is mostly made of pieces that need nothing from each other but a few values: the
//! PoRep-like circuit's SHA-256 blocks need only the eight words of the chained state, the
//! mix16 circuit's groups only the running full-width value.
//!
//! A circuit that knows its pieces implements [`WitnessPieces`]: it runs its sequential
//! parts (the values that chain the pieces, computed natively; allocations outside the
//! pieces) against the [`WitnessCs`] as before, and hands the pieces to
//! [`WitnessCs::pieces`] with the number of aux values each allocates. Each piece then runs
//! the circuit's own code for that piece against a [`PieceCs`] that writes into its own
//! disjoint slice of the witness's preallocated aux vector (no per-piece vectors and no
//! concatenation: at 2^27 the aux vector is ~4 GiB), on the current rayon pool, longest
//! pieces first; the results come back in piece order. A piece that allocates another
//! number of values than it declared, or an input, is an error, and nothing of the pieces is
//! kept. So the witness (inputs, aux, constraint count) is bit-identical to the sequential
//! [`super::witness::generate`], whatever the number of threads (tested on both benchmark
//! families).
//!
//! A circuit without pieces keeps the default [`WitnessPieces::synthesize_witness`], its own
//! `synthesize` on the calling thread.

use std::cmp::Reverse;
use std::mem::MaybeUninit;

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::witness::{Witness, WitnessCs};

/// A circuit whose witness can be generated in independent pieces (see the module docs).
pub trait WitnessPieces: Circuit<Scalar> + Sized {
    /// Generate the witness into `cs` (ONE already allocated), allocating exactly what
    /// [`Circuit::synthesize`] allocates, in the same order, with the same values, and
    /// enforcing as many constraints; pieces go through [`WitnessCs::pieces`]. The default
    /// is `synthesize` itself (one thread).
    fn synthesize_witness(self, cs: &mut WitnessCs) -> Result<(), SynthesisError> {
        self.synthesize(cs)
    }
}

impl WitnessCs {
    /// Run `run(i, cs)` for every piece `i` in `0..aux.len()`, in parallel on the current
    /// rayon pool; piece `i` allocates exactly `aux[i]` aux values, which come after those of
    /// the pieces before it (and after everything allocated before this call). Returns each
    /// piece's result, in piece order; on any failure, the failure of the lowest piece (a
    /// piece whose allocations differ from `aux[i]` fails with
    /// [`SynthesisError::IncompatibleLengthVector`]) and the witness is as it was before the
    /// call. Pieces start longest first (by `aux`), each as its own task.
    pub fn pieces<T, F>(&mut self, aux: &[usize], run: F) -> Result<Vec<T>, SynthesisError>
    where
        T: Send,
        F: Fn(usize, &mut PieceCs<'_>) -> Result<T, SynthesisError> + Sync,
    {
        let total = aux.iter().try_fold(0usize, |s, &n| s.checked_add(n)).ok_or_else(|| SynthesisError::IncompatibleLengthVector("witness pieces: more aux values than memory can address".into()))?;
        let base = self.w.aux.len();
        self.w.aux.reserve(total);
        let count = aux.len();
        let mut work: Vec<(usize, usize, &mut [MaybeUninit<Scalar>])> = Vec::with_capacity(count);
        let mut rest = &mut self.w.aux.spare_capacity_mut()[..total];
        let mut first = base;
        for (i, &n) in aux.iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            work.push((i, first, head));
            first += n;
            rest = tail;
        }
        // Longest first (a stable sort: equal pieces in their order), one task each, so that
        // a long piece never waits behind short ones on the same thread.
        work.sort_by_key(|w| Reverse(w.2.len()));
        let done: Vec<(usize, Result<(T, usize), SynthesisError>)> = work
            .into_par_iter()
            .with_max_len(1)
            .map(|(i, first, out)| {
                let planned = out.len();
                let mut cs = PieceCs { out, len: 0, first, constraints: 0, input: false };
                let r = run(i, &mut cs);
                (i, cs.check(i, count, planned, r))
            })
            .collect();
        let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
        let mut failed: Option<(usize, SynthesisError)> = None;
        let mut constraints = 0usize;
        for (i, r) in done {
            match r {
                Ok((t, c)) => {
                    results[i] = Some(t);
                    constraints += c;
                }
                Err(e) if failed.as_ref().is_none_or(|(j, _)| i < *j) => failed = Some((i, e)),
                Err(_) => {}
            }
        }
        if let Some((_, e)) = failed {
            return Err(e);
        }
        // SAFETY: the slices handed to the pieces are disjoint and cover the spare capacity
        // `base .. base + total` (reserved above); every piece returned Ok, which `check`
        // gives only when it wrote all of its slice, in order from its start.
        unsafe { self.w.aux.set_len(base + total) };
        self.w.constraints += constraints;
        self.pieces += count;
        Ok(results.into_iter().flatten().collect())
    }
}

/// The constraint system of one piece (see the module docs): writes its aux values into its
/// slice of the witness, in order; variables are numbered as in the whole witness
/// ([`PieceCs::first`] is the index of the piece's first value); `enforce` only counts.
pub struct PieceCs<'a> {
    out: &'a mut [MaybeUninit<Scalar>],
    /// Values allocated; `out.len() + 1` once it tried to allocate more (then it fails).
    len: usize,
    first: usize,
    constraints: usize,
    /// It tried to allocate an input.
    input: bool,
}

impl PieceCs<'_> {
    /// The witness index of this piece's first aux value: `Index::Aux(first() - 1)` is the
    /// last value allocated before it.
    pub fn first(&self) -> usize {
        self.first
    }

    /// The piece's result once it has run: its value and constraint count, or why it failed
    /// (a broken plan before the piece's own error, which a broken plan may have caused).
    fn check<T>(self, i: usize, count: usize, planned: usize, r: Result<T, SynthesisError>) -> Result<(T, usize), SynthesisError> {
        let plan = |what: String| Err(SynthesisError::IncompatibleLengthVector(format!("witness piece {i} of {count} {what}")));
        if self.input {
            return plan("allocated an input (inputs are allocated outside the pieces)".into());
        }
        if self.len > planned {
            return plan(format!("allocated more than the {planned} aux values of its plan"));
        }
        let (t, constraints) = r.map(|t| (t, self.constraints))?;
        if self.len < planned {
            return plan(format!("allocated {} aux values where its plan says {planned}", self.len));
        }
        Ok((t, constraints))
    }
}

impl ConstraintSystem<Scalar> for PieceCs<'_> {
    type Root = Self;

    #[inline]
    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = f()?;
        let Some(slot) = self.out.get_mut(self.len) else {
            self.len = self.out.len() + 1;
            return Err(SynthesisError::IncompatibleLengthVector("a witness piece allocated more than its plan".into()));
        };
        slot.write(v);
        self.len += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.first + self.len - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input = true;
        Err(SynthesisError::IncompatibleLengthVector("a witness piece allocated an input".into()))
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
        self.constraints += 1;
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

/// Run `circuit` for its witness only, its pieces on `pool` (`None`: the current rayon pool),
/// with room for `inputs` / `aux` values. The same witness as [`super::witness::generate`];
/// also returns the number of pieces that ran (0: the circuit has none, its witness ran on
/// one thread).
pub fn generate_parallel<C: WitnessPieces + Send>(circuit: C, inputs: usize, aux: usize, pool: Option<&rayon::ThreadPool>) -> Result<(Witness, usize), SynthesisError> {
    let run = move || {
        let mut cs = WitnessCs::with_capacity(inputs, aux);
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        circuit.synthesize_witness(&mut cs)?;
        let pieces = cs.pieces;
        Ok((cs.into_witness(), pieces))
    };
    match pool {
        Some(pool) => pool.install(run),
        None => run(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pce::witness::generate;

    /// How a piece of [`Toy`] breaks its plan.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fault {
        Fewer,
        More,
        Input,
        Missing,
    }

    /// One value allocated before the pieces, `sizes[i]` values in piece `i` (value
    /// `1000 i + j`, one constraint each), one after them, then an input; `faults[i]` breaks
    /// piece `i`'s plan.
    #[derive(Clone)]
    struct Toy {
        sizes: Vec<usize>,
        faults: Vec<Option<Fault>>,
    }

    fn value(i: usize, j: usize) -> Scalar {
        Scalar::from((1000 * i + j) as u64)
    }

    fn piece<CS: ConstraintSystem<Scalar>>(cs: &mut CS, i: usize, n: usize, fault: Option<Fault>) -> Result<Vec<Variable>, SynthesisError> {
        let n = match fault {
            Some(Fault::Fewer) => n - 1,
            Some(Fault::More) => n + 1,
            _ => n,
        };
        let mut vars = Vec::new();
        for j in 0..n {
            let v = cs.alloc(|| "v", || Ok(value(i, j)))?;
            cs.enforce(|| "c", |lc| lc + v, |lc| lc + CS::one(), |lc| lc + v);
            vars.push(v);
        }
        match fault {
            Some(Fault::Input) => {
                cs.alloc_input(|| "x", || Ok(Scalar::ONE))?;
            }
            Some(Fault::Missing) => {
                cs.alloc(|| "m", || Err(SynthesisError::AssignmentMissing))?;
            }
            _ => {}
        }
        Ok(vars)
    }

    fn tail<CS: ConstraintSystem<Scalar>>(cs: &mut CS) -> Result<(), SynthesisError> {
        cs.alloc(|| "after", || Ok(Scalar::from(7u64)))?;
        cs.alloc_input(|| "x", || Ok(Scalar::from(9u64)))?;
        Ok(())
    }

    impl Circuit<Scalar> for Toy {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            cs.alloc(|| "before", || Ok(Scalar::from(5u64)))?;
            for (i, &n) in self.sizes.iter().enumerate() {
                piece(cs, i, n, None)?;
            }
            tail(cs)
        }
    }

    impl WitnessPieces for Toy {
        fn synthesize_witness(self, cs: &mut WitnessCs) -> Result<(), SynthesisError> {
            cs.alloc(|| "before", || Ok(Scalar::from(5u64)))?;
            let firsts = cs.pieces(&self.sizes, |i, cs| {
                let first = cs.first();
                let vars = piece(cs, i, self.sizes[i], self.faults[i])?;
                // Variables are numbered as in the whole witness.
                for (j, v) in vars.iter().enumerate() {
                    assert_eq!(v.get_unchecked(), Index::Aux(first + j));
                }
                Ok((i, first))
            })?;
            // Results in piece order; piece i starts after the pieces before it.
            let mut at = 1;
            for (k, &(i, first)) in firsts.iter().enumerate() {
                assert_eq!((i, first), (k, at));
                at += self.sizes[k];
            }
            tail(cs)
        }
    }

    fn toy(sizes: &[usize]) -> Toy {
        Toy { sizes: sizes.to_vec(), faults: vec![None; sizes.len()] }
    }

    fn parallel(t: Toy, threads: usize) -> Result<(Witness, usize), SynthesisError> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        generate_parallel(t, 2, 0, Some(&pool))
    }

    #[test]
    fn pieces_give_the_sequential_witness_in_order() {
        // Uneven sizes, an empty piece, more pieces than threads and fewer.
        let sizes = [3, 0, 5, 1, 8, 2, 8];
        let want = generate(toy(&sizes), 2, 0).unwrap();
        assert_eq!((want.aux.len(), want.inputs.len(), want.constraints), (1 + 27 + 1, 2, 27));
        for threads in [1, 2, 3, 16] {
            let (got, pieces) = parallel(toy(&sizes), threads).unwrap();
            assert_eq!(pieces, sizes.len());
            assert!(got == want, "{threads} threads");
        }
        // No pieces at all.
        assert!(parallel(toy(&[]), 2).unwrap().0 == generate(toy(&[]), 2, 0).unwrap());
    }

    #[test]
    fn a_circuit_without_pieces_runs_its_synthesize() {
        struct Plain;
        impl Circuit<Scalar> for Plain {
            fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
                tail(cs)
            }
        }
        impl WitnessPieces for Plain {}
        let (w, pieces) = generate_parallel(Plain, 2, 1, None).unwrap();
        assert_eq!(pieces, 0);
        assert!(w == generate(Plain, 2, 1).unwrap());
    }

    #[test]
    fn a_broken_plan_fails_and_keeps_nothing_of_the_pieces() {
        let sizes = [4, 6, 2, 5];
        for (fault, says) in [(Fault::Fewer, "allocated 5 aux values where its plan says 6"), (Fault::More, "more than the 6 aux values"), (Fault::Input, "allocated an input")] {
            let mut t = toy(&sizes);
            t.faults[1] = Some(fault);
            let mut cs = WitnessCs::with_capacity(1, 20);
            match t.synthesize_witness(&mut cs) {
                Err(SynthesisError::IncompatibleLengthVector(m)) => assert!(m.contains("witness piece 1 of 4") && m.contains(says), "{fault:?}: {m}"),
                other => panic!("{fault:?}: {other:?}"),
            }
            // The value before the pieces only: the pieces' values were never made part of it.
            let w = cs.into_witness();
            assert_eq!((w.aux.len(), w.constraints), (1, 0), "{fault:?}");
        }
    }

    #[test]
    fn the_lowest_failing_piece_is_reported_and_a_piece_error_is_its_own() {
        let mut t = toy(&[2, 9, 3, 9, 1]);
        t.faults[3] = Some(Fault::More);
        t.faults[2] = Some(Fault::Fewer);
        match parallel(t, 3) {
            Err(SynthesisError::IncompatibleLengthVector(m)) => assert!(m.contains("witness piece 2 of 5"), "{m}"),
            other => panic!("{other:?}"),
        }
        let mut t = toy(&[2, 9, 3]);
        t.faults[1] = Some(Fault::Missing);
        assert!(matches!(parallel(t, 2), Err(SynthesisError::AssignmentMissing)));
    }
}
