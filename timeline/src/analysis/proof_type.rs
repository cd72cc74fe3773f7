//! Proof types: one daemon log mixes them (PoRep C2 and SnapDeals in partitions, the PoSt
//! types and PSProve as whole proofs), and a headline averaged over a 40-second PoRep and a
//! 1-second WinningPoSt means nothing. Every job gets a type, decided in this order:
//!
//! 1. the detail's `kind=<type>` (cuzk writes it on a whole-proof job's `SYNTH_START`; any
//!    span of the job carrying a `kind` argument counts), verbatim;
//! 2. else, for a partitioned job, its partition count (the largest `partition=` + 1)
//!    through [`PARTITION_TYPES`]: 10 → `porep-c2`, 16 → `snap-deals` (Filecoin's 32 and
//!    64 GiB sectors);
//! 3. else [`UNKNOWN`] (a whole-proof job without `kind=`, or a partition count not in the
//!    table — also a partitioned job cut short by the start or end of the log).
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
/// partition number (if any).
pub fn classify(kind: Option<&str>, max_partition: Option<u32>) -> (String, Source) {
    if let Some(k) = kind.map(str::trim).filter(|k| !k.is_empty()) {
        return (k.to_string(), Source::Kind);
    }
    if let Some(p) = max_partition {
        let n = p.saturating_add(1);
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
        assert_eq!(classify(Some("winning-post"), Some(9)), ("winning-post".into(), Source::Kind));
        assert_eq!(classify(None, Some(9)), ("porep-c2".into(), Source::Partitions));
        assert_eq!(classify(None, Some(15)), ("snap-deals".into(), Source::Partitions));
        assert_eq!(classify(None, Some(3)), (UNKNOWN.into(), Source::Unknown));
        assert_eq!(classify(Some(" "), None), (UNKNOWN.into(), Source::Unknown));
    }
}
