//! Choosing the proving devices: `cpu`, `cuda` (the `cuda` feature's backend, helper
//! module `crate::gpu`) or `auto` (CUDA when it answers, else the CPU). The CUDA backends get
//! the config's `[cuda]` settings with their `PROOFSCOPE_*` environment overrides applied
//! ([`CudaSettings::with_env_overrides`], the one place they are read).

use std::sync::Arc;

use crate::backend::Backend;
use crate::cpu::CpuBackend;
use crate::cuda_settings::CudaSettings;

/// Backends for `kind`, one per device. `devices` is how many CPU "devices" to make (or
/// the most CUDA devices to use).
pub fn backends_for(kind: &str, devices: u32) -> Result<Vec<Arc<dyn Backend>>, String> {
    let cpu = || (0..devices.max(1)).map(|d| Arc::new(CpuBackend::new(d)) as Arc<dyn Backend>).collect::<Vec<_>>();
    match kind {
        "cpu" => Ok(cpu()),
        "cuda" => cuda_backends(devices, &CudaSettings::default(), true, None),
        "auto" => Ok(cuda_backends(devices, &CudaSettings::default(), true, None).unwrap_or_else(|_| cpu())),
        other => Err(format!("unknown backend `{other}` (expected cpu, cuda or auto)")),
    }
}

/// Backends for a config: its `backend`, `devices`, for the CPU `cpu_msm`, for CUDA `g2_msm`
/// and `[cuda]`.
pub fn backends_for_config(cfg: &super::EngineConfig) -> Result<Vec<Arc<dyn Backend>>, String> {
    let cpu = || (0..cfg.devices.max(1)).map(|d| Arc::new(CpuBackend::with_msm(d, cfg.cpu_msm)) as Arc<dyn Backend>).collect::<Vec<_>>();
    let g2_on_device = cfg.g2_msm == super::config::G2Msm::Device;
    let vram = cfg.memory.vram_budget.map(|b| b.0);
    match cfg.backend.as_str() {
        "cpu" => Ok(cpu()),
        "cuda" => cuda_backends(cfg.devices, &cfg.cuda, g2_on_device, vram),
        "auto" => Ok(cuda_backends(cfg.devices, &cfg.cuda, g2_on_device, vram).unwrap_or_else(|_| cpu())),
        other => backends_for(other, cfg.devices),
    }
}

/// At most `devices` CUDA backends with `settings` and their environment overrides, each
/// limited to `vram_budget` bytes of device memory (`memory.vram_budget`).
#[cfg(feature = "cuda")]
fn cuda_backends(devices: u32, settings: &CudaSettings, g2_on_device: bool, vram_budget: Option<u64>) -> Result<Vec<Arc<dyn Backend>>, String> {
    let (settings, applied) = settings.clone().with_env_overrides().map_err(|e| e.to_string())?;
    let mut all = crate::gpu::backends(&settings, &applied, g2_on_device, vram_budget).map_err(|e| e.to_string())?;
    all.truncate(devices.max(1) as usize);
    if all.is_empty() {
        return Err("no CUDA device found".into());
    }
    Ok(all)
}

#[cfg(not(feature = "cuda"))]
fn cuda_backends(_devices: u32, _settings: &CudaSettings, _g2_on_device: bool, _vram_budget: Option<u64>) -> Result<Vec<Arc<dyn Backend>>, String> {
    Err("this build has no CUDA backend (rebuild with `--features cuda`)".into())
}
