//! Properties of the pipeline model and of its inputs: determinism, Little's law on the
//! GPU queue, the emitted timeline (read back by `timeline::read` with zero rejected lines,
//! and the same utilisation when the timeline crate recomputes it), and bad configs
//! rejected with the field and the reason.

use std::path::PathBuf;

use simulator::{simulate, Config, Options};
use timeline::analysis::utilization::{busy_intervals, total_ns};
use timeline::SpanKind;

fn config(name: &str) -> Config {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs").join(format!("{name}.toml"));
    Config::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// Phase 8 with random costs, so that seeds matter.
fn noisy() -> Config {
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap();
    let text = text
        .replace("synth = 36500 ", "synth = { dist = \"lognormal\", median_ms = 36500, sigma = 0.05 } ")
        .replace("prep_msm = 1500 ", "prep_msm = { dist = \"normal\", mean_ms = 1500, sd_ms = 150 } ")
        .replace("ntt_msm_h = 2430 ", "ntt_msm_h = { dist = \"empirical\", samples_ms = [2400, 2430, 2470] } ");
    Config::from_toml_str(&text, "noisy").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn same_seed_same_output_and_seeds_matter() {
    let c = noisy();
    let a = simulate(&c, Options { record: true });
    let b = simulate(&c, Options { record: true });
    assert_eq!(serde_json::to_string(&a.result).unwrap(), serde_json::to_string(&b.result).unwrap());
    assert_eq!(a.run.as_ref().unwrap().spans, b.run.as_ref().unwrap().spans);
    let mut c2 = c.clone();
    c2.seed = 99;
    let d = simulate(&c2, Options::default());
    assert_ne!(a.result.makespan_s, d.result.makespan_s);
    // Recording the timeline does not change the figures.
    let e = simulate(&c, Options::default());
    assert_eq!(serde_json::to_string(&a.result).unwrap(), serde_json::to_string(&e.result).unwrap());
}

#[test]
fn littles_law_on_every_queue() {
    for mut c in [noisy(), config("phase12"), config("phase9")] {
        c.pipeline.proofs = 8;
        let r = simulate(&c, Options::default()).result;
        assert!(r.feasible, "{:?}", r.failure);
        // L = λ W with λ = partitions / makespan (every partition enters and leaves the
        // queue within the run).
        let lambda = (c.pipeline.proofs * c.pipeline.partitions) as f64 / r.makespan_s;
        let lw = lambda * r.queue_wait_mean_s;
        assert!((r.queue_len_mean - lw).abs() <= 1e-6 * lw.max(1.0), "L {} vs λW {}", r.queue_len_mean, lw);
        // The synthesis backlog (waiting for a permit): same law, same λ.
        let lw = lambda * r.backlog_wait_mean_s;
        assert!(r.backlog_len_mean > 0.0);
        assert!((r.backlog_len_mean - lw).abs() <= 1e-6 * lw.max(1.0), "backlog L {} vs λW {}", r.backlog_len_mean, lw);
        // The lock queue: L · T = total wait (λW summed over its customers).
        let lt = r.lock_queue_len_mean * r.makespan_s;
        assert!((lt - r.lock_wait_total_s).abs() <= 1e-6 * lt.max(1.0), "lock L·T {} vs ΣW {}", lt, r.lock_wait_total_s);
    }
}

#[test]
fn timeline_reads_back_with_zero_rejected_lines_and_agrees() {
    let c = noisy();
    let out = simulate(&c, Options { record: true });
    let run = out.run.unwrap();
    let mut buf = Vec::new();
    timeline::write::jsonl::write_run(&mut buf, &run).unwrap();
    let back = timeline::read::read_str(std::str::from_utf8(&buf).unwrap(), None);
    assert_eq!(back.diagnostics.lines_rejected, 0, "{:?}", back.diagnostics.warnings);
    assert_eq!(back.diagnostics.open_spans, 0);
    assert_eq!(back.meta.source, "simulator");
    assert_eq!(back.meta.config.pw, Some(10));
    assert_eq!(back.spans.len(), run.spans.len());
    let parts = (c.pipeline.proofs * c.pipeline.partitions) as usize;
    for kind in [SpanKind::Synthesis, SpanKind::GpuQueue, SpanKind::Gpu, SpanKind::PrepMsm, SpanKind::NttMsmH, SpanKind::BatchAdd, SpanKind::TailMsm, SpanKind::CpuMsmBG2, SpanKind::LockHold, SpanKind::Finalize] {
        assert_eq!(back.spans_of(&kind).count(), parts, "{kind}");
    }
    for s in &back.spans {
        assert!(SpanKind::known(s.kind.as_str()).is_some(), "the simulator opened a span of unknown kind `{}`", s.kind);
    }
    assert!(back.counters.iter().any(|c| c.name == "rss_bytes"));
    assert!(back.counters.iter().any(|c| c.name == "queue_depth"));
    // The timeline crate's own union of the gpu spans gives our utilisation.
    let gpu = busy_intervals(back.spans_of(&SpanKind::Gpu));
    let window = gpu.last().unwrap().1 - gpu.first().unwrap().0;
    let util = total_ns(&gpu) as f64 / window as f64;
    assert!((util - out.result.gpus[0].gpu_utilization).abs() < 1e-9, "{util} vs {}", out.result.gpus[0].gpu_utilization);
    // Kernel spans add up to our kernel utilisation.
    let kern = busy_intervals(back.spans.iter().filter(|s| s.kind.is_kernel()));
    let ku = total_ns(&kern) as f64 / window as f64;
    assert!((ku - out.result.gpus[0].kernel_utilization).abs() < 1e-9);
    // Peak RAM from the counter series.
    let peak = back.counters.iter().filter(|c| c.name == "rss_bytes").map(|c| c.value).fold(0.0, f64::max);
    assert!((peak / (1u64 << 30) as f64 - out.result.peak_ram_gib).abs() < 1e-6);
}

#[test]
fn split_and_two_lock_timelines_are_complete_too() {
    for (name, kv) in [("phase12", vec![]), ("phase10", vec![("vram", "80")])] {
        let mut c = config(name);
        c.pipeline.proofs = 3;
        for (k, v) in kv {
            c.set(k, v).unwrap();
        }
        let out = simulate(&c, Options { record: true });
        assert!(out.result.feasible, "{name}: {:?}", out.result.failure);
        let run = out.run.unwrap();
        let parts = 3 * c.pipeline.partitions as usize;
        assert_eq!(run.spans_of(&SpanKind::Gpu).count(), parts, "{name}");
        assert_eq!(run.spans_of(&SpanKind::CpuMsmBG2).count(), parts, "{name}");
        assert!(run.spans.iter().all(|s| s.end_ns.unwrap() >= s.start_ns));
        if name == "phase10" {
            assert_eq!(run.spans_of(&SpanKind::H2d).count(), parts);
            assert_eq!(run.spans_of(&SpanKind::LockHold).count(), 2 * parts, "vram + compute lock");
        }
    }
}

#[test]
fn periodic_arrivals_and_multi_gpu() {
    let mut c = config("phase8");
    c.set("gpus", "2").unwrap();
    c.set("pw", "20").unwrap();
    let r2 = simulate(&c, Options::default()).result;
    let r1 = simulate(&config("phase8"), Options::default()).result;
    assert_eq!(r2.gpus.len(), 2);
    assert!(r2.gpus.iter().all(|g| g.kernel_utilization > 0.3), "both GPUs work");
    assert!(r2.floors.theoretical_s_per_proof < r1.floors.theoretical_s_per_proof);
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap();
    let text = text.replace("arrival = { kind = \"all_at_once\" }", "arrival = { kind = \"periodic\", period_s = 60 }");
    let c = Config::from_toml_str(&text, "periodic").unwrap();
    let r = simulate(&c, Options::default()).result;
    // One proof a minute is slower than the pipeline: the steady rate is the arrival rate.
    assert!((r.steady_state_s_per_proof - 60.0).abs() < 0.5, "{}", r.steady_state_s_per_proof);
    assert!(r.latency_max_s < 100.0);
}

fn err_of(text: &str) -> String {
    match Config::from_toml_str(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("bad.toml"), "error does not name the file: {e}");
            e
        }
    }
}

fn base_text() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap()
}

#[test]
fn bad_inputs_name_the_field_and_the_reason() {
    let b = base_text();
    let cases: Vec<(String, &[&str])> = vec![
        (b.replace("pw = 10 ", "pw = 0 "), &["pipeline.pw", "at least 1"]),
        (b.replace("gw = 2 ", "gw = -1 "), &["gw", "line"]),
        (b.replace("gpus = 1 ", "gpus = 0 "), &["machine.gpus", "at least 1"]),
        (b.replace("[pipeline]", "[pipeline]\nturbo = true"), &["unknown field", "turbo"]),
        (b.replace("[machine]", "[machine]\ncpu_cors = 3"), &["unknown field", "cpu_cors"]),
        (b.replace("synth = 36500 ", "# "), &["missing field", "synth"]),
        (b.replace("ntt_msm_h = 2430 ", "ntt_msm_h = \"fast\" "), &["ntt_msm_h", "number of milliseconds"]),
        (b.replace("lock = \"kernels\"", "lock = \"tight\""), &["lock", "unknown variant"]),
        (b.replace("lock = \"kernels\"", "lock = \"kernels\"\ndevice_global_sync = true"), &["pipeline.device_global_sync", "two_lock"]),
        (b.replace("# queue_capacity = 4", "queue_capacity = 0"), &["pipeline.queue_capacity", "deadlock"]),
        (b.replace("ram_gib = 512.0", "ram_gib = 80.0"), &["machine.ram_gib", "no proof could ever run"]),
        (b.replace("prestage = false", "prestage = true"), &["memory.prestage_vram_gib", "prestage"]),
        (b.replace("synth_cores = 4.0", "synth_cores = 200.0"), &["cpu.synth_cores", "exceed"]),
        (b.replace("abc_gib = 12.0", "abc_gib = 20.0"), &["memory.abc_gib", "partition_gib"]),
        (b.replace("arrival = { kind = \"all_at_once\" }", "arrival = { kind = \"periodic\", period_s = 0 }"), &["period_s", "positive"]),
        (b.replace("mem_bandwidth_gbs = 300.0", "mem_bandwidth_gbs = -3.0"), &["machine.mem_bandwidth_gbs", "positive"]),
    ];
    for (text, wants) in &cases {
        let e = err_of(text);
        for w in *wants {
            assert!(e.contains(w), "error `{e}` lacks `{w}`");
        }
    }
    // Overrides are checked the same way.
    let mut c = config("phase8");
    assert!(c.set("lock", "sideways").unwrap_err().to_string().contains("pipeline.lock"));
    assert!(c.set("pw", "-3").unwrap_err().to_string().contains("pipeline.pw"));
    assert!(c.set("warp", "9").unwrap_err().to_string().contains("unknown key"));
    c.set("gw", "0").unwrap();
    assert!(c.validate().unwrap_err().to_string().contains("pipeline.gw"));
    let axes = vec!["pw=1..2".parse().unwrap(), "queue=0".parse().unwrap()];
    let e = simulator::sweep::expand(&config("phase8"), &axes).unwrap_err().to_string();
    assert!(e.contains("combination pw=1 queue=0") && e.contains("queue_capacity"), "{e}");
}

/// `proofscope analyze` works on a simulated timeline unchanged, and its analysis
/// agrees with the simulator's own figures.
#[test]
fn the_analyzer_agrees_with_the_simulator() {
    use timeline::analysis::{summarize, AnalyzeOptions};
    // Without a modelled upload: the analyzer's kernel utilisation is the union of device work,
    // copies included (timeline::analysis::utilization), the simulator's counts kernels only,
    // so the two differ as soon as upload_gib > 0 (phase9, and phase12 since issue 21 kept
    // Phase 9's pinned uploads in it).
    let mut phase12 = config("phase12");
    phase12.costs.upload_gib = 0.0;
    for c in [noisy(), phase12, config("phase7")] {
        let out = simulate(&c, Options { record: true });
        let run = out.run.unwrap();
        let r = &out.result;
        let s = summarize(&run, &AnalyzeOptions::default());
        let close = |a: Option<f64>, b: f64, what: &str| {
            let a = a.unwrap_or_else(|| panic!("{}: analyzer has no {what}", c.name));
            assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{}: {what}: analyzer {a} vs simulator {b}", c.name);
        };
        assert_eq!(s.proofs_completed, r.proofs_completed as u64, "{}", c.name);
        close(s.total_s_per_proof, r.total_s_per_proof, "total s/proof");
        close(s.steady_state_s_per_proof, r.steady_state_s_per_proof, "steady s/proof");
        close(s.throughput.latency_mean_s, r.latency_mean_s, "latency");
        close(s.gpu_utilization, r.gpus[0].gpu_utilization, "GPU union utilisation");
        close(s.kernel_utilization, r.gpus[0].kernel_utilization, "kernel utilisation");
    }
}

/// The bottleneck law: no simulated run beats its floors (total s/proof ≥ practical floor
/// ≥ theoretical floor), over a sweep of every lock mode, worker count and option.
#[test]
fn no_run_beats_its_floors() {
    let mut base = config("phase9");
    base.pipeline.proofs = 4;
    base.machine.vram_gib = 80.0;
    // With contention the partition-worker floor assumes pw syntheses always run; a run
    // with fewer at a time is faster than that. Without it the floors are strict.
    base.contention.synth_slope = 0.0;
    let axes: Vec<simulator::sweep::Vary> = ["pw=1,3,8,16,30", "gw=1,2,3", "lock=whole,kernels,two_lock", "split=false,true", "j=1,4", "cores=16,96", "prestage=false,true"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let points = simulator::sweep::expand(&base, &axes).unwrap();
    let rows = simulator::sweep::run_points(&points, &|| {});
    let mut checked = 0;
    for r in &rows {
        let x = &r.result;
        assert!(x.feasible, "{:?}: {:?}", r.params, x.failure);
        assert!(x.floors.practical_s_per_proof >= x.floors.theoretical_s_per_proof);
        assert!(x.total_s_per_proof >= x.floors.practical_s_per_proof * (1.0 - 1e-9), "{:?}: total {} < practical floor {} ({})", r.params, x.total_s_per_proof, x.floors.practical_s_per_proof, x.floors.practical_binding);
        checked += 1;
    }
    assert_eq!(checked, 5 * 3 * 3 * 2 * 2 * 2 * 2);
}

/// Phase 12 at one GPU worker: the worker prepares while its pinned upload crosses the link
/// (`kernels` lock + `prestage`), so its call is max(prep 1.9, upload 0.515) + kernels 1.824
/// = 3.724 s, not 4.239 (prep + upload): the gpu-workers floor is 10 × 3.724 = 37.24 s/proof,
/// and the run (partition workers bind at 37.67) does not beat it. The floor once added the
/// upload to the preparation (42.39 s/proof, above the simulated 39.99).
#[test]
fn phase12_at_one_gpu_worker_overlaps_prep_and_upload_in_its_floor() {
    let mut cfg = config("phase12");
    cfg.pipeline.gw = 1;
    let r = simulator::simulate(&cfg, simulator::Options::default()).result;
    let upload = 12.0 * (1u64 << 30) as f64 / 25e9;
    let want = 10.0 * (1.9f64.max(upload) + 1.824);
    let workers = r.floors.resources.iter().find(|x| x.name == "gpu workers").unwrap().s_per_proof;
    assert!((workers - want).abs() < 1e-6, "gpu workers floor {workers}, want {want}");
    assert!(r.total_s_per_proof >= r.floors.practical_s_per_proof, "total {} < practical {} ({})", r.total_s_per_proof, r.floors.practical_s_per_proof, r.floors.practical_binding);
}

/// Uploads that read host memory share its bandwidth with the syntheses: under load both
/// stretch (the reference's Phase 9 inflation), and the bandwidth floor counts the uploads.
#[test]
fn uploads_can_share_host_bandwidth() {
    let mut c = config("phase9");
    c.pipeline.proofs = 3;
    c.set("bandwidth", "120").unwrap();
    c.cpu.synth_bw_gbs = 12.0; // 10 syntheses draw 120 GB/s: the link's 25 GB/s oversubscribes it
    let off = simulate(&c, Options { record: true });
    c.cpu.uploads_use_host_bandwidth = true;
    let on = simulate(&c, Options { record: true });
    let upload_s = simulator::floors::upload_s(&c);
    let h2d = |o: &simulator::Outcome| {
        let run = o.run.as_ref().unwrap();
        let v: Vec<f64> = run.spans_of(&SpanKind::H2d).map(|s| s.duration_ns() as f64 / 1e9).collect();
        (v.iter().sum::<f64>() / v.len() as f64, v.iter().copied().fold(0.0, f64::max))
    };
    let (off_mean, off_max) = h2d(&off);
    assert!((off_mean - upload_s).abs() < 1e-6 && (off_max - upload_s).abs() < 1e-6);
    let (on_mean, on_max) = h2d(&on);
    assert!(on_max > upload_s * 1.05, "some upload ran while syntheses saturated the bus: {on_max} vs {upload_s}");
    assert!(on_mean >= upload_s);
    assert!(on.result.synth_mean_s > off.result.synth_mean_s, "syntheses lose bandwidth to the uploads");
    let bw = |r: &simulator::SimResult| r.floors.resources.iter().find(|x| x.name == "memory bandwidth").unwrap().s_per_proof;
    let expect = 10.0 * upload_s * c.machine.pcie_gbs / c.machine.mem_bandwidth_gbs;
    assert!((bw(&on.result) - bw(&off.result) - expect).abs() < 1e-9);
    assert!(on.result.bandwidth_util > off.result.bandwidth_util);
}

#[test]
fn limited_finalizers_run_one_g2_msm_at_a_time_and_bind() {
    // Phase 12 splits finalisation; make the G2 MSM the longest stage so that one
    // finaliser is the bottleneck: the b_g2 spans must never overlap, and throughput is
    // bounded by partitions × (G2 MSM + epilogue) per proof.
    let mut c = config("phase12");
    c.pipeline.split_finalize = true;
    c.pipeline.proofs = 4;
    c.set("finalizers", "1").unwrap();
    c.costs.b_g2_msm = simulator::costs::Dist::Fixed(6000.0);
    c.validate().unwrap();
    let one = simulate(&c, Options { record: true });
    let run = one.run.unwrap();
    let mut g2: Vec<(u64, u64)> = run.spans_of(&SpanKind::CpuMsmBG2).filter_map(|s| s.end_ns.map(|e| (s.start_ns, e))).collect();
    g2.sort_unstable();
    assert_eq!(g2.len() as u32, c.pipeline.proofs * c.pipeline.partitions);
    assert!(g2.windows(2).all(|w| w[1].0 >= w[0].1), "G2 MSMs overlapped with one finaliser");
    let fin_s = c.pipeline.partitions as f64 * (c.costs.b_g2_msm.mean_ms() + c.costs.epilogue.mean_ms()) / 1e3;
    assert!(one.result.steady_state_s_per_proof >= fin_s * 0.999, "{} < {fin_s}", one.result.steady_state_s_per_proof);
    assert_eq!(one.result.floors.practical_binding, "finalizers");
    assert_eq!(run.meta.config.finalizers, Some(1));
    // Unlimited finalisers: faster, and the G2 MSMs do overlap.
    c.set("finalizers", "unlimited").unwrap();
    let many = simulate(&c, Options::default()).result;
    assert!(many.steady_state_s_per_proof < 0.8 * one.result.steady_state_s_per_proof, "{} vs {}", many.steady_state_s_per_proof, one.result.steady_state_s_per_proof);
    // Zero is rejected, naming the field.
    c.pipeline.finalizers = Some(0);
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("pipeline.finalizers"), "{e}");
}

#[test]
fn moving_the_g2_msm_to_the_device_is_a_what_if() {
    // Phase 8 as given (CPU G2 MSM in the finisher), then "on the GPU": the G2 MSM leaves
    // the finisher (b_g2_msm = 0) and joins the kernels (msm_b_g2 = 200 ms).
    let cpu = config("phase8");
    let mut gpu = cpu.clone();
    gpu.set("msm_b_g2", "200").unwrap();
    gpu.set("b_g2_msm", "0").unwrap();
    assert!(gpu.set("msm_b_g2", "-1").unwrap_err().to_string().contains("msm_b_g2"));
    let a = simulate(&cpu, Options { record: true });
    let b = simulate(&gpu, Options { record: true });
    let (ra, rb) = (a.run.unwrap(), b.run.unwrap());
    assert!(ra.spans_of(&SpanKind::CpuMsmBG2).count() > 0 && ra.spans_of(&SpanKind::MsmBG2).count() == 0);
    assert_eq!(rb.spans_of(&SpanKind::CpuMsmBG2).count(), 0);
    let g2: Vec<u64> = rb.spans_of(&SpanKind::MsmBG2).map(|s| s.end_ns.unwrap() - s.start_ns).collect();
    assert_eq!(g2.len() as u32, gpu.pipeline.proofs * gpu.pipeline.partitions);
    assert!(g2.iter().all(|&d| d == 200_000_000), "{g2:?}");
    // The kernel floor grows by the G2 MSM, the CPU floor loses it.
    let (fa, fb) = (simulator::floors::compute(&cpu), simulator::floors::compute(&gpu));
    assert!(fb.kernels_s_per_proof > fa.kernels_s_per_proof, "{fa:?} {fb:?}");
    assert!(fb.host_lane_s_per_proof < fa.host_lane_s_per_proof, "{fa:?} {fb:?}");
}

#[test]
fn a_simulated_run_reads_back_as_a_cuzk_log_with_the_same_calls() {
    let mut c = simulator::calibrate::default_base();
    c.pipeline.proofs = 2;
    let run = simulate(&c, Options { record: true }).run.unwrap();
    let text = timeline::write::cuzk::render(&run);
    assert!(text.lines().all(|l| l.starts_with("TIMELINE,")));
    let back = timeline::read::read_str(&text, None);
    assert_eq!(back.diagnostics.format, "cuzk");
    assert_eq!(back.diagnostics.lines_rejected, 0, "{:?}", back.diagnostics.warnings);
    assert_eq!(back.diagnostics.open_spans, 0);
    for k in [SpanKind::Synthesis, SpanKind::Gpu, SpanKind::GpuQueue, SpanKind::GpuPickup] {
        assert_eq!(back.spans_of(&k).count(), run.spans_of(&SpanKind::Gpu).count(), "{k}");
    }
}
