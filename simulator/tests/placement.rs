//! Placement of the shared GPU queue's partitions on several GPUs (`pipeline.placement`,
//! issue 22): `memory` is the engine's rule (a device that can hold the call's VRAM, then
//! the fewest calls placed, then the lowest index), `first_idle` the shared channel whose
//! longest-idle worker takes the next partition. Expected figures are computed by hand from
//! fixed costs: synthesis 1 s, no prep, no upload unless stated.

use simulator::config::{Placement, VramPolicy};
use simulator::{simulate, Config, Options};
use timeline::SpanKind;

fn base(pw: u32, partitions: u32, kernels_ms: u32, memory: &str, upload_gib: f64) -> Config {
    with_lock("lock = \"kernels\"", pw, partitions, kernels_ms, memory, upload_gib)
}

fn with_lock(lock: &str, pw: u32, partitions: u32, kernels_ms: u32, memory: &str, upload_gib: f64) -> Config {
    let text = format!(
        r#"
[machine]
cpu_cores = 64
mem_bandwidth_gbs = 1000
ram_gib = 512
gpus = 2
vram_gib = 80
pcie_gbs = 1.073741824
[pipeline]
proofs = 1
in_flight = 1
partitions = {partitions}
pw = {pw}
gw = 2
{lock}
[memory]
baseline_gib = 0
partition_gib = 1
vram_baseline_gib = 2
{memory}
[costs]
synth = 1000
prep_msm = 0
ntt_msm_h = {kernels_ms}
batch_add = 0
tail_msm = 0
b_g2_msm = 0
upload_gib = {upload_gib}
"#
    );
    Config::from_toml_str(&text, "placement-test").unwrap_or_else(|e| panic!("{e}"))
}

/// Device of each partition's `gpu` span, in partition order, and the makespan.
fn placed(c: &Config) -> (Vec<u32>, f64) {
    let out = simulate(c, Options { record: true });
    assert!(out.result.feasible, "{:?}", out.result.failure);
    let run = out.run.expect("recorded");
    let of = |k: SpanKind| {
        let mut v: Vec<(u32, u32)> = run.spans.iter().filter(|s| s.kind == k).map(|s| (s.partition.unwrap(), s.device.unwrap())).collect();
        v.sort_unstable();
        v
    };
    let v = of(SpanKind::Gpu);
    // The queue span of each partition names the device it went to, as the engine's does.
    assert_eq!(of(SpanKind::GpuQueue), v);
    (v.into_iter().map(|(_, d)| d).collect(), out.result.makespan_s)
}

#[test]
fn an_underloaded_pair_fills_device_0_where_a_shared_channel_alternates() {
    // pw 1: partition k is synthesised k..k+1 s and queued at k+1; its call (0.5 s of
    // kernels) ends before the next one is queued, so both devices are idle at every
    // placement. `memory`: no calls in flight anywhere, the lowest index: device 0 every time.
    // `first_idle`: the idle workers start interleaved (w0 d0, w0 d1, w1 d0, w1 d1) and a
    // worker goes to the back when its call ends: d0, d1, d0, d1. Makespan 4 + 0.5 s either way.
    let mut c = base(1, 4, 500, "", 0.0);
    c.pipeline.placement = Placement::Memory;
    let (dev, makespan) = placed(&c);
    assert_eq!(dev, vec![0, 0, 0, 0]);
    assert!((makespan - 4.5).abs() < 1e-9, "{makespan}");
    c.pipeline.placement = Placement::FirstIdle;
    let (dev, makespan) = placed(&c);
    assert_eq!(dev, vec![0, 1, 0, 1]);
    assert!((makespan - 4.5).abs() < 1e-9, "{makespan}");
}

#[test]
fn a_busy_device_is_passed_over_for_the_one_with_fewer_calls() {
    // pw 1, 3 s of kernels: P0 is queued at 1 (calls: none) → device 0, 1–4; P1 at 2
    // (device 0 has 1 call, device 1 none) → device 1, 2–5; P2 at 3 (1 and 1: the lower
    // index) → device 0, whose compute lock is held until 4: kernels 4–7. Makespan 7 s.
    let mut c = base(1, 3, 3000, "", 0.0);
    c.pipeline.placement = Placement::Memory;
    let (dev, makespan) = placed(&c);
    assert_eq!(dev, vec![0, 1, 0]);
    assert!((makespan - 7.0).abs() < 1e-9, "{makespan}");
}

#[test]
fn a_device_that_cannot_hold_another_call_gets_none_until_one_ends() {
    // 16 GiB usable, 2 GiB baseline, 12 GiB per call: one call per device. pw 4: all four
    // partitions are queued at 1. Lock `two_lock` without device syncs: each call allocates
    // and uploads 1 GiB (1 s) under the allocation lock, then runs 2 s of kernels under the
    // compute lock and frees its VRAM.
    // `memory`: P0 → device 0, P1 → device 1, 1–4; P2 and P3 wait in the queue (neither
    // device can hold a second call) and go at 4, one per device: 4–7. Makespan 7 s, and with
    // `vram_policy = "fail"` nothing runs out of VRAM.
    let mem = "call_vram_gib = 12\nvram_budget_gib = 16\nvram_policy = \"fail\"";
    let mut c = with_lock("lock = \"two_lock\"\ndevice_global_sync = false", 4, 4, 2000, mem, 1.0);
    c.pipeline.placement = Placement::Memory;
    let (dev, makespan) = placed(&c);
    assert_eq!(dev, vec![0, 1, 0, 1]);
    assert!((makespan - 7.0).abs() < 1e-9, "{makespan}");
    // The shared channel hands P2 to device 0's second worker, which takes the allocation
    // lock at 2 (P0's upload done) while P0 still holds its 12 GiB: vram_oom with the fail
    // policy.
    c.pipeline.placement = Placement::FirstIdle;
    let r = simulate(&c, Options::default()).result;
    assert_eq!(r.failure.map(|f| f.kind), Some("vram_oom".into()));
    // With the wait policy the same 7 s: that worker waits 2–4 for VRAM on its device.
    c.memory.vram_policy = VramPolicy::Wait;
    let (dev, makespan) = placed(&c);
    assert_eq!(dev, vec![0, 1, 0, 1]);
    assert!((makespan - 7.0).abs() < 1e-9, "{makespan}");
}

#[test]
fn placement_is_settable_and_one_gpu_is_the_same_either_way() {
    let mut c = base(2, 6, 700, "", 0.5);
    c.set("pipeline.placement", "memory").unwrap();
    assert_eq!(c.pipeline.placement, Placement::Memory);
    assert!(c.set("pipeline.placement", "round_robin").unwrap_err().to_string().contains("round_robin"));
    c.machine.gpus = 1;
    let mem = simulate(&c, Options::default()).result;
    c.pipeline.placement = Placement::FirstIdle;
    let first = simulate(&c, Options::default()).result;
    assert!(mem.feasible && first.feasible);
    assert_eq!(mem.makespan_s, first.makespan_s);
}
