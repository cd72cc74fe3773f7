//! The host-RAM budget: one byte budget from which every large allocation of the engine
//! reserves first (the parameters, the pre-compiled constraints, each partition's working
//! set), so that the engine's concurrency follows from memory rather than from a worker
//! count and the process is never OOM-killed (issue 19; the reference daemon's memory
//! manager, `shared/reference/cuzk-daemon.md`).
//!
//! - [`RamBudget::reserve`] blocks (a condition variable) until the request fits, in FIFO
//!   order (a large request is not starved by small ones); [`RamBudget::try_reserve`] does
//!   not wait. Reserved bytes never exceed the budget, whatever the threads do.
//! - A request that can never fit is an error at once, not a deadlock: larger than the
//!   budget less what is *resident* (reservations made with [`RamBudget::reserve_resident`]:
//!   parameters, pre-compiled constraints, never released while the engine runs) and less
//!   what the caller itself holds (`holding`).
//! - A [`Reservation`] is released when dropped; it can be split ([`Reservation::split_off`])
//!   or released in part ([`Reservation::release`]): the two-phase release of a partition
//!   (its a/b/c when the backend has taken them, the rest when its proof is finished).
//! - An observer sees every change of the reserved total (the engine turns it into the
//!   timeline counter `ram_reserved_bytes`).
//!
//! The estimate of what a partition holds, from the parameters' shape, is
//! [`PartitionEstimate`]; the sizes in the config are [`ByteSize`]s.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::params::ParamsShape;

pub use timeline::bytes::{human, Budget, ByteSize};

/// Why a reservation was not made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The request can never fit: the budget less what is resident and what the caller holds.
    #[error("{what} needs {} but the RAM budget can never give it: {} in all, {} resident (parameters, pre-compiled constraints){}", human(*needed), human(*total), human(*resident), if *holding > 0 { format!(", {} held by the requester", human(*holding)) } else { String::new() })]
    TooLarge { what: String, needed: u64, total: u64, resident: u64, holding: u64 },
    /// [`RamBudget::try_reserve`]: it does not fit now.
    #[error("{what} needs {}, {} of the RAM budget is free now", human(*needed), human(*free))]
    WouldBlock { what: String, needed: u64, free: u64 },
    /// The budget was closed (the engine is aborting) while the request waited.
    #[error("{what}: the engine stopped while it waited for RAM")]
    Closed { what: String },
}

struct State {
    reserved: u64,
    resident: u64,
    peak: u64,
    /// Tickets of the blocked requests, oldest first: only the front one may take bytes.
    queue: VecDeque<u64>,
    next_ticket: u64,
    closed: bool,
}

type Observer = Box<dyn Fn(u64) + Send + Sync>;

/// One byte budget shared by the engine's threads (see the module docs).
pub struct RamBudget {
    total: u64,
    state: Mutex<State>,
    changed: Condvar,
    observer: Option<Observer>,
}

impl fmt::Debug for RamBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("RamBudget").field("total", &self.total).field("reserved", &s.reserved).field("resident", &s.resident).finish()
    }
}

impl RamBudget {
    pub fn new(total: u64) -> Arc<RamBudget> {
        Self::with_observer(total, None)
    }

    /// A budget whose every change of the reserved total is passed to `observer` (called
    /// under the budget's lock, so the values it sees are in order; keep it cheap).
    pub fn with_observer(total: u64, observer: Option<Observer>) -> Arc<RamBudget> {
        Arc::new(RamBudget {
            total,
            state: Mutex::new(State { reserved: 0, resident: 0, peak: 0, queue: VecDeque::new(), next_ticket: 0, closed: false }),
            changed: Condvar::new(),
            observer,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn total(&self) -> u64 {
        self.total
    }
    /// Bytes reserved now.
    pub fn reserved(&self) -> u64 {
        self.lock().reserved
    }
    /// Of [`RamBudget::reserved`], what is resident.
    pub fn resident(&self) -> u64 {
        self.lock().resident
    }
    /// The most ever reserved at once.
    pub fn peak(&self) -> u64 {
        self.lock().peak
    }
    /// Requests blocked in [`RamBudget::reserve`] now.
    pub fn waiting(&self) -> usize {
        self.lock().queue.len()
    }

    fn check_possible(&self, s: &State, what: &str, needed: u64, holding: u64) -> Result<(), BudgetError> {
        let room = self.total.saturating_sub(s.resident).saturating_sub(holding);
        if needed > room {
            return Err(BudgetError::TooLarge { what: what.to_string(), needed, total: self.total, resident: s.resident, holding });
        }
        Ok(())
    }

    fn take(self: &Arc<Self>, s: &mut State, bytes: u64, resident: bool) -> Reservation {
        s.reserved += bytes;
        debug_assert!(s.reserved <= self.total);
        if resident {
            s.resident += bytes;
        }
        s.peak = s.peak.max(s.reserved);
        if let Some(o) = &self.observer {
            o(s.reserved);
        }
        Reservation { budget: Some(self.clone()), bytes: AtomicU64::new(bytes), resident }
    }

    fn give_back(&self, bytes: u64, resident: bool) {
        if bytes == 0 {
            return;
        }
        let mut s = self.lock();
        s.reserved = s.reserved.saturating_sub(bytes);
        if resident {
            s.resident = s.resident.saturating_sub(bytes);
        }
        if let Some(o) = &self.observer {
            o(s.reserved);
        }
        drop(s);
        self.changed.notify_all();
    }

    /// Reserve `bytes`, waiting (FIFO) until they fit. `what` names the request in errors.
    pub fn reserve(self: &Arc<Self>, what: &str, bytes: u64) -> Result<Reservation, BudgetError> {
        self.reserve_with(what, bytes, false, 0)
    }

    /// [`RamBudget::reserve`] of something that stays for the engine's life (parameters,
    /// pre-compiled constraints): later requests that could only fit without it are errors.
    pub fn reserve_resident(self: &Arc<Self>, what: &str, bytes: u64) -> Result<Reservation, BudgetError> {
        self.reserve_with(what, bytes, true, 0)
    }

    /// The general form: `resident` as above; `holding`: bytes the caller holds itself
    /// and will not release while it waits (they count against what can ever be free).
    /// A caller that holds bytes does not queue behind the others (who may be waiting for
    /// exactly those bytes): it takes what it asks for as soon as it fits.
    pub fn reserve_with(self: &Arc<Self>, what: &str, bytes: u64, resident: bool, holding: u64) -> Result<Reservation, BudgetError> {
        self.reserve_or_stop(what, bytes, resident, holding, None).map(|r| r.expect("no stop: a reservation or an error"))
    }

    /// [`RamBudget::reserve`], giving up the wait (`Ok(None)`, out of the queue) as soon as
    /// `stop()` says so, asked every `poll` while it waits: the a/b/c pool's synthesis gives
    /// up when a set comes back idle, whose budget share is what it waits for
    /// ([`crate::abc_pool`]). `stop` runs under the budget's lock: it must not take it.
    pub fn reserve_unless(self: &Arc<Self>, what: &str, bytes: u64, poll: std::time::Duration, stop: &dyn Fn() -> bool) -> Result<Option<Reservation>, BudgetError> {
        self.reserve_or_stop(what, bytes, false, 0, Some((poll, stop)))
    }

    fn reserve_or_stop(self: &Arc<Self>, what: &str, bytes: u64, resident: bool, holding: u64, stop: Option<(std::time::Duration, &dyn Fn() -> bool)>) -> Result<Option<Reservation>, BudgetError> {
        let mut s = self.lock();
        self.check_possible(&s, what, bytes, holding)?;
        if s.closed {
            return Err(BudgetError::Closed { what: what.to_string() });
        }
        let queued = holding == 0;
        if (!queued || s.queue.is_empty()) && s.reserved + bytes <= self.total {
            return Ok(Some(self.take(&mut s, bytes, resident)));
        }
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        if queued {
            s.queue.push_back(ticket);
        }
        loop {
            s = match stop {
                None => self.changed.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some((poll, _)) => self.changed.wait_timeout(s, poll).unwrap_or_else(|p| p.into_inner()).0,
            };
            let turn = !queued || s.queue.front() == Some(&ticket);
            let outcome = if s.closed {
                Some(Err(BudgetError::Closed { what: what.to_string() }))
            } else if let Err(e) = self.check_possible(&s, what, bytes, holding) {
                // Something became resident while we waited: it will never fit now.
                Some(Err(e))
            } else if turn && s.reserved + bytes <= self.total {
                Some(Ok(Some(self.take(&mut s, bytes, resident))))
            } else if stop.is_some_and(|(_, f)| f()) {
                Some(Ok(None))
            } else {
                None
            };
            if let Some(r) = outcome {
                s.queue.retain(|t| *t != ticket);
                drop(s);
                // The next in line may fit too (or must learn the budget closed).
                self.changed.notify_all();
                return r;
            }
        }
    }

    /// Reserve `bytes` only if they fit now and nobody is waiting before us.
    pub fn try_reserve(self: &Arc<Self>, what: &str, bytes: u64) -> Result<Reservation, BudgetError> {
        let mut s = self.lock();
        self.check_possible(&s, what, bytes, 0)?;
        if s.closed {
            return Err(BudgetError::Closed { what: what.to_string() });
        }
        if s.queue.is_empty() && s.reserved + bytes <= self.total {
            Ok(self.take(&mut s, bytes, false))
        } else {
            Err(BudgetError::WouldBlock { what: what.to_string(), needed: bytes, free: self.total.saturating_sub(s.reserved) })
        }
    }

    /// Wake every waiter with [`BudgetError::Closed`] and refuse new requests (engine abort).
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }
}

/// Bytes reserved from a [`RamBudget`]; given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Option<Arc<RamBudget>>,
    bytes: AtomicU64,
    resident: bool,
}

impl Reservation {
    /// A reservation of nothing from no budget (the engine without a budget).
    pub fn none() -> Reservation {
        Reservation { budget: None, bytes: AtomicU64::new(0), resident: false }
    }

    /// Bytes still held.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::SeqCst)
    }

    /// Give back up to `bytes` now (the rest stays held); returns what was given back.
    pub fn release(&self, bytes: u64) -> u64 {
        let mut cur = self.bytes.load(Ordering::SeqCst);
        loop {
            let n = bytes.min(cur);
            match self.bytes.compare_exchange(cur, cur - n, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    if let Some(b) = &self.budget {
                        b.give_back(n, self.resident);
                    }
                    return n;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// Move up to `bytes` of this reservation into a new one (released on its own).
    pub fn split_off(&mut self, bytes: u64) -> Reservation {
        let cur = self.bytes.get_mut();
        let n = bytes.min(*cur);
        *cur -= n;
        Reservation { budget: self.budget.clone(), bytes: AtomicU64::new(n), resident: self.resident }
    }

    /// Take `other`'s bytes into this reservation (both of one budget and kind).
    pub fn absorb(&self, other: Reservation) {
        debug_assert_eq!(self.resident, other.resident);
        let n = other.bytes.swap(0, Ordering::SeqCst);
        self.bytes.fetch_add(n, Ordering::SeqCst);
    }

    /// Grow by `bytes` if they fit now (e.g. a resident item whose real size is larger than
    /// its estimate); `false` when they do not.
    pub fn try_grow(&self, bytes: u64) -> bool {
        let Some(b) = &self.budget else { return true };
        let mut s = b.lock();
        if s.closed || !s.queue.is_empty() || s.reserved + bytes > b.total {
            return false;
        }
        let extra = b.take(&mut s, bytes, self.resident);
        drop(s);
        // Absorb it (without giving it back).
        let n = extra.bytes.swap(0, Ordering::SeqCst);
        self.bytes.fetch_add(n, Ordering::SeqCst);
        true
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let n = self.bytes.swap(0, Ordering::SeqCst);
        if let Some(b) = &self.budget {
            b.give_back(n, self.resident);
        }
    }
}

/// The CLI's form of the budget (`--ram-budget`): `auto`, a bare number of GiB, or a size
/// with a unit.
pub fn parse_cli_budget(s: &str) -> Result<Budget, String> {
    Budget::parse_with(s, Some("GiB"))
}

/// The engine's `[memory]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    /// One byte budget for everything large on the host: the parameters, the pre-compiled
    /// constraints, each partition's working set. `auto` = MemTotal − `safety_margin`.
    pub total_budget: Budget,
    /// Kept back for the OS and other processes when `total_budget = "auto"`.
    pub safety_margin: ByteSize,
    /// The host copy of the parameters' queries once every device holds its own.
    pub params_host: ParamsHost,
    /// Device memory each CUDA device may use (none: all of it). The backend holds the rest
    /// of the device's free memory back when it opens the device, so that the device really
    /// behaves as a card of this size: uploads that do not fit stream, MSMs chunk, lanes stay
    /// off, placement waits.
    pub vram_budget: Option<ByteSize>,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { total_budget: Budget::Auto, safety_margin: ByteSize::gib(5), params_host: ParamsHost::Auto, vram_budget: None }
    }
}

/// `memory.params_host`: what the engine does with the host copy of the parameters' queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamsHost {
    /// Upload the queries to every device at start; free the host copy of each query that
    /// every device holds and give its share of the RAM budget back. The CPU fallback is then
    /// off (it would need the points): a partition out of device memory is retried on the
    /// device instead.
    #[default]
    Auto,
    /// Keep the host copy (the CPU fallback stays available; devices upload on first use).
    Keep,
}

impl ParamsHost {
    pub fn parse(s: &str) -> Result<ParamsHost, String> {
        match s {
            "auto" | "release" => Ok(ParamsHost::Auto),
            "keep" => Ok(ParamsHost::Keep),
            _ => Err(format!("`{s}`: expected auto (release the host copy once every device holds the queries) or keep")),
        }
    }
}

/// MemTotal of /proc/meminfo, bytes (None where there is no such file).
pub fn mem_total_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl MemoryConfig {
    /// The budget in bytes on a machine of `mem_total` bytes (None: unknown), and a warning
    /// when it is larger than the machine's RAM. Errors: `auto` where MemTotal is unknown
    /// or not larger than the margin.
    pub fn resolve(&self, mem_total: Option<u64>) -> Result<(u64, Option<String>), String> {
        match self.total_budget {
            Budget::Auto => {
                let total = mem_total.ok_or("memory.total_budget = \"auto\" needs /proc/meminfo's MemTotal, which cannot be read here: give a size")?;
                let budget = total.checked_sub(self.safety_margin.0).filter(|b| *b > 0).ok_or_else(|| {
                    format!("memory.total_budget = \"auto\": MemTotal {} is not larger than memory.safety_margin {}", human(total), human(self.safety_margin.0))
                })?;
                Ok((budget, None))
            }
            Budget::Bytes(b) => {
                if b.0 == 0 {
                    return Err("memory.total_budget must be larger than 0".into());
                }
                let warn = mem_total.filter(|t| b.0 > *t).map(|t| format!("the RAM budget {} is larger than this machine's RAM ({}): the budget cannot keep the engine from running out of memory", human(b.0), human(t)));
                Ok((b.0, warn))
            }
        }
    }
}

/// What one partition holds on the host, estimated from the parameters' shape before its
/// synthesis starts (docs/reference/engine.md, "The estimate"):
/// - `abc`: the evaluations a, b, c, each resized to the domain (n scalars of 32 B) for the
///   NTTs, so 3 · n · 32 B; released when the backend has taken them;
/// - `rest`: the witness (inputs + aux scalars), the three density bit vectors and the B
///   query's MSM preparation (36 B per point, kept for the G2 MSM); released when the
///   proof is finished;
/// - `call`: what the GPU call holds only while it runs: the A and L queries' MSM
///   preparation (ones / tail indices and tail scalars: at most 36 B per point) and the
///   largest MSM's gathered bases (96 B per G1 point, 192 B per G2 point of the B query).
///   A GPU worker runs one call at a time, so the engine reserves `call` once per GPU worker
///   for its life, not once per synthesis (runs 52–53: charging it to every synthesis
///   admitted one 2^27 partition at a time under a 120.8 GiB budget).
///
/// The formula is [`timeline::bytes::working_set`] (shared with the simulator), with the
/// MSM terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionEstimate {
    pub abc: u64,
    pub rest: u64,
    #[serde(default)]
    pub call: u64,
    /// Of `call`, the largest MSM's gathered bases: what a CPU MSM gathers on the host (a CPU
    /// fallback, the G2 MSM in the finisher). A call on queries its device holds indexes the
    /// device's copy ([`PartitionEstimate::call_on_resident_queries`]); a streamed query is
    /// gathered chunk by chunk into the upload staging (reserved on its own) — kept here all
    /// the same for streamed queries, whose runs (99, 102) came within 5 GiB of their
    /// reservations.
    #[serde(default)]
    pub call_bases: u64,
}

impl PartitionEstimate {
    /// What a synthesis reserves: a/b/c and the rest.
    pub fn synthesis(&self) -> u64 {
        self.abc.saturating_add(self.rest)
    }

    /// Everything one partition ever holds, its GPU call included.
    pub fn total(&self) -> u64 {
        self.synthesis().saturating_add(self.call)
    }

    /// What a GPU call holds when every device holds the MSM queries (L, A, B in G1 and G2)
    /// and no CPU fallback runs: the preparation without the gathered bases.
    pub fn call_on_resident_queries(&self) -> u64 {
        self.call.saturating_sub(self.call_bases)
    }

    /// From the shape: `domain` = n, `inputs` (with ONE), `aux`, and the points of the
    /// A, B (G1 = G2) and L queries: [`timeline::bytes::working_set`] with the MSM terms.
    pub fn from_shape(domain: u64, inputs: u64, aux: u64, a_points: u64, b_points: u64, l_points: u64) -> PartitionEstimate {
        let w = timeline::bytes::working_set(domain, inputs, aux, Some(timeline::bytes::QueryPoints { a: a_points, b: b_points, l: l_points }));
        PartitionEstimate { abc: w.abc, rest: w.rest(), call: w.call(), call_bases: w.msm_bases }
    }

    pub fn for_shape(s: &ParamsShape) -> PartitionEstimate {
        let i = &s.info;
        Self::from_shape(i.domain_size, i.num_inputs, i.num_aux, s.a, s.b_g1, s.l)
    }
}

/// The parameters' size in memory (their point vectors), bytes.
pub fn params_bytes(s: &ParamsShape) -> u64 {
    use std::mem::size_of;
    let g1 = size_of::<blstrs::G1Affine>() as u64;
    let g2 = size_of::<blstrs::G2Affine>() as u64;
    (s.h + s.l + s.a + s.b_g1 + s.ic).saturating_mul(g1).saturating_add(s.b_g2.saturating_mul(g2))
}

/// An estimate of the pre-compiled constraints' size before they exist (no cache file to
/// measure): as large as one partition's a, b, c. Replaced by the real size once made.
pub fn pce_estimate_bytes(domain: u64) -> u64 {
    domain.saturating_mul(96)
}

/// The pre-compiled constraints' reservation before they are made: the cache file's size
/// when there is one (`measured`), else [`pce_estimate_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PceSize {
    pub bytes: u64,
    pub measured: bool,
}

/// What the engine reserves from the budget: for its life, the parameters, the PCE and one
/// GPU call's memory per GPU worker (`call_slots` of them); and one partition's
/// [`PartitionEstimate::synthesis`] per synthesis in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryPlan {
    pub params: u64,
    pub pce: Option<PceSize>,
    pub partition: PartitionEstimate,
    /// GPU workers in all (gw × devices): each runs one call at a time.
    pub call_slots: u64,
    /// The devices' upload staging (page-locked host memory, bounded per device:
    /// [`crate::backend::Backend::host_staging_bytes`]); 0 until the engine knows its backends.
    pub staging: u64,
}

impl MemoryPlan {
    /// The plan for `params` with `call_slots` GPU workers; `pce`: the synthesis path is the
    /// pre-compiled one, whose cache file (if any) is `cache`.
    pub fn new(params: &crate::params::Parameters, pce: bool, cache: Option<&std::path::Path>, call_slots: u64) -> MemoryPlan {
        Self::for_shape(&params.shape(), pce, cache, call_slots)
    }

    /// [`MemoryPlan::new`] from the shape alone (a parameter file's header).
    pub fn for_shape(shape: &ParamsShape, pce: bool, cache: Option<&std::path::Path>, call_slots: u64) -> MemoryPlan {
        let pce = pce.then(|| match cache.and_then(|c| std::fs::metadata(c).ok()).filter(|m| m.is_file()) {
            Some(m) => PceSize { bytes: m.len(), measured: true },
            None => PceSize { bytes: pce_estimate_bytes(shape.info.domain_size), measured: false },
        });
        MemoryPlan { params: params_bytes(shape), pce, partition: PartitionEstimate::for_shape(shape), call_slots: call_slots.max(1), staging: 0 }
    }

    /// The GPU workers' call memory, reserved for the engine's life.
    pub fn calls(&self) -> u64 {
        self.partition.call.saturating_mul(self.call_slots)
    }

    /// What stays reserved for the engine's life: parameters, PCE, the GPU workers' calls,
    /// the upload staging.
    pub fn resident(&self) -> u64 {
        self.params.saturating_add(self.pce.map_or(0, |p| p.bytes)).saturating_add(self.calls()).saturating_add(self.staging)
    }

    /// The least budget that proves anything: the resident items and one synthesis.
    pub fn needed(&self) -> u64 {
        self.resident().saturating_add(self.partition.synthesis())
    }

    /// Syntheses whose working sets fit at once beside the resident items in `total`.
    pub fn partitions_at_once(&self, total: u64) -> u64 {
        total.saturating_sub(self.resident()) / self.partition.synthesis().max(1)
    }

    /// The least budget that proves anything when the host copy of the parameters goes once
    /// the devices hold them (`memory.params_host = "auto"` on a device backend): the larger
    /// of the start — parameters, PCE and staging, before any synthesis — and the run — PCE,
    /// staging, the GPU workers' calls on resident queries (no gathered bases) and one
    /// synthesis. Run 131 (2^27, gw 3, 120.85 GiB): [`Self::needed`] counted the parameters
    /// (43.59 GiB) and three full calls (61.28 GiB) beside a synthesis, 134.41 GiB, and refused
    /// a run whose reservations would have held.
    pub fn needed_released(&self) -> u64 {
        let base = self.pce.map_or(0, |p| p.bytes).saturating_add(self.staging);
        let start = base.saturating_add(self.params);
        let run = base.saturating_add(self.partition.call_on_resident_queries().saturating_mul(self.call_slots)).saturating_add(self.partition.synthesis());
        start.max(run)
    }

    /// [`Self::check`] when the parameters' host copy is expected to go ([`Self::needed_released`]);
    /// the engine checks again, against its reservations, once the devices hold them.
    pub fn check_released(&self, total: u64) -> Result<(), String> {
        if total >= self.needed_released() {
            return Ok(());
        }
        let pce = self.pce.map_or(0, |p| p.bytes);
        Err(format!(
            "the RAM budget of {} cannot hold one partition: {} needed = the larger of the start (the parameters {} + the pre-compiled constraints {} + the upload staging {}, before the devices hold the parameters) and the run (the pre-compiled constraints and staging + {} GPU worker(s)' call memory on resident queries {} + one partition's working set {}); raise memory.total_budget (--ram-budget)",
            human(total),
            human(self.needed_released()),
            human(self.params),
            human(pce),
            human(self.staging),
            self.call_slots,
            human(self.partition.call_on_resident_queries().saturating_mul(self.call_slots)),
            human(self.partition.synthesis()),
        ))
    }

    /// [`Self::check_released`] when the parameters' host copy is expected to go
    /// (`params_released`), else [`Self::check`].
    pub fn check_for(&self, total: u64, params_released: bool) -> Result<(), String> {
        if params_released {
            self.check_released(total)
        } else {
            self.check(total)
        }
    }

    /// An error naming the figures when `total` cannot hold the resident items and one
    /// partition.
    pub fn check(&self, total: u64) -> Result<(), String> {
        if total >= self.needed() {
            return Ok(());
        }
        let pce = match self.pce {
            Some(p) => format!(" + the pre-compiled constraints {} ({})", human(p.bytes), if p.measured { "their cache file's size" } else { "estimated as one partition's a/b/c until they are made" }),
            None => String::new(),
        };
        let staging = if self.staging > 0 { format!(" + the devices' upload staging {} (pinned)", human(self.staging)) } else { String::new() };
        Err(format!(
            "the RAM budget of {} cannot hold one partition: {} needed = the parameters {}{pce}{staging} + {} GPU worker(s)' call memory {} (MSM preparation and bases, {} each) + one partition's working set {} (a/b/c {}, witness, densities and B preparation {}); raise memory.total_budget (--ram-budget){}",
            human(total),
            human(self.needed()),
            human(self.params),
            self.call_slots,
            human(self.calls()),
            human(self.partition.call),
            human(self.partition.synthesis()),
            human(self.partition.abc),
            human(self.partition.rest),
            if self.pce.is_some() { " or use synthesis = \"circuit\"" } else { "" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    #[test]
    fn a_wait_that_is_told_to_stop_leaves_the_queue_and_one_that_is_not_gets_its_bytes() {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        let b = RamBudget::new(100);
        let held = b.reserve("first", 80).unwrap();
        // Told to stop while it waits: out of the queue, nothing reserved.
        let stop = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (b, stop) = (b.clone(), stop.clone());
            std::thread::spawn(move || b.reserve_unless("whole", 50, std::time::Duration::from_millis(1), &|| stop.load(SeqCst)).map(|r| r.map(|r| r.bytes())))
        };
        while b.waiting() == 0 {
            std::thread::yield_now();
        }
        stop.store(true, SeqCst);
        assert_eq!(waiter.join().unwrap().unwrap(), None);
        assert_eq!((b.reserved(), b.waiting()), (80, 0), "stopped: out of the queue, nothing taken");
        // Not told: it waits until the bytes are given back, then has them.
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || b.reserve_unless("whole", 50, std::time::Duration::from_millis(1), &|| false).map(|r| r.map(|r| r.bytes())))
        };
        while b.waiting() == 0 {
            std::thread::yield_now();
        }
        drop(held);
        assert_eq!(waiter.join().unwrap().unwrap(), Some(50));
    }

    #[test]
    fn reservations_add_up_and_drop_gives_back() {
        let b = RamBudget::new(100);
        let r1 = b.reserve("a", 40).unwrap();
        let r2 = b.try_reserve("b", 60).unwrap();
        assert_eq!((b.reserved(), b.peak()), (100, 100));
        assert!(matches!(b.try_reserve("c", 1), Err(BudgetError::WouldBlock { needed: 1, free: 0, .. })));
        drop(r1);
        assert_eq!(b.reserved(), 60);
        drop(r2);
        assert_eq!((b.reserved(), b.peak()), (0, 100));
        let zero = b.reserve("zero", 0).unwrap();
        assert_eq!(zero.bytes(), 0);
    }

    #[test]
    fn two_phase_release() {
        let b = RamBudget::new(100);
        let mut whole = b.reserve("partition", 90).unwrap();
        let abc = whole.split_off(60);
        assert_eq!((whole.bytes(), abc.bytes(), b.reserved()), (30, 60, 90));
        drop(abc);
        assert_eq!(b.reserved(), 30);
        assert_eq!(whole.release(10), 10);
        assert_eq!(whole.release(1000), 20, "releases at most what it holds");
        assert_eq!((whole.bytes(), b.reserved()), (0, 0));
        drop(whole);
        assert_eq!(b.reserved(), 0, "nothing is given back twice");
    }

    #[test]
    fn a_request_larger_than_the_budget_is_an_error_not_a_deadlock() {
        let b = RamBudget::new(100);
        let e = b.reserve("one partition", 101).unwrap_err();
        assert!(matches!(e, BudgetError::TooLarge { needed: 101, total: 100, .. }), "{e}");
        assert!(e.to_string().contains("one partition") && e.to_string().contains("101 B"), "{e}");
        let params = b.reserve_resident("parameters", 70).unwrap();
        let e = b.reserve("one partition", 40).unwrap_err();
        assert!(matches!(e, BudgetError::TooLarge { resident: 70, .. }), "{e}");
        // What the requester holds counts too (it cannot release it while it waits).
        let held = b.reserve("mine", 20).unwrap();
        assert!(matches!(b.reserve_with("more", 15, false, held.bytes()), Err(BudgetError::TooLarge { holding: 20, .. })));
        drop((params, held));
        assert_eq!(b.resident(), 0);
    }

    #[test]
    fn a_waiter_wakes_when_bytes_are_released() {
        let b = RamBudget::new(100);
        let held = b.reserve("first", 80).unwrap();
        let b2 = b.clone();
        let got = Arc::new(AtomicBool::new(false));
        let g2 = got.clone();
        let t = std::thread::spawn(move || {
            let r = b2.reserve("second", 50).unwrap();
            g2.store(true, Ordering::SeqCst);
            r
        });
        // It waits while the first holds 80.
        let t0 = Instant::now();
        while b.waiting() == 0 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(b.waiting(), 1);
        std::thread::sleep(Duration::from_millis(30));
        assert!(!got.load(Ordering::SeqCst));
        held.release(30); // 50 held: 50 more fit
        let r = t.join().unwrap();
        assert!(got.load(Ordering::SeqCst));
        assert_eq!((r.bytes(), b.reserved(), b.waiting()), (50, 100, 0));
    }

    #[test]
    fn waiters_are_served_in_order_and_close_wakes_them() {
        let b = RamBudget::new(100);
        let held = b.reserve("first", 100).unwrap();
        let big = {
            let b = b.clone();
            std::thread::spawn(move || b.reserve("big", 90).map(|r| r.bytes()))
        };
        while b.waiting() < 1 {
            std::thread::yield_now();
        }
        let small = {
            let b = b.clone();
            std::thread::spawn(move || b.reserve("small", 10).map(|r| r.bytes()))
        };
        while b.waiting() < 2 {
            std::thread::yield_now();
        }
        // 20 free: the small one would fit but waits behind the big one (FIFO).
        held.release(20);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!((b.waiting(), b.reserved()), (2, 80));
        assert!(matches!(b.try_reserve("jump", 5), Err(BudgetError::WouldBlock { .. })), "try_reserve does not jump the queue");
        b.close();
        assert!(matches!(big.join().unwrap(), Err(BudgetError::Closed { .. })));
        assert!(matches!(small.join().unwrap(), Err(BudgetError::Closed { .. })));
        assert!(matches!(b.reserve("late", 1), Err(BudgetError::Closed { .. })));
    }

    #[test]
    fn a_holder_does_not_queue_behind_those_waiting_for_its_bytes() {
        let b = RamBudget::new(100);
        let mine = b.reserve("builder's partition", 60).unwrap();
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || b.reserve("next partition", 60).map(|r| r.bytes()))
        };
        while b.waiting() < 1 {
            std::thread::yield_now();
        }
        // 40 free; the waiter needs 60 (ours). Queued behind it we would wait forever.
        let more = b.reserve_with("pce beyond its estimate", 30, true, mine.bytes()).unwrap();
        assert_eq!((b.reserved(), b.resident()), (90, 30));
        drop(mine);
        drop(more);
        assert_eq!(waiter.join().unwrap(), Ok(60));
    }

    /// Many threads reserving, splitting and releasing at random: the reserved total never
    /// exceeds the budget (checked by the observer at every change) and ends at zero.
    #[test]
    fn no_over_commit_under_concurrent_requests() {
        use rand::{Rng, SeedableRng};
        const TOTAL: u64 = 1000;
        let seen_max = Arc::new(AtomicU64::new(0));
        let over = Arc::new(AtomicBool::new(false));
        let (m, o) = (seen_max.clone(), over.clone());
        let b = RamBudget::with_observer(
            TOTAL,
            Some(Box::new(move |r| {
                m.fetch_max(r, Ordering::SeqCst);
                if r > TOTAL {
                    o.store(true, Ordering::SeqCst);
                }
            })),
        );
        let threads: Vec<_> = (0..12u64)
            .map(|t| {
                let b = b.clone();
                std::thread::spawn(move || {
                    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(t);
                    for _ in 0..300 {
                        let n = rng.gen_range(1..=400);
                        let mut r = if rng.gen_bool(0.3) {
                            match b.try_reserve("try", n) {
                                Ok(r) => r,
                                Err(_) => continue,
                            }
                        } else {
                            b.reserve("wait", n).unwrap()
                        };
                        assert!(b.reserved() <= TOTAL);
                        let part = r.split_off(rng.gen_range(0..=n));
                        if rng.gen_bool(0.5) {
                            std::thread::yield_now();
                        }
                        drop(part);
                        r.release(rng.gen_range(0..=n));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(!over.load(Ordering::SeqCst), "reserved exceeded the budget");
        assert!(seen_max.load(Ordering::SeqCst) <= TOTAL);
        assert!(seen_max.load(Ordering::SeqCst) > TOTAL / 2, "the stress test should fill the budget");
        assert_eq!((b.reserved(), b.waiting()), (0, 0));
    }

    proptest::proptest! {
        /// Any sequence of reserve / split / release / drop on one thread: the budget's
        /// total equals the sum of the live reservations and never exceeds the budget.
        #[test]
        fn bookkeeping_matches_live_reservations(ops in proptest::collection::vec((0u8..4, 0u64..70), 1..60)) {
            let b = RamBudget::new(100);
            let mut live: Vec<Reservation> = Vec::new();
            for (op, n) in ops {
                match op {
                    0 => if let Ok(r) = b.try_reserve("r", n) { live.push(r) },
                    1 => if let Some(r) = live.last_mut() { let s = r.split_off(n); live.push(s) },
                    2 => if let Some(r) = live.first() { r.release(n); },
                    _ => { if !live.is_empty() { live.swap_remove((n as usize) % live.len()); } }
                }
                let sum: u64 = live.iter().map(|r| r.bytes()).sum();
                proptest::prop_assert_eq!(sum, b.reserved());
                proptest::prop_assert!(b.reserved() <= 100);
            }
        }
    }

    #[test]
    fn try_grow_and_byte_sizes() {
        let b = RamBudget::new(100);
        let r = b.reserve_resident("pce", 30).unwrap();
        assert!(r.try_grow(20));
        assert_eq!((r.bytes(), b.reserved(), b.resident()), (50, 50, 50));
        assert!(!r.try_grow(51));
        drop(r);
        assert_eq!((b.reserved(), b.resident()), (0, 0));

        assert_eq!("5GiB".parse::<ByteSize>().unwrap(), ByteSize::gib(5));
        assert_eq!("1.5 GiB".parse::<ByteSize>().unwrap().0, 3 << 29);
        assert_eq!("512MiB".parse::<ByteSize>().unwrap().0, 512 << 20);
        assert_eq!("64GB".parse::<ByteSize>().unwrap().0, 64_000_000_000);
        for bad in ["5", "five GiB", "5 parsecs", "-1GiB", "1e30GiB"] {
            assert!(bad.parse::<ByteSize>().is_err(), "{bad}");
        }
        assert_eq!(ByteSize::gib(5).to_string(), "5GiB");
        assert_eq!(parse_cli_budget("6").unwrap(), Budget::Bytes(ByteSize::gib(6)));
        assert_eq!(parse_cli_budget("auto").unwrap(), Budget::Auto);
        assert!("6".parse::<Budget>().is_err(), "the TOML wants a unit");
    }

    #[test]
    fn auto_is_memtotal_less_the_margin() {
        let m = MemoryConfig::default();
        assert_eq!(m.resolve(Some(20 << 30)).unwrap(), (15 << 30, None));
        assert!(m.resolve(Some(4 << 30)).unwrap_err().contains("safety_margin"));
        assert!(m.resolve(None).is_err());
        let fixed = MemoryConfig { total_budget: Budget::Bytes(ByteSize::gib(32)), ..Default::default() };
        let (b, warn) = fixed.resolve(Some(16 << 30)).unwrap();
        assert_eq!(b, 32 << 30);
        assert!(warn.unwrap().contains("larger than this machine's RAM"));
        assert_eq!(fixed.resolve(Some(64 << 30)).unwrap().1, None);
    }

    #[test]
    fn a_budget_too_small_names_what_is_needed_and_what_there_is() {
        let plan = MemoryPlan {
            params: 3 << 30,
            pce: Some(PceSize { bytes: 1 << 30, measured: false }),
            partition: PartitionEstimate { abc: 12 << 30, rest: 2 << 30, call: 1 << 30, call_bases: 0 },
            call_slots: 2,
            staging: 0,
        };
        // Resident: parameters 3 + PCE 1 + two GPU workers' calls 2 = 6 GiB; a synthesis 14.
        assert_eq!((plan.resident(), plan.needed()), (6 << 30, 20 << 30));
        plan.check(20 << 30).unwrap();
        assert_eq!(plan.partitions_at_once(48 << 30), 3);
        let e = plan.check(16 << 30).unwrap_err();
        for part in ["the RAM budget of 16.00 GiB", "20.00 GiB needed", "the parameters 3.00 GiB", "pre-compiled constraints 1.00 GiB", "2 GPU worker(s)' call memory 2.00 GiB", "working set 14.00 GiB", "a/b/c 12.00 GiB"] {
            assert!(e.contains(part), "{part}: {e}");
        }
        // The upload staging is resident too, and named.
        let staged = MemoryPlan { staging: 1 << 30, ..plan };
        assert_eq!(staged.needed(), 21 << 30);
        let e = staged.check(20 << 30).unwrap_err();
        assert!(e.contains("upload staging 1.00 GiB (pinned)") && e.contains("21.00 GiB needed"), "{e}");
        // With the parameters' host copy going once the devices hold them: the larger of the
        // start (3 + 1 + staging 1 = 5 GiB) and the run (1 + 1 + two calls on resident
        // queries, 1 − 0.5 each = 1, + a synthesis 14 = 17 GiB).
        let released = MemoryPlan { partition: PartitionEstimate { call_bases: 1 << 29, ..staged.partition }, ..staged };
        assert_eq!(released.needed_released(), 17 << 30);
        released.check_released(17 << 30).unwrap();
        let e = released.check_released(16 << 30).unwrap_err();
        assert!(e.contains("17.00 GiB needed") && e.contains("call memory on resident queries 1.00 GiB") && e.contains("the parameters 3.00 GiB"), "{e}");
        // Parameters larger than the run's needs: the start decides.
        let big = MemoryPlan { params: 40 << 30, ..released };
        assert_eq!(big.needed_released(), 42 << 30);
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(3 << 20), "3.0 MiB");
    }

    #[test]
    fn the_estimate_follows_the_shape() {
        // The reference's PoRep partition: n = 2^27, ~130M constraints; a/b/c ~4 GiB each.
        let e = PartitionEstimate::from_shape(1 << 27, 1 + 2, 0, 0, 0, 0);
        assert_eq!(e.abc, 3 * (1 << 27) * 32);
        assert_eq!(e.abc, 12 << 30);
        let e = PartitionEstimate::from_shape(1 << 10, 3, 500, 400, 300, 500);
        // Densities: three bit vectors of u64 words, 2·⌈500/64⌉ + ⌈3/64⌉ = 2·8 + 1 = 17 words
        // (the shared formula; this estimate used ⌈(2·500 + 3)/64⌉ = 16 words before, 8 B less).
        // The witness, the densities and the B preparation stay with the partition; the A and
        // L preparation and the largest gathered bases (B in G2: 300 · 192 B) are the call's.
        assert_eq!(e.rest, 503 * 32 + 17 * 8 + 300 * 36);
        assert_eq!(e.call, 900 * 36 + 300 * 192);
        assert_eq!(e.total(), e.abc + e.rest + e.call);
    }
}
