//! CPU references and input generators for checking and timing the kernels: a plain
//! radix-2 NTT over blstrs scalars (same math as the CPU prover: natural order, the
//! domain generator from `Scalar::ROOT_OF_UNITY` squared down, coset g = 7), the
//! quotient H, and fast random scalars and points.

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::gpu::ntt::omega;

/// Natural-order in-place radix-2 NTT with root `w` (Cooley-Tukey after a bit reversal).
pub fn ntt_cpu(a: &mut [Scalar], w: Scalar) {
    let n = a.len();
    assert!(n.is_power_of_two(), "NTT size must be a power of two");
    let log_n = n.trailing_zeros();
    for i in 0..n {
        let j = if log_n == 0 { 0 } else { i.reverse_bits() >> (usize::BITS - log_n) };
        if i < j {
            a.swap(i, j);
        }
    }
    let mut m = 1;
    while m < n {
        let wm = w.pow_vartime([(n / (2 * m)) as u64]);
        for k in (0..n).step_by(2 * m) {
            let mut t = Scalar::ONE;
            for j in 0..m {
                let u = a[k + j];
                let v = a[k + j + m] * t;
                a[k + j] = u + v;
                a[k + j + m] = u - v;
                t *= wm;
            }
        }
        m *= 2;
    }
}

/// CPU NTT of `values` zero-padded to 2^log_n, same conventions as [`crate::gpu::Ntt::ntt`].
pub fn ntt_ref(values: &[Scalar], log_n: u32, inverse: bool, coset: bool) -> Vec<Scalar> {
    let n = 1usize << log_n;
    let mut a = values.to_vec();
    a.resize(n, Scalar::ZERO);
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let w = omega(log_n);
    if !inverse {
        if coset {
            let mut x = Scalar::ONE;
            for v in a.iter_mut() {
                *v *= x;
                x *= g;
            }
        }
        ntt_cpu(&mut a, w);
    } else {
        ntt_cpu(&mut a, w.invert().unwrap());
        let ninv = Scalar::from(n as u64).invert().unwrap();
        let ginv = g.invert().unwrap();
        let mut x = ninv;
        for v in a.iter_mut() {
            *v *= x;
            if coset {
                x *= ginv;
            }
        }
    }
    a
}

/// CPU quotient H with the same steps as [`crate::gpu::Ntt::h_quotient`].
pub fn h_ref(a: &[Scalar], b: &[Scalar], c: &[Scalar], log_n: u32) -> Vec<Scalar> {
    let ev = |v: &[Scalar]| ntt_ref(&ntt_ref(v, log_n, true, false), log_n, false, true);
    let (ea, eb, ec) = (ev(a), ev(b), ev(c));
    let n = 1u64 << log_n;
    let zinv = (Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n]) - Scalar::ONE).invert().unwrap();
    let q: Vec<Scalar> = (0..ea.len()).map(|i| (ea[i] * eb[i] - ec[i]) * zinv).collect();
    ntt_ref(&q, log_n, true, true)
}

/// `n` uniformly random scalars (parallel, deterministic in `seed`).
pub fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    const CHUNK: usize = 1 << 14;
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for s in chunk.iter_mut() {
            *s = Scalar::random(&mut rng);
        }
    });
    out
}

/// `n` random-looking distinct points, cheaply: each chunk walks P, P+Q, P+2Q, ... from a
/// random P with a random step Q (one addition per point), then one batch normalisation.
pub fn random_points(n: usize, seed: u64) -> Vec<G1Affine> {
    random_points_in::<G1Projective>(n, seed)
}

/// [`random_points`] in any group (G2 for the G2 MSM).
pub fn random_points_in<P>(n: usize, seed: u64) -> Vec<P::AffineRepr>
where
    P: Curve + Send + Sync,
    P::AffineRepr: PrimeCurveAffine + Send + Sync,
{
    const CHUNK: usize = 1 << 14;
    let mut out = vec![P::AffineRepr::identity(); n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(0x5851_f42d_4c95_7f2d) ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let step = P::random(&mut rng);
        let mut p = P::random(&mut rng);
        let mut proj = Vec::with_capacity(chunk.len());
        for _ in 0..chunk.len() {
            proj.push(p);
            p += step;
        }
        P::batch_normalize(&proj, chunk);
    });
    out
}

/// CPU MSM reference (blst's Pippenger).
pub fn msm_ref(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    let proj: Vec<G1Projective> = points.par_iter().map(G1Projective::from).collect();
    G1Projective::multi_exp(&proj, scalars)
}

/// Sum of points (reference for the batch additions).
pub fn sum_ref(points: &[G1Affine]) -> G1Projective {
    points.iter().fold(G1Projective::identity(), |acc, p| acc + p)
}

