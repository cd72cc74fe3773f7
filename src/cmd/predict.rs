//! `proofscope predict LOG [LOG...] [--base CONFIG] [--vary KEY=VALUES]... [-o DIR]`:
//! calibrate a model from measured logs, check it against the first log (parity), then
//! predict other configurations of the same machine with a sweep.

use std::fs;
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
    /// Output directory (model.toml, parity.*, sweep.*).
    #[arg(short, long, default_value = "out/predict")]
    pub out: PathBuf,
    /// Skip the sweep's charts.
    #[arg(long)]
    pub no_charts: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let cal = super::calibrate::calibrate_logs(&a.logs, a.base.as_deref())?;
    fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    fs::write(a.out.join("model.toml"), cal.to_toml())?;
    // How well does the calibrated model reproduce the first measured run?
    let measured = timeline::read::read_path(&a.logs[0], None)?;
    let sim = simulate(&cal.config, Options { record: true });
    if let Some(sim_run) = &sim.run {
        let par = parity::compare_runs(&measured, sim_run);
        println!("## Parity of the calibrated model with {}\n\n{}", a.logs[0].display(), par.markdown());
        fs::write(a.out.join("parity.md"), par.markdown())?;
        fs::write(a.out.join("parity.json"), serde_json::to_string_pretty(&par)?)?;
        #[cfg(feature = "analysis")]
        parity::plot::parity_svg(&par, &a.out.join("parity.svg"))?;
    }
    let mut model = cal.config.clone();
    for kv in &a.set {
        let (k, v) = kv.split_once('=').with_context(|| format!("--set `{kv}`: expected KEY=VALUE"))?;
        model.set(k, v)?;
    }
    model.validate()?;
    if a.vary.is_empty() {
        print!("{}", simulate(&model, Options::default()).result.render_text());
    } else {
        println!("## Predictions\n");
        super::sweep::run_sweep(&model, &a.vary, &a.out, !a.no_charts)?;
    }
    tracing::info!("wrote {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
