//! The products a = A·w, b = B·w, c = C·w of a partition: what replaces building and
//! evaluating every constraint's linear combinations once the matrices are pre-compiled.
//! Rows are cut into contiguous chunks (`chunk_rows` each) that rayon's workers take in
//! turn; a chunk evaluates its rows of A, then B, then C (each a sequential read of its
//! matrix's arrays and one sequential write), then checks a_i·b_i = c_i on its rows while
//! they are still in cache, so an unsatisfied witness is found (its first row) at no extra
//! pass. The outputs are written in place into uninitialised vectors: no zero fill, and
//! each page is first touched by the thread that writes it; with [`Stores::Streamed`] they
//! bypass the cache (no read of each output line before its write).
//!
//! Each row is summed without a modular reduction per term: the witness values' Montgomery
//! limbs are added, or scaled by the coefficient when it (or its negation) fits 64 bits,
//! into a 384-bit accumulator that is reduced once at the end of the row ([`Op`]); only
//! coefficients that fit neither way take a field multiplication. The result is the same
//! field element, fully reduced, so the same bits as the circuit path's.
//!
//! The densities need no work here: they depend on the matrices only, and the PCE holds them.

use std::mem::MaybeUninit;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::matrix::{CoeffIndex, CsrMatrix};
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

impl Products {
    /// Empty vectors with room for `n` rows each ([`with_capacity_huge`]).
    pub fn with_capacity(n: usize) -> Products {
        Products { a: with_capacity_huge(n), b: with_capacity_huge(n), c: with_capacity_huge(n), first_unsatisfied: None }
    }
}

/// a = A·w, b = B·w, c = C·w on the current rayon pool, `chunk_rows` rows per task, into
/// fresh vectors. `w` is the witness in the PCE's column order: aux first, then the inputs
/// (ONE first).
///
/// # Panics
/// When `w` does not have one value per column of the PCE.
pub fn products(pce: &Pce, w: &[Scalar], chunk_rows: usize) -> Products {
    products_into(pce, w, chunk_rows, Products::with_capacity(pce.num_constraints()))
}

/// [`products`] into the vectors of `out` (an earlier result, or [`Products::with_capacity`]):
/// their contents are overwritten, their allocations kept when large enough. Vectors whose
/// pages are already mapped skip what fresh ones cost first — a page fault and the kernel's
/// zeroing of every page, a second write of all of a, b and c.
///
/// # Panics
/// When `w` does not have one value per column of the PCE.
pub fn products_into(pce: &Pce, w: &[Scalar], chunk_rows: usize, out: Products) -> Products {
    products_into_with(pce, w, chunk_rows, Stores::Cached, out)
}

/// How the products write a, b and c.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stores {
    /// Plain stores: each output line is read into the cache before it is written (the
    /// processor's write-allocate), so a, b and c cross the memory bus twice.
    #[default]
    Cached,
    /// Each chunk's rows are evaluated 32 at a time into a small buffer, checked there, then
    /// written with non-temporal (streaming) stores that bypass the cache: a, b and c cross
    /// the bus once, the floor's assumption. Elsewhere than x86-64 the buffer is copied with
    /// plain stores.
    Streamed,
    /// As `Streamed` (32 rows into a small buffer, checked, then copied) but with plain
    /// stores: what the buffer and its copy cost apart from the streaming stores (the bench
    /// times all three).
    Buffered,
}

/// [`products_into`] with the stores chosen: the same values bit for bit either way.
///
/// # Panics
/// When `w` does not have one value per column of the PCE.
pub fn products_into_with(pce: &Pce, w: &[Scalar], chunk_rows: usize, stores: Stores, out: Products) -> Products {
    assert_eq!(w.len(), pce.columns(), "the witness must have one value per column of the pre-compiled constraints");
    let n = pce.num_constraints();
    let chunk = chunk_rows.max(1);
    let (ma, mb, mc) = pce.matrices();
    let (oa, ob, oc) = pce.ops();
    let cx = Ctx { w, one_col: pce.num_aux(), consts: consts() };
    let Products { mut a, mut b, mut c, .. } = out;
    for v in [&mut a, &mut b, &mut c] {
        if v.capacity() < n {
            // Too small: a fresh vector (advised for huge pages), not a copy of the old one.
            *v = with_capacity_huge(n);
        } else {
            v.clear();
        }
    }
    let first_unsatisfied = {
        let (sa, sb, sc) = (&mut a.spare_capacity_mut()[..n], &mut b.spare_capacity_mut()[..n], &mut c.spare_capacity_mut()[..n]);
        sa.par_chunks_mut(chunk)
            .zip(sb.par_chunks_mut(chunk))
            .zip(sc.par_chunks_mut(chunk))
            .enumerate()
            .filter_map(|(k, ((ca, cb), cc))| {
                let r0 = k * chunk;
                if stores != Stores::Cached {
                    return chunk_streamed((ma, mb, mc), (oa, ob, oc), r0, (ca, cb, cc), cx, stores == Stores::Streamed);
                }
                let (ca, cb, cc) = (eval_rows(ma, oa, r0, ca, cx), eval_rows(mb, ob, r0, cb, cx), eval_rows(mc, oc, r0, cc, cx));
                first_unsatisfied_in(ca, cb, cc).map(|j| r0 + j)
            })
            .min()
    };
    // SAFETY: the chunks above cover 0..n of every vector and each element of a chunk was
    // written, by `eval_rows` or by `copy_out` (a panic inside would have propagated before
    // this point).
    unsafe {
        a.set_len(n);
        b.set_len(n);
        c.set_len(n);
    }
    Products { a, b, c, first_unsatisfied }
}

/// Rows a streamed chunk evaluates into its stack buffer at a time (3 × 32 × 32 B = 3 KiB).
const STREAM_ROWS: usize = 32;

/// A chunk's rows of a, b and c, not yet written.
type ChunkOut<'a> = (&'a mut [MaybeUninit<Scalar>], &'a mut [MaybeUninit<Scalar>], &'a mut [MaybeUninit<Scalar>]);

/// One chunk of [`Stores::Streamed`] (`nt`) or [`Stores::Buffered`]: its first unsatisfied
/// row, if any.
fn chunk_streamed(
    m: (&CsrMatrix, &CsrMatrix, &CsrMatrix),
    ops: (&[Op], &[Op], &[Op]),
    r0: usize,
    out: ChunkOut<'_>,
    cx: Ctx<'_>,
    nt: bool,
) -> Option<usize> {
    let (oa, ob, oc) = out;
    let n = oa.len();
    let mut first = None;
    let mut i = 0;
    while i < n {
        let k = STREAM_ROWS.min(n - i);
        let mut ta = [MaybeUninit::<Scalar>::uninit(); STREAM_ROWS];
        let mut tb = [MaybeUninit::<Scalar>::uninit(); STREAM_ROWS];
        let mut tc = [MaybeUninit::<Scalar>::uninit(); STREAM_ROWS];
        let a = eval_rows(m.0, ops.0, r0 + i, &mut ta[..k], cx);
        let b = eval_rows(m.1, ops.1, r0 + i, &mut tb[..k], cx);
        let c = eval_rows(m.2, ops.2, r0 + i, &mut tc[..k], cx);
        if first.is_none() {
            first = first_unsatisfied_in(a, b, c).map(|j| r0 + i + j);
        }
        copy_out(&mut oa[i..i + k], a, nt);
        copy_out(&mut ob[i..i + k], b, nt);
        copy_out(&mut oc[i..i + k], c, nt);
        i += k;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a fence has no preconditions; it orders the streaming stores above before any
    // later store (the join that hands the vectors on).
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
    first
}

// `copy_out` streams a scalar as two 16-byte halves.
const _: () = assert!(std::mem::size_of::<Scalar>() == 32);

/// Copy `src` into `dst`: with streaming stores when `nt` and the destination is 16-byte
/// aligned (always, for a vector of a partition's size), with plain stores otherwise. After
/// streaming stores the caller fences (`_mm_sfence`) before the values are read elsewhere,
/// as `chunk_streamed` does.
#[inline(always)]
fn copy_out(dst: &mut [MaybeUninit<Scalar>], src: &[Scalar], nt: bool) {
    debug_assert_eq!(dst.len(), src.len());
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    #[cfg(target_arch = "x86_64")]
    if nt && (dst.as_ptr() as usize) % 16 == 0 {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let (d, s) = (dst.as_mut_ptr() as *mut __m128i, src.as_ptr() as *const __m128i);
        // SAFETY: a Scalar is 32 bytes (two 16-byte halves); `dst` and `src` have the same
        // length, `d` is 16-byte aligned (checked above), `_mm_loadu_si128` takes any
        // alignment; SSE2 is part of x86-64.
        for k in 0..2 * src.len() {
            unsafe { _mm_stream_si128(d.add(k), _mm_loadu_si128(s.add(k))) };
        }
        return;
    }
    for (d, s) in dst.iter_mut().zip(src) {
        d.write(*s);
    }
}

/// What every row of a chunk needs besides its matrix: the witness, the column of ONE, and
/// the reduction table.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    w: &'a [Scalar],
    one_col: usize,
    consts: &'a Consts,
}

/// An empty vector with room for `n` values whose pages the kernel may back with huge
/// pages (Linux `MADV_HUGEPAGE`, for transparent huge pages in `madvise` mode): a fresh
/// vector of a partition's size is otherwise thousands of 4 KiB page faults, which cost
/// more than the products that fill it. A hint only; elsewhere a plain `with_capacity`.
pub fn with_capacity_huge<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes >= HUGE {
            let page = 4096usize;
            let start = (v.as_ptr() as usize).div_ceil(page) * page;
            let end = (v.as_ptr() as usize + bytes) / page * page;
            if end > start {
                // SAFETY: the range lies inside this vector's allocation (rounded inwards to
                // whole pages); MADV_HUGEPAGE changes no contents and fails harmlessly.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

/// Evaluate rows `r0 .. r0 + out.len()` of `m` into `out`; returns them initialised.
fn eval_rows<'a>(m: &CsrMatrix, ops: &[Op], r0: usize, out: &'a mut [MaybeUninit<Scalar>], cx: Ctx<'_>) -> &'a [Scalar] {
    match &m.coeffs {
        CoeffIndex::U8(idx) => rows_with(m, ops, idx, r0, out, cx),
        CoeffIndex::U16(idx) => rows_with(m, ops, idx, r0, out, cx),
        CoeffIndex::U32(idx) => rows_with(m, ops, idx, r0, out, cx),
    }
    // SAFETY: `rows_with` wrote every element of `out`; MaybeUninit<T> has T's layout.
    unsafe { &*(out as *const [MaybeUninit<Scalar>] as *const [Scalar]) }
}

#[inline(always)]
fn rows_with<I: Copy + Into<u32>>(m: &CsrMatrix, ops: &[Op], idx: &[I], r0: usize, out: &mut [MaybeUninit<Scalar>], cx: Ctx<'_>) {
    let offsets = &m.row_ptr[r0..r0 + out.len() + 1];
    let (cols, table, w) = (&m.cols[..], &m.table[..], cx.w);
    for (o, rp) in out.iter_mut().zip(offsets.windows(2)) {
        let (start, end) = (rp[0] as usize, rp[1] as usize);
        // The most common rows need no arithmetic: empty (0), or one witness value with
        // coefficient 1 (a copy).
        if end == start {
            o.write(Scalar::ZERO);
            continue;
        }
        if end == start + 1 {
            // SAFETY: as below.
            let (col, ix) = unsafe { (*cols.get_unchecked(start) as usize, (*idx.get_unchecked(start)).into() as usize) };
            if col != cx.one_col && unsafe { *ops.get_unchecked(ix) } == Op::ONE {
                o.write(unsafe { *w.get_unchecked(col) });
                continue;
            }
        }
        let mut acc = Acc::default();
        for k in start..end {
            // SAFETY: a `Pce` holds only validated matrices (`CsrMatrix::validate`): every
            // offset is at most the number of non-zeros (= cols.len() = idx.len()), every
            // column is below the PCE's column count (= w.len(), asserted by `products`),
            // and every coefficient index is inside the table (= ops.len()).
            let (col, ix) = unsafe { (*cols.get_unchecked(k) as usize, (*idx.get_unchecked(k)).into() as usize) };
            let op = unsafe { *ops.get_unchecked(ix) };
            if col == cx.one_col {
                // c · ONE = c: the coefficient's own limbs (below r; no carry into the top).
                acc.add(&limbs(unsafe { table.get_unchecked(ix) }));
            } else if op == Op::ONE {
                acc.add(&limbs(unsafe { w.get_unchecked(col) }));
            } else if op.k != 0 {
                let v = limbs(unsafe { w.get_unchecked(col) });
                acc.mac(&neg_if(&v, op.neg), op.k);
            } else {
                acc.add(&limbs(&(unsafe { *w.get_unchecked(col) } * unsafe { table.get_unchecked(ix) })));
            }
        }
        o.write(acc.reduce(cx.consts));
    }
}

/// How the products apply one coefficient of a matrix's table: most are ±1 or ± a 64-bit
/// integer (SHA's powers of two below 2^64, the arithmetic section's round constants), which
/// scale the witness value's Montgomery limbs directly (k·(xR) = (kx)R) into a wide
/// accumulator reduced once per row; only the others take a Montgomery multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// |c| when c or −c fits 64 bits; 0: neither does (a field multiplication).
    pub k: u64,
    /// c = −k.
    pub neg: bool,
}

/// The modulus r of the scalar field, little-endian limbs.
const P: [u64; 4] = [0xffff_ffff_0000_0001, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];

impl Op {
    pub const ONE: Op = Op { k: 1, neg: false };
    pub const MINUS_ONE: Op = Op { k: 1, neg: true };
    pub const BIG: Op = Op { k: 0, neg: false };

    /// The op of coefficient `c` (non-zero).
    pub fn of(c: &Scalar) -> Op {
        use ff::PrimeField;
        let canon = |s: &Scalar| {
            let r = s.to_repr();
            let limb = |i: usize| u64::from_le_bytes(r[8 * i..8 * i + 8].try_into().expect("8 bytes"));
            [limb(0), limb(1), limb(2), limb(3)]
        };
        let small = |l: [u64; 4]| (l[1] | l[2] | l[3] == 0 && l[0] != 0).then_some(l[0]);
        match (small(canon(c)), small(canon(&-*c))) {
            (Some(k), _) => Op { k, neg: false },
            (_, Some(k)) => Op { k, neg: true },
            _ => Op::BIG,
        }
    }
}

/// The ops of a table, one per entry.
pub fn ops_of(table: &[Scalar]) -> Vec<Op> {
    // In parallel: the arithmetic section's tables have tens of millions of entries at 2^27.
    table.par_iter().with_min_len(1 << 14).map(Op::of).collect()
}

/// The Montgomery limbs of a scalar (what blstrs stores: x·R mod r, fully reduced).
#[inline(always)]
fn limbs(s: &Scalar) -> [u64; 4] {
    blst::blst_fr::from(*s).l
}

/// r − x when `neg` (r itself for 0, which the final reduction takes to 0), else x;
/// without a branch.
#[inline(always)]
fn neg_if(x: &[u64; 4], neg: bool) -> [u64; 4] {
    let mask = (neg as u64).wrapping_neg();
    let mut out = [0u64; 4];
    let mut borrow = 0u64;
    for i in 0..4 {
        let (d, b1) = P[i].overflowing_sub(x[i]);
        let (d, b2) = d.overflowing_sub(borrow);
        borrow = (b1 | b2) as u64;
        out[i] = (d & mask) | (x[i] & !mask);
    }
    out
}

/// Constants of the final reduction.
struct Consts {
    /// The scalar whose Montgomery limbs are R² mod r (the value 2^256 mod r).
    r2: Scalar,
    /// h·2^256 mod r for the small top parts h of an accumulator.
    high: [[u64; 4]; HIGH],
}

const HIGH: usize = 64;

fn consts() -> &'static Consts {
    static C: std::sync::OnceLock<Consts> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let r2 = Scalar::from(2u64).pow_vartime([256]);
        let mut high = [[0u64; 4]; HIGH];
        for (h, e) in high.iter_mut().enumerate() {
            // limbs h (< r) times R² mod r, Montgomery-reduced: h·R = h·2^256 mod r.
            *e = limbs(&(Scalar::from(blst::blst_fr { l: [h as u64, 0, 0, 0] }) * r2));
        }
        Consts { r2, high }
    })
}

/// 384-bit accumulator of Montgomery limbs scaled by 64-bit integers: a row of fewer than
/// 2^64 terms (each below 2^320) cannot overflow it.
#[derive(Default)]
struct Acc([u64; 6]);

impl Acc {
    #[inline(always)]
    fn add(&mut self, x: &[u64; 4]) {
        let a = &mut self.0;
        let mut carry = false;
        for i in 0..4 {
            let (s, c1) = a[i].overflowing_add(x[i]);
            let (s, c2) = s.overflowing_add(carry as u64);
            a[i] = s;
            carry = c1 | c2;
        }
        let (s, c) = a[4].overflowing_add(carry as u64);
        a[4] = s;
        a[5] = a[5].wrapping_add(c as u64);
    }

    #[inline(always)]
    fn mac(&mut self, x: &[u64; 4], k: u64) {
        let mut carry = 0u128;
        for (a, &x) in self.0.iter_mut().zip(x) {
            let t = *a as u128 + x as u128 * k as u128 + carry;
            *a = t as u64;
            carry = t >> 64;
        }
        let t = self.0[4] as u128 + carry;
        self.0[4] = t as u64;
        self.0[5] = self.0[5].wrapping_add((t >> 64) as u64);
    }

    /// The accumulated value mod r, as a scalar: lo + hi·2^256, lo reduced by at most two
    /// subtractions (2^256 < 3r), hi·2^256 mod r from a table when hi is small (rows of a
    /// few unit terms), else by one Montgomery multiplication with R².
    #[inline(always)]
    fn reduce(self, c: &Consts) -> Scalar {
        let mut lo = [self.0[0], self.0[1], self.0[2], self.0[3]];
        sub_r_if_ge(&mut lo);
        sub_r_if_ge(&mut lo);
        if self.0[4] == 0 && self.0[5] == 0 {
            return Scalar::from(blst::blst_fr { l: lo });
        }
        if self.0[5] == 0 && (self.0[4] as usize) < HIGH {
            // lo, high[h] < r < 2^255: their sum fits 256 bits.
            let h = &c.high[self.0[4] as usize];
            let mut carry = false;
            for (l, &x) in lo.iter_mut().zip(h) {
                let (s, c1) = l.overflowing_add(x);
                let (s, c2) = s.overflowing_add(carry as u64);
                *l = s;
                carry = c1 | c2;
            }
            sub_r_if_ge(&mut lo);
            return Scalar::from(blst::blst_fr { l: lo });
        }
        // hi < 2^128 < r: a valid reduced Montgomery value; times R² mod r → hi·2^256 mod r.
        let hi = Scalar::from(blst::blst_fr { l: [self.0[4], self.0[5], 0, 0] });
        Scalar::from(blst::blst_fr { l: lo }) + hi * c.r2
    }
}

/// x −= r when x ≥ r.
#[inline(always)]
fn sub_r_if_ge(x: &mut [u64; 4]) {
    if x[3] < P[3] {
        return; // below r already (the common case for a reduced value or a short row)
    }
    let mut d = [0u64; 4];
    let mut borrow = 0u64;
    for i in 0..4 {
        let (t, b1) = x[i].overflowing_sub(P[i]);
        let (t, b2) = t.overflowing_sub(borrow);
        d[i] = t;
        borrow = (b1 | b2) as u64;
    }
    if borrow == 0 {
        *x = d;
    }
}


/// First j with a_j·b_j ≠ c_j. B is mostly 0 or 1 (booleanity, ONE), which needs no
/// product. Values are compared by their limbs (fully reduced, so equal limbs ⇔ equal values;
/// blstrs' `==` is constant-time, which this check does not need).
fn first_unsatisfied_in(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Option<usize> {
    let one = limbs(&Scalar::ONE);
    (0..a.len()).find(|&j| {
        let (a, b, c) = (limbs(&a[j]), limbs(&b[j]), limbs(&c[j]));
        let ok = if b == one {
            a == c
        } else if b == [0; 4] {
            c == [0; 4]
        } else {
            limbs(&(Scalar::from(blst::blst_fr { l: a }) * Scalar::from(blst::blst_fr { l: b }))) == c
        };
        !ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand::{Rng, SeedableRng};

    /// Rows of every coefficient class (±1, ± small, ± large, values 0 and r − 1, long
    /// rows that carry into the accumulator's top limbs) against plain field arithmetic.
    #[test]
    fn the_wide_accumulator_equals_field_arithmetic() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let small = |k: u64| Scalar::from(k);
        let mut coeffs = vec![Scalar::ONE, -Scalar::ONE, small(2), -small(2), small(u64::MAX), -small(u64::MAX), small(1 << 63), Scalar::from(2u64).pow_vartime([64]), -Scalar::from(2u64).pow_vartime([64]), Scalar::from(2u64).pow_vartime([253])];
        coeffs.extend((0..20).map(|_| Scalar::random(&mut rng)));
        // P is the modulus: r − 1 is −1, and r itself is not a field element.
        let mut r_minus_1 = [0u8; 32];
        for (i, l) in P.iter().enumerate() {
            r_minus_1[8 * i..8 * i + 8].copy_from_slice(&l.to_le_bytes());
        }
        let r_bytes = r_minus_1;
        r_minus_1[0] -= 1;
        use ff::PrimeField;
        assert!(bool::from(Scalar::from_repr(r_bytes).is_none()));
        assert!(Scalar::from_repr(r_minus_1).unwrap() == -Scalar::ONE);
        let ops = ops_of(&coeffs);
        let op = |k, neg| Op { k, neg };
        assert_eq!(&ops[..6], &[Op::ONE, Op::MINUS_ONE, op(2, false), op(2, true), op(u64::MAX, false), op(u64::MAX, true)]);
        assert_eq!((ops[7], ops[8], ops[9]), (Op::BIG, Op::BIG, Op::BIG));
        let consts = consts();
        let mut values = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, -Scalar::from(2u64)];
        values.extend((0..50).map(|_| Scalar::random(&mut rng)));
        for len in [0usize, 1, 2, 3, 5, 17, 300] {
            for _ in 0..50 {
                let mut acc = Acc::default();
                let mut want = Scalar::ZERO;
                for _ in 0..len {
                    let (ci, v) = (rng.gen_range(0..coeffs.len()), values[rng.gen_range(0..values.len())]);
                    want += v * coeffs[ci];
                    match ops[ci] {
                        Op { k: 0, .. } => acc.add(&limbs(&(v * coeffs[ci]))),
                        Op { k, neg } if rng.gen_bool(0.8) => acc.mac(&neg_if(&limbs(&v), neg), k),
                        // A term on ONE's column: the coefficient's limbs.
                        _ => {
                            acc.add(&limbs(&coeffs[ci]));
                            want += coeffs[ci] - v * coeffs[ci];
                        }
                    }
                }
                let got = acc.reduce(consts);
                assert!(got == want && limbs(&got) == limbs(&want), "len {len}");
            }
        }
        // The largest row sums: every term r − 1 times u64::MAX.
        let mut acc = Acc::default();
        let mut want = Scalar::ZERO;
        for _ in 0..1000 {
            acc.mac(&neg_if(&limbs(&Scalar::ONE), true), u64::MAX);
            want -= small(u64::MAX);
        }
        assert!(acc.reduce(consts) == want);
        // Every small top part of the table, and the first one past it.
        for h in 0..=HIGH as u64 {
            let mut acc = Acc([5, 0, 0, 0, h, 0]);
            let want = Scalar::from(blst::blst_fr { l: [5, 0, 0, 0] }) + Scalar::from(blst::blst_fr { l: [h, 0, 0, 0] }) * consts.r2;
            assert!(std::mem::take(&mut acc).reduce(consts) == want, "h = {h}");
        }
    }
}
