//! An M/M/c queue on the DES core: the yardstick that checks the core against closed
//! forms (Erlang C mean waiting time, Little's law) and the workload of the core-loop
//! benchmark. Poisson arrivals of rate λ, c servers of exponential service rate μ, FIFO.

use std::collections::VecDeque;

use crate::des::Agenda;
use crate::resources::Tally;
use crate::rng::Rng;

#[derive(Clone, Copy, Debug)]
enum Ev {
    Arrival,
    Departure,
}

/// What one M/M/c run measured.
#[derive(Clone, Copy, Debug)]
pub struct MmcStats {
    pub customers: u64,
    /// Mean wait in queue (before service), seconds of model time.
    pub mean_wait: f64,
    /// Time-average number waiting in queue.
    pub mean_queue_len: f64,
    /// Arrival rate actually seen (customers / elapsed).
    pub arrival_rate: f64,
    pub elapsed: f64,
    pub events: u64,
}

/// Simulate `customers` arrivals (time unit: 1 ns = 1e-9 model seconds; rates per second).
/// The first `warmup` customers are excluded from the statistics.
pub fn simulate_mmc(lambda: f64, mu: f64, c: u32, customers: u64, warmup: u64, seed: u64) -> MmcStats {
    let mut rng = Rng::new(seed);
    let mut ag: Agenda<Ev> = Agenda::new();
    let scale = 1e9;
    let mut queue: VecDeque<(u64, u64)> = VecDeque::new(); // (arrival time, customer id)
    let mut busy = 0u32;
    let mut arrived = 0u64;
    let mut wait_sum = 0.0;
    let mut waits = 0u64;
    let mut qlen = Tally::default();
    let mut t_start = 0u64;
    ag.at((rng.exponential(1.0 / lambda) * scale) as u64, Ev::Arrival);
    while let Some((t, ev)) = ag.pop() {
        match ev {
            Ev::Arrival => {
                let id = arrived;
                arrived += 1;
                if id == warmup {
                    t_start = t;
                    qlen = Tally::default();
                    qlen.set(t, queue.len() as f64);
                }
                if arrived < customers {
                    ag.after((rng.exponential(1.0 / lambda) * scale) as u64, Ev::Arrival);
                }
                if busy < c {
                    busy += 1;
                    if id >= warmup {
                        waits += 1;
                    }
                    ag.after((rng.exponential(1.0 / mu) * scale) as u64, Ev::Departure);
                } else {
                    queue.push_back((t, id));
                    qlen.set(t, queue.len() as f64);
                }
            }
            Ev::Departure => {
                if let Some((ta, id)) = queue.pop_front() {
                    qlen.set(t, queue.len() as f64);
                    if id >= warmup {
                        wait_sum += (t - ta) as f64 / scale;
                        waits += 1;
                    }
                    ag.after((rng.exponential(1.0 / mu) * scale) as u64, Ev::Departure);
                } else {
                    busy -= 1;
                }
            }
        }
    }
    let end = ag.now();
    let elapsed = (end - t_start) as f64 / scale;
    MmcStats {
        customers: waits,
        mean_wait: wait_sum / waits.max(1) as f64,
        mean_queue_len: qlen.integral(end) / (end - t_start).max(1) as f64,
        arrival_rate: (customers - warmup) as f64 / elapsed,
        elapsed,
        events: ag.events_processed(),
    }
}

/// Erlang C: mean wait in queue of an M/M/c queue (ρ = λ / (cμ) < 1).
pub fn erlang_c_wait(lambda: f64, mu: f64, c: u32) -> f64 {
    let a = lambda / mu;
    let rho = a / c as f64;
    let mut sum = 0.0;
    let mut term = 1.0; // a^k / k!
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        sum += term;
    }
    let last = term * a / c as f64; // a^c / c!
    let pc = last / (1.0 - rho) / (sum + last / (1.0 - rho));
    pc / (c as f64 * mu - lambda)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mm1_mean_wait_matches_closed_form() {
        // λ = 0.8, μ = 1: Wq = ρ/(μ − λ) = 4.
        let s = simulate_mmc(0.8, 1.0, 1, 2_000_000, 20_000, 11);
        let w = erlang_c_wait(0.8, 1.0, 1);
        assert!((w - 4.0).abs() < 1e-12);
        assert!((s.mean_wait - w).abs() / w < 0.02, "Wq {} vs {}", s.mean_wait, w);
    }

    #[test]
    fn mmc_mean_wait_matches_erlang_c() {
        let (l, m, c) = (3.2, 1.0, 4);
        let s = simulate_mmc(l, m, c, 2_000_000, 20_000, 5);
        let w = erlang_c_wait(l, m, c);
        assert!((s.mean_wait - w).abs() / w < 0.02, "Wq {} vs {}", s.mean_wait, w);
    }

    #[test]
    fn littles_law_holds() {
        for (l, m, c, seed) in [(0.8, 1.0, 1, 1), (3.2, 1.0, 4, 2), (1.5, 1.0, 2, 3)] {
            let s = simulate_mmc(l, m, c, 300_000, 5_000, seed);
            let lq = s.arrival_rate * s.mean_wait;
            assert!((s.mean_queue_len - lq).abs() / lq < 0.01, "L {} vs λW {}", s.mean_queue_len, lq);
        }
    }

    #[test]
    fn same_seed_same_run() {
        let a = simulate_mmc(0.9, 1.0, 1, 10_000, 0, 77);
        let b = simulate_mmc(0.9, 1.0, 1, 10_000, 0, 77);
        assert_eq!(a.mean_wait.to_bits(), b.mean_wait.to_bits());
        assert_eq!(a.events, b.events);
    }
}
