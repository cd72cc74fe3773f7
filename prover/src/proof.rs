//! A Groth16 proof (A ∈ G1, B ∈ G2, C ∈ G1) and its 192-byte encoding: the three points
//! compressed, in that order, which is also bellperson's `Proof::write` layout, so proof
//! files can be checked by either verifier.

use blstrs::{G1Affine, G2Affine};

pub const PROOF_BYTES: usize = 48 + 96 + 48;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

#[derive(Debug, thiserror::Error)]
pub enum ProofDecodeError {
    #[error("a proof is {PROOF_BYTES} bytes, got {0}")]
    Length(usize),
    #[error("proof element {0} is not a valid compressed curve point")]
    Point(&'static str),
}

impl Proof {
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Proof, ProofDecodeError> {
        if bytes.len() != PROOF_BYTES {
            return Err(ProofDecodeError::Length(bytes.len()));
        }
        let mut a = [0u8; 48];
        let mut b = [0u8; 96];
        let mut c = [0u8; 48];
        a.copy_from_slice(&bytes[..48]);
        b.copy_from_slice(&bytes[48..144]);
        c.copy_from_slice(&bytes[144..]);
        Ok(Proof {
            a: Option::from(G1Affine::from_compressed(&a)).ok_or(ProofDecodeError::Point("A"))?,
            b: Option::from(G2Affine::from_compressed(&b)).ok_or(ProofDecodeError::Point("B"))?,
            c: Option::from(G1Affine::from_compressed(&c)).ok_or(ProofDecodeError::Point("C"))?,
        })
    }
}
