//! The engine's knobs, in one TOML file (documented example:
//! `prover/configs/engine.example.toml`), every one overridable by a CLI flag. Unknown
//! keys and impossible values are errors that name the field.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use timeline::event::LockMode;

/// Engine configuration. Defaults are a small machine's sensible values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Partition-synthesis workers (each holds its partition until the GPU queue accepts it).
    pub pw: u32,
    /// GPU workers per device.
    pub gw: u32,
    pub lock: LockMode,
    /// Run b_g2_msm + assembly on finaliser threads so GPU workers pick up at once.
    pub split_finalize: bool,
    /// Finaliser threads (with split_finalize).
    pub finalizers: u32,
    /// Synthesised partitions the GPU queue holds (0 = hand-off only, a rendezvous).
    pub queue_capacity: u32,
    /// `cpu`, `cuda` or `auto` (CUDA when available, else CPU).
    pub backend: String,
    /// Devices to use. For the CPU backend: how many CPU "devices" (each with its own lock).
    pub devices: u32,
    /// Attempts per partition across devices before its proof fails.
    pub max_attempts: u32,
    /// Verify every partition proof before returning it.
    pub verify: bool,
    /// Emit timeline events (off: spans are no-ops; used to measure their overhead).
    pub events: bool,
    /// RSS sampling period in ms (0 = off).
    pub rss_sample_ms: u64,
    /// Seed of the blinding randomness (reproducible proofs); none = OS entropy.
    pub seed: Option<u64>,
    /// Bucket method of the CPU backend's tail MSMs: `blst` or `proofscope` (ours).
    pub cpu_msm: crate::msm::CpuMsm,
    /// Prove a partition on the CPU when its device runs out of memory (else the
    /// out-of-memory error is retried on another device like any device error).
    pub cpu_fallback: bool,
    /// Where a CUDA device's partitions get their G2 MSM (the B query in G2): `device`
    /// (span `msm_b_g2`, under the compute lock, beside the G1 MSMs) or `cpu` (span
    /// `b_g2_msm` in the finisher, as supraseal does). The CPU backend ignores it.
    pub g2_msm: G2Msm,
    /// How a partition is synthesised: `circuit` (the circuit's code builds and evaluates
    /// every constraint, on the synthesis worker's thread) or `pce` (pre-compiled
    /// constraints: the circuit runs for its witness only, then a, b, c = A·w, B·w, C·w in
    /// parallel; spans `witness` and `constraints` inside `synthesis`). The PCE is extracted
    /// on first use (span `pce_build`) from the first partition, kept in memory for all
    /// workers, and cached next to the parameter file (`<params>.pce`); partitions that
    /// start while it is being built take the circuit path. Same assignments, same proofs.
    /// Default `pce` (2–4× faster synthesis measured on 2 cores; docs/reference/engine.md).
    pub synthesis: SynthesisMode,
    /// Threads of a synthesis's pool on the PCE path, for the witness's pieces and the
    /// products; 0 (default) = the machine's cores. Each synthesis worker gets a pool of its
    /// own (concurrent syntheses are `pw`; the OS shares the cores among the pools' threads),
    /// unless `synthesis_shared_pool`. Never rayon's global pool, where the GPU workers
    /// prepare their MSMs.
    pub synthesis_threads: u32,
    /// One pool of `synthesis_threads` shared by every synthesis worker instead of a pool
    /// each (the default before 2026-12-04). On one pool a synthesis that waits for its own
    /// tasks runs the others': at 2^27 five syntheses on one pool of 16 had a tail of slow
    /// ones (run 122: up to 6.7× the median, 35.80 s/proof), where pools of 16 each had none
    /// and were GPU-bound (run 125: 33.41 s/proof, 25 % less CPU time).
    pub synthesis_shared_pool: bool,
    /// Threads of one pool the GPU workers run their CPU work on (the MSMs' preparation,
    /// `prep_msm`, a CPU fallback's too), apart from the syntheses' pools: 0 (default) =
    /// rayon's global pool of all cores. Bounds what the preparations take from the
    /// syntheses (the reference daemon's `gpu_threads`; run 69: two GPU workers preparing on
    /// 16 threads beside a synthesis pool of 16 slowed the witness by a quarter).
    pub prep_threads: u32,
    /// Nice value added to the synthesis threads' (their pools' and the synthesis workers'
    /// own; Linux, per thread, 0..=19; 0 = as the process), so that the GPU workers' CPU
    /// steps (the MSMs' preparation, the uploads' host fill) and the finalisers run first
    /// when the syntheses' threads outnumber the cores; the syntheses keep every core left.
    pub synthesis_nice: u8,
    /// Read and write the PCE cache next to the parameter file (off: the PCE is extracted
    /// on first use and kept in memory only).
    pub pce_cache: bool,
    /// A corrupt PCE cache is rebuilt with a warning (off: every partition fails with an
    /// error naming the file until it is deleted).
    pub pce_rebuild_corrupt: bool,
    /// The host-RAM budget (`[memory]` section: `total_budget`, `safety_margin`): every
    /// large allocation reserves from it first, and a synthesis starts only when its
    /// partition's working set fits ([`super::budget`]; docs/reference/engine.md).
    pub memory: super::budget::MemoryConfig,
    /// The CUDA backend's knobs (`[cuda]` section; the `PROOFSCOPE_*` environment variables
    /// override them when the CUDA backends are made, see [`crate::cuda_settings`]).
    pub cuda: crate::cuda_settings::CudaSettings,
}

/// How the engine synthesises a partition ([`EngineConfig::synthesis`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SynthesisMode {
    /// The circuit's code builds and evaluates every constraint.
    Circuit,
    /// Witness generation, then sparse products with the pre-compiled constraints.
    #[default]
    Pce,
}

impl SynthesisMode {
    pub fn as_str(&self) -> &'static str {
        match self {
            SynthesisMode::Circuit => "circuit",
            SynthesisMode::Pce => "pce",
        }
    }
}

impl std::str::FromStr for SynthesisMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "circuit" => Ok(SynthesisMode::Circuit),
            "pce" => Ok(SynthesisMode::Pce),
            o => Err(format!("unknown synthesis path `{o}` (expected circuit or pce)")),
        }
    }
}

/// Where the CUDA backend computes the G2 MSM ([`EngineConfig::g2_msm`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum G2Msm {
    /// On the GPU, in the device part (kernels of `msm_g2.cu`).
    #[default]
    Device,
    /// On the CPU, in the finisher (blst).
    Cpu,
}

impl G2Msm {
    pub fn as_str(&self) -> &'static str {
        match self {
            G2Msm::Device => "device",
            G2Msm::Cpu => "cpu",
        }
    }
}

impl std::str::FromStr for G2Msm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "device" | "gpu" => Ok(G2Msm::Device),
            "cpu" => Ok(G2Msm::Cpu),
            o => Err(format!("unknown G2 MSM placement `{o}` (expected device or cpu)")),
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            pw: 2,
            gw: 2,
            lock: LockMode::Kernels,
            split_finalize: true,
            finalizers: 1,
            queue_capacity: 1,
            backend: "auto".into(),
            devices: 1,
            max_attempts: 2,
            verify: false,
            events: true,
            rss_sample_ms: 50,
            seed: None,
            cpu_msm: crate::msm::CpuMsm::Blst,
            cpu_fallback: true,
            g2_msm: G2Msm::Device,
            synthesis: SynthesisMode::Pce,
            synthesis_threads: 0,
            synthesis_shared_pool: false,
            prep_threads: 0,
            synthesis_nice: 0,
            pce_cache: true,
            pce_rebuild_corrupt: false,
            memory: Default::default(),
            cuda: Default::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("config field `{field}`: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("--set {key}: {reason}")]
    Set { key: String, reason: String },
}

impl EngineConfig {
    pub fn from_toml_str(text: &str, path: &str) -> Result<Self, ConfigError> {
        let cfg: EngineConfig = toml::from_str(text).map_err(|e| ConfigError::Parse { path: path.to_string(), message: e.to_string() })?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Io { path: name.clone(), error })?;
        Self::from_toml_str(&text, &name)
    }

    /// Apply one `key=value` override by the key's dotted path in the TOML (`pw=4`,
    /// `lock=whole`, `cuda.params=stream`; [`timeline::settings`]): every key of the file,
    /// the same names and checks; an unknown key or a wrong type names the key. Validated.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let next = timeline::settings::set_path(self, key, value).map_err(|e| ConfigError::Set { key: key.to_string(), reason: e.reason() })?;
        next.validate()?;
        *self = next;
        Ok(())
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = |field: &'static str, v: u32| {
            if v == 0 {
                Err(ConfigError::Invalid { field, reason: "must be at least 1".into() })
            } else {
                Ok(())
            }
        };
        positive("pw", self.pw)?;
        positive("gw", self.gw)?;
        positive("finalizers", self.finalizers)?;
        positive("devices", self.devices)?;
        positive("max_attempts", self.max_attempts)?;
        if !matches!(self.backend.as_str(), "cpu" | "cuda" | "auto") {
            return Err(ConfigError::Invalid { field: "backend", reason: format!("`{}` is not one of cpu, cuda, auto", self.backend) });
        }
        if self.prep_threads > 4096 {
            return Err(ConfigError::Invalid { field: "prep_threads", reason: format!("{} is implausibly large (at most 4096; 0 = rayon's global pool)", self.prep_threads) });
        }
        if self.synthesis_nice > 19 {
            return Err(ConfigError::Invalid { field: "synthesis_nice", reason: format!("{} is outside 0..=19 (a nice value added to the synthesis threads')", self.synthesis_nice) });
        }
        if self.synthesis_threads > 4096 {
            return Err(ConfigError::Invalid { field: "synthesis_threads", reason: format!("{} is implausibly large (at most 4096; 0 = the machine's cores)", self.synthesis_threads) });
        }
        if self.pw > 4096 || self.gw > 64 || self.devices > 64 {
            return Err(ConfigError::Invalid { field: "pw/gw/devices", reason: "implausibly large (pw ≤ 4096, gw ≤ 64, devices ≤ 64)".into() });
        }
        self.cuda.validate().map_err(|e| ConfigError::Invalid { field: "cuda", reason: e.to_string() })?;
        // The GPU queue's slots are allocated up front.
        if self.queue_capacity > 4096 {
            return Err(ConfigError::Invalid { field: "queue_capacity", reason: format!("{} is more than 4096 partitions", self.queue_capacity) });
        }
        if self.rss_sample_ms > 3_600_000 {
            return Err(ConfigError::Invalid { field: "rss_sample_ms", reason: format!("{} ms is more than an hour", self.rss_sample_ms) });
        }
        if self.finalizers > 4096 || self.max_attempts > 1000 {
            return Err(ConfigError::Invalid { field: "finalizers/max_attempts", reason: "implausibly large (finalizers ≤ 4096, max_attempts ≤ 1000)".into() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses_and_bad_fields_are_named() {
        let text = include_str!("../../configs/engine.example.toml");
        let cfg = EngineConfig::from_toml_str(text, "engine.example.toml").unwrap();
        assert_eq!(cfg.lock, LockMode::Kernels);
        assert_eq!((cfg.memory.params_host, cfg.memory.vram_budget), (super::super::budget::ParamsHost::Auto, None));
        let m = EngineConfig::from_toml_str("[memory]\nvram_budget = \"16GiB\"\nparams_host = \"keep\"", "x.toml").unwrap().memory;
        assert_eq!((m.params_host, m.vram_budget.map(|b| b.0)), (super::super::budget::ParamsHost::Keep, Some(16 << 30)));
        let e = EngineConfig::from_toml_str("[memory]\nparams_host = \"drop\"", "x.toml").unwrap_err().to_string();
        assert!(e.contains("params_host") || e.contains("drop"), "{e}");
        let e = EngineConfig::from_toml_str("pw = 0", "x.toml").unwrap_err().to_string();
        assert!(e.contains("`pw`"), "{e}");
        let e = EngineConfig::from_toml_str("pww = 3", "x.toml").unwrap_err().to_string();
        assert!(e.contains("pww") && e.contains("x.toml"), "{e}");
        let e = EngineConfig::from_toml_str("lock = \"half\"", "x.toml").unwrap_err().to_string();
        assert!(e.contains("half"), "{e}");
    }

    #[test]
    fn every_key_is_settable_by_its_path() {
        let mut c = EngineConfig::default();
        for (k, v) in [("pw", "5"), ("lock", "whole"), ("queue_capacity", "3"), ("max_attempts", "4"), ("events", "false"), ("rss_sample_ms", "0"), ("cpu_fallback", "false"), ("seed", "9"), ("g2_msm", "cpu")] {
            c.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        assert_eq!((c.pw, c.lock, c.queue_capacity, c.max_attempts, c.events, c.rss_sample_ms, c.cpu_fallback, c.seed, c.g2_msm), (5, LockMode::Whole, 3, 4, false, 0, false, Some(9), G2Msm::Cpu));
        for (k, v) in [("synthesis", "circuit"), ("synthesis_threads", "4"), ("synthesis_shared_pool", "true"), ("prep_threads", "6"), ("synthesis_nice", "7"), ("pce_cache", "false"), ("pce_rebuild_corrupt", "true")] {
            c.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        assert_eq!((c.synthesis, c.synthesis_threads, c.synthesis_shared_pool, c.prep_threads, c.synthesis_nice, c.pce_cache, c.pce_rebuild_corrupt), (SynthesisMode::Circuit, 4, true, 6, 7, false, true));
        for (k, v, want) in [("pww", "1", "pww"), ("pw", "0", "pw"), ("lock", "half", "half"), ("cuda.nope", "1", "nope"), ("cuda.params", "streamed", "streamed"), ("cuda.msm_c", "30", "msm_c"), ("cuda.stream_chunk", "0", "stream_chunk"), ("cuda.ntt_radix", "8", "radix"), ("synthesis", "magic", "magic"), ("synthesis_threads", "100000", "synthesis_threads"), ("prep_threads", "5000", "prep_threads"), ("synthesis_nice", "20", "synthesis_nice"), ("synthesis_nice", "-1", "synthesis_nice"), ("queue_capacity", "4294967295", "queue_capacity"), ("finalizers", "100000", "finalizers"), ("rss_sample_ms", "4294967295", "rss_sample_ms")] {
            let before = c.clone();
            let e = c.set(k, v).unwrap_err().to_string();
            assert!(e.contains(want), "{k}={v}: {e}");
            assert_eq!(c, before, "a refused --set changes nothing");
        }
    }

    #[test]
    fn every_cuda_key_is_settable_by_its_path() {
        use crate::cuda_settings::*;
        let mut c = EngineConfig::default();
        let sets = [
            ("params", "stream"),
            ("stream_chunk", "3000"),
            ("msm_batch", "off"),
            ("msm_precomp", "20"),
            ("msm_acc", "eo:17"),
            ("msm_c", "16"),
            ("msm_seg", "8"),
            ("msm_g2_acc", "g2eo"),
            ("ntt_mul", "cios"),
            ("ntt_radix", "2"),
            ("ntt_plan", "g6"),
            ("ntt_bitrev", "tile"),
            ("ntt_memory", "lean"),
            ("abc_upload", "registered"),
            ("sched", "blocking"),
        ];
        for (k, v) in sets {
            c.set(&format!("cuda.{k}"), v).unwrap_or_else(|e| panic!("cuda.{k}={v}: {e}"));
        }
        let want = CudaSettings {
            params: ParamsMode::Stream,
            stream_chunk: Some(3000),
            msm_batch: MsmBatch::Off,
            msm_precomp: ShiftChoice::C(20),
            msm_acc: Some("eo:17".into()),
            msm_c: Some(16),
            msm_seg: Some(8),
            msm_g2_acc: Some("g2eo".into()),
            ntt_mul: NttMul::Cios,
            ntt_radix: NttRadix::R2,
            ntt_plan: NttPlan { kmax: 6, even: false },
            ntt_bitrev: NttBitrev::Tile,
            ntt_memory: NttMemory::Lean,
            abc_upload: AbcUpload::Registered,
            sched: CudaSched::Blocking,
        };
        assert_eq!(c.cuda, want);
        // Every key of the section was set (a new key needs a line here), and each one has
        // its environment override.
        let keys: Vec<String> = match toml::Value::try_from(&want).unwrap() {
            toml::Value::Table(t) => t.keys().cloned().collect(),
            _ => unreachable!(),
        };
        assert_eq!(keys.len(), sets.len(), "{keys:?}");
        for k in &keys {
            assert!(ENV_OVERRIDES.iter().any(|o| o.key == k), "no environment override of cuda.{k}");
        }
        // Words or numbers where the environment took either.
        c.set("cuda.msm_precomp", "on").unwrap();
        c.set("cuda.ntt_radix", "\"4\"").unwrap();
        assert_eq!((c.cuda.msm_precomp, c.cuda.ntt_radix), (ShiftChoice::Auto, NttRadix::R4));
    }

    #[test]
    fn the_example_s_cuda_section_is_the_defaults() {
        let text = include_str!("../../configs/engine.example.toml");
        let cfg = EngineConfig::from_toml_str(text, "engine.example.toml").unwrap();
        assert_eq!(cfg.cuda, crate::cuda_settings::CudaSettings::default());
        // Every key is in the example, set or (unset by default) commented out.
        for o in crate::cuda_settings::ENV_OVERRIDES {
            assert!(text.lines().any(|l| l.trim_start_matches("# ").starts_with(&format!("{} = ", o.key))), "cuda.{} missing from the example", o.key);
            assert!(text.contains(o.var), "the example does not name {}", o.var);
        }
    }
}
