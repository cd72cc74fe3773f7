//! A small seeded random number generator (xoshiro256++ seeded through SplitMix64) and
//! the variates the models need (uniform, exponential, normal, lognormal). Written here so
//! that a seed means the same stream on every platform and version: same seed ⇒ same run.

/// xoshiro256++ (Blackman & Vigna): fast, 256-bit state, good statistical quality.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    /// Second normal variate of the last Box–Muller pair.
    spare_normal: Option<f64>,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Rng { s, spare_normal: None }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n) (n > 0), by multiply-shift (bias < 2^-64 · n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - u is in (0, 1], so ln never sees 0.
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Standard normal (Box–Muller, both variates used).
    pub fn std_normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        let r = (-2.0 * u1.ln()).sqrt();
        let th = std::f64::consts::TAU * u2;
        self.spare_normal = Some(r * th.sin());
        r * th.cos()
    }

    pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        mean + sd * self.std_normal()
    }

    /// Lognormal parameterised by the mean and sd of the underlying normal.
    pub fn lognormal(&mut self, mu: f64, sigma: f64) -> f64 {
        (mu + sigma * self.std_normal()).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_different_seeds_differ() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let mut c = Rng::new(43);
        let va: Vec<u64> = (0..16).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..16).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..16).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn moments_are_right() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let (mut su, mut se, mut sn, mut sn2) = (0.0, 0.0, 0.0, 0.0);
        for _ in 0..n {
            su += r.uniform();
            se += r.exponential(3.0);
            let z = r.normal(5.0, 2.0);
            sn += z;
            sn2 += z * z;
        }
        let n = n as f64;
        assert!((su / n - 0.5).abs() < 0.005);
        assert!((se / n - 3.0).abs() < 0.03);
        let mean = sn / n;
        let var = sn2 / n - mean * mean;
        assert!((mean - 5.0).abs() < 0.02, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.02, "{var}");
        for _ in 0..1000 {
            let k = r.below(7);
            assert!(k < 7);
        }
    }
}
