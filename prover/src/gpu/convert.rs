//! Zero-copy views of blstrs values as the `u32` words the kernels read, and the way back
//! from the kernels' XYZZ points to blstrs.
//!
//! blstrs' `Scalar` and `G1Affine` are `#[repr(transparent)]` over blst's `blst_fr` /
//! `blst_p1_affine` (`#[repr(C)]` arrays of little-endian `u64` Montgomery limbs), so on a
//! little-endian host their memory is exactly 8 (resp. 24) little-endian `u32` limbs.

use blst::{blst_fp, blst_fp2, blst_p1_affine, blst_p2_affine};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;

const _: () = assert!(std::mem::size_of::<Scalar>() == 32);
const _: () = assert!(std::mem::size_of::<G1Affine>() == 96);
const _: () = assert!(std::mem::size_of::<G2Affine>() == 192);
#[cfg(not(target_endian = "little"))]
compile_error!("the CUDA backend assumes a little-endian host");

/// The Montgomery limbs of `scalars`, 8 words each.
pub fn scalar_words(scalars: &[Scalar]) -> &[u32] {
    // SAFETY: Scalar is repr(transparent) over a repr(C) [u64; 4]; u32 has weaker alignment.
    unsafe { std::slice::from_raw_parts(scalars.as_ptr() as *const u32, scalars.len() * 8) }
}

/// The affine coordinates (x then y, Montgomery) of `points`, 24 words each; the identity
/// is all zeros, as in blst.
pub fn affine_words(points: &[G1Affine]) -> &[u32] {
    // SAFETY: G1Affine is repr(transparent) over blst_p1_affine = repr(C) { x: [u64;6], y: [u64;6] }.
    unsafe { std::slice::from_raw_parts(points.as_ptr() as *const u32, points.len() * 24) }
}

/// The affine coordinates of G2 points (x.c0, x.c1, y.c0, y.c1, Montgomery), 48 words each;
/// the identity is all zeros.
pub fn affine_words_g2(points: &[G2Affine]) -> &[u32] {
    // SAFETY: G2Affine is repr(transparent) over blst_p2_affine = repr(C) { x: blst_fp2, y: blst_fp2 },
    // blst_fp2 = repr(C) { fp: [blst_fp; 2] }.
    unsafe { std::slice::from_raw_parts(points.as_ptr() as *const u32, points.len() * 48) }
}

pub(crate) fn scalar_from_words(w: &[u32]) -> Scalar {
    let mut l = [0u64; 4];
    for (i, x) in l.iter_mut().enumerate() {
        *x = w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32;
    }
    Scalar::from(blst::blst_fr { l })
}

pub(crate) fn scalars_from_words(w: &[u32]) -> Vec<Scalar> {
    w.chunks_exact(8).map(scalar_from_words).collect()
}

/// A base-field element in blst's Montgomery representation (blstrs does not export its
/// `Fp`): just what the checks and the XYZZ -> affine conversion need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawFp(pub blst_fp);

impl RawFp {
    pub fn zero() -> RawFp {
        RawFp(blst_fp::default())
    }
    pub fn from_u64(v: u64) -> RawFp {
        let mut r = blst_fp::default();
        let w = [v as u32, (v >> 32) as u32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        // SAFETY: blst reads 12 words and writes one element.
        unsafe { blst::blst_fp_from_uint32(&mut r, w.as_ptr()) };
        RawFp(r)
    }
    /// A uniformly-ish random element: 381 random bits below p's top byte 0x1a.
    pub fn random(rng: &mut impl rand::RngCore) -> RawFp {
        let mut b = [0u8; 48];
        rng.fill_bytes(&mut b);
        b[47] %= 0x1a;
        let mut r = blst_fp::default();
        // SAFETY: 48 little-endian bytes in, one element out.
        unsafe { blst::blst_fp_from_lendian(&mut r, b.as_ptr()) };
        RawFp(r)
    }
    pub fn is_zero(&self) -> bool {
        self.0.l.iter().all(|&x| x == 0)
    }
    pub fn mul(&self, o: &RawFp) -> RawFp {
        let mut r = blst_fp::default();
        unsafe { blst::blst_fp_mul(&mut r, &self.0, &o.0) };
        RawFp(r)
    }
    pub fn add(&self, o: &RawFp) -> RawFp {
        let mut r = blst_fp::default();
        unsafe { blst::blst_fp_add(&mut r, &self.0, &o.0) };
        RawFp(r)
    }
    pub fn sub(&self, o: &RawFp) -> RawFp {
        let mut r = blst_fp::default();
        unsafe { blst::blst_fp_sub(&mut r, &self.0, &o.0) };
        RawFp(r)
    }
    pub fn neg(&self) -> RawFp {
        let mut r = blst_fp::default();
        unsafe { blst::blst_fp_cneg(&mut r, &self.0, true) };
        RawFp(r)
    }
    /// Inverse (the caller ensures non-zero).
    pub fn inverse(&self) -> RawFp {
        let mut r = blst_fp::default();
        unsafe { blst::blst_fp_inverse(&mut r, &self.0) };
        RawFp(r)
    }
}

pub(crate) fn fp_from_words(w: &[u32]) -> RawFp {
    let mut l = [0u64; 6];
    for (i, x) in l.iter_mut().enumerate() {
        *x = w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32;
    }
    RawFp(blst_fp { l })
}

pub(crate) fn fp_words(x: &RawFp) -> [u32; 12] {
    let mut w = [0u32; 12];
    for i in 0..6 {
        w[2 * i] = x.0.l[i] as u32;
        w[2 * i + 1] = (x.0.l[i] >> 32) as u32;
    }
    w
}

/// An XYZZ point of the kernels (X, Y, ZZ, ZZZ: 48 words) as a blstrs point.
/// `None` when the words do not describe a point of the curve (a kernel bug).
pub fn xyzz_to_projective(w: &[u32]) -> Option<G1Projective> {
    let zz = fp_from_words(&w[24..36]);
    if zz.is_zero() {
        return Some(G1Projective::identity());
    }
    let zzz = fp_from_words(&w[36..48]);
    if zzz.is_zero() {
        return None;
    }
    let x = fp_from_words(&w[0..12]).mul(&zz.inverse());
    let y = fp_from_words(&w[12..24]).mul(&zzz.inverse());
    let raw = blst_p1_affine { x: x.0, y: y.0 };
    // SAFETY: plain data read.
    if !unsafe { blst::blst_p1_affine_on_curve(&raw) } {
        return None;
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine.
    let p: G1Affine = unsafe { std::mem::transmute::<blst_p1_affine, G1Affine>(raw) };
    Some(G1Projective::from(p))
}

fn fp2_from_words(w: &[u32]) -> blst_fp2 {
    blst_fp2 { fp: [fp_from_words(&w[0..12]).0, fp_from_words(&w[12..24]).0] }
}

fn fp2_is_zero(a: &blst_fp2) -> bool {
    a.fp.iter().all(|f| f.l.iter().all(|&x| x == 0))
}

/// A G2 XYZZ point of the kernels (X, Y, ZZ, ZZZ over Fp2: 96 words) as a blstrs point;
/// `None` when the words are not a point of the curve.
pub fn xyzz_to_projective_g2(w: &[u32]) -> Option<G2Projective> {
    let zz = fp2_from_words(&w[48..72]);
    if fp2_is_zero(&zz) {
        return Some(G2Projective::identity());
    }
    let zzz = fp2_from_words(&w[72..96]);
    if fp2_is_zero(&zzz) {
        return None;
    }
    let (x, y) = (fp2_from_words(&w[0..24]), fp2_from_words(&w[24..48]));
    let mut raw = blst_p2_affine::default();
    let (mut zzi, mut zzzi) = (blst_fp2::default(), blst_fp2::default());
    // SAFETY: blst reads and writes whole fp2 elements; zz and zzz are non-zero.
    unsafe {
        blst::blst_fp2_inverse(&mut zzi, &zz);
        blst::blst_fp2_inverse(&mut zzzi, &zzz);
        blst::blst_fp2_mul(&mut raw.x, &x, &zzi);
        blst::blst_fp2_mul(&mut raw.y, &y, &zzzi);
        if !blst::blst_p2_affine_on_curve(&raw) {
            return None;
        }
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine.
    let p: G2Affine = unsafe { std::mem::transmute::<blst_p2_affine, G2Affine>(raw) };
    Some(G2Projective::from(p))
}
