//! `proofscope predict LOG [LOG...] [--base CONFIG] [--vary KEY=VALUES]... [-o DIR]`:
//! calibrate a model from measured logs, check it against the first log (parity), then
//! predict other configurations of the same machine with a sweep.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use simulator::sweep::Vary;
use simulator::{parity, simulate, Options};

#[derive(clap::Args)]
pub struct Args {
    /// Measured logs of the same machine (cuzk daemon logs or proofscope JSON lines).
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Config supplying what a log cannot tell (default: the cuzk reference box).
    #[arg(long)]
    pub base: Option<PathBuf>,
    /// Axes to predict over (as in sweep); none: only the parity check.
    #[arg(long, value_name = "KEY=VALUES")]
    pub vary: Vec<Vary>,
    /// Override keys of the calibrated model before sweeping (e.g. --set c=20).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A cuzk daemon configuration file (cuzk.toml) applied to the calibrated model before
    /// --set and the axes (the parity check stays on the calibrated model as measured).
    #[arg(long, value_name = "FILE")]
    pub cuzk_config: Option<PathBuf>,
    /// Replications per prediction for its interval (0 or 1: none).
    #[arg(long, default_value_t = simulator::interval::DEFAULT_REPLICATIONS)]
    pub replications: u32,
    /// Output directory (model.toml, parity.*, sweep.*).
    #[arg(short, long, default_value = "out/predict")]
    pub out: PathBuf,
    /// Skip the sweep's charts.
    #[arg(long)]
    pub no_charts: bool,
    /// Read logs whose schema_version is newer than this proofscope's.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    super::output::check_dir(&a.out)?;
    let cal = super::calibrate::calibrate_logs(&a.logs, a.base.as_deref(), a.force, None)?;
    // Every argument is checked before any file is written: the overrides, then every
    // combination of the axes against the calibrated model.
    let mut model = cal.config.clone();
    if let Some(c) = &a.cuzk_config {
        super::simulate::import_cuzk(&mut model, c)?;
    }
    for kv in &a.set {
        let (k, v) = timeline::settings::split_assignment(kv)?;
        model.set(k, v).with_context(|| format!("--set {kv}"))?;
    }
    model.validate().context("the calibrated model after --set")?;
    let points = if a.vary.is_empty() { None } else { Some(simulator::sweep::expand(&model, &a.vary)?) };
    let measured = super::input::read_run(&a.logs[0], None, a.force)?;
    let mut known: Vec<&'static str> = vec!["model.toml"];
    known.extend(super::simulate::PARITY_OUTPUTS);
    known.extend(super::sweep::OUTPUTS);
    let mut dir = super::output::OutputDir::open(&a.out, &known)?;
    dir.write("model.toml", cal.to_toml().as_bytes())?;
    // How well does the calibrated model reproduce the first measured run?
    let sim = simulate(&cal.config, Options { record: true });
    if let Some(sim_run) = &sim.run {
        let par = parity::compare_runs(&measured, sim_run);
        println!("## Parity of the calibrated model with {}\n\n{}", a.logs[0].display(), par.markdown());
        dir.write("parity.md", par.markdown().as_bytes())?;
        dir.write("parity.json", serde_json::to_string_pretty(&par)?.as_bytes())?;
        #[cfg(feature = "analysis")]
        {
            match parity::plot::parity_svg(&par, &dir.join("parity.svg")) {
                Ok(()) => dir.record("parity.svg"),
                Err(e) => dir.fail("parity.svg", format!("{e:#}")),
            }
        }
    }
    match points {
        None => {
            let mut r = simulate(&model, Options::default()).result;
            r.interval = simulator::interval::replicate(&model, a.replications);
            print!("{}", r.render_text());
        }
        Some(points) => {
            println!("## Predictions\n");
            super::sweep::run_sweep(&model, &a.vary, points, &mut dir, !a.no_charts, a.replications)?;
        }
    }
    let failed = dir.has_failures();
    dir.finish();
    tracing::info!("wrote {}", a.out.display());
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
