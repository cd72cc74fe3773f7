//! Property tests over random configurations: the model never panics or hangs, a feasible
//! run completes every proof and never beats its theoretical floor (exactly with fixed costs,
//! within sampling error with random ones), RAM never exceeds the
//! machine under the blocking policy, the recorded timeline is well formed, and the same
//! config gives the same answer twice.

use std::path::PathBuf;

use proptest::prelude::*;
use simulator::{simulate, Config, Options};

fn base() -> Config {
    Config::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase12.toml")).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn random_configs_behave(
        pw in 1u32..24, gw in 1u32..4, gpus in 1u32..3, lock in 0usize..3, split: bool, prestage: bool,
        permit: bool, queue in proptest::option::of(1u32..6), j in 1u32..6, proofs in 1u32..6,
        partitions in 1u32..8, block: bool, ram in 150.0f64..900.0, vram in 10.0f64..90.0,
        synth_ms in 1000.0f64..40000.0, kern_ms in 100.0f64..4000.0, upload in 0.0f64..16.0,
        sigma in prop_oneof![Just(0.0f64), 0.0f64..0.3], slope in 0.0f64..0.5, gsync: bool, seed in 0u64..1000, host_bw: bool,
    ) {
        let mut c = base();
        c.seed = seed;
        c.pipeline.pw = pw;
        c.pipeline.gw = gw;
        c.machine.gpus = gpus;
        c.pipeline.lock = [simulator::LockMode::Whole, simulator::LockMode::Kernels, simulator::LockMode::TwoLock][lock];
        c.pipeline.device_global_sync = if lock == 2 { Some(gsync) } else { None };
        c.pipeline.split_finalize = split;
        c.pipeline.prestage = prestage;
        c.memory.prestage_vram_gib = if prestage { 6.0 } else { 0.0 };
        c.pipeline.permit_until_send = permit;
        c.pipeline.queue_capacity = queue;
        c.pipeline.in_flight = j;
        c.pipeline.proofs = proofs;
        c.pipeline.partitions = partitions;
        c.pipeline.ram_policy = if block { simulator::config::RamPolicy::Block } else { simulator::config::RamPolicy::Fail };
        c.machine.ram_gib = ram;
        c.machine.vram_gib = vram;
        c.costs.synth = simulator::costs::Dist::Lognormal { median: synth_ms, sigma };
        c.costs.ntt_msm_h = simulator::costs::Dist::Normal { mean: kern_ms, sd: kern_ms * sigma };
        c.costs.upload_gib = upload;
        c.contention.synth_slope = slope;
        c.cpu.uploads_use_host_bandwidth = host_bw;
        prop_assume!(c.validate().is_ok());
        let a = simulate(&c, Options { record: true });
        let b = simulate(&c, Options::default());
        prop_assert_eq!(serde_json::to_string(&a.result).unwrap(), serde_json::to_string(&b.result).unwrap());
        let r = &a.result;
        if r.feasible {
            prop_assert_eq!(r.proofs_completed, proofs);
            // The floors are computed from the costs' means. With fixed costs (sigma 0) no run
            // beats them; with random costs a run of n partitions draws n samples whose mean
            // can fall below the mean by a few sigma / sqrt(n) (CI found one 1.3 % under with
            // sigma 0.23 and n 18), so the bound is loosened by 5 sigma / sqrt(n) there.
            let n = (proofs * partitions) as f64;
            let tol = if sigma == 0.0 { 1e-9 } else { 5.0 * sigma / n.sqrt() };
            prop_assert!(r.total_s_per_proof >= r.floors.theoretical_s_per_proof * (1.0 - tol),
                "total {} < floor {} (sigma {}, n {})", r.total_s_per_proof, r.floors.theoretical_s_per_proof, sigma, n);
            prop_assert!(r.busiest_gpu_utilization() <= 1.0 + 1e-9);
            prop_assert!(r.cpu_util <= 1.0 + 1e-9);
        } else {
            let f = r.failure.as_ref().expect("an infeasible run says why");
            prop_assert!(f.kind == "ram_oom" || f.kind == "vram_oom");
            prop_assert!(!block || f.kind == "vram_oom", "blocking admission cannot run out of RAM");
        }
        prop_assert!(r.peak_ram_gib <= c.machine.ram_gib + 1e-6);
        prop_assert!(r.peak_vram_gib <= c.machine.vram_gib + 1e-6);
        let run = a.run.unwrap();
        for s in &run.spans {
            prop_assert!(s.end_ns.unwrap() >= s.start_ns);
        }
    }
}
