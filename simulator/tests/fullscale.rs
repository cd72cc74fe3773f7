//! The full-scale configuration (10 × 2^27 on the H200 host) loads, sizes its partitions and
//! its GPU workers' call memory by the working-set formula (as the engine does), fits the number of partitions its budget allows, and behaves
//! as a 16 GiB card under a 16 GiB VRAM budget (parameters streamed, workers serialised).

use simulator::{simulate, Config, Options};

fn fullscale() -> Config {
    Config::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/fullscale-h200.toml"))).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_budget_admits_five_partitions_and_the_run_completes() {
    let c = fullscale();
    // 125.8 − 5 = 120.8 GiB; resident 2 + 8.25 + one GPU worker's call memory 8.33 (the A
    // and L preparation: on the device's copy of the parameters the MSMs gather no bases on
    // the host, as in the engine); a synthesis 17.17 (16.03 + the B preparation 1.14):
    // (120.8 − 18.58) / 17.17 = 5.95, five at once.
    assert!((c.budget_gib().unwrap() - 120.8).abs() < 1e-9);
    assert!((c.partition_gib() - 17.174).abs() < 0.001, "{}", c.partition_gib());
    assert!((c.call_ram_gib() - 8.325).abs() < 0.001, "{}", c.call_ram_gib());
    // Streamed parameters (a 16 GiB card): the engine's reservation keeps the bases' share
    // (only queries the device holds leave it out), 96 B a point of the largest G1 query
    // (12 GiB) more; so does a host copy kept, or the G2 MSM on the CPU.
    let mut streamed = c.clone();
    streamed.set("vram_budget", "16").unwrap();
    streamed.set("memory.params_gib", "45.0").unwrap();
    assert!(streamed.params_streamed());
    assert!((streamed.call_ram_gib() - 20.325).abs() < 0.001, "{}", streamed.call_ram_gib());
    for (k, v) in [("memory.params_gib", "45.0"), ("b_g2_msm", "300")] {
        let mut o = c.clone();
        o.set(k, v).unwrap();
        assert!(!o.calls_gather_no_bases() && (o.call_ram_gib() - 20.325).abs() < 0.001, "{k} = {v}: {}", o.call_ram_gib());
    }
    assert!((c.resident_gib() - (2.0 + 8.25 + c.call_ram_gib())).abs() < 1e-9);
    let mut two = c.clone();
    two.set("gw", "2").unwrap();
    assert!((two.resident_gib() - c.resident_gib() - c.call_ram_gib()).abs() < 1e-9, "a second GPU worker holds a second call");
    let r = simulate(&c, Options::default()).result;
    assert!(r.feasible, "{:?}", r.failure);
    assert!(r.peak_reserved_gib.unwrap() <= 120.8 + 1e-9);
    assert!(!r.params_streamed && r.vram_notes.is_empty(), "{:?}", r.vram_notes);
    // Synthesis of 32 s on all 16 cores, ten per proof: the cores bind (≥ 320 s/proof).
    assert_eq!(r.floors.practical_binding, "cpu cores");
    assert!(r.floors.practical_s_per_proof >= 320.0);
}

#[test]
fn a_16_gib_vram_budget_streams_the_parameters_and_serialises_two_workers() {
    let mut c = fullscale();
    c.set("vram_budget", "16").unwrap();
    c.set("gw", "2").unwrap();
    c.set("memory.params_gib", "45.0").unwrap();
    c.validate().unwrap();
    let r = simulate(&c, Options::default()).result;
    assert!(r.feasible, "{:?}", r.failure);
    assert!(r.params_streamed && r.peak_vram_gib <= 16.0 + 1e-9, "{} {:?}", r.peak_vram_gib, r.vram_notes);
    // 1 + 12 + 12 > 16: one call's buffers at a time.
    assert!(r.floors.resources.iter().any(|x| x.name == "vram"), "{:?}", r.floors.resources);
}

#[test]
fn a_prep_pool_of_the_gpu_workers_own_slows_their_steps_and_is_set_and_checked() {
    // gw 2 on the full-scale host: the GPU workers' preparation on a pool of 1 thread of their
    // own takes longer than on the machine's cores, and the run can only be as fast or slower.
    let mut c = fullscale();
    c.set("gw", "2").unwrap();
    let free = simulate(&c, Options::default()).result;
    let mut one = c.clone();
    one.set("pipeline.prep_threads", "1").unwrap();
    one.validate().unwrap();
    assert_eq!(one.pipeline.prep_threads, Some(1));
    let held = simulate(&one, Options::default()).result;
    assert!(free.feasible && held.feasible);
    assert!(held.steady_state_s_per_proof > free.steady_state_s_per_proof * 1.01, "{} vs {}", held.steady_state_s_per_proof, free.steady_state_s_per_proof);
    // Back to none; 0 threads is refused by name.
    one.set("pipeline.prep_threads", "none").unwrap();
    assert_eq!(one.pipeline.prep_threads, None);
    one.set("pipeline.prep_threads", "0").unwrap();
    assert!(one.validate().unwrap_err().to_string().contains("pipeline.prep_threads"));
}
