//! `proofscope campaign base|predict|score`: the Rust half of the campaign scripts, which
//! only orchestrate (prove, analyze, calibrate, simulate, compare) and call these:
//!
//! - `campaign base MACHINE_TXT CAL_RUN -o DIR`: DIR/base.toml, the base config of the
//!   measured machine (phase8.toml with its cores, RAM, VRAM and RSS-based footprints);
//! - `campaign predict GRID --model CIRCUIT=MODEL … -o DIR`: the pre-registration
//!   (`scripts/campaign-prereg.sh`, on the measuring machine before the predicted runs):
//!   every configuration of the grid predicted, DIR/predictions.json (timestamped, the
//!   models' hashes) and DIR/predictions.sha256;
//! - `campaign sets GRID CONFIG --proofs J --partitions K --backend B`: the model's `--set`
//!   pairs of one configuration's pipeline ([`prereg::pipeline_sets`], which `predict`
//!   applies too), one a line, for `scripts/campaign-analyze.sh`'s `simulate` calls;
//! - `campaign score DIR [-o OUT]`: reads every configuration's `parity/parity.json` (+
//!   `parity@K/` repeats), `parity/prediction.json` and `summary.json` in a campaign report
//!   folder and writes `campaign.json`, `campaign.md`, `parity-campaign.svg` and
//!   `host-runs.json` (into DIR unless `-o`); with `--predictions FILE` it checks the
//!   registration instead (hash, every predicted run after its timestamp: an error
//!   otherwise) and scores the registered figures against the runs in DIR/runs.
//!
//! The work is in [`simulator::campaign`] and [`simulator::prereg`].

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde::de::DeserializeOwned;
use serde::Serialize;
use simulator::campaign::{self, ConfigInput};
use simulator::parity::Parity;
use simulator::prereg::{self, Predictions, Registration, RunStart};
use simulator::SimResult;
use timeline::analysis::{summarize, AnalyzeOptions, Summary};

use super::output;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand)]
pub enum Sub {
    /// Write the base config of a campaign: phase8.toml with the machine's cores, RAM and VRAM and the calibration run's RSS footprints.
    Base(BaseArgs),
    /// Pre-register a campaign's predictions: every configuration of a grid predicted from calibrated models, written to predictions.json (UTC timestamp, the models' sha256) and predictions.sha256.
    Predict(PredictArgs),
    /// Print the model's settings of one configuration's pipeline (`key=value`, one a line: the `simulate --set` pairs that `campaign predict` applies too).
    Sets(SetsArgs),
    /// Score a campaign report folder: campaign.json, campaign.md, parity-campaign.svg and host-runs.json.
    Score(ScoreArgs),
    /// Score predictions made after a campaign (its runs calibrated and predicted again by this binary's model: scripts/campaign-posthoc.sh) against that campaign's measured campaign.json; prints the table and the MAPEs, labelled post hoc.
    Posthoc(PosthocArgs),
}

#[derive(clap::Args)]
pub struct PosthocArgs {
    /// The new predictions.json (`campaign predict` on the finished campaign's calibration runs).
    pub predictions: PathBuf,
    /// The finished campaign's scored campaign.json (its measured figures).
    pub measured: PathBuf,
}

/// What each run of a campaign is (the model is told it beside the grid line): `campaign sets`
/// and `campaign predict` take it alike.
#[derive(clap::Args, Clone)]
pub struct RunsArgs {
    /// Proofs per run.
    #[arg(long)]
    pub proofs: u32,
    /// Partitions per proof.
    #[arg(long)]
    pub partitions: u32,
    /// The runs' backend (cuda or cpu; with cuda the `kernels` lock pre-stages uploads).
    #[arg(long)]
    pub backend: String,
}

impl RunsArgs {
    /// The campaign's workload at `size` constraints per partition (as given, e.g. `2^20`).
    fn workload(&self, size: &str) -> prereg::Workload {
        prereg::Workload { size: size.to_string(), proofs: self.proofs, partitions: self.partitions, backend: self.backend.clone() }
    }
}

#[derive(clap::Args)]
pub struct SetsArgs {
    /// The grid: one configuration a line, `name pw gw lock split [finalizers] [knob=value …]`.
    pub grid: PathBuf,
    /// The configuration's name.
    pub config: String,
    #[command(flatten)]
    pub runs: RunsArgs,
}

#[derive(clap::Args)]
pub struct PredictArgs {
    /// The grid, knobs resolved: one configuration a line, `name pw gw lock split finalizers [knob=value …]` (knobs: circuit, threads, prep_threads, ram_gib + ram_parts, vram_gib + vram_call_gib + params_gib; docs/reference/reports.md).
    pub grid: PathBuf,
    /// The calibrated model of a circuit family, `CIRCUIT=MODEL.toml` (`porep-like=cal/porep-like/model.toml`); repeatable, one per family the grid uses.
    #[arg(long = "model", value_name = "CIRCUIT=FILE", required = true)]
    pub models: Vec<String>,
    /// The calibration configurations (measured before the registration; predicted in-sample, left out of the scores), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub calibration: Vec<String>,
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Constraints per partition as the campaign gives them (recorded, e.g. `2^20`).
    #[arg(long)]
    pub size: String,
    /// Replications with other seeds per configuration, for the 80 % interval.
    #[arg(long, default_value_t = simulator::interval::DEFAULT_REPLICATIONS)]
    pub replications: u32,
    /// A scored earlier campaign (its campaign.json); repeatable. The model's errors there make the 80 % intervals of steady and total s/proof: point × e^q10 … point × e^q90 of ln(measured ÷ predicted) over their predicted configurations' runs (docs/reference/fidelity.md).
    #[arg(long = "track-record", value_name = "CAMPAIGN_JSON")]
    pub track_record: Vec<PathBuf>,
    /// Also write each configuration's simulated timeline (the point prediction's) as DIR/<config>.jsonl, for the analyzer or a side-by-side look at a measured run.
    #[arg(long, value_name = "DIR")]
    pub timelines: Option<PathBuf>,
    /// Output folder: DIR/predictions.json and DIR/predictions.sha256 (refused when predictions.json exists there: a registration is written once).
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(clap::Args)]
pub struct BaseArgs {
    /// The campaign's machine.txt (`nproc: N`, `ram_gib: G`, `gpu: NAME, MIB MiB, ...` lines).
    pub machine: PathBuf,
    /// The calibration run's timeline (JSON lines, gzipped or not): its rss_bytes counter and its pw/gw/gpus.
    pub cal_run: PathBuf,
    /// Output folder: the base config goes to DIR/base.toml.
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Reference config to start from (default: simulator/configs/phase8.toml, embedded in the binary).
    #[arg(long)]
    pub reference: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ScoreArgs {
    /// Campaign report folder (from scripts/campaign-analyze.sh): one <config>/ folder per configuration with summary.json, parity/parity.json, parity/prediction.json (and parity@K/parity.json for repeats).
    pub dir: PathBuf,
    /// Output folder for campaign.json, campaign.md, parity-campaign.svg and host-runs.json (default: DIR itself).
    #[arg(short, long, value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// The configuration the model was calibrated on (left out of the MAPEs); default: CAL in DIR/campaign.env.
    #[arg(long, value_name = "CONFIG")]
    pub calibration: Option<String>,
    /// How many runs of the calibration configuration the model was fitted on (campaign.md says so); default: its parity reports (parity/ and parity@K/).
    #[arg(long, value_name = "N")]
    pub cal_runs: Option<usize>,
    /// Configurations to score, in table order, comma-separated; default: DIR/grid.txt's names that have a parity/parity.json (else every such folder, sorted).
    #[arg(long, value_delimiter = ',', value_name = "A,B,...")]
    pub configs: Vec<String>,
    /// Folder of the campaign's runs (<run>.jsonl.gz and <run>.status) for the run-by-run host table; default: DIR/runs.
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// campaign.log, for the order of the runs in the host table; default: DIR/campaign.log (the table is left out when it does not exist).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// A pre-registered campaign's predictions.json (predictions.sha256 beside it): check it (its hash; every run of a predicted configuration started after its timestamp, per runs/<run>.start; an error otherwise) and score its registered figures against the runs' timelines in the runs folder, instead of the parity/ folders.
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        Sub::Base(b) => base(b),
        Sub::Predict(p) => predict(p),
        Sub::Sets(s) => sets(s),
        Sub::Score(s) => score(s),
        Sub::Posthoc(p) => posthoc(p),
    }
}

fn base(a: BaseArgs) -> anyhow::Result<ExitCode> {
    let (reference, ref_name) = match &a.reference {
        Some(p) => (fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?, p.display().to_string()),
        None => (simulator::calibrate::DEFAULT_BASE.to_string(), "simulator/configs/phase8.toml (embedded)".to_string()),
    };
    let machine = fs::read_to_string(&a.machine).with_context(|| format!("cannot read {}", a.machine.display()))?;
    let cal = super::input::read_run(&a.cal_run, None, false)?;
    if cal.diagnostics.lines_rejected > 0 {
        tracing::warn!("{}: {} lines rejected by the reader", a.cal_run.display(), cal.diagnostics.lines_rejected);
    }
    let text = campaign::base_config(&reference, &machine, &cal).with_context(|| format!("base config from {ref_name} and {}", a.machine.display()))?;
    let mut out = output::OutputDir::open(&a.out, &["base.toml"])?;
    out.write("base.toml", text.as_bytes())?;
    let path = out.join("base.toml");
    out.finish();
    tracing::info!("base config: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `path` relative to `dir` when it lies inside it, else absolute: what `score` resolves
/// against the folder of predictions.json, whatever the working directory.
fn relative_to(path: &Path, dir: &Path) -> anyhow::Result<String> {
    let p = fs::canonicalize(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    let d = fs::canonicalize(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
    Ok(p.strip_prefix(&d).unwrap_or(&p).display().to_string())
}

/// The grid of `path`, parsed; errors name the file.
fn read_grid(path: &Path) -> anyhow::Result<Vec<prereg::GridLine>> {
    let text = fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let grid = prereg::parse_grid(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if grid.is_empty() {
        bail!("{}: no configuration", path.display());
    }
    Ok(grid)
}

fn sets(a: SetsArgs) -> anyhow::Result<ExitCode> {
    let grid = read_grid(&a.grid)?;
    let g = grid.iter().find(|g| g.name == a.config).with_context(|| format!("{}: no configuration {}", a.grid.display(), a.config))?;
    if let Some((k, v)) = g.knobs.iter().find(|(k, _)| !prereg::SETS_KNOBS.contains(&k.as_str())) {
        bail!("{}: configuration {} has the knob `{k}={v}`, which is no `--set` of the model: `campaign predict` maps it", a.grid.display(), a.config);
    }
    let w = a.runs.workload("");
    for (k, v) in prereg::pipeline_sets(g, &w) {
        println!("{k}={v}");
    }
    Ok(ExitCode::SUCCESS)
}

fn predict(a: PredictArgs) -> anyhow::Result<ExitCode> {
    let grid = read_grid(&a.grid)?;
    for c in &a.calibration {
        if !grid.iter().any(|g| g.name == *c) {
            bail!("--calibration {c}: not a configuration of {}", a.grid.display());
        }
    }
    if a.runs.proofs == 0 || a.runs.partitions == 0 {
        bail!("--proofs and --partitions must be at least 1");
    }
    let dir = output::dir(&a.out)?;
    let timelines = a.timelines.as_deref().map(output::dir).transpose()?;
    let json_path = dir.join(prereg::PREDICTIONS_FILE);
    if json_path.exists() {
        bail!("{} exists: a registration is written once (score it, or register into a new folder)", json_path.display());
    }
    let mut models: Vec<(prereg::ModelRef, simulator::Config)> = Vec::new();
    for m in &a.models {
        let (circuit, path) = m.split_once('=').with_context(|| format!("--model {m}: expected CIRCUIT=FILE"))?;
        let path = Path::new(path);
        let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let cfg = simulator::Config::load(path)?;
        if models.iter().any(|(r, _)| r.circuit == circuit) {
            bail!("--model {circuit}: given twice");
        }
        models.push((prereg::ModelRef { circuit: circuit.to_string(), path: relative_to(path, &dir)?, sha256: prereg::sha256_hex(&bytes) }, cfg));
    }
    let track_record = if a.track_record.is_empty() {
        None
    } else {
        let files = a.track_record.iter().map(|p| fs::read(p).map(|b| (p.display().to_string(), b)).with_context(|| format!("--track-record: cannot read {}", p.display()))).collect::<anyhow::Result<Vec<_>>>()?;
        let t = simulator::track_record::from_campaigns(&files).map_err(|e| anyhow::anyhow!("--track-record: {e}"))?;
        eprintln!(
            "track record: {} runs of {} campaign(s); ln(measured / predicted) steady q10 {:+.3} q90 {:+.3}, total q10 {:+.3} q90 {:+.3}: the 80 % intervals",
            t.steady.runs,
            t.sources.len(),
            t.steady.q10,
            t.steady.q90,
            t.total.q10,
            t.total.q90
        );
        Some(t)
    };
    let workload = a.runs.workload(&a.size);
    let mut configs = Vec::new();
    for g in &grid {
        let Some((mref, base)) = models.iter().find(|(r, _)| r.circuit == g.circuit()) else {
            bail!("{}: circuit {} has no --model (given: {})", g.name, g.circuit(), models.iter().map(|(r, _)| r.circuit.as_str()).collect::<Vec<_>>().join(", "));
        };
        let mut cfg = base.clone();
        cfg.name = g.name.clone();
        let changes = prereg::apply(&mut cfg, g, &workload).map_err(anyhow::Error::msg)?;
        let (result, sim, run) = prereg::predict(&cfg, a.replications);
        if let (Some(d), Some(run)) = (&timelines, &run) {
            let mut out = Vec::new();
            timeline::write::jsonl::write_run(&mut out, run).with_context(|| format!("{}: the simulated timeline", g.name))?;
            output::write_atomic(&d.join(format!("{}.jsonl", g.name)), &out)?;
        }
        if !result.feasible {
            tracing::warn!("{}: the model predicts no complete run ({})", g.name, result.failure.as_ref().map_or("infeasible".to_string(), |f| format!("{f:?}")));
        }
        let mut c = prereg::RegisteredConfig::new(g, a.calibration.contains(&g.name), &mref.path, changes, result, &sim);
        if let Some(f) = simulator::discrepancy::factor(&cfg.uncertainty, cfg.pipeline.pw) {
            c = c.with_discrepancy(f);
        }
        configs.push(match &track_record {
            Some(t) => c.with_track_record(t),
            None => c,
        });
    }
    // The registration's moment: after every prediction, just before the file is written.
    let p = Predictions {
        format: prereg::FORMAT.to_string(),
        created_utc: timeline::read::wrap::rfc3339_utc(prereg::now_ns()),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        workload,
        calibrated_on: a.calibration.clone(),
        models: models.into_iter().map(|(r, _)| r).collect(),
        replications: a.replications,
        track_record,
        configs,
    };
    let bytes = json(&p)?;
    output::write_atomic(&json_path, &bytes)?;
    let line = prereg::sha256_line(&bytes, prereg::PREDICTIONS_FILE);
    output::write_atomic(&dir.join(prereg::SHA256_FILE), line.as_bytes())?;
    println!("{}", registered_table(&p));
    print!("registered {} at {}; sha256 {line}", json_path.display(), p.created_utc);
    Ok(ExitCode::SUCCESS)
}

/// The predictions, one line each (what the device call prints).
fn registered_table(p: &Predictions) -> String {
    let fig = |f: &prereg::Figure| match (f.lo, f.hi) {
        (Some(lo), Some(hi)) => format!("{:.3} ({lo:.3}-{hi:.3})", f.point),
        _ => format!("{:.3}", f.point),
    };
    let mut t = format!("{:<28} {:>24} {:>24} {:<20} {:>9} {:>7}\n", "config", "steady s/proof (80 %)", "total s/proof (80 %)", "binding", "RSS GiB", "x bias");
    for c in &p.configs {
        let name = if c.calibration { format!("{} (cal)", c.config) } else { c.config.clone() };
        let rss = c.peak_rss_gib.map_or("-".to_string(), |v| format!("{v:.3}"));
        // The calibration bias carried over (simulator::discrepancy), "-" without one.
        let bias = c.discrepancy.map_or("-".to_string(), |f| format!("{f:.4}"));
        t.push_str(&format!("{name:<28} {:>24} {:>24} {:<20} {rss:>9} {bias:>7}\n", fig(&c.steady_s_per_proof), fig(&c.total_s_per_proof), c.binding));
    }
    t
}

fn posthoc(a: PosthocArgs) -> anyhow::Result<ExitCode> {
    let pred: prereg::Predictions = read_json(&a.predictions, "predictions.json")?;
    let measured: campaign::CampaignScore = read_json(&a.measured, "a campaign.json")?;
    let p = campaign::posthoc(&pred, &measured);
    if p.rows.is_empty() {
        anyhow::bail!("{} and {} have no configuration in common", a.predictions.display(), a.measured.display());
    }
    print!("{}", p.text());
    Ok(ExitCode::SUCCESS)
}

/// Read and parse a JSON file; errors name the file (and serde names the field).
fn read_json<T: DeserializeOwned>(path: &Path, what: &str) -> anyhow::Result<T> {
    let text = super::input::read_json_text(path)?;
    campaign::from_json_exact(&text).map_err(|e| anyhow::anyhow!("{}: not {what}: {e}", path.display()))
}

/// `KEY=value` (quotes optional) of a shell-style env file.
fn env_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=').map(|v| v.trim().trim_matches('"').to_string())).filter(|v| !v.is_empty())
}

/// The configurations of a campaign folder, in table order.
fn config_names(dir: &Path) -> anyhow::Result<Vec<String>> {
    let has_parity = |name: &str| dir.join(name).join("parity").join("parity.json").is_file();
    let grid = dir.join("grid.txt");
    if grid.is_file() {
        let text = fs::read_to_string(&grid).with_context(|| format!("cannot read {}", grid.display()))?;
        return Ok(text.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| has_parity(n)).map(String::from).collect());
    }
    let mut names = Vec::new();
    for e in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if has_parity(&name) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// A configuration's parity reports: parity/ first, then parity@K/ in name order.
fn parities(cdir: &Path) -> anyhow::Result<Vec<Parity>> {
    let mut reps: Vec<String> = Vec::new();
    for e in fs::read_dir(cdir).with_context(|| format!("cannot list {}", cdir.display()))? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if name.starts_with("parity@") && cdir.join(&name).join("parity.json").is_file() {
            reps.push(name);
        }
    }
    reps.sort();
    std::iter::once("parity".to_string()).chain(reps).map(|d| read_json(&cdir.join(d).join("parity.json"), "a parity report")).collect()
}

/// Did the run complete: its status file has a line starting with `ok` and its timeline exists?
fn run_file(runs: &Path, name: &str) -> Option<PathBuf> {
    let status = fs::read_to_string(runs.join(format!("{name}.status"))).ok()?;
    if !status.lines().any(|l| l.starts_with("ok")) {
        return None;
    }
    [format!("{name}.jsonl.gz"), format!("{name}.jsonl")].into_iter().map(|f| runs.join(f)).find(|p| p.is_file())
}

/// What a run's timeline (`<run>.jsonl.gz` or `.jsonl`) says of its start: its first line,
/// the meta (`started_at`, `params_load_ms`); `None` when the run left no timeline.
fn timeline_start(runs: &Path, run: &str) -> anyhow::Result<Option<prereg::TimelineStart>> {
    use std::io::BufRead;
    let Some(path) = [format!("{run}.jsonl.gz"), format!("{run}.jsonl")].into_iter().map(|f| runs.join(f)).find(|p| p.is_file()) else {
        return Ok(None);
    };
    let file = fs::File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut first = String::new();
    timeline::read::decompressed(file).and_then(|mut r| r.read_line(&mut first)).with_context(|| format!("cannot read {}", path.display()))?;
    let meta = match serde_json::from_str::<timeline::event::Record>(&first) {
        Ok(timeline::event::Record::Meta(m)) => m,
        // No meta first: nothing says when it started.
        _ => return Ok(Some(prereg::TimelineStart::default())),
    };
    let load_ms = meta.extra.get("params_load_ms").and_then(|v| v.as_f64()).unwrap_or(0.0);
    Ok(Some(prereg::TimelineStart { started_at: meta.started_at, params_load_s: load_ms / 1e3 }))
}

/// Every run of a runs folder that ran, with its start time: `<run>.start` (RFC 3339, written
/// by the script just before the run), and every `<run>.status` saying it ran (ok, failed,
/// timeout) with no start file (`started_utc` none); each with what its timeline says of its
/// start ([`timeline_start`]).
fn run_starts(runs: &Path) -> anyhow::Result<Vec<RunStart>> {
    let mut out: Vec<RunStart> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    if runs.is_dir() {
        for e in fs::read_dir(runs).with_context(|| format!("cannot list {}", runs.display()))? {
            names.push(e?.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    for n in &names {
        if let Some(run) = n.strip_suffix(".start") {
            let t = fs::read_to_string(runs.join(n)).with_context(|| format!("cannot read {}", runs.join(n).display()))?;
            out.push(RunStart { run: run.to_string(), started_utc: Some(t.trim().to_string()), timeline: timeline_start(runs, run)? });
        }
    }
    for n in &names {
        if let Some(run) = n.strip_suffix(".status") {
            let status = fs::read_to_string(runs.join(n)).unwrap_or_default();
            let ran = ["ok", "failed", "timeout"].iter().any(|w| status.starts_with(w));
            if ran && !out.iter().any(|r| r.run == run) {
                out.push(RunStart { run: run.to_string(), started_utc: None, timeline: timeline_start(runs, run)? });
            }
        }
    }
    Ok(out)
}

/// The completed runs of `config` in `runs`: `config` then `config@2`, `config@3`, …
fn runs_of(runs: &Path, config: &str) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut reps: Vec<(u32, String)> = Vec::new();
    if runs.is_dir() {
        for e in fs::read_dir(runs).with_context(|| format!("cannot list {}", runs.display()))? {
            let n = e?.file_name().to_string_lossy().into_owned();
            let Some(run) = n.strip_suffix(".status") else { continue };
            let k = if run == config { Some(1) } else { run.strip_prefix(config).and_then(|r| r.strip_prefix('@')).and_then(|k| k.parse::<u32>().ok()) };
            if let Some(k) = k {
                reps.push((k, run.to_string()));
            }
        }
    }
    reps.sort();
    // Only runs that finished (`run_file`: status `ok`); a failed or stopped run's partial
    // timeline is never scored.
    Ok(reps.into_iter().filter_map(|(_, r)| run_file(runs, &r).map(|p| (r, p))).collect())
}

/// What a pre-registered campaign gives the scoring.
struct Registered {
    /// The calibration configurations, joined (campaign.md's label).
    cal: String,
    names: Vec<String>,
    inputs: Vec<ConfigInput>,
    /// Runs of the calibration configurations.
    cal_runs: usize,
    reg: Registration,
}

/// A pre-registered campaign's inputs: the registration checked (an error when it does not
/// hold), the models' files against their registered hashes, then per registered
/// configuration with a completed run: every run's summary against the registered figures.
fn registered_inputs(a: &ScoreArgs, path: &Path) -> anyhow::Result<Registered> {
    let json_bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let sha_path = path.with_file_name(prereg::SHA256_FILE);
    let sha = fs::read_to_string(&sha_path).with_context(|| format!("cannot read {} (the registration's hash)", sha_path.display()))?;
    let runs = a.runs_dir.clone().unwrap_or_else(|| a.dir.join("runs"));
    let starts = run_starts(&runs)?;
    let (preds, reg) = prereg::check(&json_bytes, &sha, &starts).map_err(|e| anyhow::anyhow!("pre-registration check failed: {e}"))?;
    let base = path.parent().unwrap_or(Path::new("."));
    for m in &preds.models {
        let p = base.join(&m.path);
        match fs::read(&p) {
            Ok(b) if prereg::sha256_hex(&b) != m.sha256 => {
                bail!("pre-registration check failed: {} changed after the registration (sha256 {}, registered {})", p.display(), prereg::sha256_hex(&b), m.sha256)
            }
            Ok(_) => {}
            Err(e) => bail!("pre-registration check failed: {}: {e}: the registered model (sha256 {}) cannot be checked", p.display(), m.sha256),
        }
    }
    let wanted: Vec<&prereg::RegisteredConfig> = if a.configs.is_empty() {
        preds.configs.iter().collect()
    } else {
        a.configs.iter().map(|n| preds.config(n).with_context(|| format!("--configs {n}: not in {}", path.display()))).collect::<anyhow::Result<_>>()?
    };
    let (mut names, mut inputs, mut cal_runs) = (Vec::new(), Vec::new(), 0);
    let opts = AnalyzeOptions::default();
    for c in wanted {
        let files = runs_of(&runs, &c.config)?;
        if files.is_empty() {
            tracing::warn!("{}: no completed run in {}: not scored", c.config, runs.display());
            continue;
        }
        let mut summaries = Vec::new();
        for (_, f) in &files {
            summaries.push(summarize(&super::input::read_run(f, None, false)?, &opts));
        }
        if c.calibration {
            cal_runs += files.len();
        }
        names.push(c.config.clone());
        inputs.push(ConfigInput {
            name: c.config.clone(),
            calibration: c.calibration,
            parities: summaries.iter().map(|s| simulator::parity::compare_registered(s, &c.metrics)).collect(),
            prediction: c.result.clone(),
            measured: summaries.swap_remove(0),
            predicted_binding: Some(c.binding.clone()),
            registered_steady_interval: c.steady_s_per_proof.lo.zip(c.steady_s_per_proof.hi),
            registered_total_interval: c.total_s_per_proof.lo.zip(c.total_s_per_proof.hi),
            grid: Some(prereg::parse_grid(&c.grid_line).map_err(|e| anyhow::anyhow!("{}: configuration {}: {e}", path.display(), c.config))?.pop().with_context(|| format!("{}: configuration {}: an empty grid line", path.display(), c.config))?),
        });
    }
    if inputs.is_empty() {
        bail!("{}: no registered configuration has a completed run in {}", path.display(), runs.display());
    }
    Ok(Registered { cal: preds.calibrated_on.join(", "), names, inputs, cal_runs, reg })
}

fn score(a: ScoreArgs) -> anyhow::Result<ExitCode> {
    let dir = &a.dir;
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    if let Some(p) = &a.predictions {
        if a.calibration.is_some() || a.cal_runs.is_some() {
            bail!("--calibration and --cal-runs come from predictions.json with --predictions");
        }
        let Registered { cal, names, inputs, cal_runs, reg } = registered_inputs(&a, p)?;
        println!(
            "campaign: predictions registered at {} (sha256 {} matches predictions.sha256); {} runs of predicted configurations, all started after it{}",
            reg.created_utc,
            reg.predictions_sha256,
            reg.runs_checked,
            match (&reg.first_predicted_run, &reg.first_predicted_start_utc) {
                (Some(r), Some(t)) => format!(" (the first, {r}, at {t})"),
                _ => String::new(),
            }
        );
        return write_score(&a, &cal, &names, &inputs, cal_runs, Some(reg));
    }
    let cal = match &a.calibration {
        Some(c) => c.clone(),
        None => {
            let env = dir.join("campaign.env");
            let text = fs::read_to_string(&env).with_context(|| format!("no --calibration and cannot read {}", env.display()))?;
            env_value(&text, "CAL").with_context(|| format!("no --calibration and {} has no CAL=", env.display()))?
        }
    };
    let names = if a.configs.is_empty() { config_names(dir)? } else { a.configs.clone() };
    if names.is_empty() {
        bail!("{}: no configuration with a parity/parity.json", dir.display());
    }
    if !names.contains(&cal) {
        bail!("the calibration configuration {cal} is not among the scored ones ({})", names.join(", "));
    }
    let mut inputs = Vec::new();
    for name in &names {
        let cdir = dir.join(name);
        inputs.push(ConfigInput {
            name: name.clone(),
            calibration: *name == cal,
            parities: parities(&cdir)?,
            prediction: read_json::<SimResult>(&cdir.join("parity").join("prediction.json"), "a simulation result (simulate --json)")?,
            measured: read_json::<Summary>(&cdir.join("summary.json"), "an analyzer summary")?,
            predicted_binding: None,
            registered_steady_interval: None,
            registered_total_interval: None,
            grid: None,
        });
    }
    let cal_runs = a.cal_runs.unwrap_or_else(|| inputs.iter().find(|c| c.calibration).map_or(1, |c| c.parities.len()));
    write_score(&a, &cal, &names, &inputs, cal_runs, None)
}

/// Score, write campaign.json, campaign.md, parity-campaign.svg and host-runs.json, print the
/// headline.
fn write_score(a: &ScoreArgs, cal: &str, names: &[String], inputs: &[ConfigInput], cal_runs: usize, reg: Option<Registration>) -> anyhow::Result<ExitCode> {
    let dir = &a.dir;
    let mut res = campaign::score(cal, inputs);
    res.preregistration = reg;
    let mut md = res.markdown(cal_runs);

    // The run-by-run host table: every run of a scored configuration that completed, in the
    // order campaign.log started them.
    let log = a.log.clone().unwrap_or_else(|| dir.join("campaign.log"));
    let host = if a.log.is_some() || log.is_file() {
        let text = fs::read_to_string(&log).with_context(|| format!("cannot read {}", log.display()))?;
        let runs = a.runs_dir.clone().unwrap_or_else(|| dir.join("runs"));
        let config_of = |run: &str| run.split_once('@').map_or(run, |(c, _)| c).to_string();
        let order = campaign::run_order(&text, |run| names.contains(&config_of(run)) && run_file(&runs, run).is_some());
        let mut rows = Vec::new();
        for (start, name) in order {
            let path = run_file(&runs, &name).with_context(|| format!("{}: {name} vanished", runs.display()))?;
            let run = timeline::read::read_path(&path, None)?;
            rows.push(campaign::host_run(&name, start, &run));
        }
        md.push_str(&campaign::host_runs_markdown(&rows));
        Some(rows)
    } else {
        tracing::info!("{}: no campaign.log, no run-by-run host table", dir.display());
        None
    };

    // One scoring's files only: an earlier scoring's plot or host table that this one does
    // not write is removed (output::OutputDir).
    let mut out = output::OutputDir::open(a.out.as_deref().unwrap_or(dir.as_path()), &["campaign.json", "campaign.md", "parity-campaign.svg", "host-runs.json"])?;
    out.write("campaign.json", &json(&res)?)?;
    out.write("campaign.md", md.as_bytes())?;
    if let Some(svg) = res.parity_svg() {
        out.write("parity-campaign.svg", svg.as_bytes())?;
    }
    if let Some(rows) = &host {
        out.write("host-runs.json", &json(rows)?)?;
    }
    let out_path = out.path().to_path_buf();
    out.finish();
    let out = out_path;
    let f = |x: Option<f64>| x.map_or_else(|| "—".to_string(), |v| format!("{v:.2}"));
    println!(
        "campaign: MAPE {} % (steady), {} % (total), coverage {} % of {} runs, binding right {} of {}, peak RSS within 10 % {} of {}, best measured {}, predicted {}, target {} ({})",
        f(res.mape_pct),
        f(res.mape_total_pct),
        f(res.coverage_pct),
        res.coverage_runs,
        res.binding_correct,
        res.binding_checked,
        res.rss_within_10pct,
        res.rss_checked,
        res.best_measured.as_deref().unwrap_or("—"),
        res.best_predicted.as_deref().unwrap_or("—"),
        if res.target_met { "met" } else { "NOT met" },
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Pretty JSON indented by one space (as the Python wrote it), newline-terminated.
fn json<T: Serialize>(v: &T) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(b" "));
    v.serialize(&mut ser)?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parity report as the campaigns of 2026-11 wrote them (labels, no keys).
    fn old_parity(measured: f64, predicted: f64) -> String {
        format!(
            r#"{{"metrics":[{{"metric":"steady s/proof (partition rate)","unit":"s","measured":{measured},"predicted":{predicted},"error_pct":{}}}],"within_5pct":0,"max_abs_error_pct":0.0}}"#,
            100.0 * (predicted - measured) / measured
        )
    }

    fn campaign_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(p.join("grid.txt"), "a 1 1 whole false\nb 2 1 whole false\nc 4 1 whole false\n").unwrap();
        fs::write(p.join("campaign.env"), "SIZE=2^20\nCAL=\"b\"\n").unwrap();
        // c never ran: no folder. b was repeated.
        for (name, runs, predicted) in [("a", vec![4.0], 4.4), ("b", vec![2.0, 2.2], 2.0)] {
            for (k, m) in runs.iter().enumerate() {
                let sub = if k == 0 { "parity".to_string() } else { format!("parity@{}", k + 1) };
                fs::create_dir_all(p.join(name).join(&sub)).unwrap();
                fs::write(p.join(name).join(&sub).join("parity.json"), old_parity(*m, predicted)).unwrap();
            }
            let pred = serde_json::to_string(&SimResult::default()).unwrap().replace("steady_state_s_per_proof", "steady_s_per_proof");
            fs::write(p.join(name).join("parity").join("prediction.json"), pred).unwrap();
            fs::write(p.join(name).join("summary.json"), serde_json::to_string(&Summary::default()).unwrap()).unwrap();
        }
        fs::create_dir_all(p.join("runs")).unwrap();
        let span = |s: u64, e: u64| format!(r#"{{"type":"span","kind":"synthesis","start_ns":{s},"end_ns":{e},"job":"j","partition":0}}"#);
        for (run, status) in [("a", "ok wall_s=1"), ("b", "ok"), ("b@2", "ok"), ("probe", "ok")] {
            fs::write(p.join("runs").join(format!("{run}.status")), status).unwrap();
            fs::write(p.join("runs").join(format!("{run}.jsonl")), span(0, 2_000_000_000) + "\n").unwrap();
        }
        fs::write(
            p.join("campaign.log"),
            "campaign [1s]: probe: 1 proof, pw=1\ncampaign [3s]: b: pw=2 gw=1\ncampaign [9s]: a: pw=1 gw=1\ncampaign [12s]: b@2: pw=2 gw=1\ncampaign [20s]: c: pw=4 gw=1\n",
        )
        .unwrap();
        d
    }

    fn score_args(dir: &Path) -> ScoreArgs {
        ScoreArgs { dir: dir.to_path_buf(), out: None, calibration: None, cal_runs: None, configs: vec![], runs_dir: None, log: None, predictions: None }
    }

    #[test]
    fn scores_a_folder_of_old_reports() {
        let d = campaign_dir();
        let code = score(score_args(d.path())).unwrap();
        assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::SUCCESS));
        let res: campaign::CampaignScore = read_json(&d.path().join("campaign.json"), "").unwrap();
        assert_eq!(res.calibrated_on, "b");
        assert_eq!(res.configs.iter().map(|c| (c.config.as_str(), c.runs)).collect::<Vec<_>>(), [("a", 1), ("b", 2)]);
        // Only a counts: +10 %.
        assert!((res.mape_pct.unwrap() - 10.0).abs() < 1e-9, "{:?}", res.mape_pct);
        assert_eq!(res.ranking_measured, ["b", "a"]);
        let md = fs::read_to_string(d.path().join("campaign.md")).unwrap();
        assert!(md.contains("calibrated on **b** only (its 2 runs together;"), "{md}");
        assert!(md.contains("both go through the analyzer's `summarize`"), "{md}");
        // The host table: the scored configurations' runs in log order (no probe, no c).
        assert!(md.contains("| b | 3 | 2.00 |") && md.contains("| b@2 | 12 |"), "{md}");
        let host: Vec<campaign::HostRun> = read_json(&d.path().join("host-runs.json"), "").unwrap();
        assert_eq!(host.iter().map(|r| r.run.as_str()).collect::<Vec<_>>(), ["b", "a", "b@2"]);
        assert!(fs::read_to_string(d.path().join("parity-campaign.svg")).unwrap().starts_with("<svg"));
        assert!(fs::read_dir(d.path()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
        let json = fs::read_to_string(d.path().join("campaign.json")).unwrap();
        assert!(json.starts_with("{\n \"calibrated_on\": \"b\",\n \"configs\": [\n  {\n   \"config\": \"a\","), "{json}");
    }

    #[test]
    fn writes_elsewhere_with_o() {
        let d = campaign_dir();
        let out = d.path().join("scored");
        score(ScoreArgs { out: Some(out.clone()), ..score_args(d.path()) }).unwrap();
        for f in ["campaign.json", "campaign.md", "parity-campaign.svg", "host-runs.json"] {
            assert!(out.join(f).is_file() && !d.path().join(f).exists(), "{f}");
        }
    }

    #[test]
    fn bad_input_names_the_file_and_the_field() {
        let d = campaign_dir();
        fs::write(d.path().join("a").join("parity").join("prediction.json"), r#"{"name": "x"}"#).unwrap();
        let e = format!("{:#}", score(score_args(d.path())).unwrap_err());
        assert!(e.contains("a/parity/prediction.json") && e.contains("missing field"), "{e}");
        fs::remove_file(d.path().join("a").join("parity").join("prediction.json")).unwrap();
        let e = format!("{:#}", score(score_args(d.path())).unwrap_err());
        assert!(e.contains("cannot read") && e.contains("prediction.json"), "{e}");
        let e = format!("{:#}", score(ScoreArgs { calibration: Some("zz".into()), ..score_args(d.path()) }).unwrap_err());
        assert!(e.contains("zz"), "{e}");
    }

    /// A registered campaign in a temp folder: phase8 as the model, a calibration
    /// configuration and a predicted one, predicted with `campaign predict`; each run's
    /// timeline is the model's own simulation of it (so the predictions are exact) and starts
    /// at `start` (the calibration run an hour before the registration), its timeline 1 s
    /// later.
    fn registered_campaign(start: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().to_path_buf();
        fs::write(p.join("model.toml"), simulator::calibrate::DEFAULT_BASE).unwrap();
        register(&p, &p.join("model.toml"), start);
        d
    }

    /// The campaign of [`registered_campaign`] in `p`, predicted with the model at `model`
    /// (as given to `--model`).
    fn register(p: &Path, model: &Path, start: &str) {
        fs::create_dir_all(p).unwrap();
        fs::write(p.join("grid.txt"), "cal 2 1 whole false 1\nb 4 1 kernels true 1 threads=2\n").unwrap();
        let args = || PredictArgs {
            grid: p.join("grid.txt"),
            models: vec![format!("porep-like={}", model.display())],
            calibration: vec!["cal".into()],
            runs: RunsArgs { proofs: 3, partitions: 2, backend: "cuda".into() },
            size: "2^27".into(),
            replications: 4,
            track_record: Vec::new(),
            timelines: None,
            out: p.to_path_buf(),
        };
        predict(args()).unwrap();
        let e = format!("{:#}", predict(args()).unwrap_err());
        assert!(e.contains("a registration is written once"), "{e}");
        let preds: Predictions = read_json(&p.join("predictions.json"), "").unwrap();
        let created = timeline::read::wrap::rfc3339_ns(&preds.created_utc).unwrap();
        fs::create_dir_all(p.join("runs")).unwrap();
        let grid = prereg::parse_grid(&fs::read_to_string(p.join("grid.txt")).unwrap()).unwrap();
        for (g, at) in grid.iter().zip([timeline::read::wrap::rfc3339_utc(created - 3_600_000_000_000), start.to_string()]) {
            let mut cfg = simulator::Config::load(model).unwrap();
            prereg::apply(&mut cfg, g, &preds.workload).unwrap();
            let mut run = simulator::simulate(&cfg, simulator::Options { record: true }).run.unwrap();
            run.meta.started_at = Some(timeline::read::wrap::rfc3339_utc(timeline::read::wrap::rfc3339_ns(&at).unwrap() + 1_000_000_000));
            let mut out = Vec::new();
            timeline::write::jsonl::write_run(&mut out, &run).unwrap();
            fs::write(p.join("runs").join(format!("{}.jsonl", g.name)), out).unwrap();
            fs::write(p.join("runs").join(format!("{}.status", g.name)), "ok wall_s=1\n").unwrap();
            fs::write(p.join("runs").join(format!("{}.start", g.name)), format!("{at}\n")).unwrap();
        }
    }

    fn prereg_args(dir: &Path) -> ScoreArgs {
        ScoreArgs { predictions: Some(dir.join("predictions.json")), ..score_args(dir) }
    }

    #[test]
    fn the_track_record_makes_the_registered_intervals() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(p.join("model.toml"), simulator::calibrate::DEFAULT_BASE).unwrap();
        fs::write(p.join("grid.txt"), "cal 2 1 whole false 1\nb 4 1 kernels true 1\n").unwrap();
        let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
        let camps: Vec<PathBuf> = [9, 10, 11].iter().map(|n| reports.join(format!("campaign-2026-12-03-prereg{n}")).join("campaign.json")).collect();
        let args = |track_record: Vec<PathBuf>, out: &str| PredictArgs {
            grid: p.join("grid.txt"),
            models: vec![format!("porep-like={}", p.join("model.toml").display())],
            calibration: vec!["cal".into()],
            runs: RunsArgs { proofs: 3, partitions: 2, backend: "cuda".into() },
            size: "2^20".into(),
            replications: 2,
            track_record,
            timelines: Some(p.join("timelines")),
            out: p.join(out),
        };
        predict(args(camps.clone(), "a")).unwrap();
        let preds: Predictions = read_json(&p.join("a").join("predictions.json"), "").unwrap();
        let t = preds.track_record.as_ref().expect("registered");
        // --timelines: each configuration's simulated timeline, readable by the analyzer.
        for c in ["cal", "b"] {
            let run = timeline::read::read_path(&p.join("timelines").join(format!("{c}.jsonl")), None).unwrap();
            assert!(run.spans_of(&timeline::SpanKind::Synthesis).count() > 0, "{c}");
        }
        assert_eq!((t.sources.len(), t.steady.runs), (3, 72));
        for c in &preds.configs {
            let f = &c.steady_s_per_proof;
            assert_eq!((f.lo, f.hi), (Some(f.point * t.steady.q10.exp()), Some(f.point * t.steady.q90.exp())), "{}", c.config);
            let f = &c.total_s_per_proof;
            assert_eq!((f.lo, f.hi), (Some(f.point * t.total.q10.exp()), Some(f.point * t.total.q90.exp())), "{}", c.config);
        }
        // A file that is no scored campaign: an error naming it, nothing registered.
        let e = format!("{:#}", predict(args(vec![p.join("grid.txt")], "b")).unwrap_err());
        assert!(e.contains("--track-record") && e.contains("grid.txt"), "{e}");
        assert!(!p.join("b").join("predictions.json").exists());
    }

    #[test]
    fn the_calibration_bias_scales_the_registered_figures() {
        // The same model with and without a calibration bias (pw 1 × 1, pw 8 × 1.21): each
        // configuration's s/proof figures × 1.21^(½ · ln pw / ln 8) — pw 2: 1.21^(1/6), pw 4:
        // 1.21^(1/3) — the model's own kept in `result`.
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(p.join("plain.toml"), simulator::calibrate::DEFAULT_BASE).unwrap();
        let biased = format!("{}\n[[uncertainty.calibration_bias]]\npw = 1\nratio = 1.0\n\n[[uncertainty.calibration_bias]]\npw = 8\nratio = 1.21\n", simulator::calibrate::DEFAULT_BASE);
        fs::write(p.join("biased.toml"), biased).unwrap();
        fs::write(p.join("grid.txt"), "cal 2 1 whole false 1\nb 4 1 kernels true 1\n").unwrap();
        let args = |model: &str, out: &str| PredictArgs {
            grid: p.join("grid.txt"),
            models: vec![format!("porep-like={}", p.join(model).display())],
            calibration: vec!["cal".into()],
            runs: RunsArgs { proofs: 3, partitions: 2, backend: "cuda".into() },
            size: "2^20".into(),
            replications: 2,
            track_record: Vec::new(),
            timelines: None,
            out: p.join(out),
        };
        predict(args("plain.toml", "a")).unwrap();
        predict(args("biased.toml", "b")).unwrap();
        let a: Predictions = read_json(&p.join("a").join("predictions.json"), "").unwrap();
        let b: Predictions = read_json(&p.join("b").join("predictions.json"), "").unwrap();
        for ((x, y), f) in a.configs.iter().zip(&b.configs).zip([1.21f64.powf(1.0 / 6.0), 1.21f64.powf(1.0 / 3.0)]) {
            let close = |u: f64, v: f64| (u - v).abs() <= 1e-9 * v.abs();
            assert_eq!(x.discrepancy, None, "{}", x.config);
            assert!(y.discrepancy.is_some_and(|v| close(v, f)), "{}: {:?}", x.config, y.discrepancy);
            assert!(close(y.steady_s_per_proof.point, x.steady_s_per_proof.point * f), "{}", x.config);
            assert!(close(y.total_s_per_proof.point, x.total_s_per_proof.point * f), "{}", x.config);
            assert!(close(y.steady_s_per_proof.hi.unwrap(), x.steady_s_per_proof.hi.unwrap() * f), "{}", x.config);
            use simulator::campaign::key;
            for k in [key::PARTITION_RATE, key::STEADY, key::TOTAL] {
                assert!(close(y.metrics[k], x.metrics[k] * f), "{}: {k}", x.config);
            }
            // What is not s/proof stays the model's own.
            assert_eq!(y.metrics.get(key::GPU_UTILIZATION), x.metrics.get(key::GPU_UTILIZATION), "{}", x.config);
            assert_eq!(y.result.steady_partitions_s_per_proof, x.result.steady_partitions_s_per_proof, "{}: the model's own figure kept", x.config);
            // The printed table (predictions.txt) shows the factor; without one, a dash.
            let row = |p: &Predictions| registered_table(p).lines().find(|l| l.starts_with(&x.config)).map(|l| l.split_whitespace().last().unwrap_or("").to_string());
            assert_eq!((row(&a), row(&b)), (Some("-".to_string()), Some(format!("{f:.4}"))), "{}", x.config);
        }
    }

    #[test]
    fn scores_a_registered_campaign_from_its_predictions() {
        let d = registered_campaign("2200-01-01T00:00:00Z");
        let preds: Predictions = read_json(&d.path().join("predictions.json"), "").unwrap();
        assert_eq!(preds.models[0].path, "model.toml", "a model inside the folder: relative to it");
        score(prereg_args(d.path())).unwrap();
        let res: campaign::CampaignScore = read_json(&d.path().join("campaign.json"), "").unwrap();
        let reg = res.preregistration.as_ref().unwrap();
        assert_eq!((reg.runs_checked, reg.first_predicted_run.as_deref()), (1, Some("b")));
        assert_eq!(res.calibrated_on, "cal");
        assert_eq!(res.configs.iter().map(|c| (c.config.as_str(), c.calibration)).collect::<Vec<_>>(), [("cal", true), ("b", false)]);
        // The runs are the model's own simulations: the registered figures are exact.
        assert_eq!(res.mape_pct, Some(0.0));
        assert_eq!(res.mape_total_pct, Some(0.0));
        assert_eq!((res.binding_correct, res.binding_checked, res.rss_within_10pct, res.rss_checked), (1, 1, 1, 1));
        let md = fs::read_to_string(d.path().join("campaign.md")).unwrap();
        assert!(md.contains("## Pre-registration") && md.contains(&reg.predictions_sha256), "{md}");
        // `sha256sum -c` reads predictions.sha256.
        let line = fs::read_to_string(d.path().join("predictions.sha256")).unwrap();
        assert_eq!(line, format!("{}  predictions.json\n", reg.predictions_sha256));
    }

    #[test]
    fn a_registered_campaign_whose_run_came_first_or_whose_file_changed_is_refused() {
        // A predicted run that started before the registration.
        let d = registered_campaign("2001-01-01T00:00:00Z");
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("pre-registration check failed") && e.contains("run b started at 2001-01-01T00:00:00Z, before"), "{e}");
        assert!(!d.path().join("campaign.json").exists());
        // predictions.json edited after the registration.
        let d = registered_campaign("2200-01-01T00:00:00Z");
        let path = d.path().join("predictions.json");
        let text = fs::read_to_string(&path).unwrap().replacen("\"replications\": 4", "\"replications\": 5", 1);
        fs::write(&path, text).unwrap();
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("does not match predictions.sha256"), "{e}");
        // The model file edited after the registration.
        let d = registered_campaign("2200-01-01T00:00:00Z");
        fs::write(d.path().join("model.toml"), format!("{}\n# edited\n", simulator::calibrate::DEFAULT_BASE)).unwrap();
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("model.toml changed after the registration"), "{e}");
        // A predicted run without a start time.
        let d = registered_campaign("2200-01-01T00:00:00Z");
        fs::remove_file(d.path().join("runs").join("b.start")).unwrap();
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("run b of a predicted configuration has no start time"), "{e}");
    }

    /// Rewrite runs/`run`.jsonl's timeline start (`started_at`) to `at`.
    fn set_timeline_start(dir: &Path, run: &str, at: &str) {
        let path = dir.join("runs").join(format!("{run}.jsonl"));
        let text = fs::read_to_string(&path).unwrap();
        let (first, rest) = text.split_once('\n').unwrap();
        let mut meta: serde_json::Value = serde_json::from_str(first).unwrap();
        meta["started_at"] = at.into();
        fs::write(&path, format!("{meta}\n{rest}")).unwrap();
    }

    #[test]
    fn a_registered_campaign_whose_timeline_disagrees_with_its_start_file_is_refused() {
        // The timeline started before the registration (the .start file says after it).
        let d = registered_campaign("2200-01-01T00:00:00Z");
        set_timeline_start(d.path(), "b", "2001-01-01T00:00:01Z");
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("pre-registration check failed: run b: its timeline says it started at 2001-01-01T00:00:01Z, before"), "{e}");
        assert!(!d.path().join("campaign.json").exists());
        // A minute after its .start file: the file is not this run's.
        let d = registered_campaign("2200-01-01T00:00:00Z");
        set_timeline_start(d.path(), "b", "2200-01-01T00:01:00Z");
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("runs/b.start says it started at 2200-01-01T00:00:00Z, its timeline at 2200-01-01T00:01:00Z (+60.0 s"), "{e}");
        // The same read from a gzipped timeline; a timeline without its start.
        let d = registered_campaign("2200-01-01T00:00:00Z");
        let runs = d.path().join("runs");
        let mut gz = flate2::write::GzEncoder::new(fs::File::create(runs.join("b.jsonl.gz")).unwrap(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, fs::read(runs.join("b.jsonl")).unwrap().as_slice()).unwrap();
        gz.finish().unwrap();
        fs::remove_file(runs.join("b.jsonl")).unwrap();
        score(prereg_args(d.path())).unwrap();
        let text = fs::read_to_string(d.path().join("runs").join("cal.jsonl")).unwrap();
        fs::write(runs.join("b.jsonl"), text.replacen("\"started_at\"", "\"started\"", 1)).unwrap();
        fs::remove_file(runs.join("b.jsonl.gz")).unwrap();
        let e = format!("{:#}", score(prereg_args(d.path())).unwrap_err());
        assert!(e.contains("run b: its timeline records no start time"), "{e}");
    }

    #[test]
    fn coverage_is_counted_against_the_registered_intervals() {
        let d = registered_campaign("2200-01-01T00:00:00Z");
        let path = d.path().join("predictions.json");
        let mut p: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let fig = &p["configs"][1]["steady_s_per_proof"];
        let (point, lo, hi) = (fig["point"].as_f64().unwrap(), fig["lo"].as_f64().unwrap(), fig["hi"].as_f64().unwrap());
        score(prereg_args(d.path())).unwrap();
        let res: campaign::CampaignScore = read_json(&d.path().join("campaign.json"), "").unwrap();
        assert_eq!(res.configs[1].predicted_steady_interval, Some((lo, hi)));
        assert_eq!((res.configs[1].runs_inside_steady, res.configs[1].runs_checked_steady), (1, 1));
        // Registered otherwise (and registered again: a new hash): the scoring takes it as it
        // stands, not the interval the prediction's replications would give.
        p["configs"][1]["steady_s_per_proof"]["lo"] = (2.0 * point).into();
        p["configs"][1]["steady_s_per_proof"]["hi"] = (3.0 * point).into();
        let bytes = json(&p).unwrap();
        fs::write(&path, &bytes).unwrap();
        fs::write(d.path().join("predictions.sha256"), prereg::sha256_line(&bytes, prereg::PREDICTIONS_FILE)).unwrap();
        score(prereg_args(d.path())).unwrap();
        let res: campaign::CampaignScore = read_json(&d.path().join("campaign.json"), "").unwrap();
        assert_eq!(res.configs[1].predicted_steady_interval, Some((2.0 * point, 3.0 * point)));
        assert_eq!((res.configs[1].runs_inside_steady, res.coverage_pct), (0, Some(0.0)));
    }

    #[test]
    fn a_model_outside_the_folder_is_registered_by_its_absolute_path() {
        let d = tempfile::tempdir().unwrap();
        let models = d.path().join("models");
        fs::create_dir_all(&models).unwrap();
        fs::write(models.join("model.toml"), simulator::calibrate::DEFAULT_BASE).unwrap();
        // Given relative to the working directory, as a script run elsewhere would.
        let cwd = std::env::current_dir().unwrap();
        let up = "../".repeat(cwd.components().count() - 1);
        let rel = PathBuf::from(up).join(models.join("model.toml").strip_prefix("/").unwrap());
        assert!(rel.is_relative() && rel.is_file(), "{}", rel.display());
        let camp = d.path().join("campaign");
        register(&camp, &rel, "2200-01-01T00:00:00Z");
        let preds: Predictions = read_json(&camp.join("predictions.json"), "").unwrap();
        assert_eq!(Path::new(&preds.models[0].path), fs::canonicalize(models.join("model.toml")).unwrap());
        // The scoring finds it (an absolute path: whatever the working directory) and checks it.
        score(prereg_args(&camp)).unwrap();
        fs::write(models.join("model.toml"), format!("{}\n# edited\n", simulator::calibrate::DEFAULT_BASE)).unwrap();
        let e = format!("{:#}", score(prereg_args(&camp)).unwrap_err());
        assert!(e.contains("model.toml changed after the registration"), "{e}");
    }

    #[test]
    fn sets_prints_the_pipeline_of_a_grid_line() {
        let d = tempfile::tempdir().unwrap();
        let grid = d.path().join("grid.txt");
        fs::write(&grid, "a 4 2 kernels true\nb 8 2 kernels true 1 threads=2\n").unwrap();
        let args = |config: &str| SetsArgs { grid: grid.clone(), config: config.into(), runs: RunsArgs { proofs: 5, partitions: 3, backend: "cuda".into() } };
        sets(args("a")).unwrap();
        let e = format!("{:#}", sets(args("b")).unwrap_err());
        assert!(e.contains("grid.txt: configuration b has the knob `threads=2`"), "{e}");
        let e = format!("{:#}", sets(args("zz")).unwrap_err());
        assert!(e.contains("grid.txt: no configuration zz"), "{e}");
    }

    #[test]
    fn writes_the_base_config() {
        let d = tempfile::tempdir().unwrap();
        let machine = d.path().join("machine.txt");
        fs::write(&machine, "nproc: 8\nram_gib: 64\n").unwrap();
        let run = d.path().join("cal.jsonl");
        fs::write(&run, "{\"type\":\"counter\",\"name\":\"rss_bytes\",\"t_ns\":0,\"value\":1073741824}\n").unwrap();
        let out = d.path().join("out");
        base(BaseArgs { machine: machine.clone(), cal_run: run.clone(), out: out.clone(), reference: None }).unwrap();
        let text = fs::read_to_string(out.join("base.toml")).unwrap();
        assert!(text.contains("cpu_cores = 8  # machine.txt (nproc)") && text.contains("baseline_gib = 1.000  #"), "{text}");
        simulator::Config::load(&out.join("base.toml")).unwrap();
        fs::write(&machine, "nproc: eight\n").unwrap();
        let e = format!("{:#}", base(BaseArgs { machine, cal_run: run, out, reference: None }).unwrap_err());
        assert!(e.contains("machine.txt") && e.contains("nproc"), "{e}");
    }
}
