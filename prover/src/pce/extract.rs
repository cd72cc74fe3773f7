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
//!
//! A circuit with pieces ([`CircuitPieces`]) is extracted in parallel ([`extract_pieces`]):
//! each piece records its rows into its own [`Builder`] (own table, variables numbered as
//! in the whole circuit), on the rayon pool; then the pieces are merged in piece order. The
//! rows are appended (offsets shifted), and each piece's coefficient indices are remapped
//! into the merged table, which takes each piece's entries not yet present, in the order
//! they first appear in that piece, pieces in order: exactly the first-appearance order of
//! the sequential run, so the result is the same [`Pce`], bit for bit (tested).

use std::mem::MaybeUninit;

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::matrix::{CoeffIndex, CsrMatrix, IDX_ONE};
use super::pieces::{plan_total, run_all, CircuitPieces, Piece, PieceSystem, Planned};
use super::witness::Witness;
use super::{Pce, PceError};

/// `enforce` of the recording systems (the whole extraction's and a piece's): the row's A, B
/// and C into `self.mats`.
macro_rules! record_rows {
    () => {
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
    };
}

/// Inputs are tagged in the column while recording (their count is known only at the
/// end); the column is remapped to `num_aux + i` when the matrix is finished.
const INPUT_TAG: u32 = 1 << 31;

/// Shards of the merge of the pieces' coefficient tables (a power of two; see
/// `Builder::absorb_tables`).
const MERGE_SHARDS: usize = 64;

/// One matrix while it is recorded.
struct Builder {
    row_ptr: Vec<u32>,
    cols: Vec<u32>,
    idx: Vec<u32>,
    table: Vec<Scalar>,
    /// Montgomery limbs of a coefficient → its table index, for `table[..indexed]` (the
    /// entries a merge appended are indexed when a lookup needs them: the last piece's
    /// entries, often most of them, usually never are).
    lookup: FxHashMap<[u64; 4], u32>,
    indexed: usize,
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
        let indexed = table.len();
        Builder { row_ptr, cols: Vec::with_capacity(nnz), idx: Vec::with_capacity(nnz), table, lookup, indexed, last: None }
    }

    fn key(s: &Scalar) -> [u64; 4] {
        blst::blst_fr::from(*s).l
    }

    /// Index the table entries a merge appended.
    fn catch_up(&mut self) {
        // One growth for the whole run (a merge can append millions of entries at once).
        self.lookup.reserve(self.table.len() - self.indexed);
        for i in self.indexed..self.table.len() {
            self.lookup.insert(Self::key(&self.table[i]), i as u32);
        }
        self.indexed = self.table.len();
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
        self.catch_up();
        let next = self.table.len() as u32;
        let i = *self.lookup.entry(Self::key(coeff)).or_insert(next);
        if i == next {
            self.table.push(*coeff);
            self.indexed += 1;
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
        cols.par_iter_mut().with_min_len(1 << 16).for_each(|c| {
            if *c & INPUT_TAG != 0 {
                *c = aux + (*c & !INPUT_TAG);
            }
        });
        let coeffs = CoeffIndex::narrow(idx, table.len());
        Ok(CsrMatrix { row_ptr, cols, coeffs, table })
    }

    /// Where each entry of each of `tables` (the pieces', in order) is in this table,
    /// appending the entries not present: pieces in order, each piece's new entries in their
    /// order (a piece's table has no entry twice), as one thread's run would have added them.
    /// In parallel: the pieces' entries looked up in this table; those missing sorted into
    /// shards by value, and each shard, going through the pieces in order, keeps the first
    /// occurrence of a value (a later one is a duplicate of it); then the first occurrences
    /// numbered in piece order and appended. The entries appended are not indexed in the
    /// lookup until a lookup needs them.
    fn absorb_tables(&mut self, tables: &[&[Scalar]]) -> Vec<Vec<u32>> {
        /// Not in this table (yet), and a duplicate of an earlier piece's new entry.
        const MISS: u32 = u32::MAX;
        const DUP: u32 = u32::MAX - 1;
        self.catch_up();
        let lookup = &self.lookup;
        let shard = |k: &[u64; 4]| (k[0] >> 3) as usize & (MERGE_SHARDS - 1);
        let mut parts: Vec<(Vec<u32>, Vec<Vec<u32>>)> = tables
            .par_iter()
            .map(|t| {
                let mut buckets = vec![Vec::new(); MERGE_SHARDS];
                let map = t
                    .iter()
                    .enumerate()
                    .map(|(j, s)| {
                        let k = Self::key(s);
                        lookup.get(&k).copied().unwrap_or_else(|| {
                            buckets[shard(&k)].push(j as u32);
                            MISS
                        })
                    })
                    .collect();
                (map, buckets)
            })
            .collect();
        // (piece, entry) of every duplicate, and of its first occurrence.
        let dups: Vec<Vec<[u32; 4]>> = (0..MERGE_SHARDS)
            .into_par_iter()
            .map(|sh| {
                let size: usize = parts.iter().map(|(_, buckets)| buckets[sh].len()).sum();
                let mut first: FxHashMap<[u64; 4], (u32, u32)> = FxHashMap::with_capacity_and_hasher(size, Default::default());
                let mut dups = Vec::new();
                for (p, (_, buckets)) in parts.iter().enumerate() {
                    for &j in &buckets[sh] {
                        let at = (p as u32, j);
                        let was = *first.entry(Self::key(&tables[p][j as usize])).or_insert(at);
                        if was != at {
                            dups.push([at.0, at.1, was.0, was.1]);
                        }
                    }
                }
                dups
            })
            .collect();
        for &[p, j, _, _] in dups.iter().flatten() {
            parts[p as usize].0[j as usize] = DUP;
        }
        // The first occurrences, numbered in piece order and appended, in parallel.
        let counts: Vec<usize> = parts.par_iter().map(|(m, _)| m.iter().filter(|&&i| i == MISS).count()).collect();
        let len = self.table.len();
        let added: usize = counts.iter().sum();
        self.table.reserve(added);
        let mut rest = &mut self.table.spare_capacity_mut()[..added];
        let mut work = Vec::with_capacity(parts.len());
        let mut next = len;
        for ((part, t), n) in parts.iter_mut().zip(tables).zip(&counts) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(*n);
            rest = tail;
            work.push((&mut part.0, *t, head, next));
            next += n;
        }
        work.into_par_iter().for_each(|(map, t, out, start)| {
            let mut k = 0;
            for (i, s) in map.iter_mut().zip(t.iter()) {
                if *i == MISS {
                    // Indices past u32::MAX wrap as the sequential builder's do (`finish`
                    // refuses such a matrix by its non-zeros long before).
                    *i = (start + k) as u32;
                    out[k].write(*s);
                    k += 1;
                }
            }
        });
        // SAFETY: the slices written above are disjoint and cover the `added` entries of
        // spare capacity reserved; each piece wrote exactly its count of new entries.
        unsafe { self.table.set_len(len + added) };
        // A duplicate takes its first occurrence's index (an earlier piece's new entry).
        for &[p, j, p0, j0] in dups.iter().flatten() {
            parts[p as usize].0[j as usize] = parts[p0 as usize].0[j0 as usize];
        }
        parts.into_iter().map(|(m, _)| m).collect()
    }

    /// Append the rows of `parts`, in order (see the module docs): tables first (in piece
    /// order, on this thread), then offsets, columns and remapped indices written into
    /// disjoint slices of this builder's arrays, in parallel. Each part's arrays are freed
    /// once copied.
    fn merge(&mut self, mut parts: Vec<Builder>) {
        let tables: Vec<&[Scalar]> = parts.iter().map(|p| p.table.as_slice()).collect();
        let maps = self.absorb_tables(&tables);
        let rows: usize = parts.iter().map(|p| p.row_ptr.len() - 1).sum();
        let nnz: usize = parts.iter().map(|p| p.cols.len()).sum();
        let base = self.cols.len();
        self.row_ptr.reserve(rows);
        self.cols.reserve(nnz);
        self.idx.reserve(nnz);
        // Each part's slice of the three arrays, and the offset its rows start at.
        let mut work = Vec::with_capacity(parts.len());
        let (mut rp, mut cl, mut ix) = (&mut self.row_ptr.spare_capacity_mut()[..rows], &mut self.cols.spare_capacity_mut()[..nnz], &mut self.idx.spare_capacity_mut()[..nnz]);
        let mut at = base;
        for (p, map) in parts.iter_mut().zip(&maps) {
            let (r, n) = (p.row_ptr.len() - 1, p.cols.len());
            let (r0, r1) = std::mem::take(&mut rp).split_at_mut(r);
            let (c0, c1) = std::mem::take(&mut cl).split_at_mut(n);
            let (i0, i1) = std::mem::take(&mut ix).split_at_mut(n);
            (rp, cl, ix) = (r1, c1, i1);
            work.push((p, map, at, r0, c0, i0));
            at += n;
        }
        const CHUNK: usize = 1 << 16;
        work.into_par_iter().for_each(|(p, map, at, r, c, i)| {
            // Offsets wrap past u32::MAX as the sequential builder's do; `finish` refuses them.
            r.par_chunks_mut(CHUNK).zip(p.row_ptr[1..].par_chunks(CHUNK)).for_each(|(d, s)| {
                for (d, s) in d.iter_mut().zip(s) {
                    d.write((at + *s as usize) as u32);
                }
            });
            c.par_chunks_mut(CHUNK).zip(p.cols.par_chunks(CHUNK)).for_each(|(d, s)| write_all(d, s));
            i.par_chunks_mut(CHUNK).zip(p.idx.par_chunks(CHUNK)).for_each(|(d, s)| {
                for (d, s) in d.iter_mut().zip(s) {
                    d.write(map[*s as usize]);
                }
            });
            *p = Builder { row_ptr: Vec::new(), cols: Vec::new(), idx: Vec::new(), table: Vec::new(), lookup: FxHashMap::default(), indexed: 0, last: None };
        });
        // SAFETY: the slices written above are disjoint and cover the spare capacity
        // reserved for `rows` offsets and `nnz` columns and indices; every element was written.
        unsafe {
            self.row_ptr.set_len(self.row_ptr.len() + rows);
            self.cols.set_len(base + nnz);
            self.idx.set_len(base + nnz);
        }
    }
}

fn write_all(d: &mut [MaybeUninit<u32>], s: &[u32]) {
    for (d, s) in d.iter_mut().zip(s) {
        d.write(*s);
    }
}

/// A constraint system that records the rows of A, B and C (see the module docs).
pub struct ExtractCs {
    num_inputs: usize,
    num_aux: usize,
    mats: [Builder; 3],
    /// The witness, when recorded too (inputs with ONE first, aux).
    values: Option<(Vec<Scalar>, Vec<Scalar>)>,
    /// Pieces run in parallel so far ([`PieceSystem::pieces`]).
    pieces: usize,
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
        ExtractCs { num_inputs: 0, num_aux: 0, mats, values, pieces: 0 }
    }

    /// Pieces run in parallel into it so far.
    pub fn pieces_run(&self) -> usize {
        self.pieces
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

    record_rows!();

    crate::flat_namespaces!();
}

impl PieceSystem for ExtractCs {
    type Piece<'a> = ExtractPiece;

    /// Each piece records into its own builders (and values), merged in piece order.
    fn pieces<T, F>(&mut self, aux: &[usize], run: F) -> Result<Vec<T>, SynthesisError>
    where
        T: Send,
        F: Fn(usize, &mut ExtractPiece) -> Result<T, SynthesisError> + Sync,
    {
        let total = plan_total(aux, ExtractPiece::WHAT)?;
        let with_values = self.values.is_some();
        let mut first = self.num_aux;
        let work: Vec<(usize, ExtractPiece)> = aux
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let p = ExtractPiece::new(first, n, with_values);
                first += n;
                (i, p)
            })
            .collect();
        let done = run_all(work, &run)?;
        let mut results = Vec::with_capacity(done.len());
        let mut parts: [Vec<Builder>; 3] = Default::default();
        if let Some((_, aux)) = &mut self.values {
            aux.reserve(total);
        }
        for (t, p) in done {
            results.push(t);
            if let (Some((_, aux)), Some(v)) = (&mut self.values, p.values) {
                aux.extend_from_slice(&v);
            }
            for (m, mut b) in parts.iter_mut().zip(p.mats) {
                // The merge needs a piece's rows and table, not its lookup (at 2^27 the
                // ~2,000 pieces' maps would hold gigabytes through the merge).
                b.lookup = FxHashMap::default();
                b.last = None;
                m.push(b);
            }
        }
        self.num_aux += total;
        for (m, p) in self.mats.iter_mut().zip(parts) {
            m.merge(p);
        }
        self.pieces += aux.len();
        Ok(results)
    }

    fn has_values(&self) -> bool {
        self.values.is_some()
    }
}

/// The constraint system of one piece of an extraction (see the module docs): its rows
/// in its own builders, its aux variables numbered from [`Piece::first`], its values kept
/// when the extraction keeps them.
pub struct ExtractPiece {
    first: usize,
    planned: usize,
    /// Values allocated; `planned + 1` once it tried to allocate more (then it fails).
    len: usize,
    input: bool,
    mats: [Builder; 3],
    values: Option<Vec<Scalar>>,
}

impl ExtractPiece {
    fn new(first: usize, planned: usize, with_values: bool) -> Self {
        // Rows are about as many as aux values in the benchmark circuits (a hint only).
        let mats = [Builder::new(planned, 3), Builder::new(planned, 1), Builder::new(planned, 3)];
        ExtractPiece { first, planned, len: 0, input: false, mats, values: with_values.then(|| Vec::with_capacity(planned)) }
    }
}

impl Piece for ExtractPiece {
    fn first(&self) -> usize {
        self.first
    }
}

impl Planned for ExtractPiece {
    const WHAT: &'static str = "extraction piece";
    fn planned(&self) -> usize {
        self.planned
    }
    fn allocated(&self) -> usize {
        self.len
    }
    fn tried_input(&self) -> bool {
        self.input
    }
}

impl ConstraintSystem<Scalar> for ExtractPiece {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // The value first, as the witness's pieces do (the same error for the same circuit).
        let v = match &self.values {
            Some(_) => Some(f()?),
            None => None,
        };
        if self.len >= self.planned {
            // Past its plan its variables would be the next piece's.
            self.len = self.planned + 1;
            return Err(SynthesisError::IncompatibleLengthVector("an extraction piece allocated more than its plan".into()));
        }
        if let (Some(values), Some(v)) = (&mut self.values, v) {
            values.push(v);
        }
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
        Err(SynthesisError::IncompatibleLengthVector("an extraction piece allocated an input".into()))
    }

    record_rows!();

    crate::flat_namespaces!();
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

/// [`extract_sized`] for a circuit with pieces: its pieces extracted in parallel on the
/// current rayon pool and merged (see the module docs), the same [`Pce`] as [`extract`]'s.
/// Also returns the number of pieces that ran (0: the circuit has none, it ran on the
/// calling thread).
pub fn extract_pieces<C: CircuitPieces>(circuit: C, rows_hint: usize) -> Result<(Pce, usize), PceError> {
    let mut cs = ExtractCs::with_capacity(false, rows_hint);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize_pieces(&mut cs)?;
    let pieces = cs.pieces;
    Ok((cs.finish()?.0, pieces))
}

/// [`extract_with_witness`] for a circuit with pieces ([`extract_pieces`], values kept).
pub fn extract_pieces_with_witness<C: CircuitPieces>(circuit: C) -> Result<(Pce, Witness), PceError> {
    let mut cs = ExtractCs::new(true);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize_pieces(&mut cs)?;
    let (pce, w) = cs.finish()?;
    w.map(|w| (pce, w)).ok_or(PceError::Synthesis(SynthesisError::AssignmentMissing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{Family, PorepLike};

    fn on<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    /// Both families at sizes below one SHA block (the arithmetic section alone), with one to
    /// several blocks (the chained state's variables come from the piece before) and several
    /// mix16 pieces, powers of two and not: the pieces' extraction is the sequential one, on
    /// pools of 1, 2 and 4 threads.
    #[test]
    fn extraction_in_pieces_equals_the_sequential_one() {
        let sizes: [(Family, &[u64]); 2] = [(Family::PorepLike, &[1 << 10, 3000, 1 << 14, 1 << 17, 200_001]), (Family::Mix16, &[1 << 10, 3001, 1 << 14, 1 << 16, 70_001])];
        for (family, sizes) in sizes {
            for &n in sizes {
                let want = extract(family.circuit(n, 1)).unwrap();
                for threads in [1, 2, 4] {
                    let (got, pieces) = on(threads, || extract_pieces(family.circuit(n, 1), n as usize)).unwrap();
                    assert!(pieces > 0, "{family:?} n={n}: no pieces ran");
                    assert!(got == want, "{family:?} n={n}, {threads} threads: the PCE differs");
                    assert_eq!(got.shape_hash(), want.shape_hash());
                }
            }
        }
    }

    #[test]
    fn extraction_in_pieces_with_values_keeps_the_sequential_witness() {
        for c in [Family::PorepLike.circuit(1 << 17, 5), Family::Mix16.circuit(1 << 16, 5)] {
            let want = extract_with_witness(c.clone()).unwrap();
            let got = on(2, || extract_pieces_with_witness(c.clone())).unwrap();
            assert_eq!(got.0, want.0);
            assert!(got.1 == want.1, "{}: the witness differs", c.id());
        }
        // A corrupted row is a value, not a row: same matrices, the same corrupted witness.
        let mut c = PorepLike::new(1 << 12, 5);
        c.corrupt_row = Some(17);
        let want = extract_with_witness(c.clone()).unwrap();
        assert!(on(2, || extract_pieces_with_witness(c)).unwrap() == want);
    }

    /// Timing, not a check of speed (the equality is checked): the sequential and the piece
    /// extraction of the porep-like circuit at `PROOFSCOPE_EXTRACT_N` constraints (default
    /// 2^20), and its witness on one thread and in pieces, on the global pool. Run in release:
    /// `cargo test -p prover --release --lib -- extraction_timing --ignored --nocapture`.
    #[test]
    #[ignore]
    fn extraction_timing() {
        let n: u64 = std::env::var("PROOFSCOPE_EXTRACT_N").ok().and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
        let c = PorepLike::new(n, 1);
        let t = std::time::Instant::now();
        let (got, pieces) = extract_pieces(c.clone(), n as usize).unwrap();
        let pieces_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let want = extract_sized(c.clone(), n as usize).unwrap();
        let seq_s = t.elapsed().as_secs_f64();
        assert!(got == want, "n={n}: the PCE differs");
        drop((got, want));
        // Where the piece extraction's time goes: the pieces (and merge), the matrices' finish.
        let t = std::time::Instant::now();
        let mut cs = ExtractCs::with_capacity(false, n as usize);
        cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
        crate::pce::CircuitPieces::synthesize_pieces(c.clone(), &mut cs).unwrap();
        let run_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        drop(cs.finish().unwrap());
        println!("TIMING n={n} extract in pieces: run and merge {run_s:.2} s, finish {:.2} s", t.elapsed().as_secs_f64());
        let (inputs, aux) = (2, n as usize);
        let t = std::time::Instant::now();
        let (w, wp) = crate::pce::pieces::generate_parallel(c.clone(), inputs, aux, None).unwrap();
        let wit_pieces_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let ws = crate::pce::witness::generate(c, inputs, aux).unwrap();
        let wit_seq_s = t.elapsed().as_secs_f64();
        assert!(w == ws, "n={n}: the witness differs");
        println!("TIMING n={n} threads={} extract: sequential {seq_s:.2} s, {pieces} pieces {pieces_s:.2} s; witness: sequential {wit_seq_s:.2} s, {wp} pieces {wit_pieces_s:.2} s", rayon::current_num_threads());
    }
}
