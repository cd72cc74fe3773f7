//! Pre-registered campaigns: predictions written down, hashed and timestamped before the
//! runs they predict (`proofscope campaign predict` on the GPU machine, between the
//! calibration runs and the predicted ones), then checked and scored back home
//! (`proofscope campaign score --predictions`).
//!
//! - The grid ([`parse_grid`]): one configuration a line, `name pw gw lock split finalizers
//!   [knob=value …]`, the knobs being what the engine is told beyond the pipeline
//!   ([`KNOBS`]: the circuit, `synthesis_threads`, `prep_threads`, a RAM budget, a VRAM
//!   budget). The script
//!   (`scripts/campaign-prereg.sh`) turns each knob into `prove` flags; [`apply`] turns it
//!   into changes of the calibrated model, every change written down in
//!   `predictions.json`, so the scoring can tell what the model was told.
//! - A prediction ([`predict`]): the calibrated model with those changes, simulated once with
//!   its timeline recorded (the point prediction) and `replications` times with other seeds
//!   (the 80 % interval, [`crate::interval`]); the simulated timeline goes through the
//!   analyzer's `summarize`, as a measured one does, so every registered figure (steady and
//!   total s/proof, latency, GPU utilisation, peak RSS, the binding resource in the
//!   analyzer's words) is the number the measured run's `summary.json` will be compared with.
//! - The registration ([`Predictions`], `predictions.json`) carries a UTC timestamp and the
//!   sha256 of every model file; `predictions.sha256` holds the file's own sha256 in
//!   `sha256sum` format. [`check`] verifies the hash and that every run of a predicted
//!   configuration started after the timestamp — by its `.start` file and by its timeline,
//!   which must agree — and fails loudly otherwise.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use timeline::analysis::{summarize, AnalyzeOptions, Summary};

use crate::interval::Band;
use crate::parity::METRICS;
use crate::{simulate, Config, Options, SimResult};

/// `predictions.json`'s `format`.
pub const FORMAT: &str = "proofscope-predictions/1";
/// The file names a campaign folder holds.
pub const PREDICTIONS_FILE: &str = "predictions.json";
pub const SHA256_FILE: &str = "predictions.sha256";

/// The knobs a grid line may carry after the six pipeline columns (`key=value`):
/// - `circuit`: `porep-like` (default) or `mix16` — which calibrated model predicts it;
/// - `threads`: the engine's `synthesis_threads` (a pool of N threads per synthesis worker);
/// - `prep_threads`: the engine's `prep_threads` (the GPU workers' CPU work on a pool of N
///   threads), the model's `pipeline.prep_threads` (a what-if of the preparation's pool);
/// - `ram_gib` + `ram_parts`: a host-RAM budget (`--ram-budget`, the parameters kept on the
///   host) of the engine's resident items plus room for `ram_parts` syntheses (and half of one);
/// - `vram_gib` + `vram_call_gib` + `params_gib`: a VRAM budget (`--vram-budget`), the
///   least device memory of one call under it (what the engine requires less its 1 GiB to
///   spare) and the parameters' size.
pub const KNOBS: &[&str] = &["circuit", "threads", "prep_threads", "ram_gib", "ram_parts", "vram_gib", "vram_call_gib", "params_gib"];

/// The knobs [`pipeline_sets`] tells the model, or that only pick its model (`circuit`): a
/// grid line with no other knob is told to the model by its `--set` pairs alone (`campaign
/// sets`); the others need [`apply`].
pub const SETS_KNOBS: &[&str] = &["circuit", "prep_threads"];

/// One configuration of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct GridLine {
    pub name: String,
    pub pw: u32,
    pub gw: u32,
    pub lock: String,
    pub split: bool,
    pub finalizers: u32,
    pub knobs: Vec<(String, String)>,
    /// The line as written (whitespace collapsed).
    pub line: String,
}

impl GridLine {
    pub fn knob(&self, key: &str) -> Option<&str> {
        self.knobs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The circuit family (`circuit=` knob, default `porep-like`).
    pub fn circuit(&self) -> &str {
        self.knob("circuit").unwrap_or("porep-like")
    }

    fn num(&self, key: &str) -> Result<Option<f64>, String> {
        self.knob(key)
            .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| format!("{}: `{key}={v}` is not a positive number", self.name)))
            .transpose()
    }
}

/// Parse a grid (`grid.txt`): blank lines and `#` comments skipped; a line of five columns
/// has one finalizer (the two-half campaign's grid); errors name the line.
pub fn parse_grid(text: &str) -> Result<Vec<GridLine>, String> {
    let mut out: Vec<GridLine> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let at = |why: String| format!("grid line {}: {why} (`{l}`)", i + 1);
        let mut f: Vec<&str> = l.split_whitespace().collect();
        let written = f.join(" ");
        // The finalizers column may be left out (default 1; `scripts/campaign.sh`'s grid).
        if f.len() == 5 {
            f.push("1");
        }
        if f.len() < 6 {
            return Err(at("expected `name pw gw lock split [finalizers] [knob=value …]`".into()));
        }
        let int = |s: &str, what: &str| s.parse::<u32>().ok().filter(|v| *v > 0).ok_or_else(|| at(format!("{what} `{s}` is not a whole number ≥ 1")));
        let split = match f[4] {
            "true" => true,
            "false" => false,
            s => return Err(at(format!("split `{s}` is not true or false"))),
        };
        if !matches!(f[3], "whole" | "kernels" | "two_lock") {
            return Err(at(format!("lock `{}` is not whole, kernels or two_lock", f[3])));
        }
        let mut knobs = Vec::new();
        for kv in &f[6..] {
            let (k, v) = kv.split_once('=').ok_or_else(|| at(format!("`{kv}` is not key=value")))?;
            if !KNOBS.contains(&k) {
                return Err(at(format!("unknown knob `{k}` (known: {})", KNOBS.join(", "))));
            }
            knobs.push((k.to_string(), v.to_string()));
        }
        if out.iter().any(|g| g.name == f[0]) {
            return Err(at(format!("configuration `{}` twice", f[0])));
        }
        if f[0].contains('@') {
            return Err(at("a configuration name may not contain `@` (it marks repeats)".into()));
        }
        out.push(GridLine {
            name: f[0].to_string(),
            pw: int(f[1], "pw")?,
            gw: int(f[2], "gw")?,
            lock: f[3].to_string(),
            split,
            finalizers: int(f[5], "finalizers")?,
            knobs,
            line: written,
        });
    }
    Ok(out)
}

/// What every configuration of a campaign shares.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Workload {
    /// Constraints per partition, as the script was given them (`2^20`).
    pub size: String,
    pub proofs: u32,
    pub partitions: u32,
    /// `cuda` or `cpu`.
    pub backend: String,
}

/// Set `key=value` on the model and write it down.
fn set(cfg: &mut Config, changes: &mut Vec<String>, key: &str, value: &str) -> Result<(), String> {
    cfg.set(key, value).map_err(|e| e.to_string())?;
    changes.push(format!("{key}={value}"));
    Ok(())
}

/// The pipeline part of [`apply`], as `--set` pairs of the model: `pw`, `gw`, `lock`, `split`,
/// `finalizers`, `c` (proofs) and `j` = `c` (the engine admits every submitted proof),
/// `partitions`, the engine's defaults `queue=1` and `permit_until_send=true`, the
/// `prep_threads` knob as the model's `prep_threads`, and with `two_lock`
/// `device_global_sync=false` (this engine's allocation path does not synchronise the device).
/// The
/// one mapping of a grid line to the model's pipeline: `campaign predict` applies it, and
/// `campaign sets` prints it for `scripts/campaign-analyze.sh`'s `simulate --set` calls.
pub fn pipeline_sets(g: &GridLine, w: &Workload) -> Vec<(&'static str, String)> {
    let mut s = vec![
        ("pw", g.pw.to_string()),
        ("gw", g.gw.to_string()),
        ("lock", g.lock.clone()),
        ("split", g.split.to_string()),
        ("finalizers", g.finalizers.to_string()),
        ("c", w.proofs.to_string()),
        // The engine takes every submitted proof at once (`prove` submits them all; its
        // partitions queue for the synthesis workers): no cap on proofs in flight.
        ("j", w.proofs.to_string()),
        ("partitions", w.partitions.to_string()),
        ("queue", "1".to_string()),
        ("permit_until_send", "true".to_string()),
    ];
    // (No `prestage`: the calibrated model's call order stands — for a CUDA prover run, the
    // engine's own, `upload_after_prep`. Setting `prestage` for `kernels` here, as campaigns
    // before 2026-12-03 did, ran the upload beside the preparation and without its per-call
    // VRAM: every contended configuration of the four 2^22 campaigns of that day predicted
    // 5–10 % fast.)
    if let Some(n) = g.knob("prep_threads") {
        s.push(("prep_threads", n.to_string()));
    }
    // This engine's two-lock path takes its allocation lock and calls no device-global
    // synchronisation (prover/src/engine/locks.rs); the model's default for `two_lock` is the
    // reference daemon's, whose allocation path synchronises the whole device. Both 2026-12-02
    // campaigns measured two_lock as fast as kernels on mix16, where the model with the syncs
    // said +65 % to +84 %.
    if g.lock == "two_lock" {
        s.push(("device_global_sync", "false".to_string()));
    }
    s
}

/// The rate at which the engine's tight calls stream the parameters to the kernels, GB/s, at
/// 2^20 constraints per partition: not fitted by a campaign (its calibration configurations
/// keep the parameters resident) but measured before, on the H200 (campaign 2026-12-02,
/// `vram-pw8-tight` at 2^20, both pre-registered campaigns: 183 ms of device time per
/// partition against 53 ms predicted with the parameters crossing at the link's 25 GB/s —
/// 0.34 GiB in ~145 ms). The engine streams each query in chunks from pageable memory, one MSM
/// after another, without lanes.
pub const TIGHT_STREAM_GBS: f64 = 2.5;

/// The same at 2^22: the six pre-registered campaigns 9–14 (runs 88–94) predicted
/// `vram-pw8-tight` +13 to +23 % slow at 2.5 GB/s, every one of them; recalibrated post hoc
/// from their calibration runs, 3.0 GB/s gives −2.1 to +7.4 % (3.2: −6.8 to +2.4; 2.8: +3.2 to
/// +13.1). Larger calls stream in larger chunks.
pub const TIGHT_STREAM_GBS_2E22: f64 = 3.0;

/// The tight calls' stream rate at `size` constraints per partition (as the campaign gives
/// it, [`timeline::bytes::parse_count`]: `2^N`, `1<<N` or a number): [`TIGHT_STREAM_GBS`] at
/// 2^20 and below, [`TIGHT_STREAM_GBS_2E22`] at 2^22 and above (measured at those two sizes
/// only), linear in N between; a size that does not parse, or 0, gets the 2^20 rate.
pub fn tight_stream_gbs(size: &str) -> f64 {
    let log2 = timeline::bytes::parse_count(size).ok().filter(|&v| v > 0).map(|v| (v as f64).log2());
    match log2 {
        Some(n) => {
            let t = ((n - 20.0) / 2.0).clamp(0.0, 1.0);
            TIGHT_STREAM_GBS + t * (TIGHT_STREAM_GBS_2E22 - TIGHT_STREAM_GBS)
        }
        None => TIGHT_STREAM_GBS,
    }
}

/// Each synthesis on a pool of `n` threads of its own (the engine's `synthesis_threads`).
/// The calibrated demand d of a synthesis (`cpu.synth_cores`) was measured on the shared pool
/// of the machine's T cores; Amdahl's law through that point gives its serial fraction
/// s = (T/d − 1)/(T − 1) (0 when d ≥ T), so on n threads it keeps a(n) = n/(1 + s(n − 1))
/// cores busy and its work is × d/a(n) (the same core-seconds, on fewer cores). The pools are
/// the syntheses' own: no shared pool's limit (`cpu.synth_pool_gain` unset). At or above T
/// threads, only that. Returns the change in words.
pub fn synthesis_threads(cfg: &mut Config, n: f64) -> String {
    let (d, t) = (cfg.cpu.synth_cores, cfg.machine.cpu_cores);
    let mut shared = cfg.cpu.synth_pool_gain.take().map(|g| format!(", cpu.synth_pool_gain {g} -> none (pools of their own)")).unwrap_or_default();
    if cfg.cpu.synth_pool_exponent != 1.0 {
        shared.push_str(&format!(", cpu.synth_pool_exponent {} -> 1", cfg.cpu.synth_pool_exponent));
        cfg.cpu.synth_pool_exponent = 1.0;
    }
    if n < t && n > 0.0 {
        let s = if d >= t || t <= 1.0 { 0.0 } else { ((t / d - 1.0) / (t - 1.0)).clamp(0.0, 1.0) };
        let a = n / (1.0 + s * (n - 1.0));
        let x = d / a;
        cfg.cpu.synth_cores = (a * 1e4).round() / 1e4;
        cfg.costs.synth = cfg.costs.synth.scaled(x);
        format!("synthesis_threads={n}: serial fraction {s:.4} (Amdahl through {d} busy cores on {t} threads), cpu.synth_cores {d} -> {a:.4}, costs.synth x {x:.4}{shared}")
    } else {
        format!("synthesis_threads={n}: at or above the machine's {t} cores: demand and work unchanged{shared}")
    }
}

/// Memory the engine keeps that the calibrated model does not (`gib`): resident in the model
/// (`memory.baseline_gib`) and counted one for one in its RSS (`memory.rss_offset_gib`: the RSS
/// map's slope is for reservations a run does not all touch; a kept copy is touched).
fn keep_resident(cfg: &mut Config, gib: f64) {
    let slope = cfg.memory.rss_per_reserved.unwrap_or(1.0);
    cfg.memory.baseline_gib += gib;
    cfg.memory.rss_offset_gib += gib * (1.0 - slope);
}

/// The calibrated model told what the engine is told for this configuration; returns every
/// change, in words where it is not a plain `--set`. The mapping:
/// - pipeline: `pw`, `gw`, `lock`, `split`, `finalizers`, `c` (proofs, all in flight: `j`),
///   `partitions`; the
///   engine's defaults the runs keep, which a calibration cannot see in a timeline: `queue=1`
///   (`queue_capacity`) and `permit_until_send=true` (a synthesis worker stays blocked until
///   the queue takes its partition, holding its memory) ([`pipeline_sets`], which
///   scripts/campaign-analyze.sh uses too); the model's `prestage` as calibrated;
/// - `threads=N`: each synthesis on a pool of its own ([`synthesis_threads`]: Amdahl's law
///   through the calibrated demand, no shared pool's limit);
/// - `ram_parts=K`: `total_budget` = the model's resident items + (K + ½) × its partition
///   reservation (it admits K syntheses, as the engine's budget does), `early_release` (the
///   engine gives a/b/c back at upload); where the engine's resident items under its budget
///   (`ram_gib` − (K + ½) partitions) are more than the model's, the model keeps the
///   difference resident too (`memory.baseline_gib`), counted one for one in its RSS
///   (`memory.rss_offset_gib`);
/// - `vram_gib=B`: `vram_budget` = B, the parameters streamed (`params_on_device = stream`,
///   `params_vram_gib` = `params_gib`: the engine keeps a query resident only with 1 GiB to
///   spare after it, which such a budget never has), `call_vram_gib` = `vram_call_gib`,
///   `vram_baseline_gib` = 0, `vram_policy = wait`, `params_stream_gbs` = [`tight_stream_gbs`]
///   at the workload's size; and `params_gib` resident on the host, counted one for one in the
///   RSS (the engine streams the queries from their host copy, which the calibration runs drop
///   after the upload: the model's peak RSS was 23–31 % low there in every campaign).
///
/// The VRAM budget is told first, so that a RAM budget beside it counts the host copy among
/// the model's resident items (not twice).
pub fn apply(cfg: &mut Config, g: &GridLine, w: &Workload) -> Result<Vec<String>, String> {
    let mut ch = Vec::new();
    for (k, v) in pipeline_sets(g, w) {
        set(cfg, &mut ch, k, &v)?;
    }
    if let Some(n) = g.num("threads")? {
        ch.push(synthesis_threads(cfg, n));
    }
    match (g.num("vram_gib")?, g.num("vram_call_gib")?, g.num("params_gib")?) {
        (Some(b), Some(c), Some(p)) => {
            set(cfg, &mut ch, "vram_budget", &b.to_string())?;
            set(cfg, &mut ch, "memory.params_on_device", "stream")?;
            set(cfg, &mut ch, "memory.params_vram_gib", &p.to_string())?;
            set(cfg, &mut ch, "memory.call_vram_gib", &c.to_string())?;
            set(cfg, &mut ch, "memory.vram_baseline_gib", "0")?;
            set(cfg, &mut ch, "memory.vram_policy", "wait")?;
            set(cfg, &mut ch, "memory.params_stream_gbs", &tight_stream_gbs(&w.size).to_string())?;
            // The engine streams the queries from their host copy, which it keeps (the
            // calibration runs, whose parameters stay on the device, drop it after the upload):
            // resident in the model too, touched, so one for one in its RSS.
            keep_resident(cfg, p);
            ch.push(format!("+ {p:.4} GiB the engine keeps resident to stream the queries from (their host copy): memory.baseline_gib, and memory.rss_offset_gib so that it counts one for one in the RSS"));
        }
        (None, None, None) => {}
        _ => return Err(format!("{}: `vram_gib`, `vram_call_gib` and `params_gib` go together", g.name)),
    }
    match (g.num("ram_gib")?, g.num("ram_parts")?) {
        (Some(b), Some(k)) => {
            let (res, part) = (cfg.resident_gib(), cfg.partition_gib());
            // The engine's resident items under its budget, b − (k + ½) × a partition (the
            // campaign sized b so), are more than the model's, calibrated on runs without a
            // budget: there the engine drops the parameters' host copy after the upload, and
            // under one it keeps it (and reserves the uploads' staging). The difference is
            // resident in the model too, and counts in its RSS one for one (the RSS map's
            // slope is for reservations a run does not all touch; a kept copy is touched).
            let extra = (b - (k + 0.5) * part - res).max(0.0);
            let kept = if extra > 0.0 {
                keep_resident(cfg, extra);
                format!(" (+ {extra:.4} GiB the engine keeps resident under a budget: memory.baseline_gib, and memory.rss_offset_gib so that it counts one for one in the RSS)")
            } else {
                String::new()
            };
            let budget = res + extra + (k + 0.5) * part;
            let bytes = (budget * (1u64 << 30) as f64).round() as u64;
            set(cfg, &mut ch, "memory.early_release", "true")?;
            // The host copy kept (`--params-host keep`): the parameters go up in the first call.
            if cfg.startup.params_upload_s > 0.0 {
                set(cfg, &mut ch, "startup.params_upload", "first_call")?;
            }
            cfg.set("total_budget", &bytes.to_string()).map_err(|e| e.to_string())?;
            ch.push(format!(
                "RAM budget (engine: {b} GiB = its resident items + room for {k} syntheses): total_budget = {budget:.4} GiB = resident {:.4}{kept} + ({k} + 0.5) x partition {part:.4}",
                res + extra
            ));
        }
        (None, None) => {}
        _ => return Err(format!("{}: `ram_gib` and `ram_parts` go together", g.name)),
    }
    cfg.validate().map_err(|e| format!("{}: the model with these changes: {e}", g.name))?;
    Ok(ch)
}

/// A registered figure: the point prediction and, with replications, its spread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figure {
    /// The point prediction: the analyzer's figure on the simulated timeline.
    pub point: f64,
    /// p10, p50, p90 of the replications and the nominal 80 % interval [lo, hi] around the
    /// point ([`Band::around`]: the replications' relative widths, the run spread added);
    /// absent without replications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p10: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
}

impl Figure {
    fn new(point: f64, band: Option<&Band>) -> Figure {
        let around = band.map(|b| b.around(point));
        Figure { point, p10: band.map(|b| b.p10), p50: band.map(|b| b.p50), p90: band.map(|b| b.p90), lo: around.map(|a| a.0), hi: around.map(|a| a.1) }
    }

    /// Every figure × `f` (the calibration bias carried over, [`crate::discrepancy`]).
    fn scaled(self, f: f64) -> Figure {
        let m = |x: Option<f64>| x.map(|v| v * f);
        Figure { point: self.point * f, p10: m(self.p10), p50: m(self.p50), p90: m(self.p90), lo: m(self.lo), hi: m(self.hi) }
    }

    /// The interval from the model's track record instead: point × e^q10 … point × e^q90.
    fn with_track_record(self, r: &crate::track_record::Residuals) -> Figure {
        let (lo, hi) = r.interval(self.point);
        Figure { lo: Some(lo), hi: Some(hi), ..self }
    }
}

/// One configuration's registered prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RegisteredConfig {
    pub config: String,
    /// A calibration configuration (measured before the registration; predicted in-sample).
    pub calibration: bool,
    /// The grid line it was predicted from.
    pub grid_line: String,
    pub circuit: String,
    /// The model file (`models[]`) it was predicted with.
    pub model: String,
    /// Every change made to that model for this configuration ([`apply`]).
    pub model_changes: Vec<String>,
    /// Steady s/proof from partition completions (the campaign's headline steady figure).
    pub steady_s_per_proof: Figure,
    /// Steady s/proof from proof completions.
    pub steady_proof_ends_s_per_proof: Figure,
    /// Makespan ÷ proofs.
    pub total_s_per_proof: Figure,
    /// The analyzer's binding resource on the simulated timeline (`verdict.binding`: the
    /// words the measured run's verdict uses).
    pub binding: String,
    /// The simulator's own: its practical floor's binding resource and its verdict.
    pub model_binding: String,
    pub model_verdict: String,
    /// Peak RSS, GiB (the simulated timeline's `rss_bytes`, else the model's peak RAM).
    pub peak_rss_gib: Option<f64>,
    /// Every parity metric of the simulated timeline's summary ([`METRICS`] keys): what the
    /// measured runs' summaries are compared with.
    pub metrics: BTreeMap<String, f64>,
    /// `simulate --json` of the point prediction, with its interval.
    pub result: SimResult,
    /// The factor its s/proof figures (steady, steady by proof ends, total: point, deciles,
    /// interval, and the same three in `metrics`) were multiplied by: the model's calibration bias carried over
    /// ([`crate::discrepancy`]); `result` keeps the model's own figures. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discrepancy: Option<f64>,
}

/// A model file and its sha256.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelRef {
    pub circuit: String,
    /// Path relative to the folder of predictions.json when inside it, else absolute.
    pub path: String,
    pub sha256: String,
}

/// `predictions.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Predictions {
    /// [`FORMAT`].
    pub format: String,
    /// When the predictions were written, RFC 3339 UTC with nanoseconds; every run of a
    /// predicted configuration must start after it.
    pub created_utc: String,
    pub tool_version: String,
    pub workload: Workload,
    /// The calibration configurations (their runs made before `created_utc`).
    pub calibrated_on: Vec<String>,
    pub models: Vec<ModelRef>,
    /// Replications per prediction (seeds seed, seed + 1, …).
    pub replications: u32,
    /// The model's errors in earlier scored campaigns, when given (`--track-record`): every
    /// interval (`lo`, `hi`) of steady and total s/proof is then point × e^q10 … point ×
    /// e^q90 of those errors ([`crate::track_record`]); the replications' deciles stay in
    /// `p10`/`p50`/`p90`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track_record: Option<crate::track_record::TrackRecord>,
    pub configs: Vec<RegisteredConfig>,
}

impl Predictions {
    pub fn config(&self, name: &str) -> Option<&RegisteredConfig> {
        self.configs.iter().find(|c| c.config == name)
    }
}

/// Simulate `cfg` once with its timeline (the point prediction) and `replications` times
/// (the interval); the simulated timeline's analyzer summary with it, and the timeline.
pub fn predict(cfg: &Config, replications: u32) -> (SimResult, Summary, Option<timeline::Run>) {
    let out = simulate(cfg, Options { record: true });
    let mut result = out.result;
    result.interval = crate::interval::replicate(cfg, replications);
    let summary = out.run.as_ref().map(|r| summarize(r, &AnalyzeOptions::default())).unwrap_or_default();
    (result, summary, out.run)
}

/// The parity metrics of a summary, by key ([`METRICS`]).
pub fn metrics_of(s: &Summary) -> BTreeMap<String, f64> {
    METRICS.iter().filter_map(|(k, _, _, get)| get(s).filter(|v| v.is_finite()).map(|v| (k.to_string(), v))).collect()
}

impl RegisteredConfig {
    /// Its s/proof figures × `f` ([`crate::discrepancy::factor`]); call before
    /// [`RegisteredConfig::with_track_record`], whose intervals are around the point.
    pub fn with_discrepancy(mut self, f: f64) -> RegisteredConfig {
        debug_assert!(self.discrepancy.is_none(), "{}: the calibration bias carried over twice", self.config);
        self.steady_s_per_proof = self.steady_s_per_proof.scaled(f);
        self.steady_proof_ends_s_per_proof = self.steady_proof_ends_s_per_proof.scaled(f);
        self.total_s_per_proof = self.total_s_per_proof.scaled(f);
        // The scored figures are the metrics' (campaign score compares them with the runs').
        use crate::campaign::key;
        for k in [key::PARTITION_RATE, key::STEADY, key::TOTAL] {
            if let Some(v) = self.metrics.get_mut(k) {
                *v *= f;
            }
        }
        self.discrepancy = Some(f);
        self
    }

    /// Its steady and total s/proof intervals from the model's track record.
    pub fn with_track_record(mut self, t: &crate::track_record::TrackRecord) -> RegisteredConfig {
        self.steady_s_per_proof = self.steady_s_per_proof.with_track_record(&t.steady);
        self.total_s_per_proof = self.total_s_per_proof.with_track_record(&t.total);
        self
    }

    /// The record of one prediction ([`predict`]'s result and summary).
    pub fn new(g: &GridLine, calibration: bool, model: &str, model_changes: Vec<String>, result: SimResult, sim: &Summary) -> RegisteredConfig {
        use crate::campaign::key;
        let mut metrics = metrics_of(sim);
        let peak = metrics.get("memory.peak_rss_gib").copied().or((result.peak_ram_gib > 0.0).then_some(result.peak_ram_gib));
        if let Some(p) = peak {
            metrics.entry("memory.peak_rss_gib".into()).or_insert(p);
        }
        let iv = result.interval.as_ref();
        let get = |k: &str, fallback: f64| metrics.get(k).copied().unwrap_or(fallback);
        RegisteredConfig {
            config: g.name.clone(),
            calibration,
            grid_line: g.line.clone(),
            circuit: g.circuit().to_string(),
            model: model.to_string(),
            model_changes,
            steady_s_per_proof: Figure::new(get(key::PARTITION_RATE, result.steady_partitions_s_per_proof), iv.map(|i| &i.steady_partitions_s_per_proof)),
            steady_proof_ends_s_per_proof: Figure::new(get(key::STEADY, result.steady_state_s_per_proof), iv.map(|i| &i.steady_state_s_per_proof)),
            total_s_per_proof: Figure::new(get(key::TOTAL, result.total_s_per_proof), iv.map(|i| &i.total_s_per_proof)),
            binding: sim.verdict.binding.clone(),
            model_binding: result.floors.practical_binding.clone(),
            model_verdict: result.floors.verdict.clone(),
            peak_rss_gib: peak,
            metrics,
            result,
            discrepancy: None,
        }
    }
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The `sha256sum` line of a file (`<hex>  <name>\n`): what `predictions.sha256` holds, so
/// `sha256sum -c predictions.sha256` checks it too.
pub fn sha256_line(bytes: &[u8], name: &str) -> String {
    format!("{}  {name}\n", sha256_hex(bytes))
}

/// Now, ns since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// One run of the campaign and when it started (the script's `runs/<run>.start`, and what
/// its timeline says).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStart {
    /// `config` or `config@K`.
    pub run: String,
    /// RFC 3339; `None` when the run left no start time.
    pub started_utc: Option<String>,
    /// The run's timeline's own start; `None` when the run left no timeline.
    pub timeline: Option<TimelineStart>,
}

/// What a run's timeline says of its start (its meta).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineStart {
    /// The meta's `started_at` (RFC 3339): the wall clock at the timeline's epoch, which the
    /// prover reads when its event sink starts — after the process started, its devices were
    /// opened and the parameters read. `None` when the timeline does not record it.
    pub started_at: Option<String>,
    /// The meta's `params_load_ms`, in seconds (0 when absent): how long the prover read the
    /// parameters before that epoch.
    pub params_load_s: f64,
}

/// How far a run's timeline may start from its `runs/<run>.start`, in seconds: not more than
/// this before it (one machine's clock, read twice), nor more than this plus the parameters'
/// load after it (the process start and the devices' opening come between the two).
pub const START_SLACK_S: f64 = 5.0;

/// What the check found, kept in `campaign.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Registration {
    /// sha256 of predictions.json, equal to predictions.sha256's.
    pub predictions_sha256: String,
    pub created_utc: String,
    pub models: Vec<ModelRef>,
    /// Runs of predicted configurations checked (every one started after `created_utc`).
    pub runs_checked: usize,
    /// The earliest of them and its start.
    pub first_predicted_run: Option<String>,
    pub first_predicted_start_utc: Option<String>,
    /// Seconds from the registration to that start.
    pub lead_s: Option<f64>,
    /// The track record the intervals were made from (predictions.json's), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track_record: Option<crate::track_record::TrackRecord>,
}

/// Why a registration does not hold.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PreregError {
    #[error("predictions.sha256 does not hold a sha256 (`<64 hex digits>  predictions.json`): `{0}`")]
    HashFile(String),
    #[error("predictions.json does not match predictions.sha256: its sha256 is {actual}, the registered one {expected} — the file was changed after it was registered")]
    HashMismatch { expected: String, actual: String },
    #[error("predictions.json: {0}")]
    Parse(String),
    #[error("{what} `{value}` is not an RFC 3339 timestamp")]
    BadTimestamp { what: String, value: String },
    #[error("run {run} started at {started}, before (or when) the predictions were registered at {registered}: not a prediction")]
    RunBeforeRegistration { run: String, started: String, registered: String },
    #[error("run {run} of a predicted configuration has no start time (runs/{run}.start): cannot show it ran after the registration")]
    NoStart { run: String },
    #[error("run {run}: its timeline records no start time (meta `started_at`): runs/{run}.start cannot be tied to it (a prover older than this check?)")]
    NoTimelineStart { run: String },
    #[error("run {run}: its timeline says it started at {timeline}, before (or when) the predictions were registered at {registered} (runs/{run}.start says {started}): not a prediction")]
    TimelineBeforeRegistration { run: String, timeline: String, started: String, registered: String },
    #[error("run {run}: runs/{run}.start says it started at {started}, its timeline at {timeline} ({lag_s:+.1} s after it; allowed: -{slack_s:.0} s to +{allowed_s:.1} s, the parameters' load and {slack_s:.0} s of process start): the start file is not this run's")]
    StartMismatch { run: String, started: String, timeline: String, lag_s: f64, slack_s: f64, allowed_s: f64 },
}

/// Check a registration: `json` (predictions.json's bytes) against `sha_text`
/// (predictions.sha256), and every run of a predicted (non-calibration) configuration
/// against its timestamp: each must have started strictly after `created_utc`, by its
/// `.start` file and, when it left a timeline, by the timeline's own start, which must also
/// agree with the `.start` file ([`START_SLACK_S`]). Runs of other names (the probe,
/// calibration runs) are not checked.
pub fn check(json: &[u8], sha_text: &str, runs: &[RunStart]) -> Result<(Predictions, Registration), PreregError> {
    let expected = sha_text.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    if expected.len() != 64 || !expected.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(PreregError::HashFile(sha_text.trim().chars().take(100).collect()));
    }
    let actual = sha256_hex(json);
    if actual != expected {
        return Err(PreregError::HashMismatch { expected, actual });
    }
    let text = std::str::from_utf8(json).map_err(|e| PreregError::Parse(e.to_string()))?;
    let p: Predictions = crate::campaign::from_json_exact(text).map_err(PreregError::Parse)?;
    if p.format != FORMAT {
        return Err(PreregError::Parse(format!("format `{}`, expected `{FORMAT}`", p.format)));
    }
    let ts = |what: &str, v: &str| timeline::read::wrap::rfc3339_ns(v).ok_or_else(|| PreregError::BadTimestamp { what: what.into(), value: v.into() });
    let created = ts("predictions.json created_utc", &p.created_utc)?;
    let mut checked: Vec<(i64, &RunStart)> = Vec::new();
    for r in runs {
        let config = r.run.split_once('@').map_or(r.run.as_str(), |(c, _)| c);
        if p.config(config).is_none_or(|c| c.calibration) {
            continue;
        }
        let Some(s) = &r.started_utc else { return Err(PreregError::NoStart { run: r.run.clone() }) };
        let t = ts(&format!("the start of run {}", r.run), s)?;
        if t <= created {
            return Err(PreregError::RunBeforeRegistration { run: r.run.clone(), started: s.clone(), registered: p.created_utc.clone() });
        }
        if let Some(tl) = &r.timeline {
            let Some(at) = &tl.started_at else { return Err(PreregError::NoTimelineStart { run: r.run.clone() }) };
            let tt = ts(&format!("the timeline start of run {}", r.run), at)?;
            if tt <= created {
                return Err(PreregError::TimelineBeforeRegistration { run: r.run.clone(), timeline: at.clone(), started: s.clone(), registered: p.created_utc.clone() });
            }
            let lag_s = (tt - t) as f64 / 1e9;
            let allowed_s = START_SLACK_S + tl.params_load_s.max(0.0);
            if lag_s < -START_SLACK_S || lag_s > allowed_s {
                return Err(PreregError::StartMismatch { run: r.run.clone(), started: s.clone(), timeline: at.clone(), lag_s, slack_s: START_SLACK_S, allowed_s });
            }
        }
        checked.push((t, r));
    }
    let first = checked.iter().min_by_key(|(t, _)| *t);
    let reg = Registration {
        predictions_sha256: actual,
        created_utc: p.created_utc.clone(),
        models: p.models.clone(),
        runs_checked: checked.len(),
        first_predicted_run: first.map(|(_, r)| r.run.clone()),
        first_predicted_start_utc: first.and_then(|(_, r)| r.started_utc.clone()),
        lead_s: first.map(|(t, _)| (t - created) as f64 / 1e9),
        track_record: p.track_record.clone(),
    };
    Ok((p, reg))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: &str = "# a comment\n\ncal 4 2 kernels true 1\nthreads 8 2 kernels true 1 threads=2\nram 8 2 kernels true 1 ram_gib=1.5 ram_parts=2   # budget\nvram 8 2 kernels true 1 vram_gib=1.2 vram_call_gib=0.1 params_gib=0.34\nmix 8 1 whole false 1 circuit=mix16\n";

    fn workload() -> Workload {
        Workload { size: "2^20".into(), proofs: 10, partitions: 4, backend: "cuda".into() }
    }

    fn model() -> Config {
        let mut c = Config::from_toml_str(crate::calibrate::DEFAULT_BASE, "phase8").unwrap();
        c.cpu.synth_cores = 4.0;
        c.costs.synth = crate::costs::Dist::Fixed(1000.0);
        c
    }

    #[test]
    fn grid_lines_and_their_errors() {
        let g = parse_grid(GRID).unwrap();
        assert_eq!(g.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["cal", "threads", "ram", "vram", "mix"]);
        assert_eq!((g[0].pw, g[0].gw, g[0].lock.as_str(), g[0].split, g[0].finalizers), (4, 2, "kernels", true, 1));
        assert_eq!((g[0].circuit(), g[4].circuit()), ("porep-like", "mix16"));
        assert_eq!(g[2].line, "ram 8 2 kernels true 1 ram_gib=1.5 ram_parts=2");
        // Five columns (scripts/campaign.sh's grid): one finalizer, the line as written.
        let two_half = parse_grid("pw2-gw1-whole-nosplit 2 1 whole false\n").unwrap();
        assert_eq!((two_half[0].finalizers, two_half[0].line.as_str()), (1, "pw2-gw1-whole-nosplit 2 1 whole false"));
        for (bad, want) in [
            ("a 1 1 whole", "expected"),
            ("a 0 1 whole false 1", "pw `0`"),
            ("a 1 1 half false 1", "lock `half`"),
            ("a 1 1 whole maybe 1", "split `maybe`"),
            ("a 1 1 whole false 1 colour=red", "unknown knob `colour`"),
            ("a 1 1 whole false 1 threads", "not key=value"),
            ("a 1 1 whole false 1\na 2 1 whole false 1", "twice"),
            ("a@2 1 1 whole false 1", "`@`"),
        ] {
            let e = parse_grid(bad).unwrap_err();
            assert!(e.contains(want) && e.contains("grid line"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_knobs_change_the_model_as_documented() {
        let g = parse_grid(GRID).unwrap();
        let w = workload();
        // Pipeline: every proof in flight; the calibrated prestage kept (cuda, kernels lock).
        let mut c = model();
        let prestage = c.pipeline.prestage;
        let ch = apply(&mut c, &g[0], &w).unwrap();
        assert_eq!(ch, ["pw=4", "gw=2", "lock=kernels", "split=true", "finalizers=1", "c=10", "j=10", "partitions=4", "queue=1", "permit_until_send=true"]);
        assert_eq!((c.pipeline.pw, c.pipeline.proofs, c.pipeline.in_flight, c.pipeline.partitions, c.pipeline.prestage), (4, 10, 10, 4, prestage));
        assert_eq!((c.pipeline.queue_capacity, c.pipeline.permit_until_send), (Some(1), true));
        // The pipeline part is pipeline_sets (what `campaign sets` prints), each pair a `--set`.
        let sets: Vec<String> = pipeline_sets(&g[0], &w).into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(sets, ch);
        let mut by_sets = model();
        for (k, v) in pipeline_sets(&g[0], &w) {
            by_sets.set(k, &v).unwrap();
        }
        assert_eq!(by_sets, c);
        assert!(!pipeline_sets(&g[0], &w).iter().any(|(k, _)| *k == "prestage"));
        // threads=2 with a demand of 4 cores on 16: Amdahl's serial fraction s = (16/4 − 1)/15
        // = 0.2, so on 2 threads a(2) = 2/1.2 = 1.6667 cores and the work × 4/1.6667 = 2.4
        // (the same core-seconds); the shared pool's gain goes (pools of their own).
        let mut c = model();
        c.machine.cpu_cores = 16.0;
        c.cpu.synth_pool_gain = Some(0.15);
        let ch = apply(&mut c, &g[1], &w).unwrap();
        assert_eq!(c.cpu.synth_cores, 1.6667);
        assert!((c.costs.synth.mean_ms() - 2400.0).abs() < 1e-6, "{:?}", c.costs.synth);
        assert_eq!(c.cpu.synth_pool_gain, None);
        assert!(ch.last().unwrap().starts_with("synthesis_threads=2: serial fraction 0.2000 (Amdahl through 4 busy cores on 16 threads), cpu.synth_cores 4 -> 1.6667, costs.synth x 2.4000, cpu.synth_pool_gain 0.15 -> none"), "{ch:?}");
        // A demand of all 16 cores scales perfectly (s = 0): 2 threads, demand 2, work × 8.
        let mut c = model();
        c.machine.cpu_cores = 16.0;
        c.cpu.synth_cores = 16.0;
        apply(&mut c, &g[1], &w).unwrap();
        assert_eq!(c.cpu.synth_cores, 2.0);
        assert!((c.costs.synth.mean_ms() - 8000.0).abs() < 1e-6);
        // prep_threads=2: the model's own pool for the GPU workers' CPU work, a `--set` of the
        // pipeline (so `campaign sets` prints it too).
        let pt = parse_grid("p 4 2 kernels true 1 prep_threads=2").unwrap();
        let mut c = model();
        let ch = apply(&mut c, &pt[0], &w).unwrap();
        assert_eq!(c.pipeline.prep_threads, Some(2));
        assert_eq!(ch.last().map(String::as_str), Some("prep_threads=2"));
        assert_eq!(pipeline_sets(&pt[0], &w).last(), Some(&("prep_threads", "2".to_string())));
        // two_lock: the engine's allocation path has no device-global syncs.
        let tl = parse_grid("t 8 2 two_lock true 1").unwrap();
        let mut c = model();
        apply(&mut c, &tl[0], &w).unwrap();
        assert_eq!(c.pipeline.device_global_sync, Some(false));
        assert!(!pipeline_sets(&g[0], &w).iter().any(|(k, _)| *k == "device_global_sync"));
        // threads at or above the machine's cores: demand and work unchanged.
        let mut c = model();
        c.machine.cpu_cores = 16.0;
        let t16 = parse_grid("t 4 2 kernels true 1 threads=16").unwrap();
        apply(&mut c, &t16[0], &w).unwrap();
        assert_eq!((c.cpu.synth_cores, c.costs.synth.clone()), (4.0, crate::costs::Dist::Fixed(1000.0)));
        // RAM: room for 2.5 of the model's partitions above its resident items.
        let mut c = model();
        apply(&mut c, &g[2], &w).unwrap();
        let want = c.resident_gib() + 2.5 * c.partition_gib();
        assert!((c.budget_gib().unwrap() - want).abs() < 1e-6, "{:?} vs {want}", c.budget_gib());
        assert!(c.memory.early_release);
        // An engine whose resident items under the budget are 1.75 GiB more than the model's
        // (it keeps the parameters' host copy): the model keeps them too — its budget is the
        // engine's, its baseline 1.75 GiB higher, and with an RSS map of slope 0.7 its offset
        // 1.75 × 0.3 higher, so that they count one for one in the RSS.
        let mut c = model();
        c.memory.rss_per_reserved = Some(0.7);
        c.memory.rss_offset_gib = -0.3;
        let (res, part, base) = (c.resident_gib(), c.partition_gib(), c.memory.baseline_gib);
        let b = res + 2.5 * part + 1.75;
        let kept = parse_grid(&format!("r 8 2 kernels true 1 ram_gib={b} ram_parts=2")).unwrap();
        let ch = apply(&mut c, &kept[0], &w).unwrap();
        assert!((c.budget_gib().unwrap() - b).abs() < 1e-6, "{:?} vs {b}", c.budget_gib());
        assert!((c.memory.baseline_gib - base - 1.75).abs() < 1e-9 && (c.memory.rss_offset_gib - (-0.3 + 1.75 * 0.3)).abs() < 1e-9, "{:?}", c.memory);
        assert!(ch.last().unwrap().contains("+ 1.7500 GiB the engine keeps resident"), "{ch:?}");
        assert!((c.memory.rss_of(c.resident_gib()) - (-0.3 + 0.7 * res + 1.75)).abs() < 1e-9, "the kept items count one for one");
        // VRAM: budget, streamed parameters, the engine's least call.
        let mut c = model();
        apply(&mut c, &g[3], &w).unwrap();
        assert_eq!((c.memory.vram_budget_gib, c.memory.params_vram_gib, c.memory.call_vram_gib, c.memory.vram_baseline_gib), (Some(1.2), 0.34, 0.1, 0.0));
        assert!(c.params_streamed());
        assert_eq!(c.memory.params_stream_gbs, Some(tight_stream_gbs(&w.size)), "tight calls stream at the engine's measured rate");
        // ... and the queries' host copy (params_gib = 0.34) kept: resident, and one for one in
        // the RSS under an RSS map of slope 0.7.
        let mut c = model();
        c.memory.rss_per_reserved = Some(0.7);
        c.memory.rss_offset_gib = -0.3;
        let (res, base) = (c.resident_gib(), c.memory.baseline_gib);
        let ch = apply(&mut c, &g[3], &w).unwrap();
        assert!((c.memory.baseline_gib - base - 0.34).abs() < 1e-9, "{:?}", c.memory);
        assert!((c.memory.rss_of(c.resident_gib()) - (-0.3 + 0.7 * res + 0.34)).abs() < 1e-9, "the host copy counts one for one");
        assert!(ch.last().unwrap().contains("0.3400 GiB the engine keeps resident to stream the queries"), "{ch:?}");
        // Both budgets: the RAM budget's kept items are counted beside the host copy, not
        // again (the engine's budget b holds its resident items, the host copy among them).
        let mut c = model();
        let (res, part, base) = (c.resident_gib(), c.partition_gib(), c.memory.baseline_gib);
        let b = res + 2.5 * part + 1.0;
        let both = parse_grid(&format!("rv 8 2 kernels true 1 ram_gib={b} ram_parts=2 vram_gib=1.2 vram_call_gib=0.1 params_gib=0.34")).unwrap();
        apply(&mut c, &both[0], &w).unwrap();
        assert!((c.memory.baseline_gib - base - 1.0).abs() < 1e-9, "kept 1.0 GiB in all, the host copy's 0.34 among it: {:?}", c.memory);
        assert!((c.budget_gib().unwrap() - b).abs() < 1e-6);
        // The measured rates: 2.5 GB/s at 2^20, 3.0 at 2^22, linear in log2 between.
        let r = |s: &str| tight_stream_gbs(s);
        assert_eq!((r("2^18"), r("2^20"), r("2^21"), r("2^22"), r("2^27")), (2.5, 2.5, 2.75, 3.0, 3.0));
        assert_eq!((r("4194304"), r(" 2^22 "), r("big"), r("0")), (3.0, 3.0, 2.5, 2.5));
        assert_eq!(r("1<<22"), 3.0);
        // Knobs that go together.
        let lone = parse_grid("r 1 1 whole false 1 ram_gib=2").unwrap();
        assert!(apply(&mut model(), &lone[0], &w).unwrap_err().contains("go together"));
    }

    #[test]
    fn now_is_after_2023() {
        assert!(now_ns() > 1_700_000_000_000_000_000);
    }

    #[test]
    fn sha256_known_answers() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(sha256_line(b"abc", "x.json"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  x.json\n");
    }

    /// A registration of two configurations (one calibration) at `created`.
    fn registered(created: &str) -> (Vec<u8>, String) {
        let g = parse_grid(GRID).unwrap();
        let sim = Summary::default();
        let cfgs = vec![
            RegisteredConfig::new(&g[0], true, "cal/model.toml", vec![], SimResult::default(), &sim),
            RegisteredConfig::new(&g[1], false, "cal/model.toml", vec!["pw=8".into()], SimResult { peak_ram_gib: 2.0, ..Default::default() }, &sim),
        ];
        let p = Predictions {
            format: FORMAT.into(),
            created_utc: created.into(),
            tool_version: "0.1.0".into(),
            workload: workload(),
            calibrated_on: vec!["cal".into()],
            models: vec![ModelRef { circuit: "porep-like".into(), path: "cal/model.toml".into(), sha256: sha256_hex(b"model") }],
            replications: 20,
            track_record: None,
            configs: cfgs,
        };
        let json = serde_json::to_vec_pretty(&p).unwrap();
        let sha = sha256_line(&json, PREDICTIONS_FILE);
        (json, sha)
    }

    fn start(run: &str, at: &str) -> RunStart {
        RunStart { run: run.into(), started_utc: Some(at.into()), timeline: None }
    }

    /// A run whose `.start` says `at` and whose timeline says `timeline` (after `load_s` s of
    /// reading the parameters).
    fn timed(run: &str, at: &str, timeline: Option<&str>, load_s: f64) -> RunStart {
        RunStart { timeline: Some(TimelineStart { started_at: timeline.map(String::from), params_load_s: load_s }), ..start(run, at) }
    }

    #[test]
    fn a_registration_before_every_predicted_run_passes() {
        let (json, sha) = registered("2026-12-03T10:00:00.000000000Z");
        let runs = [
            start("probe", "2026-12-03T09:58:00Z"),
            start("cal", "2026-12-03T09:59:00Z"),
            start("threads@2", "2026-12-03T10:02:00.5Z"),
            start("threads", "2026-12-03T10:01:00Z"),
            RunStart { run: "cal@2".into(), ..Default::default() },
        ];
        let (p, reg) = check(&json, &sha, &runs).unwrap();
        assert_eq!(p.configs.len(), 2);
        assert_eq!(p.configs[1].peak_rss_gib, Some(2.0));
        assert_eq!(reg.runs_checked, 2);
        assert_eq!((reg.first_predicted_run.as_deref(), reg.lead_s), (Some("threads"), Some(60.0)));
        assert_eq!(reg.predictions_sha256, sha[..64]);
    }

    #[test]
    fn a_run_that_started_before_the_registration_is_an_error() {
        let (json, sha) = registered("2026-12-03T10:00:00.000000000Z");
        let e = check(&json, &sha, &[start("threads", "2026-12-03T10:01:00Z"), start("threads@2", "2026-12-03T09:59:59.999Z")]).unwrap_err();
        assert_eq!(
            e,
            PreregError::RunBeforeRegistration { run: "threads@2".into(), started: "2026-12-03T09:59:59.999Z".into(), registered: "2026-12-03T10:00:00.000000000Z".into() }
        );
        assert!(e.to_string().contains("not a prediction"), "{e}");
        // The same instant is not after it; another time zone is converted.
        assert!(check(&json, &sha, &[start("threads", "2026-12-03T10:00:00Z")]).is_err());
        assert!(check(&json, &sha, &[start("threads", "2026-12-03T11:00:01+01:00")]).is_ok());
        assert!(matches!(check(&json, &sha, &[start("threads", "2026-12-03T10:30:00+01:00")]), Err(PreregError::RunBeforeRegistration { .. })));
        // A predicted run without a start time, or an unreadable one.
        assert_eq!(check(&json, &sha, &[RunStart { run: "threads".into(), ..Default::default() }]).unwrap_err(), PreregError::NoStart { run: "threads".into() });
        assert!(matches!(check(&json, &sha, &[start("threads", "yesterday")]), Err(PreregError::BadTimestamp { .. })));
    }

    #[test]
    fn the_timeline_start_must_follow_the_registration_and_agree_with_the_start_file() {
        let (json, sha) = registered("2026-12-03T10:00:00.000000000Z");
        let at = "2026-12-03T10:01:00Z";
        // The timeline starts 2 s after the .start file (process start), or 7 s after it
        // with 3 s of parameters read; a calibration run's timeline is not checked.
        let ok = [timed("threads", at, Some("2026-12-03T10:01:02.5Z"), 0.0), timed("threads@2", at, Some("2026-12-03T10:01:07Z"), 3.0), timed("cal", at, None, 0.0)];
        assert_eq!(check(&json, &sha, &ok).unwrap().1.runs_checked, 2);
        // A timeline that started before the registration, whatever the .start file says.
        let e = check(&json, &sha, &[timed("threads", at, Some("2026-12-03T09:59:58Z"), 0.0)]).unwrap_err();
        assert_eq!(
            e,
            PreregError::TimelineBeforeRegistration {
                run: "threads".into(),
                timeline: "2026-12-03T09:59:58Z".into(),
                started: at.into(),
                registered: "2026-12-03T10:00:00.000000000Z".into()
            }
        );
        assert!(e.to_string().contains("run threads: its timeline says it started at 2026-12-03T09:59:58Z, before"), "{e}");
        // 9 s after the .start file with 3 s of parameters read (allowed 8 s), or 6 s before it.
        let e = check(&json, &sha, &[timed("threads", at, Some("2026-12-03T10:01:09Z"), 3.0)]).unwrap_err();
        assert!(matches!(&e, PreregError::StartMismatch { run, lag_s, allowed_s, .. } if run == "threads" && *lag_s == 9.0 && *allowed_s == 8.0), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("runs/threads.start says it started at 2026-12-03T10:01:00Z, its timeline at 2026-12-03T10:01:09Z (+9.0 s"), "{msg}");
        let e = check(&json, &sha, &[timed("threads", at, Some("2026-12-03T10:00:54Z"), 0.0)]).unwrap_err();
        assert!(matches!(&e, PreregError::StartMismatch { lag_s, .. } if *lag_s == -6.0), "{e:?}");
        // A timeline without its start: the .start file cannot be tied to it.
        assert_eq!(check(&json, &sha, &[timed("threads@2", at, None, 0.0)]).unwrap_err(), PreregError::NoTimelineStart { run: "threads@2".into() });
    }

    #[test]
    fn a_tampered_file_is_a_hash_mismatch() {
        let (json, sha) = registered("2026-12-03T10:00:00.000000000Z");
        // Move the registration an hour earlier without updating the hash.
        let text = String::from_utf8(json).unwrap().replace("2026-12-03T10:00:00.000000000Z", "2026-12-03T09:00:00.000000000Z");
        let e = check(text.as_bytes(), &sha, &[]).unwrap_err();
        assert!(matches!(&e, PreregError::HashMismatch { expected, .. } if *expected == sha[..64]), "{e}");
        assert!(e.to_string().contains("changed after it was registered"), "{e}");
        // A hash file that holds no hash.
        assert!(matches!(check(text.as_bytes(), "", &[]), Err(PreregError::HashFile(_))));
        assert!(matches!(check(text.as_bytes(), "xyz  predictions.json", &[]), Err(PreregError::HashFile(_))));
        // A matching hash over something that is not a registration.
        let junk = b"{}";
        assert!(matches!(check(junk, &sha256_line(junk, PREDICTIONS_FILE), &[]), Err(PreregError::Parse(_))));
    }

    #[test]
    fn a_prediction_registers_the_analyzer_figures_of_its_simulated_timeline() {
        let g = parse_grid(GRID).unwrap();
        let mut c = model();
        let ch = apply(&mut c, &g[0], &Workload { partitions: 2, proofs: 4, ..workload() }).unwrap();
        let (res, sim, _) = predict(&c, 5);
        let r = RegisteredConfig::new(&g[0], true, "m.toml", ch, res, &sim);
        assert_eq!(r.steady_s_per_proof.point, sim.throughput.partition_rate_s_per_proof.unwrap());
        assert_eq!(r.total_s_per_proof.point, sim.throughput.total_s_per_proof.unwrap());
        assert_eq!(r.binding, sim.verdict.binding);
        assert!(r.steady_s_per_proof.lo.unwrap() <= r.steady_s_per_proof.point && r.steady_s_per_proof.point <= r.steady_s_per_proof.hi.unwrap());
        assert_eq!(r.metrics.get(crate::campaign::key::TOTAL), Some(&r.total_s_per_proof.point));
        assert_eq!(r.result.interval.as_ref().map(|i| i.replications), Some(5));
    }
}
