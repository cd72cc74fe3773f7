//! The CPU time a piece of parallel work costs, measured on the threads that did it.
//!
//! Why: a span's wall time says how long a step took, not how much of the machine it used.
//! The GPU workers' preparation (`prep_msm`) runs on a rayon pool beside syntheses and a G2
//! MSM; its wall time stretches with whatever else runs, and the busy-cores counter cannot
//! tell its share apart from the others'. Runs 73–74 (2^27) showed the gap: the model's fitted
//! demand of ~2 cores against ~12–28 thread-seconds a partition. A [`CpuMeter`] adds up each
//! thread's own CPU clock (`CLOCK_THREAD_CPUTIME_ID`: user + system time of that thread, not
//! the time it waited to run) over the closures it wraps, so the span can carry `cpu_ns`.
//!
//! Wrap only work that runs on one thread: a closure that itself fans out on the pool would
//! count the caller's share twice when the caller helps with the pieces.

use std::sync::atomic::{AtomicU64, Ordering};

/// This thread's CPU time (user + system) since it started, ns; 0 where the clock is missing.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the struct it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

/// The sum of the CPU time of the closures run through it, on whichever threads they ran.
#[derive(Debug, Default)]
pub struct CpuMeter(AtomicU64);

impl CpuMeter {
    /// Run `f` on this thread and add the CPU time it took.
    pub fn measure<R>(&self, f: impl FnOnce() -> R) -> R {
        let t0 = thread_cpu_ns();
        let r = f();
        self.0.fetch_add(thread_cpu_ns().saturating_sub(t0), Ordering::Relaxed);
        r
    }

    /// The CPU time measured so far, ns.
    pub fn ns(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The CPU time of a thread pool's threads over a stretch of work: each thread's own clock
/// read at the start and at the end (on that thread, through `broadcast`), the differences
/// summed. For a pool that ran nothing else meanwhile (a synthesis worker's own pool): the
/// work done on it for that stretch, plus what its idle threads spent looking for more —
/// both taken from the machine, which is what the simulator's synthesis demand stands for.
pub struct PoolClock<'a> {
    pool: &'a rayon::ThreadPool,
    start: Vec<u64>,
}

impl<'a> PoolClock<'a> {
    /// Read every thread's clock now.
    pub fn start(pool: &'a rayon::ThreadPool) -> PoolClock<'a> {
        PoolClock { pool, start: pool.broadcast(|_| thread_cpu_ns()) }
    }

    /// The pool's threads.
    pub fn threads(&self) -> usize {
        self.start.len()
    }

    /// The pool's CPU time since [`PoolClock::start`], ns.
    pub fn ns(&self) -> u64 {
        let end = self.pool.broadcast(|_| thread_cpu_ns());
        end.iter().zip(&self.start).map(|(e, s)| e.saturating_sub(*s)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::time::{Duration, Instant};

    /// Spin until this thread has used `ns` of CPU time by its own clock.
    fn burn(ns: u64) {
        let t0 = thread_cpu_ns();
        while thread_cpu_ns() - t0 < ns {
            std::hint::black_box(0u64);
        }
    }

    #[test]
    fn a_sleeping_thread_costs_nothing_a_busy_one_its_cpu_time() {
        let m = CpuMeter::default();
        m.measure(|| std::thread::sleep(Duration::from_millis(60)));
        assert!(m.ns() < 20_000_000, "sleeping is not CPU time: {} ns", m.ns());
        let before = m.ns();
        let t = Instant::now();
        m.measure(|| burn(30_000_000));
        let (spun, wall) = (m.ns() - before, t.elapsed().as_nanos() as u64);
        assert!(spun >= 30_000_000, "{spun} ns");
        assert!(spun <= wall, "one thread's CPU time ({spun} ns) within its wall time ({wall} ns)");
    }

    #[test]
    fn pieces_on_a_pool_add_up_over_its_threads() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let m = CpuMeter::default();
        let t = Instant::now();
        pool.install(|| (0..8).into_par_iter().for_each(|_| m.measure(|| burn(15_000_000))));
        let wall = t.elapsed().as_nanos() as u64;
        assert!(m.ns() >= 8 * 15_000_000, "every piece counted: {} ns", m.ns());
        // Two threads cannot use more than twice the wall time.
        assert!(m.ns() <= 2 * wall, "{} ns on 2 threads in {wall} ns", m.ns());
        // A closure on no pool at all.
        let m = CpuMeter::default();
        assert_eq!(m.measure(|| 7), 7);
        assert!(m.ns() < 5_000_000);
    }

    #[test]
    fn a_pool_clock_counts_the_work_its_threads_did_and_not_the_callers() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let clock = PoolClock::start(&pool);
        let t = Instant::now();
        pool.install(|| (0..4).into_par_iter().for_each(|_| burn(15_000_000)));
        // The caller spins too, off the pool: not counted.
        burn(30_000_000);
        let (ns, wall) = (clock.ns(), t.elapsed().as_nanos() as u64);
        assert!(ns >= 4 * 15_000_000, "the pieces' 60 ms counted: {ns} ns");
        assert!(ns <= 2 * wall, "two threads within twice the wall time ({ns} of {wall} ns)");
        assert!(ns < 4 * 15_000_000 + 25_000_000, "the caller's 30 ms not counted: {ns} ns");
    }
}
