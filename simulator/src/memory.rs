//! The simulator's `[circuit]`: the shape of one partition, from which the **working set**
//! that budget-gated admission reserves before a synthesis is computed. The sizes
//! (`memory.total_budget`, `safety_margin`) and the formula itself are the shared ones of
//! [`timeline::bytes`] (the engine reserves by the same formula; issue 16); this module only
//! maps `[circuit]` onto it.
//!
//! Without query sizes the simulator uses the formula's a/b/c, assignment and density terms
//! (what the prover's `ProvingAssignment` holds at its peak, a/b/c resized to the domain):
//! for n = 2^27 (aux = n, 1 input) 16.03 GiB. With the MSM query sizes (`a_points`,
//! `b_points`, `l_points`) it reserves as the engine does: the B query's MSM preparation
//! with each partition, and a GPU call's memory (A/L preparation, gathered bases) once per
//! GPU worker, resident ([`crate::Config::call_ram_gib`]). Runs 52–53 showed why the same
//! arguments matter: the engine reserved 37.6 GiB per 2^27 partition, the model 16.0, and
//! the predictions missed by 43–60 % (reports/gpu/2026-12-01-run52-53.md).
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
    /// Points of the A query (the engine's parameter file's `a`); with `b_points` and
    /// `l_points` the working set includes the MSM terms. Any of the three given, the
    /// absent ones are: A = B = inputs + aux, L = aux (dense queries: an upper bound).
    /// The porep-like circuit: A ≈ 0.85 · aux, B ≈ 0.254 · aux, L = aux (`proofscope
    /// circuit` prints the densities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_points: Option<u64>,
    /// Points of the B query (G1; as many in G2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_points: Option<u64>,
    /// Points of the L query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l_points: Option<u64>,
}

impl Circuit {
    /// A circuit of `constraints`, everything else by default.
    pub fn of(constraints: u64) -> Circuit {
        Circuit { constraints, aux: None, inputs: None, a_points: None, b_points: None, l_points: None }
    }
}

/// The working set of one partition of `c` ([`timeline::bytes::working_set`], with the MSM
/// terms when `c` gives a query size): n = the domain, the constraint count rounded up to a
/// power of two; aux absent = as many as constraints; inputs absent = 1.
pub fn working_set(c: &Circuit) -> WorkingSet {
    let domain = c.constraints.checked_next_power_of_two().unwrap_or(u64::MAX);
    let (inputs, aux) = (c.inputs.unwrap_or(1), c.aux.unwrap_or(c.constraints));
    let queries = (c.a_points.is_some() || c.b_points.is_some() || c.l_points.is_some()).then(|| timeline::bytes::QueryPoints {
        a: c.a_points.unwrap_or(inputs.saturating_add(aux)),
        b: c.b_points.unwrap_or(inputs.saturating_add(aux)),
        l: c.l_points.unwrap_or(aux),
    });
    timeline::bytes::working_set(domain, inputs, aux, queries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_set_of_a_circuit_by_hand() {
        // 2^27 constraints, as many aux variables, 1 input: a/b/c 12 GiB, assignment
        // (2^27 + 1)·32 B = 4 GiB + 32 B, densities 2·2^21 words + 1 word.
        let w = working_set(&Circuit::of(1 << 27));
        assert_eq!((w.abc, w.assignment, w.density), (12 << 30, (4 << 30) + 32, 2 * (1 << 21) * 8 + 8));
        assert_eq!(w.total(), w.abc + w.assignment + w.density, "no MSM terms");
        // The PoRep partition of the reference (130 278 869 constraints, 130 169 893 aux, 328
        // inputs): the domain is 2^27, so a/b/c = 3·2^27·32 B = 12 GiB (the vectors are
        // resized to it for the NTTs; this was 3·130 278 869·32 B = 11.648 GiB before the
        // engine's and the simulator's formulas were made one).
        let w = working_set(&Circuit { aux: Some(130_169_893), inputs: Some(328), ..Circuit::of(130_278_869) });
        assert_eq!(w.abc, 12 << 30);
        assert!((w.assignment as f64 / GIB - 3.880).abs() < 0.001);
    }

    #[test]
    fn with_query_sizes_the_working_set_is_the_engines() {
        // The porep-like 2^27 partition of runs 52-53: A 0.85 n, B 0.254 n, L n (n = 2^27,
        // 1 input). Per partition: a/b/c 12 GiB + assignment 4 GiB + densities 32 MiB + B
        // preparation 0.254 n · 36 B; per GPU call: (A + L) · 36 B + the bases max(96 · n,
        // 192 · B) = 96 n.
        let n: u64 = 1 << 27;
        let (a, b) = (n * 85 / 100, n * 254 / 1000);
        let c = Circuit { a_points: Some(a), b_points: Some(b), l_points: Some(n), ..Circuit::of(n) };
        let w = working_set(&c);
        assert_eq!(w.msm_prep_b, b * 36);
        assert_eq!(w.call(), (a + n) * 36 + 96 * n);
        assert_eq!(w.partition(), w.abc + w.assignment + w.density + b * 36);
        // 17.2 GiB reserved by a synthesis, 20.3 GiB by a GPU worker; 37.5 GiB in all, as the
        // engine's `ram_wait` args said (40 366 090 312 B with the real query sizes).
        assert!((w.partition() as f64 / GIB - 17.17).abs() < 0.01, "{}", w.partition() as f64 / GIB);
        assert!((w.call() as f64 / GIB - 20.325).abs() < 0.01, "{}", w.call() as f64 / GIB);
        // One size given: the others default to dense queries.
        let d = working_set(&Circuit { l_points: Some(n), ..Circuit::of(n) });
        assert_eq!(d.msm_prep_b, (n + 1) * 36);
        // No size given: no MSM terms, as before.
        assert_eq!(working_set(&Circuit::of(n)).call(), 0);
    }
}
