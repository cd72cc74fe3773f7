//! `--cuzk-config cuzk.toml`: the configuration file a storage provider runs the cuzk
//! daemon with (keys in `docs/../shared/reference/cuzk-daemon.md`), imported as the
//! pipeline part of a simulator config, so that "what if" can be asked about the file in
//! production. Every key of the file is either mapped onto the model, or named in a
//! warning as not modelled; none is silently ignored. A malformed file (TOML syntax, a
//! value of the wrong type) is an error naming the file and the line.
//!
//! The mapping (and the daemon's default applied when a key is absent):
//!
//! | cuzk key | default | model |
//! |---|---|---|
//! | `memory.total_budget` | `"auto"` | `memory.total_budget` |
//! | `memory.safety_margin` | `"5GiB"` | `memory.safety_margin` |
//! | `memory.eviction_min_idle` | `"5m"` | `memory.eviction_min_idle` (seconds; it matters with a `[[mix]]` of proof types: without one, nothing is loaded or evicted, and the import says so) |
//! | `gpus.devices` | `[]` (all) | `machine.gpus` = the number listed (at most the machine's) |
//! | `gpus.gpu_workers_per_device` | 2 | `pipeline.gw` |
//! | `gpus.gpu_threads` | (model's) | `cpu.prep_cores` and `cpu.finalize_cores` (at most the cores) |
//! | `synthesis.threads` | 0 (all) | a cap on `cpu.synth_cores` (the model has no pool-wide cap: warned) |
//! | `synthesis.partition_workers` | — | `pipeline.pw` (deprecated in cuzk) |
//! | `pipeline.synthesis_concurrency` | 1 | `pipeline.synthesis_concurrency` (proofs synthesised at once); `pipeline.pw` = their partitions, so the budget decides partition concurrency |
//! | `pipeline.enabled` | true | `false` is not modelled (warned) |
//! | `scheduler.max_batch_size` | 1 | values above 1 are not modelled (warned) |
//!
//! Not modelled, always named in the warning when present: `pipeline.synthesis_lookahead`,
//! `scheduler.max_batch_wait_ms`, `scheduler.sort_by_type` (work is not regrouped by type,
//! with or without a mix), and every key this table does not list. `pipeline.in_flight` (proofs admitted, Curio's `MaxPending`
//! backpressure, not a daemon key) stays the model's.

use crate::config::{Config, ConfigError};
use crate::memory::{Budget, ByteSize};

/// What an import did: the model keys it set (`key = value  (from cuzk key)`) and the
/// keys it could not model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Import {
    pub applied: Vec<String>,
    pub not_modelled: Vec<String>,
    /// Keys mapped only in part (a sentence each).
    pub approximations: Vec<String>,
}

impl Import {
    /// The warning to print when some keys are not modelled (`None` when all are).
    pub fn warning(&self, path: &str) -> Option<String> {
        if self.not_modelled.is_empty() && self.approximations.is_empty() {
            return None;
        }
        let mut s = String::new();
        if !self.not_modelled.is_empty() {
            s.push_str(&format!("{path}: keys the simulator does not model (ignored): {}", self.not_modelled.join(", ")));
        }
        for a in &self.approximations {
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(&format!("{path}: {a}"));
        }
        Some(s)
    }
}

/// Keys the table above maps, per section.
const MAPPED: &[(&str, &[&str])] = &[
    ("memory", &["total_budget", "safety_margin", "eviction_min_idle"]),
    ("gpus", &["devices", "gpu_workers_per_device", "gpu_threads"]),
    ("synthesis", &["threads", "partition_workers"]),
    ("pipeline", &["synthesis_concurrency", "enabled"]),
    ("scheduler", &["max_batch_size"]),
];

/// The 1-based line of `key` in `[section]` of the text (or a dotted `section.key =` at the
/// top), for error messages.
fn line_of(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if let Some(h) = line.strip_prefix('[') {
            current = h.trim_end_matches(']').trim().to_string();
            continue;
        }
        let Some((k, _)) = line.split_once('=') else { continue };
        let k = k.trim().trim_matches('"');
        if (current == section && k == key) || (current.is_empty() && k == format!("{section}.{key}")) {
            return Some(i + 1);
        }
    }
    None
}

/// Apply a cuzk.toml's text to `cfg` (validate the result afterwards).
pub fn apply(cfg: &mut Config, text: &str, path: &str) -> Result<Import, ConfigError> {
    let root: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse { path: path.to_string(), message: e.to_string() })?;
    let bad = |section: &str, key: &str, what: &str, v: &toml::Value| {
        let at = line_of(text, section, key).map_or(String::new(), |l| format!("line {l}: "));
        ConfigError::Parse { path: path.to_string(), message: format!("{at}`{section}.{key}` must be {what} (got {v})") }
    };
    let mut imp = Import::default();
    // Unknown sections and keys first (they are listed, never applied).
    for (section, value) in &root {
        match (value, MAPPED.iter().find(|(s, _)| s == section)) {
            (toml::Value::Table(t), Some((_, keys))) => {
                for k in t.keys() {
                    if !keys.contains(&k.as_str()) {
                        imp.not_modelled.push(format!("{section}.{k}"));
                    }
                }
            }
            (toml::Value::Table(t), None) if !t.is_empty() => imp.not_modelled.extend(t.keys().map(|k| format!("{section}.{k}"))),
            _ => imp.not_modelled.push(section.clone()),
        }
    }
    let get = |section: &str, key: &str| root.get(section).and_then(|s| s.as_table()).and_then(|t| t.get(key));
    let uint = |section: &str, key: &str| -> Result<Option<u64>, ConfigError> {
        match get(section, key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(v) => Err(bad(section, key, "a non-negative integer", v)),
        }
    };
    let size = |section: &str, key: &str, auto: bool| -> Result<Option<Budget>, ConfigError> {
        let what = if auto { "\"auto\" or a size such as \"128GiB\"" } else { "a size such as \"5GiB\"" };
        match get(section, key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(Budget::Bytes(ByteSize(*i as u64)))),
            Some(v @ toml::Value::String(s)) => match s.parse::<Budget>() {
                Ok(Budget::Auto) if !auto => Err(bad(section, key, what, v)),
                Ok(b) => Ok(Some(b)),
                Err(_) => Err(bad(section, key, what, v)),
            },
            Some(v) => Err(bad(section, key, what, v)),
        }
    };
    let set = |imp: &mut Import, key: &str, value: String, from: &str| {
        imp.applied.push(format!("{key} = {value}  ({from})"));
    };

    // memory
    let budget = size("memory", "total_budget", true)?;
    cfg.memory.total_budget = Some(budget.unwrap_or(Budget::Auto));
    let shown = budget.unwrap_or(Budget::Auto).to_string();
    set(&mut imp, "memory.total_budget", shown, if budget.is_some() { "memory.total_budget" } else { "cuzk default \"auto\"" });
    if let Some(Budget::Bytes(m)) = size("memory", "safety_margin", false)? {
        cfg.memory.safety_margin = Some(m);
        set(&mut imp, "memory.safety_margin", m.to_string(), "memory.safety_margin");
    } else {
        cfg.memory.safety_margin = None;
        set(&mut imp, "memory.safety_margin", "5GiB".into(), "cuzk default");
    }

    match get("memory", "eviction_min_idle") {
        None => {
            cfg.memory.eviction_min_idle = None;
            set(&mut imp, "memory.eviction_min_idle", format!("{}", crate::config::DEFAULT_EVICTION_MIN_IDLE_S), "cuzk default \"5m\"");
        }
        Some(v) => {
            let secs = match v {
                toml::Value::String(s) => crate::config::parse_duration_s(s).ok(),
                toml::Value::Integer(i) if *i >= 0 => Some(*i as f64),
                _ => None,
            };
            let Some(secs) = secs else { return Err(bad("memory", "eviction_min_idle", "a duration such as \"5m\"", v)) };
            cfg.memory.eviction_min_idle = Some(crate::config::Seconds(secs));
            set(&mut imp, "memory.eviction_min_idle", format!("{secs}"), "memory.eviction_min_idle");
            if cfg.mix.is_empty() {
                imp.approximations.push(format!(
                    "memory.eviction_min_idle = {v} is mapped but has no effect: the model has one proof type whose SRS and PCE are resident from the start (give [[mix]] to load and evict them on demand)"
                ));
            }
        }
    }

    // gpus
    match get("gpus", "devices") {
        None => {}
        Some(toml::Value::Array(a)) if a.iter().all(|x| x.as_integer().is_some_and(|i| i >= 0)) => {
            if !a.is_empty() {
                let n = a.len() as u32;
                if n > cfg.machine.gpus {
                    return Err(bad("gpus", "devices", &format!("at most the machine's {} GPUs (machine.gpus)", cfg.machine.gpus), get("gpus", "devices").unwrap()));
                }
                cfg.machine.gpus = n;
                set(&mut imp, "machine.gpus", n.to_string(), "gpus.devices");
            }
        }
        Some(v) => return Err(bad("gpus", "devices", "a list of GPU ordinals", v)),
    }
    let gw = uint("gpus", "gpu_workers_per_device")?;
    cfg.pipeline.gw = gw.unwrap_or(2).min(u32::MAX as u64) as u32;
    set(&mut imp, "pipeline.gw", cfg.pipeline.gw.to_string(), if gw.is_some() { "gpus.gpu_workers_per_device" } else { "cuzk default 2" });
    if let Some(t) = uint("gpus", "gpu_threads")? {
        let cores = if t == 0 { cfg.machine.cpu_cores } else { (t as f64).min(cfg.machine.cpu_cores) };
        cfg.cpu.prep_cores = cores;
        cfg.cpu.finalize_cores = cores;
        set(&mut imp, "cpu.prep_cores, cpu.finalize_cores", cores.to_string(), "gpus.gpu_threads");
    }

    // synthesis
    if let Some(t) = uint("synthesis", "threads")? {
        if t > 0 && (t as f64) < cfg.machine.cpu_cores {
            let capped = cfg.cpu.synth_cores.min(t as f64);
            cfg.cpu.synth_cores = capped;
            set(&mut imp, "cpu.synth_cores", capped.to_string(), "synthesis.threads (a cap)");
            imp.approximations.push(format!(
                "synthesis.threads = {t}: the model caps each synthesis at {t} cores but has no cap on all syntheses together (a {t}-thread pool shared by every synthesis)"
            ));
        }
    }
    let pw = uint("synthesis", "partition_workers")?;

    // pipeline
    match get("pipeline", "enabled") {
        None | Some(toml::Value::Boolean(true)) => {}
        Some(toml::Value::Boolean(false)) => imp.not_modelled.push("pipeline.enabled = false (synthesis not overlapped with proving)".into()),
        Some(v) => return Err(bad("pipeline", "enabled", "true or false", v)),
    }
    let sc = uint("pipeline", "synthesis_concurrency")?;
    let j = sc.unwrap_or(1).min(crate::config::limits::PROOFS as u64) as u32;
    if j == 0 {
        return Err(bad("pipeline", "synthesis_concurrency", "at least 1", get("pipeline", "synthesis_concurrency").unwrap()));
    }
    cfg.pipeline.synthesis_concurrency = Some(j);
    set(&mut imp, "pipeline.synthesis_concurrency", j.to_string(), if sc.is_some() { "pipeline.synthesis_concurrency" } else { "cuzk default 1" });
    match pw {
        Some(pw) => {
            cfg.pipeline.pw = pw.min(u32::MAX as u64) as u32;
            set(&mut imp, "pipeline.pw", cfg.pipeline.pw.to_string(), "synthesis.partition_workers (deprecated in cuzk)");
        }
        None => {
            // Partition concurrency follows from the budget: every partition of the
            // admitted proofs may synthesise when its reservation fits.
            let all = (j as u64 * cfg.max_partitions() as u64).min(crate::config::limits::PW as u64) as u32;
            cfg.pipeline.pw = all;
            set(&mut imp, "pipeline.pw", all.to_string(), "the budget decides (synthesis_concurrency × partitions, the most of a mix's types)");
        }
    }

    // scheduler
    if let Some(b) = uint("scheduler", "max_batch_size")? {
        if b > 1 {
            imp.not_modelled.push(format!("scheduler.max_batch_size = {b} (batching)"));
        }
    }
    Ok(imp)
}

/// Read and apply a cuzk.toml file.
pub fn apply_file(cfg: &mut Config, path: &std::path::Path) -> Result<Import, ConfigError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Read { path: name.clone(), err })?;
    apply(cfg, &text, &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lines_in_sections_and_dotted_keys() {
        let t = "# c\n[memory]\ntotal_budget = 1\n\n[gpus] # x\ngpu_threads = \"x\"\n";
        assert_eq!(line_of(t, "memory", "total_budget"), Some(3));
        assert_eq!(line_of(t, "gpus", "gpu_threads"), Some(6));
        assert_eq!(line_of("gpus.gpu_threads = 3\n", "gpus", "gpu_threads"), Some(1));
        assert_eq!(line_of(t, "gpus", "nope"), None);
    }
}
