//! `proofscope calibrate LOG [LOG...] -o DIR [--base CONFIG]`: fit the per-phase
//! costs and the host's CPU capacity (or a synthesis contention slope) of a model from
//! measured timelines (cuzk logs or our JSON lines), so that `simulate` and `sweep` can
//! predict other configurations of the same machine. Logs at different pw, one with
//! syntheses alone, identify the capacity. Writes
//! `DIR/model.toml` (the model, with the fit notes in its header) and prints the fit.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use simulator::calibrate::{calibrate, default_base, Calibration};
use simulator::Config;

#[derive(clap::Args)]
pub struct Args {
    /// Measured logs of the same machine (cuzk daemon logs or proofscope JSON lines).
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Output folder: the model goes to DIR/model.toml.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Config supplying what a log cannot tell (machine, memory, CPU demands); default:
    /// the cuzk reference box (simulator/configs/phase8.toml).
    #[arg(long)]
    pub base: Option<PathBuf>,
    /// Scale the fitted per-partition costs and sizes to this many constraints per
    /// partition (`2^27`, `134217728`): synthesis, prep, batch additions and sizes linearly,
    /// NTTs as n log n, MSMs as n / log n, assembly constant (docs: simulator.md#calibration).
    #[arg(long, value_name = "N", value_parser = timeline::bytes::parse_count)]
    pub scale_to: Option<u64>,
    /// The measured runs' constraints per partition, when their meta does not say it.
    #[arg(long, value_name = "N", value_parser = timeline::bytes::parse_count, requires = "scale_to")]
    pub from_constraints: Option<u64>,
    /// Read logs whose schema_version is newer than this proofscope's.
    #[arg(long)]
    pub force: bool,
}

/// `--scale-to` and where the measured size comes from.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    pub to: u64,
    pub from: Option<u64>,
}

/// Read the logs and calibrate (shared with predict).
pub fn calibrate_logs(logs: &[PathBuf], base: Option<&Path>, force: bool, scale: Option<Scale>) -> anyhow::Result<Calibration> {
    let base_path = base;
    let base: Config = match base {
        Some(p) => Config::load(p)?,
        None => default_base(),
    };
    let mut runs = Vec::new();
    for l in logs {
        let run = super::input::read_run(l, None, force)?;
        let d = &run.diagnostics;
        if d.lines_rejected > 0 {
            tracing::warn!("{}: {} lines rejected by the reader ({} duplicates, dropped)", l.display(), d.lines_rejected, d.duplicates);
        }
        runs.push((l.display().to_string(), run));
    }
    let mut cal = calibrate(&runs, &base)?;
    if let Some(sc) = scale {
        let from = match sc.from {
            Some(n) => n,
            None => {
                let sizes: std::collections::BTreeSet<u64> = runs.iter().filter_map(|(_, r)| r.meta.config.constraints).collect();
                match (sizes.len(), sizes.first()) {
                    (1, Some(&n)) if runs.iter().all(|(_, r)| r.meta.config.constraints.is_some()) => n,
                    (0, _) => anyhow::bail!("--scale-to: the logs' meta do not give their constraints per partition; add --from-constraints N"),
                    _ => anyhow::bail!("--scale-to: the logs are of different sizes ({sizes:?}) or some do not say theirs; calibrate on one size, or give --from-constraints N"),
                }
            }
        };
        let share = simulator::calibrate::ntt_share(&runs);
        let notes = simulator::calibrate::scale_to(&mut cal.config, from, sc.to, share);
        cal.report.notes.extend(notes);
        if cal.report.memory_from_run && from != sc.to {
            let note = simulator::calibrate::base_footprints(&mut cal.config, &base);
            cal.report.notes.push(note);
            cal.report.memory_from_run = false;
        }
    }
    if !cal.report.assumed_machine.is_empty() {
        let whose = match base_path {
            Some(p) => format!("taken from {}", p.display()),
            None => "ASSUMED from the cuzk reference box (simulator/configs/phase8.toml; give --base to say what your machine is)".to_string(),
        };
        tracing::warn!("the logs do not say {}: {whose}", cal.report.assumed_machine.join(", "));
    }
    cal.config.validate().context("the calibrated model does not validate")?;
    Ok(cal)
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    super::output::check_dir(&a.out)?;
    let scale = a.scale_to.map(|to| Scale { to, from: a.from_constraints });
    let cal = calibrate_logs(&a.logs, a.base.as_deref(), a.force, scale)?;
    let mut dir = super::output::OutputDir::open(&a.out, &["model.toml"])?;
    dir.write("model.toml", cal.to_toml().as_bytes())?;
    let model = dir.join("model.toml");
    dir.finish();
    let c = &cal.config;
    println!("model: {}", model.display());
    println!(
        "shape: {} proofs x {} partitions, pw={}, gw={}, gpus={}, j={}",
        c.pipeline.proofs, c.pipeline.partitions, c.pipeline.pw, c.pipeline.gw, c.machine.gpus, c.pipeline.in_flight
    );
    println!(
        "costs (ms): synth {:.0}, prep {:.0}, kernels {:.0} ({}), b_g2 {:.0}, epilogue {:.0}",
        c.costs.synth.mean_ms(),
        c.costs.prep_msm.mean_ms(),
        cal.report.device_time_per_partition_ms,
        cal.report.gpu_source,
        c.costs.b_g2_msm.mean_ms(),
        c.costs.epilogue.mean_ms()
    );
    println!("cpu capacity: {:.2} of {} cores", c.machine.capacity(), c.machine.cpu_cores);
    println!("contention: knee {:.1}, slope {:.4}", c.contention.synth_knee, c.contention.synth_slope);
    for n in &cal.report.notes {
        println!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}
