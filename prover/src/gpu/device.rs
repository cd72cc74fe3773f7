//! Opening a GPU: driver presence check, context, stream, and the embedded kernel modules.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;

mod kernels {
    #![allow(dead_code)]
    #[cfg(cuda_kernels)]
    include!(concat!(env!("OUT_DIR"), "/cuda_kernels.rs"));
    #[cfg(not(cuda_kernels))]
    pub const MODULES: &[(&str, &[u8], &str)] = &[];
    #[cfg(not(cuda_kernels))]
    pub const NVCC_VERSION: &str = "";
}

/// Why the CUDA backend cannot run (or failed).
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("this binary was built without CUDA kernels (no nvcc at build time; see scripts/install-nvcc.sh)")]
    NoKernels,
    #[error("no CUDA driver (libcuda) on this machine")]
    NoDriver,
    #[error("no CUDA device {0}: {1}")]
    NoDevice(usize, String),
    #[error("CUDA driver error in {what}: {err}")]
    Driver { what: String, err: DriverError },
    #[error("{0}")]
    Other(String),
}

pub(crate) trait Ctx<T> {
    fn ctx(self, what: &str) -> Result<T, GpuError>;
}

impl<T> Ctx<T> for Result<T, DriverError> {
    fn ctx(self, what: &str) -> Result<T, GpuError> {
        self.map_err(|err| GpuError::Driver { what: what.to_string(), err })
    }
}

/// Whether this binary carries compiled kernels, and the nvcc that built them.
pub fn kernels_built() -> Option<&'static str> {
    (!kernels::MODULES.is_empty()).then_some(kernels::NVCC_VERSION)
}

/// One GPU: its context, one stream, and every kernel function by name.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    funcs: HashMap<String, CudaFunction>,
    pub name: String,
    pub ordinal: usize,
    pub compute_capability: (i32, i32),
    pub sm_count: i32,
    /// Whether the sm_90 cubins were loaded (else the PTX was JIT-compiled by the driver).
    pub native_cubin: bool,
    pub(crate) ntt_domains: Mutex<HashMap<u32, Arc<crate::gpu::ntt::Domain>>>,
    /// Bucket-accumulation kernel variant (register budget), see `msm.cu`.
    pub(crate) msm_acc: Mutex<&'static str>,
}

impl Gpu {
    /// Number of CUDA devices, or an error saying why there are none.
    pub fn device_count() -> Result<usize, GpuError> {
        if kernels::MODULES.is_empty() {
            return Err(GpuError::NoKernels);
        }
        // SAFETY: only tries to dlopen libcuda; no CUDA call is made.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        let n = std::panic::catch_unwind(CudaContext::device_count)
            .map_err(|_| GpuError::NoDriver)?
            .ctx("cuDeviceGetCount")?;
        Ok(n.max(0) as usize)
    }

    /// Opens device `ordinal` and loads the kernel modules (cubin on sm_90, PTX elsewhere).
    pub fn open(ordinal: usize) -> Result<Gpu, GpuError> {
        let count = Self::device_count()?;
        if ordinal >= count {
            return Err(GpuError::NoDevice(ordinal, format!("{count} device(s) present")));
        }
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| GpuError::NoDriver)?
            .map_err(|e| GpuError::NoDevice(ordinal, e.to_string()))?;
        // SAFETY: every buffer of a Gpu is allocated, used and freed on its one stream, so
        // cudarc's cross-stream event tracking (an event record per argument) is not needed.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().ctx("cuStreamCreate")?;
        let name = ctx.name().ctx("cuDeviceGetName")?;
        let compute_capability = ctx.compute_capability().ctx("compute capability")?;
        let sm_count = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .ctx("multiprocessor count")?;
        let native_cubin = compute_capability == (9, 0);
        let mut funcs = HashMap::new();
        for (module, cubin, ptx) in kernels::MODULES {
            let image = if native_cubin { Ptx::from_binary(cubin.to_vec()) } else { Ptx::from_src(*ptx) };
            let m = ctx.load_module(image).ctx(&format!("loading module {module}"))?;
            for f in kernel_names(ptx) {
                let func = m.load_function(&f).ctx(&format!("loading kernel {f}"))?;
                funcs.insert(f, func);
            }
        }
        Ok(Gpu {
            ctx,
            stream,
            funcs,
            name,
            ordinal,
            compute_capability,
            sm_count,
            native_cubin,
            ntt_domains: Mutex::new(HashMap::new()),
            msm_acc: Mutex::new(match std::env::var("PROOFSCOPE_MSM_ACC").as_deref() {
                Ok("b5") => "msm_bucket_acc_b5",
                Ok("b6") => "msm_bucket_acc_b6",
                _ => "msm_bucket_acc",
            }),
        })
    }

    /// Selects the bucket-accumulation variant: "b4" (128 registers, default), "b5", "b6".
    pub fn set_msm_variant(&self, v: &str) -> Result<(), GpuError> {
        let name = match v {
            "b4" => "msm_bucket_acc",
            "b5" => "msm_bucket_acc_b5",
            "b6" => "msm_bucket_acc_b6",
            other => return Err(GpuError::Other(format!("unknown MSM variant {other:?} (b4, b5, b6)"))),
        };
        *self.msm_acc.lock().map_err(|_| GpuError::Other("poisoned".into()))? = name;
        Ok(())
    }

    pub(crate) fn func(&self, name: &str) -> Result<&CudaFunction, GpuError> {
        self.funcs.get(name).ok_or_else(|| GpuError::Other(format!("kernel {name} missing from the embedded modules")))
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize), GpuError> {
        self.ctx.mem_get_info().ctx("cuMemGetInfo")
    }

    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize().ctx("stream synchronize")
    }

    /// A timing event recorded now on the stream.
    pub fn timer(&self) -> Result<KernelTimer, GpuError> {
        let ev = self
            .stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .ctx("cuEventRecord")?;
        Ok(KernelTimer(ev))
    }

    /// One-line description for reports.
    pub fn describe(&self) -> String {
        let (free, total) = self.mem_info().unwrap_or((0, 0));
        format!(
            "{} (device {}, sm_{}{}, {} SMs, {:.1} GiB total, {:.1} GiB free, kernels: {}, nvcc: {})",
            self.name,
            self.ordinal,
            self.compute_capability.0,
            self.compute_capability.1,
            self.sm_count,
            total as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64,
            if self.native_cubin { "sm_90 cubin" } else { "PTX JIT" },
            kernels::NVCC_VERSION
        )
    }
}

/// A CUDA event on the GPU's stream; differences between two are true device time.
pub struct KernelTimer(CudaEvent);

impl KernelTimer {
    /// Milliseconds from `self` to `end` (waits for `end` to complete).
    pub fn ms_to(&self, end: &KernelTimer) -> Result<f64, GpuError> {
        end.0.synchronize().ctx("cuEventSynchronize")?;
        Ok(self.0.elapsed_ms(&end.0).ctx("cuEventElapsedTime")? as f64)
    }
}

/// Kernel entry points of a PTX text (`.visible .entry NAME(`).
fn kernel_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or("").to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Launch a kernel: `launch!(gpu, "name", cfg, arg1, arg2, ...)` with args by reference.
macro_rules! launch {
    ($gpu:expr, $name:expr, $cfg:expr $(, $arg:expr)* $(,)?) => {{
        use cudarc::driver::PushKernelArg as _;
        let f = $gpu.func($name)?;
        let mut b = $gpu.stream.launch_builder(f);
        $( b.arg($arg); )*
        // SAFETY: argument lists match the extern "C" kernel signatures in prover/cuda.
        unsafe { b.launch($cfg) }.map_err(|err| $crate::gpu::GpuError::Driver { what: format!("launching {}", $name), err })?;
    }};
}
pub(crate) use launch;

/// Grid for `n` threads in blocks of `block`.
pub(crate) fn cfg_1d(n: u64, block: u32) -> cudarc::driver::LaunchConfig {
    let grid = n.div_ceil(block as u64).max(1) as u32;
    cudarc::driver::LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}
