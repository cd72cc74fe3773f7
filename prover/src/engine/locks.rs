//! The per-device locks and the [`Gate`] the engine hands to backends. Every acquisition
//! is two spans: `lock_wait` (asking) and `lock_hold` (holding), with the lock's name in
//! the `lock` arg (`whole`, `compute`, `alloc`).

use timeline::event::kind;
use std::sync::{Condvar, Mutex, MutexGuard};

use tracing::info_span;

use super::config::LockMode;
use crate::backend::{Gate, GateGuard};

/// The locks of one device.
#[derive(Default)]
pub struct DeviceLocks {
    pub compute: Mutex<()>,
    pub alloc: Mutex<()>,
}

/// Calls of one device whose host memory is reserved (the engine's `device_call_slots`): a call
/// takes a permit before it starts and gives it back when its device part ends, so that a
/// call placement did not count (a retry aimed at the device) waits instead of holding host
/// memory nobody reserved.
pub struct CallPermits {
    max: u64,
    used: Mutex<u64>,
    freed: Condvar,
}

/// A call's permit, given back when dropped.
pub struct Permit<'a>(&'a CallPermits);

impl CallPermits {
    pub fn new(max: u64) -> CallPermits {
        CallPermits { max: max.max(1), used: Mutex::new(0), freed: Condvar::new() }
    }

    /// Wait for a permit.
    pub fn acquire(&self) -> Permit<'_> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        while *used >= self.max {
            used = self.freed.wait(used).unwrap_or_else(|p| p.into_inner());
        }
        *used += 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut used = self.0.used.lock().unwrap_or_else(|p| p.into_inner());
        *used = used.saturating_sub(1);
        drop(used);
        self.0.freed.notify_one();
    }
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
}

#[cfg(test)]
mod tests {
    use super::CallPermits;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_call_beyond_the_permits_waits_for_one_to_end() {
        let permits = Arc::new(CallPermits::new(1));
        let first = permits.acquire();
        let (p, started) = (permits.clone(), Arc::new(AtomicU64::new(0)));
        let s = started.clone();
        let h = std::thread::spawn(move || {
            let _second = p.acquire();
            s.store(1, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(started.load(Ordering::SeqCst), 0, "the second call waits while the first holds the only permit");
        drop(first);
        h.join().unwrap();
        assert_eq!(started.load(Ordering::SeqCst), 1);
        // Zero permits asked: one all the same (a device always proves one call at a time).
        let zero = CallPermits::new(0);
        drop(zero.acquire());
    }
}
