//! Why the CUDA backend cannot run or failed, as typed values: the engine tells an
//! out-of-memory device apart from other faults (CPU fallback vs retry), checks and tests
//! match on the kind, and a driver error keeps its `DriverError` as the source.

use cudarc::driver::DriverError;

use super::kernels::KernelName;
use crate::cuda_settings::CudaSettingsError;

/// Why the CUDA backend cannot run (or failed).
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("this binary was built without CUDA kernels (no nvcc at build time; see scripts/install-nvcc.sh)")]
    NoKernels,
    #[error("no CUDA driver (libcuda) on this machine")]
    NoDriver,
    #[error("no CUDA device {ordinal}: {reason}")]
    NoDevice { ordinal: usize, reason: String },
    /// A driver call failed; `op` says which (`cuMemAlloc`, `launching msm_bucket_acc_bal`, ...).
    #[error("CUDA driver error in {op}: {source}")]
    Driver { op: String, source: DriverError },
    /// A kernel the launchers name is not in the loaded modules.
    #[error("kernel {0} missing from the embedded modules")]
    KernelMissing(KernelName),
    /// A `[cuda]` setting (or its environment override) that cannot be used.
    #[error(transparent)]
    Settings(#[from] CudaSettingsError),
    /// A configuration given to a launcher that it cannot run: an MSM variant spec, a
    /// batch-addition kernel, a window size (`key` names the knob).
    #[error("{key}: {reason}")]
    BadConfig { key: String, reason: String },
    /// Inputs whose sizes or indices do not fit together (a caller's bug): `op` names the
    /// operation.
    #[error("{op}: {reason}")]
    BadInput { op: &'static str, reason: String },
    /// A kernel returned words that are not a point of the curve (a kernel bug).
    #[error("kernel returned a point off the {group} curve")]
    OffCurve { group: &'static str },
    /// A field element that must be invertible was not (a domain that cannot exist).
    #[error("{0} is not invertible")]
    NotInvertible(&'static str),
    /// A lock of the device state was poisoned by a panic in another thread.
    #[error("poisoned {0} (a thread panicked holding it)")]
    Poisoned(&'static str),
}

impl GpuError {
    /// A [`GpuError::BadInput`].
    pub(crate) fn input(op: &'static str, reason: impl Into<String>) -> GpuError {
        GpuError::BadInput { op, reason: reason.into() }
    }

    /// A [`GpuError::BadConfig`].
    pub(crate) fn config(key: impl Into<String>, reason: impl Into<String>) -> GpuError {
        GpuError::BadConfig { key: key.into(), reason: reason.into() }
    }

    /// Whether this is the driver's CUDA_ERROR_OUT_OF_MEMORY (a failed `cuMemAlloc`, async
    /// allocation or pinned host allocation): what the engine's CPU fallback is for.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, GpuError::Driver { source, .. } if source.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY)
    }
}

/// `.ctx("what")` on a driver result: its error as [`GpuError::Driver`] naming the call.
pub(crate) trait Ctx<T> {
    fn ctx(self, op: &str) -> Result<T, GpuError>;
}

impl<T> Ctx<T> for Result<T, DriverError> {
    fn ctx(self, op: &str) -> Result<T, GpuError> {
        self.map_err(|source| GpuError::Driver { op: op.to_string(), source })
    }
}
