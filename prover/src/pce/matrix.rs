//! One R1CS matrix in the compact form the products read: why it exists is that memory
//! traffic, not arithmetic, bounds a = A·w once the circuit code is out of the loop, so
//! every byte per non-zero counts. CSR (rows in constraint order, so a contiguous range of
//! rows is a contiguous range of every array and a thread's chunk is one sequential read),
//! u32 column indices, and coefficients deduplicated: each non-zero stores an index into
//! a per-matrix table of distinct values, 1, 2 or 4 bytes wide depending on the table's
//! size. Index 0 is always +1 and index 1 always −1 (added or subtracted without a
//! multiplication); the rest are multiplied.
//!
//! Also here: the matrix's byte size and its contribution to the PCE's stable shape hash
//! (BLAKE3 over the little-endian arrays and the canonical coefficient bytes, the same
//! bytes the cache file stores).

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

/// Elements a parallel scan or hash of a matrix's arrays takes at a time (they are up to
/// hundreds of millions long at 2^27: the extraction's `finish` and a cache read scan them).
const PAR_CHUNK: usize = 1 << 20;

/// Table index of the coefficient +1.
pub const IDX_ONE: u32 = 0;
/// Table index of the coefficient −1.
pub const IDX_MINUS_ONE: u32 = 1;

/// The per-non-zero coefficient indices, as narrow as the table allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoeffIndex {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl CoeffIndex {
    /// The narrowest vector for indices below `table_len`.
    pub fn narrow(idx: Vec<u32>, table_len: usize) -> CoeffIndex {
        if table_len <= 1 << 8 {
            CoeffIndex::U8(idx.into_iter().map(|i| i as u8).collect())
        } else if table_len <= 1 << 16 {
            CoeffIndex::U16(idx.into_iter().map(|i| i as u16).collect())
        } else {
            CoeffIndex::U32(idx)
        }
    }
    /// Bytes per index (1, 2 or 4).
    pub fn width(&self) -> usize {
        match self {
            CoeffIndex::U8(_) => 1,
            CoeffIndex::U16(_) => 2,
            CoeffIndex::U32(_) => 4,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            CoeffIndex::U8(v) => v.len(),
            CoeffIndex::U16(v) => v.len(),
            CoeffIndex::U32(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, k: usize) -> u32 {
        match self {
            CoeffIndex::U8(v) => v[k] as u32,
            CoeffIndex::U16(v) => v[k] as u32,
            CoeffIndex::U32(v) => v[k],
        }
    }
    /// The largest index (0 when empty).
    fn max(&self) -> u32 {
        match self {
            CoeffIndex::U8(v) => v.par_iter().with_min_len(PAR_CHUNK).copied().max().unwrap_or(0) as u32,
            CoeffIndex::U16(v) => v.par_iter().with_min_len(PAR_CHUNK).copied().max().unwrap_or(0) as u32,
            CoeffIndex::U32(v) => v.par_iter().with_min_len(PAR_CHUNK).copied().max().unwrap_or(0),
        }
    }
    /// The indices as little-endian bytes.
    pub fn le_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            CoeffIndex::U8(v) => std::borrow::Cow::Borrowed(v.as_slice()),
            CoeffIndex::U16(v) => le_bytes_u16(v),
            CoeffIndex::U32(v) => le_bytes_u32(v),
        }
    }
}

/// A sparse matrix in CSR form with deduplicated coefficients (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsrMatrix {
    /// `rows + 1` offsets into `cols` / `coeffs`; row r is `row_ptr[r]..row_ptr[r + 1]`.
    pub row_ptr: Vec<u32>,
    /// Column (witness index) of every non-zero.
    pub cols: Vec<u32>,
    /// Index into `table` of every non-zero's coefficient.
    pub coeffs: CoeffIndex,
    /// The distinct coefficients; `table[0] = 1`, `table[1] = −1`.
    pub table: Vec<Scalar>,
}

/// Why a matrix is not well formed (a corrupt cache, or a bug).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MatrixError(pub String);

impl CsrMatrix {
    /// The table every matrix starts with: +1, −1.
    pub fn base_table() -> Vec<Scalar> {
        vec![Scalar::ONE, -Scalar::ONE]
    }

    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }
    /// Bytes the products read of this matrix: offsets, columns, indices and the table.
    pub fn bytes(&self) -> usize {
        self.row_ptr.len() * 4 + self.cols.len() * 4 + self.coeffs.len() * self.coeffs.width() + self.table.len() * 32
    }

    /// Everything the products rely on without checking again: offsets start at 0, never
    /// decrease and end at the number of non-zeros; every column is below `columns`; every
    /// coefficient index is inside the table, whose first two entries are +1 and −1.
    pub fn validate(&self, rows: usize, columns: usize) -> Result<(), MatrixError> {
        let err = |m: String| Err(MatrixError(m));
        if self.row_ptr.len() != rows + 1 {
            return err(format!("{} row offsets for {rows} rows", self.row_ptr.len()));
        }
        if self.row_ptr[0] != 0 || self.row_ptr.par_windows(2).with_min_len(PAR_CHUNK).any(|w| w[0] > w[1]) {
            return err("row offsets are not non-decreasing from 0".into());
        }
        if self.row_ptr[rows] as usize != self.cols.len() || self.cols.len() != self.coeffs.len() {
            return err(format!("{} non-zeros by the offsets, {} columns, {} coefficients", self.row_ptr[rows], self.cols.len(), self.coeffs.len()));
        }
        if let Some(c) = self.cols.par_iter().with_min_len(PAR_CHUNK).copied().find_first(|&c| c as usize >= columns) {
            return err(format!("column {c} is outside the {columns} witness columns"));
        }
        if self.table.len() < 2 || self.table[0] != Scalar::ONE || self.table[1] != -Scalar::ONE {
            return err("the coefficient table does not start with +1, -1".into());
        }
        if !self.coeffs.is_empty() && self.coeffs.max() as usize >= self.table.len() {
            return err(format!("coefficient index {} is outside the table of {}", self.coeffs.max(), self.table.len()));
        }
        Ok(())
    }

    /// Feed the matrix's canonical bytes to `h` (the shape hash, and the cache payload's order).
    pub fn hash_into(&self, h: &mut blake3::Hasher) {
        for v in [self.rows() as u64, self.nnz() as u64, self.table.len() as u64, self.coeffs.width() as u64] {
            h.update(&v.to_le_bytes());
        }
        // The same bytes in the same order whatever the threads (BLAKE3's tree hashing makes
        // `update_rayon` equal to `update`); the table's canonical bytes made a chunk at a time.
        h.update_rayon(&le_bytes_u32(&self.row_ptr));
        h.update_rayon(&le_bytes_u32(&self.cols));
        h.update_rayon(&self.coeffs.le_bytes());
        let mut bytes = Vec::new();
        for chunk in self.table.chunks(PAR_CHUNK) {
            bytes.clear();
            bytes.par_extend(chunk.par_iter().with_min_len(1 << 12).flat_map_iter(|s| s.to_repr()));
            h.update_rayon(&bytes);
        }
    }
}

/// `v` as little-endian bytes (a borrow on little-endian hosts).
pub fn le_bytes_u32(v: &[u32]) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(target_endian = "little")]
    {
        // SAFETY: u32 has no padding and any byte pattern is a valid u8; the length is exact.
        std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) })
    }
    #[cfg(not(target_endian = "little"))]
    {
        std::borrow::Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
}

fn le_bytes_u16(v: &[u16]) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(target_endian = "little")]
    {
        // SAFETY: as in `le_bytes_u32`.
        std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) })
    }
    #[cfg(not(target_endian = "little"))]
    {
        std::borrow::Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> CsrMatrix {
        CsrMatrix { row_ptr: vec![0, 2, 2, 3], cols: vec![0, 3, 1], coeffs: CoeffIndex::U8(vec![0, 2, 1]), table: vec![Scalar::ONE, -Scalar::ONE, Scalar::from(5u64)] }
    }

    #[test]
    fn narrowest_index_width_and_bytes() {
        assert_eq!(CoeffIndex::narrow(vec![1, 2], 256).width(), 1);
        assert_eq!(CoeffIndex::narrow(vec![1, 2], 257).width(), 2);
        assert_eq!(CoeffIndex::narrow(vec![1, 2], 1 << 16).width(), 2);
        assert_eq!(CoeffIndex::narrow(vec![1, 2], (1 << 16) + 1).width(), 4);
        assert_eq!(m().bytes(), 4 * 4 + 3 * 4 + 3 + 3 * 32);
    }

    #[test]
    fn validation_catches_what_the_products_would_trust() {
        assert_eq!(m().validate(3, 4), Ok(()));
        assert!(m().validate(3, 3).unwrap_err().0.contains("column 3"));
        assert!(m().validate(2, 4).is_err());
        let mut bad = m();
        bad.coeffs = CoeffIndex::U8(vec![0, 3, 1]);
        assert!(bad.validate(3, 4).unwrap_err().0.contains("index 3"));
        let mut bad = m();
        bad.row_ptr = vec![0, 2, 1, 3];
        assert!(bad.validate(3, 4).is_err());
        let mut bad = m();
        bad.table[1] = Scalar::ONE;
        assert!(bad.validate(3, 4).is_err());
    }
}
