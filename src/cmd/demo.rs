//! `proofscope demo [--sample] [-o DIR]`: analyse the cuzk sample log compiled into the
//! binary (3 proofs × 10 partitions of a Phase-8-like engine) and write a full report
//! with pictures to `./proofscope-demo/`. Until the prover can run a demo proof batch,
//! `--sample` is also what runs without it; it stays as the way to get the sample report.

use std::path::PathBuf;
use std::process::ExitCode;

use timeline::analysis::{summarize, AnalyzeOptions};
use timeline::read::read_str;

/// The shared `cuzk-sample.log` fixture.
pub const SAMPLE_LOG: &str = include_str!("../../timeline/tests/data/cuzk-sample.log");

#[derive(clap::Args)]
pub struct Args {
    /// Analyse the embedded cuzk sample log (the default until the prover's demo run exists).
    #[arg(long)]
    pub sample: bool,
    /// Output directory.
    #[arg(short, long, default_value = "proofscope-demo")]
    pub out: PathBuf,
    /// Print summary.json on stdout instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let _ = a.sample;
    sample(&a.out, a.json)
}

/// The sample-log demo: analyse the embedded log and write the report directory.
pub fn sample(out: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    let run = read_str(SAMPLE_LOG, None);
    let mut s = summarize(&run, &AnalyzeOptions::default());
    s.input = Some("cuzk-sample.log (embedded sample)".into());
    let written = super::analyze::write_outputs(&run, &s, out, true)?;
    super::analyze::print_warnings(&s);
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        super::analyze::print_human(&s, out, &written);
        println!("open        {}/report.md", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_writes_a_report() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("demo");
        sample(&out, false).unwrap();
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(md.contains("## Verdict: synthesis"));
        #[cfg(feature = "analysis")]
        for f in ["waterfall.svg", "waterfall.png", "utilization.svg", "gaps.svg", "phases.svg", "trace.json", "partitions.parquet"] {
            assert!(out.join(f).exists(), "{f} missing");
            assert!(md.contains(f) || !f.ends_with(".svg"), "{f} not embedded");
        }
    }
}
