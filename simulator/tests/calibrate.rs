//! Calibration round trips: a run simulated from known costs, read back as our JSON lines
//! (with kernel spans) or re-rendered as a cuzk TIMELINE log (calls only), must give back
//! those costs; several runs at different pw give back the contention knee and slope; and
//! a model calibrated on the cuzk sample log predicts that log's own figures (parity).

use std::path::PathBuf;

use simulator::calibrate::{calibrate, default_base};
use simulator::parity;
use simulator::{simulate, Config, Options};
use timeline::Run;

fn config(name: &str) -> Config {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs").join(format!("{name}.toml"));
    Config::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn recorded(c: &Config) -> Run {
    let out = simulate(c, Options { record: true });
    assert!(out.result.feasible, "{:?}", out.result.failure);
    out.run.unwrap()
}

fn as_cuzk_log(run: &Run) -> String {
    timeline::write::cuzk::render(run)
}

#[test]
fn jsonl_round_trip_recovers_every_cost() {
    let mut c = config("phase9");
    c.pipeline.proofs = 3;
    let run = recorded(&c);
    let cal = calibrate(&[("sim".into(), run)], &c).unwrap();
    let k = &cal.config.costs;
    let close = |got: f64, want: f64, what: &str| assert!((got - want).abs() <= 0.005 * want.max(1.0), "{what}: {got} vs {want}");
    close(k.synth.mean_ms(), 34000.0, "synth");
    close(k.prep_msm.mean_ms(), 1900.0, "prep");
    close(k.ntt_msm_h.mean_ms(), 690.0, "ntt_msm_h");
    close(k.batch_add.mean_ms(), 650.0, "batch_add");
    close(k.tail_msm.mean_ms(), 83.0, "tail");
    close(k.msm_rest.mean_ms(), 401.0, "rest");
    close(k.b_g2_msm.mean_ms(), 484.0, "b_g2");
    close(k.upload_gib, 12.0, "upload");
    // The simulated uploads say nothing of their device part: none fitted.
    assert_eq!(k.upload_device_gib, None);
    assert_eq!(cal.report.gpu_source, "kernel spans");
    let p = &cal.config.pipeline;
    assert_eq!((p.proofs, p.partitions, p.pw, p.gw), (3, 10, 10, 2));
    // The calibrated model predicts the run it came from.
    let again = simulate(&cal.config, Options::default()).result;
    let orig = simulate(&c, Options::default()).result;
    assert!((again.steady_state_s_per_proof - orig.steady_state_s_per_proof).abs() / orig.steady_state_s_per_proof < 0.01);
}

#[test]
fn cuzk_log_round_trip_recovers_device_time() {
    let mut c = config("phase8");
    c.pipeline.proofs = 4;
    let log = as_cuzk_log(&recorded(&c));
    let run = timeline::read::read_str(&log, None);
    assert_eq!(run.diagnostics.lines_rejected, 0);
    let cal = calibrate(&[("sim.log".into(), run)], &default_base()).unwrap();
    assert_eq!(cal.report.gpu_source, "cuzk call spacing");
    // 3746 ms of kernels serialised by the lock (ms rounding of the log: ±2 ms).
    assert!((cal.report.device_time_per_partition_ms - 3746.0).abs() < 5.0, "{}", cal.report.device_time_per_partition_ms);
    // Calls that did not wait: prep + b_g2 + epilogue = 2200 ms.
    assert!((cal.report.cpu_part_of_call_ms - 2200.0).abs() < 60.0, "{}", cal.report.cpu_part_of_call_ms);
    assert!((cal.config.costs.synth.mean_ms() - 36500.0).abs() < 5.0);
}

#[test]
fn several_runs_give_the_contention_curve() {
    let runs: Vec<(String, Run)> = [10u32, 22, 26, 30]
        .iter()
        .map(|pw| {
            let mut c = config("phase8");
            c.set("pw", &pw.to_string()).unwrap();
            c.set("ram", "1024").unwrap();
            (format!("pw={pw}"), recorded(&c))
        })
        .collect();
    let cal = calibrate(&runs, &config("phase8")).unwrap();
    let k = &cal.config.contention;
    assert!((k.synth_knee - 20.0).abs() <= 2.0, "{k:?}");
    assert!((k.synth_slope - 0.25).abs() <= 0.05, "{k:?}");
    // One run at a single concurrency cannot identify a slope: it says so.
    let one = calibrate(&runs[..1], &config("phase8")).unwrap();
    assert_eq!(one.config.contention.synth_slope, 0.0);
    assert!(one.report.notes.iter().any(|n| n.contains("no contention slope identifiable")));
}

#[test]
fn calibrated_from_the_cuzk_sample_it_predicts_the_sample() {
    // The reference fixture, kept in the repo by the timeline crate.
    let measured = timeline::read::read_str(include_str!("../../timeline/assets/cuzk-sample.log"), None);
    assert_eq!(measured.diagnostics.lines_rejected, 0);
    let cal = calibrate(&[("cuzk-sample.log".into(), measured.clone())], &default_base()).unwrap();
    let p = &cal.config.pipeline;
    assert_eq!((p.proofs, p.partitions, p.gw), (3, 10, 2));
    assert_eq!(p.pw, 6);
    let sim = simulate(&cal.config, Options { record: true });
    let par = parity::compare_runs(&measured, sim.run.as_ref().unwrap());
    let total = par.metrics.iter().find(|m| m.metric == "total s/proof").unwrap();
    assert!(total.error_pct.abs() < 5.0, "{}", par.markdown());
    let util = par.metrics.iter().find(|m| m.metric == "GPU union utilisation").unwrap();
    assert!(util.error_pct.abs() < 5.0, "{}", par.markdown());
    eprintln!("{}", par.markdown());
}

#[test]
fn the_analyzer_s_summary_of_a_simulated_run_matches_its_result() {
    let c = config("phase8");
    let out = simulate(&c, Options { record: true });
    let m = timeline::analysis::summarize(out.run.as_ref().unwrap(), &Default::default());
    let r = &out.result;
    let t = &m.throughput;
    assert_eq!(t.proofs_completed, 5);
    assert!((t.total_s_per_proof.unwrap() - r.total_s_per_proof).abs() < 1e-9);
    assert!((t.steady_state_s_per_proof.unwrap() - r.steady_state_s_per_proof).abs() < 1e-9);
    assert!((t.latency_mean_s.unwrap() - r.latency_mean_s).abs() < 1e-9);
    assert!((m.utilization.gpu_utilization.unwrap() - r.busiest_gpu_utilization()).abs() < 1e-9);
    let mean_s = |k: &str| m.phases.kind(k).unwrap().mean_ms / 1e3;
    assert!((mean_s("synthesis") - r.synth_mean_s).abs() < 1e-9);
    assert!((mean_s("gpu") - r.gpu_call_mean_s).abs() < 1e-9);
    assert!((mean_s("gpu_queue") - r.queue_wait_mean_s).abs() < 1e-9);
    assert!((m.memory.peak_rss_gib.unwrap() - r.peak_ram_gib).abs() < 1e-6);
    let same = parity::compare_runs(out.run.as_ref().unwrap(), out.run.as_ref().unwrap());
    assert_eq!(same.within_5pct, same.metrics.len());
}


/// A timeline shaped like the prover's (CUDA backend): per partition a `gpu` call with
/// `prep_msm`, then under the compute lock `ntt`, `msm_h`, and `msm_l`/`msm_a`/`msm_b_g1`
/// with `batch_add` and `tail_msm` NESTED inside each (arg `query`), and the tail's
/// `h2d` nested inside `tail_msm`; `b_g2_msm`/`finalize` split off the worker. One GPU
/// worker, calls back to back: no lock waits.
fn prover_shaped_run() -> Run {
    use timeline::{Span, SpanKind as K};
    const MS: u64 = 1_000_000;
    let mut run = Run::default();
    run.meta.source = "prover".into();
    run.meta.config.pw = Some(1);
    run.meta.config.gw = Some(1);
    run.meta.config.lock = Some(timeline::LockMode::Kernels);
    run.meta.config.gpus = Some(1);
    run.meta.config.partitions = Some(3);
    run.meta.config.proofs = Some(1);
    run.meta.config.split_finalize = Some(true);
    let job = "proof-0000";
    let sp = |k: K, a: u64, b: u64, p: u32| Span::new(k, a * MS, b * MS).job(job).partition(p).worker(0).device(0);
    for p in 0..3u32 {
        let t = 10 * p as u64;
        run.spans.push(Span::new(K::Synthesis, t, t + 10 * MS).job(job).partition(p).worker(0));
        // Call p starts at 100 + 300p ms: prep 40, then 250 ms of device work.
        let c = 100 + 300 * p as u64;
        run.spans.push(sp(K::Gpu, c, c + 290, p).arg("lock", "kernels"));
        run.spans.push(sp(K::PrepMsm, c, c + 40, p));
        run.spans.push(sp(K::LockHold, c + 40, c + 290, p).arg("lock", "compute"));
        run.spans.push(sp(K::Ntt, c + 40, c + 60, p));
        run.spans.push(sp(K::MsmH, c + 60, c + 90, p));
        // (query, start, end, batch_add ms, tail ms): the rest of the query is host work.
        for (q, a, b, ba, tail) in [("msm_l", 90, 190, 10, 85), ("msm_a", 190, 250, 8, 50), ("msm_b_g1", 250, 290, 5, 33)] {
            let (a, b) = (c + a, c + b);
            let kind = match q {
                "msm_l" => K::MsmL,
                "msm_a" => K::MsmA,
                _ => K::MsmBG1,
            };
            run.spans.push(sp(kind, a, b, p));
            run.spans.push(sp(K::BatchAdd, a + 1, a + 1 + ba, p).arg("query", q));
            let ts = a + 1 + ba;
            run.spans.push(sp(K::TailMsm, ts, ts + tail, p).arg("query", q));
            run.spans.push(sp(K::H2d, ts, ts + tail / 3, p).arg("what", q));
        }
        run.spans.push(sp(K::CpuMsmBG2, c + 290, c + 390, p));
        run.spans.push(sp(K::Finalize, c + 390, c + 391, p));
    }
    run.normalize();
    run
}

#[test]
fn nested_prover_spans_are_not_counted_twice() {
    let measured = prover_shaped_run();
    let cal = calibrate(&[("prover-shaped".into(), measured.clone())], &default_base()).unwrap();
    let k = &cal.config.costs;
    let close = |got: f64, want: f64, what: &str| assert!((got - want).abs() <= 0.01 * want.max(1.0), "{what}: {got} vs {want}\n{}", cal.to_toml());
    // Union of the device-work spans per partition: 20 + 30 + 100 + 60 + 40 = 250 ms.
    close(cal.report.device_time_per_partition_ms, 250.0, "device time per partition");
    close(k.ntt_msm_h.mean_ms(), 50.0, "ntt_msm_h");
    close(k.batch_add.mean_ms(), 23.0, "batch_add");
    close(k.tail_msm.mean_ms(), 168.0, "tail_msm");
    // The L/A/B_G1 MSMs less the batch_add and tail_msm nested in them.
    close(k.msm_rest.mean_ms(), 200.0 - 23.0 - 168.0, "msm_rest");
    // The h2d lies inside tail_msm: already in the kernel time, no separate upload.
    assert_eq!(k.upload_gib, 0.0, "{}", cal.to_toml());
    close(k.prep_msm.mean_ms(), 40.0, "prep_msm");
    // The calibrated model predicts the measured call: prep 40 + 250 ms of device work.
    let sim = simulate(&cal.config, Options { record: true });
    assert!(sim.result.feasible, "{:?}", sim.result.failure);
    let par = parity::compare_runs(&measured, sim.run.as_ref().unwrap());
    let call = par.metrics.iter().find(|m| m.metric == "GPU call (mean)").unwrap();
    assert!(call.error_pct.abs() < 2.0, "{}", par.markdown());
}

#[test]
fn uploads_outside_the_kernels_stay_the_upload() {
    // The same run plus a parameter upload before the first call (outside every
    // kernel span): it is transfer time of its own, spread over the three partitions.
    let mut run = prover_shaped_run();
    run.spans.push(timeline::Span::new(timeline::SpanKind::H2d, 40_000_000, 100_000_000).job("proof-0000").partition(0).worker(0).device(0));
    run.normalize();
    let base = default_base();
    let cal = calibrate(&[("prover-shaped".into(), run)], &base).unwrap();
    let want_gib = 0.020 * base.machine.pcie_gbs * 1e9 / (1u64 << 30) as f64;
    assert!((cal.config.costs.upload_gib - want_gib).abs() < 0.002, "{} vs {want_gib}", cal.config.costs.upload_gib);
    assert!((cal.report.device_time_per_partition_ms - 250.0).abs() < 2.5, "{}", cal.report.device_time_per_partition_ms);
}

#[test]
fn the_parameters_one_off_upload_is_not_a_partitions_upload() {
    // Run 52's shape: the parameters (what = params) uploaded inside the first partition's
    // call, 60 ms here. Without the label it would be spread over the three partitions as
    // above (20 ms each); labelled, it is left out and named in a note.
    let mut run = prover_shaped_run();
    run.spans.push(timeline::Span::new(timeline::SpanKind::H2d, 40_000_000, 100_000_000).job("proof-0000").partition(0).worker(0).device(0).arg("what", "params").arg("bytes", 3u64 << 30));
    run.normalize();
    let cal = calibrate(&[("params-in-call".into(), run)], &default_base()).unwrap();
    assert_eq!(cal.config.costs.upload_gib, 0.0, "{}", cal.to_toml());
    assert!((cal.report.device_time_per_partition_ms - 250.0).abs() < 2.5, "{}", cal.report.device_time_per_partition_ms);
    assert!(cal.report.notes.iter().any(|n| n.contains("one-off upload (3.0 GiB in 0.06 s)")), "{:?}", cal.report.notes);
}

#[test]
fn a_g2_msm_on_the_device_is_kernel_time_not_finisher_time() {
    // The prover-shaped run with g2_msm = device: each partition's B MSM in G2 is an
    // `msm_b_g2` span (with nested batch_add/tail_msm) after msm_b_g1 under the compute
    // lock, and the finisher only assembles (no b_g2_msm span).
    use timeline::{Span, SpanKind as K};
    const MS: u64 = 1_000_000;
    let mut run = prover_shaped_run();
    run.spans.retain(|s| s.kind != K::CpuMsmBG2);
    run.meta.config.g2_msm = Some("device".into());
    for p in 0..3u32 {
        let c = 100 + 300 * p as u64;
        let sp = |k: K, a: u64, b: u64| Span::new(k, a * MS, b * MS).job("proof-0000").partition(p).worker(0).device(0);
        run.spans.push(sp(K::MsmBG2, c + 290, c + 350));
        run.spans.push(sp(K::BatchAdd, c + 291, c + 301).arg("query", "msm_b_g2"));
        run.spans.push(sp(K::TailMsm, c + 301, c + 349).arg("query", "msm_b_g2"));
    }
    run.normalize();
    let cal = calibrate(&[("g2-on-device".into(), run)], &default_base()).unwrap();
    let k = &cal.config.costs;
    let close = |got: f64, want: f64, what: &str| assert!((got - want).abs() <= 0.01 * want.max(1.0), "{what}: {got} vs {want}\n{}", cal.to_toml());
    close(cal.report.device_time_per_partition_ms, 310.0, "device time per partition");
    close(k.batch_add.mean_ms(), 33.0, "batch_add");
    close(k.tail_msm.mean_ms(), 216.0, "tail_msm");
    close(k.msm_rest.mean_ms(), 260.0 - 33.0 - 216.0, "msm_rest");
    assert_eq!(k.b_g2_msm.mean_ms(), 0.0, "{}", cal.to_toml());
    assert!(cal.report.notes.iter().any(|n| n.contains("G2 MSM ran on the device")), "{:?}", cal.report.notes);
}

#[test]
fn cuda_prover_calls_upload_after_their_preparation_for_any_lock() {
    // The CUDA backend prepares, uploads into VRAM allocated for the call, then asks for the
    // compute lock: the model runs its calls in that order (`upload_after_prep`, no
    // prestage, no uploads waiting for the kernels) for either lock. Runs of other backends
    // keep the base's choice.
    let mut run = prover_shaped_run();
    run.meta.config.backend = Some("cuda".into());
    let cal = calibrate(&[("cuda-kernels".into(), run.clone())], &default_base()).unwrap();
    let p = &cal.config.pipeline;
    assert!(p.upload_after_prep && !p.uploads_wait_for_kernels && !p.prestage && cal.config.memory.prestage_vram_gib == 0.0, "{}", cal.to_toml());
    let mut whole = run.clone();
    whole.meta.config.lock = Some(timeline::LockMode::Whole);
    let cal = calibrate(&[("cuda-whole".into(), whole)], &default_base()).unwrap();
    assert!(cal.config.pipeline.upload_after_prep && !cal.config.pipeline.prestage, "{}", cal.to_toml());
    run.meta.config.backend = Some("cpu".into());
    let cal = calibrate(&[("cpu".into(), run)], &default_base()).unwrap();
    assert!(!cal.config.pipeline.prestage && !cal.config.pipeline.upload_after_prep, "{}", cal.to_toml());
    // Switching prestage on in a what-if sizes the staging buffer to one partition's upload,
    // and off again drops it (else the config would be refused).
    let mut c = cal.config.clone();
    c.set("prestage", "true").unwrap();
    assert!(c.memory.prestage_vram_gib > 0.0);
    c.set("prestage", "false").unwrap();
    assert_eq!(c.memory.prestage_vram_gib, 0.0);
}

#[test]
fn cuda_upload_is_costed_at_what_it_takes_beside_no_other_kernels() {
    // Two workers on one device. Even partitions upload alone (10 ms) then hold the lock for
    // 100 ms of kernels; odd ones upload during the even one's kernels and stretch to 60 ms.
    // The upload cost is the alone one, and the report says why.
    use timeline::{Span, SpanKind as K};
    const MS: u64 = 1_000_000;
    let mut run = Run::default();
    run.meta.source = "prover".into();
    for (k, v) in [("pw", 2u32), ("gw", 2), ("gpus", 1), ("partitions", 6), ("proofs", 1)] {
        match k {
            "pw" => run.meta.config.pw = Some(v),
            "gw" => run.meta.config.gw = Some(v),
            "gpus" => run.meta.config.gpus = Some(v),
            "partitions" => run.meta.config.partitions = Some(v),
            _ => run.meta.config.proofs = Some(v),
        }
    }
    run.meta.config.lock = Some(timeline::LockMode::Kernels);
    run.meta.config.backend = Some("cuda".into());
    let job = "proof-0000";
    for p in 0..6u32 {
        let w = p % 2;
        let sp = |k: K, a: u64, b: u64| Span::new(k, a * MS, b * MS).job(job).partition(p).worker(w).device(0);
        let base = 1000 * (p / 2) as u64 + 100;
        run.spans.push(Span::new(K::Synthesis, (base - 90) * MS, (base - 5) * MS).job(job).partition(p).worker(w));
        let (up, hold) = if p % 2 == 0 { ((base, base + 10), (base + 10, base + 110)) } else { ((base + 20, base + 80), (base + 110, base + 210)) };
        run.spans.push(sp(K::Gpu, up.0, hold.1).arg("lock", "kernels"));
        run.spans.push(sp(K::H2d, up.0, up.1).arg("what", "abc"));
        run.spans.push(sp(K::LockHold, hold.0, hold.1).arg("lock", "compute"));
        run.spans.push(sp(K::Ntt, hold.0, hold.1));
        run.spans.push(sp(K::Finalize, hold.1, hold.1 + 1));
    }
    run.normalize();
    let base = default_base();
    let cal = calibrate(&[("two-workers".into(), run)], &base).unwrap();
    let upload_ms = cal.config.costs.upload_gib * (1u64 << 30) as f64 / (base.machine.pcie_gbs * 1e9) * 1e3;
    assert!((upload_ms - 10.0).abs() < 0.5, "upload {upload_ms} ms, want the alone 10 ms\n{}", cal.to_toml());
    assert!(!cal.config.pipeline.prestage);
    assert!(cal.report.notes.iter().any(|n| n.contains("10.0 ms per partition alone (3 partitions) vs 60.0 ms")), "{:?}", cal.report.notes);
}

/// Several runs of one configuration (a campaign's repeats) calibrate like one: the same
/// costs, and per-partition figures are not summed across runs that share job and
/// partition ids.
#[test]
fn repeats_of_one_configuration_calibrate_like_one_run() {
    let mut c = config("phase9");
    c.pipeline.proofs = 3;
    c.set("lock", "kernels").unwrap();
    let run = recorded(&c);
    let one = calibrate(&[("a".into(), run.clone())], &c).unwrap();
    let two = calibrate(&[("a".into(), run.clone()), ("b".into(), run)], &c).unwrap();
    let (k1, k2) = (&one.config.costs, &two.config.costs);
    for (what, a, b) in [
        ("synth", k1.synth.mean_ms(), k2.synth.mean_ms()),
        ("prep", k1.prep_msm.mean_ms(), k2.prep_msm.mean_ms()),
        ("ntt_msm_h", k1.ntt_msm_h.mean_ms(), k2.ntt_msm_h.mean_ms()),
        ("tail", k1.tail_msm.mean_ms(), k2.tail_msm.mean_ms()),
    ] {
        assert!((a - b).abs() <= 1e-6 * a.max(1.0), "{what}: {a} vs {b}");
    }
    let held = |cal: &simulator::calibrate::Calibration| cal.report.notes.iter().find(|n| n.starts_with("kernel lock held")).cloned();
    assert!(held(&one).is_some(), "{:?}", one.report.notes);
    assert_eq!(held(&one), held(&two));
}

/// The machine comes from the run's meta where it says it; what it does not say is named as
/// assumed from the base config, never taken silently.
#[test]
fn the_machine_comes_from_the_run_s_meta_and_the_rest_is_named() {
    let mut run = prover_shaped_run();
    run.meta.machine = timeline::MachineInfo { cpu_cores: Some(16), ram_gib: Some(125.47), gpu_mem_gib: vec![139.81], mem_bandwidth_gbs: None };
    let cal = calibrate(&[("h200.jsonl".into(), run.clone())], &default_base()).unwrap();
    let m = &cal.config.machine;
    assert_eq!((m.cpu_cores, m.ram_gib, m.vram_gib), (16.0, 125.5, 139.8));
    assert_eq!(cal.report.assumed_machine, vec!["mem_bandwidth_gbs = 300".to_string(), "pcie_gbs = 25".to_string()]);
    assert!(cal.to_toml().contains("taken from the base config `phase8`: mem_bandwidth_gbs = 300"), "{}", cal.to_toml());
    // Without a machine in the meta, every value is named as assumed.
    run.meta.machine = Default::default();
    let cal = calibrate(&[("old.jsonl".into(), run)], &default_base()).unwrap();
    assert_eq!(cal.report.assumed_machine.len(), 5);
    assert_eq!(cal.config.machine.cpu_cores, 96.0);
}

#[test]
fn costs_scale_to_a_larger_partition_by_their_laws() {
    use simulator::calibrate::{scale_to, Law};
    // 2^22 → 2^27: linear ×32; n log n ×32·27/22; n / log n ×32·22/27.
    let (a, b) = (1u64 << 22, 1u64 << 27);
    assert_eq!(Law::Linear.factor(a, b), 32.0);
    assert!((Law::NLogN.factor(a, b) - 32.0 * 27.0 / 22.0).abs() < 1e-9);
    assert!((Law::NOverLogN.factor(a, b) - 32.0 * 22.0 / 27.0).abs() < 1e-9);
    let mut c = simulator::Config::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/phase12.toml"))).unwrap();
    let before = c.clone();
    let notes = scale_to(&mut c, a, b, Some(0.25));
    c.validate().unwrap();
    assert!((c.costs.synth.mean_ms() - 32.0 * before.costs.synth.mean_ms()).abs() < 1e-6);
    assert!((c.costs.tail_msm.mean_ms() - before.costs.tail_msm.mean_ms() * 32.0 * 22.0 / 27.0).abs() < 1e-6);
    // ntt_msm_h: a quarter NTT, three quarters H MSM.
    let f = 0.25 * 32.0 * 27.0 / 22.0 + 0.75 * 32.0 * 22.0 / 27.0;
    assert!((c.costs.ntt_msm_h.mean_ms() - before.costs.ntt_msm_h.mean_ms() * f).abs() < 1e-6);
    assert_eq!(c.costs.epilogue, before.costs.epilogue);
    // The memory section is the base's (it describes the target); [circuit] says the size.
    assert_eq!(c.memory, before.memory);
    assert_eq!(c.circuit.as_ref().map(|x| x.constraints), Some(b));
    assert!(notes.iter().any(|n| n.contains("NTT share 0.25")), "{notes:?}");
}

#[test]
fn the_device_part_of_the_uploads_is_recovered_from_their_gpu_ns() {
    // phase9's uploads (12 GiB) with 3 GiB of each on the device: the h2d spans carry it as
    // gpu_ns, and calibrate gives it back as upload_device_gib (the upload itself unchanged).
    let mut c = config("phase9");
    c.pipeline.proofs = 3;
    c.costs.upload_device_gib = Some(3.0);
    let cal = calibrate(&[("sim".into(), recorded(&c))], &config("phase9")).unwrap();
    let k = &cal.config.costs;
    assert!((k.upload_gib - 12.0).abs() <= 0.06, "{}", k.upload_gib);
    let d = k.upload_device_gib.unwrap_or_else(|| panic!("not fitted: {:?}", cal.report.notes));
    assert!((d - 3.0).abs() <= 0.015, "{d}");
    assert!(cal.report.notes.iter().any(|n| n.starts_with("upload_device_gib = ")), "{:?}", cal.report.notes);
}
