//! The evaluation domain of the H computation: the multiplicative subgroup of size
//! n = 2^k ≥ #constraints of Fr, its generator ω (from Fr's 2^32-th root of unity, as
//! the bellman family derives it, so parameters made by bellperson match), and the coset
//! g·⟨ω⟩ (g = Fr's multiplicative generator) on which Z(X) = X^n − 1 is the non-zero
//! constant g^n − 1.

use blstrs::Scalar;
use ff::{Field, PrimeField};

#[derive(Clone, Debug, PartialEq)]
pub struct Domain {
    pub n: usize,
    pub log_n: u32,
    pub omega: Scalar,
    pub omega_inv: Scalar,
    pub n_inv: Scalar,
    /// Coset shift g and its inverse.
    pub g: Scalar,
    pub g_inv: Scalar,
    /// 1 / Z(g·ω^i) = 1 / (g^n − 1), the same for every point of the coset.
    pub z_coset_inv: Scalar,
}

#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    #[error("{0} constraints exceed the largest NTT domain of BLS12-381's Fr (2^32)")]
    TooLarge(usize),
}

impl Domain {
    /// The smallest domain holding `size` evaluations.
    pub fn new(size: usize) -> Result<Self, DomainError> {
        let n = size.max(1).next_power_of_two();
        let log_n = n.trailing_zeros();
        if log_n > Scalar::S {
            return Err(DomainError::TooLarge(size));
        }
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_n..Scalar::S {
            omega = omega.square();
        }
        let inv = |x: Scalar| Option::<Scalar>::from(x.invert()).unwrap_or(Scalar::ZERO);
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let z = g.pow_vartime([n as u64]) - Scalar::ONE;
        Ok(Domain {
            n,
            log_n,
            omega,
            omega_inv: inv(omega),
            n_inv: inv(Scalar::from(n as u64)),
            g,
            g_inv: inv(g),
            z_coset_inv: inv(z),
        })
    }

    /// Z(τ) = τ^n − 1.
    pub fn z(&self, tau: &Scalar) -> Scalar {
        tau.pow_vartime([self.n as u64]) - Scalar::ONE
    }
}
