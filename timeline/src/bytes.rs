//! Host-memory arithmetic shared by the engine and the simulator, so that each is defined
//! once (issue 16): byte sizes as configs and command lines write them ([`ByteSize`]), the
//! budget setting `memory.total_budget` ([`Budget`]: `"auto"` or a size), the one parser and
//! the one formatter of sizes, the one parser of counts such as constraints per partition
//! ([`parse_count`]: `2^14`), and the **working set of one partition** ([`working_set`]),
//! which the engine's RAM budget reserves before a synthesis and the simulator's
//! budget-gated admission models.
//!
//! # Sizes
//!
//! A size is a number with a unit, B, KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T are
//! the same) or KB, MB, GB, TB (powers of 1000), case-insensitive, spaces and `_` between
//! digits allowed: `"128GiB"`, `"1.5 GiB"`, `"512MB"`, `"1_024MiB"`. In a config file
//! (TOML, JSON) a size is such a string or an **integer of bytes** (the cuzk daemon's
//! `memory.total_budget = 137438953472`); a string without a unit is refused there (`"6"`:
//! bytes or GiB? say which). The engine's `--ram-budget` takes a bare number as GiB
//! ([`ByteSize::parse_with`] with a default unit). At most 1 EiB.
//!
//! Sizes are written back (serialised, [`fmt::Display`]) as the largest binary unit that is
//! exact to 1/1000 (`"128GiB"`, `"1.5GiB"`, `"300MiB"`), else in bytes (`"12345B"`), so
//! what is written parses back to the same bytes. Messages use [`human`] (`"16.03 GiB"`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes in a GiB, as a float (sizes in the models' GiB figures).
pub const GIB: f64 = (1u64 << 30) as f64;

/// A count as command lines and campaign scripts write it: `16384`, `2^14` or `1<<14`
/// (constraints per partition; `_` between digits allowed).
pub fn parse_count(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let pow = |base: &str, exp: &str| -> Result<u64, String> {
        let b: u64 = base.trim().parse().map_err(|_| format!("`{s}` is not a size"))?;
        let e: u32 = exp.trim().parse().map_err(|_| format!("`{s}` is not a size"))?;
        if b == 1 && s.contains("<<") {
            return 1u64.checked_shl(e).ok_or_else(|| format!("`{s}` is too large"));
        }
        b.checked_pow(e).ok_or_else(|| format!("`{s}` is too large"))
    };
    if let Some((b, e)) = s.split_once('^') {
        pow(b, e)
    } else if let Some((b, e)) = s.split_once("<<") {
        let b: u64 = b.trim().parse().map_err(|_| format!("`{s}` is not a size"))?;
        let e: u32 = e.trim().parse().map_err(|_| format!("`{s}` is not a size"))?;
        b.checked_shl(e).ok_or_else(|| format!("`{s}` is too large"))
    } else {
        s.replace('_', "").parse().map_err(|_| format!("`{s}` is not a size (use e.g. 16384 or 2^14)"))
    }
}

/// The largest size accepted: 1 EiB.
const MAX_BYTES: f64 = (1u64 << 60) as f64;

/// A size in bytes (see the module doc for what parses and how it is written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub const fn gib(n: u64) -> ByteSize {
        ByteSize(n << 30)
    }

    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// The size in GiB.
    pub fn as_gib(self) -> f64 {
        self.0 as f64 / GIB
    }

    /// Parse `<number><unit>`; `bare_unit` is the unit of a number without one (`None`: a
    /// unit is required). Errors quote the input and say what a size looks like; the caller
    /// names the field.
    pub fn parse_with(s: &str, bare_unit: Option<&str>) -> Result<ByteSize, String> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
        let (num, unit) = (t[..split].trim(), t[split..].trim());
        let unit = match (unit, bare_unit) {
            ("", Some(u)) => u,
            ("", None) if !num.is_empty() => return Err(format!("`{s}`: give a unit (e.g. 5GiB, 512MiB, 4096B)")),
            (u, _) => u,
        };
        let num = num.replace('_', "");
        let v: f64 = num.parse().map_err(|_| format!("`{s}` is not a size (e.g. 5GiB, 512MiB)"))?;
        let mult: f64 = match unit.to_ascii_lowercase().as_str() {
            "b" => 1.0,
            "k" | "kib" => 1024.0,
            "m" | "mib" => 1024.0 * 1024.0,
            "g" | "gib" => GIB,
            "t" | "tib" => GIB * 1024.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "tb" => 1e12,
            _ => return Err(format!("`{s}`: unknown unit `{unit}` (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")),
        };
        let bytes = v * mult;
        if !bytes.is_finite() || bytes < 0.0 || bytes > MAX_BYTES {
            return Err(format!("`{s}` is out of range (at most 1 EiB)"));
        }
        Ok(ByteSize(bytes.round() as u64))
    }
}

/// The one formatter of sizes (see the module doc): exact, parses back to the same bytes.
impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, m) in [("TiB", GIB * 1024.0), ("GiB", GIB), ("MiB", 1024.0 * 1024.0), ("KiB", 1024.0)] {
            let v = b as f64 / m;
            if v >= 1.0 && ((v * 1000.0).round() - v * 1000.0).abs() < 1e-6 {
                let s = format!("{v:.3}");
                return write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'));
            }
        }
        write!(f, "{b}B")
    }
}

/// A unit is required (the config files' form of a string).
impl std::str::FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ByteSize::parse_with(s, None)
    }
}

/// Bytes for messages: GiB with two decimals, or MiB / KiB with one, or B.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.2} GiB", b / GIB)
    } else if b >= 1048576.0 {
        format!("{:.1} MiB", b / 1048576.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

/// `memory.total_budget`: `"auto"` (the machine's RAM less `memory.safety_margin`, as the
/// cuzk daemon's default) or a size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Budget {
    #[default]
    Auto,
    Bytes(ByteSize),
}

impl Budget {
    /// `auto` (any case) or a size; `bare_unit` as in [`ByteSize::parse_with`].
    pub fn parse_with(s: &str, bare_unit: Option<&str>) -> Result<Budget, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(Budget::Auto)
        } else {
            ByteSize::parse_with(s, bare_unit).map(Budget::Bytes).map_err(|e| format!("{e}, or `auto`"))
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::Auto => f.write_str("auto"),
            Budget::Bytes(b) => b.fmt(f),
        }
    }
}

/// `auto` or a size with a unit.
impl std::str::FromStr for Budget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Budget::parse_with(s, None)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for Budget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What a config file may write for a size: an integer of bytes or a string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Repr {
    Int(u64),
    Str(String),
}

const SIZE_FORMS: &str = "a size is an integer of bytes or a string with a unit such as \"128GiB\"";

impl<'de> Deserialize<'de> for Budget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Repr::deserialize(d).map_err(|_: D::Error| D::Error::custom(format!("{SIZE_FORMS}, or \"auto\"")))? {
            Repr::Int(b) => Ok(Budget::Bytes(ByteSize(b))),
            Repr::Str(s) => s.parse().map_err(D::Error::custom),
        }
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Repr::deserialize(d).map_err(|_: D::Error| D::Error::custom(SIZE_FORMS))? {
            Repr::Int(b) => Ok(ByteSize(b)),
            Repr::Str(s) if s.trim().eq_ignore_ascii_case("auto") => Err(D::Error::custom("`auto` is only meaningful for memory.total_budget; give a size such as \"5GiB\"")),
            Repr::Str(s) => s.parse().map_err(D::Error::custom),
        }
    }
}

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
        size_schema("A size: an integer of bytes, or a string with a unit such as \"5GiB\".")
    }
}

impl schemars::JsonSchema for Budget {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Budget".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        size_schema("A RAM budget: \"auto\", an integer of bytes, or a string with a unit such as \"128GiB\".")
    }
}

/// The points of a partition's MSM queries (A, B in G1 — as many in G2 — and L): what the
/// engine's MSM preparation scales with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryPoints {
    pub a: u64,
    pub b: u64,
    pub l: u64,
}

/// One partition's host working set, bytes, by part (see [`working_set`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkingSet {
    /// a, b, c: 3 · n · 32 B. Released when the backend has taken them (the first phase of
    /// the two-phase release).
    pub abc: u64,
    /// The assignment (witness): (inputs + aux) · 32 B.
    pub assignment: u64,
    /// The three density bit vectors (A aux, B aux, B input), in u64 words:
    /// 2 · ⌈aux/64⌉ · 8 + ⌈inputs/64⌉ · 8 B.
    pub density: u64,
    /// MSM preparation of the A and L queries (0 without [`QueryPoints`]): their ones / tail
    /// indices and tail scalars, at most 36 B per point. Made inside the GPU call and dropped
    /// at its end.
    pub msm_prep: u64,
    /// MSM preparation of the B query (0 without [`QueryPoints`]): 36 B per point, made in
    /// the GPU call and kept (the density split the G2 MSM reuses) until the partition's
    /// proof is finished.
    pub msm_prep_b: u64,
    /// The largest MSM's gathered bases (0 without [`QueryPoints`]): max(96 B per point of
    /// the largest G1 query, 192 B per point of the B query in G2). Inside the GPU call only.
    pub msm_bases: u64,
}

impl WorkingSet {
    /// What the partition holds from its synthesis to its proof, a/b/c aside: the witness,
    /// the densities and the B query's preparation. Released when the proof is finished.
    pub fn rest(&self) -> u64 {
        self.assignment.saturating_add(self.density).saturating_add(self.msm_prep_b)
    }

    /// What a GPU call holds only while it runs (the A and L preparation and the gathered
    /// bases): at most one partition per GPU worker holds it at a time.
    pub fn call(&self) -> u64 {
        self.msm_prep.saturating_add(self.msm_bases)
    }

    /// What a synthesis reserves: a/b/c and the rest.
    pub fn partition(&self) -> u64 {
        self.abc.saturating_add(self.rest())
    }

    /// Everything one partition ever holds: [`WorkingSet::partition`] + [`WorkingSet::call`].
    pub fn total(&self) -> u64 {
        self.partition().saturating_add(self.call())
    }
}

/// What one partition holds on the host from its synthesis to its proof, and what its GPU
/// call holds while it runs ([`WorkingSet::call`]: the engine charges that to its GPU
/// workers, one call each, not to every synthesis): n = the domain
/// size (the constraint count, input constraints included, rounded up to a power of two: the
/// a, b, c vectors are resized to it for the NTTs), `inputs` (the constant ONE included),
/// `aux` variables. These three parts are exactly what the prover's `ProvingAssignment`
/// holds (`prover/src/synthesis.rs`) at its peak. `queries`: the MSM query sizes, when the
/// consumer models the MSM preparation too (the engine does, from the parameter file; the
/// simulator's `[circuit]` has no query sizes and leaves it out). Saturating: sizes from a
/// file's header are not trusted to be sane.
///
/// For the reference's PoRep partition (n = 2^27, 130 169 893 aux, 328 inputs): a/b/c
/// 12 GiB, assignment 3.88 GiB, densities 31 MB.
pub fn working_set(domain: u64, inputs: u64, aux: u64, queries: Option<QueryPoints>) -> WorkingSet {
    let m = |a: u64, b: u64| a.saturating_mul(b);
    let words = |bits: u64| bits.div_ceil(64).saturating_mul(8);
    let (msm_prep, msm_prep_b, msm_bases) = match queries {
        Some(q) => (m(q.a.saturating_add(q.l), 36), m(q.b, 36), m(q.a.max(q.b).max(q.l), 96).max(m(q.b, 192))),
        None => (0, 0, 0),
    };
    WorkingSet {
        abc: m(domain, 3 * 32),
        assignment: m(inputs.saturating_add(aux), 32),
        density: words(aux).saturating_mul(2).saturating_add(words(inputs)),
        msm_prep,
        msm_prep_b,
        msm_bases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units_and_round_trip() {
        let p = |s: &str| s.parse::<ByteSize>().map(|b| b.0);
        assert_eq!(p("128GiB").unwrap(), 128 << 30);
        assert_eq!(p(" 1.5 GiB ").unwrap(), 3 << 29);
        assert_eq!(p("512mib").unwrap(), 512 << 20);
        assert_eq!(p("5GB").unwrap(), 5_000_000_000);
        assert_eq!(p("64GB").unwrap(), 64_000_000_000);
        assert_eq!(p("1_024MiB").unwrap(), 1 << 30);
        assert_eq!(p("4096B").unwrap(), 4096);
        // A bare number: an error unless the caller gives its unit.
        for bad in ["", "5", "4096", "GiB", "five GiB", "12 parsecs", "1e400GiB", "1e30GiB", "-5GiB", "-1GiB", "1.2.3GiB", "2EiB"] {
            assert!(p(bad).is_err(), "{bad}");
        }
        assert!(p("5").unwrap_err().contains("give a unit"));
        assert_eq!(ByteSize::parse_with("6", Some("GiB")).unwrap(), ByteSize::gib(6));
        assert_eq!(ByteSize::parse_with("4096", Some("B")).unwrap().0, 4096);
        for b in [128u64 << 30, 3 << 29, 5 << 30, 300 << 20, 12345, 0, 1 << 60] {
            let s = ByteSize(b).to_string();
            assert_eq!(p(&s).unwrap(), b, "{s}");
        }
        assert_eq!(ByteSize::gib(128).to_string(), "128GiB");
        assert_eq!(ByteSize(3 << 29).to_string(), "1.5GiB");
        assert_eq!(ByteSize(12345).to_string(), "12345B");
        assert_eq!("AUTO".parse::<Budget>().unwrap(), Budget::Auto);
        assert_eq!(Budget::parse_with("6", Some("GiB")).unwrap(), Budget::Bytes(ByteSize::gib(6)));
        assert!("6".parse::<Budget>().unwrap_err().contains("or `auto`"));
    }

    #[test]
    fn config_files_write_integers_of_bytes_or_strings_with_units() {
        #[derive(Deserialize, Serialize, Debug, PartialEq)]
        struct M {
            total_budget: Budget,
            safety_margin: ByteSize,
        }
        let m: M = toml::from_str("total_budget = 21474836480\nsafety_margin = \"5GiB\"").unwrap();
        assert_eq!(m, M { total_budget: Budget::Bytes(ByteSize::gib(20)), safety_margin: ByteSize::gib(5) });
        assert_eq!(toml::to_string(&m).unwrap(), "total_budget = \"20GiB\"\nsafety_margin = \"5GiB\"\n");
        let e = toml::from_str::<M>("total_budget = \"auto\"\nsafety_margin = \"auto\"").unwrap_err().to_string();
        assert!(e.contains("safety_margin") && e.contains("only meaningful for memory.total_budget"), "{e}");
        let e = toml::from_str::<M>("total_budget = 2.5\nsafety_margin = \"5GiB\"").unwrap_err().to_string();
        assert!(e.contains("total_budget") && e.contains("integer of bytes"), "{e}");
        let e = toml::from_str::<M>("total_budget = \"6\"\nsafety_margin = \"5GiB\"").unwrap_err().to_string();
        assert!(e.contains("give a unit"), "{e}");
        let j: M = serde_json::from_str(r#"{"total_budget":"Auto","safety_margin":1024}"#).unwrap();
        assert_eq!(j, M { total_budget: Budget::Auto, safety_margin: ByteSize(1024) });
    }

    #[test]
    fn messages_round_to_two_decimals() {
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(3 << 20), "3.0 MiB");
        assert_eq!(human(16 << 30), "16.00 GiB");
        assert_eq!(human(101), "101 B");
    }

    #[test]
    fn working_set_by_hand() {
        // n = 2^27, as many aux variables, 1 input: a/b/c 3·2^27·32 = 12 GiB, assignment
        // (2^27 + 1)·32 B = 4 GiB + 32 B, densities 2·2^21 words + 1 word.
        let w = working_set(1 << 27, 1, 1 << 27, None);
        assert_eq!(w.abc, 12 << 30);
        assert_eq!(w.assignment, (4 << 30) + 32);
        assert_eq!(w.density, 2 * (1 << 21) * 8 + 8);
        assert_eq!((w.msm_prep, w.msm_prep_b, w.msm_bases), (0, 0, 0));
        assert_eq!(w.total(), w.abc + w.rest());
        // The PoRep partition of the reference (domain 2^27, 130 169 893 aux, 328 inputs):
        // assignment (328 + 130 169 893)·32 B = 3.880 GiB.
        let w = working_set(1 << 27, 328, 130_169_893, None);
        assert!((w.assignment as f64 / GIB - 3.880).abs() < 0.001);
        // With the MSM queries: n = 2^10, 3 inputs, 500 aux, A 400, B 300, L 500 points:
        // prep (400+300+500)·36, bases max(96·500, 192·300) = 57 600; densities
        // 2·⌈500/64⌉ + ⌈3/64⌉ = 2·8 + 1 = 17 words.
        let w = working_set(1 << 10, 3, 500, Some(QueryPoints { a: 400, b: 300, l: 500 }));
        assert_eq!(w.abc, (1 << 10) * 96);
        // The partition keeps its witness, densities and B preparation; the call holds the A
        // and L preparation and the bases.
        assert_eq!(w.rest(), 503 * 32 + 17 * 8 + 300 * 36);
        assert_eq!(w.call(), 900 * 36 + 300 * 192);
        assert_eq!(w.partition(), w.abc + w.rest());
        assert_eq!(w.total(), 1024 * 96 + 503 * 32 + 17 * 8 + 1200 * 36 + 300 * 192, "the same bytes as before the split");
        // Saturating, never a panic on a header's absurd sizes.
        assert_eq!(working_set(u64::MAX, u64::MAX, u64::MAX, Some(QueryPoints { a: u64::MAX, b: 1, l: 1 })).total(), u64::MAX);
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("16384"), Ok(16384));
        assert_eq!(parse_count("2^14"), Ok(16384));
        assert_eq!(parse_count("1<<14"), Ok(16384));
        assert!(parse_count("lots").is_err());
        assert!(parse_count("2^99").is_err());
    }
}
