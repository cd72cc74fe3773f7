//! The CUDA backend: our own BLS12-381 kernels (Fr NTT, G1 and G2 MSMs, batch additions) driven
//! from Rust through cudarc.
//!
//! The CUDA driver is loaded at run time (cudarc's `dynamic-loading`), so the same binary
//! runs on machines without a GPU: [`Gpu::open`] then returns a clear [`GpuError`] instead of
//! panicking. The kernels themselves (`prover/cuda/*.cu`) are compiled by `build.rs` into an
//! sm_90 cubin plus compute_90 PTX and embedded in the binary; a build without nvcc has
//! none and says so ([`kernels_built`]).
//!
//! Values cross the host/device boundary in blst's in-memory representation (Montgomery
//! form, little-endian limbs), viewed as `u32` words: no conversion on upload.

mod backend;
pub mod bench;
pub mod check;
mod convert;
mod device;
mod msm;
mod ntt;
pub mod nvml;
pub mod reference;

pub use backend::{backends, CudaBackend, MsmBatch, ParamsMode, ShiftChoice};
pub use convert::{affine_words, affine_words_g2, scalar_words, xyzz_to_projective, xyzz_to_projective_g2};
pub use device::{kernels_built, CudaSched, Gpu, GpuError, KernelTimer};
pub use msm::{msm_window_bits, pre_window_bits, GpuCurve, MsmConfig, MsmTimes, ShiftTable, G1, G2};
pub use ntt::{NttDirection, NttMul, NttRadix, NttTimes};
