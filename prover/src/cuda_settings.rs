//! The CUDA backend's knobs as the `[cuda]` section of the engine TOML (one description of
//! every setting; `prove --set cuda.<key>=<value>` overrides any of them). Defined without
//! the `cuda` feature so that an engine file parses the same in every build.
//!
//! The `PROOFSCOPE_*` environment variables of the device scripts are overrides of these
//! keys, read in one place ([`CudaSettings::with_env_overrides`], table [`ENV_OVERRIDES`]);
//! the CUDA backend gets the resolved settings as a value and records them, with the
//! overrides that were applied, in the run meta. Nothing else in the proving path reads
//! the environment.

use std::fmt;

use serde::{de::Error as _, Deserialize, Deserializer, Serialize, Serializer};

/// Smallest and largest MSM window size accepted (c = 22 already needs 25M buckets).
pub const MSM_C_RANGE: std::ops::RangeInclusive<u32> = 4..=22;

/// `[cuda]`: placement of the parameters, MSM lanes, shift tables, streaming chunk, NTT plan,
/// MSM config and scheduling of the CUDA backend. Every key is optional; defaults are the
/// measured best on the H200. Documented example: `prover/configs/engine.example.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CudaSettings {
    /// Where the query points live: `auto` (default: resident, and a query whose upload runs
    /// out of device memory is streamed), `resident` (an upload out of memory fails the
    /// partition, which the engine proves on its CPU fallback) or `stream` (every query
    /// streamed: per partition each MSM uploads the points it needs — H all of its points,
    /// L/A/B the points of their tail and of their scalar-one terms, gathered on the host —
    /// and frees them after; device memory then holds one query's points at a time).
    /// Override: `PROOFSCOPE_GPU_PARAMS`.
    pub params: ParamsMode,
    /// Terms per chunk of a streamed MSM; unset (default): as many as the free device memory
    /// holds with the MSM's scratch and 1 GiB to spare. A positive number.
    /// Override: `PROOFSCOPE_STREAM_CHUNK`.
    pub stream_chunk: Option<usize>,
    /// The L, A, B-in-G1 and B-in-G2 MSMs of a partition each on a lane (a CUDA stream of its
    /// own, driven by a thread of its own) beside the NTTs and the H MSM on the device's
    /// stream when the device scratch of all five fits in the free device memory (`on`,
    /// default; else one after the other), or one after the other on one stream (`off`). On
    /// lanes their spans overlap: each one's `gpu_ns` is its CUDA-event time on its lane,
    /// shared with the others, and the partition's device time is the union of its spans.
    /// Override: `PROOFSCOPE_MSM_BATCH` (`on`, `off`, `1`, `0`).
    pub msm_batch: MsmBatch,
    /// Tables of precomputed shifted bases for the resident G1 queries: `off` (default), `on`
    /// (queries of at least 2^19 points, window size by query size: 16 below 2^21 points, 20
    /// from there) or a window size 4..=22 (every query, that size). A table that does not fit
    /// in the free device memory (2 GiB to spare) is skipped. Override:
    /// `PROOFSCOPE_MSM_PRECOMP` (also `0`, `1`, `auto`).
    pub msm_precomp: ShiftChoice,
    /// The G1 MSM's spec `KERNEL[+pre][:C[:SEG[:CHUNK]]]` (kernels `bal`, `f1eo3`, `eo`,
    /// `b4`); unset (default): kernel `bal`, window size by size, segments of 16, chunk by
    /// size. Override: `PROOFSCOPE_MSM_ACC`.
    pub msm_acc: Option<String>,
    /// The G1 MSM's window size c (4..=22), over `msm_acc`'s; unset (default): by MSM size.
    /// Override: `PROOFSCOPE_MSM_C`.
    pub msm_c: Option<u32>,
    /// The G1 MSM's reduction segment length (a power of two in 1..=256), over `msm_acc`'s;
    /// unset (default): 16. Override: `PROOFSCOPE_MSM_SEG`.
    pub msm_seg: Option<u32>,
    /// The G2 MSM's spec `KERNEL[:C[:SEG[:CHUNK]]]` (kernels `g2bal`, `g2eo`, `g2f1eo`, `g2`);
    /// unset (default): kernel `g2bal`, window size by size. Override: `PROOFSCOPE_MSM_G2_ACC`.
    pub msm_g2_acc: Option<String>,
    /// The Fr product of the NTT kernels: `eo` (default, even/odd) or `cios`; identical
    /// results. Override: `PROOFSCOPE_NTT_MUL`.
    pub ntt_mul: NttMul,
    /// The DIF pass shape: `4` (default, two stages per shared-memory step) or `2`; identical
    /// results. Override: `PROOFSCOPE_NTT_RADIX`.
    pub ntt_radix: NttRadix,
    /// How the stages above the last pass are grouped into DIF passes: `e<k>` (as few passes
    /// of at most k stages as possible, evenly filled) or `g<k>` (greedy), k in 1..=9;
    /// default `e8`. Identical results. Override: `PROOFSCOPE_NTT_PLAN`.
    pub ntt_plan: NttPlan,
    /// The bit reversal that ends every NTT: `fused` (default, into the last DIF pass), `tile`
    /// (a pass through a shared-memory tile) or `plain`; identical results. Override:
    /// `PROOFSCOPE_NTT_BITREV`.
    pub ntt_bitrev: NttBitrev,
    /// The NTT's device memory: `tables` (resident twiddle tables of n·32 B a domain and a
    /// scratch buffer of n·32 B a call, the fastest), `lean` (twiddles computed from two small
    /// tables, the permutation in place: neither) or `auto` (default: `lean` only on a device
    /// whose memory, or VRAM budget, cannot hold one partition with the tables). Identical
    /// results. Override: `PROOFSCOPE_NTT_MEMORY`.
    pub ntt_memory: NttMemory,
    /// How a partition's a, b and c reach the device: `staged` (default: filled into the
    /// device's page-locked staging in 64 MiB chunks, each copied while the next is filled)
    /// or `registered` (their own pages page-locked in place for the copy, `cuMemHostRegister`,
    /// and unlocked after it: no host fill; falls back to `staged` when the pages cannot be
    /// locked) or `pooled` (the engine's syntheses write them into vectors kept from partition
    /// to partition and page-locked once, at most a set per partition that can hold its
    /// a/b/c at once (`pw` + `queue_capacity` + `gw` per device), in the RAM budget; copied in
    /// place: no fill and no lock per partition; a partition without pooled vectors is
    /// staged). Identical results. Override: `PROOFSCOPE_ABC_UPLOAD`.
    pub abc_upload: AbcUpload,
    /// How host threads wait for the GPU (the primary context's scheduling flag, set when the
    /// device is opened): `auto` (default, the driver's choice), `spin`, `yield` or
    /// `blocking`. Override: `PROOFSCOPE_CUDA_SCHED`.
    pub sched: CudaSched,
}

/// One environment variable that overrides a key of [`CudaSettings`].
pub struct EnvOverride {
    /// The variable (`PROOFSCOPE_GPU_PARAMS`).
    pub var: &'static str,
    /// The key of `[cuda]` it overrides (`params`).
    pub key: &'static str,
    apply: fn(&mut CudaSettings, &str) -> Result<(), String>,
}

/// Every environment override of `[cuda]`, in the order they are applied. A variable that is
/// unset or empty overrides nothing; the accepted spellings are those the variables took
/// when they were the only way to set these knobs.
pub const ENV_OVERRIDES: &[EnvOverride] = &[
    EnvOverride { var: "PROOFSCOPE_GPU_PARAMS", key: "params", apply: |s, v| {
        s.params = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_STREAM_CHUNK", key: "stream_chunk", apply: |s, v| {
        s.stream_chunk = parse_stream_chunk(v)?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_MSM_BATCH", key: "msm_batch", apply: |s, v| {
        s.msm_batch = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_MSM_PRECOMP", key: "msm_precomp", apply: |s, v| {
        s.msm_precomp = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_MSM_ACC", key: "msm_acc", apply: |s, v| {
        s.msm_acc = Some(v.trim().to_string());
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_MSM_C", key: "msm_c", apply: |s, v| {
        s.msm_c = Some(parse_number(v)?);
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_MSM_SEG", key: "msm_seg", apply: |s, v| {
        s.msm_seg = Some(parse_number(v)?);
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_MSM_G2_ACC", key: "msm_g2_acc", apply: |s, v| {
        s.msm_g2_acc = Some(v.trim().to_string());
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_NTT_MUL", key: "ntt_mul", apply: |s, v| {
        s.ntt_mul = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_NTT_RADIX", key: "ntt_radix", apply: |s, v| {
        s.ntt_radix = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_NTT_PLAN", key: "ntt_plan", apply: |s, v| {
        s.ntt_plan = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_NTT_BITREV", key: "ntt_bitrev", apply: |s, v| {
        s.ntt_bitrev = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_NTT_MEMORY", key: "ntt_memory", apply: |s, v| {
        s.ntt_memory = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_ABC_UPLOAD", key: "abc_upload", apply: |s, v| {
        s.abc_upload = v.parse()?;
        Ok(())
    } },
    EnvOverride { var: "PROOFSCOPE_CUDA_SCHED", key: "sched", apply: |s, v| {
        s.sched = v.parse()?;
        Ok(())
    } },
];

/// A `[cuda]` value that cannot be used: from the file or `--set` (`key`), or from an
/// environment override (`var` set too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CudaSettingsError {
    /// The key of `[cuda]` (`msm_c`).
    pub key: &'static str,
    /// The environment variable the value came from, when it did.
    pub var: Option<&'static str>,
    /// The value as given.
    pub value: String,
    pub reason: String,
}

impl fmt::Display for CudaSettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.var {
            Some(var) => write!(f, "{var}={:?} (override of cuda.{}): {}", self.value, self.key, self.reason),
            None => write!(f, "cuda.{} = {}: {}", self.key, self.value, self.reason),
        }
    }
}

/// Environment overrides that were applied: (variable, value as given).
pub type AppliedOverrides = Vec<(String, String)>;

impl CudaSettings {
    /// These settings with every `PROOFSCOPE_*` override of [`ENV_OVERRIDES`] that is set in
    /// the process environment applied on top, validated, and the overrides applied. The
    /// one place the proving path reads the environment.
    pub fn with_env_overrides(self) -> Result<(CudaSettings, AppliedOverrides), CudaSettingsError> {
        self.with_overrides_from(|var| std::env::var(var).ok())
    }

    /// [`CudaSettings::with_env_overrides`] with the variables looked up by `lookup` (tests
    /// pass a map instead of touching the process environment).
    pub fn with_overrides_from(mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<(CudaSettings, AppliedOverrides), CudaSettingsError> {
        let mut applied = Vec::new();
        for o in ENV_OVERRIDES {
            let Some(v) = lookup(o.var).filter(|v| !v.trim().is_empty()) else { continue };
            (o.apply)(&mut self, &v).map_err(|reason| CudaSettingsError { key: o.key, var: Some(o.var), value: v.clone(), reason })?;
            applied.push((o.var.to_string(), v));
        }
        self.validate().map_err(|e| {
            // Name the variable when the value that fails came from one.
            let var = ENV_OVERRIDES.iter().find(|o| o.key == e.key && applied.iter().any(|(v, _)| v == o.var)).map(|o| o.var);
            let value = var.and_then(|var| applied.iter().find(|(v, _)| v == var)).map_or(e.value.clone(), |(_, v)| v.clone());
            CudaSettingsError { var, value, ..e }
        })?;
        Ok((self, applied))
    }

    /// Checks what the types alone do not: positive chunk, window size in [`MSM_C_RANGE`],
    /// segment a power of two in 1..=256 and (in a build with the `cuda` feature, which
    /// knows the kernels) the MSM specs.
    pub fn validate(&self) -> Result<(), CudaSettingsError> {
        let bad = |key: &'static str, value: String, reason: String| Err(CudaSettingsError { key, var: None, value, reason });
        if self.stream_chunk == Some(0) {
            return bad("stream_chunk", "0".into(), "expected a positive number of terms".into());
        }
        if let Some(c) = self.msm_c.filter(|c| !MSM_C_RANGE.contains(c)) {
            return bad("msm_c", c.to_string(), format!("MSM window size outside {}..={}", MSM_C_RANGE.start(), MSM_C_RANGE.end()));
        }
        if let Some(s) = self.msm_seg.filter(|s| !(1..=256).contains(s) || !s.is_power_of_two()) {
            return bad("msm_seg", s.to_string(), "MSM reduction segment length is not a power of two in 1..=256".into());
        }
        #[cfg(feature = "cuda")]
        crate::gpu::MsmDefaults::from_settings(self)?;
        Ok(())
    }
}

/// A positive number of terms (`PROOFSCOPE_STREAM_CHUNK`); empty is none.
pub fn parse_stream_chunk(v: &str) -> Result<Option<usize>, String> {
    match v.trim() {
        "" => Ok(None),
        t => match t.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err("expected a positive number of terms".into()),
        },
    }
}

fn parse_number(v: &str) -> Result<u32, String> {
    v.trim().parse().map_err(|_| "not a number".to_string())
}

/// Serde for the knobs spelled as numbers or words (`ntt_radix = 4`, `msm_precomp = 20` or
/// `"on"`): any TOML string or integer, read through the type's `FromStr` (the spellings of
/// its environment variable), written as `Display` says.
macro_rules! serde_by_spelling {
    ($t:ty, $number:expr) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match $number(self) {
                    Some(n) => s.serialize_u32(n),
                    None => s.serialize_str(&self.to_string()),
                }
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Spelling {
                    Number(i64),
                    Word(String),
                }
                let v = match Spelling::deserialize(d).map_err(|_| D::Error::custom(concat!("expected a string or an integer for ", stringify!($t))))? {
                    Spelling::Number(n) => n.to_string(),
                    Spelling::Word(w) => w,
                };
                v.parse().map_err(D::Error::custom)
            }
        }
    };
}

/// The member of `all` whose `name` is `v` (already trimmed), or "unknown {what} "v"
/// (expected a, b or c)": the parsing of every closed set of `[cuda]` values.
fn by_name<T: Copy, const N: usize>(all: [T; N], name: fn(T) -> &'static str, v: &str, what: &str) -> Result<T, String> {
    all.into_iter().find(|&m| name(m) == v).ok_or_else(|| format!("unknown {what} {v:?} (expected {})", one_of(&all.map(name))))
}

/// Accepted names of a closed set, for messages: `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Where the query points live ([`CudaSettings::params`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamsMode {
    #[default]
    Auto,
    Resident,
    Stream,
}

impl ParamsMode {
    pub const ALL: [ParamsMode; 3] = [ParamsMode::Auto, ParamsMode::Resident, ParamsMode::Stream];

    pub fn name(&self) -> &'static str {
        match self {
            ParamsMode::Auto => "auto",
            ParamsMode::Resident => "resident",
            ParamsMode::Stream => "stream",
        }
    }
}

impl std::str::FromStr for ParamsMode {
    type Err = String;
    /// `auto` (also empty), `resident` or `stream`.
    fn from_str(v: &str) -> Result<Self, String> {
        match v.trim() {
            "" => Ok(ParamsMode::Auto),
            t => by_name(ParamsMode::ALL, |m| m.name(), t, "value"),
        }
    }
}

/// Whether the MSMs of one partition run concurrently on lanes ([`CudaSettings::msm_batch`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MsmBatch {
    Off,
    #[default]
    On,
}

impl MsmBatch {
    pub fn name(&self) -> &'static str {
        match self {
            MsmBatch::Off => "off",
            MsmBatch::On => "on",
        }
    }
}

impl std::str::FromStr for MsmBatch {
    type Err = String;
    /// `on` (also `1` and empty) or `off` (also `0`).
    fn from_str(v: &str) -> Result<Self, String> {
        match v.trim() {
            "" | "on" | "1" => Ok(MsmBatch::On),
            "off" | "0" => Ok(MsmBatch::Off),
            other => Err(format!("unknown value {other:?} (expected on or off)")),
        }
    }
}

/// Tables of precomputed shifted bases for the resident G1 queries
/// ([`CudaSettings::msm_precomp`]): none, by query size, or at one window size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShiftChoice {
    #[default]
    Off,
    Auto,
    C(u32),
}

impl ShiftChoice {
    /// `off`, `auto` or `c<C>` (the spelling of the run meta before `[cuda]`).
    pub fn name(&self) -> String {
        match self {
            ShiftChoice::Off => "off".into(),
            ShiftChoice::Auto => "auto".into(),
            ShiftChoice::C(c) => format!("c{c}"),
        }
    }
}

impl fmt::Display for ShiftChoice {
    /// What the TOML holds: `off`, `on`, or the window size.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShiftChoice::Off => f.write_str("off"),
            ShiftChoice::Auto => f.write_str("on"),
            ShiftChoice::C(c) => write!(f, "{c}"),
        }
    }
}

impl std::str::FromStr for ShiftChoice {
    type Err = String;
    /// Empty, `0` or `off`: no tables; `1`, `on` or `auto`: by query size; a number in
    /// [`MSM_C_RANGE`]: that window size.
    fn from_str(v: &str) -> Result<Self, String> {
        match v.trim() {
            "" | "0" | "off" => Ok(ShiftChoice::Off),
            "1" | "on" | "auto" => Ok(ShiftChoice::Auto),
            x => match x.parse::<u32>() {
                Ok(c) if MSM_C_RANGE.contains(&c) => Ok(ShiftChoice::C(c)),
                _ => Err(format!("unknown value {x:?} (expected off, on (window size by query size) or a window size {}..={})", MSM_C_RANGE.start(), MSM_C_RANGE.end())),
            },
        }
    }
}

serde_by_spelling!(ShiftChoice, |s: &ShiftChoice| match s {
    ShiftChoice::C(c) => Some(*c),
    _ => None,
});

/// The Fr product of the NTT kernels ([`CudaSettings::ntt_mul`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NttMul {
    /// `Fr::mul` (CIOS), the plain kernel names.
    Cios,
    /// `Fr::mul_eo` (even/odd), the `_eo` kernels. The default: 6.27 ms vs 7.66 ms at 2^24
    /// on the H200, bit-identical (reports/gpu/2026-11-30-run4-even-odd.md).
    #[default]
    Eo,
}

impl NttMul {
    pub const ALL: [NttMul; 2] = [NttMul::Cios, NttMul::Eo];

    pub fn name(self) -> &'static str {
        match self {
            NttMul::Cios => "cios",
            NttMul::Eo => "eo",
        }
    }
}

impl std::str::FromStr for NttMul {
    type Err = String;
    fn from_str(v: &str) -> Result<Self, String> {
        by_name(NttMul::ALL, NttMul::name, v.trim(), "NTT product")
    }
}

/// The DIF pass kernel shape ([`CudaSettings::ntt_radix`]), written `2` or `4`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NttRadix {
    /// One radix-2 stage per step (`ntt_dif_pass`), blockDim = elements / 2.
    R2,
    /// Two stages per step (`ntt_dif_pass_r4`), blockDim = max(elements / 4, 1). The
    /// default: 5.33 ms vs 6.25 ms at 2^24 on the H200 with the even/odd product,
    /// bit-identical (reports/gpu/2026-11-30-run4-even-odd.md, run 8).
    #[default]
    R4,
}

impl NttRadix {
    pub const ALL: [NttRadix; 2] = [NttRadix::R2, NttRadix::R4];

    /// `r2` or `r4` (row names of the bench).
    pub fn name(self) -> &'static str {
        match self {
            NttRadix::R2 => "r2",
            NttRadix::R4 => "r4",
        }
    }

    pub fn radix(self) -> u32 {
        match self {
            NttRadix::R2 => 2,
            NttRadix::R4 => 4,
        }
    }
}

impl fmt::Display for NttRadix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.radix())
    }
}

impl std::str::FromStr for NttRadix {
    type Err = String;
    /// `2` or `4`.
    fn from_str(v: &str) -> Result<Self, String> {
        match v.trim() {
            "2" => Ok(NttRadix::R2),
            "4" => Ok(NttRadix::R4),
            other => Err(format!("unknown NTT radix {other:?} (expected 2 or 4)")),
        }
    }
}

serde_by_spelling!(NttRadix, |r: &NttRadix| Some(r.radix()));

/// How the stages above the last pass (10 stages, one 1024-element block of stride 1; 8
/// stages on 4 chunks when the bit reversal is fused into it, [`NttBitrev::Fused`]) are
/// grouped into DIF passes of at most `kmax` stages each (a block holds 2^k groups of
/// 2^(10-k) lanes): `greedy` takes `kmax` stages while it can and leaves the rest to one
/// short pass (the plan before 2026-11-30's run 16: 6 + 6 + 2 + 10 at 2^24), `even` uses as
/// few passes as `kmax` allows and spreads the stages evenly over them (7 + 7 + 10 at 2^24
/// with kmax 7 or 8: one global round trip less). Written `g6`, `e8`, ...
/// ([`CudaSettings::ntt_plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttPlan {
    pub kmax: u32,
    pub even: bool,
}

impl Default for NttPlan {
    fn default() -> Self {
        NttPlan { kmax: 8, even: true }
    }
}

impl NttPlan {
    /// The plans `gpu bench` and `gpu check` compare: the old greedy one and three even ones.
    pub const COMPARED: [NttPlan; 4] = [NttPlan { kmax: 6, even: false }, NttPlan { kmax: 7, even: true }, NttPlan { kmax: 8, even: true }, NttPlan { kmax: 9, even: true }];

    pub fn name(self) -> String {
        format!("{}{}", if self.even { "e" } else { "g" }, self.kmax)
    }
}

impl fmt::Display for NttPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl std::str::FromStr for NttPlan {
    type Err = String;
    /// `g<k>` or `e<k>`, k in 1..=9.
    fn from_str(v: &str) -> Result<Self, String> {
        let v = v.trim();
        let bad = || format!("unknown NTT pass plan {v:?} (expected g<k> or e<k>, k in 1..=9, e.g. e8)");
        let (even, k) = match v.split_at_checked(1) {
            Some(("g", k)) => (false, k),
            Some(("e", k)) => (true, k),
            _ => return Err(bad()),
        };
        match k.parse::<u32>() {
            Ok(kmax) if (1..=9).contains(&kmax) => Ok(NttPlan { kmax, even }),
            _ => Err(bad()),
        }
    }
}

serde_by_spelling!(NttPlan, |_: &NttPlan| None);

/// The bit-reversal step that ends every NTT (with its output scale)
/// ([`CudaSettings::ntt_bitrev`]): `plain`, one thread per element scattering it to its
/// reversed index; `tile`, the permutation through a 32x32 tile in shared memory so that
/// reads and writes are both coalesced (`ntt_bitrev_tile` in ntt.cu); `fused` (the default),
/// no pass of its own: the last DIF pass runs 8 stages on 4 chunks whose outputs are
/// neighbours and stores them permuted and scaled (`ntt_dif_last_bitrev`), one round trip
/// through memory less: 4.320 vs 4.674 ms (tile) at 2^24 on the H200 with plan e8, 18.70 vs
/// 19.77 ms at 2^26 (run 22, reports/gpu/2026-11-30-run22-25.md). `tile` and `fused` need
/// 2^10 and up; below, `plain` runs. Same output bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NttBitrev {
    Plain,
    Tile,
    #[default]
    Fused,
}

impl NttBitrev {
    pub const ALL: [NttBitrev; 3] = [NttBitrev::Plain, NttBitrev::Tile, NttBitrev::Fused];

    pub fn name(self) -> &'static str {
        match self {
            NttBitrev::Plain => "plain",
            NttBitrev::Tile => "tile",
            NttBitrev::Fused => "fused",
        }
    }
}

impl std::str::FromStr for NttBitrev {
    type Err = String;
    fn from_str(v: &str) -> Result<Self, String> {
        by_name(NttBitrev::ALL, NttBitrev::name, v.trim(), "NTT bit reversal")
    }
}

/// The NTT's device memory ([`CudaSettings::ntt_memory`]): `tables` keeps two twiddle tables
/// of n/2 powers per domain (4 GiB at 2^27) and gives every call a scratch buffer of n scalars
/// (4 GiB) for the closing permutation; `lean` reads each twiddle as the product of two
/// small tables' entries (`ntt_dif_pass_lean` in ntt.cu: 0.6 MiB at 2^27, one product more
/// per twiddle) and permutes in place (`ntt_bitrev_inplace`), so that a 2^27 call fits a
/// 16 GiB card; `auto` (the default) picks `lean` only where the device (or its VRAM budget)
/// cannot hold one partition with the tables. Same output bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NttMemory {
    #[default]
    Auto,
    Tables,
    Lean,
}

impl NttMemory {
    pub const ALL: [NttMemory; 3] = [NttMemory::Auto, NttMemory::Tables, NttMemory::Lean];

    pub fn name(self) -> &'static str {
        match self {
            NttMemory::Auto => "auto",
            NttMemory::Tables => "tables",
            NttMemory::Lean => "lean",
        }
    }
}

impl std::str::FromStr for NttMemory {
    type Err = String;
    fn from_str(v: &str) -> Result<Self, String> {
        by_name(NttMemory::ALL, NttMemory::name, v.trim(), "NTT memory")
    }
}

/// How a partition's a, b and c reach the device ([`CudaSettings::abc_upload`]). At 2^27 the
/// staged fill (12 GiB copied by the host into page-locked chunks) took 1.37–2.15 s a
/// partition beside the syntheses (runs 131–135: 5.6–8.8 GB/s while the host's triad gave
/// 77–85); `registered` lets the copy engine read a, b and c where the synthesis wrote them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbcUpload {
    #[default]
    Staged,
    Registered,
    /// a, b and c written by the products into vectors the engine keeps from partition to
    /// partition, page-locked once ([`crate::abc_pool`]): no fill and no lock per partition.
    /// A partition whose vectors are not pooled (the pool was empty and full, the circuit
    /// synthesis path) is staged.
    Pooled,
}

impl AbcUpload {
    pub const ALL: [AbcUpload; 3] = [AbcUpload::Staged, AbcUpload::Registered, AbcUpload::Pooled];

    pub fn name(self) -> &'static str {
        match self {
            AbcUpload::Staged => "staged",
            AbcUpload::Registered => "registered",
            AbcUpload::Pooled => "pooled",
        }
    }
}

impl std::str::FromStr for AbcUpload {
    type Err = String;
    fn from_str(v: &str) -> Result<Self, String> {
        by_name(AbcUpload::ALL, AbcUpload::name, v.trim(), "a/b/c upload")
    }
}

/// How a host thread waits for the GPU ([`CudaSettings::sched`]): the primary context's
/// scheduling flag, set before the device is opened. `auto` is the driver's choice (it spins
/// while there are fewer active contexts than cores); `blocking` sleeps on an OS primitive.
/// A spinning waiter occupies a core the syntheses could use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CudaSched {
    #[default]
    Auto,
    Spin,
    Yield,
    Blocking,
}

impl CudaSched {
    pub const ALL: [CudaSched; 4] = [CudaSched::Auto, CudaSched::Spin, CudaSched::Yield, CudaSched::Blocking];

    /// The value's spelling (`auto`, `spin`, `yield`, `blocking`).
    pub fn name(self) -> &'static str {
        match self {
            CudaSched::Auto => "auto",
            CudaSched::Spin => "spin",
            CudaSched::Yield => "yield",
            CudaSched::Blocking => "blocking",
        }
    }
}

impl std::str::FromStr for CudaSched {
    type Err = String;
    fn from_str(v: &str) -> Result<Self, String> {
        by_name(CudaSched::ALL, CudaSched::name, v.trim(), "value")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn overrides(vars: &[(&str, &str)]) -> Result<(CudaSettings, AppliedOverrides), CudaSettingsError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        CudaSettings::default().with_overrides_from(|k| map.get(k).cloned())
    }

    #[test]
    fn env_overrides_apply_on_top_and_say_what_they_applied() {
        let (s, applied) = overrides(&[]).unwrap();
        assert_eq!((s, applied.len()), (CudaSettings::default(), 0));
        let base = CudaSettings { params: ParamsMode::Resident, ntt_plan: NttPlan { kmax: 7, even: true }, ..Default::default() };
        let vars: HashMap<&str, &str> = [("PROOFSCOPE_GPU_PARAMS", "stream"), ("PROOFSCOPE_MSM_BATCH", "0"), ("PROOFSCOPE_MSM_PRECOMP", " 20"), ("PROOFSCOPE_STREAM_CHUNK", "3000"), ("PROOFSCOPE_NTT_RADIX", "2"), ("PROOFSCOPE_CUDA_SCHED", "blocking"), ("PROOFSCOPE_MSM_C", "17"), ("PROOFSCOPE_NTT_MUL", "")].into();
        let (s, applied) = base.with_overrides_from(|k| vars.get(k).map(|v| v.to_string())).unwrap();
        assert_eq!(s.params, ParamsMode::Stream);
        assert_eq!(s.msm_batch, MsmBatch::Off);
        assert_eq!(s.msm_precomp, ShiftChoice::C(20));
        assert_eq!(s.stream_chunk, Some(3000));
        assert_eq!(s.ntt_radix, NttRadix::R2);
        assert_eq!(s.sched, CudaSched::Blocking);
        assert_eq!(s.msm_c, Some(17));
        // Not overridden: the file's value stays; an empty variable overrides nothing.
        assert_eq!((s.ntt_plan.name(), s.ntt_mul), ("e7".to_string(), NttMul::Eo));
        let names: Vec<&str> = applied.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["PROOFSCOPE_GPU_PARAMS", "PROOFSCOPE_STREAM_CHUNK", "PROOFSCOPE_MSM_BATCH", "PROOFSCOPE_MSM_PRECOMP", "PROOFSCOPE_MSM_C", "PROOFSCOPE_NTT_RADIX", "PROOFSCOPE_CUDA_SCHED"]);
        assert!(applied.contains(&("PROOFSCOPE_MSM_PRECOMP".into(), " 20".into())), "the value as given: {applied:?}");
    }

    #[test]
    fn a_bad_override_names_the_variable_and_the_key() {
        for (var, v) in [("PROOFSCOPE_GPU_PARAMS", "streamed"), ("PROOFSCOPE_STREAM_CHUNK", "0"), ("PROOFSCOPE_STREAM_CHUNK", "1e6"), ("PROOFSCOPE_MSM_BATCH", "yes"), ("PROOFSCOPE_MSM_PRECOMP", "23"), ("PROOFSCOPE_MSM_PRECOMP", "20x"), ("PROOFSCOPE_NTT_PLAN", "x8"), ("PROOFSCOPE_NTT_RADIX", "8"), ("PROOFSCOPE_CUDA_SCHED", "sleepy"), ("PROOFSCOPE_MSM_C", "many"), ("PROOFSCOPE_MSM_C", "30"), ("PROOFSCOPE_MSM_SEG", "3")] {
            let e = overrides(&[(var, v)]).unwrap_err();
            let key = ENV_OVERRIDES.iter().find(|o| o.var == var).unwrap().key;
            assert_eq!((e.var, e.key), (Some(var), key), "{var}={v}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(var) && msg.contains(&format!("cuda.{key}")) && msg.contains(v.trim()), "{msg}");
        }
    }

    #[test]
    fn knobs_parse_the_spellings_of_their_variables() {
        for (v, want) in [("", ParamsMode::Auto), ("auto", ParamsMode::Auto), (" resident", ParamsMode::Resident), ("stream ", ParamsMode::Stream)] {
            assert_eq!(v.parse::<ParamsMode>().unwrap(), want, "{v:?}");
        }
        for (v, want) in [("", MsmBatch::On), ("on", MsmBatch::On), ("1", MsmBatch::On), (" off", MsmBatch::Off), ("0", MsmBatch::Off)] {
            assert_eq!(v.parse::<MsmBatch>().unwrap(), want, "{v:?}");
        }
        for (v, want) in [("", ShiftChoice::Off), ("off", ShiftChoice::Off), ("0", ShiftChoice::Off), (" on", ShiftChoice::Auto), ("1", ShiftChoice::Auto), ("auto", ShiftChoice::Auto), ("20", ShiftChoice::C(20)), ("9 ", ShiftChoice::C(9))] {
            assert_eq!(v.parse::<ShiftChoice>().unwrap(), want, "{v:?}");
        }
        for bad in ["yes", "3", "23", "-1", "20x"] {
            assert!(bad.parse::<ShiftChoice>().is_err(), "{bad:?}");
        }
        assert_eq!(ShiftChoice::C(17).name(), "c17");
        for (v, want) in [("auto", CudaSched::Auto), (" spin", CudaSched::Spin), ("yield", CudaSched::Yield), ("blocking ", CudaSched::Blocking)] {
            assert_eq!(v.parse::<CudaSched>().unwrap(), want);
        }
        assert!("sleepy".parse::<CudaSched>().unwrap_err().contains("blocking"));
        assert_eq!(parse_stream_chunk("").unwrap(), None);
        assert_eq!(parse_stream_chunk(" 3000 ").unwrap(), Some(3000));
        for bad in ["0", "-5", "1e6", "many"] {
            assert!(parse_stream_chunk(bad).is_err(), "{bad:?}");
        }
        assert_eq!(" e8 ".parse::<NttPlan>().unwrap(), NttPlan { kmax: 8, even: true });
        assert_eq!("g6".parse::<NttPlan>().unwrap().name(), "g6");
        for bad in ["", "e", "e0", "e10", "x8", "8", "e-1", "é8"] {
            assert!(bad.parse::<NttPlan>().unwrap_err().contains("pass plan"), "{bad:?}");
        }
        assert_eq!(" 4 ".parse::<NttRadix>().unwrap(), NttRadix::R4);
        assert_eq!("2".parse::<NttRadix>().unwrap(), NttRadix::R2);
        assert!("8".parse::<NttRadix>().is_err() && "".parse::<NttRadix>().is_err());
        assert_eq!(" cios ".parse::<NttMul>().unwrap(), NttMul::Cios);
        assert!("mont".parse::<NttMul>().is_err() && "".parse::<NttMul>().is_err());
        // The messages name every accepted value.
        assert_eq!(" fast ".parse::<NttBitrev>().unwrap_err(), "unknown NTT bit reversal \"fast\" (expected plain, tile or fused)");
        assert_eq!("mont".parse::<NttMul>().unwrap_err(), "unknown NTT product \"mont\" (expected cios or eo)");
        assert_eq!(" registered ".parse::<AbcUpload>().unwrap(), AbcUpload::Registered);
        assert_eq!(" pooled".parse::<AbcUpload>().unwrap(), AbcUpload::Pooled);
        assert_eq!("pinned".parse::<AbcUpload>().unwrap_err(), "unknown a/b/c upload \"pinned\" (expected staged, registered or pooled)");
        // The defaults are the measured winners.
        let d = CudaSettings::default();
        assert_eq!((d.params, d.msm_batch, d.msm_precomp, d.stream_chunk), (ParamsMode::Auto, MsmBatch::On, ShiftChoice::Off, None));
        assert_eq!((d.ntt_mul, d.ntt_radix, d.ntt_plan.name(), d.ntt_bitrev, d.sched), (NttMul::Eo, NttRadix::R4, "e8".to_string(), NttBitrev::Fused, CudaSched::Auto));
    }

    #[test]
    fn the_section_round_trips_through_toml_with_numbers_or_words() {
        let s = CudaSettings { msm_precomp: ShiftChoice::C(20), stream_chunk: Some(5), msm_acc: Some("eo:17".into()), ntt_radix: NttRadix::R2, ..Default::default() };
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("msm_precomp = 20") && text.contains("ntt_radix = 2") && text.contains("ntt_plan = \"e8\"") && !text.contains("msm_c"), "{text}");
        assert_eq!(toml::from_str::<CudaSettings>(&text).unwrap(), s);
        let d = toml::to_string(&CudaSettings::default()).unwrap();
        assert_eq!(toml::from_str::<CudaSettings>(&d).unwrap(), CudaSettings::default());
        let t: CudaSettings = toml::from_str("msm_precomp = \"on\"\nntt_radix = \"4\"\nmsm_batch = \"off\"").unwrap();
        assert_eq!((t.msm_precomp, t.ntt_radix, t.msm_batch), (ShiftChoice::Auto, NttRadix::R4, MsmBatch::Off));
        let e = toml::from_str::<CudaSettings>("ntt_plan = \"x3\"").unwrap_err().to_string();
        assert!(e.contains("pass plan"), "{e}");
        assert!(toml::from_str::<CudaSettings>("params = \"streamed\"").is_err());
        assert!(toml::from_str::<CudaSettings>("nope = 1").unwrap_err().to_string().contains("nope"));
    }
}
