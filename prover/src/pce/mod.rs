//! Pre-compiled constraints (PCE): a partition's synthesis as witness generation plus three
//! sparse matrix–vector products, instead of running the circuit's constraint-building code
//! for every partition. This module exists because that code (linear combinations built,
//! merged and evaluated one constraint at a time, on one thread) is most of a partition's
//! synthesis, and its result, A, B and C, is the same for every partition of a circuit
//! shape: extract it once ([`extract`]), keep it in a compact form ([`matrix`]) in memory,
//! shared by every synthesis worker, and on disk next to the parameter file ([`cache`]);
//! then per partition run the circuit for its witness only ([`witness`]; in parallel pieces
//! on the synthesis's thread pool where the circuit has them, [`pieces`]) and multiply
//! ([`eval`]). [`bandwidth`] measures the memory bandwidth the products are bound by.
//!
//! [`synthesize_pce`] returns exactly what [`crate::synthesis::synthesize_with_capacity`]
//! returns (a, b, c, inputs, aux, the three densities, and an unsatisfied constraint as an
//! error naming its index), tested on both circuit families at several sizes.

pub mod bandwidth;
pub mod cache;
pub mod eval;
pub mod extract;
pub mod matrix;
pub mod pieces;
pub mod witness;

use bellpepper_core::SynthesisError;
use timeline::event::{arg, kind};
use tracing::info_span;

use crate::synthesis::{Density, Evals, ProvingAssignment, SynthesisFailure};
use matrix::CsrMatrix;

pub use cache::{cache_path, load_or_build, OnCorrupt, PceKey, PceSource};
pub use eval::{products, Products, DEFAULT_CHUNK_ROWS};
pub use extract::{extract, extract_pieces, extract_pieces_with_witness, extract_sized, extract_with_witness};
pub use pieces::{CircuitPieces, Piece, PieceSystem};
pub use witness::Witness;

/// Why pre-compiled constraints could not be made, read or used.
#[derive(Debug, thiserror::Error)]
pub enum PceError {
    #[error("extracting the constraints: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("the circuit is too large for the pre-compiled form: {0}")]
    TooLarge(String),
    #[error("malformed pre-compiled constraints: matrix {matrix}: {reason}")]
    Malformed { matrix: &'static str, reason: String },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: corrupt PCE cache: {reason} (delete the file to rebuild it, or set pce_rebuild_corrupt = true)")]
    Corrupt { path: String, reason: String },
}

/// The pre-compiled constraints of one circuit shape: A, B, C over the witness columns
/// (aux first, then the inputs, ONE first among them), the input constraints included, and
/// the densities the prover needs (which depend on the matrices only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pce {
    num_inputs: usize,
    num_aux: usize,
    a: CsrMatrix,
    b: CsrMatrix,
    c: CsrMatrix,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    shape_hash: [u8; 32],
    /// How the products apply each table entry of A, B, C (derived from the tables).
    ops: [Vec<eval::Op>; 3],
}

/// What a [`Pce`] weighs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PceSize {
    pub constraints: u64,
    pub nnz: [u64; 3],
    pub table: [u64; 3],
    pub index_bytes: [u8; 3],
    /// Bytes of the three matrices (offsets, columns, indices, tables).
    pub matrix_bytes: u64,
    pub bytes_per_constraint: f64,
}

impl Pce {
    /// Check the matrices and derive the densities (and the shape hash unless given).
    pub(crate) fn from_matrices(num_inputs: usize, num_aux: usize, a: CsrMatrix, b: CsrMatrix, c: CsrMatrix, shape_hash: Option<[u8; 32]>) -> Result<Pce, PceError> {
        let rows = a.rows();
        for (matrix, m) in [("A", &a), ("B", &b), ("C", &c)] {
            m.validate(rows, num_aux + num_inputs).map_err(|e| PceError::Malformed { matrix, reason: e.0 })?;
        }
        let mut a_aux_density = Density::with_len(num_aux);
        let mut b_input_density = Density::with_len(num_inputs);
        let mut b_aux_density = Density::with_len(num_aux);
        for &col in &a.cols {
            if (col as usize) < num_aux {
                a_aux_density.set(col as usize);
            }
        }
        for &col in &b.cols {
            match (col as usize).checked_sub(num_aux) {
                None => b_aux_density.set(col as usize),
                Some(i) => b_input_density.set(i),
            }
        }
        let ops = [eval::ops_of(&a.table), eval::ops_of(&b.table), eval::ops_of(&c.table)];
        let mut pce = Pce { num_inputs, num_aux, a, b, c, a_aux_density, b_input_density, b_aux_density, shape_hash: [0; 32], ops };
        pce.shape_hash = match shape_hash {
            Some(h) => h,
            None => pce.compute_shape_hash(),
        };
        Ok(pce)
    }

    /// BLAKE3 of the counts and the three matrices' canonical bytes (the cache payload).
    fn compute_shape_hash(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(b"proofscope-pce-shape/1");
        for v in [self.num_inputs as u64, self.num_aux as u64, self.num_constraints() as u64] {
            h.update(&v.to_le_bytes());
        }
        for m in [&self.a, &self.b, &self.c] {
            m.hash_into(&mut h);
        }
        *h.finalize().as_bytes()
    }

    /// Inputs, ONE included.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }
    /// Rows, the input constraints included (what synthesis calls the constraint count).
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }
    /// Witness columns: aux, then inputs.
    pub fn columns(&self) -> usize {
        self.num_aux + self.num_inputs
    }
    pub fn matrices(&self) -> (&CsrMatrix, &CsrMatrix, &CsrMatrix) {
        (&self.a, &self.b, &self.c)
    }
    /// How the products apply each table entry of A, B, C.
    pub fn ops(&self) -> (&[eval::Op], &[eval::Op], &[eval::Op]) {
        (&self.ops[0], &self.ops[1], &self.ops[2])
    }
    /// A stable hash of the shape: the counts and every row of A, B and C.
    pub fn shape_hash(&self) -> [u8; 32] {
        self.shape_hash
    }
    pub fn shape_hash_hex(&self) -> String {
        self.shape_hash.iter().map(|b| format!("{b:02x}")).collect()
    }
    pub fn densities(&self) -> (&Density, &Density, &Density) {
        (&self.a_aux_density, &self.b_input_density, &self.b_aux_density)
    }
    /// Bytes of the three matrices.
    pub fn matrix_bytes(&self) -> u64 {
        (self.a.bytes() + self.b.bytes() + self.c.bytes()) as u64
    }
    /// Bytes held in memory (matrices, the products' per-entry ops, densities).
    pub fn heap_bytes(&self) -> u64 {
        let ops: usize = self.ops.iter().map(|o| o.len() * std::mem::size_of::<eval::Op>()).sum();
        self.matrix_bytes() + (ops + self.a_aux_density.heap_bytes() + self.b_input_density.heap_bytes() + self.b_aux_density.heap_bytes()) as u64
    }
    pub fn size(&self) -> PceSize {
        let ms = [&self.a, &self.b, &self.c];
        let n = self.num_constraints() as u64;
        PceSize {
            constraints: n,
            nnz: ms.map(|m| m.nnz() as u64),
            table: ms.map(|m| m.table.len() as u64),
            index_bytes: ms.map(|m| m.coeffs.width() as u8),
            matrix_bytes: self.matrix_bytes(),
            bytes_per_constraint: self.matrix_bytes() as f64 / n.max(1) as f64,
        }
    }
    /// The memory traffic of one partition's products, at least: the matrices read once, the
    /// witness read once, a, b and c written once (32 bytes a value). What the bandwidth
    /// floor divides (the `bytes` argument of the `constraints` span).
    pub fn traffic_bytes(&self) -> u64 {
        self.matrix_bytes() + 32 * self.columns() as u64 + 3 * 32 * self.num_constraints() as u64
    }
}

/// How the witness pieces and the products of [`synthesize_pce`] run.
#[derive(Clone, Copy, Debug)]
pub struct PceRun<'a> {
    /// The pool to generate the witness's pieces and multiply on; `None`: the current one
    /// (rayon's global pool by default).
    pub pool: Option<&'a rayon::ThreadPool>,
    pub chunk_rows: usize,
}

impl Default for PceRun<'_> {
    fn default() -> Self {
        PceRun { pool: None, chunk_rows: DEFAULT_CHUNK_ROWS }
    }
}

/// Synthesise a circuit for proving with its pre-compiled constraints: its witness ([`generate_witness`],
/// span `witness`), then a, b, c (span `constraints`, argument `bytes`: [`Pce::traffic_bytes`]),
/// both on `run.pool`. Returns what [`crate::synthesis::synthesize_with_capacity`] returns for
/// the same circuit; a circuit whose counts differ from the PCE's is refused
/// ([`SynthesisFailure::PceMismatch`]); an unsatisfied constraint is an error naming its
/// index (its name is not recorded in the matrices).
pub fn synthesize_pce<C: CircuitPieces + Send>(circuit: C, pce: &Pce, run: PceRun<'_>) -> Result<ProvingAssignment, SynthesisFailure> {
    let w = generate_witness(circuit, pce.num_inputs, pce.num_aux, run.pool)?;
    assemble(w, pce, run)
}

/// A partition's witness for the pre-compiled path, in span `witness` (args `aux`, `threads`:
/// the pool's, `pieces`: how many ran in parallel on it, 0 when the circuit has none and its
/// witness ran on one thread): [`pieces::generate_parallel`] on `pool` (`None`: the current
/// one), with room for `inputs` / `aux` values.
pub fn generate_witness<C: CircuitPieces + Send>(circuit: C, inputs: usize, aux: usize, pool: Option<&rayon::ThreadPool>) -> Result<Witness, SynthesisError> {
    let threads = pool.map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    let span = info_span!(kind::WITNESS, aux = aux as u64, threads = threads as u64, pieces = tracing::field::Empty);
    let _e = span.enter();
    let (w, pieces) = pieces::generate_parallel(circuit, inputs, aux, pool)?;
    span.record("pieces", pieces as u64);
    Ok(w)
}

/// The products of a generated witness, and the assignment (span `constraints`).
pub fn assemble(w: Witness, pce: &Pce, run: PceRun<'_>) -> Result<ProvingAssignment, SynthesisFailure> {
    assemble_into(w, pce, run, None)
}

/// [`assemble`] writing a, b and c into `out` when given (vectors lent by the engine's
/// [`crate::abc_pool::AbcPool`], which stay in the assignment), else into fresh vectors.
pub fn assemble_into(w: Witness, pce: &Pce, run: PceRun<'_>, out: Option<[Evals; 3]>) -> Result<ProvingAssignment, SynthesisFailure> {
    let Witness { inputs, mut aux, constraints } = w;
    if inputs.len() != pce.num_inputs || aux.len() != pce.num_aux || constraints + inputs.len() != pce.num_constraints() {
        return Err(SynthesisFailure::PceMismatch(format!(
            "the pre-compiled constraints have {} inputs / {} aux / {} constraints (shape {}), the circuit {} / {} / {}",
            pce.num_inputs,
            pce.num_aux,
            pce.num_constraints(),
            &pce.shape_hash_hex()[..16],
            inputs.len(),
            aux.len(),
            constraints + inputs.len()
        )));
    }
    let p = {
        let threads = run.pool.map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
        let span = info_span!(kind::CONSTRAINTS, { arg::BYTES } = pce.traffic_bytes(), rows = pce.num_constraints() as u64, threads = threads as u64);
        let _e = span.enter();
        // The witness in column order without a copy: the inputs appended to the aux vector
        // (which has room for them), taken off again afterwards.
        aux.extend_from_slice(&inputs);
        let p = match out {
            None => {
                let p = crate::on_pool(run.pool, || products(pce, &aux, run.chunk_rows));
                (p.first_unsatisfied, [p.a.into(), p.b.into(), p.c.into()])
            }
            Some(mut out) => {
                // The lent vectors' memory is written in place (the products keep an
                // allocation large enough) and stays in its lease.
                let [a, b, c] = out.each_mut().map(|e| std::mem::take(&mut **e));
                let p = crate::on_pool(run.pool, || eval::products_into(pce, &aux, run.chunk_rows, eval::Products { a, b, c, first_unsatisfied: None }));
                for (e, v) in out.iter_mut().zip([p.a, p.b, p.c]) {
                    **e = v;
                }
                (p.first_unsatisfied, out)
            }
        };
        aux.truncate(pce.num_aux);
        p
    };
    let (first_unsatisfied, [a, b, c]) = p;
    if let Some(index) = first_unsatisfied {
        return Err(SynthesisFailure::Unsatisfied { index, name: "name not recorded by the pre-compiled constraints; synthesis = \"circuit\" names it".into() });
    }
    Ok(ProvingAssignment::from_parts((a, b, c), inputs, aux, pce.a_aux_density.clone(), pce.b_input_density.clone(), pce.b_aux_density.clone()))
}
