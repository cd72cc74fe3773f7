//! The simulator's `[circuit]`: the shape of one partition, from which the **working set**
//! that budget-gated admission reserves before a synthesis is computed. The sizes
//! (`memory.total_budget`, `safety_margin`) and the formula itself are the shared ones of
//! [`timeline::bytes`] (the engine reserves by the same formula; issue 16); this module only
//! maps `[circuit]` onto it.
//!
//! The simulator uses the formula's a/b/c, assignment and density terms (exactly what the
//! prover's `ProvingAssignment` holds at its peak, a/b/c resized to the domain) and leaves
//! out the engine's MSM-preparation terms: `[circuit]` gives no query sizes, and the MSM
//! preparation overlaps the GPU call, whose memory `[memory]` models apart. For n = 2^27
//! (aux = n, 1 input) it is 16.03 GiB: 12 GiB a/b/c + 4 GiB assignment + 32 MiB densities.
//! The reference daemon's own estimate for its PoRep partition is 12.5 + 1.1 GiB (its aux
//! assignment is stored more compactly), so a config for the reference box keeps
//! `memory.partition_gib` explicit rather than this formula.

use serde::{Deserialize, Serialize};

pub use timeline::bytes::{Budget, ByteSize, WorkingSet, GIB};

/// The circuit of one partition: what the working set and the per-partition costs scale with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Circuit {
    /// Constraints per partition, input constraints included (2^27 = 134217728 at full scale).
    pub constraints: u64,
    /// Aux (private) variables per partition; absent = as many as constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aux: Option<u64>,
    /// Inputs, the constant ONE included; absent = 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<u64>,
}

/// The working set of one partition of `c` ([`timeline::bytes::working_set`] without the
/// MSM terms): n = the domain, the constraint count rounded up to a power of two; aux
/// absent = as many as constraints; inputs absent = 1.
pub fn working_set(c: &Circuit) -> WorkingSet {
    let domain = c.constraints.checked_next_power_of_two().unwrap_or(u64::MAX);
    timeline::bytes::working_set(domain, c.inputs.unwrap_or(1), c.aux.unwrap_or(c.constraints), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_set_of_a_circuit_by_hand() {
        // 2^27 constraints, as many aux variables, 1 input: a/b/c 12 GiB, assignment
        // (2^27 + 1)·32 B = 4 GiB + 32 B, densities 2·2^21 words + 1 word.
        let w = working_set(&Circuit { constraints: 1 << 27, aux: None, inputs: None });
        assert_eq!((w.abc, w.assignment, w.density), (12 << 30, (4 << 30) + 32, 2 * (1 << 21) * 8 + 8));
        assert_eq!(w.total(), w.abc + w.assignment + w.density, "no MSM terms");
        // The PoRep partition of the reference (130 278 869 constraints, 130 169 893 aux, 328
        // inputs): the domain is 2^27, so a/b/c = 3·2^27·32 B = 12 GiB (the vectors are
        // resized to it for the NTTs; this was 3·130 278 869·32 B = 11.648 GiB before the
        // engine's and the simulator's formulas were made one).
        let w = working_set(&Circuit { constraints: 130_278_869, aux: Some(130_169_893), inputs: Some(328) });
        assert_eq!(w.abc, 12 << 30);
        assert!((w.assignment as f64 / GIB - 3.880).abs() < 0.001);
    }
}
