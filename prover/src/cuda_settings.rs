//! The CUDA backend's knobs as the `[cuda]` section of the engine TOML (one description of
//! every setting; `prove --set cuda.<key>=<value>` overrides any of them). Defined without
//! the `cuda` feature so that an engine file parses the same in every build.

use serde::{Deserialize, Serialize};

/// `[cuda]`: placement of the parameters, MSM lanes, shift tables, streaming chunk, NTT plan
/// and scheduling of the CUDA backend. Every field is optional; defaults are the measured
/// best on the H200.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CudaSettings {}
