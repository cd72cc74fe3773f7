//! A small, fast, non-cryptographic hasher (the Fx hash of rustc) for the readers' and
//! analyses' hot maps, whose keys are short ids and job strings: SipHash, the std default,
//! costs more than the rest of the work per event. Not DoS-resistant — a hostile log can
//! at worst make the analysis slower.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(v as u64)
    }
    #[inline]
    fn write_u16(&mut self, v: u16) {
        self.add(v as u64)
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64)
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v)
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64)
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_works_with_strings_and_tuples() {
        let mut m: FxHashMap<(u32, Option<u32>), u32> = FxHashMap::default();
        m.insert((1, Some(2)), 3);
        m.insert((1, None), 4);
        assert_eq!(m.get(&(1, Some(2))), Some(&3));
        assert_eq!(m.get(&(1, None)), Some(&4));
        let mut s: FxHashMap<&str, u32> = FxHashMap::default();
        s.insert("e88b7591-31db-6e32-d8dc-b35f94c662cd", 1);
        s.insert("e88b7591-31db-6e32-d8dc-b35f94c662ce", 2);
        assert_eq!(s["e88b7591-31db-6e32-d8dc-b35f94c662ce"], 2);
    }
}
