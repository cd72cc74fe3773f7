//! A STREAM-like probe of the host's memory bandwidth (copy `a[i] = b[i]` and triad
//! `a[i] = b[i] + s·c[i]` over arrays far larger than the caches, each thread on its own
//! contiguous part, best of a few repetitions, bytes counted as STREAM counts them: what is
//! read plus what is written, no write-allocate). It exists because the products of the
//! pre-compiled path are bound by memory traffic: their floor is the bytes they must move ÷
//! this bandwidth, measured on the same machine with the same threads.

use std::time::Instant;

use rayon::prelude::*;

/// Default size of each array: 256 MiB (three of them for the triad), well above the
/// last-level cache of the hosts we measure on.
pub const DEFAULT_ARRAY_BYTES: usize = 256 << 20;

/// A probe's result.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Bandwidth {
    pub threads: usize,
    pub array_bytes: usize,
    pub reps: usize,
    /// Best copy rate, GB/s (10^9 bytes).
    pub copy_gbs: f64,
    /// Best triad rate, GB/s.
    pub triad_gbs: f64,
}

impl Bandwidth {
    /// Seconds to move `bytes` at the triad rate: the floor of a memory-bound phase.
    pub fn floor_s(&self, bytes: u64) -> f64 {
        bytes as f64 / (self.triad_gbs * 1e9)
    }
}

/// Measure with `threads` threads (0: rayon's default), arrays of `array_bytes` bytes, best
/// of `reps` repetitions of each kernel.
pub fn probe(threads: usize, array_bytes: usize, reps: usize) -> Result<Bandwidth, rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let threads = pool.current_num_threads();
    let n = (array_bytes / 8).max(threads * 1024);
    let part = n.div_ceil(threads);
    let reps = reps.max(1);
    let (copy, triad) = pool.install(|| {
        // First touch by the thread that will use each part (NUMA placement, parallel faults).
        let fill = |v: f64| {
            let mut x: Vec<f64> = Vec::with_capacity(n);
            x.spare_capacity_mut().par_chunks_mut(part).for_each(|c| {
                for e in c {
                    e.write(v);
                }
            });
            // SAFETY: every element was written above.
            unsafe { x.set_len(n) };
            x
        };
        let (mut a, b, c) = (fill(0.0), fill(1.0), fill(2.0));
        let best = |f: &mut dyn FnMut()| {
            (0..reps + 1)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .skip(1) // the first one warms up
                .fold(f64::INFINITY, f64::min)
        };
        let copy = best(&mut || {
            a.par_chunks_mut(part).zip(b.par_chunks(part)).for_each(|(a, b)| a.copy_from_slice(b));
            std::hint::black_box(&a);
        });
        let s = std::hint::black_box(3.0f64);
        let triad = best(&mut || {
            a.par_chunks_mut(part).zip(b.par_chunks(part)).zip(c.par_chunks(part)).for_each(|((a, b), c)| {
                for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
                    *x = y + s * z;
                }
            });
            std::hint::black_box(&a);
        });
        (copy, triad)
    });
    let bytes = (n * 8) as f64;
    Ok(Bandwidth { threads, array_bytes: n * 8, reps, copy_gbs: 2.0 * bytes / copy / 1e9, triad_gbs: 3.0 * bytes / triad / 1e9 })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_measures_something_plausible() {
        let b = super::probe(2, 8 << 20, 2).unwrap();
        assert!(b.copy_gbs > 0.1 && b.copy_gbs < 10_000.0, "{b:?}");
        assert!(b.triad_gbs > 0.1 && b.triad_gbs < 10_000.0, "{b:?}");
        assert!((b.floor_s(1_000_000_000) - 1.0 / b.triad_gbs).abs() < 1e-9);
    }
}
