//! `proofscope sweep CONFIG --vary pw=1..16 --vary gw=1,2,3 --vary lock=kernels,two_lock
//! [-o DIR] [--csv DIR]`: simulate every combination in parallel (with a progress bar) and
//! write the table (sweep.md, sweep.parquet, sweep.json; sweep.csv with --csv), the charts (s/proof, peak RAM and GPU
//! utilisation against pw, one line per gw) and the recommendation per RAM budget.

use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use simulator::sweep::{self, Vary};
use simulator::Config;

#[derive(clap::Args)]
pub struct Args {
    /// Model config (TOML); examples in simulator/configs/.
    pub config: PathBuf,
    /// An axis: key=a..b (integers, optional :step), or key=x,y,z. Repeat for more axes.
    /// Keys: pw gw lock gpus c j partitions queue split prestage permit_until_send
    /// device_global_sync ram total_budget (sizes: 128GiB) vram cores bandwidth pcie slope
    /// knee seed, or any section.key of the config.
    #[arg(long, value_name = "KEY=VALUES", required = true)]
    pub vary: Vec<Vary>,
    /// Output directory (default: out/sweep-<config name>).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Skip the charts.
    #[arg(long)]
    pub no_charts: bool,
    /// Also write the table as CSV: DIR/sweep.csv (the columns of sweep.parquet).
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Override a config key before sweeping (e.g. --set c=20).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Replications per point for a prediction interval (a column of sweep.md, a band on
    /// the s/proof chart); 0: none (the default: sweeps stay fast).
    #[arg(long, default_value_t = 0)]
    pub replications: u32,
    /// A cuzk daemon configuration file (cuzk.toml) applied to the model before --set and
    /// the axes (as in simulate).
    #[arg(long, value_name = "FILE")]
    pub cuzk_config: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let base = super::simulate::load_config(&a.config, a.cuzk_config.as_deref(), None, &a.set)?;
    let stem = a.config.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "config".into());
    let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(format!("sweep-{stem}")));
    super::output::check_dir(&dir)?;
    if let Some(c) = &a.csv {
        super::output::check_folder("--csv", c)?;
    }
    // Every combination is validated before any simulation or file.
    let points = sweep::expand(&base, &a.vary)?;
    let mut out = super::output::OutputDir::open(&dir, OUTPUTS)?;
    let rows = run_sweep(&base, &a.vary, points, &mut out, !a.no_charts, a.replications)?;
    let mut failed = out.has_failures();
    out.finish();
    if let Some(c) = &a.csv {
        failed |= write_csv(&rows, &a.vary, c)?;
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `--csv DIR`: DIR/sweep.csv (its own locked folder; it may be -o's). Returns whether it
/// could not be written (named on stderr).
fn write_csv(rows: &[sweep::Row], axes: &[Vary], csv: &std::path::Path) -> anyhow::Result<bool> {
    #[cfg(feature = "analysis")]
    {
        let mut d = super::output::OutputDir::open(csv, &["sweep.csv"])?;
        match simulator::sweep::outputs::write_csv(rows, axes, &d.join("sweep.csv")) {
            Ok(()) => {
                d.record("sweep.csv");
                tracing::info!("wrote {}", d.join("sweep.csv").display());
            }
            Err(e) => d.fail("sweep.csv", format!("{e:#}")),
        }
        let failed = d.has_failures();
        d.finish();
        Ok(failed)
    }
    #[cfg(not(feature = "analysis"))]
    {
        let _ = (rows, axes);
        anyhow::bail!("--csv {}: this proofscope was built without the `analysis` feature (no tables)", csv.display())
    }
}

/// Every file a sweep may write into its folder (predict's folder holds them too).
pub const OUTPUTS: &[&str] = &["sweep.md", "sweep.json", "sweep.parquet", "s_per_proof.svg", "peak_ram.svg", "gpu_util.svg", "sweep.csv"];

/// Simulate the (expanded, validated) points, print the table and write the outputs into
/// `dir` (shared with predict).
pub fn run_sweep(base: &Config, axes: &[Vary], points: Vec<sweep::Point>, dir: &mut super::output::OutputDir, charts: bool, replications: u32) -> anyhow::Result<Vec<sweep::Row>> {
    let pb = ProgressBar::new(points.len() as u64);
    pb.set_style(
        ProgressStyle::with_template("{spinner} simulating {pos}/{len} configurations [{bar:30}] {per_sec} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let t0 = std::time::Instant::now();
    let rows = sweep::run_points_replicated(&points, replications, &|| pb.inc(1));
    pb.finish_and_clear();
    let elapsed = t0.elapsed();
    let md = sweep::markdown(&rows, axes);
    println!("{md}");
    tracing::info!("{} configurations simulated in {:.1} ms", rows.len(), elapsed.as_secs_f64() * 1e3);
    let title = format!("# Sweep of {}\n\nAxes: {}\n\n", if base.name.is_empty() { "(unnamed)" } else { &base.name }, axes.iter().map(|a| format!("{}={}", a.key, a.values.join(","))).collect::<Vec<_>>().join("  "));
    // An output that cannot be written is named and the others are still written (the
    // command then exits 1).
    dir.try_write("sweep.md", format!("{title}{md}").as_bytes());
    // Infeasible points with null figures and their failure (sweep::JsonRow).
    dir.try_write("sweep.json", serde_json::to_string_pretty(&sweep::json_rows(&rows))?.as_bytes());
    #[cfg(feature = "analysis")]
    {
        match simulator::sweep::outputs::write_parquet(&rows, axes, &dir.join("sweep.parquet")) {
            Ok(()) => dir.record("sweep.parquet"),
            Err(e) => dir.fail("sweep.parquet", format!("{e:#}")),
        }
        if charts {
            match simulator::sweep::outputs::write_charts(&rows, axes, dir.path()) {
                Ok(paths) => {
                    for p in paths {
                        dir.record(&p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
                    }
                }
                Err(e) => dir.fail("the charts", format!("{e:#}")),
            }
        }
    }
    #[cfg(not(feature = "analysis"))]
    let _ = charts;
    for w in dir.written() {
        tracing::info!("wrote {}", dir.join(w).display());
    }
    Ok(rows)
}
