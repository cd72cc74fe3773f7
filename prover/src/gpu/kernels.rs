//! The kernels this binary carries: the modules `prover/build.rs` compiled from
//! `prover/cuda/*.cu` (sm_90 cubin + compute_90 PTX, none in a build without nvcc) and every
//! kernel name as a typed constant, one module per source (`kernels::ntt::NTT_DIF_PASS_EO`).
//!
//! The names are scanned from the sources by `build.rs` (with or without nvcc, so the
//! constants always exist) and checked there against the PTX's entry points; the launchers
//! name kernels only through them, and [`super::Gpu::open`] loads exactly these, so a kernel
//! renamed in a `.cu` file breaks the build of its launcher instead of a launch at run time.

use std::fmt;

/// The name of one `extern "C" __global__` kernel of `prover/cuda` (only the generated
/// constants make them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelName(&'static str);

impl KernelName {
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for KernelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// One compiled source: its stem, the sm_90 cubin, the compute_90 PTX and its kernels.
pub struct Module {
    pub name: &'static str,
    pub cubin: &'static [u8],
    pub ptx: &'static str,
    pub kernels: &'static [KernelName],
}

include!(concat!(env!("OUT_DIR"), "/kernel_names.rs"));

mod embedded {
    use super::Module;
    include!(concat!(env!("OUT_DIR"), "/cuda_kernels.rs"));
}

/// The compiled modules (empty in a build without nvcc).
pub const MODULES: &[Module] = embedded::MODULES;

/// The `nvcc --version` line of the compiler that built [`MODULES`] (empty without).
pub const NVCC_VERSION: &str = embedded::NVCC_VERSION;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_s_kernels_are_named_and_found_in_it() {
        let sources = [
            (include_str!("../../cuda/msm.cu"), msm::ALL),
            (include_str!("../../cuda/msm_g2.cu"), msm_g2::ALL),
            (include_str!("../../cuda/ntt.cu"), ntt::ALL),
            (include_str!("../../cuda/selftest.cu"), selftest::ALL),
            (include_str!("../../cuda/setup.cu"), setup::ALL),
        ];
        for (src, all) in sources {
            assert!(!all.is_empty());
            for k in all {
                // Plain declarations name the kernel; ntt.cu's macro declares `NAME##SUF(`.
                let name = k.as_str();
                let base = name.strip_suffix("_eo").filter(|_| src.contains("NTT_ENTRIES(_eo")).unwrap_or(name);
                assert!(src.contains(&format!(" {name}(")) || src.contains(&format!(" {base}##SUF(")) || src.contains(&format!("{base}##SUF(")), "{name} not declared in its source");
            }
        }
        // Macro-generated names: both products of every NTT entry point, and the in-place
        // bit reversal declared once.
        assert_eq!(ntt::ALL.len(), 23);
        assert_eq!((ntt::NTT_DIF_PASS_R4_EO.as_str(), ntt::FR_POWERS.as_str()), ("ntt_dif_pass_r4_eo", "fr_powers"));
        assert_eq!(msm::MSM_BUCKET_ACC_BAL.to_string(), "msm_bucket_acc_bal");
        // Every module carries its source's list (when kernels were built at all).
        for m in MODULES {
            assert!(!m.kernels.is_empty() && m.ptx.contains(".entry"), "{}", m.name);
        }
    }
}
