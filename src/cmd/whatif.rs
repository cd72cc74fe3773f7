//! `proofscope whatif LOG [LOG…] [--base CONFIG] [--levels 10,25,50] [-o DIR]`: calibrate a
//! model from measured logs, then simulate every lever — each phase 10/25/50 % faster, more
//! cores, one more GPU, twice the RAM — and print what each buys in s/proof and what binds
//! afterwards (simulator::whatif). Writes DIR/whatif.md and DIR/whatif.json with -o.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Measured logs of the same machine (cuzk daemon logs or proofscope JSON lines).
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Config supplying what a log cannot tell (machine, memory, CPU demands).
    #[arg(long)]
    pub base: Option<PathBuf>,
    /// Override keys of the calibrated model first (e.g. --set c=20 for a longer run).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// How much faster each phase is made, percent (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "10,25,50")]
    pub levels: Vec<f64>,
    /// Print the table as JSON.
    #[arg(long)]
    pub json: bool,
    /// Output folder: whatif.md, whatif.json and the model it started from (model.toml).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Read logs whose schema_version is newer than this proofscope's.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(bad) = a.levels.iter().find(|l| !(l.is_finite() && **l > 0.0 && **l < 100.0)) {
        anyhow::bail!("--levels: {bad} is not a percentage between 0 and 100 (exclusive)");
    }
    let mut settings = Vec::new();
    for kv in &a.set {
        settings.push(timeline::settings::split_assignment(kv)?);
    }
    let cal = super::calibrate::calibrate_logs(&a.logs, a.base.as_deref(), a.force, None)?;
    let mut model = cal.config.clone();
    for (k, v) in settings {
        model.set(k, v)?;
    }
    model.validate()?;
    let w = simulator::whatif::run(&model, &a.levels);
    let md = format!("# What if — {}\n\n{}", a.logs.iter().map(|l| l.display().to_string()).collect::<Vec<_>>().join(", "), w.markdown());
    if let Some(out) = &a.out {
        let dir = super::output::dir(out)?;
        super::output::write_atomic(&dir.join("whatif.md"), md.as_bytes())?;
        super::output::write_atomic(&dir.join("whatif.json"), (serde_json::to_string_pretty(&w)? + "\n").as_bytes())?;
        super::output::write_atomic(&dir.join("model.toml"), cal.to_toml().as_bytes())?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&w)?);
    } else {
        print!("{md}");
    }
    Ok(ExitCode::SUCCESS)
}
