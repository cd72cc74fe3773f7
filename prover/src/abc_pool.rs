//! A partition's a, b and c kept from one partition to the next, page-locked once
//! (`cuda.abc_upload = "pooled"`).
//!
//! Why: at 2^27 a partition's a/b/c are 12 GiB. Staged, the GPU worker copies them into
//! page-locked staging at 5.6–8.8 GB/s beside the syntheses (1.4–2.4 s a partition, runs
//! 125/129/134); registered per partition (`"registered"`), the copy engine reads them in
//! place but every partition locks and unlocks 12 GiB, and the other uploads' fills slow 3–6×
//! meanwhile (runs 140–143). Here the vectors the products write are page-locked once, when
//! the pool makes them, and come back to the pool when the device has them: no fill, and no
//! lock or unlock per partition.
//!
//! Ownership is what keeps this safe: a pooled vector lives in an [`Evals::Pooled`] lease,
//! whose drop — on every path, a failure's included — hands the vector back to the pool; the
//! pool alone frees it, after unlocking it. A lease whose vector was reallocated (pushed past
//! its capacity) is noticed by its address when it comes back and is never again taken for
//! locked memory ([`Evals::pinned`]).
//!
//! The RAM budget: a set of three vectors carries the budget reservation of its a/b/c
//! (`ram`), in a partition and idle in the pool alike, so the budget counts the pooled memory
//! exactly once; a synthesis that takes an idle set reserves only the rest of its working set.
//! A synthesis waiting for its whole working set gives up the wait as soon as a set is idle
//! ([`AbcPool::has_idle_set`]) and takes it: idle sets never hold memory a waiting synthesis
//! needs, and are never freed for it (which would lock another set, as `"registered"` does
//! every partition).

use std::sync::{Arc, Mutex};

use blstrs::Scalar;

/// Something whose drop gives a resource back: a page lock (it unlocks), a budget
/// reservation (it releases). Kept as a box so that this module needs neither the device
/// nor the engine.
pub type Keep = Box<dyn Send + Sync>;

/// Page-locks `len` bytes at `ptr` for every device's copies; `None` when it cannot (the
/// vector is then used unlocked: staged like any other). The returned keep unlocks when
/// dropped, after every copy that reads the memory is done.
pub type Pinner = Arc<dyn Fn(*mut std::ffi::c_void, usize) -> Option<Keep> + Send + Sync>;

/// One of a, b, c: a vector of its own, or one lent by an [`AbcPool`] (given back when
/// dropped). Reads and writes go through the vector either way.
pub enum Evals {
    Owned(Vec<Scalar>),
    Pooled(Lease),
}

impl Evals {
    /// The vector itself, taken out (a pooled one is copied: its memory stays the pool's).
    pub fn into_vec(self) -> Vec<Scalar> {
        match self {
            Evals::Owned(v) => v,
            Evals::Pooled(l) => l.v.clone(),
        }
    }

    /// Whether the vector is a page-locked pooled one, still in the memory that was locked
    /// (so a device may read it in place).
    pub fn pinned(&self) -> bool {
        match self {
            Evals::Owned(_) => false,
            Evals::Pooled(l) => l.slab.as_ref().is_some_and(|s| s.lock.is_some()) && l.intact(),
        }
    }
}

impl Default for Evals {
    fn default() -> Self {
        Evals::Owned(Vec::new())
    }
}

impl From<Vec<Scalar>> for Evals {
    fn from(v: Vec<Scalar>) -> Self {
        Evals::Owned(v)
    }
}

impl std::ops::Deref for Evals {
    type Target = Vec<Scalar>;
    fn deref(&self) -> &Vec<Scalar> {
        match self {
            Evals::Owned(v) => v,
            Evals::Pooled(l) => &l.v,
        }
    }
}

impl std::ops::DerefMut for Evals {
    fn deref_mut(&mut self) -> &mut Vec<Scalar> {
        match self {
            Evals::Owned(v) => v,
            Evals::Pooled(l) => &mut l.v,
        }
    }
}

/// A copy is a vector of its own (the pool's memory is lent once).
impl Clone for Evals {
    fn clone(&self) -> Self {
        Evals::Owned(self.to_vec())
    }
}

impl PartialEq for Evals {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl std::fmt::Debug for Evals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if matches!(self, Evals::Pooled(_)) { "Pooled" } else { "Owned" };
        write!(f, "{what}({} values)", self.len())
    }
}

/// A pooled vector lent out: given back to its pool when dropped.
pub struct Lease {
    v: Vec<Scalar>,
    slab: Option<Slab>,
    pool: Arc<AbcPool>,
}

impl Lease {
    /// Whether the vector is still in the memory the pool made (not reallocated).
    fn intact(&self) -> bool {
        self.slab.as_ref().is_some_and(|s| s.made(&self.v))
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(mut slab) = self.slab.take() {
            slab.v = std::mem::take(&mut self.v);
            self.pool.put(slab);
        }
    }
}

/// A vector the pool made, with its page lock and its share of the budget. Fields drop in
/// order: the lock goes before the memory it locks, the budget share after the memory.
struct Slab {
    lock: Option<Keep>,
    v: Vec<Scalar>,
    _ram: Option<Keep>,
    /// Where the pool made it (a vector that comes back elsewhere was reallocated).
    ptr: usize,
    cap: usize,
}

impl Slab {
    /// Whether `v` is in the memory this slab was made with.
    fn made(&self, v: &Vec<Scalar>) -> bool {
        self.ptr == v.as_ptr() as usize && self.cap == v.capacity()
    }

    fn intact(&self) -> bool {
        self.made(&self.v)
    }
}

/// What a pool has made and kept.
#[derive(Default)]
struct State {
    idle: Vec<Slab>,
    /// Vectors made and not freed (idle or lent).
    made: usize,
    /// Vectors freed because they came back reallocated (not reused: their lock no longer
    /// covers them).
    spoiled: usize,
}

/// Up to `cap` vectors of `len` scalars each, page-locked by `pinner`, lent three at a time
/// (a partition's a, b, c).
pub struct AbcPool {
    state: Mutex<State>,
    /// Vectors at most (3 per partition).
    cap: usize,
    len: usize,
    pinner: Option<Pinner>,
}

/// Statistics of a pool, for the logs and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub made: usize,
    pub idle: usize,
    pub spoiled: usize,
}

impl AbcPool {
    /// A pool of at most `sets` partitions' a/b/c, `len` scalars each, locked by `pinner`
    /// (none: kept unlocked, which still saves a partition's page faults and zeroing).
    pub fn new(sets: usize, len: usize, pinner: Option<Pinner>) -> Arc<AbcPool> {
        Arc::new(AbcPool { state: Mutex::default(), cap: sets.saturating_mul(3), len, pinner })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn stats(&self) -> PoolStats {
        let s = self.lock();
        PoolStats { made: s.made, idle: s.idle.len(), spoiled: s.spoiled }
    }

    /// An idle set of three, lent (their budget share comes with them), or `None`.
    pub fn take(self: &Arc<Self>) -> Option<[Evals; 3]> {
        let mut s = self.lock();
        if s.idle.len() < 3 {
            return None;
        }
        let n = s.idle.len();
        let set: Vec<Slab> = s.idle.drain(n - 3..).collect();
        drop(s);
        Some(self.lend(set))
    }

    /// A new set of three made now, if the pool has room, carrying the budget share `ram`
    /// gives (called only then: the partition's a/b/c reservation, released after the last of
    /// the three is freed); `None` when the pool is full. Allocates and page-locks: slow (the
    /// lock touches every page), once per set.
    pub fn make(self: &Arc<Self>, ram: impl FnOnce() -> Keep) -> Option<[Evals; 3]> {
        {
            let mut s = self.lock();
            if s.made + 3 > self.cap {
                return None;
            }
            s.made += 3;
        }
        let mut ram = Some(ram());
        let set: Vec<Slab> = (0..3)
            .map(|i| {
                let mut v: Vec<Scalar> = crate::pce::eval::with_capacity_huge(self.len);
                let (ptr, cap) = (v.as_ptr() as usize, v.capacity());
                let lock = self.pinner.as_ref().and_then(|p| p(v.as_mut_ptr().cast(), cap * std::mem::size_of::<Scalar>()));
                // The budget share rides on the last vector: it is released after all three.
                Slab { lock, v, _ram: if i == 2 { ram.take() } else { None }, ptr, cap }
            })
            .collect();
        Some(self.lend(set))
    }

    fn lend(self: &Arc<Self>, set: Vec<Slab>) -> [Evals; 3] {
        let mut it = set.into_iter().map(|mut slab| {
            let v = std::mem::take(&mut slab.v);
            Evals::Pooled(Lease { v, slab: Some(slab), pool: self.clone() })
        });
        [it.next().expect("three"), it.next().expect("three"), it.next().expect("three")]
    }

    /// Whether a whole set is idle (a synthesis waiting for the budget then takes it).
    pub fn has_idle_set(&self) -> bool {
        self.lock().idle.len() >= 3
    }

    /// A lent vector comes back: kept idle, or freed (its lock first) when it was reallocated
    /// (the lock no longer covers it). A freed vector leaves the pool room to make another.
    fn put(&self, slab: Slab) {
        let mut s = self.lock();
        if slab.intact() {
            s.idle.push(slab);
            return;
        }
        s.made -= 1;
        s.spoiled += 1;
        tracing::warn!("a pooled a/b/c vector came back reallocated (pushed past its {} values): freed, not reused", slab.cap);
        drop(s);
        drop(slab);
    }

    /// Free every idle vector now (their locks and budget shares with them); lent ones are
    /// freed as they come back only if the pool is dropped by then.
    pub fn clear(&self) {
        let idle = {
            let mut s = self.lock();
            s.made -= s.idle.len();
            std::mem::take(&mut s.idle)
        };
        drop(idle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A budget share that counts itself back.
    struct Share(Arc<AtomicU64>, u64);
    impl Drop for Share {
        fn drop(&mut self) {
            self.0.fetch_sub(self.1, Ordering::SeqCst);
        }
    }
    fn share(held: &Arc<AtomicU64>, n: u64) -> Keep {
        held.fetch_add(n, Ordering::SeqCst);
        Box::new(Share(held.clone(), n))
    }

    /// A lock that counts locks and unlocks.
    fn counting_pinner(locked: Arc<AtomicU64>) -> Pinner {
        struct Unlock(Arc<AtomicU64>);
        impl Drop for Unlock {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        Arc::new(move |_, _| {
            locked.fetch_add(1, Ordering::SeqCst);
            Some(Box::new(Unlock(locked.clone())) as Keep)
        })
    }

    #[test]
    fn a_set_comes_back_and_is_lent_again_in_the_same_memory_with_its_budget_share() {
        let (held, locked) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let pool = AbcPool::new(1, 1000, Some(counting_pinner(locked.clone())));
        assert!(pool.take().is_none() && !pool.has_idle_set(), "nothing made yet");
        let set = pool.make(|| share(&held, 96_000)).expect("room for one set");
        assert!(set.iter().all(|e| e.pinned() && e.capacity() >= 1000 && e.is_empty()));
        let ptrs: Vec<usize> = set.iter().map(|e| e.as_ptr() as usize).collect();
        assert_eq!(locked.load(Ordering::SeqCst), 3);
        // Full: a second set is refused, its share never taken.
        assert!(pool.make(|| share(&held, 96_000)).is_none());
        assert_eq!(held.load(Ordering::SeqCst), 96_000);
        drop(set);
        assert_eq!(pool.stats(), PoolStats { made: 3, idle: 3, spoiled: 0 });
        assert!(pool.has_idle_set());
        assert_eq!(held.load(Ordering::SeqCst), 96_000, "an idle set keeps its budget share");
        let again = pool.take().expect("the idle set");
        let mut again_ptrs: Vec<usize> = again.iter().map(|e| e.as_ptr() as usize).collect();
        let mut want = ptrs.clone();
        again_ptrs.sort();
        want.sort();
        assert_eq!(again_ptrs, want, "the same memory, locked once");
        assert_eq!(locked.load(Ordering::SeqCst), 3);
        drop(again);
        pool.clear();
        assert_eq!((held.load(Ordering::SeqCst), locked.load(Ordering::SeqCst)), (0, 0), "cleared: unlocked and released");
    }

    #[test]
    fn a_vector_pushed_past_its_capacity_is_never_taken_for_locked_memory_again() {
        let (held, locked) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let pool = AbcPool::new(1, 4, Some(counting_pinner(locked.clone())));
        let [mut a, b, c] = pool.make(|| share(&held, 384)).unwrap();
        let cap = a.capacity();
        a.extend(std::iter::repeat_n(Scalar::ONE, cap + 1));
        assert!(!a.pinned(), "reallocated: no longer the locked memory");
        assert!(b.pinned() && c.pinned());
        drop((a, b, c));
        assert_eq!(pool.stats(), PoolStats { made: 2, idle: 2, spoiled: 1 });
        assert!(pool.take().is_none(), "two idle vectors are not a set");
        // The spoiled one left room: a new set can be made only once the idle two are gone.
        pool.clear();
        assert_eq!(locked.load(Ordering::SeqCst), 0);
        assert_eq!(held.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn evals_compare_clone_and_convert_by_their_values() {
        let pool = AbcPool::new(1, 2, None);
        let [mut a, _b, _c] = pool.make(|| Box::new(())).unwrap();
        assert!(!a.pinned(), "no pinner: unlocked");
        a.push(Scalar::ONE);
        let owned = Evals::from(vec![Scalar::ONE]);
        assert_eq!(a, owned);
        let copy = a.clone();
        assert!(matches!(copy, Evals::Owned(_)));
        assert_eq!(a.clone().into_vec(), vec![Scalar::ONE]);
        assert_eq!(format!("{a:?}"), "Pooled(1 values)");
    }
}
