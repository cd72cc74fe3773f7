//! `--cuzk-config`: a cuzk daemon's cuzk.toml imported as the pipeline part of a model.
//! Mapped keys land on the model; the rest are named (never silently ignored); a malformed
//! file is an error naming the line.

use simulator::cuzk_config::apply;
use simulator::memory::Budget;
use simulator::{simulate, Config, Options};

fn phase12() -> Config {
    Config::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/phase12.toml"))).unwrap()
}

#[test]
fn the_example_file_maps_and_names_what_it_does_not_model() {
    let mut c = phase12();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/cuzk-example.toml")).unwrap();
    let imp = apply(&mut c, &text, "cuzk-example.toml").unwrap();
    c.validate().unwrap();
    assert_eq!(c.memory.total_budget, Some(Budget::Auto));
    assert_eq!(c.budget_gib(), Some(512.0 - 5.0));
    assert_eq!(c.pipeline.gw, 2);
    // gpu_threads 32 → prep and finalisation draw 32 cores (of 96).
    assert_eq!((c.cpu.prep_cores, c.cpu.finalize_cores), (32.0, 32.0));
    // synthesis_concurrency 1 → one proof at a time, every partition of it may synthesise
    // when its reservation fits.
    assert_eq!((c.pipeline.synthesis_concurrency, c.pipeline.pw), (Some(1), 10));
    assert_eq!(
        imp.not_modelled,
        vec!["pipeline.synthesis_lookahead", "scheduler.max_batch_wait_ms", "scheduler.sort_by_type"]
    );
    // eviction_min_idle is mapped (issue 21), and said to have no effect without a mix.
    assert_eq!(c.eviction_min_idle_s(), 300.0);
    let w = imp.warning("cuzk.toml").unwrap();
    assert!(w.contains("eviction_min_idle") && w.contains("sort_by_type"), "{w}");
    assert!(imp.applied.iter().any(|a| a.starts_with("pipeline.gw = 2")), "{:?}", imp.applied);
}

#[test]
fn absent_keys_take_the_daemons_defaults_and_unknown_keys_are_named() {
    let mut c = phase12();
    let imp = apply(&mut c, "status_listen = \"0.0.0.0:9821\"\n[daemon]\nlisten = \"x\"\n[gpus]\nfancy = 1\n", "c.toml").unwrap();
    assert_eq!(c.memory.total_budget, Some(Budget::Auto));
    assert_eq!((c.pipeline.gw, c.pipeline.synthesis_concurrency, c.pipeline.pw), (2, Some(1), 10));
    assert_eq!(imp.not_modelled, vec!["daemon.listen", "gpus.fancy", "status_listen"]);
    // Batching and a pipeline turned off are not modelled: named.
    let imp = apply(&mut phase12(), "[scheduler]\nmax_batch_size = 2\n[pipeline]\nenabled = false\n", "c.toml").unwrap();
    assert_eq!(imp.not_modelled.len(), 2, "{:?}", imp.not_modelled);
    // A smaller synthesis pool is an approximation, said so.
    let mut c = phase12();
    let imp = apply(&mut c, "[synthesis]\nthreads = 2\n", "c.toml").unwrap();
    assert_eq!(c.cpu.synth_cores, 2.0);
    assert!(imp.warning("c.toml").unwrap().contains("synthesis.threads = 2"));
}

#[test]
fn a_malformed_file_names_the_line() {
    for (text, want) in [
        ("[memory]\ntotal_budget = \"auto\"\nsafety_margin = 5GiB\n", "line 3"),
        ("[gpus]\n\ngpu_workers_per_device = \"two\"\n", "line 3"),
        ("[memory]\ntotal_budget = \"lots\"\n", "line 2"),
        ("[memory]\nsafety_margin = \"auto\"\n", "line 2"),
        ("[gpus]\ndevices = [0, 1]\n", "line 2"),
        ("[pipeline]\nsynthesis_concurrency = -1\n", "line 2"),
        ("[pipeline]\nsynthesis_concurrency = 0\n", "line 2"),
        ("[pipeline]\nenabled = \"yes\"\n", "line 2"),
    ] {
        let e = apply(&mut phase12(), text, "bad.toml").unwrap_err().to_string();
        assert!(e.contains("bad.toml") && e.contains(want), "{text}: {e}");
    }
}

#[test]
fn the_imported_budget_gates_the_simulation() {
    // A 180 GiB budget on the reference box: 69 GiB resident leaves 111, six 16 GiB
    // partitions at once instead of the ten of one proof: syntheses wait for RAM, and the
    // run is slower than under the "auto" budget (507 GiB).
    let mut small = phase12();
    small.pipeline.proofs = 4;
    let mut auto = small.clone();
    apply(&mut small, "[memory]\ntotal_budget = \"180GiB\"\n[pipeline]\nsynthesis_concurrency = 2\n", "s.toml").unwrap();
    apply(&mut auto, "[pipeline]\nsynthesis_concurrency = 2\n", "a.toml").unwrap();
    small.validate().unwrap();
    let (rs, ra) = (simulate(&small, Options::default()).result, simulate(&auto, Options::default()).result);
    assert!(rs.ram_waits > 0 && ra.ram_waits == 0, "{} {}", rs.ram_waits, ra.ram_waits);
    assert!(rs.peak_reserved_gib.unwrap() <= 180.0 + 1e-9);
    assert!(rs.total_s_per_proof > ra.total_s_per_proof, "{} vs {}", rs.total_s_per_proof, ra.total_s_per_proof);
}
