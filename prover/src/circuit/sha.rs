//! The SHA-256 section of the PoRep-like circuit: a chain of compressions (bellpepper's
//! gadget) over witnessed message blocks, as PoRep's labelling hashes are. Message bits
//! come from the seeded RNG, so the witness is deterministic.

use std::sync::OnceLock;

use bellpepper::gadgets::sha256::sha256_compression_function;
use bellpepper::gadgets::uint32::UInt32;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use rand::RngCore;

const IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// Synthesise `blocks` chained compressions of fresh 512-bit witnessed blocks.
pub fn synthesize<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    blocks: usize,
    rng: &mut dyn RngCore,
) -> Result<(), SynthesisError> {
    let mut state: Vec<UInt32> = IV.iter().map(|&v| UInt32::constant(v)).collect();
    for b in 0..blocks {
        let mut cs = cs.namespace(|| format!("block {b}"));
        let mut bits = Vec::with_capacity(512);
        for i in 0..512 {
            let bit = rng.next_u32() & 1 == 1;
            bits.push(Boolean::from(AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(bit))?));
        }
        state = sha256_compression_function(cs.namespace(|| "compress"), &bits, &state)?;
    }
    Ok(())
}

/// Constraints of `blocks` chained blocks (512 bit allocations + one compression each).
/// The first block compresses against the constant IV and is cheaper than the chained
/// ones, so both are measured once with a counting constraint system.
pub fn cost(blocks: usize) -> usize {
    static COSTS: OnceLock<(usize, usize)> = OnceLock::new();
    let (first, chained) = *COSTS.get_or_init(|| {
        let count = |k: usize| {
            let mut cs = super::shape::ShapeCs::default();
            let mut rng = rand_chacha::ChaCha8Rng::from_seed_u64(0);
            synthesize(&mut cs, k, &mut rng).map(|_| cs.constraints as usize)
        };
        match (count(1), count(2)) {
            (Ok(one), Ok(two)) => (one, two - one),
            // Counting cannot fail (no values are needed); keep a safe answer regardless.
            _ => (usize::MAX / 4, usize::MAX / 4),
        }
    });
    if blocks == 0 {
        0
    } else {
        first.saturating_add(chained.saturating_mul(blocks - 1))
    }
}

/// Most blocks whose cost fits in `budget` constraints.
pub fn blocks_within(budget: usize) -> usize {
    let mut k = 0;
    while cost(k + 1) <= budget {
        k += 1;
    }
    k
}

trait FromSeedU64 {
    fn from_seed_u64(seed: u64) -> Self;
}
impl FromSeedU64 for rand_chacha::ChaCha8Rng {
    fn from_seed_u64(seed: u64) -> Self {
        <Self as rand::SeedableRng>::seed_from_u64(seed)
    }
}

