//! Witness generation and constraint extraction on a thread pool. This module exists
//! because on the pre-compiled path the witness is what is left of a partition's synthesis
//! once the products run on every core (26.7 s of 28.8 s at 2^27 on the H200 host, on one
//! thread), the extraction is most of a setup (98.8 s of 190 s there, on one thread), and a
//! circuit is mostly made of pieces that need nothing from each other but a few values: the
//! PoRep-like circuit's SHA-256 blocks need only the eight words of the chained state, its
//! arithmetic section's runs of rounds the three values of the state, the mix16 circuit's
//! groups only the running full-width value.
//!
//! A circuit that knows its pieces implements [`CircuitPieces`]: it runs its sequential
//! parts (the values that chain the pieces, computed natively; allocations outside the
//! pieces) against a [`PieceSystem`] (the witness-only [`WitnessCs`], or the extraction's
//! [`super::extract::ExtractCs`]), and hands the pieces to [`PieceSystem::pieces`] with the
//! number of aux values each allocates. Each piece then runs the circuit's own code for that
//! piece against the system's piece type, its variables numbered as in the whole circuit
//! ([`Piece::first`]), on the current rayon pool, longest pieces first; the results come back
//! in piece order. For the witness, a [`PieceCs`] writes into its own disjoint slice of the
//! witness's preallocated aux vector (no per-piece vectors and no concatenation: at 2^27 the
//! aux vector is ~4 GiB); for the extraction, each piece records its own rows, merged in
//! piece order afterwards (see [`super::extract`]). A piece that allocates another number of
//! values than it declared, or an input, is an error, and nothing of the pieces is kept. So
//! the witness (inputs, aux, constraint count) is bit-identical to the sequential
//! [`super::witness::generate`], and the extraction to the sequential
//! [`super::extract::extract`], whatever the number of threads (tested on both benchmark
//! families).
//!
//! A circuit without pieces keeps the default [`CircuitPieces::synthesize_pieces`], its own
//! `synthesize` on the calling thread.

use std::cmp::Reverse;
use std::mem::MaybeUninit;

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::witness::{Witness, WitnessCs};

/// A circuit that can be synthesised in independent pieces (see the module docs).
pub trait CircuitPieces: Circuit<Scalar> + Sized {
    /// Synthesise into `cs` (ONE already allocated), allocating exactly what
    /// [`Circuit::synthesize`] allocates, in the same order, with the same values, and
    /// enforcing the same rows in the same order; pieces go through [`PieceSystem::pieces`].
    /// The default is `synthesize` itself (one thread).
    fn synthesize_pieces<S: PieceSystem>(self, cs: &mut S) -> Result<(), SynthesisError> {
        self.synthesize(cs)
    }
}

/// A constraint system that can run a circuit's pieces in parallel: the witness-only
/// [`WitnessCs`] and the extraction's [`super::extract::ExtractCs`]. The same circuit code
/// drives both ([`CircuitPieces::synthesize_pieces`]).
pub trait PieceSystem: ConstraintSystem<Scalar> {
    /// The constraint system one piece runs against.
    type Piece<'a>: ConstraintSystem<Scalar> + Piece;

    /// Run `run(i, cs)` for every piece `i` in `0..aux.len()`, in parallel on the current
    /// rayon pool; piece `i` allocates exactly `aux[i]` aux values (and no input), which come
    /// after those of the pieces before it (and after everything allocated before this
    /// call); its rows come after theirs. Returns each piece's result, in piece order; on
    /// any failure, the failure of the lowest piece (a piece whose allocations differ from
    /// `aux[i]`, or that allocates an input, fails with
    /// [`SynthesisError::IncompatibleLengthVector`]) and `self` is as it was before the call.
    fn pieces<T, F>(&mut self, aux: &[usize], run: F) -> Result<Vec<T>, SynthesisError>
    where
        T: Send,
        F: Fn(usize, &mut Self::Piece<'_>) -> Result<T, SynthesisError> + Sync;

    /// Whether it keeps the values of what is allocated: a circuit may skip computing the
    /// values that chain its pieces when not (an extraction without the witness).
    fn has_values(&self) -> bool {
        true
    }
}

/// What a piece's constraint system tells the circuit's code.
pub trait Piece {
    /// The witness index of this piece's first aux value: `Index::Aux(first() - 1)` is the
    /// last value allocated before it.
    fn first(&self) -> usize;
}

/// What the runner checks of a piece once it has run.
pub(super) trait Planned: Piece + Send {
    /// What failures call it ("witness piece", "extraction piece").
    const WHAT: &'static str;
    /// Aux values the plan gives it.
    fn planned(&self) -> usize;
    /// Aux values it allocated (`planned() + 1` once it tried to allocate more).
    fn allocated(&self) -> usize;
    /// It tried to allocate an input.
    fn tried_input(&self) -> bool;
}

/// The total of a plan's aux values, or an error when it overflows.
pub(super) fn plan_total(aux: &[usize], what: &str) -> Result<usize, SynthesisError> {
    aux.iter().try_fold(0usize, |s, &n| s.checked_add(n)).ok_or_else(|| SynthesisError::IncompatibleLengthVector(format!("{what}s: more aux values than memory can address")))
}

/// Run every piece of `work` (its index and its constraint system) on the current rayon
/// pool, longest first (by plan; a stable sort: equal pieces in their order), one task
/// each, so that a long piece never waits behind short ones on the same thread. Returns
/// each piece's result and constraint system in piece order, or the lowest piece's failure
/// (a broken plan before the piece's own error, which a broken plan may have caused).
pub(super) fn run_all<P, T, F>(mut work: Vec<(usize, P)>, run: &F) -> Result<Vec<(T, P)>, SynthesisError>
where
    P: Planned,
    T: Send,
    F: Fn(usize, &mut P) -> Result<T, SynthesisError> + Sync,
{
    let count = work.len();
    work.sort_by_key(|w| Reverse(w.1.planned()));
    type Done<T, P> = Vec<(usize, Result<(T, P), SynthesisError>)>;
    let done: Done<T, P> = work
        .into_par_iter()
        .with_max_len(1)
        .map(|(i, mut cs)| {
            let r = run(i, &mut cs);
            (i, check(i, count, cs, r))
        })
        .collect();
    let mut results: Vec<Option<(T, P)>> = (0..count).map(|_| None).collect();
    let mut failed: Option<(usize, SynthesisError)> = None;
    for (i, r) in done {
        match r {
            Ok(t) => results[i] = Some(t),
            Err(e) if failed.as_ref().is_none_or(|(j, _)| i < *j) => failed = Some((i, e)),
            Err(_) => {}
        }
    }
    if let Some((_, e)) = failed {
        return Err(e);
    }
    Ok(results.into_iter().flatten().collect())
}

/// A piece's result once it has run: its value, or why it failed (a broken plan before the
/// piece's own error, which a broken plan may have caused).
fn check<P: Planned, T>(i: usize, count: usize, cs: P, r: Result<T, SynthesisError>) -> Result<(T, P), SynthesisError> {
    let plan = |what: String| Err(SynthesisError::IncompatibleLengthVector(format!("{} {i} of {count} {what}", P::WHAT)));
    let planned = cs.planned();
    if cs.tried_input() {
        return plan("allocated an input (inputs are allocated outside the pieces)".into());
    }
    if cs.allocated() > planned {
        return plan(format!("allocated more than the {planned} aux values of its plan"));
    }
    let t = r?;
    if cs.allocated() < planned {
        return plan(format!("allocated {} aux values where its plan says {planned}", cs.allocated()));
    }
    Ok((t, cs))
}

impl PieceSystem for WitnessCs {
    type Piece<'a> = PieceCs<'a>;

    /// Each piece writes into its own disjoint slice of the preallocated aux vector.
    fn pieces<T, F>(&mut self, aux: &[usize], run: F) -> Result<Vec<T>, SynthesisError>
    where
        T: Send,
        F: Fn(usize, &mut PieceCs<'_>) -> Result<T, SynthesisError> + Sync,
    {
        let total = plan_total(aux, PieceCs::WHAT)?;
        let base = self.w.aux.len();
        self.w.aux.reserve(total);
        let count = aux.len();
        let mut work: Vec<(usize, PieceCs<'_>)> = Vec::with_capacity(count);
        let mut rest = &mut self.w.aux.spare_capacity_mut()[..total];
        let mut first = base;
        for (i, &n) in aux.iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            work.push((i, PieceCs { out: head, len: 0, first, constraints: 0, input: false }));
            first += n;
            rest = tail;
        }
        let done = run_all(work, &run)?;
        let constraints: usize = done.iter().map(|(_, cs)| cs.constraints).sum();
        let results: Vec<T> = done.into_iter().map(|(t, _)| t).collect();
        // SAFETY: the slices handed to the pieces are disjoint and cover the spare capacity
        // `base .. base + total` (reserved above); every piece returned Ok, which `check`
        // gives only when it wrote all of its slice, in order from its start.
        unsafe { self.w.aux.set_len(base + total) };
        self.w.constraints += constraints;
        self.pieces += count;
        Ok(results)
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

impl Piece for PieceCs<'_> {
    fn first(&self) -> usize {
        self.first
    }
}

impl Planned for PieceCs<'_> {
    const WHAT: &'static str = "witness piece";
    fn planned(&self) -> usize {
        self.out.len()
    }
    fn allocated(&self) -> usize {
        self.len
    }
    fn tried_input(&self) -> bool {
        self.input
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

    crate::flat_namespaces!();
}

/// Run `circuit` for its witness only, its pieces on `pool` (`None`: the current rayon pool),
/// with room for `inputs` / `aux` values. The same witness as [`super::witness::generate`];
/// also returns the number of pieces that ran (0: the circuit has none, its witness ran on
/// one thread).
pub fn generate_parallel<C: CircuitPieces + Send>(circuit: C, inputs: usize, aux: usize, pool: Option<&rayon::ThreadPool>) -> Result<(Witness, usize), SynthesisError> {
    crate::on_pool(pool, move || {
        let mut cs = WitnessCs::with_capacity(inputs, aux);
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        circuit.synthesize_pieces(&mut cs)?;
        let pieces = cs.pieces;
        Ok((cs.into_witness(), pieces))
    })
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
        // Coefficients that repeat within a piece and across pieces, some new in each: the
        // extraction's merged table must come out in the sequential first-appearance order.
        let before = Variable::new_unchecked(Index::Aux(0));
        for j in 0..n {
            let v = cs.alloc(|| "v", || Ok(value(i, j)))?;
            let k = Scalar::from(((7 * i + 3 * j) % 11 + 2) as u64);
            let m = -Scalar::from((i + j % 2 + 100) as u64);
            cs.enforce(|| "c", |lc| lc + (k, v) + before, |lc| lc + CS::one(), |lc| lc + (m, v) + (k, CS::one()));
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

    impl CircuitPieces for Toy {
        fn synthesize_pieces<S: PieceSystem>(self, cs: &mut S) -> Result<(), SynthesisError> {
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
        impl CircuitPieces for Plain {}
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
            match t.synthesize_pieces(&mut cs) {
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

    fn extract_on(t: Toy, threads: usize) -> Result<(crate::pce::Pce, usize), crate::pce::PceError> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| crate::pce::extract_pieces(t, 0))
    }

    #[test]
    fn pieces_give_the_sequential_extraction() {
        let sizes = [3, 0, 5, 1, 8, 2, 8, 40];
        let want = crate::pce::extract(toy(&sizes)).unwrap();
        assert_eq!(want.num_constraints(), 67 + 2, "the pieces' rows, the input constraints");
        for threads in [1, 2, 3, 16] {
            let (got, pieces) = extract_on(toy(&sizes), threads).unwrap();
            assert_eq!(pieces, sizes.len());
            assert_eq!(got, want, "{threads} threads");
        }
        assert_eq!(extract_on(toy(&[]), 2).unwrap().0, crate::pce::extract(toy(&[])).unwrap());
        // With values: the sequential witness too.
        let (p, w) = crate::pce::extract_pieces_with_witness(toy(&sizes)).unwrap();
        assert_eq!(p, want);
        assert!(w == crate::pce::extract_with_witness(toy(&sizes)).unwrap().1);
    }

    /// Rows before, between and after two calls of `pieces`, each reusing coefficients first
    /// seen elsewhere: before the pieces (5, −101: the first call's pieces use them), between
    /// the calls (−102 and 9 first seen in the first call's pieces, 78 new), after them (−111
    /// first seen in the second call's pieces, 78, 77): the merged table must be caught up with
    /// the pieces' entries before every lookup outside them.
    #[derive(Clone)]
    struct Interleaved {
        first: Vec<usize>,
        second: Vec<usize>,
    }

    fn rows<CS: ConstraintSystem<Scalar>>(cs: &mut CS, coeffs: &[i64]) -> Result<(), SynthesisError> {
        let v = cs.alloc(|| "r", || Ok(Scalar::from(3u64)))?;
        for &c in coeffs {
            let k = if c < 0 { -Scalar::from(c.unsigned_abs()) } else { Scalar::from(c as u64) };
            cs.enforce(|| "r", |lc| lc + (k, v), |lc| lc + CS::one(), |lc| lc + (k, CS::one()));
        }
        Ok(())
    }

    const BEFORE: [i64; 3] = [5, -101, 77];
    const BETWEEN: [i64; 3] = [-102, 9, 78];
    const AFTER: [i64; 3] = [-111, 78, 77];

    impl Circuit<Scalar> for Interleaved {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            cs.alloc(|| "before", || Ok(Scalar::from(5u64)))?;
            rows(cs, &BEFORE)?;
            for (i, &n) in self.first.iter().enumerate() {
                piece(cs, i, n, None)?;
            }
            rows(cs, &BETWEEN)?;
            for (i, &n) in self.second.iter().enumerate() {
                piece(cs, i + 10, n, None)?;
            }
            rows(cs, &AFTER)?;
            tail(cs)
        }
    }

    impl CircuitPieces for Interleaved {
        fn synthesize_pieces<S: PieceSystem>(self, cs: &mut S) -> Result<(), SynthesisError> {
            cs.alloc(|| "before", || Ok(Scalar::from(5u64)))?;
            rows(cs, &BEFORE)?;
            cs.pieces(&self.first, |i, cs| piece(cs, i, self.first[i], None))?;
            rows(cs, &BETWEEN)?;
            cs.pieces(&self.second, |i, cs| piece(cs, i + 10, self.second[i], None))?;
            rows(cs, &AFTER)?;
            tail(cs)
        }
    }

    #[test]
    fn rows_outside_the_pieces_reuse_the_pieces_coefficients_in_the_sequential_order() {
        let t = Interleaved { first: vec![3, 0, 6, 2], second: vec![4, 0, 5] };
        let want = crate::pce::extract(t.clone()).unwrap();
        let (a, _, c) = want.matrices();
        // The coefficients outside the pieces are really shared with them (else this tests nothing).
        assert!(a.table.len() > 10 && c.table.len() > 10, "{} {}", a.table.len(), c.table.len());
        for threads in [1, 2, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let (got, pieces) = pool.install(|| crate::pce::extract_pieces(t.clone(), 0)).unwrap();
            assert_eq!(pieces, 7);
            assert_eq!(got, want, "{threads} threads");
            let (p, w) = pool.install(|| crate::pce::extract_pieces_with_witness(t.clone())).unwrap();
            assert_eq!(p, want, "{threads} threads, with values");
            assert!(w == crate::pce::extract_with_witness(t.clone()).unwrap().1, "{threads} threads: the witness");
        }
    }

    #[test]
    fn a_broken_plan_fails_the_extraction_cleanly() {
        let sizes = [4, 6, 2, 5];
        for (fault, says) in [(Fault::Fewer, "allocated 5 aux values where its plan says 6"), (Fault::More, "more than the 6 aux values"), (Fault::Input, "allocated an input")] {
            let mut t = toy(&sizes);
            t.faults[1] = Some(fault);
            for threads in [1, 4] {
                match extract_on(t.clone(), threads) {
                    Err(crate::pce::PceError::Synthesis(SynthesisError::IncompatibleLengthVector(m))) => assert!(m.contains("extraction piece 1 of 4") && m.contains(says), "{fault:?}: {m}"),
                    other => panic!("{fault:?}: {:?}", other.map(|(_, n)| n)),
                }
            }
        }
        let mut t = toy(&[2, 9, 3]);
        t.faults[1] = Some(Fault::Missing);
        assert!(matches!(crate::pce::extract_pieces_with_witness(t), Err(crate::pce::PceError::Synthesis(SynthesisError::AssignmentMissing))));
    }
}
