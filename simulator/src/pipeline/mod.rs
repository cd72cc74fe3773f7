//! The cuzk proving pipeline expressed on the DES core: proofs arrive and are admitted j
//! at a time; their partitions are synthesised by pw partition workers on the shared CPU
//! pool ([`crate::resources::CpuPool`]); finished partitions go to one GPU queue (bounded
//! or not; with `permit_until_send` the worker keeps its permit until the queue accepts);
//! gw GPU workers per device pick them up and run the prove call as a small program of
//! steps whose shape depends on the lock mode, split finalisation and pre-staging.
//!
//! Every state change updates the running metrics (so sweeps need no span list); with
//! `record` the spans and counters of the same run are emitted in the shared schema.

use std::collections::VecDeque;

use timeline::{Counter, Run, RunConfig, RunMeta, Span, SpanKind};

use crate::config::{Arrival, Config, ParamsUpload, Placement, RamPolicy, VramPolicy};
use crate::des::Agenda;
use crate::floors;
use crate::report::{Failure, GpuUtil, MixResult, SimResult, TypeResult};
use crate::resources::{CpuPool, Owner, Tally};
use crate::rng::Rng;

mod gpu;
mod residency;

use gpu::{program, Step};
use residency::Residency;

const GIB: f64 = (1u64 << 30) as f64;

/// Seconds as the simulation's nanoseconds.
fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// The longest a simulated run goes (100 years, a sixth of `u64` nanoseconds): past it the
/// run ends as infeasible with the failure `horizon`.
pub const HORIZON_NS: u64 = 100 * 31_557_600 * 1_000_000_000;

/// Options of one simulation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Build the timeline (spans and counters); off in sweeps.
    pub record: bool,
}

/// A simulation's outcome: the figures, and the timeline when recorded.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub result: SimResult,
    pub run: Option<Run>,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Arrive(u32),
    PoolWake(u64),
    CopyDone(u32),
    KernelsDone(u32),
    Resume(u32),
    /// The a/b/c part of a worker's upload has crossed the link ([`Sim::abc_ready`]).
    AbcUploaded(u32),
    /// An SRS or PCE entry of a mix finished loading ([`Sim::loaded`]).
    Loaded(u32),
    /// An idle entry became old enough to evict: waiting loads try again.
    Retry,
    /// The fresh engine's startup is over ([`crate::config::Startup`]): syntheses may start.
    Ready,
}


/// Sampled costs of one partition, ns.
#[derive(Clone, Copy, Debug, Default)]
struct Part {
    proof: u32,
    index: u32,
    synth: u64,
    prep: u64,
    k_ntt_h: u64,
    k_batch: u64,
    k_tail: u64,
    k_rest: u64,
    /// The G2 MSM on the device (`costs.msm_b_g2`; 0 when it runs in the finisher).
    k_g2: u64,
    b_g2: u64,
    epilogue: u64,
    alloc: u64,
    pickup: u64,
    // Timestamps.
    synth_start: u64,
    synth_end: u64,
    queued: u64,
    pw_slot: u32,
    /// When it entered the synthesis backlog (its proof's admission).
    ready: u64,
    fin_start: u64,
    footprint_gib: f64,
}

#[derive(Clone, Debug, Default)]
struct Proof {
    arrival: u64,
    /// Its first synthesis start (latency is measured from here, as the analyzer does).
    started: Option<u64>,
    remaining: u32,
    /// Partitions whose synthesis has not ended.
    unsynthesized: u32,
    done: Option<u64>,
    /// Its `[[mix]]` type (0 without a mix), partitions, and its first partition's index.
    ty: u16,
    partitions: u32,
    first_part: u32,
}

#[derive(Clone, Debug)]
struct Worker {
    device: u32,
    index: u32,
    part: Option<u32>,
    pc: usize,
    pending: u8,
    step_start: u64,
    call_start: u64,
    lock_acquired: [u64; 2],
    busy_since: u64,
    /// Since when the call has been waiting for VRAM (`vram_policy = "wait"`).
    vram_wait_since: Option<u64>,
    /// With `early_release`: what the call still has to do before its partition's a/b/c
    /// are given back (its prep, and the a/b/c part of its upload); 0: nothing held.
    abc_wait: u8,
    /// The upload step's one-time work (a staging set, the parameters) is done or under way.
    upload_prepared: bool,
    /// It holds one of its device's staging sets (from its upload's start to its copy's end).
    staging: bool,
    /// The staging set its upload allocated, ns (0: it took a free one).
    staging_alloc: u64,
}

#[derive(Clone, Debug, Default)]
struct Device {
    locks: [Option<u32>; 2],
    lock_waiters: [VecDeque<u32>; 2],
    kernels_running: u32,
    copies_running: u32,
    copy_queue: VecDeque<u32>,
    sync_waiters: Vec<u32>,
    vram_used: f64,
    vram_peak: f64,
    /// Calls waiting for VRAM (FIFO).
    vram_waiters: VecDeque<u32>,
    active_calls: u32,
    /// Partitions placed on the device whose call has not ended (from pickup).
    placed: u32,
    /// VRAM in use before any call: the baseline, resident parameters, pre-staged buffers.
    vram_base: f64,
    union_since: u64,
    union_busy: u64,
    first_call: Option<u64>,
    last_call_end: u64,
    kernel_busy: u64,
    lock_busy: u64,
    pcie_busy: u64,
    copy_since: u64,
    /// Upload staging sets allocated, and in use ([`crate::config::Startup::staging_alloc_s`]).
    staging_sets: u32,
    staging_in_use: u32,
    /// The parameters still to go up in this device's first call (`params_upload = first_call`),
    /// and when that upload ends once begun.
    params_pending: bool,
    params_ready_at: u64,
}

struct Sim<'c> {
    cfg: &'c Config,
    record: bool,
    agenda: Agenda<Ev>,
    rng: Rng,
    prog: Vec<Step>,
    upload_ns: u64,
    /// The a/b/c part of the upload ([`floors::abc_upload_s`]), ns.
    abc_upload_ns: u64,
    /// The device's part of an upload, ns (`costs.upload_device_gib`), recorded as `gpu_ns`.
    upload_device_ns: Option<u64>,
    /// Streaming the parameters for one partition (0 when resident), ns.
    params_stream_ns: u64,
    pool: CpuPool,
    parts: Vec<Part>,
    proofs: Vec<Proof>,
    arrived: VecDeque<u32>,
    in_flight: u32,
    /// Admitted proofs with partitions not yet synthesised (`synthesis_concurrency`).
    synthesizing: u32,
    backlog: VecDeque<u32>,
    free_slots: Vec<u32>,
    queue: VecDeque<u32>,
    blocked: VecDeque<u32>,
    idle: VecDeque<u32>,
    workers: Vec<Worker>,
    devices: Vec<Device>,
    ram_used: f64,
    ram_peak: f64,
    /// Admission: since when the partition at the head of the backlog, with a permit free,
    /// has been waiting for its reservation to fit (RAM budget or `ram_policy = block`).
    ram_wait_since: Option<u64>,
    ram_waits: u64,
    ram_wait_sum: u64,
    vram_waits: u64,
    vram_wait_sum: u64,
    /// Why the device side degraded (streamed parameters, workers without a buffer).
    vram_notes: Vec<String>,
    /// Completion times of the partitions.
    part_ends: Vec<u64>,
    /// Split finalisation: finalisers busy, and partitions waiting for one.
    fin_busy: u32,
    fin_queue: VecDeque<u32>,
    /// Pool version the pending wake-up was scheduled for.
    wake_version: u64,
    failure: Option<Failure>,
    // Metrics.
    pw_busy: Tally,
    gw_busy: Tally,
    queue_len: Tally,
    queue_wait_sum: u64,
    queue_waits: u64,
    backlog_len: Tally,
    backlog_wait_sum: u64,
    lock_queue: Tally,
    lock_queued: usize,
    lock_wait_sum: u64,
    lock_waits: u64,
    synth_sum: u64,
    synth_n: u64,
    call_sum: u64,
    call_n: u64,
    spans: Vec<Span>,
    counters: Vec<Counter>,
    /// With `[[mix]]`: the types' SRS and PCE entries ([`residency`]).
    res: Option<Residency>,
    /// No synthesis starts before this (the startup: engine, parameters' upload, PCE read).
    ready_at: u64,
    /// When the PCE read begins (`ready_at` − its duration), and the partitions not yet given
    /// their `pce_build` / `pce_wait` span (the first wave, up to pw of them).
    pce_from: u64,
    pce_spans_left: u32,
}

fn job_name(proof: u32) -> String {
    format!("proof-{proof:03}")
}

impl<'c> Sim<'c> {
    fn new(cfg: &'c Config, record: bool) -> Sim<'c> {
        let p = &cfg.pipeline;
        let gpus = cfg.machine.gpus;
        let mut workers = Vec::new();
        let mut idle = VecDeque::new();
        // Interleave devices so that an idle-worker FIFO spreads work across GPUs.
        for w in 0..p.gw {
            for d in 0..gpus {
                idle.push_back(workers.len() as u32);
                workers.push(Worker {
                    device: d,
                    index: w,
                    part: None,
                    pc: 0,
                    pending: 0,
                    step_start: 0,
                    call_start: 0,
                    lock_acquired: [0; 2],
                    busy_since: 0,
                    vram_wait_since: None,
                    abc_wait: 0,
                    upload_prepared: false,
                    staging: false,
                    staging_alloc: 0,
                });
            }
        }
        Sim {
            cfg,
            record,
            agenda: Agenda::new(),
            rng: Rng::new(cfg.seed),
            prog: program(cfg),
            upload_ns: ns(floors::upload_s(cfg)),
            abc_upload_ns: ns(floors::abc_upload_s(cfg)),
            upload_device_ns: floors::upload_device_s(cfg).map(ns),
            params_stream_ns: ns(cfg.params_stream_s()),
            pool: CpuPool::new(cfg.machine.capacity(), cfg.machine.mem_bandwidth_gbs, cfg.contention.clone()).with_worker_pool(cfg.pipeline.prep_threads).with_synth_pool_gain(cfg.cpu.synth_pool_gain, cfg.cpu.synth_pool_exponent),
            parts: Vec::with_capacity((p.proofs as usize).saturating_mul(p.partitions as usize).min(1 << 20)),
            proofs: Vec::with_capacity(p.proofs as usize),
            arrived: VecDeque::new(),
            in_flight: 0,
            synthesizing: 0,
            backlog: VecDeque::new(),
            free_slots: (0..p.pw).rev().collect(),
            queue: VecDeque::new(),
            blocked: VecDeque::new(),
            idle,
            workers,
            devices: vec![Device::default(); gpus as usize],
            ram_used: cfg.resident_gib(),
            ram_peak: cfg.resident_gib(),
            ram_wait_since: None,
            ram_waits: 0,
            ram_wait_sum: 0,
            vram_waits: 0,
            vram_wait_sum: 0,
            vram_notes: Vec::new(),
            part_ends: Vec::new(),
            fin_busy: 0,
            fin_queue: VecDeque::new(),
            wake_version: u64::MAX,
            failure: None,
            pw_busy: Tally::default(),
            gw_busy: Tally::default(),
            queue_len: Tally::default(),
            queue_wait_sum: 0,
            queue_waits: 0,
            backlog_len: Tally::default(),
            backlog_wait_sum: 0,
            lock_queue: Tally::default(),
            lock_queued: 0,
            lock_wait_sum: 0,
            lock_waits: 0,
            synth_sum: 0,
            synth_n: 0,
            call_sum: 0,
            call_n: 0,
            spans: Vec::new(),
            counters: Vec::new(),
            res: Residency::new(cfg),
            ready_at: 0,
            pce_from: 0,
            pce_spans_left: 0,
        }
    }

    fn now(&self) -> u64 {
        self.agenda.now()
    }

    fn fail(&mut self, kind: &str, detail: String) {
        if self.failure.is_none() {
            self.failure = Some(Failure { kind: kind.to_string(), t_s: self.now() as f64 / 1e9, detail });
        }
    }

    /// Record a span of `part` (its job and partition), worker and device when the run is
    /// recorded.
    fn span(&mut self, kind: SpanKind, start: u64, end: u64, part: Option<u32>, worker: Option<u32>, device: Option<u32>) {
        self.span_with(kind, start, end, part, worker, device, None);
    }

    /// [`Sim::span`] with arguments (`key`, value) besides (an `Option` for one or none).
    #[allow(clippy::too_many_arguments)]
    fn span_with<'k>(&mut self, kind: SpanKind, start: u64, end: u64, part: Option<u32>, worker: Option<u32>, device: Option<u32>, args: impl IntoIterator<Item = (&'k str, serde_json::Value)>) {
        if !self.record {
            return;
        }
        let mut s = Span::new(kind, start, end);
        if let Some(pi) = part {
            let pt = &self.parts[pi as usize];
            s = s.job(job_name(pt.proof)).partition(pt.index);
            if s.kind == SpanKind::Synthesis && !self.cfg.mix.is_empty() {
                // The job's proof type, where the analyzer reads it (`analysis::proof_type`).
                let ty = self.proofs[pt.proof as usize].ty as usize;
                s = s.arg("kind", self.cfg.mix[ty].name.clone());
            }
        }
        s.worker = worker;
        s.device = device;
        for (k, v) in args {
            s = s.arg(k, v);
        }
        self.spans.push(s);
    }

    fn ram_change(&mut self, delta: f64) {
        self.ram_used += delta;
        if self.ram_used > self.ram_peak {
            self.ram_peak = self.ram_used;
        }
        if self.record {
            let t = self.now();
            self.counters.push(Counter { name: timeline::event::counters::RSS_BYTES.into(), t_ns: t, value: (self.cfg.memory.rss_of(self.ram_used) * GIB).round(), device: None });
        }
    }

    fn queue_changed(&mut self) {
        let t = self.now();
        self.queue_len.set(t, self.queue.len() as f64);
        if self.record {
            self.counters.push(Counter { name: timeline::event::counters::QUEUE_DEPTH.into(), t_ns: t, value: self.queue.len() as f64, device: None });
        }
    }

    // ---- proofs and synthesis -------------------------------------------------------

    fn arrive(&mut self, proof: u32) {
        self.proofs[proof as usize].arrival = self.now();
        self.arrived.push_back(proof);
        self.admit();
    }

    fn admit(&mut self) {
        let sc = self.cfg.pipeline.synthesis_concurrency.unwrap_or(u32::MAX);
        while self.in_flight < self.cfg.pipeline.in_flight && self.synthesizing < sc {
            let Some(proof) = self.arrived.pop_front() else { break };
            self.in_flight += 1;
            self.synthesizing += 1;
            let ty = self.proofs[proof as usize].ty as usize;
            let partitions = self.cfg.partitions_of(ty);
            self.proofs[proof as usize].unsynthesized = partitions;
            self.proofs[proof as usize].first_part = self.parts.len() as u32;
            let mix = self.res.is_some();
            let (fs, fg) = self.cfg.mix.get(ty).map_or((1.0, 1.0), |m| (m.synth_scale, m.gpu_scale));
            let c = &self.cfg.costs;
            for i in 0..partitions {
                let r = &mut self.rng;
                let mut part = Part {
                    proof,
                    index: i,
                    synth: c.synth.sample_ns(r),
                    prep: c.prep_msm.sample_ns(r),
                    k_ntt_h: c.ntt_msm_h.sample_ns(r),
                    k_batch: c.batch_add.sample_ns(r),
                    k_tail: c.tail_msm.sample_ns(r),
                    k_rest: c.msm_rest.sample_ns(r),
                    k_g2: c.msm_b_g2.sample_ns(r),
                    b_g2: c.b_g2_msm.sample_ns(r),
                    epilogue: c.epilogue.sample_ns(r),
                    alloc: c.alloc.sample_ns(r),
                    pickup: c.pickup.sample_ns(r),
                    ready: self.agenda.now(),
                    ..Part::default()
                };
                if mix {
                    // The type's costs relative to the config's (1: the same).
                    let sc = |x: u64, f: f64| if f == 1.0 { x } else { (x as f64 * f).round() as u64 };
                    part.synth = sc(part.synth, fs);
                    for x in [&mut part.prep, &mut part.k_ntt_h, &mut part.k_batch, &mut part.k_tail, &mut part.k_rest, &mut part.k_g2, &mut part.b_g2] {
                        *x = sc(*x, fg);
                    }
                } else {
                    self.backlog.push_back(self.parts.len() as u32);
                }
                self.parts.push(part);
            }
            if mix {
                // Its partitions join the backlog once its type's SRS and PCE are resident.
                self.mix_admitted(proof);
            } else {
                let now = self.now();
                self.backlog_len.set(now, self.backlog.len() as f64);
            }
        }
        self.start_syntheses();
    }

    /// Start syntheses while a permit is free, a partition waits and its reservation fits:
    /// the budget (`memory.total_budget`) when set, else the machine's RAM under
    /// `ram_policy`. A partition that cannot get its reservation waits at the head of the
    /// backlog (a `ram_wait` span from then until its synthesis starts).
    fn start_syntheses(&mut self) {
        // Loads waiting for room (a mix) go first for the memory just released.
        self.try_loads();
        if self.now() < self.ready_at {
            return;
        }
        let need = self.cfg.partition_gib();
        let limit = self.cfg.ram_limit_gib();
        let budgeted = self.cfg.budget_gib().is_some();
        while !self.free_slots.is_empty() && !self.backlog.is_empty() && self.failure.is_none() {
            // With a mix, idle SRS/PCE entries are evicted to make room when they can.
            if self.ram_used + need > limit + 1e-9 && !(self.res.is_some() && self.make_room(need, None)) {
                if budgeted || self.cfg.pipeline.ram_policy == RamPolicy::Block {
                    if self.ram_wait_since.is_none() {
                        self.ram_wait_since = Some(self.now());
                    }
                    self.schedule_retry();
                    return;
                }
                let used = self.ram_used;
                self.fail(
                    "ram_oom",
                    format!(
                        "a synthesis needs {need} GiB with {used:.1} of {} GiB in use ({} partitions waiting for the GPU)",
                        self.cfg.machine.ram_gib,
                        self.queue.len() + self.blocked.len()
                    ),
                );
                return;
            }
            let (Some(slot), Some(pi)) = (self.free_slots.pop(), self.backlog.pop_front()) else { return };
            let now = self.now();
            self.backlog_len.set(now, self.backlog.len() as f64);
            self.backlog_wait_sum = self.backlog_wait_sum.saturating_add(now - self.parts[pi as usize].ready);
            let busy = (self.cfg.pipeline.pw as usize - self.free_slots.len()) as f64;
            self.pw_busy.set(now, busy);
            let proof = self.parts[pi as usize].proof as usize;
            self.proofs[proof].started.get_or_insert(now);
            if let Some(since) = self.ram_wait_since.take() {
                self.ram_waits += 1;
                self.ram_wait_sum = self.ram_wait_sum.saturating_add(now - since);
                self.span(SpanKind::RamWait, since, now, Some(pi), Some(slot), None);
            }
            {
                let p = &mut self.parts[pi as usize];
                p.pw_slot = slot;
                p.synth_start = now;
                p.footprint_gib = need;
            }
            if self.pce_spans_left > 0 && now == self.ready_at {
                // The first wave waited for the PCE's read: the first partition read it.
                let kind = if self.pce_spans_left == self.cfg.pipeline.pw { SpanKind::PceBuild } else { SpanKind::PceWait };
                self.pce_spans_left -= 1;
                self.span(kind, self.pce_from, now, Some(pi), Some(slot), None);
            }
            self.ram_change(need);
            let d = &self.cfg.cpu;
            let (cores, bw) = (d.synth_cores, d.synth_bw_gbs);
            let work = self.parts[pi as usize].synth;
            self.pool.start(now, work, cores, bw, true, Owner::Synth(pi));
        }
    }

    fn free_slot(&mut self, slot: u32) {
        self.free_slots.push(slot);
        let busy = (self.cfg.pipeline.pw as usize - self.free_slots.len()) as f64;
        self.pw_busy.set(self.now(), busy);
    }

    fn synth_done(&mut self, pi: u32) {
        let now = self.now();
        let (start, slot) = {
            let p = &mut self.parts[pi as usize];
            p.synth_end = now;
            (p.synth_start, p.pw_slot)
        };
        self.synth_sum = self.synth_sum.saturating_add(now - start);
        self.synth_n += 1;
        let proof = self.parts[pi as usize].proof as usize;
        self.proofs[proof].unsynthesized -= 1;
        if self.proofs[proof].unsynthesized == 0 {
            // Its synthesis task is over: the next proof may start synthesising.
            self.synthesizing -= 1;
            self.admit();
        }
        self.span(SpanKind::Synthesis, start, now, Some(pi), Some(slot), None);
        let cap = self.cfg.pipeline.queue_capacity.map_or(usize::MAX, |c| c as usize);
        if self.cfg.pipeline.permit_until_send {
            if self.queue.len() < cap && self.blocked.is_empty() {
                self.enqueue(pi);
                self.free_slot(slot);
            } else {
                self.blocked.push_back(pi);
            }
        } else {
            self.free_slot(slot);
            self.enqueue(pi);
        }
        self.dispatch();
        self.start_syntheses();
    }

    fn enqueue(&mut self, pi: u32) {
        self.parts[pi as usize].queued = self.now();
        self.queue.push_back(pi);
        self.queue_changed();
    }

    /// Idle GPU workers take partitions from the queue; blocked senders refill it.
    fn dispatch(&mut self) {
        loop {
            let mut progressed = false;
            while !self.idle.is_empty() && !self.queue.is_empty() {
                let Some(at) = self.pick_worker() else { break };
                let (Some(w), Some(pi)) = (self.idle.remove(at), self.queue.pop_front()) else { break };
                self.devices[self.workers[w as usize].device as usize].placed += 1;
                self.queue_changed();
                let now = self.now();
                let queued = self.parts[pi as usize].queued;
                self.queue_wait_sum = self.queue_wait_sum.saturating_add(now - queued);
                self.queue_waits += 1;
                // The queue span names the device the partition went to, as the engine's does.
                let dev = self.workers[w as usize].device;
                self.span(SpanKind::GpuQueue, queued, now, Some(pi), None, Some(dev));
                let wk = &mut self.workers[w as usize];
                wk.part = Some(pi);
                wk.pc = 0;
                wk.busy_since = now;
                let busy = (self.workers.len() - self.idle.len()) as f64;
                self.gw_busy.set(now, busy);
                self.agenda.at(now, Ev::Resume(w));
                progressed = true;
            }
            let cap = self.cfg.pipeline.queue_capacity.map_or(usize::MAX, |c| c as usize);
            while self.queue.len() < cap {
                let Some(pi) = self.blocked.pop_front() else { break };
                self.enqueue(pi);
                let slot = self.parts[pi as usize].pw_slot;
                self.free_slot(slot);
                progressed = true;
            }
            if !progressed || self.idle.is_empty() || self.queue.is_empty() {
                break;
            }
        }
        self.start_syntheses();
    }

    /// The idle worker (its position in `idle`) that takes the queue's next partition
    /// (`pipeline.placement`): `first_idle` the one idle longest; `memory` the engine's
    /// rule — among devices with an idle worker whose committed VRAM (baseline, parameters,
    /// pre-staged buffers, and `call_vram_gib` per call placed) leaves room for one more
    /// call, the fewest calls placed, then the lowest index (the longest idle of its
    /// workers). None: no idle device can hold it now (it waits in the queue). When no
    /// device could hold even one call, the first idle worker takes it (and the call fails
    /// `vram_oom` as without placement).
    fn pick_worker(&self) -> Option<usize> {
        if self.cfg.pipeline.placement == Placement::FirstIdle {
            return (!self.idle.is_empty()).then_some(0);
        }
        let need = if self.cfg.pipeline.prestage { 0.0 } else { self.cfg.memory.call_vram_gib };
        let cap = self.cfg.vram_cap_gib();
        if need > 0.0 && self.devices.iter().all(|d| d.vram_base + need > cap + 1e-9) {
            return (!self.idle.is_empty()).then_some(0);
        }
        let holds = |d: &Device| need <= 0.0 || d.vram_base + (d.placed as f64 + 1.0) * need <= cap + 1e-9;
        self.idle
            .iter()
            .enumerate()
            .filter(|(_, w)| holds(&self.devices[self.workers[**w as usize].device as usize]))
            .min_by_key(|&(at, &w)| {
                let d = self.workers[w as usize].device;
                (self.devices[d as usize].placed, d, at)
            })
            .map(|(at, _)| at)
    }

    // ---- the CPU pool ---------------------------------------------------------------

    /// After each event: if the pool changed, schedule one wake-up for its next
    /// completion (changes within one event coalesce; older wake-ups go stale).
    fn sync_pool_wake(&mut self) {
        let v = self.pool.version();
        if v != self.wake_version {
            self.wake_version = v;
            let now = self.now();
            if let Some((t, version)) = self.pool.next_wake(now) {
                self.agenda.at(t, Ev::PoolWake(version));
            }
        }
    }

    fn pool_wake(&mut self, version: u64) {
        if version != self.pool.version() {
            return;
        }
        let now = self.now();
        let done = self.pool.complete_due(now);
        if done.is_empty() {
            // Woken a nanosecond early by rounding: the same version needs a new wake-up.
            self.wake_version = u64::MAX;
        }
        for owner in done {
            match owner {
                Owner::Synth(pi) => self.synth_done(pi),
                Owner::Worker(w) => self.worker_cpu_done(w),
                Owner::Finalizer(pi, stage) => self.finalizer_done(pi, stage),
                Owner::Copy(w) => self.copy_done(w),
            }
        }
    }

    fn partition_done(&mut self, pi: u32) {
        self.part_ends.push(self.now());
        let fp = self.parts[pi as usize].footprint_gib;
        self.parts[pi as usize].footprint_gib = 0.0;
        self.ram_change(-fp);
        let proof = self.parts[pi as usize].proof as usize;
        let pr = &mut self.proofs[proof];
        pr.remaining -= 1;
        if pr.remaining == 0 {
            pr.done = Some(self.agenda.now());
            self.in_flight -= 1;
            self.mix_proof_done(proof as u32);
            self.admit();
        }
        self.start_syntheses();
    }

    /// The fresh engine's one-time work before its first synthesis ([`crate::config::Startup`]):
    /// the parameters' upload from t = 0 (when they go up at the start and stay resident),
    /// then the engine's own start, then the PCE's read from its cache (without a mix), in
    /// that order, as the engine's timelines show them; the parameters going up in each
    /// device's first call instead are marked on the devices.
    fn startup(&mut self) {
        let st = &self.cfg.startup;
        let resident = !self.cfg.params_streamed();
        let up = if resident { ns(st.params_upload_s) } else { 0 };
        let at_start = st.params_upload == ParamsUpload::Start;
        let pce = if self.res.is_none() { ns(st.pce_load_s) } else { 0 };
        let (up_start, first_call) = if at_start { (up, 0) } else { (0, up) };
        for dv in self.devices.iter_mut() {
            dv.params_pending = first_call > 0;
        }
        self.pce_from = up_start + ns(st.engine_s);
        self.ready_at = self.pce_from + pce;
        if pce > 0 {
            self.pce_spans_left = self.cfg.pipeline.pw;
        }
        if up_start > 0 {
            for d in 0..self.cfg.machine.gpus {
                self.span_with(SpanKind::H2d, 0, up_start, None, None, Some(d), Some(("what", "params".into())));
            }
        }
        if self.ready_at > 0 {
            self.agenda.at(self.ready_at, Ev::Ready);
        }
    }

    fn run(mut self) -> Outcome {
        let cfg = self.cfg;
        let p = &cfg.pipeline;
        // Pre-staged VRAM buffers are allocated as the workers start, beside the baseline
        // and the resident parameters.
        let cap = cfg.vram_cap_gib();
        let fixed = cfg.vram_static_gib();
        for dv in self.devices.iter_mut() {
            dv.vram_used = fixed;
            dv.vram_peak = dv.vram_used;
        }
        if cfg.params_streamed() {
            self.vram_notes.push(format!(
                "parameters streamed: {} GiB over PCIe per partition ({:.2} s at {} GB/s); resident they would not fit beside the baseline and one worker's buffers in {cap} GiB",
                cfg.memory.params_vram_gib,
                cfg.params_stream_s(),
                cfg.machine.pcie_gbs
            ));
        }
        if fixed > cap + 1e-9 {
            self.fail("vram_oom", format!("the VRAM baseline and resident parameters ({fixed} GiB) exceed the {cap} GiB usable on the card"));
        }
        if p.prestage && self.failure.is_none() {
            let wait = cfg.memory.vram_policy == VramPolicy::Wait;
            'outer: for w in 0..p.gw {
                for d in 0..cfg.machine.gpus {
                    let dv = &mut self.devices[d as usize];
                    if dv.vram_used + cfg.memory.prestage_vram_gib > cap + 1e-9 {
                        let used = dv.vram_used;
                        if wait && w > 0 {
                            // Workers without a buffer stay idle: the others serialise the work.
                            let id = w * cfg.machine.gpus + d;
                            self.idle.retain(|&x| x != id);
                            if !self.vram_notes.iter().any(|n| n.starts_with("workers serialised")) {
                                self.vram_notes.push(format!(
                                    "workers serialised: only {w} of {} workers' pre-staged buffers ({} GiB each) fit beside {used:.1} GiB in {cap} GiB",
                                    p.gw, cfg.memory.prestage_vram_gib
                                ));
                            }
                            continue;
                        }
                        self.fail(
                            "vram_oom",
                            format!(
                                "GPU {d}: worker {w}'s pre-staged buffer ({} GiB) does not fit beside {used:.1} GiB already in use on a {cap} GiB card",
                                cfg.memory.prestage_vram_gib
                            ),
                        );
                        break 'outer;
                    }
                    dv.vram_used += cfg.memory.prestage_vram_gib;
                    dv.vram_peak = dv.vram_peak.max(dv.vram_used);
                }
            }
        }
        for dv in self.devices.iter_mut() {
            dv.vram_base = dv.vram_used;
        }
        self.startup();
        let types = self.res.as_ref().map(|r| r.proof_type.clone());
        self.proofs = (0..p.proofs as usize)
            .map(|i| {
                let ty = types.as_ref().map_or(0, |t| t[i]);
                let n = cfg.partitions_of(ty as usize);
                Proof { arrival: 0, started: None, remaining: n, unsynthesized: n, done: None, ty, partitions: n, first_part: 0 }
            })
            .collect();
        for i in 0..p.proofs {
            let t = match p.arrival {
                Arrival::AllAtOnce => 0,
                Arrival::Periodic { period_s } => ns(i as f64 * period_s),
            };
            self.agenda.at(t, Ev::Arrive(i));
        }
        if self.record {
            self.counters.push(Counter { name: timeline::event::counters::RSS_BYTES.into(), t_ns: 0, value: (self.cfg.memory.rss_of(self.ram_used) * GIB).round(), device: None });
        }
        while self.failure.is_none() {
            let Some((t, ev)) = self.agenda.pop() else { break };
            if t > HORIZON_NS {
                // Far beyond any run (a contention slope of 1e9, a cost of years): stop
                // here, where every time and sum is still far from overflow.
                self.fail("horizon", format!("the simulated run passed {} years without finishing", HORIZON_NS / 1_000_000_000 / 31_557_600));
                break;
            }
            match ev {
                Ev::Arrive(i) => self.arrive(i),
                Ev::PoolWake(v) => self.pool_wake(v),
                Ev::CopyDone(w) => self.copy_done(w),
                Ev::KernelsDone(w) => self.kernels_done(w),
                Ev::Resume(w) => self.run_worker(w),
                Ev::AbcUploaded(w) => self.abc_ready(w),
                Ev::Loaded(i) => self.loaded(i),
                Ev::Retry => self.retry(),
                Ev::Ready => self.start_syntheses(),
            }
            self.sync_pool_wake();
        }
        self.check_stalled();
        self.finish()
    }

    fn finish(mut self) -> Outcome {
        let cfg = self.cfg;
        let p = &cfg.pipeline;
        let now = self.now();
        let mut done: Vec<u64> = self.proofs.iter().filter_map(|x| x.done).collect();
        done.sort_unstable();
        let completed = done.len() as u32;
        let makespan = done.last().copied().unwrap_or(now);
        let end = makespan.max(1);
        let secs = |ns: u64| ns as f64 / 1e9;
        let steady = if done.len() >= 2 {
            secs(done[done.len() - 1] - done[0]) / (done.len() - 1) as f64
        } else {
            secs(makespan) / completed.max(1) as f64
        };
        let steady_parts = if self.part_ends.len() >= 2 {
            let (a, b) = (self.part_ends.iter().min().copied().unwrap_or(0), self.part_ends.iter().max().copied().unwrap_or(0));
            // Per proof: the mix's mean partitions per proof.
            let per_proof = if self.res.is_some() {
                self.proofs.iter().map(|x| f64::from(x.partitions)).sum::<f64>() / self.proofs.len().max(1) as f64
            } else {
                p.partitions as f64
            };
            secs(b - a) / (self.part_ends.len() - 1) as f64 * per_proof
        } else {
            steady
        };
        let lat: Vec<f64> = self.proofs.iter().filter_map(|x| x.done.map(|d| secs(d - x.started.unwrap_or(x.arrival)))).collect();
        let gpus = self
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut union = d.union_busy;
                if d.active_calls > 0 {
                    union = union.saturating_add(now - d.union_since);
                }
                let first = d.first_call.unwrap_or(0);
                let window = d.last_call_end.saturating_sub(first).max(1) as f64;
                GpuUtil {
                    device: i as u32,
                    gpu_utilization: union as f64 / window,
                    gpu_utilization_run: union as f64 / end as f64,
                    kernel_utilization: d.kernel_busy as f64 / window,
                    lock_hold: d.lock_busy as f64 / window,
                    pcie_util: d.pcie_busy as f64 / window,
                    peak_vram_gib: d.vram_peak,
                    active_window_s: window / 1e9,
                }
            })
            .collect::<Vec<_>>();
        self.pool.advance(now);
        let result = SimResult {
            name: cfg.name.clone(),
            feasible: self.failure.is_none() && completed == p.proofs,
            failure: self.failure.clone(),
            proofs: p.proofs,
            proofs_completed: completed,
            makespan_s: secs(makespan),
            total_s_per_proof: secs(makespan) / completed.max(1) as f64,
            steady_state_s_per_proof: steady,
            steady_partitions_s_per_proof: steady_parts,
            interval: None,
            latency_mean_s: if lat.is_empty() { 0.0 } else { lat.iter().sum::<f64>() / lat.len() as f64 },
            latency_max_s: lat.iter().copied().fold(0.0, f64::max),
            peak_vram_gib: gpus.iter().map(|g| g.peak_vram_gib).fold(0.0, f64::max),
            gpus,
            cpu_util: self.pool.core_seconds() / (cfg.machine.capacity() * secs(end)),
            bandwidth_util: self.pool.gb_transferred() / (cfg.machine.mem_bandwidth_gbs * secs(end)),
            pw_util: self.pw_busy.integral(end) / (p.pw as f64 * end as f64),
            gw_util: self.gw_busy.integral(end) / (self.workers.len() as f64 * end as f64),
            peak_ram_gib: self.ram_peak,
            ram_budget_gib: cfg.budget_gib(),
            peak_reserved_gib: cfg.budget_gib().map(|_| self.ram_peak),
            ram_waits: self.ram_waits,
            ram_wait_total_s: secs(self.ram_wait_sum),
            params_streamed: cfg.params_streamed(),
            vram_waits: self.vram_waits,
            vram_wait_total_s: secs(self.vram_wait_sum),
            vram_notes: self.vram_notes.clone(),
            synth_mean_s: secs(self.synth_sum) / self.synth_n.max(1) as f64,
            gpu_call_mean_s: secs(self.call_sum) / self.call_n.max(1) as f64,
            queue_wait_mean_s: secs(self.queue_wait_sum) / self.queue_waits.max(1) as f64,
            queue_len_mean: self.queue_len.integral(end) / end as f64,
            backlog_wait_mean_s: secs(self.backlog_wait_sum) / self.synth_n.max(1) as f64,
            backlog_len_mean: self.backlog_len.integral(end) / end as f64,
            lock_waits: self.lock_waits,
            lock_wait_total_s: secs(self.lock_wait_sum),
            lock_queue_len_mean: self.lock_queue.integral(end) / end as f64,
            floors: floors::compute(&cfg.mean_proof()),
            events: self.agenda.events_processed(),
            mix: self.mix_result(),
        };
        let run = if self.record {
            let mut meta = RunMeta::new("simulator");
            meta.config = RunConfig {
                pw: Some(p.pw),
                gw: Some(p.gw),
                lock: Some(p.lock),
                gpus: Some(cfg.machine.gpus),
                // A mix of partition counts declares none (each job's `kind` names its type).
                partitions: if cfg.mix.is_empty() || (0..cfg.mix.len()).all(|t| cfg.partitions_of(t) == p.partitions) { Some(p.partitions) } else { None },
                proofs: Some(p.proofs),
                constraints: None,
                split_finalize: Some(p.split_finalize),
                finalizers: if p.split_finalize { p.finalizers } else { None },
                backend: Some("sim".into()),
                g2_msm: None,
            };
            meta.extra.insert("scenario".into(), cfg.name.clone().into());
            meta.extra.insert("seed".into(), cfg.seed.into());
            if let Some(b) = cfg.budget_gib() {
                meta.extra.insert("ram_budget_bytes".into(), ((b * GIB).round() as u64).into());
            }
            if let Ok(v) = serde_json::to_value(cfg) {
                meta.extra.insert("sim_config".into(), v);
            }
            if let Some(r) = &self.res {
                let ev: Vec<serde_json::Value> = r
                    .evicted
                    .iter()
                    .map(|&(t, ty, srs)| serde_json::json!({"t_s": secs(t), "proof_type": cfg.mix[ty as usize].name, "what": if srs { "srs" } else { "pce" }}))
                    .collect();
                meta.extra.insert("residency".into(), serde_json::json!({"loads": r.loads, "evictions": ev}));
            }
            if let Some(f) = &self.failure {
                meta.extra.insert("failure".into(), serde_json::json!({"kind": f.kind, "t_s": f.t_s, "detail": f.detail}));
            }
            let mut run = Run::new(meta);
            run.spans = std::mem::take(&mut self.spans);
            run.counters = std::mem::take(&mut self.counters);
            run.normalize();
            Some(run)
        } else {
            None
        };
        Outcome { result, run }
    }
}


impl Sim<'_> {
    /// The residency figures and the per-type figures of a mix (None without one).
    fn mix_result(&self) -> Option<MixResult> {
        let r = self.res.as_ref()?;
        let secs = |ns: u64| ns as f64 / 1e9;
        let types = self
            .cfg
            .mix
            .iter()
            .enumerate()
            .map(|(t, m)| {
                let mine: Vec<&Proof> = self.proofs.iter().filter(|x| x.ty as usize == t).collect();
                let mut done: Vec<u64> = mine.iter().filter_map(|x| x.done).collect();
                done.sort_unstable();
                let n = done.len();
                let total = done.last().map_or(0.0, |&l| secs(l) / n as f64);
                let lat: Vec<f64> = mine.iter().filter_map(|x| x.done.map(|d| secs(d - x.started.unwrap_or(x.arrival)))).collect();
                let ts = &r.types[t];
                TypeResult {
                    name: m.name.clone(),
                    proofs: mine.len() as u32,
                    proofs_completed: n as u32,
                    total_s_per_proof: total,
                    steady_state_s_per_proof: if n >= 2 { secs(done[n - 1] - done[0]) / (n - 1) as f64 } else { total },
                    latency_mean_s: if lat.is_empty() { 0.0 } else { lat.iter().sum::<f64>() / lat.len() as f64 },
                    loads: ts.loads,
                    evictions: ts.evictions,
                    load_total_s: secs(ts.load_ns),
                }
            })
            .collect();
        Some(MixResult { loads: r.loads, evictions: r.evictions, load_total_s: secs(r.load_ns), load_waits: r.load_waits, load_wait_total_s: secs(r.load_wait_ns), types })
    }
}

/// Run one simulation of a validated config.
pub fn simulate(cfg: &Config, opts: Options) -> Outcome {
    let t0 = std::time::Instant::now();
    let out = Sim::new(cfg, opts.record).run();
    let r = &out.result;
    tracing::debug!(
        "simulated `{}`: {} events in {:.2} ms, {} of {} proofs, steady {:.3} s/proof{}",
        r.name,
        r.events,
        t0.elapsed().as_secs_f64() * 1e3,
        r.proofs_completed,
        r.proofs,
        r.steady_state_s_per_proof,
        r.failure.as_ref().map_or(String::new(), |f| format!(", failed: {} at {:.1} s", f.kind, f.t_s))
    );
    out
}
