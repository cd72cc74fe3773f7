//! Device memory (issue 19's `--vram-budget`): parameters resident or streamed over PCIe,
//! and GPU workers whose buffers do not all fit serialising instead of failing. Expected
//! figures are computed by hand from fixed costs: synthesis 1 s, an upload of 1 GiB at
//! 2^30/1e9 GB/s = 1 s, kernels 2 s, two partitions synthesised together.

use simulator::{simulate, Config, Options};
use timeline::SpanKind;

fn base(lock: &str, pipeline: &str, memory: &str) -> Config {
    let text = format!(
        r#"
[machine]
cpu_cores = 64
mem_bandwidth_gbs = 1000
ram_gib = 512
gpus = 1
vram_gib = 80
pcie_gbs = 1.073741824
[pipeline]
proofs = 1
in_flight = 1
partitions = 2
pw = 2
gw = 2
lock = "{lock}"
{pipeline}
[memory]
baseline_gib = 0
partition_gib = 1
vram_baseline_gib = 2
{memory}
[costs]
synth = 1000
prep_msm = 0
ntt_msm_h = 2000
batch_add = 0
tail_msm = 0
b_g2_msm = 0
upload_gib = 1
"#
    );
    Config::from_toml_str(&text, "vram-test").unwrap_or_else(|e| panic!("{e}"))
}

fn makespan(c: &Config) -> f64 {
    let r = simulate(c, Options::default()).result;
    assert!(r.feasible, "{:?}", r.failure);
    r.makespan_s
}

#[test]
fn per_call_buffers_that_do_not_both_fit_serialise_the_calls() {
    // two_lock without device syncs, 12 GiB per call. On 80 GiB: W0 uploads 1–2 and runs
    // its kernels 2–4; W1 uploads 2–3 (the copy engine is free at 2) and waits for the
    // compute lock until 4: kernels 4–6. Makespan 6 s.
    let two = "device_global_sync = false";
    let c = base("two_lock", two, "call_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&c) - 6.0).abs() < 1e-9);
    // Uploads that queue behind the other worker's kernels run under the compute lock: W0
    // uploads 1–2 and runs its kernels 2–4; W1 waits for the lock until 4, uploads 4–5,
    // kernels 5–7. Makespan 7 s.
    let behind = base("two_lock", "device_global_sync = false\nuploads_wait_for_kernels = true", "call_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&behind) - 7.0).abs() < 1e-9, "{}", makespan(&behind));
    // A 16 GiB budget: 2 + 12 leaves no room for W1's 12 GiB until W0 frees its buffer at 4:
    // W1 uploads 4–5, kernels 5–7. Makespan 7 s; W1 waited 2–4 for VRAM.
    let mut c16 = c.clone();
    c16.memory.vram_budget_gib = Some(16.0);
    let out = simulate(&c16, Options { record: true });
    assert!((out.result.makespan_s - 7.0).abs() < 1e-9, "{}", out.result.makespan_s);
    assert_eq!(out.result.vram_waits, 1);
    assert!((out.result.vram_wait_total_s - 2.0).abs() < 1e-9);
    assert!((out.result.peak_vram_gib - 14.0).abs() < 1e-9);
    let waits: Vec<_> = out.run.unwrap().spans.into_iter().filter(|s| s.kind == SpanKind::LockWait && s.args.get("lock").and_then(|v| v.as_str()) == Some("vram_budget")).collect();
    assert_eq!(waits.len(), 1);
    // The floor names the VRAM: 2 × (upload 1 + kernels 2) / 1 = 6 s/proof.
    let f = &out.result.floors;
    assert_eq!(f.practical_binding, "vram");
    assert!((f.practical_s_per_proof - 6.0).abs() < 1e-9, "{}", f.practical_s_per_proof);
    // The same budget with vram_policy = "fail" (the reference's Phase 10): vram_oom.
    let mut fail = c16.clone();
    fail.memory.vram_policy = simulator::config::VramPolicy::Fail;
    let r = simulate(&fail, Options::default()).result;
    assert_eq!(r.failure.map(|f| f.kind), Some("vram_oom".into()));
}

#[test]
fn uploads_after_the_preparation_run_outside_the_kernels_lock() {
    // This engine's CUDA call order (`upload_after_prep`): prep, the call's VRAM, the upload,
    // then the compute lock. kernels: W0 uploads 1–2, kernels 2–4; W1 uploads 2–3 (the copy
    // engine is free at 2), beside W0's kernels, and waits for the lock: kernels 4–6. 6 s.
    let k = "upload_after_prep = true";
    let c = base("kernels", k, "call_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&c) - 6.0).abs() < 1e-9, "{}", makespan(&c));
    // The same with the upload inside the lock (neither flag): W1 takes the lock at 4,
    // uploads 4–5, kernels 5–7. 7 s.
    let inside = base("kernels", "", "call_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&inside) - 7.0).abs() < 1e-9, "{}", makespan(&inside));
    // The lock covers the kernels only: floor 2 partitions × 2 s = 4 s/proof (with the
    // upload in it, 2 × 3 = 6).
    let lock_floor = |c: &Config| simulate(c, Options::default()).result.floors.resources.iter().find(|x| x.name == "gpu lock").unwrap().s_per_proof;
    assert!((lock_floor(&c) - 4.0).abs() < 1e-9 && (lock_floor(&inside) - 6.0).abs() < 1e-9, "{} {}", lock_floor(&c), lock_floor(&inside));
    // A 16 GiB budget: W1's 12 GiB fit only when W0 frees its buffer at 4 (its allocation
    // comes before its upload, outside any lock): W1 waits 1–4, uploads 4–5, kernels 5–7.
    let mut c16 = c.clone();
    c16.memory.vram_budget_gib = Some(16.0);
    let r = simulate(&c16, Options::default()).result;
    assert!((r.makespan_s - 7.0).abs() < 1e-9 && r.vram_waits == 1 && (r.vram_wait_total_s - 3.0).abs() < 1e-9, "{r:?}");
    // two_lock: the allocation lock covers prep and upload (W0 1–2, W1 2–3), the compute
    // lock the kernels (W0 2–4, W1 4–6): 6 s.
    let two = base("two_lock", "device_global_sync = false\nupload_after_prep = true", "call_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&two) - 6.0).abs() < 1e-9, "{}", makespan(&two));
    // With a preparation of 1 s, in the allocation lock: W0 holds it 1–3 (prep, upload) and
    // runs its kernels 3–5; W1 holds it 3–5, kernels 5–7: 7 s. Its floor: the allocation
    // lock (prep + upload = 2 s) against the kernels (2 s): 2 × 2 = 4 s/proof.
    let mut prep = two.clone();
    prep.costs.prep_msm = simulator::costs::Dist::Fixed(1000.0);
    assert!((makespan(&prep) - 7.0).abs() < 1e-9, "{}", makespan(&prep));
    assert!((lock_floor(&prep) - 4.0).abs() < 1e-9, "{}", lock_floor(&prep));
    // whole: one call at a time, upload and kernels inside: 1 + 3 + 3 = 7 s.
    let whole = base("whole", k, "call_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&whole) - 7.0).abs() < 1e-9, "{}", makespan(&whole));
    // Not with prestage, nor with uploads that wait for the kernels: refused, naming the key.
    for prestage in [true, false] {
        let mut both = base("kernels", k, "");
        both.pipeline.prestage = prestage;
        both.memory.prestage_vram_gib = if prestage { 12.0 } else { 0.0 };
        both.pipeline.uploads_wait_for_kernels = !prestage;
        let err = both.validate().err().expect("refused").to_string();
        assert!(err.contains("pipeline.upload_after_prep"), "{err}");
    }
    // As a what-if (`--set`), either switch gives way to the other.
    let mut what_if = c.clone();
    what_if.set("prestage", "true").unwrap();
    assert!(what_if.pipeline.prestage && !what_if.pipeline.upload_after_prep && what_if.validate().is_ok());
    what_if.set("upload_after_prep", "true").unwrap();
    assert!(!what_if.pipeline.prestage && what_if.memory.prestage_vram_gib == 0.0 && what_if.validate().is_ok());
    what_if.set("uploads_wait_for_kernels", "true").unwrap();
    assert!(!what_if.pipeline.upload_after_prep && what_if.validate().is_ok());
}

#[test]
fn prestaged_buffers_that_do_not_all_fit_leave_workers_idle() {
    // kernels lock, pre-staged 12 GiB buffers, uploads beside prep outside the lock. Two
    // workers on 80 GiB: W0 uploads 1–2, kernels 2–4; W1's upload queues behind (2–3),
    // kernels after the lock frees, 4–6: 6 s. On 16 GiB only one buffer fits: one worker
    // does both, upload 1–2, kernels 2–4, upload 4–5, kernels 5–7: 7 s, and the result says why.
    let c = base("kernels", "prestage = true", "prestage_vram_gib = 12\nvram_policy = \"wait\"");
    assert!((makespan(&c) - 6.0).abs() < 1e-9);
    let mut c16 = c.clone();
    c16.set("vram_budget", "16").unwrap();
    let r = simulate(&c16, Options::default()).result;
    assert!((r.makespan_s - 7.0).abs() < 1e-9, "{}", r.makespan_s);
    assert!(r.vram_notes.iter().any(|n| n.contains("only 1 of 2 workers")), "{:?}", r.vram_notes);
    // Without the wait policy: vram_oom naming the worker.
    c16.memory.vram_policy = simulator::config::VramPolicy::Fail;
    let r = simulate(&c16, Options::default()).result;
    assert!(r.failure.as_ref().is_some_and(|f| f.kind == "vram_oom" && f.detail.contains("worker 1")), "{:?}", r.failure);
}

#[test]
fn parameters_stream_when_they_do_not_fit_and_stay_resident_when_they_do() {
    // One worker, no upload, 2 GiB of parameters (2 s over PCIe), kernels 2 s, buffers 4 GiB.
    let mut c = base("kernels", "", "call_vram_gib = 4\nparams_vram_gib = 2");
    c.pipeline.gw = 1;
    c.pipeline.partitions = 1;
    c.costs.upload_gib = 0.0;
    // 80 GiB: resident (2 + 2 + 4 fit): synthesis 1 + kernels 2 = 3 s; peak 2 + 2 + 4.
    let r = simulate(&c, Options::default()).result;
    assert!(!r.params_streamed && (r.makespan_s - 3.0).abs() < 1e-9 && (r.peak_vram_gib - 8.0).abs() < 1e-9, "{r:?}");
    // A 7 GiB budget: 2 + 2 + 4 = 8 > 7, the parameters stream: 1 + (2 + 2) = 5 s, or
    // 1 + max(2, 2) = 3 s with the transfer overlapping the kernels.
    c.memory.vram_budget_gib = Some(7.0);
    let r = simulate(&c, Options::default()).result;
    assert!(r.params_streamed && (r.makespan_s - 5.0).abs() < 1e-9, "{} {:?}", r.makespan_s, r.vram_notes);
    assert!(r.vram_notes[0].contains("parameters streamed"));
    assert!((r.floors.resources.iter().find(|x| x.name == "pcie").unwrap().s_per_proof - 2.0).abs() < 1e-9);
    // Streamed at a rate of their own (an engine's chunked stream, not the link): 2 GiB at
    // 0.5 GB/s is 4.295 s: 1 + (4.295 + 2) s.
    c.memory.params_stream_gbs = Some(0.5);
    let want = 1.0 + 2.0 * (1u64 << 30) as f64 / 0.5e9 + 2.0;
    assert!((makespan(&c) - want).abs() < 1e-6, "{} vs {want}", makespan(&c));
    c.memory.params_stream_gbs = None;
    c.memory.params_stream_overlap = true;
    assert!((makespan(&c) - 3.0).abs() < 1e-9);
    // Forced resident on 7 GiB: the parameters and one call do not fit: vram_oom at the call.
    c.memory.params_on_device = simulator::config::ParamsPlacement::Resident;
    let r = simulate(&c, Options::default()).result;
    assert_eq!(r.failure.map(|f| f.kind), Some("vram_oom".into()));
}

#[test]
fn an_uploads_device_part_is_what_the_analyzer_counts_as_device_work() {
    // kernels, upload after the preparation: W0 uploads 1–2, kernels 2–4; W1 uploads 2–3,
    // kernels 4–6 (as above). The analyzer's GPU floor counts each partition's device work:
    // without `upload_device_gib` the whole upload, 1 s + 2 s of kernels = 3000 ms a
    // partition; with 0.25 GiB of it on the device (0.25 s at 2^30/1e9 GB/s, recorded as the
    // h2d span's `gpu_ns`, at its end, as the engine records its copies) 0.25 + 2 = 2250 ms.
    // The run itself is the same: 6 s either way.
    use timeline::analysis::{summarize, AnalyzeOptions};
    let whole = base("kernels", "upload_after_prep = true", "");
    let mut part = whole.clone();
    part.set("costs.upload_device_gib", "0.25").unwrap();
    part.validate().unwrap();
    let serial_gpu_ms = |c: &Config| {
        let out = simulate(c, Options { record: true });
        assert!((out.result.makespan_s - 6.0).abs() < 1e-9, "{}", out.result.makespan_s);
        let run = out.run.unwrap();
        let h2d: Vec<_> = run.spans.iter().filter(|s| s.kind == SpanKind::H2d).collect();
        assert_eq!(h2d.len(), 2);
        assert!(h2d.iter().all(|s| s.duration_ns() == 1_000_000_000));
        let gpu_ns: Vec<Option<u64>> = h2d.iter().map(|s| s.args.get("gpu_ns").and_then(|v| v.as_u64())).collect();
        let f = summarize(&run, &AnalyzeOptions::default()).verdict.floors;
        (f.serial_gpu_ms_per_partition.unwrap(), gpu_ns)
    };
    let (ms, gpu_ns) = serial_gpu_ms(&whole);
    assert!((ms - 3000.0).abs() < 1e-6 && gpu_ns == vec![None, None], "{ms} {gpu_ns:?}");
    let (ms, gpu_ns) = serial_gpu_ms(&part);
    assert!((ms - 2250.0).abs() < 1e-6 && gpu_ns == vec![Some(250_000_000); 2], "{ms} {gpu_ns:?}");
    // At most the whole upload; negative refused, naming the key.
    part.set("costs.upload_device_gib", "4").unwrap();
    assert!((serial_gpu_ms(&part).0 - 3000.0).abs() < 1e-6);
    part.set("costs.upload_device_gib", "-1").unwrap();
    assert!(part.validate().unwrap_err().to_string().contains("costs.upload_device_gib"));
}
