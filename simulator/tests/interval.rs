//! Prediction intervals: replications with independent seeds, widened by the calibrated
//! run spread (simulator::interval); the run spread measured from repeated runs.

use std::path::PathBuf;

use simulator::calibrate::{run_spread, steady_from_partitions};
use simulator::interval::{replicate, Z80};
use simulator::{simulate, Config, Options};

fn config(noisy: bool) -> Config {
    let mut text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap();
    if noisy {
        text = text.replace("synth = 36500 ", "synth = { dist = \"lognormal\", median_ms = 36500, sigma = 0.10 } ");
    }
    let mut c = Config::from_toml_str(&text, "phase8").unwrap();
    c.pipeline.proofs = 4;
    c
}

#[test]
fn fixed_costs_give_a_point_and_the_run_spread_widens_it_by_z_sd() {
    let mut c = config(false);
    let r = simulate(&c, Options::default()).result;
    let iv = replicate(&c, 5).unwrap();
    let t = iv.total_s_per_proof;
    assert_eq!((t.p10, t.p50, t.p90, t.lo, t.hi), (r.total_s_per_proof, r.total_s_per_proof, r.total_s_per_proof, r.total_s_per_proof, r.total_s_per_proof));
    c.uncertainty.run_spread = 0.05;
    let t = replicate(&c, 5).unwrap().total_s_per_proof;
    assert!((t.hi - r.total_s_per_proof * (1.0 + Z80 * 0.05)).abs() < 1e-9, "{t:?}");
    assert!((t.lo - r.total_s_per_proof * (1.0 - Z80 * 0.05)).abs() < 1e-9);
    assert!(replicate(&c, 1).is_none());
}

#[test]
fn random_costs_give_an_ordered_interval_that_holds_most_seeds() {
    let c = config(true);
    let iv = replicate(&c, 20).unwrap();
    let t = iv.total_s_per_proof;
    assert_eq!(iv.replications, 20);
    assert!(t.lo <= t.p10 && t.p10 < t.p50 && t.p50 < t.p90 && t.p90 <= t.hi, "{t:?}");
    // Fresh seeds (not those of the replications) fall inside about 80 % of the time.
    let inside = (1000..1040)
        .filter(|s| {
            let mut x = c.clone();
            x.seed = *s;
            t.contains(simulate(&x, Options::default()).result.total_s_per_proof)
        })
        .count();
    assert!((22..=39).contains(&inside), "{inside} of 40 inside {t:?}");
}

#[test]
fn the_run_spread_of_repeats_by_hand() {
    // Two simulated runs of one configuration (other seeds): the steady s/proof from their
    // partition ends is the simulator's own figure, and the spread of two values a, b is
    // sd / mean = (|a − b| / √2) / ((a + b) / 2).
    let mut c = config(true);
    let mut runs = Vec::new();
    let mut vals = Vec::new();
    for seed in [1, 2] {
        c.seed = seed;
        let out = simulate(&c, Options { record: true });
        let run = out.run.unwrap();
        let v = steady_from_partitions(&run).unwrap();
        assert!((v - out.result.steady_partitions_s_per_proof).abs() < 1e-6, "{v} vs {}", out.result.steady_partitions_s_per_proof);
        vals.push(v);
        runs.push((format!("seed{seed}"), run));
    }
    let (spread, groups, n) = run_spread(&runs).unwrap();
    let (a, b) = (vals[0], vals[1]);
    assert_eq!((groups, n), (1, 2));
    assert!((spread - ((a - b).abs() / 2f64.sqrt()) / ((a + b) / 2.0)).abs() < 1e-12);
    // Different configurations are not repeats; nor are runs that do not say theirs.
    runs[1].1.meta.config.pw = Some(99);
    assert_eq!(run_spread(&runs), None);
    for r in runs.iter_mut() {
        r.1.meta.config = Default::default();
    }
    assert_eq!(run_spread(&runs), None);
}
