//! The engine's pre-compiled constraints (`synthesis = "pce"`): one set per engine (its
//! parameters are for one circuit shape), shared by every synthesis worker through an
//! `Arc`, made on first use by the worker that claims it (span `pce_build` inside that
//! partition's `synthesis`): read from the cache next to the parameter file when it is
//! there and for these parameters, else extracted from that partition's circuit (which
//! yields its witness too) and written there. Partitions that start while it is being read
//! from its cache wait for it (span `pce_wait`): reading is short next to a synthesis on the
//! circuit path (run 71 at 2^27: 25.6 s against 92.0 s). Partitions that start while it is
//! being extracted take the circuit path rather than wait: the extraction is CPU work of the
//! same kind and size. A corrupt cache fails every partition with an error naming the file
//! (or is rebuilt, `pce_rebuild_corrupt`).
//!
//! Its share of the RAM budget is reserved at the engine's start (the cache file's size, or
//! an estimate) and set to its real size once made: the excess is given back, a shortfall
//! reserved (waiting for it if need be); when even that can never fit, the PCE is dropped
//! with a warning and every partition takes the circuit path.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

use rayon::ThreadPool;
use timeline::event::{arg, kind};
use tracing::field::Empty;
use tracing::info_span;

use super::budget::{human, BudgetError, Reservation};
use super::{PartitionCircuit, Shared};
use crate::backend::ProveError;
use crate::pce::cache::{self, Lookup, PceKey};
use crate::pce::{self, Pce, PceError, PceRun};
use crate::synthesis::{Evals, ProvingAssignment, SizeHint};

enum State {
    Empty,
    /// Being read from its cache: other partitions wait.
    Loading,
    /// Being extracted: other partitions take the circuit path.
    Building,
    Ready(Arc<Pce>),
    Failed(String),
    /// Too large for the RAM budget: partitions take the circuit path.
    Off,
}

/// The slot of the engine's PCE.
pub struct PceSlot {
    state: Mutex<State>,
    /// Signalled whenever the state changes (partitions waiting while it is `Loading`).
    changed: Condvar,
    /// The parameter file (the cache is `<it>.pce`); `None`: no cache.
    params_path: Option<PathBuf>,
    /// Its share of the RAM budget.
    ram: Mutex<Option<Reservation>>,
}

/// What a worker found in the slot.
enum Claim<'a> {
    Ready(Arc<Pce>),
    /// Another worker is extracting it.
    Busy,
    /// Another worker is reading it from its cache.
    Wait,
    Failed(String),
    /// This worker makes it.
    Mine(BuildGuard<'a>),
}

/// The right to fill the slot; dropped without filling it (an error, a panic), it empties
/// the slot again so that a later partition tries again.
struct BuildGuard<'a> {
    slot: &'a PceSlot,
    done: bool,
}

impl BuildGuard<'_> {
    fn set(mut self, s: State) {
        self.slot.set(s);
        self.done = true;
    }

    /// The state while the slot is still this worker's (`Loading`, `Building`).
    fn mark(&self, s: State) {
        self.slot.set(s);
    }
}

impl Drop for BuildGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.slot.set(State::Empty);
        }
    }
}

impl PceSlot {
    pub fn new(params_path: Option<PathBuf>, ram: Option<Reservation>) -> Self {
        PceSlot { state: Mutex::new(State::Empty), changed: Condvar::new(), params_path, ram: Mutex::new(ram) }
    }

    /// A slot holding `pce` from the start (made by the caller: the in-process setup of
    /// `prove --setup-on-device` extracts it anyway); no cache file. `ram`: its share of the
    /// budget, as for [`PceSlot::new`].
    pub fn with_pce(pce: Arc<Pce>, ram: Option<Reservation>) -> Self {
        PceSlot { state: Mutex::new(State::Ready(pce)), changed: Condvar::new(), params_path: None, ram: Mutex::new(ram) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, s: State) {
        *self.lock() = s;
        self.changed.notify_all();
    }

    /// Block while another worker reads the PCE from its cache.
    fn wait_while_loading(&self) {
        let s = self.lock();
        drop(self.changed.wait_while(s, |s| matches!(s, State::Loading)).unwrap_or_else(|p| p.into_inner()));
    }

    fn claim(&self) -> Claim<'_> {
        let mut s = self.lock();
        match &*s {
            State::Ready(p) => Claim::Ready(p.clone()),
            State::Loading => Claim::Wait,
            State::Building | State::Off => Claim::Busy,
            State::Failed(e) => Claim::Failed(e.clone()),
            // With a parameter file the claimer reads the cache first: `Loading` from the
            // claim on, so that a partition claiming before the read starts waits too
            // (CI on 2 cores saw one slip through to the circuit path in that window).
            State::Empty => {
                *s = if self.params_path.is_some() { State::Loading } else { State::Building };
                Claim::Mine(BuildGuard { slot: self, done: false })
            }
        }
    }

    /// The PCE, once made.
    pub fn get(&self) -> Option<Arc<Pce>> {
        match &*self.lock() {
            State::Ready(p) => Some(p.clone()),
            _ => None,
        }
    }
}

/// Synthesise one partition on the pre-compiled path (see the module docs); `held`: the
/// bytes of the RAM budget this partition holds; `abc`: the pooled vectors its products
/// write into (given only once the PCE is ready, so they are always used).
pub(super) fn synthesize(sh: &Shared, circuit: Box<dyn PartitionCircuit>, hint: SizeHint, pool: Option<&ThreadPool>, held: u64, abc: Option<[Evals; 3]>) -> Result<ProvingAssignment, ProveError> {
    let run = PceRun { pool, chunk_rows: pce::DEFAULT_CHUNK_ROWS };
    let mut claim = sh.pce.claim();
    let mut wait = None;
    while matches!(claim, Claim::Wait) {
        let span = wait.get_or_insert_with(|| info_span!(kind::PCE_WAIT));
        span.in_scope(|| sh.pce.wait_while_loading());
        claim = sh.pce.claim();
    }
    drop(wait);
    match claim {
        // `Wait` cannot come out of the loop above; taken as `Busy` (the circuit path).
        Claim::Busy | Claim::Wait => circuit.synthesize(hint),
        Claim::Failed(e) => Err(ProveError::Pce(e)),
        Claim::Ready(p) => {
            let span = info_span!(kind::SYNTHESIS, constraints = p.num_constraints() as u64, path = "pce", cpu_ns = Empty, threads = Empty);
            let _e = span.enter();
            let clock = own_clock(sh, pool);
            let w = circuit.witness(p.num_inputs(), p.num_aux(), pool)?;
            let r = pce::assemble_into(w, &p, run, abc);
            record_cpu(&span, clock);
            Ok(r?)
        }
        Claim::Mine(guard) => {
            let span = info_span!(kind::SYNTHESIS, constraints = Empty, path = "pce", cpu_ns = Empty, threads = Empty);
            let _e = span.enter();
            let clock = own_clock(sh, pool);
            let (p, w) = build(sh, circuit, guard, held, pool)?;
            span.record("constraints", p.num_constraints() as u64);
            let r = pce::assemble(w, &p, run);
            record_cpu(&span, clock);
            Ok(r?)
        }
    }
}

/// A clock on the synthesis's pool when the pool is this worker's own (not
/// `synthesis_shared_pool`, where the other syntheses' work would count too).
fn own_clock<'a>(sh: &Shared, pool: Option<&'a ThreadPool>) -> Option<crate::cpu_time::PoolClock<'a>> {
    pool.filter(|_| !sh.cfg.synthesis_shared_pool).map(crate::cpu_time::PoolClock::start)
}

/// The synthesis span's `cpu_ns` (its pool's CPU time over the synthesis, witness and
/// products: [`crate::cpu_time::PoolClock`]) and `threads`, so that its CPU demand is measured
/// (cpu_ns ÷ wall time) instead of inferred from the busy-cores counter.
fn record_cpu(span: &tracing::Span, clock: Option<crate::cpu_time::PoolClock<'_>>) {
    if let Some(c) = clock {
        span.record("cpu_ns", c.ns());
        span.record("threads", c.threads() as u64);
    }
}

/// Make the PCE (span `pce_build`): from the cache, else by extraction from `circuit`
/// (then its witness comes back too). On a cache hit the circuit's witness is generated
/// here as well, so that the caller always gets one.
fn build(sh: &Shared, circuit: Box<dyn PartitionCircuit>, guard: BuildGuard<'_>, held: u64, pool: Option<&ThreadPool>) -> Result<(Arc<Pce>, pce::Witness), ProveError> {
    let span = info_span!(kind::PCE_BUILD, source = tracing::field::Empty, { arg::BYTES } = tracing::field::Empty, path = tracing::field::Empty);
    let entered = span.enter();
    let cache = sh.pce.params_path.as_deref().and_then(|params| match PceKey::for_params(&sh.params.info, Some(params)) {
        Ok(key) => Some((cache::cache_path(params), key)),
        Err(e) => {
            sh.warn(&format!("no PCE cache: {e}"));
            None
        }
    });
    match &cache {
        Some((path, _)) => {
            span.record("path", path.display().to_string());
        }
        // No cache to read: the waiters take the circuit path.
        None => guard.mark(State::Building),
    }
    let found = match &cache {
        Some((path, key)) => {
            guard.mark(State::Loading);
            let found = cache::read(path, key);
            if !matches!(found, Ok(Lookup::Hit(_))) {
                guard.mark(State::Building);
            }
            found
        }
        None => Ok(Lookup::Missing),
    };
    let rebuild_why = match found {
        Ok(Lookup::Hit(p)) => {
            let p = Arc::new(p);
            span.record("source", "cache");
            span.record(arg::BYTES, p.matrix_bytes());
            let state = fit_budget(sh, &p, held, &guard);
            guard.set(state);
            drop(entered);
            let w = circuit.witness(p.num_inputs(), p.num_aux(), pool)?;
            return Ok((p, w));
        }
        Ok(Lookup::Missing) => None,
        Ok(Lookup::Stale(why)) => Some(why),
        Err(e @ PceError::Corrupt { .. }) if sh.cfg.pce_rebuild_corrupt => {
            sh.warn(&format!("{e}; rebuilding it"));
            Some(e.to_string())
        }
        Err(e) => {
            let msg = e.to_string();
            guard.set(State::Failed(msg.clone()));
            return Err(ProveError::Pce(msg));
        }
    };
    let (p, w) = circuit.extract_with_witness(pool)?;
    let p = Arc::new(p);
    span.record("source", if rebuild_why.is_some() { "rebuilt" } else { "extracted" });
    span.record(arg::BYTES, p.matrix_bytes());
    if let Some((path, key)) = &cache {
        if let Some(why) = &rebuild_why {
            sh.info(&format!("{}: the PCE cache was {why}; rebuilt", path.display()));
        }
        if let Err(e) = cache::write(&p, key, path) {
            sh.warn(&format!("could not write the PCE cache: {e}"));
        }
    }
    let state = fit_budget(sh, &p, held, &guard);
    guard.set(state);
    Ok((p, w))
}

/// Set the PCE's reservation to its real size (see the module docs): the state the slot
/// takes, `Ready` or, when it can never fit, `Off`. Before it blocks for more of the budget
/// the slot leaves `Loading`: partitions waiting in `pce_wait` hold their own reservations,
/// and waiting on them while they wait on this would never end; they take the circuit path.
fn fit_budget(sh: &Shared, p: &Arc<Pce>, held: u64, guard: &BuildGuard<'_>) -> State {
    let real = p.heap_bytes();
    let mut slot = sh.pce.ram.lock().unwrap_or_else(|e| e.into_inner());
    let have = slot.as_ref().map_or(0, |r| r.bytes());
    if real <= have {
        if let Some(r) = slot.as_ref() {
            r.release(have - real);
        }
        return State::Ready(p.clone());
    }
    let extra = real - have;
    if slot.as_ref().is_some_and(|r| r.try_grow(extra)) {
        return State::Ready(p.clone());
    }
    guard.mark(State::Building);
    let span = info_span!(kind::RAM_WAIT, { arg::BYTES } = extra, what = "pce");
    let _e = span.enter();
    match sh.ram.reserve_with("the pre-compiled constraints", extra, true, held) {
        Ok(more) => {
            match slot.as_mut() {
                Some(r) => r.absorb(more),
                None => *slot = Some(more),
            }
            State::Ready(p.clone())
        }
        Err(e @ BudgetError::TooLarge { .. }) => {
            sh.warn(&format!("the pre-compiled constraints are {} (reserved {}): {e}; synthesising with the circuit's code instead", human(real), human(have)));
            *slot = None;
            State::Off
        }
        Err(_) => State::Off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pce() -> Arc<Pce> {
        Arc::new(pce::extract(crate::circuit::PorepLike::new(1 << 10, 0)).unwrap())
    }

    #[test]
    fn partitions_wait_while_the_pce_is_read_and_take_the_circuit_path_while_it_is_extracted() {
        let slot = PceSlot::new(None, None);
        let Claim::Mine(guard) = slot.claim() else { panic!("the first claim makes it") };
        guard.mark(State::Building);
        assert!(matches!(slot.claim(), Claim::Busy), "extracting: the circuit path");
        guard.mark(State::Loading);
        assert!(matches!(slot.claim(), Claim::Wait), "reading the cache: wait");
        let p = pce();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                slot.wait_while_loading();
                matches!(slot.claim(), Claim::Ready(_))
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(!waiter.is_finished(), "still waiting while the cache is read");
            guard.set(State::Ready(p.clone()));
            assert!(waiter.join().unwrap(), "woken with the PCE ready");
        });
    }

    #[test]
    fn with_a_parameter_file_the_claim_itself_makes_the_others_wait() {
        let slot = PceSlot::new(Some(PathBuf::from("params.bin")), None);
        let Claim::Mine(_guard) = slot.claim() else { panic!("the first claim makes it") };
        assert!(matches!(slot.claim(), Claim::Wait), "before the read has begun, a second partition waits");
        let slot = PceSlot::new(None, None);
        let Claim::Mine(_guard) = slot.claim() else { panic!("the first claim makes it") };
        assert!(matches!(slot.claim(), Claim::Busy), "no cache to read: the circuit path");
    }

    #[test]
    fn a_reader_that_gives_up_wakes_the_waiters_to_try_again() {
        let slot = PceSlot::new(None, None);
        let Claim::Mine(guard) = slot.claim() else { panic!("the first claim makes it") };
        guard.mark(State::Loading);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                slot.wait_while_loading();
                matches!(slot.claim(), Claim::Mine(_))
            });
            std::thread::sleep(Duration::from_millis(20));
            drop(guard); // an error while reading: the slot empties
            assert!(waiter.join().unwrap(), "the waiter claims it next");
        });
    }
}
