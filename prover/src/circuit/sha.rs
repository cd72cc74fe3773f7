//! The SHA-256 section of the PoRep-like circuit: a chain of compressions (bellpepper's
//! gadget) over witnessed message blocks, as PoRep's labelling hashes are. Message bits
//! come from the seeded RNG, so the witness is deterministic.
//!
//! For the parallel witness ([`crate::pce::pieces`]) every block is a piece: [`Plan::draw`]
//! draws the message bits of every block (the RNG's sequence, as [`synthesize`] draws them)
//! and runs the chain natively ([`compress`], a few hundred nanoseconds a block), so that
//! [`Plan::block`] can run the gadget of any block on its own, from the eight words of the
//! state it chains from: its variables are the previous block's output bits, whose places
//! among a block's allocations are measured once ([`Layout`]), so the block's rows name the
//! same variables as in the sequential run (what the extraction in pieces needs).

use std::sync::OnceLock;

use bellpepper::gadgets::sha256::sha256_compression_function;
use bellpepper::gadgets::uint32::UInt32;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar;
use rand::RngCore;

const IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// Bits of a message block.
const BITS: usize = 512;

/// Synthesise `blocks` chained compressions of fresh 512-bit witnessed blocks.
pub fn synthesize<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    blocks: usize,
    rng: &mut dyn RngCore,
) -> Result<(), SynthesisError> {
    let mut state: Vec<UInt32> = IV.iter().map(|&v| UInt32::constant(v)).collect();
    for b in 0..blocks {
        let message = draw_message(rng);
        state = block(&mut cs.namespace(|| format!("block {b}")), &message, &state)?;
    }
    Ok(())
}

/// The next block's message: 512 RNG draws, one bit each (the low bit), packed as the
/// gadget reads them (bit `i` is bit `31 - i % 32` of word `i / 32`: big-endian words).
fn draw_message(rng: &mut dyn RngCore) -> [u32; 16] {
    let mut m = [0u32; 16];
    for i in 0..BITS {
        m[i / 32] |= (rng.next_u32() & 1) << (31 - i % 32);
    }
    m
}

/// One block: its 512 message bits allocated, then the compression of `state` by them;
/// returns the new state.
fn block<CS: ConstraintSystem<Scalar>>(cs: &mut CS, message: &[u32; 16], state: &[UInt32]) -> Result<Vec<UInt32>, SynthesisError> {
    let mut bits = Vec::with_capacity(BITS);
    for i in 0..BITS {
        let bit = (message[i / 32] >> (31 - i % 32)) & 1 == 1;
        bits.push(Boolean::from(AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(bit))?));
    }
    sha256_compression_function(cs.namespace(|| "compress"), &bits, state)
}

/// The section cut into one piece per block: every block's message and the state it
/// compresses (the chain run natively).
pub struct Plan {
    messages: Vec<[u32; 16]>,
    /// `states[b]`: the state block `b` compresses (`states[0]` is the IV), `states[b + 1]`
    /// what it makes.
    states: Vec<[u32; 8]>,
}

impl Plan {
    /// Draw `blocks` blocks' messages from `rng` (leaving it where [`synthesize`] leaves it)
    /// and chain their compressions.
    pub fn draw(blocks: usize, rng: &mut dyn RngCore) -> Plan {
        let mut messages = Vec::with_capacity(blocks);
        let mut states = Vec::with_capacity(blocks + 1);
        let mut state = IV;
        states.push(state);
        for _ in 0..blocks {
            let m = draw_message(rng);
            compress(&mut state, &m);
            messages.push(m);
            states.push(state);
        }
        Plan { messages, states }
    }

    pub fn blocks(&self) -> usize {
        self.messages.len()
    }

    /// Aux values block `b` allocates (the first block, against the constant IV, fewer).
    pub fn aux(&self, b: usize) -> usize {
        let c = costs();
        if b == 0 {
            c.first_aux
        } else {
            c.chained_aux
        }
    }

    /// Run block `b` of the section into `cs`, whose first aux variable is `first` (the
    /// witness index of the block's first allocation), allocating and enforcing what
    /// [`synthesize`] does for it. The state it chains from is allocated in a scratch system
    /// ([`StateCs`]) that hands out the previous block's output variables, with their
    /// values: the block's rows name them as the sequential run's do.
    ///
    /// Fails when the gadget's new state is not the native chain's (a bug of [`compress`]),
    /// or its output bits are not where the [`Layout`] says (a bug of the plan).
    pub fn block<CS: ConstraintSystem<Scalar>>(&self, cs: &mut CS, b: usize, first: usize) -> Result<(), SynthesisError> {
        let plan_bug = |what: String| SynthesisError::IncompatibleLengthVector(format!("SHA-256 block {b}: {what}"));
        let layout = layout()?;
        let state: Vec<UInt32> = if b == 0 {
            IV.iter().map(|&v| UInt32::constant(v)).collect()
        } else {
            let prev = first.checked_sub(self.aux(b - 1)).ok_or_else(|| plan_bug(format!("starts at aux {first}, before the end of the previous block")))?;
            let rel = if b == 1 { &layout.first_out } else { &layout.chained_out };
            let mut scratch = StateCs { vars: rel.iter().map(|r| prev + r).collect(), next: 0 };
            self.states[b].iter().map(|&v| UInt32::alloc(&mut scratch, Some(v))).collect::<Result<_, _>>()?
        };
        let made = block(&mut cs.namespace(|| format!("block {b}")), &self.messages[b], &state)?;
        let rel = if b == 0 { &layout.first_out } else { &layout.chained_out };
        let vars = out_vars(&made);
        if vars.len() != rel.len() || vars.iter().zip(rel.iter()).any(|(v, r)| *v != Some(first + r)) {
            return Err(plan_bug("its output bits are not where the layout says".into()));
        }
        let made: Vec<Option<u32>> = made.into_iter().map(|w| w.into_bits().iter().enumerate().try_fold(0u32, |acc, (i, bit)| Some(acc | u32::from(bit.get_value()?) << i))).collect();
        let want: Vec<Option<u32>> = self.states[b + 1].iter().map(|&w| Some(w)).collect();
        if made != want {
            return Err(plan_bug("the gadget's state is not the native chain's".into()));
        }
        Ok(())
    }
}

/// The aux index of every output bit of a block's state (words in order, bits little-endian
/// as [`UInt32::alloc`] allocates them); `None` for a bit that is not an allocated one.
fn out_vars(state: &[UInt32]) -> Vec<Option<usize>> {
    state
        .iter()
        .flat_map(|w| w.clone().into_bits())
        .map(|bit| match bit {
            Boolean::Is(b) => match b.get_variable().get_unchecked() {
                Index::Aux(i) => Some(i),
                Index::Input(_) => None,
            },
            _ => None,
        })
        .collect()
}

/// Where a block's output bits are among its allocations (offsets from its first aux
/// value): the first block's (against the constant IV) and a chained one's. The gadget's
/// structure does not depend on the values, so every chained block has the same.
struct Layout {
    first_out: Vec<usize>,
    chained_out: Vec<usize>,
}

/// The [`Layout`], measured once with a counting constraint system over two blocks.
fn layout() -> Result<&'static Layout, SynthesisError> {
    static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();
    LAYOUT
        .get_or_init(|| {
            let mut cs = super::shape::ShapeCs::default();
            let mut rng = rand_chacha::ChaCha8Rng::from_seed_u64(0);
            let iv: Vec<UInt32> = IV.iter().map(|&v| UInt32::constant(v)).collect();
            let s1 = block(&mut cs, &draw_message(&mut rng), &iv).ok()?;
            let base = cs.aux;
            let s2 = block(&mut cs, &draw_message(&mut rng), &s1).ok()?;
            let first_out = out_vars(&s1).into_iter().collect::<Option<Vec<usize>>>()?;
            let chained_out = out_vars(&s2).into_iter().map(|v| v?.checked_sub(base)).collect::<Option<Vec<usize>>>()?;
            Some(Layout { first_out, chained_out })
        })
        .as_ref()
        .ok_or_else(|| SynthesisError::IncompatibleLengthVector("SHA-256 blocks: a block's output bits are not all allocated bits".into()))
}

/// The scratch system a block's input state is allocated in: each allocation is the next of
/// `vars` (the previous block's output bits, allocated in the piece before), with the value
/// given; its constraints (booleanity, enforced by the previous block already) are dropped.
struct StateCs {
    vars: Vec<usize>,
    next: usize,
}

impl ConstraintSystem<Scalar> for StateCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.vars.get(self.next).ok_or_else(|| SynthesisError::IncompatibleLengthVector("SHA-256 state: more bits than the previous block's output".into()))?;
        self.next += 1;
        Ok(Variable::new_unchecked(Index::Aux(*v)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Err(SynthesisError::IncompatibleLengthVector("SHA-256 state: not an input".into()))
    }

    crate::enforce_nothing!();

    crate::flat_namespaces!();
}

/// SHA-256's round constants.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// SHA-256's compression function (FIPS 180-4, 6.2.2) on native words: what the gadget
/// computes, for the chain of [`Plan::draw`].
pub fn compress(state: &mut [u32; 8], message: &[u32; 16]) {
    let mut w = [0u32; 64];
    w[..16].copy_from_slice(message);
    for i in 16..64 {
        let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
        let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for i in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// What blocks cost: constraints and aux values of the first block (against the constant
/// IV, cheaper) and of every chained one, measured once with a counting constraint system.
#[derive(Clone, Copy)]
struct Costs {
    first: usize,
    chained: usize,
    first_aux: usize,
    chained_aux: usize,
}

fn costs() -> Costs {
    static COSTS: OnceLock<Costs> = OnceLock::new();
    *COSTS.get_or_init(|| {
        let count = |k: usize| {
            let mut cs = super::shape::ShapeCs::default();
            let mut rng = rand_chacha::ChaCha8Rng::from_seed_u64(0);
            synthesize(&mut cs, k, &mut rng).map(|_| (cs.constraints as usize, cs.aux))
        };
        match (count(1), count(2)) {
            (Ok(one), Ok(two)) => Costs { first: one.0, chained: two.0 - one.0, first_aux: one.1, chained_aux: two.1 - one.1 },
            // Counting cannot fail (no values are needed); keep a safe answer regardless.
            _ => Costs { first: usize::MAX / 4, chained: usize::MAX / 4, first_aux: usize::MAX / 4, chained_aux: usize::MAX / 4 },
        }
    })
}

/// Constraints of `blocks` chained blocks (512 bit allocations + one compression each).
/// The first block compresses against the constant IV and is cheaper than the chained
/// ones, so both are measured once with a counting constraint system.
pub fn cost(blocks: usize) -> usize {
    let c = costs();
    if blocks == 0 {
        0
    } else {
        c.first.saturating_add(c.chained.saturating_mul(blocks - 1))
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

