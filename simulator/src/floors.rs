//! Floors computed from the model's demands, not from running it (the bottleneck law):
//! for every resource, the time it must work per proof divided by how many servers it
//! has; the largest is the floor and its resource binds.
//!
//! - **theoretical**: the physical resources only: GPU kernel time per device, PCIe,
//!   CPU cores, host memory bandwidth. No software knob can beat it.
//! - **practical**: adds what the configuration imposes: the GPU lock's hold time
//!   (`whole` holds it through prep and epilogue), the partition and GPU worker pools
//!   (synthesis time at the pool's own concurrency, contention included) and, with split
//!   finalisation and a limited number of finalisers, their G2 MSM + epilogue time. The
//!   simulation can never beat it.
//! - **CPU floor** (`host_lane_s_per_proof`): the CPU phases of the GPU calls
//!   (prep_msm + b_g2_msm + epilogue) serialised on one lane per device beside the kernels:
//!   the critical path the cuzk campaign called the CPU-limited floor (Phase 9: 2.4 s × 10).
//!   Reported and used for the verdict, not folded into the practical floor (with several
//!   GPU workers those phases do overlap in the model).
//!
//! The verdict says which side binds ("GPU-bound: …", "CPU-bound: prep_msm + b_g2_msm …").

use serde::{Deserialize, Serialize};

use crate::config::{Config, LockMode};

/// One resource's demand per proof divided by its servers, in s/proof.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResourceDemand {
    pub name: String,
    pub s_per_proof: f64,
    /// Counted in the theoretical floor (physical resource) or only in the practical one.
    pub physical: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Floors {
    pub theoretical_s_per_proof: f64,
    pub theoretical_binding: String,
    pub practical_s_per_proof: f64,
    pub practical_binding: String,
    /// CPU floor: CPU phases of the GPU calls serialised per device, s/proof.
    pub host_lane_s_per_proof: f64,
    /// Kernel time per device, s/proof.
    pub kernels_s_per_proof: f64,
    pub verdict: String,
    pub resources: Vec<ResourceDemand>,
}

/// Per-partition mean costs in seconds, derived from a config.
#[derive(Clone, Copy, Debug)]
pub struct MeanCosts {
    pub synth: f64,
    pub prep: f64,
    pub kernels: f64,
    pub b_g2: f64,
    pub epilogue: f64,
    pub upload: f64,
    pub alloc: f64,
}

impl MeanCosts {
    pub fn of(cfg: &Config) -> MeanCosts {
        let c = &cfg.costs;
        MeanCosts {
            synth: c.synth.mean_ms() / 1e3,
            prep: c.prep_msm.mean_ms() / 1e3,
            kernels: (c.ntt_msm_h.mean_ms() + c.batch_add.mean_ms() + c.tail_msm.mean_ms() + c.msm_rest.mean_ms() + c.msm_b_g2.mean_ms()) / 1e3,
            b_g2: c.b_g2_msm.mean_ms() / 1e3,
            epilogue: c.epilogue.mean_ms() / 1e3,
            upload: upload_s(cfg),
            alloc: c.alloc.mean_ms() / 1e3,
        }
    }
}

/// Upload time of one partition, seconds.
pub fn upload_s(cfg: &Config) -> f64 {
    cfg.costs.upload_gib * (1u64 << 30) as f64 / (cfg.machine.pcie_gbs * 1e9)
}

/// The device's part of a partition's upload, seconds (`costs.upload_device_gib` at the
/// link's rate, at most the whole upload); `None` without the key (the whole upload is).
pub fn upload_device_s(cfg: &Config) -> Option<f64> {
    cfg.costs.upload_device_gib.map(|d| (d * (1u64 << 30) as f64 / (cfg.machine.pcie_gbs * 1e9)).min(upload_s(cfg)))
}

/// The a/b/c part of a partition's upload, seconds: `abc_gib` at the link's rate, at most
/// the whole upload ([`upload_s`]); 0 when no upload is modelled (`upload_gib = 0`: the
/// transfers are inside the kernel costs). With `early_release` the a/b/c are given back
/// once the call's prep is done and this part of its upload has crossed the link.
pub fn abc_upload_s(cfg: &Config) -> f64 {
    let abc = cfg.abc_gib() * (1u64 << 30) as f64 / (cfg.machine.pcie_gbs * 1e9);
    upload_s(cfg).min(abc)
}

/// How many GPU workers' buffers fit per device beside the baseline and the resident
/// parameters (at least 1; a single one that does not fit is a run-time `vram_oom`), with
/// `vram_policy = "wait"`; otherwise the workers (`gw`).
pub fn vram_workers(cfg: &Config) -> f64 {
    let need = cfg.worker_vram_gib();
    if cfg.memory.vram_policy != crate::config::VramPolicy::Wait || need <= 0.0 {
        return cfg.pipeline.gw as f64;
    }
    let k = ((cfg.vram_cap_gib() - cfg.vram_static_gib()) / need + 1e-9).floor();
    k.clamp(1.0, cfg.pipeline.gw as f64)
}

/// A GPU call's preparation (`prep` s) and an upload of `upload` s (the whole one, or its
/// a/b/c part), seconds, as the worker's program runs them (`crate::pipeline::gpu::program`):
/// side by side with `lock = "kernels"` and `prestage` (the upload into the worker's staging
/// buffer while the CPU prepares), else one after the other.
pub fn prep_and_upload_s(cfg: &Config, prep: f64, upload: f64) -> f64 {
    let p = &cfg.pipeline;
    if p.lock == LockMode::Kernels && p.prestage {
        prep.max(upload)
    } else {
        prep + upload
    }
}

/// The pool allocation a GPU call spends, seconds: only the two-lock program allocates
/// (`costs.alloc`); the others take their buffers without that step.
pub fn alloc_s(cfg: &Config, m: &MeanCosts) -> f64 {
    if cfg.pipeline.lock == LockMode::TwoLock {
        m.alloc
    } else {
        0.0
    }
}

/// The host-memory floor under admission (a `memory.total_budget`, or `ram_policy =
/// "block"`), s/proof; `None` without admission. The larger of two bounds:
///
/// - reservation-seconds (Little's law on the budget): a partition holds its whole
///   reservation W through its synthesis and the start of its GPU call (its prep and the
///   a/b/c part of its upload, [`abc_upload_s`]: one after the other, or side by side with
///   `kernels` + `prestage`), and W − released (a/b/c with `early_release`) through the rest
///   of the call and finalisation; the budget left beside the resident items, A, holds at
///   most A GiB at a time, so s/proof ≥ partitions × (W·(synth + held) + (W − released)·(call − held)) / A;
/// - concurrency: at most k = ⌊A / W⌋ syntheses run at once; when k < pw, synthesis runs
///   at k's pace: partitions × synth × contention(k) / k.
pub fn memory_floor(cfg: &Config, m: &MeanCosts) -> Option<f64> {
    let p = &cfg.pipeline;
    if cfg.budget_gib().is_none() && p.ram_policy != crate::config::RamPolicy::Block {
        return None;
    }
    let avail = cfg.ram_limit_gib() - cfg.resident_gib();
    let w = cfg.partition_gib();
    if w <= 0.0 || avail <= 0.0 {
        return None;
    }
    let parts = p.partitions as f64;
    let released = if cfg.memory.early_release { cfg.abc_gib() } else { 0.0 };
    let call = prep_and_upload_s(cfg, m.prep, m.upload) + alloc_s(cfg, m) + m.kernels + m.b_g2 + m.epilogue;
    // The part of the call before the a/b/c are given back (crate::pipeline: `abc_ready`).
    let before = prep_and_upload_s(cfg, m.prep, abc_upload_s(cfg));
    let held = parts * (w * (m.synth + before) + (w - released) * (call - before)) / avail;
    let k = (avail / w + 1e-9).floor().max(1.0);
    let conc = if k < p.pw as f64 { parts * m.synth * cfg.contention.factor(k) / k } else { 0.0 };
    Some(held.max(conc))
}

pub fn compute(cfg: &Config) -> Floors {
    let m = MeanCosts::of(cfg);
    let p = &cfg.pipeline;
    let parts = p.partitions as f64;
    let gpus = cfg.machine.gpus as f64;
    let d = &cfg.cpu;
    let fin = m.b_g2 + m.epilogue;
    let mut r = Vec::new();
    let mut push = |name: &str, v: f64, physical: bool| r.push(ResourceDemand { name: name.to_string(), s_per_proof: v, physical });

    // Physical resources.
    push("gpu kernels", parts * m.kernels / gpus, true);
    let stream = cfg.params_stream_s();
    push("pcie", parts * (m.upload + stream) / gpus, true);
    // The kernel region: kernels, and the streamed parameters beside or before them.
    let region = if cfg.memory.params_stream_overlap { m.kernels.max(stream) } else { m.kernels + stream };
    // (No phase asks for more than the cores' capacity: the pool holds demands to it.)
    let cap = cfg.machine.capacity();
    let core_s = m.synth * d.synth_cores.min(cap) + m.prep * d.prep_cores.min(cap) + fin * d.finalize_cores.min(cap);
    push("cpu cores", parts * core_s / cap, true);
    let mut bw_gb = m.synth * d.synth_bw_gbs + m.prep * d.prep_bw_gbs + fin * d.finalize_bw_gbs;
    if d.uploads_use_host_bandwidth {
        bw_gb += m.upload * cfg.machine.pcie_gbs;
    }
    push("memory bandwidth", parts * bw_gb / cfg.machine.mem_bandwidth_gbs, true);

    // What the configuration imposes.
    // The upload is in the kernels lock unless pre-staged or done before the lock.
    let in_lock_upload = if p.prestage || (p.upload_after_prep && p.lock == LockMode::Kernels) { 0.0 } else { m.upload };
    let lock_hold = match p.lock {
        LockMode::Whole => m.prep + in_lock_upload + region + if p.split_finalize { 0.0 } else { fin },
        LockMode::Kernels => in_lock_upload + region,
        LockMode::TwoLock => {
            // The VRAM lock always covers the upload in this mode (and the preparation
            // with `upload_after_prep`).
            let vram = m.alloc + m.upload + if p.upload_after_prep { m.prep } else { 0.0 };
            if p.device_global_sync.unwrap_or(true) {
                // The syncs wait for every stream: allocation/upload and kernels serialise
                // (a preparation before the sync overlaps the other worker's kernels).
                (m.alloc + m.upload + region).max(vram)
            } else {
                vram.max(region)
            }
        }
    };
    push("gpu lock", parts * lock_hold / gpus, false);
    let host_lane = m.prep + fin;
    let n = p.pw as f64;
    push("partition workers", parts * m.synth * cfg.contention.factor(n) / n, false);
    let call = prep_and_upload_s(cfg, m.prep, m.upload) + alloc_s(cfg, &m) + region + if p.split_finalize { 0.0 } else { fin };
    // VRAM: with `vram_policy = "wait"`, at most k workers' buffers fit per device. Pre-staged
    // buffers: only k workers work; per-call buffers: k calls between allocation and free.
    let k_vram = vram_workers(cfg);
    let gw_eff = if p.prestage { (p.gw as f64).min(k_vram) } else { p.gw as f64 };
    push("gpu workers", parts * call / (gw_eff * gpus), false);
    if !p.prestage && k_vram < p.gw as f64 {
        push("vram", parts * (m.upload + region) / (k_vram * gpus), false);
    }
    if let Some(v) = memory_floor(cfg, &m) {
        push("memory", v, false);
    }
    if let (true, Some(f)) = (p.split_finalize, p.finalizers) {
        // Each finaliser runs one partition's G2 MSM + epilogue at a time, at best at its
        // isolated speed (or at the CPU's, if its core demand exceeds the machine).
        let speed = (cfg.machine.capacity() / (d.finalize_cores.min(cfg.machine.capacity()) * f as f64)).min(1.0);
        push("finalizers", parts * fin / (f as f64 * speed), false);
    }

    let argmax = |only_physical: bool| {
        r.iter()
            .filter(|x| !only_physical || x.physical)
            .fold(None::<&ResourceDemand>, |best, x| match best {
                Some(b) if b.s_per_proof >= x.s_per_proof => Some(b),
                _ => Some(x),
            })
            .map(|x| (x.s_per_proof, x.name.clone()))
            .unwrap_or((0.0, String::new()))
    };
    let (theo, theo_b) = argmax(true);
    let (prac, prac_b) = argmax(false);
    let kernels_pp = parts * m.kernels / gpus;
    let host_pp = parts * host_lane / gpus;
    let gpu_side = matches!(prac_b.as_str(), "gpu kernels" | "gpu lock" | "pcie");
    let verdict = if host_lane > m.kernels {
        format!(
            "CPU-bound: prep_msm + b_g2_msm + epilogue = {:.2} s exceed the kernels' {:.2} s per partition (CPU floor {:.1} s/proof vs kernel floor {:.1}); {prac_b} bind at {prac:.1} s/proof",
            host_lane, m.kernels, host_pp, kernels_pp
        )
    } else if gpu_side {
        format!("GPU-bound: {prac_b} bind at {prac:.1} s/proof")
    } else {
        format!("CPU-bound: {prac_b} bind at {prac:.1} s/proof (the GPU kernels need {kernels_pp:.1})")
    };
    Floors {
        theoretical_s_per_proof: theo,
        theoretical_binding: theo_b,
        practical_s_per_proof: prac,
        practical_binding: prac_b,
        host_lane_s_per_proof: host_pp,
        kernels_s_per_proof: kernels_pp,
        verdict,
        resources: r,
    }
}
