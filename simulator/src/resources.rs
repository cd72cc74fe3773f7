//! Shared resources of the model that are not simple FIFO servers:
//!
//! - [`CpuPool`]: the host's CPU cores and memory bandwidth as one processor-sharing
//!   server. Every running CPU phase (synthesis, prep, G2 MSM, epilogue) declares the
//!   cores and GB/s it would use alone; when the running phases ask for more cores or
//!   bandwidth than the machine has, each progresses at capacity/demand of its isolated
//!   speed (the most oversubscribed of the two wins). The cores' capacity is the machine's
//!   `cpu_capacity` (what the host delivers, fitted by `calibrate`; a KVM guest's 16 vCPUs
//!   gave about 7), and no task asks for more than it. Syntheses are further slowed by the
//!   contention factor 1 + slope·max(0, n − knee) of [`Contention`] (and, with its `prep`,
//!   the GPU workers' CPU steps too, by the syntheses running beside them). A GPU worker's
//!   step slowed by its prep factor draws its cores ÷ that factor: the same CPU work over a
//!   longer time (its threads wait for a core; they do not burn one). The GPU workers' CPU
//!   steps can be held to a pool of their own ([`CpuPool::with_worker_pool`], the engine's
//!   `prep_threads`): together they use at most that many cores, each slowed by pool ÷
//!   their demand when they ask for more, before the machine-wide sharing. Syntheses on one
//!   shared pool ([`CpuPool::with_synth_pool_gain`]) are held, besides, to what that pool
//!   delivers to n of them at once: 1 + gain·(n − 1) times one alone (the tighter of the two
//!   limits wins; measured, not derived: rayon's global pool with n callers at once).
//! - [`Tally`]: the time integral of a piecewise-constant quantity (busy workers, queue
//!   length), for utilisations and Little's law.
//!
//! GPU locks, copy engines and VRAM are plain state in the pipeline model.

use crate::config::Contention;

/// Who a CPU task belongs to, so the model knows what to resume when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Synthesis of a partition.
    Synth(u32),
    /// A CPU step of a GPU worker's call.
    Worker(u32),
    /// Split finalisation of a partition, stage 0 (G2 MSM) or 1 (epilogue).
    Finalizer(u32, u8),
    /// A GPU worker's upload, when uploads draw host memory bandwidth.
    Copy(u32),
}

#[derive(Clone, Copy, Debug)]
struct Task {
    /// Work left, in ns at full (isolated) speed.
    remaining: f64,
    cores: f64,
    bw: f64,
    synth: bool,
    owner: Owner,
}

impl Task {
    /// A GPU worker's CPU step: on the workers' own pool when they have one.
    fn on_worker_pool(&self) -> bool {
        !self.synth && matches!(self.owner, Owner::Worker(_))
    }

    /// Its speed at the pool's rates: a synthesis's, a GPU worker step's, or the common one.
    fn rate(&self, common: f64, synth: f64, worker: f64) -> f64 {
        if self.synth {
            synth
        } else if self.on_worker_pool() {
            worker
        } else {
            common
        }
    }
}

/// Processor-sharing CPU + memory-bandwidth pool.
#[derive(Clone, Debug)]
pub struct CpuPool {
    cores: f64,
    bw: f64,
    contention: Contention,
    tasks: Vec<Task>,
    last: u64,
    version: u64,
    sum_cores: f64,
    sum_bw: f64,
    n_synth: u32,
    /// Threads of the GPU workers' own pool (`Owner::Worker` tasks), if they have one.
    worker_pool: Option<f64>,
    /// Cores and bandwidth the `Owner::Worker` tasks ask for.
    worker_cores: f64,
    worker_bw: f64,
    rate_common: f64,
    /// The speed of `Owner::Worker` tasks: `rate_common` scaled by their pool's share.
    rate_worker: f64,
    rate_synth: f64,
    /// The syntheses' shared pool ([`CpuPool::with_synth_pool_gain`]), if they share one.
    synth_pool_gain: Option<f64>,
    /// The exponent of the pool's gain (`cpu.synth_pool_exponent`).
    synth_pool_exponent: f64,
    core_s: f64,
    gb: f64,
}

impl CpuPool {
    pub fn new(cores: f64, bw_gbs: f64, contention: Contention) -> CpuPool {
        CpuPool {
            cores,
            bw: bw_gbs,
            contention,
            tasks: Vec::with_capacity(64),
            last: 0,
            version: 0,
            sum_cores: 0.0,
            sum_bw: 0.0,
            n_synth: 0,
            worker_pool: None,
            worker_cores: 0.0,
            worker_bw: 0.0,
            rate_common: 1.0,
            rate_worker: 1.0,
            rate_synth: 1.0,
            synth_pool_gain: None,
            synth_pool_exponent: 1.0,
            core_s: 0.0,
            gb: 0.0,
        }
    }

    /// The GPU workers' CPU steps on a pool of `threads` of their own (see the module docs);
    /// `None`: they share the machine like every task.
    pub fn with_worker_pool(mut self, threads: Option<u32>) -> CpuPool {
        self.worker_pool = threads.map(|t| f64::from(t.max(1)));
        self.rerate();
        self
    }

    /// The syntheses on one shared thread pool (`cpu.synth_pool_gain`, `cpu.synth_pool_exponent`
    /// b): n of them progress together at 1 + gain·(n − 1)^b times one alone, each at most at
    /// its isolated speed, and never faster than the machine-wide sharing allows; `None`: only
    /// the latter.
    pub fn with_synth_pool_gain(mut self, gain: Option<f64>, exponent: f64) -> CpuPool {
        self.synth_pool_gain = gain;
        self.synth_pool_exponent = exponent;
        self.rerate();
        self
    }

    /// The speed, relative to isolation, of each of `n` syntheses on the shared pool.
    fn pool_rate(&self, n: f64) -> f64 {
        match self.synth_pool_gain {
            Some(g) if n > 1.0 => ((1.0 + g * (n - 1.0).powf(self.synth_pool_exponent)) / n).min(1.0),
            _ => 1.0,
        }
    }

    fn rate_of(&self, t: &Task) -> f64 {
        t.rate(self.rate_common, self.rate_synth, self.rate_worker)
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn running(&self) -> usize {
        self.tasks.len()
    }

    /// Syntheses running now.
    pub fn syntheses(&self) -> u32 {
        self.n_synth
    }

    /// Core-seconds consumed so far.
    pub fn core_seconds(&self) -> f64 {
        self.core_s
    }

    /// GB of host memory traffic so far.
    pub fn gb_transferred(&self) -> f64 {
        self.gb
    }

    /// Current speed of a synthesis relative to isolation.
    pub fn synth_rate(&self) -> f64 {
        self.rate_synth
    }

    /// Bring every task's remaining work up to `now`.
    pub fn advance(&mut self, now: u64) {
        if now <= self.last {
            return;
        }
        let dt = (now - self.last) as f64;
        let (common, synth, worker) = (self.rate_common, self.rate_synth, self.rate_worker);
        for t in self.tasks.iter_mut() {
            t.remaining -= dt * t.rate(common, synth, worker);
        }
        let (others, others_bw) = (self.sum_cores - self.worker_cores, self.sum_bw - self.worker_bw);
        self.core_s += dt * 1e-9 * (others * self.rate_common + self.worker_cores * self.rate_worker);
        self.gb += dt * 1e-9 * (others_bw * self.rate_common + self.worker_bw * self.rate_worker);
        self.last = now;
    }

    fn rerate(&mut self) {
        // The workers' pool first: together they get at most its threads.
        let share = match self.worker_pool {
            Some(pool) if self.worker_cores > pool => pool / self.worker_cores,
            _ => 1.0,
        };
        // A step slowed by the syntheses beside it (the prep factor) does the same CPU work
        // over a longer time: its threads wait for a core, they do not burn one, so it draws
        // its demand ÷ that factor.
        let pf = self.contention.prep_factor(self.n_synth as f64);
        let cores = self.sum_cores - self.worker_cores * (1.0 - share / pf);
        let bw = self.sum_bw - self.worker_bw * (1.0 - share / pf);
        let over = (cores / self.cores).max(bw / self.bw).max(1.0);
        self.rate_common = 1.0 / over;
        self.rate_worker = share / over / pf;
        let n = self.n_synth as f64;
        self.rate_synth = (self.rate_common / self.contention.factor(n)).min(self.pool_rate(n));
        self.version += 1;
    }

    /// Start a task of `work_ns` isolated nanoseconds. Its demand is held to the pool's cores:
    /// a task alone runs at its isolated speed whatever it asks for.
    pub fn start(&mut self, now: u64, work_ns: u64, cores: f64, bw: f64, synth: bool, owner: Owner) {
        self.advance(now);
        let cores = cores.min(self.cores);
        self.tasks.push(Task { remaining: work_ns as f64, cores, bw, synth, owner });
        self.sum_cores += cores;
        self.sum_bw += bw;
        if self.tasks.last().is_some_and(Task::on_worker_pool) {
            self.worker_cores += cores;
            self.worker_bw += bw;
        }
        if synth {
            self.n_synth += 1;
        }
        self.rerate();
    }

    /// When the next task will finish at current rates, with the version that makes the
    /// wake-up valid (any later change bumps the version and obsoletes it).
    pub fn next_wake(&self, now: u64) -> Option<(u64, u64)> {
        let mut best = f64::INFINITY;
        for t in &self.tasks {
            let r = self.rate_of(t);
            let dt = t.remaining.max(0.0) / r;
            if dt < best {
                best = dt;
            }
        }
        if best.is_finite() {
            // (A rate of ~0, from a bandwidth demand of 1e300, is a wake-up at the end of
            // time, not an overflow.)
            Some((now.saturating_add(best.ceil() as u64), self.version))
        } else {
            None
        }
    }

    /// Remove the tasks finished by `now`, in the order they were started.
    pub fn complete_due(&mut self, now: u64) -> Vec<Owner> {
        self.advance(now);
        let mut done = Vec::new();
        let mut i = 0;
        while i < self.tasks.len() {
            if self.tasks[i].remaining <= 0.5 {
                let t = self.tasks.remove(i);
                self.sum_cores -= t.cores;
                self.sum_bw -= t.bw;
                if t.on_worker_pool() {
                    self.worker_cores -= t.cores;
                    self.worker_bw -= t.bw;
                }
                if t.synth {
                    self.n_synth -= 1;
                }
                done.push(t.owner);
            } else {
                i += 1;
            }
        }
        if self.tasks.is_empty() {
            // Clear float residue.
            self.sum_cores = 0.0;
            self.sum_bw = 0.0;
            self.worker_cores = 0.0;
            self.worker_bw = 0.0;
        }
        if !done.is_empty() {
            self.rerate();
        }
        done
    }
}

/// Time integral of a piecewise-constant value.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    last_t: u64,
    value: f64,
    integral: f64,
}

impl Tally {
    pub fn set(&mut self, t: u64, v: f64) {
        if t > self.last_t {
            self.integral += (t - self.last_t) as f64 * self.value;
            self.last_t = t;
        }
        self.value = v;
    }

    /// ∫ value dt from 0 to `end` (ns · value).
    pub fn integral(&self, end: u64) -> f64 {
        self.integral + end.saturating_sub(self.last_t) as f64 * self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_share_when_oversubscribed() {
        // 4 cores; two 4-core tasks of 1 s each run at half speed and end together at 2 s.
        let mut p = CpuPool::new(4.0, 100.0, Contention::default());
        p.start(0, 1_000_000_000, 4.0, 0.0, false, Owner::Worker(0));
        p.start(0, 1_000_000_000, 4.0, 0.0, false, Owner::Worker(1));
        let (t, v) = p.next_wake(0).unwrap();
        assert_eq!(t, 2_000_000_000);
        assert_eq!(v, p.version());
        assert_eq!(p.complete_due(t), vec![Owner::Worker(0), Owner::Worker(1)]);
        assert!((p.core_seconds() - 8.0).abs() < 1e-6);
    }

    #[test]
    fn bandwidth_stretches_by_demand_over_capacity() {
        // 100 GB/s; three tasks asking 50 GB/s each: demand 150 → each at 2/3 speed.
        let mut p = CpuPool::new(64.0, 100.0, Contention::default());
        for i in 0..3 {
            p.start(0, 1_000_000_000, 1.0, 50.0, false, Owner::Worker(i));
        }
        let (t, _) = p.next_wake(0).unwrap();
        assert_eq!(t, 1_500_000_000);
        assert_eq!(p.complete_due(t).len(), 3);
        assert!((p.gb_transferred() - 150.0).abs() < 1e-6);
    }

    #[test]
    fn speeds_up_when_a_task_leaves() {
        // Two 1-core tasks on 1 core: 1 s and 3 s of work. Shared until 2 s (the short
        // one is done), then the long one alone: 2 s left → ends at 4 s.
        let mut p = CpuPool::new(1.0, 100.0, Contention::default());
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        p.start(0, 3_000_000_000, 1.0, 0.0, false, Owner::Worker(1));
        let (t, _) = p.next_wake(0).unwrap();
        assert_eq!(t, 2_000_000_000);
        assert_eq!(p.complete_due(t), vec![Owner::Worker(0)]);
        let (t2, _) = p.next_wake(t).unwrap();
        assert_eq!(t2, 4_000_000_000);
    }

    #[test]
    fn the_capacity_is_shared_and_no_task_asks_for_more_than_it() {
        // A capacity of 8 (a 16-vCPU guest delivering 8 cores' worth): four syntheses of 4
        // cores ask for 16, so each runs at 8/16 = 0.5 of its isolated speed: 1 s of work
        // takes 2 s. No contention factor (slope 0).
        let mut p = CpuPool::new(8.0, 1000.0, Contention::default());
        for i in 0..4 {
            p.start(0, 1_000_000_000, 4.0, 0.0, true, Owner::Synth(i));
        }
        assert!((p.synth_rate() - 0.5).abs() < 1e-12);
        assert_eq!(p.next_wake(0).unwrap().0, 2_000_000_000);
        assert_eq!(p.complete_due(2_000_000_000).len(), 4);
        assert!((p.core_seconds() - 16.0).abs() < 1e-6, "{}", p.core_seconds());
        // A task asking for 12 cores alone is held to the 8 there are, not slowed to 8/12:
        // its cost is its time alone.
        let mut p = CpuPool::new(8.0, 1000.0, Contention::default());
        p.start(0, 1_000_000_000, 12.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_000_000_000);
        // Beside a synthesis of 4: 8 + 4 on 8, each at 2/3.
        p.start(0, 1_000_000_000, 4.0, 0.0, true, Owner::Synth(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_500_000_000);
    }

    #[test]
    fn contention_slows_syntheses_beyond_the_knee() {
        let c = Contention { synth_knee: 2.0, synth_slope: 0.5, prep: false, prep_slope: 0.0, prep_saturation: None };
        let mut p = CpuPool::new(100.0, 100.0, c);
        for i in 0..4 {
            p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        // factor 1 + 0.5 · (4 − 2) = 2.
        assert!((p.synth_rate() - 0.5).abs() < 1e-12);
        assert_eq!(p.next_wake(0).unwrap().0, 2_000_000_000);
    }

    #[test]
    fn with_prep_contention_a_gpu_workers_step_slows_by_the_syntheses_beside_it() {
        // Knee 1, slope 0.5, three syntheses: factor 1 + 0.5 · 2 = 2 for each of them and,
        // with `prep`, for a preparation beside them (1 s of isolated work: 2 s); cores are
        // plenty (100), so nothing else slows anyone.
        let c = Contention { synth_knee: 1.0, synth_slope: 0.5, prep: true, prep_slope: 0.0, prep_saturation: None };
        let mut p = CpuPool::new(100.0, 100.0, c.clone());
        for i in 0..3 {
            p.start(0, 10_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        assert!((p.synth_rate() - 0.5).abs() < 1e-12);
        assert_eq!(p.next_wake(0).unwrap().0, 2_000_000_000);
        assert_eq!(p.complete_due(2_000_000_000), vec![Owner::Worker(0)]);
        // Without `prep`, the same preparation is not slowed: 1 s.
        let mut p = CpuPool::new(100.0, 100.0, Contention { prep: false, ..c.clone() });
        for i in 0..3 {
            p.start(0, 10_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_000_000_000);
        // With `prep` but one synthesis (at the knee): factor 1, 1 s; a finaliser's step is
        // never slowed by it (only the GPU workers' steps are).
        let mut p = CpuPool::new(100.0, 100.0, c);
        p.start(0, 10_000_000_000, 1.0, 0.0, true, Owner::Synth(0));
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_000_000_000);
        p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(1));
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Finalizer(0, 0));
        // Two syntheses now: the worker's step at 1/1.5, the finaliser's at 1.
        assert_eq!(p.next_wake(0).unwrap().0, 1_000_000_000, "the finaliser ends first, at full speed");
    }

    #[test]
    fn syntheses_on_a_shared_pool_progress_together_at_its_gain() {
        // 16 cores, gain 0.2: eight syntheses of 1 core (8 of 16: the cores hold nobody back)
        // progress together at 1 + 0.2 · 7 = 2.4 times one alone, each at 0.3: 1 s of
        // isolated work ends at 3.333 s. One alone runs at its own speed; two at (1.2)/2 = 0.6.
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_synth_pool_gain(Some(0.2), 1.0);
        for i in 0..8 {
            p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        assert!((p.synth_rate() - 0.3).abs() < 1e-12, "{}", p.synth_rate());
        assert_eq!(p.next_wake(0).unwrap().0, 3_333_333_334);
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_synth_pool_gain(Some(0.2), 1.0);
        p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(0));
        assert_eq!(p.synth_rate(), 1.0);
        p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(1));
        assert!((p.synth_rate() - 0.6).abs() < 1e-12);
        // The tighter of the two limits wins: on 2 cores, eight syntheses of 1 core get 2/8 =
        // 0.25 from the cores, below the pool's 0.3.
        let mut p = CpuPool::new(2.0, 1000.0, Contention::default()).with_synth_pool_gain(Some(0.2), 1.0);
        for i in 0..8 {
            p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        assert!((p.synth_rate() - 0.25).abs() < 1e-12);
        // No shared pool: the cores alone (16 of them: each at its own speed).
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default());
        for i in 0..8 {
            p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        assert_eq!(p.synth_rate(), 1.0);
    }

    #[test]
    fn the_pools_gain_bends_by_its_exponent() {
        // Gain 0.2, exponent 0.5, five syntheses of 1 s each: together 1 + 0.2·√4 = 1.4 times
        // one alone, so each at 0.28 and all done at 1 / 0.28 s; exponent 1: 1.8, 1 / 0.36 s.
        for (b, per) in [(0.5, 0.28), (1.0, 0.36)] {
            let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_synth_pool_gain(Some(0.2), b);
            for i in 0..5 {
                p.start(0, 1_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
            }
            let (t, _) = p.next_wake(0).unwrap();
            assert!((t as f64 - 1e9 / per).abs() < 2.0, "exponent {b}: {t}");
        }
    }

    #[test]
    fn a_gpu_workers_step_slows_by_the_prep_slope_beside_syntheses() {
        // prep_slope 0.5, three syntheses beside a preparation of 1 s: 1 + 0.5 · 2 = 2, so it
        // ends at 2 s; the syntheses are not slowed by it (cores are plenty); beside one
        // synthesis, none: 1 s.
        let c = Contention { prep_slope: 0.5, ..Contention::default() };
        let mut p = CpuPool::new(100.0, 100.0, c.clone());
        for i in 0..3 {
            p.start(0, 10_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.synth_rate(), 1.0);
        assert_eq!(p.next_wake(0).unwrap().0, 2_000_000_000);
        assert_eq!(p.complete_due(2_000_000_000), vec![Owner::Worker(0)]);
        let mut p = CpuPool::new(100.0, 100.0, c);
        p.start(0, 10_000_000_000, 1.0, 0.0, true, Owner::Synth(0));
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_000_000_000);
    }

    #[test]
    fn a_saturated_prep_slope_counts_one_synthesis_beside_at_most() {
        // prep_slope 0.5 saturating at 1: beside three syntheses 1 + 0.5 · min(2, 1) = 1.5
        // (not 2 as the straight line), so a 1 s preparation ends at 1.5 s.
        let c = Contention { prep_slope: 0.5, prep_saturation: Some(1.0), ..Contention::default() };
        assert_eq!((c.prep_factor(1.0), c.prep_factor(1.5), c.prep_factor(3.0)), (1.0, 1.25, 1.5));
        let mut p = CpuPool::new(100.0, 100.0, c);
        for i in 0..3 {
            p.start(0, 10_000_000_000, 1.0, 0.0, true, Owner::Synth(i));
        }
        p.start(0, 1_000_000_000, 1.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_500_000_000);
    }

    #[test]
    fn a_step_slowed_by_the_prep_slope_draws_its_cores_over_the_longer_time() {
        // 16 cores, prep_slope 1: three syntheses of 4 cores (12) beside a preparation asking
        // 16 cores. Its factor 1 + 1 · 2 = 3, so it draws 16 / 3 cores: 12 + 5.33 = 17.33 > 16,
        // every task at 16 / 17.33 = 0.923 (not 16 / 28 as if it burnt 16 cores for 3× as long).
        let c = Contention { prep_slope: 1.0, ..Contention::default() };
        let mut p = CpuPool::new(16.0, 1000.0, c);
        for i in 0..3 {
            p.start(0, 10_000_000_000, 4.0, 0.0, true, Owner::Synth(i));
        }
        p.start(0, 1_000_000_000, 16.0, 0.0, false, Owner::Worker(0));
        let over = (12.0 + 16.0 / 3.0) / 16.0;
        assert!((p.synth_rate() - 1.0 / over).abs() < 1e-12, "{}", p.synth_rate());
        // The step: 1 s of work at 1 / (3 · over), 3 · over s; over them it consumes 16
        // core-s, the CPU work of its isolated 1 s on 16 cores, not 3 · over times that.
        let (t, _) = p.next_wake(0).unwrap();
        assert_eq!(t, (1e9 * 3.0 * over).ceil() as u64);
        assert_eq!(p.core_seconds(), 0.0);
        p.advance(t);
        let synth = 3.0 * 4.0 / over * t as f64 * 1e-9;
        let step = 16.0 * (1.0 / (3.0 * over)) * t as f64 * 1e-9;
        assert!((p.core_seconds() - synth - step).abs() < 1e-6, "{} vs {}", p.core_seconds(), synth + step);
        assert!((step - 16.0).abs() < 1e-6, "{step}");
    }

    #[test]
    fn the_workers_pool_holds_their_steps_to_its_threads_then_the_machine_shares() {
        // 16 cores, the GPU workers on a pool of 4: two preparations asking 9 cores each for
        // 1 s of isolated work get 4 cores between them (share 4/18): 4.5 s each, 4 cores busy.
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_worker_pool(Some(4));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(0));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(1));
        let (t, _) = p.next_wake(0).unwrap();
        assert_eq!(t, 4_500_000_000);
        assert_eq!(p.complete_due(t).len(), 2);
        assert!((p.core_seconds() - 18.0).abs() < 1e-6, "{}", p.core_seconds());
        // With a synthesis of 16 cores beside them: 16 + 4 on 16 cores, over 1.25: the synthesis
        // at 0.8, each preparation at (4/18)/1.25.
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_worker_pool(Some(4));
        p.start(0, 1_000_000_000, 16.0, 0.0, true, Owner::Synth(0));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(0));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(1));
        assert!((p.synth_rate() - 0.8).abs() < 1e-12);
        assert_eq!(p.next_wake(0).unwrap().0, 1_250_000_000, "the synthesis ends first");
        // Without the pool the same three share 34 cores' demand on 16: everyone at 16/34.
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_worker_pool(None);
        p.start(0, 1_000_000_000, 16.0, 0.0, true, Owner::Synth(0));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(0));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(1));
        assert_eq!(p.next_wake(0).unwrap().0, 2_125_000_000);
        // A pool larger than the demand changes nothing: one 9-core step alone, 1 s.
        let mut p = CpuPool::new(16.0, 1000.0, Contention::default()).with_worker_pool(Some(12));
        p.start(0, 1_000_000_000, 9.0, 0.0, false, Owner::Worker(0));
        assert_eq!(p.next_wake(0).unwrap().0, 1_000_000_000);
    }

    #[test]
    fn tally_integrates() {
        let mut t = Tally::default();
        t.set(0, 2.0);
        t.set(10, 1.0);
        t.set(20, 0.0);
        assert_eq!(t.integral(30), 30.0);
    }
}
