//! Proof types: one daemon log mixes them (PoRep C2 and SnapDeals in partitions, the PoSt
//! types and PSProve as whole proofs), and a headline averaged over a 40-second PoRep and a
//! 1-second WinningPoSt means nothing. Every job gets a type, decided in this order:
//!
//! 1. the detail's `kind=<type>` (cuzk writes it on a whole-proof job's `SYNTH_START`; any
//!    span of the job carrying a `kind` argument counts), verbatim;
//! 2. else, for a partitioned job, its partition count through [`PARTITION_TYPES`]:
//!    10 → `porep-c2`, 16 → `snap-deals` (Filecoin's 32 and 64 GiB sectors). The count is
//!    the one the log declares per proof where it declares one (our prover's meta
//!    `config.partitions`), so that a proof cut short by the end of the log (a run stopped
//!    with syntheses of its next proof waiting) keeps its type; otherwise the largest
//!    `partition=` + 1;
//! 3. else [`UNKNOWN`] (a whole-proof job without `kind=`, or a partition count not in the
//!    table — also a partitioned job of a log that declares no count, cut short by the start
//!    or end of the log).
//!
//! The summary gives the headline (s/proof, steady state, latency, verdict) per type;
//! device utilisation and idle gaps stay per device over all types.

/// The type of a job nothing identifies.
pub const UNKNOWN: &str = "unknown";

/// Partition count → proof type, for jobs without `kind=`.
pub const PARTITION_TYPES: &[(u32, &str)] = &[(10, "porep-c2"), (16, "snap-deals")];

/// The span argument naming a job's proof type.
pub const KIND_ARG: &str = "kind";

/// How a type was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Kind,
    Partitions,
    Unknown,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Kind => "kind",
            Source::Partitions => "partition_count",
            Source::Unknown => "unknown",
        }
    }
}

/// The type of one job from what its spans said: its `kind=` (if any) and its largest
/// partition number (if any); `declared` is the partitions per proof the log's meta states
/// (used when the job's partitions do not exceed it).
pub fn classify(kind: Option<&str>, max_partition: Option<u32>, declared: Option<u32>) -> (String, Source) {
    if let Some(k) = kind.map(str::trim).filter(|k| !k.is_empty()) {
        return (k.to_string(), Source::Kind);
    }
    if let Some(p) = max_partition {
        let seen = p.saturating_add(1);
        let n = declared.filter(|&d| d >= seen).unwrap_or(seen);
        if let Some((_, t)) = PARTITION_TYPES.iter().find(|(c, _)| *c == n) {
            return (t.to_string(), Source::Partitions);
        }
    }
    (UNKNOWN.to_string(), Source::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_wins_then_partitions_then_unknown() {
        assert_eq!(classify(Some("winning-post"), Some(9), None), ("winning-post".into(), Source::Kind));
        assert_eq!(classify(None, Some(9), None), ("porep-c2".into(), Source::Partitions));
        assert_eq!(classify(None, Some(15), None), ("snap-deals".into(), Source::Partitions));
        assert_eq!(classify(None, Some(3), None), (UNKNOWN.into(), Source::Unknown));
        assert_eq!(classify(Some(" "), None, None), (UNKNOWN.into(), Source::Unknown));
    }

    #[test]
    fn a_proof_cut_short_keeps_the_type_its_log_declares() {
        // Run 61: the 4th proof had partitions 0..=6 waiting for RAM when the run stopped.
        assert_eq!(classify(None, Some(6), Some(10)), ("porep-c2".into(), Source::Partitions));
        assert_eq!(classify(None, Some(6), None), (UNKNOWN.into(), Source::Unknown));
        // A job with more partitions than declared is counted by what it has.
        assert_eq!(classify(None, Some(15), Some(10)), ("snap-deals".into(), Source::Partitions));
        // kind= still wins.
        assert_eq!(classify(Some("wdpost"), Some(6), Some(10)), ("wdpost".into(), Source::Kind));
    }
}
