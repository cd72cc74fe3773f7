//! Multi-scalar multiplication on the CPU: a parallel Pippenger bucket method, and the
//! density split of the reference prover (supraseal/cuzk): zero scalars are skipped,
//! scalar-one terms are summed by plain additions ([`batch_add`]) and only the rest goes
//! through the bucket method ([`tail_msm`]). Witnesses of SHA-heavy circuits are mostly
//! bits, so the split removes most of the work. Generic over the curve (G1 and G2).

use blstrs::Scalar;
use ff::PrimeField;
use group::{Curve, Group};
use rayon::prelude::*;

/// A scalar in canonical form, little-endian 64-bit limbs.
pub type Limbs = [u64; 4];

pub fn to_limbs(s: &Scalar) -> Limbs {
    let r = s.to_repr();
    let mut l = [0u64; 4];
    for (i, chunk) in r.chunks_exact(8).enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        l[i] = u64::from_le_bytes(b);
    }
    l
}

const ONE: Limbs = [1, 0, 0, 0];
const ZERO: Limbs = [0, 0, 0, 0];

/// The density split of one MSM's scalars (indices refer to the query's points).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// Number of scalars (= number of points the MSM covers).
    pub len: usize,
    pub zeros: usize,
    /// Points whose scalar is one.
    pub ones: Vec<u32>,
    /// Points with any other scalar, and those scalars.
    pub tail_idx: Vec<u32>,
    pub tail: Vec<Limbs>,
}

impl Split {
    /// Classify scalars in order (the i-th scalar belongs to the i-th point).
    pub fn classify<'a>(scalars: impl IntoIterator<Item = &'a Scalar>) -> Split {
        let mut s = Split::default();
        for (i, x) in scalars.into_iter().enumerate() {
            let l = to_limbs(x);
            if l == ZERO {
                s.zeros += 1;
            } else if l == ONE {
                s.ones.push(i as u32);
            } else {
                s.tail_idx.push(i as u32);
                s.tail.push(l);
            }
            s.len = i + 1;
        }
        s
    }

    /// Classify a dense slice in parallel.
    pub fn classify_par(scalars: &[Scalar]) -> Split {
        Self::classify_selected_par(scalars, |_| true)
    }

    /// Classify, in parallel, the scalars `scalars[i]` with `keep(i)` (a density filter):
    /// the k-th kept scalar belongs to point k, exactly as [`Split::classify`] over the
    /// filtered sequence (tested equal).
    pub fn classify_selected_par(scalars: &[Scalar], keep: impl Fn(usize) -> bool + Sync) -> Split {
        Self::concat_par(Self::classify_selected_chunks(scalars, keep))
    }

    /// The per-chunk splits of [`Split::classify_selected_par`] before they are joined
    /// (each chunk's indices start at 0), so that several slices can be joined at once.
    pub fn classify_selected_chunks(scalars: &[Scalar], keep: impl Fn(usize) -> bool + Sync) -> Vec<Split> {
        const C: usize = 1 << 14;
        scalars
            .par_chunks(C)
            .enumerate()
            .map(|(k, c)| Split::classify(c.iter().enumerate().filter(|(j, _)| keep(k * C + j)).map(|(_, s)| s)))
            .collect()
    }

    /// The splits one after the other (each one's point indices shifted by the points
    /// before it), copied into place in parallel: joining serially cost as much as
    /// classifying (hundreds of MB of tail scalars at 2^24).
    pub fn concat_par(parts: Vec<Split>) -> Split {
        let n_ones: usize = parts.iter().map(|p| p.ones.len()).sum();
        let n_tail: usize = parts.iter().map(|p| p.tail.len()).sum();
        let mut out = Split {
            len: parts.iter().map(|p| p.len).sum(),
            zeros: parts.iter().map(|p| p.zeros).sum(),
            ones: vec![0; n_ones],
            tail_idx: vec![0; n_tail],
            tail: vec![ZERO; n_tail],
        };
        let (mut ones, mut idx, mut tail) = (&mut out.ones[..], &mut out.tail_idx[..], &mut out.tail[..]);
        let mut jobs = Vec::with_capacity(parts.len());
        let mut off = 0u32;
        for p in &parts {
            let (o, rest) = std::mem::take(&mut ones).split_at_mut(p.ones.len());
            ones = rest;
            let (i, rest) = std::mem::take(&mut idx).split_at_mut(p.tail_idx.len());
            idx = rest;
            let (t, rest) = std::mem::take(&mut tail).split_at_mut(p.tail.len());
            tail = rest;
            jobs.push((p, off, o, i, t));
            off += p.len as u32;
        }
        jobs.into_par_iter().for_each(|(p, off, o, i, t)| {
            for (d, s) in o.iter_mut().zip(&p.ones) {
                *d = s + off;
            }
            for (d, s) in i.iter_mut().zip(&p.tail_idx) {
                *d = s + off;
            }
            t.copy_from_slice(&p.tail);
        });
        out
    }
}

/// Sum of the points at `idx` (the scalar-one terms).
pub fn batch_add<P>(bases: &[P::AffineRepr], idx: &[u32]) -> P
where
    P: Curve + Send + Sync,
    P::AffineRepr: Send + Sync,
{
    idx.par_iter()
        .with_min_len(1024)
        .fold(P::identity, |mut acc, &i| {
            acc += &bases[i as usize];
            acc
        })
        .reduce(P::identity, |a, b| a + b)
}

/// Window width of the bucket method for `n` points.
pub fn window_bits(n: usize) -> usize {
    if n < 32 {
        3
    } else {
        // ≈ ln(n) + 2, as the usual Pippenger cost model gives.
        ((usize::BITS - n.leading_zeros()) as usize * 69 / 100 + 2).min(16)
    }
}

#[inline]
pub(crate) fn digit(l: &Limbs, offset: usize, c: usize) -> usize {
    let limb = offset / 64;
    let shift = offset % 64;
    if limb >= 4 {
        return 0;
    }
    let mut d = l[limb] >> shift;
    if shift + c > 64 && limb + 1 < 4 {
        d |= l[limb + 1] << (64 - shift);
    }
    (d as usize) & ((1usize << c) - 1)
}

/// Pippenger over `scalars[i]·bases[idx[i]]` (or `bases[i]` when `idx` is `None`).
pub fn pippenger<P>(bases: &[P::AffineRepr], idx: Option<&[u32]>, scalars: &[Limbs]) -> P
where
    P: Curve + Send + Sync,
    P::AffineRepr: Send + Sync,
{
    let n = scalars.len();
    if n == 0 {
        return P::identity();
    }
    let c = window_bits(n);
    let windows = (Scalar::NUM_BITS as usize).div_ceil(c);
    let threads = rayon::current_num_threads().max(1);
    // Enough independent (chunk, window) tasks to keep every thread busy.
    let chunks = threads.div_ceil(windows).max(1).min(n.div_ceil(1024).max(1));
    let chunk_len = n.div_ceil(chunks);
    let base_of = |i: usize| -> &P::AffineRepr {
        match idx {
            Some(ix) => &bases[ix[i] as usize],
            None => &bases[i],
        }
    };
    let window_sum = |w: usize, lo: usize, hi: usize| -> P {
        let mut buckets = vec![P::identity(); (1 << c) - 1];
        let off = w * c;
        for (i, s) in scalars[lo..hi].iter().enumerate() {
            let d = digit(s, off, c);
            if d != 0 {
                buckets[d - 1] += base_of(lo + i);
            }
        }
        let mut running = P::identity();
        let mut acc = P::identity();
        for b in buckets.iter().rev() {
            running += b;
            acc += &running;
        }
        acc
    };
    let sums: Vec<P> = (0..windows)
        .into_par_iter()
        .map(|w| {
            (0..chunks)
                .into_par_iter()
                .map(|k| window_sum(w, k * chunk_len, ((k + 1) * chunk_len).min(n)))
                .reduce(P::identity, |a, b| a + b)
        })
        .collect();
    let mut acc = P::identity();
    for s in sums.iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += s;
    }
    acc
}

/// The tail of a split: the bucket method over the scalars that are neither 0 nor 1.
pub fn tail_msm<P>(bases: &[P::AffineRepr], split: &Split) -> P
where
    P: Curve + Send + Sync,
    P::AffineRepr: Send + Sync,
{
    pippenger::<P>(bases, Some(&split.tail_idx), &split.tail)
}

/// [`tail_msm`] for G1 with the batch-affine buckets of [`crate::msm_affine`].
pub fn tail_msm_g1(bases: &[blstrs::G1Affine], split: &Split) -> blstrs::G1Projective {
    crate::msm_affine::pippenger_g1(bases, Some(&split.tail_idx), &split.tail)
}

/// Which bucket method the CPU backend uses for its tail MSMs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuMsm {
    /// blst's multi-threaded Pippenger (C/assembly, over affine points): the fastest here.
    #[default]
    Blst,
    /// Our own Pippenger (rayon; in G1 batch-affine buckets from 2^15 points, where they
    /// measured faster than projective buckets, projective below).
    Proofscope,
}

impl std::str::FromStr for CpuMsm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "blst" => Ok(CpuMsm::Blst),
            "proofscope" | "ours" => Ok(CpuMsm::Proofscope),
            o => Err(format!("unknown CPU MSM `{o}` (expected blst or proofscope)")),
        }
    }
}

fn scalar_bytes(scalars: &[Limbs]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(scalars.len() * 32);
    for l in scalars {
        for w in l {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
    }
    bytes
}

fn gather<'a, T: Copy>(bases: &'a [T], idx: Option<&[u32]>, n: usize) -> std::borrow::Cow<'a, [T]> {
    match idx {
        Some(ix) => std::borrow::Cow::Owned(ix.iter().map(|&i| bases[i as usize]).collect()),
        None => std::borrow::Cow::Borrowed(&bases[..n]),
    }
}

/// blst's Pippenger in G1 over `scalars[i]·bases[idx[i]]` (or `bases[i]`).
pub fn blst_g1(bases: &[blstrs::G1Affine], idx: Option<&[u32]>, scalars: &[Limbs]) -> blstrs::G1Projective {
    use blst::MultiPoint;
    if scalars.is_empty() {
        return blstrs::G1Projective::identity();
    }
    let pts = gather(bases, idx, scalars.len());
    // SAFETY: blstrs 0.7 declares G1Affine `#[repr(transparent)]` over blst_p1_affine and
    // G1Projective over blst_p1, so these reinterpretations are layout-identical.
    let raw: &[blst::blst_p1_affine] = unsafe { std::slice::from_raw_parts(pts.as_ptr() as *const blst::blst_p1_affine, pts.len()) };
    let r = raw.mult(&scalar_bytes(scalars), 255);
    unsafe { std::mem::transmute::<blst::blst_p1, blstrs::G1Projective>(r) }
}

/// blst's Pippenger in G2.
pub fn blst_g2(bases: &[blstrs::G2Affine], idx: Option<&[u32]>, scalars: &[Limbs]) -> blstrs::G2Projective {
    use blst::MultiPoint;
    if scalars.is_empty() {
        return blstrs::G2Projective::identity();
    }
    let pts = gather(bases, idx, scalars.len());
    // SAFETY: as in `blst_g1`, for G2Affine / blst_p2_affine and G2Projective / blst_p2.
    let raw: &[blst::blst_p2_affine] = unsafe { std::slice::from_raw_parts(pts.as_ptr() as *const blst::blst_p2_affine, pts.len()) };
    let r = raw.mult(&scalar_bytes(scalars), 255);
    unsafe { std::mem::transmute::<blst::blst_p2, blstrs::G2Projective>(r) }
}

/// The G1 tail of a split with the chosen bucket method.
pub fn tail_g1(bases: &[blstrs::G1Affine], split: &Split, m: CpuMsm) -> blstrs::G1Projective {
    match m {
        CpuMsm::Blst => blst_g1(bases, Some(&split.tail_idx), &split.tail),
        CpuMsm::Proofscope => tail_msm_g1(bases, split),
    }
}

/// The G2 tail of a split with the chosen bucket method.
pub fn tail_g2(bases: &[blstrs::G2Affine], split: &Split, m: CpuMsm) -> blstrs::G2Projective {
    match m {
        CpuMsm::Blst => blst_g2(bases, Some(&split.tail_idx), &split.tail),
        CpuMsm::Proofscope => tail_msm::<blstrs::G2Projective>(bases, split),
    }
}

/// A whole MSM with the density split: `Σ scalars[i]·bases[i]`.
pub fn msm<P>(bases: &[P::AffineRepr], scalars: &[Scalar]) -> P
where
    P: Curve + Send + Sync,
    P::AffineRepr: Send + Sync,
{
    let split = Split::classify_par(scalars);
    batch_add::<P>(bases, &split.ones) + tail_msm::<P>(bases, &split)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use ff::Field;
    use group::Group;
    use rand::{Rng, SeedableRng};

    fn naive<P>(bases: &[P::AffineRepr], scalars: &[Scalar]) -> P
    where
        P: Curve + From<P::AffineRepr> + std::ops::Mul<Scalar, Output = P>,
        P::AffineRepr: Copy,
    {
        bases.iter().zip(scalars).fold(P::identity(), |acc, (b, s)| acc + P::from(*b) * *s)
    }

    fn scalars(rng: &mut impl Rng, n: usize) -> Vec<Scalar> {
        (0..n)
            .map(|i| match i % 4 {
                0 => Scalar::ZERO,
                1 => Scalar::ONE,
                2 => Scalar::from(rng.gen::<u64>()),
                _ => Scalar::random(&mut *rng),
            })
            .collect()
    }

    #[test]
    fn g1_msm_matches_naive_with_zeros_ones_and_duplicates() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for n in [0usize, 1, 5, 33, 200] {
            let mut bases: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
            if n > 3 {
                bases[3] = bases[2]; // duplicate point: the bucket method must double
            }
            let s = scalars(&mut rng, n);
            assert_eq!(msm::<G1Projective>(&bases, &s), naive::<G1Projective>(&bases, &s), "n={n}");
            let limbs: Vec<Limbs> = s.iter().map(to_limbs).collect();
            assert_eq!(pippenger::<G1Projective>(&bases, None, &limbs), naive::<G1Projective>(&bases, &s));
        }
    }

    #[test]
    fn g2_msm_matches_naive() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let bases: Vec<G2Affine> = (0..40).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        let s = scalars(&mut rng, 40);
        assert_eq!(msm::<G2Projective>(&bases, &s), naive::<G2Projective>(&bases, &s));
    }

    #[test]
    fn blst_tails_match_ours() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let b1: Vec<G1Affine> = (0..300).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        let b2: Vec<G2Affine> = (0..50).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        let s = scalars(&mut rng, 300);
        let sp = Split::classify_par(&s);
        assert_eq!(tail_g1(&b1, &sp, CpuMsm::Blst), tail_g1(&b1, &sp, CpuMsm::Proofscope));
        let sp2 = Split::classify_par(&s[..50]);
        assert_eq!(tail_g2(&b2, &sp2, CpuMsm::Blst), tail_g2(&b2, &sp2, CpuMsm::Proofscope));
        assert_eq!(blst_g1(&b1, None, &[]), G1Projective::identity());
    }

    #[test]
    fn parallel_selected_classification_equals_the_serial_one() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        // Sizes around the chunk length (2^14), densities from none to all.
        for (n, density) in [(0usize, 0.5f64), (1, 1.0), (100, 0.0), (16_384, 0.3), (16_385, 0.9), (40_000, 0.5), (50_001, 1.0)] {
            let v = scalars(&mut rng, n);
            let keep: Vec<bool> = (0..n).map(|_| rng.gen_bool(density)).collect();
            let serial = Split::classify(v.iter().enumerate().filter(|(i, _)| keep[*i]).map(|(_, s)| s));
            let par = Split::classify_selected_par(&v, |i| keep[i]);
            assert_eq!(par, serial, "n = {n}, density {density}");
            assert_eq!(Split::classify_par(&v), Split::classify(v.iter()), "n = {n}, dense");
            // Concatenation: inputs then selected aux, as prep_msm builds the A query.
            let head = scalars(&mut rng, 3);
            let cat = Split::concat_par(vec![Split::classify(head.iter()), par.clone()]);
            let whole = Split::classify(head.iter().chain(v.iter().enumerate().filter(|(i, _)| keep[*i]).map(|(_, s)| s)));
            assert_eq!(cat, whole, "n = {n}: joined split");
            let mut parts = vec![Split::classify(head.iter())];
            parts.extend(Split::classify_selected_chunks(&v, |i| keep[i]));
            assert_eq!(Split::concat_par(parts), whole, "n = {n}: concat_par");
        }
    }

    #[test]
    fn split_counts_each_class() {
        let s = [Scalar::ZERO, Scalar::ONE, Scalar::from(2u64), Scalar::ONE, -Scalar::ONE];
        let sp = Split::classify(s.iter());
        assert_eq!((sp.len, sp.zeros, sp.ones.clone(), sp.tail_idx.clone()), (5, 1, vec![1, 3], vec![2, 4]));
        assert_eq!(Split::classify_par(&s), sp);
    }
}
