//! Host-memory arithmetic of the model, in one place: byte sizes as configs write them
//! (`"128GiB"`, `"5GiB"`, `"auto"`, or an integer of bytes, as the cuzk daemon's
//! `memory.total_budget` / `safety_margin`), and the **working-set formula** of one
//! partition, which budget-gated admission reserves before a synthesis starts.
//!
//! The working set of a partition with n constraints (input constraints included), a aux
//! variables and i inputs (the constant ONE included) is
//!
//! - a, b, c: 3 · n · 32 B (one 32-byte scalar per constraint each; released at GPU call
//!   start with `memory.early_release`, the first phase of the two-phase release),
//! - the assignment: (i + a) · 32 B,
//! - the density bit vectors (a-aux, b-aux over the aux variables, b-input over the
//!   inputs): ⌈a/64⌉·8 + ⌈a/64⌉·8 + ⌈i/64⌉·8 B.
//!
//! It is what the prover holds for a synthesised partition: `ProvingAssignment` in
//! `prover/src/synthesis.rs` (`heap_bytes()` = (3n + i + a) · 32, plus its three `Density`
//! vectors of u64 words). The engine's budget (issue 19) reserves the same figure; this
//! function is the definition the simulator uses, and docs/reference/config.md names it.
//! For the PoRep shape (n ≈ a ≈ 130.3 M) it gives 11.65 GiB of a/b/c + 3.88 GiB of
//! assignment + 31 MB of densities; the reference daemon's own estimate is 12.5 + 1.1 GiB
//! (its aux assignment is stored more compactly), so a config for the reference box keeps
//! `memory.partition_gib` explicit rather than this formula.

use serde::{Deserialize, Serialize};

pub const GIB: f64 = (1u64 << 30) as f64;

/// Parse a byte size: an integer (bytes) or a number with a unit, B, KiB, MiB, GiB, TiB
/// (powers of 1024) or KB, MB, GB, TB (powers of 1000), case-insensitive, spaces allowed
/// (`"128GiB"`, `"1.5 GiB"`, `"512MB"`, `"137438953472"`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.replace('_', "");
    let v: f64 = num.parse().map_err(|_| format!("`{s}` is not a size (a number of bytes, or e.g. \"128GiB\", \"5GiB\", \"512MiB\")"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => GIB,
        "t" | "tib" => GIB * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        other => return Err(format!("`{s}`: unknown unit `{other}` (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")),
    };
    let bytes = v * mult;
    if !bytes.is_finite() || bytes > 1e9 * GIB {
        return Err(format!("`{s}` is more than 1e9 GiB"));
    }
    Ok(bytes.round() as u64)
}

/// A byte count written the way a person reads it (`"128GiB"`, `"1.5GiB"`, `"300MiB"`,
/// or the integer when no binary unit is exact to 1/1000).
pub fn fmt_bytes(b: u64) -> String {
    for (unit, m) in [("TiB", GIB * 1024.0), ("GiB", GIB), ("MiB", 1024.0 * 1024.0), ("KiB", 1024.0)] {
        let v = b as f64 / m;
        if v >= 1.0 && ((v * 1000.0).round() - v * 1000.0).abs() < 1e-6 {
            let s = format!("{:.3}", v);
            let s = s.trim_end_matches('0').trim_end_matches('.');
            return format!("{s}{unit}");
        }
    }
    b.to_string()
}

/// A byte size in a config: written as an integer of bytes or a string with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub fn gib(self) -> f64 {
        self.0 as f64 / GIB
    }
}

/// A size in a JSON output: a string with a unit (`"128GiB"`), `"auto"` for a budget, or
/// a number of bytes.
fn size_schema(description: &str) -> schemars::Schema {
    schemars::json_schema!({
        "description": description,
        "anyOf": [{ "type": "string" }, { "type": "integer", "minimum": 0 }]
    })
}

impl schemars::JsonSchema for ByteSize {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteSize".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        size_schema("A size: bytes, or a string with a unit such as \"5GiB\".")
    }
}

impl schemars::JsonSchema for Budget {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Budget".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        size_schema("A RAM budget: \"auto\", bytes, or a string with a unit such as \"128GiB\".")
    }
}

impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&fmt_bytes(self.0))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Budget::deserialize(d)? {
            Budget::Bytes(b) => Ok(ByteSize(b)),
            Budget::Auto => Err(serde::de::Error::custom("`auto` is only meaningful for memory.total_budget; give a size such as \"5GiB\"")),
        }
    }
}

/// `memory.total_budget`: `"auto"` (the machine's RAM − `safety_margin`, as the cuzk
/// daemon's default) or a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    Auto,
    Bytes(u64),
}

impl Budget {
    pub fn parse(s: &str) -> Result<Budget, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(Budget::Auto)
        } else {
            parse_bytes(s).map(Budget::Bytes)
        }
    }
}

impl Serialize for Budget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Budget::Auto => s.serialize_str("auto"),
            Budget::Bytes(b) => s.serialize_str(&fmt_bytes(*b)),
        }
    }
}

impl<'de> Deserialize<'de> for Budget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Int(u64),
            Float(f64),
            Str(String),
        }
        match Repr::deserialize(d).map_err(|_: D::Error| D::Error::custom("a size is a number of bytes or a string such as \"128GiB\" or \"auto\""))? {
            Repr::Int(b) => Ok(Budget::Bytes(b)),
            Repr::Float(f) if f.is_finite() && f >= 0.0 && f <= 1e9 * GIB => Ok(Budget::Bytes(f.round() as u64)),
            Repr::Float(f) => Err(D::Error::custom(format!("{f} is not a size in bytes"))),
            Repr::Str(s) => Budget::parse(&s).map_err(D::Error::custom),
        }
    }
}

/// The circuit of one partition: what the working set and the per-partition costs scale with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Circuit {
    /// Constraints per partition, input constraints included (2^27 = 134217728 at full scale).
    pub constraints: u64,
    /// Aux (private) variables per partition; absent = as many as constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aux: Option<u64>,
    /// Inputs, the constant ONE included; absent = 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<u64>,
}

/// One partition's host working set, bytes, by part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkingSet {
    pub abc: u64,
    pub assignment: u64,
    pub density: u64,
}

impl WorkingSet {
    pub fn total(&self) -> u64 {
        self.abc + self.assignment + self.density
    }
}

/// The working-set formula (see the module doc).
pub fn working_set(c: &Circuit) -> WorkingSet {
    let n = c.constraints;
    let aux = c.aux.unwrap_or(n);
    let inputs = c.inputs.unwrap_or(1);
    let words = |bits: u64| bits.div_ceil(64) * 8;
    WorkingSet {
        abc: 3u64.saturating_mul(n).saturating_mul(32),
        assignment: inputs.saturating_add(aux).saturating_mul(32),
        density: words(aux) * 2 + words(inputs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units_and_round_trip() {
        assert_eq!(parse_bytes("128GiB").unwrap(), 128 << 30);
        assert_eq!(parse_bytes(" 1.5 GiB ").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("512mib").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("5GB").unwrap(), 5_000_000_000);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("1_024").unwrap(), 1024);
        for bad in ["", "GiB", "12 parsecs", "1e400GiB", "-5GiB", "1.2.3GiB"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        for b in [128u64 << 30, 3 << 29, 5 << 30, 300 << 20, 12345] {
            assert_eq!(parse_bytes(&fmt_bytes(b)).unwrap(), b, "{}", fmt_bytes(b));
        }
        assert_eq!(fmt_bytes(128 << 30), "128GiB");
        assert_eq!(Budget::parse("AUTO").unwrap(), Budget::Auto);
    }

    #[test]
    fn working_set_by_hand() {
        // 2^27 constraints, as many aux variables, 1 input: a/b/c 12 GiB, assignment
        // (2^27 + 1)·32 B = 4 GiB + 32 B, densities 2·2^21 words + 1 word.
        let w = working_set(&Circuit { constraints: 1 << 27, aux: None, inputs: None });
        assert_eq!(w.abc, 12 << 30);
        assert_eq!(w.assignment, (4 << 30) + 32);
        assert_eq!(w.density, 2 * (1 << 21) * 8 + 8);
        // The PoRep partition of the reference (130 278 869 constraints, 130 169 893 aux, 328 inputs).
        let w = working_set(&Circuit { constraints: 130_278_869, aux: Some(130_169_893), inputs: Some(328) });
        assert!((w.abc as f64 / GIB - 11.648).abs() < 0.001, "{}", w.abc as f64 / GIB);
        assert!((w.assignment as f64 / GIB - 3.880).abs() < 0.001);
    }
}
