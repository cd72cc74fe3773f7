//! Speed of the simulator (issue 4's targets): the DES core loop in events per second
//! (target ≥ 10 M/s), and a 1000-configuration sweep of a 5-proof × 10-partition model
//! (pw 1–25 × gw 1–2 × j 1–5 × lock whole/kernels × split no/yes; target < 50 ms on 2
//! cores), timed against the SimPy model of the same pipeline
//! (simulator/baseline/simpy_pipeline.py) in the same run, to state the ratio.
//!
//! `cargo bench --bench sim` (criterion), then the SimPy comparison is printed.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use simulator::des::Agenda;
use simulator::mmc::simulate_mmc;
use simulator::rng::Rng;
use simulator::sweep::{self, Vary};
use simulator::Config;

fn axes() -> Vec<Vary> {
    ["pw=1..25", "gw=1,2", "j=1..5", "lock=whole,kernels", "split=false,true"].iter().map(|s| s.parse().expect("valid axis")).collect()
}

fn base() -> Config {
    let mut c = Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/simulator/configs/phase8.toml"))).expect("phase8.toml");
    c.pipeline.proofs = 5;
    c.pipeline.partitions = 10;
    c
}

/// The classic "hold" model: a standing agenda of 1024 events, each pop schedules one.
fn hold(events: u64) -> u64 {
    let mut ag: Agenda<u32> = Agenda::new();
    let mut rng = Rng::new(1);
    for i in 0..1024 {
        ag.at(rng.below(1_000_000), i);
    }
    let mut sum = 0u64;
    for _ in 0..events {
        let (t, e) = ag.pop().expect("standing agenda");
        sum = sum.wrapping_add(t ^ e as u64);
        ag.at(t + 1 + rng.below(1_000_000), e);
    }
    sum
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("des");
    let n = 1_000_000u64;
    g.throughput(Throughput::Elements(n));
    g.bench_function("hold_1k_agenda_1M_events", |b| b.iter(|| black_box(hold(n))));
    let s = simulate_mmc(0.9, 1.0, 1, 100_000, 0, 1);
    g.throughput(Throughput::Elements(s.events));
    g.bench_function("mm1_100k_customers", |b| b.iter(|| black_box(simulate_mmc(0.9, 1.0, 1, 100_000, 0, 1))));
    g.finish();

    let points = sweep::expand(&base(), &axes()).expect("valid sweep");
    assert_eq!(points.len(), 1000);
    let mut g = c.benchmark_group("sweep");
    g.sample_size(20);
    g.throughput(Throughput::Elements(points.len() as u64));
    g.bench_function("1000_configs_5x10_rayon", |b| b.iter(|| black_box(sweep::run_points(&points, &|| {}))));
    g.finish();
}

/// Time our sweep and the SimPy sweep back to back (same machine, same run).
fn simpy_ratio() {
    let points = sweep::expand(&base(), &axes()).expect("valid sweep");
    let mut best = f64::INFINITY;
    for _ in 0..10 {
        let t = Instant::now();
        black_box(sweep::run_points(&points, &|| {}));
        best = best.min(t.elapsed().as_secs_f64());
    }
    let events: u64 = sweep::run_points(&points, &|| {}).iter().map(|r| r.result.events).sum();
    println!("ours: 1000-config sweep {:.2} ms (best of 10, rayon over {} threads), {events} events", best * 1e3, std::thread::available_parallelism().map_or(1, |n| n.get()));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/simulator/baseline/simpy_pipeline.py");
    match Command::new("python3").args([script, "sweep"]).output() {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let secs: Option<f64> = text.split_whitespace().nth(1).and_then(|x| x.parse().ok());
            match secs {
                Some(s) => println!("simpy: same 1000 configs {:.0} ms (one process) → ours is {:.0}× faster", s * 1e3, s / best),
                None => println!("simpy: unexpected output `{}`", text.trim()),
            }
        }
        Ok(o) => println!("simpy baseline skipped: {}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("failed")),
        Err(e) => println!("simpy baseline skipped: python3 not runnable ({e})"),
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
    simpy_ratio();
}
