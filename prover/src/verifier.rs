//! Our Groth16 verifier: the pairing check e(A, B) = e(α, β) · e(IC(x), γ) · e(C, δ),
//! computed as one multi-Miller loop and one final exponentiation.

use blstrs::{Bls12, G1Projective, G2Prepared, Scalar};
use group::{prime::PrimeCurveAffine, Curve};
use pairing::{MillerLoopResult, MultiMillerLoop};

use crate::params::VerifyingKey;
use crate::proof::Proof;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("the verifying key expects {expected} public inputs, {got} were given")]
    InputCount { expected: usize, got: usize },
}

/// True when `proof` proves the circuit of `vk` for `public_inputs` (without ONE).
pub fn verify(vk: &VerifyingKey, proof: &Proof, public_inputs: &[Scalar]) -> Result<bool, VerifyError> {
    if public_inputs.len() + 1 != vk.ic.len() {
        return Err(VerifyError::InputCount { expected: vk.ic.len().saturating_sub(1), got: public_inputs.len() });
    }
    let mut acc = G1Projective::from(vk.ic[0]);
    for (x, p) in public_inputs.iter().zip(&vk.ic[1..]) {
        acc += p.to_curve() * x;
    }
    let ic = acc.to_affine();
    let b = G2Prepared::from(proof.b);
    let neg_gamma = G2Prepared::from(-vk.gamma_g2);
    let neg_delta = G2Prepared::from(-vk.delta_g2);
    let beta = G2Prepared::from(vk.beta_g2);
    let neg_alpha = -vk.alpha_g1;
    // e(A,B) · e(−α,β) · e(IC,−γ) · e(C,−δ) = 1
    let ml = Bls12::multi_miller_loop(&[(&proof.a, &b), (&neg_alpha, &beta), (&ic, &neg_gamma), (&proof.c, &neg_delta)]);
    Ok(bool::from(group::Group::is_identity(&ml.final_exponentiation())))
}
