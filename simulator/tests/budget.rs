//! Budget-gated admission (issue 21 / 19): a synthesis starts only when its reservation
//! fits in `memory.total_budget`; a/b/c is released once the GPU call has done its prep and
//! the a/b/c part of its upload (two-phase release), the rest when the partition is
//! finished; waits are `ram_wait` spans. Every expected figure below is computed by hand
//! from fixed costs.

use simulator::{simulate, Config, Options};
use timeline::SpanKind;

/// One GPU, plenty of cores, synthesis 10 s, kernels 1 s, nothing else; partitions of
/// 10 GiB with nothing resident.
fn base(extra_memory: &str, proofs: u32, partitions: u32) -> Config {
    let text = format!(
        r#"
[machine]
cpu_cores = 64
mem_bandwidth_gbs = 1000
ram_gib = 512
gpus = 1
vram_gib = 80
pcie_gbs = 25
[pipeline]
proofs = {proofs}
in_flight = {proofs}
partitions = {partitions}
pw = 8
gw = 1
lock = "kernels"
[memory]
baseline_gib = 0
partition_gib = 10
{extra_memory}
[costs]
synth = 10000
prep_msm = 0
ntt_msm_h = 1000
batch_add = 0
tail_msm = 0
b_g2_msm = 0
"#
    );
    Config::from_toml_str(&text, "budget-test").unwrap_or_else(|e| panic!("{e}"))
}

fn ram_waits(cfg: &Config) -> Vec<(u64, u64, u32)> {
    let out = simulate(cfg, Options { record: true });
    let run = out.run.unwrap();
    let mut v: Vec<(u64, u64, u32)> = run
        .spans
        .iter()
        .filter(|s| s.kind == SpanKind::RamWait)
        .map(|s| (s.start_ns / 1_000_000_000, s.end_ns.unwrap() / 1_000_000_000, s.partition.unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_budget_for_two_partitions_runs_two_at_a_time() {
    // 20 GiB: exactly two 10 GiB partitions. P0, P1 synthesise 0–10; P0's call 10–11,
    // P1's 11–12; P0 finishes at 11 → P2 synthesises 11–21, P1 at 12 → P3 12–22; their
    // calls 21–22 and 22–23. Makespan 23 s.
    let c = base("total_budget = \"20GiB\"", 1, 4);
    let r = simulate(&c, Options::default()).result;
    assert!(r.feasible, "{:?}", r.failure);
    assert!((r.makespan_s - 23.0).abs() < 1e-9, "{}", r.makespan_s);
    assert_eq!(r.ram_budget_gib, Some(20.0));
    assert_eq!(r.peak_reserved_gib, Some(20.0));
    // P2 waited 0–11 at the head of the backlog, then P3 11–12.
    assert_eq!(ram_waits(&c), vec![(0, 11, 2), (11, 12, 3)]);
    assert_eq!(r.ram_waits, 2);
    assert!((r.ram_wait_total_s - 12.0).abs() < 1e-9);
    // Memory binds: k = 2 < pw = 8; reservation-seconds 4 × (10·10 + 10·1) / 20 = 22 s,
    // concurrency 4 × 10 / 2 = 20 s; the floor is 22 s/proof, named `memory`.
    assert_eq!(r.floors.practical_binding, "memory");
    assert!((r.floors.practical_s_per_proof - 22.0).abs() < 1e-9, "{}", r.floors.practical_s_per_proof);
    // Without the budget, all four synthesise at once: 10 + 4 × 1 = 14 s.
    let free = base("", 1, 4);
    let r = simulate(&free, Options::default()).result;
    assert!((r.makespan_s - 14.0).abs() < 1e-9, "{}", r.makespan_s);
    assert_eq!(r.ram_waits, 0);
    assert!(r.floors.resources.iter().all(|x| x.name != "memory"));
}

#[test]
fn steady_state_under_a_two_partition_budget() {
    // Forty one-partition proofs with a 20 GiB budget: each partition holds its 10 GiB for
    // synthesis (10 s) + call (1 s); the two reservation slots cycle every 11 s, offset by
    // 1 s: completions at 11, 12, 22, 23, …, 11 + 11·19, 12 + 11·19 = 221. Steady state
    // (221 − 11) / 39 = 5.385 s/proof, tending to 11 / 2 = 5.5, the reservation-seconds
    // floor 1 × (10·10 + 10·1) / 20.
    let c = base("total_budget = \"20GiB\"", 40, 1);
    let r = simulate(&c, Options::default()).result;
    assert!((r.steady_state_s_per_proof - 210.0 / 39.0).abs() < 1e-9, "{}", r.steady_state_s_per_proof);
    assert!((r.floors.practical_s_per_proof - 5.5).abs() < 1e-9);
}

#[test]
fn two_phase_release_lets_a_third_start_at_the_first_call() {
    // 21 GiB, a/b/c = 9 of the 10 GiB released early: with no prep and no upload, at the
    // call's start. t=10: P0's call starts and
    // releases 9 → 11 GiB reserved, P2 fits (21) and starts at 10. t=11: P0 finishes (−1),
    // P1's call starts (−9) → 11, P3 starts at 11. P2 synthesises 10–20 (call 20–21),
    // P3 11–21 (call 21–22): makespan 22 s, against 23 s without the early release.
    let c = base("total_budget = \"21GiB\"\nabc_gib = 9\nearly_release = true", 1, 4);
    let r = simulate(&c, Options::default()).result;
    assert!((r.makespan_s - 22.0).abs() < 1e-9, "{}", r.makespan_s);
    assert_eq!(ram_waits(&c), vec![(0, 10, 2), (10, 11, 3)]);
    // 11 GiB + 10 = 21: the peak is the whole budget.
    assert_eq!(r.peak_reserved_gib, Some(21.0));
    let late = base("total_budget = \"21GiB\"\nabc_gib = 9", 1, 4);
    assert!((simulate(&late, Options::default()).result.makespan_s - 23.0).abs() < 1e-9);
}

/// Start of each partition's synthesis, s (exact to the nanosecond's rounding).
fn synth_starts(cfg: &Config) -> Vec<(u32, f64)> {
    let run = simulate(cfg, Options { record: true }).run.unwrap();
    let mut v: Vec<(u32, f64)> = run.spans.iter().filter(|s| s.kind == SpanKind::Synthesis).map(|s| (s.partition.unwrap(), s.start_ns as f64 / 1e9)).collect();
    v.sort_by_key(|x| x.0);
    v
}

#[test]
fn a_b_c_are_released_after_the_prep_and_their_upload_not_at_the_call_start() {
    // As above (21 GiB, 10 GiB partitions of which 9 a/b/c: two syntheses fit, a third once
    // one partition's a/b/c are back), with a prep of 2 s and an upload of 18 GiB at 9·2^30
    // B/s: 2 s, the a/b/c's 9 GiB of it 1 s. The engine gives a/b/c back after its prep
    // and their upload (runs 69 and 70): the third synthesis starts at call start + 2 + 1.
    // t=0: P0, P1 synthesise 0–10. P0's call 10: prep 10–12, lock, upload 12–14 (a/b/c on
    // the device at 13: −9 → 11 GiB, P2 starts at 13), kernels 14–15, done (−1 → 20). P1's
    // call 15: prep 15–17, upload 17–19 (a/b/c at 18: P3 starts at 18), kernels 19–20. P2
    // synthesises 13–23, its call 23–28; P3 18–28, its call 28–33. Makespan 33 s. Released
    // at the call's start (the model before), P2 would start at 10, P3 at 15: 30 s.
    let mut c = base("total_budget = \"21GiB\"\nabc_gib = 9\nearly_release = true", 1, 4);
    c.costs.prep_msm = simulator::costs::Dist::Fixed(2000.0);
    c.costs.upload_gib = 18.0;
    c.machine.pcie_gbs = 9.0 * (1u64 << 30) as f64 / 1e9;
    c.validate().unwrap();
    let starts = synth_starts(&c);
    let want = [(0, 0.0), (1, 0.0), (2, 13.0), (3, 18.0)];
    for ((p, t), (wp, wt)) in starts.iter().zip(want) {
        assert!(*p == wp && (t - wt).abs() < 1e-6, "synthesis starts {starts:?}, want {want:?}");
    }
    let r = simulate(&c, Options::default()).result;
    assert!((r.makespan_s - 33.0).abs() < 1e-6, "{}", r.makespan_s);
    assert_eq!(r.peak_reserved_gib, Some(21.0));
    // The memory floor holds the whole reservation through the prep and the a/b/c upload
    // too: 4 × (10·(10 + 2 + 1) + 1·(5 − 3)) / 21 = 528/21 s/proof (at the call's start:
    // 4 × (10·10 + 1·5) / 21 = 20).
    assert_eq!(r.floors.practical_binding, "memory");
    assert!((r.floors.practical_s_per_proof - 528.0 / 21.0).abs() < 1e-6, "{}", r.floors.practical_s_per_proof);

    // No upload modelled (upload_gib = 0: the transfers inside the kernels): after the prep
    // alone. P0's call 10: prep 10–12 (P2 starts at 12), kernels 12–13; P1's call 13: prep
    // 13–15 (P3 at 15), kernels 15–16; P2 12–22, call 22–25; P3 15–25, call 25–28.
    c.costs.upload_gib = 0.0;
    let starts = synth_starts(&c);
    let want = [(0, 0.0), (1, 0.0), (2, 12.0), (3, 15.0)];
    for ((p, t), (wp, wt)) in starts.iter().zip(want) {
        assert!(*p == wp && (t - wt).abs() < 1e-6, "synthesis starts {starts:?}, want {want:?}");
    }
    assert!((simulate(&c, Options::default()).result.makespan_s - 28.0).abs() < 1e-6);

    // Pre-staged (`kernels` + `prestage`): the upload runs beside the prep, outside the
    // lock, so the later of the two decides. P0's call 10: prep 10–12 ∥ upload 10–12 (a/b/c
    // at 11), released at 12 (P2 starts), kernels 12–13; P1's 13: released at 15 (P3),
    // kernels 15–16; P2 12–22, call 22–25; P3 15–25, call 25–28. The floor holds the whole
    // reservation through max(prep, a/b/c upload) = 2 s, and the rest through the rest of a
    // call of max(prep, upload) + kernels = 3 s: 4 × (10·12 + 1·(3 − 2)) / 21.
    c.costs.upload_gib = 18.0;
    c.pipeline.prestage = true;
    let starts = synth_starts(&c);
    for ((p, t), (wp, wt)) in starts.iter().zip(want) {
        assert!(*p == wp && (t - wt).abs() < 1e-6, "synthesis starts {starts:?}, want {want:?}");
    }
    let r = simulate(&c, Options::default()).result;
    assert!((r.makespan_s - 28.0).abs() < 1e-6, "{}", r.makespan_s);
    assert_eq!(r.floors.practical_binding, "memory");
    assert!((r.floors.practical_s_per_proof - 484.0 / 21.0).abs() < 1e-6, "{}", r.floors.practical_s_per_proof);
}

#[test]
fn parameters_and_pce_count_against_the_budget_and_pw_stays_an_upper_bound() {
    // 64 GiB budget with 24 GiB of SRS and 20 of PCE resident: 20 GiB left, two partitions.
    let c = base("total_budget = \"64GiB\"\nparams_gib = 24\npce_gib = 20", 1, 4);
    let r = simulate(&c, Options::default()).result;
    assert!((r.makespan_s - 23.0).abs() < 1e-9, "{}", r.makespan_s);
    assert_eq!(r.peak_reserved_gib, Some(64.0));
    // A budget of 8 partitions but pw = 1: one at a time, 4 × 10 + 1 = 41 s.
    let mut c = base("total_budget = \"80GiB\"", 1, 4);
    c.pipeline.pw = 1;
    let r = simulate(&c, Options::default()).result;
    assert!((r.makespan_s - 41.0).abs() < 1e-9, "{}", r.makespan_s);
    assert_eq!(r.ram_waits, 0);
}

#[test]
fn auto_budget_is_ram_minus_margin_and_sizes_parse() {
    let c = base("total_budget = \"auto\"\nsafety_margin = \"12GiB\"", 1, 4);
    assert_eq!(c.budget_gib(), Some(500.0));
    let c = base("total_budget = \"auto\"", 1, 4);
    assert_eq!(c.budget_gib(), Some(507.0));
    let c = base("total_budget = 21474836480", 1, 4);
    assert_eq!(c.budget_gib(), Some(20.0));
    // `sweep --vary total_budget=…`: units parsed; a budget above the machine's RAM makes
    // the machine that large (budget + margin).
    let mut c = base("", 1, 4);
    c.set("total_budget", "1TiB").unwrap();
    c.validate().unwrap();
    assert_eq!((c.budget_gib(), c.machine.ram_gib), (Some(1024.0), 1029.0));
    let mut c = base("", 1, 4);
    c.set("budget", "128GiB").unwrap();
    assert_eq!((c.budget_gib(), c.machine.ram_gib), (Some(128.0), 512.0));
    assert!(c.set("total_budget", "lots").unwrap_err().to_string().contains("memory.total_budget"));
}

#[test]
fn budget_errors_name_the_figures() {
    for (extra, want) in [
        ("total_budget = \"9GiB\"", "10.00 GiB needed"),
        ("total_budget = \"30GiB\"\nparams_gib = 25", "35.00 GiB needed"),
        ("total_budget = \"600GiB\"", "more than machine.ram_gib"),
        ("total_budget = \"auto\"\nsafety_margin = \"512GiB\"", "memory.safety_margin"),
        ("total_budget = \"12 parsecs\"", "unknown unit"),
    ] {
        let text = format!("[machine]\ncpu_cores = 4\nmem_bandwidth_gbs = 10\nram_gib = 512\ngpus = 1\nvram_gib = 8\npcie_gbs = 8\n[pipeline]\nproofs = 1\nin_flight = 1\npartitions = 1\npw = 1\ngw = 1\nlock = \"kernels\"\n[memory]\nbaseline_gib = 0\npartition_gib = 10\n{extra}\n[costs]\nsynth = 1\nprep_msm = 0\nntt_msm_h = 1\nbatch_add = 0\ntail_msm = 0\nb_g2_msm = 0\n");
        let e = Config::from_toml_str(&text, "t.toml").unwrap_err().to_string();
        assert!(e.contains(want), "{extra}: {e}");
    }
}

#[test]
fn the_working_set_formula_sizes_partitions_from_the_constraint_count() {
    // [circuit] constraints = 2^27 and no partition_gib: 12 GiB of a/b/c + 4 GiB of
    // assignment + 32 MiB of densities (+ 40 B) per partition; a/b/c released early.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/phase12.toml"))
        .unwrap()
        .replace("partition_gib = 16.0 ", "# ")
        .replace("abc_gib = 12.0 ", "# ")
        .replace("[cpu] ", "[circuit]\nconstraints = 134217728\n\n[cpu] ");
    let c = Config::from_toml_str(&text, "circuit").unwrap_or_else(|e| panic!("{e}"));
    assert!((c.partition_gib() - (16.0 + 1.0 / 32.0 + 40.0 / (1u64 << 30) as f64)).abs() < 1e-12, "{}", c.partition_gib());
    assert_eq!(c.abc_gib(), 12.0);
    // Neither: an error naming both ways.
    let e = Config::from_toml_str(&text.replace("constraints = 134217728", ""), "x").unwrap_err().to_string();
    assert!(e.contains("circuit") && e.contains("constraints"), "{e}");
    let e = Config::from_toml_str(&text.replace("[circuit]\nconstraints = 134217728\n", ""), "x").unwrap_err().to_string();
    assert!(e.contains("memory.partition_gib") && e.contains("[circuit]"), "{e}");
}

#[test]
fn sweep_varies_the_budget_with_units() {
    use simulator::sweep::{axis_number, expand, run_points, Vary};
    // 20 GiB: 23 s (above). 30 GiB: P0–P2 synthesise 0–10, calls 10–11, 11–12, 12–13; P0
    // finishes at 11, P3 synthesises 11–21, its call 21–22: 22 s. 40 GiB: all four at
    // once, 10 + 4 × 1 = 14 s.
    let c = base("total_budget = \"20GiB\"", 1, 4);
    let axes = vec!["total_budget=20GiB,30GiB,40GiB".parse::<Vary>().unwrap()];
    let rows = run_points(&expand(&c, &axes).unwrap(), &|| {});
    let got: Vec<f64> = rows.iter().map(|r| r.result.makespan_s).collect();
    assert_eq!(got, vec![23.0, 22.0, 14.0]);
    assert_eq!(rows[0].result.floors.practical_binding, "memory");
    assert_eq!(axis_number("30GiB"), Some(30.0));
}

#[test]
fn synthesis_concurrency_holds_a_proof_until_its_partitions_are_synthesised() {
    // Two proofs of two partitions, one proof synthesising at a time: proof 0's partitions
    // synthesise 0–10, proof 1's 10–20 (its slot frees when proof 0's last synthesis ends,
    // not when proof 0 is proved); calls 10–11, 11–12, 20–21, 21–22: 22 s. Without the
    // limit all four synthesise at once: 10 + 4 × 1 = 14 s.
    let mut c = base("", 2, 2);
    c.pipeline.synthesis_concurrency = Some(1);
    assert!((simulate(&c, Options::default()).result.makespan_s - 22.0).abs() < 1e-9);
    c.pipeline.synthesis_concurrency = None;
    assert!((simulate(&c, Options::default()).result.makespan_s - 14.0).abs() < 1e-9);
}

#[test]
fn the_analyzer_sees_the_waits_in_the_simulated_run_as_it_does_read_back() {
    // The waits are the schema's `ram_wait` kind in the run itself, not only once written
    // and read back: `campaign predict` analyses the run in memory (until 2026-12-04 it
    // carried them as an unknown kind there, and named `synthesis` where the file said
    // `memory`).
    use timeline::analysis::{summarize, AnalyzeOptions};
    let mut c = base("total_budget = \"20GiB\"", 12, 4);
    c.costs.ntt_msm_h = simulator::costs::Dist::Fixed(100.0);
    let run = simulate(&c, Options { record: true }).run.unwrap();
    assert!(run.spans.iter().any(|s| s.kind == SpanKind::RamWait));
    assert!(!run.spans.iter().any(|s| matches!(&s.kind, SpanKind::Other(_))), "every simulated span is of a schema kind");
    let mut buf = Vec::new();
    timeline::write::jsonl::write_run(&mut buf, &run).unwrap();
    let back = timeline::read::read_str(std::str::from_utf8(&buf).unwrap(), None);
    let (a, b) = (summarize(&run, &AnalyzeOptions::default()), summarize(&back, &AnalyzeOptions::default()));
    assert_eq!(a.verdict.binding, b.verdict.binding);
    assert_eq!(a.verdict.binding, "memory", "{}", a.verdict.headline);
}
