//! Choosing the proving devices: `cpu`, `cuda` (the `cuda` feature's backend, helper
//! module `crate::gpu`) or `auto` (CUDA when it answers, else the CPU).

use std::sync::Arc;

use crate::backend::Backend;
use crate::cpu::CpuBackend;

/// Backends for `kind`, one per device. `devices` is how many CPU "devices" to make (or
/// the most CUDA devices to use).
pub fn backends_for(kind: &str, devices: u32) -> Result<Vec<Arc<dyn Backend>>, String> {
    let cpu = || (0..devices.max(1)).map(|d| Arc::new(CpuBackend::new(d)) as Arc<dyn Backend>).collect::<Vec<_>>();
    match kind {
        "cpu" => Ok(cpu()),
        "cuda" => cuda_backends(devices),
        "auto" => Ok(cuda_backends(devices).unwrap_or_else(|_| cpu())),
        other => Err(format!("unknown backend `{other}` (expected cpu, cuda or auto)")),
    }
}

/// Backends for a config: its `backend`, `devices`, for the CPU `cpu_msm`, for CUDA `g2_msm`.
pub fn backends_for_config(cfg: &super::EngineConfig) -> Result<Vec<Arc<dyn Backend>>, String> {
    let cpu = || (0..cfg.devices.max(1)).map(|d| Arc::new(CpuBackend::with_msm(d, cfg.cpu_msm)) as Arc<dyn Backend>).collect::<Vec<_>>();
    let g2_on_device = cfg.g2_msm == super::config::G2Msm::Device;
    match cfg.backend.as_str() {
        "cpu" => Ok(cpu()),
        "cuda" => cuda_backends_with(cfg.devices, g2_on_device),
        "auto" => Ok(cuda_backends_with(cfg.devices, g2_on_device).unwrap_or_else(|_| cpu())),
        other => backends_for(other, cfg.devices),
    }
}

fn cuda_backends(devices: u32) -> Result<Vec<Arc<dyn Backend>>, String> {
    cuda_backends_with(devices, true)
}

#[cfg(feature = "cuda")]
fn cuda_backends_with(devices: u32, g2_on_device: bool) -> Result<Vec<Arc<dyn Backend>>, String> {
    let mut all = crate::gpu::backends(g2_on_device)?;
    all.truncate(devices.max(1) as usize);
    if all.is_empty() {
        return Err("no CUDA device found".into());
    }
    Ok(all)
}

#[cfg(not(feature = "cuda"))]
fn cuda_backends_with(_devices: u32, _g2_on_device: bool) -> Result<Vec<Arc<dyn Backend>>, String> {
    Err("this build has no CUDA backend (rebuild with `--features cuda`)".into())
}
