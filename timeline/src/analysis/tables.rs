//! Per-partition and per-job tables: when each partition was synthesised, queued, picked
//! up by a GPU worker and proven, with the waits between, the GPU wall time and (where the
//! producer reports kernel spans) the true device time. Times are milliseconds since the
//! run epoch; durations are milliseconds too.
//!
//! [`Index`] is the shared groundwork: it interns jobs, groups spans by (job, partition)
//! and is reused by the gap, transition, throughput and verdict analyses.

use serde::{Deserialize, Serialize};

use super::utilization::merge_intervals;
use super::{diff_ms, ms, RunView};
use crate::event::{Run, Span, SpanKind};
use rustc_hash::FxHashMap;

/// What is known of one (job, partition), in ns. Built by [`Index::build`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartInfo {
    /// Index into [`Index::jobs`].
    pub job: u32,
    pub partition: Option<u32>,
    pub first_start: u64,
    /// Latest end of a closed span of this partition.
    pub last_end: Option<u64>,
    pub open_spans: u32,
    /// Of `open_spans`: those of a partition that reached its end (its `gpu` call, or its
    /// `finalize` where it has one, ended): their end event was lost, the run went on.
    /// The others were still running when the log ended.
    pub unmatched_spans: u32,
    /// Some `finalize` span of this partition (open or closed), and whether one ended.
    pub has_finalize: bool,
    pub finalize_closed: bool,
    pub synth_start: Option<u64>,
    pub synth_end: Option<u64>,
    pub synth_worker: Option<u32>,
    /// GPU_QUEUE: start of the `gpu_queue` span.
    pub queued: Option<u64>,
    /// GPU_PICKUP: end of `gpu_queue` or start of `gpu_pickup`.
    pub picked: Option<u64>,
    /// GPU_START (start of the first `gpu` span).
    pub gpu_start: Option<u64>,
    /// GPU_END (end of the last closed `gpu` span).
    pub gpu_end: Option<u64>,
    pub gpu_open: bool,
    pub device: Option<u32>,
    pub worker: Option<u32>,
    /// What the producer reports of the partition's device and finalisation work (our
    /// engine does; a daemon's log does not): kept apart, allocated only where there is
    /// some — a cuzk log's partition is 88 bytes smaller (96 less 8 for the pointer), ~15 MB
    /// in each index of a 1M-event log.
    pub work: Option<Box<PartWork>>,
    /// A `failed` span: the partition failed for good.
    pub failed: bool,
}

/// The figures of a partition's device and finalisation work, in ns ([`PartInfo::work`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PartWork {
    /// Union of the partition's device-work spans.
    pub kernel_ns: Option<u64>,
    /// Union of its compute kernels alone (device work less copies and memsets): what the
    /// device must spend on it even where its copies overlap another partition's kernels.
    pub compute_ns: Option<u64>,
    pub prep_msm_ns: Option<u64>,
    pub cpu_msm_b_g2_ns: Option<u64>,
    pub finalize_ns: Option<u64>,
    pub lock_wait_ns: Option<u64>,
}

impl PartInfo {
    /// Its device and finalisation work (all `None` where none was reported).
    pub fn work(&self) -> PartWork {
        self.work.as_deref().copied().unwrap_or_default()
    }
    fn work_mut(&mut self) -> &mut PartWork {
        self.work.get_or_insert_with(Default::default)
    }
    /// When the partition became available to the GPU: queued, else synthesis end.
    pub fn available(&self) -> Option<u64> {
        self.queued.or(self.synth_end)
    }
    /// When a GPU worker took it: pickup, else the start of its GPU call.
    pub fn taken(&self) -> Option<u64> {
        self.picked.or(self.gpu_start)
    }
    /// The partition's last stage ended: its `finalize` where it has one, else its `gpu`
    /// call (or, without `gpu` spans, its device work).
    pub fn reached_end(&self) -> bool {
        if self.has_finalize {
            self.finalize_closed
        } else {
            self.gpu_end.is_some() || self.work().kernel_ns.is_some()
        }
    }
    /// Open spans still running when the log ended (not a lost end event).
    pub fn unfinished_spans(&self) -> u32 {
        self.open_spans - self.unmatched_spans
    }
    /// The GPU call ended (an open `gpu` span of a finished partition lost its end).
    pub fn gpu_done(&self) -> bool {
        self.gpu_end.is_some() && (!self.gpu_open || self.reached_end())
    }
}

/// Key of a partition: (job index, partition number).
pub type PartKey = (u32, Option<u32>);

/// Spans grouped by job and partition.
#[derive(Clone, Debug, Default)]
pub struct Index<'a> {
    /// Job ids in order of their first event.
    pub jobs: Vec<&'a str>,
    /// One entry per (job, partition) that has spans, in order of first event.
    pub parts: Vec<PartInfo>,
    /// For each span of the run (same index), the partition it belongs to (`None` for
    /// spans without a job).
    pub part_of_span: Vec<Option<u32>>,
    pub(crate) lookup: FxHashMap<PartKey, u32>,
    /// Proof type of each job (index into [`Index::types`]; see [`super::proof_type`]).
    pub job_type: Vec<u32>,
    /// The proof types seen, in order of first job, with how each was decided.
    pub types: Vec<(String, super::proof_type::Source)>,
}

fn add(acc: &mut Option<u64>, v: u64) {
    *acc = Some(acc.unwrap_or(0).saturating_add(v));
}

/// What one span (closed, or open and still running) tells of its partition.
fn apply(pi: &mut PartInfo, s: &Span, p: u32, work: &mut Vec<(u32, u64, u64, bool)>) {
    pi.first_start = pi.first_start.min(s.start_ns);
    let dur = s.end_ns.map(|e| e.saturating_sub(s.start_ns));
    match &s.kind {
        SpanKind::Synthesis => {
            pi.synth_start = Some(pi.synth_start.map_or(s.start_ns, |v| v.min(s.start_ns)));
            if let Some(e) = s.end_ns {
                pi.synth_end = Some(pi.synth_end.map_or(e, |v| v.max(e)));
            }
            pi.synth_worker = pi.synth_worker.or(s.worker);
        }
        SpanKind::GpuQueue => {
            pi.queued = Some(pi.queued.map_or(s.start_ns, |v| v.min(s.start_ns)));
            if let Some(e) = s.end_ns {
                pi.picked = Some(pi.picked.map_or(e, |v| v.min(e)));
            }
        }
        SpanKind::GpuPickup => {
            pi.picked = Some(pi.picked.map_or(s.start_ns, |v| v.min(s.start_ns)));
        }
        SpanKind::Gpu => {
            pi.gpu_start = Some(pi.gpu_start.map_or(s.start_ns, |v| v.min(s.start_ns)));
            match s.end_ns {
                Some(e) => pi.gpu_end = Some(pi.gpu_end.map_or(e, |v| v.max(e))),
                None => pi.gpu_open = true,
            }
            pi.device = pi.device.or(Some(s.device_or_0()));
            pi.worker = pi.worker.or(s.worker);
        }
        SpanKind::Failed => pi.failed = true,
        SpanKind::PrepMsm => dur.into_iter().for_each(|d| add(&mut pi.work_mut().prep_msm_ns, d)),
        SpanKind::CpuMsmBG2 => dur.into_iter().for_each(|d| add(&mut pi.work_mut().cpu_msm_b_g2_ns, d)),
        SpanKind::Finalize => {
            pi.has_finalize = true;
            pi.finalize_closed |= s.end_ns.is_some();
            dur.into_iter().for_each(|d| add(&mut pi.work_mut().finalize_ns, d));
        }
        SpanKind::LockWait => dur.into_iter().for_each(|d| add(&mut pi.work_mut().lock_wait_ns, d)),
        k if k.is_device_work() => {
            if let Some((a, e)) = s.device_interval().filter(|_| !s.is_setup_work()) {
                work.push((p, a, e, k.is_kernel()));
            }
            pi.device = pi.device.or(Some(s.device_or_0()));
        }
        _ => {}
    }
}

impl<'a> Index<'a> {
    /// The index of a run or of a part of one ([`RunView`]: one proof type's spans);
    /// [`Index::part_of_span`] follows the view's order.
    pub fn build(run: impl Into<RunView<'a>>) -> Index<'a> {
        let run: RunView<'a> = run.into();
        let mut job_of: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut ix = Index { part_of_span: Vec::with_capacity(run.len()), ..Default::default() };
        let mut work: Vec<(u32, u64, u64, bool)> = Vec::new();
        let mut deferred: Vec<(u32, &'a Span)> = Vec::new();
        // Consecutive spans often share a job and partition: skip the lookups then.
        let mut last: Option<(&'a str, Option<u32>, u32, u32)> = None;
        // Per job: its `kind=` and its largest partition number (the proof type's evidence).
        let mut kind_of: Vec<Option<&'a str>> = Vec::new();
        let mut max_part: Vec<Option<u32>> = Vec::new();
        for s in run.spans() {
            let Some(job) = s.job.as_deref() else {
                ix.part_of_span.push(None);
                continue;
            };
            let (j, p) = match last {
                Some((lj, lp, j, p)) if lp == s.partition && lj == job => (j, p),
                _ => {
                    let j = match job_of.get(job) {
                        Some(&j) => j,
                        None => {
                            let j = ix.jobs.len() as u32;
                            job_of.insert(job, j);
                            ix.jobs.push(job);
                            kind_of.push(None);
                            max_part.push(None);
                            j
                        }
                    };
                    let key = (j, s.partition);
                    let n = ix.parts.len() as u32;
                    let p = *ix.lookup.entry(key).or_insert(n);
                    if p == n {
                        ix.parts.push(PartInfo { job: j, partition: s.partition, first_start: u64::MAX, ..Default::default() });
                    }
                    (j, p)
                }
            };
            last = Some((job, s.partition, j, p));
            ix.part_of_span.push(Some(p));
            if let Some(n) = s.partition {
                let m = &mut max_part[j as usize];
                *m = Some(m.map_or(n, |m| m.max(n)));
            }
            if !s.args.is_empty() && kind_of[j as usize].is_none() {
                kind_of[j as usize] = s.args.get(super::proof_type::KIND_ARG).and_then(|v| v.as_str());
            }
            let pi = &mut ix.parts[p as usize];
            match s.end_ns {
                Some(e) => {
                    pi.last_end = Some(pi.last_end.map_or(e, |l| l.max(e)));
                    apply(pi, s, p, &mut work);
                }
                None => {
                    // Decided once every closed span is in: a lost end, or still running.
                    pi.open_spans += 1;
                    if s.kind == SpanKind::Finalize {
                        pi.has_finalize = true;
                    }
                    deferred.push((p, s));
                }
            }
        }
        // Kernel time per partition: union of its device-work spans (one-time setup, the
        // parameters' upload, excluded: `Span::is_setup_work`).
        work.sort_unstable();
        let mut i = 0;
        while i < work.len() {
            let p = work[i].0;
            let mut j = i;
            while j < work.len() && work[j].0 == p {
                j += 1;
            }
            let union = |keep: &dyn Fn(bool) -> bool| {
                let merged = merge_intervals(work[i..j].iter().filter(|w| keep(w.3)).map(|&(_, s, e, _)| (s, e)).collect());
                merged.iter().fold(0u64, |a, &(s, e)| a.saturating_add(e - s))
            };
            let all = union(&|_| true);
            // Without copies the compute kernels are all of it: no second merge.
            let has_copies = work[i..j].iter().any(|w| !w.3);
            let w = ix.parts[p as usize].work_mut();
            w.kernel_ns = Some(all);
            w.compute_ns = Some(if has_copies { union(&|compute| compute) } else { all });
            i = j;
        }
        // Open spans: in a partition that reached its end, an end event was lost (the run
        // went on): counted apart, left out of every figure. Otherwise the span was still
        // running when the log ended: its start counts (queued, picked, on the GPU since).
        for (p, s) in deferred {
            let pi = &mut ix.parts[p as usize];
            if pi.reached_end() {
                pi.unmatched_spans += 1;
            } else {
                apply(pi, s, p, &mut Vec::new());
            }
        }
        for p in &mut ix.parts {
            if p.first_start == u64::MAX {
                p.first_start = 0;
            }
        }
        let declared = run.meta.config.partitions;
        for (k, m) in kind_of.into_iter().zip(max_part) {
            let (name, src) = super::proof_type::classify(k, m, declared);
            let t = match ix.types.iter().position(|(n, _)| *n == name) {
                Some(t) => t,
                None => {
                    ix.types.push((name, src));
                    ix.types.len() - 1
                }
            };
            ix.job_type.push(t as u32);
        }
        ix
    }

    /// The proof type of a job (by index).
    pub fn type_of_job(&self, job: u32) -> &str {
        self.job_type.get(job as usize).and_then(|&t| self.types.get(t as usize)).map_or(super::proof_type::UNKNOWN, |(n, _)| n.as_str())
    }

    pub fn part(&self, job: u32, partition: Option<u32>) -> Option<&PartInfo> {
        self.lookup.get(&(job, partition)).map(|&p| &self.parts[p as usize])
    }

    /// Earliest moment any partition became available to the GPU (queued / synthesised).
    pub fn first_available(&self) -> Option<u64> {
        self.parts.iter().filter_map(PartInfo::available).min()
    }
}

/// One row per (job, partition).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PartitionRow {
    pub job: String,
    pub partition: Option<u32>,
    /// Device of the GPU call.
    pub device: Option<u32>,
    /// GPU worker of the GPU call.
    pub worker: Option<u32>,
    /// Synthesis worker, when the producer names it.
    pub synth_worker: Option<u32>,
    pub synth_start_ms: Option<f64>,
    pub synth_end_ms: Option<f64>,
    pub synth_ms: Option<f64>,
    pub queued_ms: Option<f64>,
    pub picked_up_ms: Option<f64>,
    pub gpu_start_ms: Option<f64>,
    pub gpu_end_ms: Option<f64>,
    /// GPU_QUEUE → GPU_PICKUP.
    pub queue_wait_ms: Option<f64>,
    /// GPU_PICKUP → GPU_START.
    pub pickup_to_start_ms: Option<f64>,
    /// GPU_START → GPU_END (the whole prove call).
    pub gpu_wall_ms: Option<f64>,
    /// Union of the partition's device-work spans (true kernel + copy time), when reported.
    pub kernel_ms: Option<f64>,
    pub prep_msm_ms: Option<f64>,
    pub cpu_msm_b_g2_ms: Option<f64>,
    pub finalize_ms: Option<f64>,
    pub lock_wait_ms: Option<f64>,
    /// Some span of this partition never ended.
    pub open: bool,
}

/// One row per job (proof).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobRow {
    pub job: String,
    /// Proof type (see [`super::proof_type`]).
    #[serde(default)]
    pub proof_type: String,
    /// Partitions with any span.
    pub partitions: u32,
    /// Partitions whose GPU call ended.
    pub gpu_partitions: u32,
    /// First event of the job (normally its first SYNTH_START).
    pub first_start_ms: f64,
    pub first_synth_start_ms: Option<f64>,
    pub last_synth_end_ms: Option<f64>,
    pub first_gpu_start_ms: Option<f64>,
    pub last_gpu_end_ms: Option<f64>,
    /// Latest end of any of the job's spans, when the job is complete.
    pub completed_ms: Option<f64>,
    /// First event → completion (for a cuzk log: first SYNTH_START → last GPU_END).
    pub latency_s: Option<f64>,
    pub synth_total_ms: f64,
    pub gpu_wall_total_ms: f64,
    pub kernel_total_ms: Option<f64>,
    /// Spans of the job that never ended (still running when the log ended, or whose end
    /// was lost: `unmatched_spans`).
    pub open_spans: u32,
    /// Of `open_spans`: those of partitions that reached their end (a lost end event;
    /// left out of the analyses, not counted against the job).
    #[serde(default)]
    pub unmatched_spans: u32,
    /// Nothing left running (no open span but lost ends) and at least one finished GPU
    /// call (or finalisation).
    pub complete: bool,
}

/// Both tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tables {
    pub partitions: Vec<PartitionRow>,
    pub jobs: Vec<JobRow>,
}

fn opt_ms(v: Option<u64>) -> Option<f64> {
    v.map(ms)
}

fn delta(a: Option<u64>, b: Option<u64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(diff_ms(b, a)),
        _ => None,
    }
}

/// Facts of one job, in ns, aggregated from its partitions.
#[derive(Clone, Debug, Default)]
pub struct JobInfo {
    pub first_start: u64,
    pub first_synth_start: Option<u64>,
    pub last_synth_end: Option<u64>,
    pub first_gpu_start: Option<u64>,
    pub last_gpu_end: Option<u64>,
    pub last_end: Option<u64>,
    pub partitions: u32,
    pub gpu_partitions: u32,
    pub open_spans: u32,
    pub unmatched_spans: u32,
    pub synth_total: u64,
    pub gpu_total: u64,
    pub kernel_total: Option<u64>,
    pub finalized: bool,
    /// Partitions that failed for good (`failed` spans): the job is failed, not complete.
    pub failed_partitions: u32,
}

impl JobInfo {
    pub fn complete(&self) -> bool {
        self.failed_partitions == 0 && self.open_spans == self.unmatched_spans && (self.gpu_partitions > 0 || self.finalized)
    }
    pub fn failed(&self) -> bool {
        self.failed_partitions > 0
    }
    /// Completion time (ns) of a complete job.
    pub fn completed(&self) -> Option<u64> {
        if self.complete() {
            self.last_end
        } else {
            None
        }
    }
    /// Latency (ns) of a complete job: first synthesis start (or first event) → completion.
    pub fn latency(&self) -> Option<u64> {
        self.completed().map(|c| c.saturating_sub(self.first_synth_start.unwrap_or(self.first_start)))
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Per-job facts, indexed like [`Index::jobs`].
pub fn job_infos(ix: &Index<'_>) -> Vec<JobInfo> {
    let mut jobs: Vec<JobInfo> = vec![JobInfo { first_start: u64::MAX, ..Default::default() }; ix.jobs.len()];
    for p in &ix.parts {
        let j = &mut jobs[p.job as usize];
        j.first_start = j.first_start.min(p.first_start);
        j.first_synth_start = min_opt(j.first_synth_start, p.synth_start);
        j.last_synth_end = max_opt(j.last_synth_end, p.synth_end);
        j.first_gpu_start = min_opt(j.first_gpu_start, p.gpu_start);
        j.last_gpu_end = max_opt(j.last_gpu_end, p.gpu_end);
        j.last_end = max_opt(j.last_end, p.last_end);
        j.partitions += 1;
        if p.gpu_done() {
            j.gpu_partitions += 1;
        }
        if p.work().finalize_ns.is_some() {
            j.finalized = true;
        }
        if p.failed {
            j.failed_partitions += 1;
        }
        j.open_spans += p.open_spans;
        j.unmatched_spans += p.unmatched_spans;
        if let (Some(s), Some(e)) = (p.synth_start, p.synth_end) {
            j.synth_total = j.synth_total.saturating_add(e.saturating_sub(s));
        }
        if let (Some(s), Some(e)) = (p.gpu_start, p.gpu_end) {
            j.gpu_total = j.gpu_total.saturating_add(e.saturating_sub(s));
        }
        if let Some(k) = p.work().kernel_ns {
            j.kernel_total = Some(j.kernel_total.unwrap_or(0).saturating_add(k));
        }
    }
    jobs
}

/// Build both tables from an index.
pub fn from_index(ix: &Index<'_>) -> Tables {
    let mut order: Vec<u32> = (0..ix.parts.len() as u32).collect();
    order.sort_by_key(|&p| {
        let pi = &ix.parts[p as usize];
        (pi.job, pi.partition)
    });
    let partitions = order
        .iter()
        .map(|&p| {
            let pi = &ix.parts[p as usize];
            let gpu_end = if pi.gpu_done() { pi.gpu_end } else { None };
            let w = pi.work();
            PartitionRow {
                job: ix.jobs[pi.job as usize].to_string(),
                partition: pi.partition,
                device: pi.device,
                worker: pi.worker,
                synth_worker: pi.synth_worker,
                synth_start_ms: opt_ms(pi.synth_start),
                synth_end_ms: opt_ms(pi.synth_end),
                synth_ms: delta(pi.synth_start, pi.synth_end),
                queued_ms: opt_ms(pi.queued),
                picked_up_ms: opt_ms(pi.picked),
                gpu_start_ms: opt_ms(pi.gpu_start),
                gpu_end_ms: opt_ms(gpu_end),
                queue_wait_ms: delta(pi.queued, pi.picked),
                pickup_to_start_ms: delta(pi.picked, pi.gpu_start),
                gpu_wall_ms: delta(pi.gpu_start, gpu_end),
                kernel_ms: opt_ms(w.kernel_ns),
                prep_msm_ms: opt_ms(w.prep_msm_ns),
                cpu_msm_b_g2_ms: opt_ms(w.cpu_msm_b_g2_ns),
                finalize_ms: opt_ms(w.finalize_ns),
                lock_wait_ms: opt_ms(w.lock_wait_ns),
                open: pi.open_spans > 0,
            }
        })
        .collect();
    let jobs = job_infos(ix)
        .into_iter()
        .enumerate()
        .map(|(i, j)| JobRow {
            job: ix.jobs[i].to_string(),
            proof_type: ix.type_of_job(i as u32).to_string(),
            partitions: j.partitions,
            gpu_partitions: j.gpu_partitions,
            first_start_ms: ms(j.first_start),
            first_synth_start_ms: opt_ms(j.first_synth_start),
            last_synth_end_ms: opt_ms(j.last_synth_end),
            first_gpu_start_ms: opt_ms(j.first_gpu_start),
            last_gpu_end_ms: opt_ms(j.last_gpu_end),
            completed_ms: opt_ms(j.completed()),
            latency_s: j.latency().map(super::secs),
            synth_total_ms: ms(j.synth_total),
            gpu_wall_total_ms: ms(j.gpu_total),
            kernel_total_ms: opt_ms(j.kernel_total),
            open_spans: j.open_spans,
            unmatched_spans: j.unmatched_spans,
            complete: j.complete(),
        })
        .collect();
    Tables { partitions, jobs }
}

/// Per-partition and per-job tables of a run.
pub fn analyze(run: &Run) -> Tables {
    from_index(&Index::build(run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::read_str;

    #[test]
    fn one_partition_row() {
        let log = "\
TIMELINE,0,SYNTH_START,a,partition=0
TIMELINE,10,SYNTH_END,a,partition=0,synth_ms=10
TIMELINE,11,GPU_QUEUE,a,partition=0
TIMELINE,14,GPU_PICKUP,a,worker=1,partition=0
TIMELINE,15,GPU_START,a,worker=1,partition=0
TIMELINE,25,GPU_END,a,worker=1,partition=0,gpu_ms=10
";
        let run = read_str(log, None);
        let t = analyze(&run);
        assert_eq!(t.partitions.len(), 1);
        let r = &t.partitions[0];
        assert_eq!((r.synth_start_ms, r.synth_end_ms, r.synth_ms), (Some(0.0), Some(10.0), Some(10.0)));
        assert_eq!((r.queued_ms, r.picked_up_ms, r.gpu_start_ms, r.gpu_end_ms), (Some(11.0), Some(14.0), Some(15.0), Some(25.0)));
        assert_eq!((r.queue_wait_ms, r.pickup_to_start_ms, r.gpu_wall_ms), (Some(3.0), Some(1.0), Some(10.0)));
        assert_eq!((r.worker, r.device, r.kernel_ms), (Some(1), Some(0), None));
        let j = &t.jobs[0];
        assert!(j.complete);
        assert_eq!(j.completed_ms, Some(25.0));
        assert_eq!(j.latency_s, Some(0.025));
    }
}
