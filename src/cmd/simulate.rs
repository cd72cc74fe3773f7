//! `proofscope simulate CONFIG [--json] [--timeline out.jsonl] [--cuzk-log out.log] [--seed N] [--set k=v]...
//! [--compare-to LOG [-o DIR]]`: run the discrete-event model of the proving pipeline
//! once and print throughput, utilisations, memory peaks, floors and the verdict; write
//! the simulated timeline (same schema as the prover's, so `analyze` reads it); with
//! `--compare-to`, a parity report against a measured log of the same configuration.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use simulator::{parity, simulate, Config, Options};

#[derive(clap::Args)]
pub struct Args {
    /// Model config (TOML); examples in simulator/configs/.
    pub config: PathBuf,
    /// Print the result as JSON (SimResult) instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Write the simulated timeline as JSON lines.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Also write it as a cuzk daemon TIMELINE log (for tools that read cuzk logs).
    #[arg(long)]
    pub cuzk_log: Option<PathBuf>,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override a config key, as sweep's --vary does with one value (e.g. --set pw=12).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A cuzk daemon configuration file (cuzk.toml): its memory budget, GPU workers,
    /// threads and synthesis concurrency replace the model's pipeline knobs (before --set);
    /// keys the model does not cover are named in a warning.
    #[arg(long, value_name = "FILE")]
    pub cuzk_config: Option<PathBuf>,
    /// Replications with other seeds (seed, seed+1, …) for the prediction interval
    /// (p10–p90 widened by the calibrated run spread); 0 or 1: none.
    #[arg(long, default_value_t = simulator::interval::DEFAULT_REPLICATIONS)]
    pub replications: u32,
    /// A measured log (cuzk or JSON lines) of the same configuration: print a parity report.
    #[arg(long)]
    pub compare_to: Option<PathBuf>,
    /// Where the parity report goes (parity.md, parity.json, parity.svg).
    #[arg(short, long, default_value = "out/parity")]
    pub out: PathBuf,
    /// Read a --compare-to log whose schema_version is newer than this proofscope's.
    #[arg(long)]
    pub force: bool,
}

/// The parity report's files (in `-o DIR`).
pub const PARITY_OUTPUTS: &[&str] = &["parity.md", "parity.json", "parity.svg"];

/// Load a config, import a cuzk.toml over it (`--cuzk-config`) and apply `key=value`
/// overrides (errors name the file, key and reason).
pub fn load_config(path: &std::path::Path, cuzk: Option<&std::path::Path>, seed: Option<u64>, sets: &[String]) -> anyhow::Result<Config> {
    let mut cfg = Config::load(path)?;
    if let Some(c) = cuzk {
        import_cuzk(&mut cfg, c)?;
    }
    for kv in sets {
        let (k, v) = timeline::settings::split_assignment(kv)?;
        cfg.set(k, v)?;
    }
    if let Some(s) = seed {
        cfg.seed = s;
    }
    cfg.validate().with_context(|| format!("{} (after overrides)", path.display()))?;
    Ok(cfg)
}

/// Apply a cuzk.toml to a model: the keys set are logged, the keys not modelled warned about.
pub fn import_cuzk(cfg: &mut Config, path: &std::path::Path) -> anyhow::Result<()> {
    let imp = simulator::cuzk_config::apply_file(cfg, path)?;
    for a in &imp.applied {
        tracing::info!("{}: {a}", path.display());
    }
    if let Some(w) = imp.warning(&path.display().to_string()) {
        tracing::warn!("{w}");
    }
    cfg.validate().with_context(|| format!("the model with {} applied", path.display()))?;
    Ok(())
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let cfg = load_config(&a.config, a.cuzk_config.as_deref(), a.seed, &a.set)?;
    // Every argument and input is checked before any simulation or file.
    let measured = match &a.compare_to {
        Some(log) => {
            super::output::check_dir(&a.out)?;
            Some(super::input::read_run(log, None, a.force)?)
        }
        None => None,
    };
    let record = a.timeline.is_some() || a.cuzk_log.is_some() || a.compare_to.is_some();
    let mut out = simulate(&cfg, Options { record });
    out.result.interval = simulator::interval::replicate(&cfg, a.replications);
    if a.json {
        let mut o = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut o, &out.result)?;
        writeln!(o)?;
    } else {
        print!("{}", out.result.render_text());
    }
    // Files whole or not at all (timeline::atomic).
    if let (Some(path), Some(run)) = (&a.timeline, &out.run) {
        timeline::atomic::write_with(path, |w| timeline::write::jsonl::write_run(w, run)).map_err(super::output::write_failed)?;
        tracing::info!("timeline: {} ({} spans, {} counters)", path.display(), run.spans.len(), run.counters.len());
    }
    if let (Some(path), Some(run)) = (&a.cuzk_log, &out.run) {
        super::output::write_atomic(path, timeline::write::cuzk::render(run).as_bytes())?;
        tracing::info!("cuzk log: {}", path.display());
    }
    if let (Some(log), Some(measured), Some(sim_run)) = (&a.compare_to, &measured, &out.run) {
        let par = parity::compare_runs(measured, sim_run);
        let mut dir = super::output::OutputDir::open(&a.out, PARITY_OUTPUTS)?;
        let md = format!("# Parity: {} vs {}\n\n{}", a.config.display(), log.display(), par.markdown());
        dir.write("parity.md", md.as_bytes())?;
        dir.write("parity.json", serde_json::to_string_pretty(&par)?.as_bytes())?;
        #[cfg(feature = "analysis")]
        {
            parity::plot::parity_svg(&par, &dir.join("parity.svg")).map_err(super::output::write_failed)?;
            dir.record("parity.svg");
        }
        dir.finish();
        if !a.json {
            println!("\n{}", par.markdown());
        }
        tracing::info!("parity: {}", a.out.display());
    }
    Ok(ExitCode::SUCCESS)
}
