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
    /// The CUDA backend's knobs (`[cuda]` section).
    pub cuda: crate::cuda_settings::CudaSettings,
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
        if self.pw > 4096 || self.gw > 64 || self.devices > 64 {
            return Err(ConfigError::Invalid { field: "pw/gw/devices", reason: "implausibly large (pw ≤ 4096, gw ≤ 64, devices ≤ 64)".into() });
        }
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
        for (k, v, want) in [("pww", "1", "pww"), ("pw", "0", "pw"), ("lock", "half", "half"), ("cuda.nope", "1", "nope"), ("queue_capacity", "4294967295", "queue_capacity"), ("finalizers", "100000", "finalizers"), ("rss_sample_ms", "4294967295", "rss_sample_ms")] {
            let before = c.clone();
            let e = c.set(k, v).unwrap_err().to_string();
            assert!(e.contains(want), "{k}={v}: {e}");
            assert_eq!(c, before, "a refused --set changes nothing");
        }
    }
}
