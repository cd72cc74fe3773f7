//! The benchmark circuits. [`PorepLike`] is a family sized by a constraint count whose
//! shape resembles a Filecoin PoRep partition (mostly SHA-256 compressions, plus an
//! arithmetic hash section that steers the non-zeros per row and the B density), with a
//! witness that is a deterministic function of a seed. [`Mix16`] has the witness mix of
//! the bellperson/supraseal figure of issue 5 (1/16 full-width values, the rest 0/1).
//! [`Family`] names them on the command line and in parameter files, [`BenchCircuit`] is
//! either. Any other bellpepper circuit can be proven as well; these exist so that benches
//! and demos have a realistic load.

pub mod arith;
pub mod mix16;
pub mod sha;
pub mod shape;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::pce::{CircuitPieces, Piece, PieceSystem};

pub use shape::{measure, Shape};

/// Smallest and largest sizes the CLI accepts (`--constraints`).
pub const MIN_CONSTRAINTS: u64 = 1 << 8;
pub const MAX_CONSTRAINTS: u64 = 1 << 27;

/// Fraction of the constraints given to SHA-256 compressions when the circuit is big
/// enough to hold at least one; the rest is the arithmetic hash section.
pub const SHA_FRACTION: f64 = 0.5;

/// Number of public inputs besides the constant ONE (the arithmetic section's digest).
pub const NUM_PUBLIC_INPUTS: usize = 1;

/// A PoRep-like circuit of exactly `constraints` constraints once the Groth16 input
/// constraints are added (so a power of two fills its evaluation domain exactly).
#[derive(Clone, Debug)]
pub struct PorepLike {
    pub constraints: u64,
    /// Seed of the witness: same seed, same witness, same public input.
    pub seed: u64,
    /// Fault injection for tests and drills: make the witness of this arithmetic row
    /// wrong, so the circuit is unsatisfied at a known constraint.
    pub corrupt_row: Option<usize>,
}

/// How a [`PorepLike`] of a given size splits its constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub sha_blocks: usize,
    pub sha_constraints: usize,
    pub arith_rows: usize,
}

impl PorepLike {
    pub fn new(constraints: u64, seed: u64) -> Self {
        PorepLike { constraints, seed, corrupt_row: None }
    }

    /// Stable identifier stored in parameter files, so a file made for another circuit
    /// is refused.
    pub fn id(&self) -> String {
        Family::PorepLike.id(self.constraints)
    }

    /// Checks the size and says how the constraints are split.
    pub fn layout(&self) -> Result<Layout, String> {
        Family::PorepLike.check_size(self.constraints)?;
        let n = self.constraints as usize;
        // Input constraints (ONE + public inputs) and the digest binding are fixed costs.
        let fixed = (1 + NUM_PUBLIC_INPUTS) + NUM_PUBLIC_INPUTS;
        let sha_budget = ((n as f64) * SHA_FRACTION) as usize;
        let sha_blocks = sha::blocks_within(sha_budget);
        let sha_constraints = sha::cost(sha_blocks);
        let arith_rows = n - fixed - sha_constraints;
        if arith_rows < arith::MIN_ROWS {
            return Err(format!("--constraints {n} leaves no room for the arithmetic section"));
        }
        Ok(Layout { sha_blocks, sha_constraints, arith_rows })
    }
}

impl Circuit<Scalar> for PorepLike {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let layout = self.layout().map_err(|_| SynthesisError::Unsatisfiable)?;
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        sha::synthesize(&mut cs.namespace(|| "sha"), layout.sha_blocks, &mut rng)?;
        let digest = arith::synthesize(&mut cs.namespace(|| "arith"), layout.arith_rows, &mut rng, self.corrupt_row)?;
        bind_output(cs, "digest", digest.var, digest.value)
    }
}

/// The circuits' one public input: `out` allocated from `value`, bound by `var * 1 = out`,
/// which puts the input in C only (as PoRep's inputs, which never appear in B).
fn bind_output<CS: ConstraintSystem<Scalar>>(cs: &mut CS, name: &'static str, var: bellpepper_core::Variable, value: Option<Scalar>) -> Result<(), SynthesisError> {
    let out = cs.alloc_input(|| name, || value.ok_or(SynthesisError::AssignmentMissing))?;
    cs.enforce(|| format!("bind {name}"), |lc| lc + var, |lc| lc + CS::one(), |lc| lc + out);
    Ok(())
}

/// The parallel witness and extraction: the SHA blocks' chain run natively ([`sha::Plan`]),
/// then every block a piece, and the arithmetic section (a chain of field operations, one
/// value a row, which only its own previous values feed) cut into pieces of
/// [`arith::PIECE_ROWS`] rows beside them ([`arith::Plan`], its seeds drawn where the blocks'
/// draws leave the RNG, its chain run on values only first). At 2^27 that is ~2,500 blocks
/// and ~2,000 arithmetic pieces.
impl CircuitPieces for PorepLike {
    fn synthesize_pieces<S: PieceSystem>(self, cs: &mut S) -> Result<(), SynthesisError> {
        self.synthesize_pieces_of(cs, arith::PIECE_ROWS)
    }
}

impl PorepLike {
    /// [`CircuitPieces::synthesize_pieces`] with arithmetic pieces of `arith_piece_rows` rows
    /// (a positive multiple of 4; tests cut small sections into many pieces).
    pub fn synthesize_pieces_of<S: PieceSystem>(self, cs: &mut S, arith_piece_rows: usize) -> Result<(), SynthesisError> {
        let layout = self.layout().map_err(|_| SynthesisError::Unsatisfiable)?;
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        let sha = sha::Plan::draw(layout.sha_blocks, &mut rng);
        let arith = arith::Plan::draw(layout.arith_rows, &mut rng, self.corrupt_row, cs.has_values(), arith_piece_rows)?;
        let blocks = sha.blocks();
        let aux: Vec<usize> = (0..blocks).map(|b| sha.aux(b)).chain((0..arith.pieces()).map(|k| arith.aux(k))).collect();
        let mut out = cs.pieces(&aux, |i, cs| {
            let first = cs.first();
            if i < blocks {
                sha.block(cs, i, first).map(|_| None)
            } else {
                arith.piece(cs, i - blocks, first).map(Some)
            }
        })?;
        let digest = out.pop().flatten().ok_or(SynthesisError::AssignmentMissing)?;
        bind_output(cs, "digest", digest.var, digest.value)
    }
}

/// The public inputs (without ONE) a proof of `PorepLike { constraints, seed }` proves,
/// computed by synthesising the witness.
pub fn public_inputs(circuit: &PorepLike) -> Result<Vec<Scalar>, crate::SynthesisFailure> {
    let a = crate::synthesis::synthesize(circuit.clone())?;
    Ok(a.public_inputs().to_vec())
}

/// A circuit of exactly `constraints` constraints (input constraints included) whose witness
/// is 1/16 full-width values and 15/16 random bits ([`mix16`]); one public input (the last
/// full-width value, in C only).
#[derive(Clone, Debug)]
pub struct Mix16 {
    pub constraints: u64,
    pub seed: u64,
}

impl Mix16 {
    pub fn new(constraints: u64, seed: u64) -> Self {
        Mix16 { constraints, seed }
    }

    pub fn id(&self) -> String {
        Family::Mix16.id(self.constraints)
    }

    /// Rows of the body (all but the input constraints and the binding row), or why the
    /// size is refused.
    pub fn rows(&self) -> Result<usize, String> {
        Family::Mix16.check_size(self.constraints)?;
        Ok(self.constraints as usize - (1 + NUM_PUBLIC_INPUTS) - NUM_PUBLIC_INPUTS)
    }
}

impl Circuit<Scalar> for Mix16 {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let rows = self.rows().map_err(|_| SynthesisError::Unsatisfiable)?;
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        let (last, value) = mix16::synthesize(&mut cs.namespace(|| "mix16"), rows, &mut rng)?;
        bind_output(cs, "last", last, value)
    }
}

/// The parallel witness and extraction: [`mix16::synthesize_pieces`].
impl CircuitPieces for Mix16 {
    fn synthesize_pieces<S: PieceSystem>(self, cs: &mut S) -> Result<(), SynthesisError> {
        let rows = self.rows().map_err(|_| SynthesisError::Unsatisfiable)?;
        let rng = ChaCha20Rng::seed_from_u64(self.seed);
        let (last, value) = mix16::synthesize_pieces(cs, rows, rng, mix16::PIECE_GROUPS)?;
        bind_output(cs, "last", last, value)
    }
}

/// The benchmark circuit families (`--circuit`), as named in parameter-file ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Family {
    /// [`PorepLike`]: half SHA-256 bits, half full-width arithmetic.
    #[default]
    PorepLike,
    /// [`Mix16`]: 1/16 full-width witness values, the rest bits.
    Mix16,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::PorepLike, Family::Mix16];

    pub fn name(self) -> &'static str {
        match self {
            Family::PorepLike => "porep-like",
            Family::Mix16 => "mix16",
        }
    }

    pub fn parse(s: &str) -> Result<Family, String> {
        let s = s.trim();
        Family::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            format!("unknown circuit family `{s}` (expected {})", Family::ALL.map(Family::name).join(" or "))
        })
    }

    /// The circuit of this family with `constraints` constraints and witness seed `seed`.
    pub fn circuit(self, constraints: u64, seed: u64) -> BenchCircuit {
        match self {
            Family::PorepLike => BenchCircuit::PorepLike(PorepLike::new(constraints, seed)),
            Family::Mix16 => BenchCircuit::Mix16(Mix16::new(constraints, seed)),
        }
    }

    /// The id stored in parameter files for this family at `constraints`, so that a file
    /// made for another circuit is refused.
    pub fn id(self, constraints: u64) -> String {
        format!("{}/v1/n={constraints}", self.name())
    }

    /// Whether `constraints` is a size the CLI accepts (the error names the flag).
    pub fn check_size(self, constraints: u64) -> Result<(), String> {
        if (MIN_CONSTRAINTS..=MAX_CONSTRAINTS).contains(&constraints) {
            return Ok(());
        }
        Err(format!(
            "--constraints {constraints} is out of range: the {} family goes from {MIN_CONSTRAINTS} to {MAX_CONSTRAINTS} (2^8..2^27)",
            self.name()
        ))
    }

    /// Family and size encoded in a circuit id (a parameter file's header).
    pub fn from_id(id: &str) -> Option<(Family, u64)> {
        Family::ALL.into_iter().find_map(|f| {
            let n = id.strip_prefix(f.name())?.strip_prefix("/v1/n=")?.parse().ok()?;
            Some((f, n))
        })
    }
}

/// A circuit of one of the [`Family`]s.
#[derive(Clone, Debug)]
pub enum BenchCircuit {
    PorepLike(PorepLike),
    Mix16(Mix16),
}

impl BenchCircuit {
    pub fn id(&self) -> String {
        match self {
            BenchCircuit::PorepLike(c) => c.id(),
            BenchCircuit::Mix16(c) => c.id(),
        }
    }

    /// Constraints the circuit was made for (input constraints included).
    pub fn constraints(&self) -> u64 {
        match self {
            BenchCircuit::PorepLike(c) => c.constraints,
            BenchCircuit::Mix16(c) => c.constraints,
        }
    }

    /// Checks the size (the error names `--constraints` and the family's range).
    pub fn check(&self) -> Result<(), String> {
        match self {
            BenchCircuit::PorepLike(c) => c.layout().map(|_| ()),
            BenchCircuit::Mix16(c) => c.rows().map(|_| ()),
        }
    }

    /// How the constraints are split, in words (for `proofscope circuit`).
    pub fn sections(&self) -> Result<String, String> {
        match self {
            BenchCircuit::PorepLike(c) => {
                let l = c.layout()?;
                Ok(format!("{} SHA-256 blocks ({} constraints), {} arithmetic rows", l.sha_blocks, l.sha_constraints, l.arith_rows))
            }
            BenchCircuit::Mix16(c) => {
                let rows = c.rows()?;
                let groups = (rows - 1) / mix16::GROUP;
                Ok(format!("{groups} groups of 15 booleanity rows + 1 packing row, {} extra booleanity rows", rows - 1 - groups * mix16::GROUP))
            }
        }
    }
}

impl Circuit<Scalar> for BenchCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            BenchCircuit::PorepLike(c) => c.synthesize(cs),
            BenchCircuit::Mix16(c) => c.synthesize(cs),
        }
    }
}

impl CircuitPieces for BenchCircuit {
    fn synthesize_pieces<S: PieceSystem>(self, cs: &mut S) -> Result<(), SynthesisError> {
        match self {
            BenchCircuit::PorepLike(c) => c.synthesize_pieces(cs),
            BenchCircuit::Mix16(c) => c.synthesize_pieces(cs),
        }
    }
}

#[cfg(test)]
mod tests {
    use bellpepper_core::ConstraintSystem;
    use ff::Field;

    use super::*;
    use crate::pce::extract::ExtractCs;
    use crate::pce::witness::{generate, Witness, WitnessCs};
    use crate::pce::{extract, Pce};

    fn on<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    fn witness_in_pieces(c: &PorepLike, piece_rows: usize, threads: usize) -> (Witness, usize) {
        on(threads, || {
            let mut cs = WitnessCs::with_capacity(2, 0);
            cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
            c.clone().synthesize_pieces_of(&mut cs, piece_rows).unwrap();
            let pieces = cs.pieces_run();
            (cs.into_witness(), pieces)
        })
    }

    fn extract_in_pieces(c: &PorepLike, piece_rows: usize, threads: usize, values: bool) -> (Pce, Option<Witness>) {
        on(threads, || {
            let mut cs = ExtractCs::with_capacity(values, 0);
            cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
            c.clone().synthesize_pieces_of(&mut cs, piece_rows).unwrap();
            cs.finish().unwrap()
        })
    }

    /// The arithmetic section cut into many pieces (4 rows: one round each; uneven cuts; one
    /// piece), with and without SHA blocks, sizes that end mid-round: the witness and the
    /// extraction are the sequential ones, on 1 and 3 threads.
    #[test]
    fn arithmetic_pieces_give_the_sequential_witness_and_extraction() {
        for n in [1u64 << 8, 1 << 10, 3001, 3002, 1 << 16, 70_001] {
            let c = PorepLike::new(n, 11);
            let layout = c.layout().unwrap();
            let want = generate(c.clone(), 2, 0).unwrap();
            let want_pce = extract(c.clone()).unwrap();
            for piece_rows in [4, 8, 12, 100, 1 << 20] {
                let pieces = layout.sha_blocks + (layout.arith_rows - 3).div_ceil(piece_rows);
                for threads in [1, 3] {
                    let (w, ran) = witness_in_pieces(&c, piece_rows, threads);
                    assert_eq!(ran, pieces, "n={n}, {piece_rows} rows a piece");
                    assert!(w == want, "n={n}, {piece_rows} rows a piece, {threads} threads: the witness differs");
                    let (p, _) = extract_in_pieces(&c, piece_rows, threads, false);
                    assert!(p == want_pce, "n={n}, {piece_rows} rows a piece, {threads} threads: the PCE differs");
                }
                let (p, w) = extract_in_pieces(&c, piece_rows, 2, true);
                assert!(p == want_pce && w.as_ref() == Some(&want), "n={n}, {piece_rows} rows a piece: extraction with values differs");
            }
        }
    }

    /// A corrupted row (a seed row: no effect; a round's first row, a piece's first and last
    /// rows, the section's last) lands where the sequential run puts it: same witness, and the
    /// same unsatisfied constraint.
    #[test]
    fn a_corrupted_arithmetic_row_lands_in_the_same_place_in_pieces() {
        let n = 3001u64;
        let rows = PorepLike::new(n, 2).layout().unwrap().arith_rows;
        let pce = extract(PorepLike::new(n, 2)).unwrap();
        for row in [0, 2, 3, 4, 14, 15, 16, 17, 18, 500, rows - 1] {
            let mut c = PorepLike::new(n, 2);
            c.corrupt_row = Some(row);
            let want = generate(c.clone(), 2, 0).unwrap();
            let want_err = crate::pce::assemble(want.clone(), &pce, Default::default()).err().map(|e| e.to_string());
            // Pieces of 12 rows: rows 3..15, 15..27, ...
            for threads in [1, 3] {
                let (w, _) = witness_in_pieces(&c, 12, threads);
                assert!(w == want, "row {row}, {threads} threads: the witness differs");
                let got_err = crate::pce::assemble(w, &pce, Default::default()).err().map(|e| e.to_string());
                assert_eq!(got_err, want_err, "row {row}");
            }
            if row >= 3 {
                assert!(want_err.is_some(), "row {row}: the corruption went unseen");
            }
        }
    }

    #[test]
    fn arithmetic_pieces_of_a_size_not_a_multiple_of_a_round_are_refused() {
        let mut cs = WitnessCs::with_capacity(1, 0);
        cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
        for rows in [0, 6] {
            assert!(matches!(PorepLike::new(1 << 10, 1).synthesize_pieces_of(&mut cs, rows), Err(SynthesisError::Unsatisfiable)));
        }
        assert_eq!(cs.into_witness().aux.len(), 0);
    }
}
