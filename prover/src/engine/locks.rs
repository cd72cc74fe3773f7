//! The per-device locks and the [`Gate`] the engine hands to backends. Every acquisition
//! is two spans: `lock_wait` (asking) and `lock_hold` (holding), with the lock's name in
//! the `lock` arg (`whole`, `compute`, `alloc`).

use timeline::event::kind;
use std::sync::{Mutex, MutexGuard};

use tracing::info_span;

use super::config::LockMode;
use crate::backend::{Gate, GateGuard};

/// The locks of one device.
#[derive(Default)]
pub struct DeviceLocks {
    pub compute: Mutex<()>,
    pub alloc: Mutex<()>,
}

/// A held lock. Fields drop in order: the `lock_hold` span closes before the lock is
/// released, so hold spans of one lock never overlap in the timeline.
pub struct Held<'a> {
    _hold: tracing::Span,
    _guard: MutexGuard<'a, ()>,
}

/// Take `m`, recording the wait and the hold.
pub fn acquire<'a>(m: &'a Mutex<()>, name: &'static str) -> Held<'a> {
    let wait = info_span!(kind::LOCK_WAIT, lock = name);
    let guard = {
        let _e = wait.enter();
        m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    drop(wait);
    Held { _hold: info_span!(kind::LOCK_HOLD, lock = name), _guard: guard }
}

/// What a backend's `alloc()` / `compute()` lock, by mode, and the partition's share of the
/// RAM budget whose a/b/c part the backend gives back ([`Gate::abc_release`]).
pub struct EngineGate<'a> {
    pub mode: LockMode,
    pub locks: &'a DeviceLocks,
    pub(crate) ram: Option<&'a super::PartitionRam>,
    /// The GPU workers' pool for their CPU work (`prep_threads`), or `None`.
    pub(crate) cpu_pool: Option<&'a rayon::ThreadPool>,
}

impl Gate for EngineGate<'_> {
    fn alloc(&self) -> GateGuard<'_> {
        match self.mode {
            LockMode::TwoLock => GateGuard::holding(acquire(&self.locks.alloc, "alloc")),
            _ => GateGuard::none(),
        }
    }
    fn compute(&self) -> GateGuard<'_> {
        match self.mode {
            LockMode::Kernels | LockMode::TwoLock => GateGuard::holding(acquire(&self.locks.compute, "compute")),
            // `whole`: the engine already holds the device lock around the whole call.
            LockMode::Whole => GateGuard::none(),
        }
    }
    fn abc_release(&self) -> Box<dyn FnOnce() + Send> {
        let r = self.ram.and_then(|r| r.take_abc());
        Box::new(move || drop(r))
    }
    fn cpu_pool(&self) -> Option<&rayon::ThreadPool> {
        self.cpu_pool
    }
}
