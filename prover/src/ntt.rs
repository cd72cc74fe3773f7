//! The number-theoretic transforms of the H computation, over Fr, parallel with rayon:
//! an iterative radix-2 decimation-in-time NTT whose first stages run cache-resident per
//! chunk and whose last stages are parallel across butterflies. Field arithmetic is
//! exact, so any correct NTT (the GPU's included) must match these outputs bit for bit;
//! [`compute_h`] is the reference for the whole (ab − c)/Z step.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::domain::Domain;

/// Elements per cache-resident chunk for the first stages (2^12 × 32 B = 128 KiB).
const CHUNK_LOG: u32 = 12;
/// Below this size everything runs on the calling thread.
const PAR_MIN: usize = 1 << 10;

/// `out[i] = base^(start + i)`, computed in parallel chunks.
pub fn powers(base: Scalar, len: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; len];
    scale_by_powers_into(&mut out, base, true);
    out
}

/// `a[i] *= base^i` (or `a[i] = base^i` when `assign`), in parallel chunks.
fn scale_by_powers_into(a: &mut [Scalar], base: Scalar, assign: bool) {
    const C: usize = 4096;
    a.par_chunks_mut(C).enumerate().for_each(|(k, chunk)| {
        let mut p = base.pow_vartime([(k * C) as u64]);
        for x in chunk.iter_mut() {
            if assign {
                *x = p;
            } else {
                *x *= p;
            }
            p *= base;
        }
    });
}

fn bit_reverse(a: &mut [Scalar]) {
    let n = a.len();
    let log_n = n.trailing_zeros();
    if log_n == 0 {
        return;
    }
    for i in 0..n {
        let r = i.reverse_bits() >> (usize::BITS - log_n);
        if i < r {
            a.swap(i, r);
        }
    }
}

#[inline]
fn butterflies(block: &mut [Scalar], half: usize, tw: &[Scalar], stride: usize) {
    let (lo, hi) = block.split_at_mut(half);
    for j in 0..half {
        let t = hi[j] * tw[j * stride];
        hi[j] = lo[j] - t;
        lo[j] += t;
    }
}

/// In-place NTT of `a` (length a power of two) with root `omega` of order `a.len()`:
/// `a[i] ← Σ_j a[j]·ω^{ij}`.
pub fn ntt(a: &mut [Scalar], omega: Scalar) {
    let n = a.len();
    assert!(n.is_power_of_two(), "NTT length must be a power of two");
    if n == 1 {
        return;
    }
    bit_reverse(a);
    let tw = if n >= PAR_MIN { powers(omega, n / 2) } else { seq_powers(omega, n / 2) };
    let chunk = (1usize << CHUNK_LOG).min(n);
    // Stages whose blocks fit in a chunk: each chunk runs them all, in parallel.
    let run_local = |c: &mut [Scalar]| {
        let mut half = 1;
        while 2 * half <= c.len() {
            let stride = n / (2 * half);
            for block in c.chunks_mut(2 * half) {
                butterflies(block, half, &tw, stride);
            }
            half *= 2;
        }
    };
    if n >= PAR_MIN {
        a.par_chunks_mut(chunk).for_each(run_local);
    } else {
        run_local(a);
    }
    // Remaining stages: few large blocks, parallel across butterflies.
    let mut half = chunk;
    while half < n {
        let stride = n / (2 * half);
        for block in a.chunks_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            lo.par_iter_mut().zip(hi.par_iter_mut()).enumerate().with_min_len(1024).for_each(|(j, (x, y))| {
                let t = *y * tw[j * stride];
                *y = *x - t;
                *x += t;
            });
        }
        half *= 2;
    }
}

fn seq_powers(base: Scalar, len: usize) -> Vec<Scalar> {
    let mut out = Vec::with_capacity(len);
    let mut p = Scalar::ONE;
    for _ in 0..len {
        out.push(p);
        p *= base;
    }
    out
}

/// Evaluations on the domain from coefficients.
pub fn forward(a: &mut [Scalar], d: &Domain) {
    ntt(a, d.omega);
}

/// Coefficients from evaluations on the domain.
pub fn inverse(a: &mut [Scalar], d: &Domain) {
    ntt(a, d.omega_inv);
    let n_inv = d.n_inv;
    a.par_iter_mut().with_min_len(4096).for_each(|x| *x *= n_inv);
}

/// Evaluations on the coset g·⟨ω⟩ from coefficients.
pub fn coset_forward(a: &mut [Scalar], d: &Domain) {
    scale_by_powers_into(a, d.g, false);
    ntt(a, d.omega);
}

/// Coefficients from evaluations on the coset g·⟨ω⟩.
pub fn coset_inverse(a: &mut [Scalar], d: &Domain) {
    inverse(a, d);
    scale_by_powers_into(a, d.g_inv, false);
}

/// On the coset: `a[i] ← (a[i]·b[i] − c[i]) / Z(g·ω^i)`.
pub fn ab_minus_c_over_z(a: &mut [Scalar], b: &[Scalar], c: &[Scalar], d: &Domain) {
    let z_inv = d.z_coset_inv;
    a.par_iter_mut().zip(b.par_iter()).zip(c.par_iter()).with_min_len(4096).for_each(|((x, y), z)| {
        *x = (*x * y - z) * z_inv;
    });
}

/// The coefficients of H(X) = (A(X)·B(X) − C(X)) / Z(X) from the evaluations of A, B, C
/// on the domain (shorter inputs are zero-padded): inverse NTT, coset forward NTT,
/// pointwise (ab − c)/Z, coset inverse NTT. Returns the n − 1 coefficients the H query
/// has points for (the last one is zero for a satisfied witness).
pub fn compute_h(mut a: Vec<Scalar>, mut b: Vec<Scalar>, mut c: Vec<Scalar>, d: &Domain) -> Vec<Scalar> {
    for v in [&mut a, &mut b, &mut c] {
        v.resize(d.n, Scalar::ZERO);
    }
    let to_coset = |v: &mut Vec<Scalar>| {
        inverse(v, d);
        coset_forward(v, d);
    };
    rayon::join(|| to_coset(&mut a), || rayon::join(|| to_coset(&mut b), || to_coset(&mut c)));
    ab_minus_c_over_z(&mut a, &b, &c, d);
    drop(b);
    drop(c);
    coset_inverse(&mut a, d);
    a.truncate(d.n - 1);
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn naive_dft(a: &[Scalar], omega: Scalar) -> Vec<Scalar> {
        let n = a.len();
        (0..n)
            .map(|i| {
                let wi = omega.pow_vartime([i as u64]);
                let mut acc = Scalar::ZERO;
                let mut p = Scalar::ONE;
                for x in a {
                    acc += *x * p;
                    p *= wi;
                }
                acc
            })
            .collect()
    }

    #[test]
    fn ntt_matches_naive_dft_and_inverts() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for log_n in [0u32, 1, 3, 6, 13] {
            let d = Domain::new(1 << log_n).unwrap();
            let orig: Vec<Scalar> = (0..d.n).map(|_| Scalar::random(&mut rng)).collect();
            let mut a = orig.clone();
            forward(&mut a, &d);
            if log_n <= 6 {
                assert_eq!(a, naive_dft(&orig, d.omega), "n=2^{log_n}");
            }
            inverse(&mut a, &d);
            assert_eq!(a, orig);
            coset_forward(&mut a, &d);
            coset_inverse(&mut a, &d);
            assert_eq!(a, orig);
        }
    }

    #[test]
    fn h_of_a_satisfied_system_divides_exactly() {
        // Choose random A, B evaluations and C = A·B on the domain: then A·B − C
        // vanishes on the domain, H has degree ≤ n − 2 and H·Z = AB − C at any point.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let d = Domain::new(64).unwrap();
        let a: Vec<Scalar> = (0..d.n).map(|_| Scalar::random(&mut rng)).collect();
        let b: Vec<Scalar> = (0..d.n).map(|_| Scalar::random(&mut rng)).collect();
        let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
        let h = compute_h(a.clone(), b.clone(), c.clone(), &d);
        assert_eq!(h.len(), d.n - 1);
        // Evaluate at a random point via coefficient forms.
        let x = Scalar::random(&mut rng);
        let coeffs = |mut v: Vec<Scalar>| {
            inverse(&mut v, &d);
            v
        };
        let eval = |cs: &[Scalar]| cs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
        let (pa, pb, pc) = (coeffs(a), coeffs(b), coeffs(c));
        assert_eq!(eval(&pa) * eval(&pb) - eval(&pc), eval(&h) * d.z(&x));
    }
}
