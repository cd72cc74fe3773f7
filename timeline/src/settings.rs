//! Settings by dotted path: the one implementation behind `prove --set`, `simulate --set`
//! and `sweep --vary`. A config is any serde struct (the engine's TOML, the simulator's);
//! `set_path(&cfg, "pipeline.pw", "4")` writes the value at that path of the config's TOML
//! form and reads the struct back, so every key of the file is settable, by the same name,
//! with the same checks as the file (an unknown key or a wrong type is the deserializer's
//! error, prefixed with the path).
//!
//! Values are TOML literals (`4`, `2.5`, `true`, `"kernels"`, `{ dist = "normal", ... }`,
//! `[1, 2]`); anything that does not parse as one is taken as a string, so `lock=whole`
//! needs no quotes.

use serde::de::DeserializeOwned;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error("--set: `{0}` is not KEY=VALUE")]
    Syntax(String),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl SetError {
    /// What is wrong, without the path (for callers that name the key themselves).
    pub fn reason(&self) -> String {
        match self {
            SetError::Invalid { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

/// Split `key=value` (the first `=`), both trimmed.
pub fn split_assignment(kv: &str) -> Result<(&str, &str), SetError> {
    match kv.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => Err(SetError::Syntax(kv.to_string())),
    }
}

/// A raw command-line value as a TOML value (see the module doc).
pub fn parse_value(raw: &str) -> toml::Value {
    let raw = raw.trim();
    match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

/// `cfg` with the value at the dotted `path` replaced by `raw` (see the module doc).
pub fn set_path<T: Serialize + DeserializeOwned>(cfg: &T, path: &str, raw: &str) -> Result<T, SetError> {
    let err = |message: String| SetError::Invalid { path: path.to_string(), message };
    let mut root = toml::Table::try_from(cfg).map_err(|e| err(format!("cannot represent the config: {e}")))?;
    let parts: Vec<&str> = path.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(err("empty segment in the key".into()));
    }
    let (last, parents) = parts.split_last().expect("split yields at least one part");
    let mut table = &mut root;
    for (i, p) in parents.iter().enumerate() {
        let entry = table.entry(p.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(err(format!("`{}` is a value, not a section", parts[..=i].join(".")))),
        };
    }
    if matches!(table.get(*last), Some(toml::Value::Table(_))) && !matches!(parse_value(raw), toml::Value::Table(_)) {
        return Err(err(format!("`{path}` is a section: set one of its keys (`{path}.<key>`)")));
    }
    table.insert(last.to_string(), parse_value(raw));
    toml::Value::Table(root).try_into::<T>().map_err(|e| err(e.message().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        x: f64,
        #[serde(default)]
        name: Option<String>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Cfg {
        pw: u32,
        on: bool,
        inner: Inner,
    }

    fn cfg() -> Cfg {
        Cfg { pw: 2, on: false, inner: Inner { x: 1.5, name: None } }
    }

    #[test]
    fn every_key_by_its_path_with_the_file_s_types() {
        assert_eq!(set_path(&cfg(), "pw", "4").unwrap().pw, 4);
        assert!(set_path(&cfg(), "on", "true").unwrap().on);
        assert_eq!(set_path(&cfg(), "inner.x", "3").unwrap().inner.x, 3.0);
        // An absent optional key is settable too, a bare word is a string.
        assert_eq!(set_path(&cfg(), "inner.name", "abc").unwrap().inner.name.as_deref(), Some("abc"));
        assert_eq!(set_path(&cfg(), "inner", "{ x = 7.0 }").unwrap().inner.x, 7.0);
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_path() {
        for (k, v, want) in [
            ("pww", "1", "pww"),
            ("inner.y", "1", "inner.y"),
            ("pw", "many", "pw"),
            ("pw", "-1", "pw"),
            ("on", "2", "on"),
            ("inner", "5", "section"),
            ("pw.x", "1", "not a section"),
            ("a..b", "1", "empty segment"),
        ] {
            let e = set_path(&cfg(), k, v).unwrap_err().to_string();
            assert!(e.contains(want), "{k}={v}: {e}");
        }
        assert!(split_assignment("novalue").is_err());
        assert_eq!(split_assignment(" a.b = c=d ").unwrap(), ("a.b", "c=d"));
    }
}
