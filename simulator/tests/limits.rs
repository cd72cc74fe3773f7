//! Counts and costs have bounds: a config that would allocate gigabytes (pw = 4e9,
//! 1e9 proofs) or run into u64 overflow (a cost of centuries, a contention slope of 1e9)
//! is refused by name or ends as an infeasible run, never a panic or a runaway (issue 18).

use simulator::sweep::{expand, Vary};
use simulator::{simulate, Config, Options};

fn base() -> Config {
    Config::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/phase8.toml"))).unwrap()
}

fn refused(key: &str, value: &str, field: &str) {
    let mut c = base();
    let e = c.set(key, value).and_then(|_| c.validate()).unwrap_err().to_string();
    assert!(e.contains(field), "{key}={value}: {e}");
}

#[test]
fn counts_beyond_their_bounds_are_refused_by_name() {
    refused("pw", "4000000000", "pipeline.pw");
    refused("gw", "100000", "pipeline.gw");
    refused("gpus", "4294967295", "machine.gpus");
    refused("c", "1000000000", "pipeline.proofs");
    refused("c", "100000000", "pipeline.proofs");
    refused("partitions", "4294967295", "pipeline.partitions");
    refused("finalizers", "4294967295", "pipeline.finalizers");
    refused("j", "4294967295", "pipeline.in_flight");
    // proofs × partitions: each within bounds, the product not.
    let mut c = base();
    c.set("c", "100000").unwrap();
    c.set("partitions", "10000").unwrap();
    assert!(c.validate().unwrap_err().to_string().contains("partitions"));
    refused("b_g2_msm", "1e300", "costs.b_g2_msm");
    // Quantities: at most 1e9 (a bandwidth demand of 1e300 used to overflow a wake-up time).
    refused("cpu.prep_bw_gbs", "1e300", "cpu.prep_bw_gbs");
    refused("ram", "1e10", "machine.ram_gib");
    refused("slope", "1e300", "contention.synth_slope");
    refused("costs.synth", "1e15", "costs.synth");
}

#[test]
fn a_run_that_would_last_centuries_ends_as_infeasible() {
    let mut c = base();
    c.set("slope", "1e9").unwrap();
    c.set("knee", "0").unwrap();
    c.validate().unwrap();
    let r = simulate(&c, Options { record: true }).result;
    assert!(!r.feasible);
    assert_eq!(r.failure.as_ref().map(|f| f.kind.as_str()), Some("horizon"), "{:?}", r.failure);
}

#[test]
fn a_two_point_sweep_of_absurd_values_is_refused_before_any_allocation() {
    let v: Vary = "pw=1..4294967295:4294967294".parse().unwrap();
    let e = expand(&base(), &[v]).unwrap_err().to_string();
    assert!(e.contains("pw=4294967295") && e.contains("pipeline.pw"), "{e}");
    // Two axes whose product is past the bound.
    let a: Vary = "pw=1..100".parse().unwrap();
    let b: Vary = "seed=1..1000".parse().unwrap();
    assert!(expand(&base(), &[a, b]).unwrap_err().to_string().contains("combinations"));
    // One key varied twice (found by the CLI property test: the Parquet table's columns
    // clashed and the sweep exited 1 after simulating).
    let a: Vary = "gw=1..2".parse().unwrap();
    let b: Vary = "gw=3".parse().unwrap();
    assert!(expand(&base(), &[a, b]).unwrap_err().to_string().contains("same key"));
}

#[test]
fn rates_near_zero_never_overflow_a_time() {
    // A bandwidth demand a billion times the machine's (found by the CLI property test as
    // 1e300: an overflow computing the next wake-up).
    for (k, v) in [("cpu.prep_bw_gbs", "1e9"), ("bandwidth", "1e-9"), ("cores", "1e-9")] {
        let mut c = base();
        c.set("cpu.synth_cores", "1e-9").unwrap();
        c.set("cpu.prep_cores", "1e-9").unwrap();
        c.set("cpu.finalize_cores", "1e-9").unwrap();
        c.set(k, v).unwrap();
        c.validate().unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        let r = simulate(&c, Options { record: true }).result;
        assert!(r.feasible || r.failure.is_some() || r.proofs_completed < r.proofs, "{k}={v}");
    }
}
