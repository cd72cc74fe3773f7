//! The products a = A·w, b = B·w, c = C·w of a partition: what replaces building and
//! evaluating every constraint's linear combinations once the matrices are pre-compiled.
//! Rows are cut into contiguous chunks (`chunk_rows` each) that rayon's workers take in
//! turn; a chunk evaluates its rows of A, then B, then C (each a sequential read of its
//! matrix's arrays and one sequential write), then checks a_i·b_i = c_i on its rows while
//! they are still in cache, so an unsatisfied witness is found (its first row) at no extra
//! pass. The outputs are written in place into uninitialised vectors: no zero fill, and
//! each page is first touched by the thread that writes it.
//!
//! The densities need no work here: they depend on the matrices only, and the PCE holds them.

use std::mem::MaybeUninit;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::matrix::{CoeffIndex, CsrMatrix, IDX_MINUS_ONE, IDX_ONE};
use super::Pce;

/// Rows per chunk when nothing else is asked (`benches/prover.rs` `synthesis_pce` measures
/// 2^10..2^16: flat from 2^11 to 2^14 here; 4096 rows are 384 KiB of a/b/c, within L2).
pub const DEFAULT_CHUNK_ROWS: usize = 1 << 12;

/// The three evaluations and the first constraint they do not satisfy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Products {
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    /// Lowest row with a·b ≠ c.
    pub first_unsatisfied: Option<usize>,
}

/// a = A·w, b = B·w, c = C·w on the current rayon pool, `chunk_rows` rows per task.
/// `w` is the witness in the PCE's column order: aux first, then the inputs (ONE first).
///
/// # Panics
/// When `w` does not have one value per column of the PCE.
pub fn products(pce: &Pce, w: &[Scalar], chunk_rows: usize) -> Products {
    assert_eq!(w.len(), pce.columns(), "the witness must have one value per column of the pre-compiled constraints");
    let n = pce.num_constraints();
    let chunk = chunk_rows.max(1);
    let (ma, mb, mc) = pce.matrices();
    let mut a: Vec<Scalar> = Vec::with_capacity(n);
    let mut b: Vec<Scalar> = Vec::with_capacity(n);
    let mut c: Vec<Scalar> = Vec::with_capacity(n);
    let first_unsatisfied = {
        let (sa, sb, sc) = (&mut a.spare_capacity_mut()[..n], &mut b.spare_capacity_mut()[..n], &mut c.spare_capacity_mut()[..n]);
        sa.par_chunks_mut(chunk)
            .zip(sb.par_chunks_mut(chunk))
            .zip(sc.par_chunks_mut(chunk))
            .enumerate()
            .filter_map(|(k, ((ca, cb), cc))| {
                let r0 = k * chunk;
                let (ca, cb, cc) = (eval_rows(ma, r0, ca, w), eval_rows(mb, r0, cb, w), eval_rows(mc, r0, cc, w));
                first_unsatisfied_in(ca, cb, cc).map(|j| r0 + j)
            })
            .min()
    };
    // SAFETY: the chunks above cover 0..n of every vector and `eval_rows` wrote each element
    // of its chunk (a panic inside would have propagated before this point).
    unsafe {
        a.set_len(n);
        b.set_len(n);
        c.set_len(n);
    }
    Products { a, b, c, first_unsatisfied }
}

/// Evaluate rows `r0 .. r0 + out.len()` of `m` into `out`; returns them initialised.
fn eval_rows<'a>(m: &CsrMatrix, r0: usize, out: &'a mut [MaybeUninit<Scalar>], w: &[Scalar]) -> &'a [Scalar] {
    match &m.coeffs {
        CoeffIndex::U8(idx) => rows_with(m, idx, r0, out, w),
        CoeffIndex::U16(idx) => rows_with(m, idx, r0, out, w),
        CoeffIndex::U32(idx) => rows_with(m, idx, r0, out, w),
    }
    // SAFETY: `rows_with` wrote every element of `out`; MaybeUninit<T> has T's layout.
    unsafe { &*(out as *const [MaybeUninit<Scalar>] as *const [Scalar]) }
}

#[inline(always)]
fn rows_with<I: Copy + Into<u32>>(m: &CsrMatrix, idx: &[I], r0: usize, out: &mut [MaybeUninit<Scalar>], w: &[Scalar]) {
    let offsets = &m.row_ptr[r0..r0 + out.len() + 1];
    let (cols, table) = (&m.cols[..], &m.table[..]);
    for (o, rp) in out.iter_mut().zip(offsets.windows(2)) {
        let mut acc = Scalar::ZERO;
        for k in rp[0] as usize..rp[1] as usize {
            // SAFETY: a `Pce` holds only validated matrices (`CsrMatrix::validate`): every
            // offset is at most the number of non-zeros (= cols.len() = idx.len()), every
            // column is below the PCE's column count (= w.len(), asserted by `products`),
            // and every coefficient index is inside the table.
            let (col, ix) = unsafe { (*cols.get_unchecked(k) as usize, (*idx.get_unchecked(k)).into()) };
            let v = unsafe { w.get_unchecked(col) };
            match ix {
                IDX_ONE => acc += v,
                IDX_MINUS_ONE => acc -= v,
                _ => acc += *v * unsafe { table.get_unchecked(ix as usize) },
            }
        }
        o.write(acc);
    }
}

/// First j with a_j·b_j ≠ c_j. B is mostly 0 or 1 (booleanity, ONE), which needs no product.
fn first_unsatisfied_in(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Option<usize> {
    (0..a.len()).find(|&j| {
        let ok = if b[j] == Scalar::ONE {
            a[j] == c[j]
        } else if bool::from(b[j].is_zero()) {
            bool::from(c[j].is_zero())
        } else {
            a[j] * b[j] == c[j]
        };
        !ok
    })
}
