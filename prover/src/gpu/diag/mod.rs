//! Diagnostics of the CUDA backend, apart from the proving path: `gpu check` ([`check`]: every
//! kernel and whole proofs against the CPU path), `gpu bench` ([`bench`](mod@bench): device times against
//! the card's floor) and the CPU references and input generators they use ([`reference`](mod@reference)).
//!
//! The proving path (backend, device, ntt, msm) never imports this module. The bench- and
//! check-only environment variables (`PROOFSCOPE_MSM_VARIANTS`, `PROOFSCOPE_MSM_G2_VARIANTS`)
//! are read here and only here ([`msm_variants_from_env`], [`msm_g2_variants_from_env`]).

pub mod bench;
pub mod check;
pub mod reference;
pub mod upload;

use super::error::GpuError;
use super::msm::{MsmConfig, G2, G2_ACC_KERNELS};

/// The G1 MSM variants to time and check: `PROOFSCOPE_MSM_VARIANTS`, comma-separated
/// `KERNEL[+pre][:C[:SEG[:CHUNK]]]` specs (see [`MsmConfig::parse`]), or None when unset.
pub fn msm_variants_from_env() -> Result<Option<Vec<MsmConfig>>, GpuError> {
    variants_from_env("PROOFSCOPE_MSM_VARIANTS", MsmConfig::parse)
}

/// The G2 MSM variants to time: `PROOFSCOPE_MSM_G2_VARIANTS` (comma-separated specs), else
/// every G2 kernel with the other choices by size.
pub fn msm_g2_variants_from_env() -> Result<Vec<MsmConfig>, GpuError> {
    Ok(variants_from_env("PROOFSCOPE_MSM_G2_VARIANTS", MsmConfig::parse_for::<G2>)?.unwrap_or_else(|| G2_ACC_KERNELS.iter().map(|(acc, _)| MsmConfig::kernel(acc)).collect()))
}

fn variants_from_env(var: &'static str, parse: fn(&str) -> Result<MsmConfig, GpuError>) -> Result<Option<Vec<MsmConfig>>, GpuError> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| parse(s).map_err(|e| GpuError::config(var, e.to_string()))).collect::<Result<Vec<_>, _>>().map(Some),
        _ => Ok(None),
    }
}
