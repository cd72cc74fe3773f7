//! Making work for the engine: batches of benchmark-circuit proofs (J proofs × K partitions,
//! each partition its own witness seed, as PoRep partitions prove different challenges),
//! collecting their results, and the Ctrl-C flag a front end polls.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::{Engine, Job, JobResult};
use crate::circuit::Family;

/// Witness seed of partition `p` of proof `j`.
pub fn partition_seed(base: u64, j: u32, p: u32) -> u64 {
    base ^ ((j as u64) << 32 | p as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Job id of proof `j` (stable, so timelines of two runs line up).
pub fn job_id(j: u32) -> String {
    format!("proof-{j:04}")
}

/// `proofs` jobs of `partitions` PoRep-like partitions of `constraints` constraints.
pub fn porep_jobs(proofs: u32, partitions: u32, constraints: u64, seed: u64) -> Vec<Job> {
    bench_jobs(Family::PorepLike, proofs, partitions, constraints, seed)
}

/// `proofs` jobs of `partitions` circuits of `family` with `constraints` constraints.
pub fn bench_jobs(family: Family, proofs: u32, partitions: u32, constraints: u64, seed: u64) -> Vec<Job> {
    (0..proofs)
        .map(|j| Job {
            id: job_id(j),
            partitions: (0..partitions)
                .map(|p| Box::new(family.circuit(constraints, partition_seed(seed, j, p))) as Box<dyn super::PartitionCircuit>)
                .collect(),
        })
        .collect()
}

impl Engine {
    /// Wait for `n` job results (in completion order); `None` on timeout.
    pub fn collect(&self, n: usize, timeout: Duration) -> Option<Vec<JobResult>> {
        let deadline = std::time::Instant::now() + timeout;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let left = deadline.checked_duration_since(std::time::Instant::now())?;
            out.push(self.results().recv_timeout(left).ok()?);
        }
        Some(out)
    }
}

/// A flag set by SIGINT/SIGTERM (Ctrl-C): the front end polls it and aborts the engine
/// with the timeline flushed and open spans marked.
pub fn interrupt_flag() -> std::io::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, flag.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, flag.clone())?;
    Ok(flag)
}
