//! `proofscope demo`: the README's main command. Runs a real small pipeline end to end —
//! TEST-ONLY setup on the fly for the embedded default (a PoRep-like circuit of 2^14
//! constraints), 3 proofs × 4 partitions through the engine (GPU if the build and the
//! machine have one, else CPU), every proof verified — then analyses its own timeline and
//! writes the report (the same outputs as `proofscope analyze`) to `./proofscope-demo/`.
//! `demo --sample` instead analyses the cuzk sample log compiled into the binary
//! (3 proofs × 10 partitions of a Phase-8-like engine).

use std::path::PathBuf;
use std::process::ExitCode;

use timeline::analysis::{summarize, AnalyzeOptions};
use timeline::read::read_str;

/// The shared `cuzk-sample.log` fixture.
pub const SAMPLE_LOG: &str = include_str!("../../timeline/assets/cuzk-sample.log");

#[derive(clap::Args)]
pub struct Args {
    /// Analyse the embedded cuzk sample log instead of running the prover.
    #[arg(long)]
    pub sample: bool,
    /// Output directory.
    #[arg(short, long, default_value = "proofscope-demo")]
    pub out: PathBuf,
    /// Print summary.json on stdout instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Constraints per partition of the demo circuit.
    #[arg(long, default_value_t = 1 << 14, value_parser = timeline::bytes::parse_count)]
    pub constraints: u64,
    /// Proofs to make.
    #[arg(long, default_value_t = 3)]
    pub proofs: u32,
    /// Partitions per proof.
    #[arg(long, default_value_t = 4)]
    pub partitions: u32,
    /// cpu, cuda or auto.
    #[arg(long, default_value = "auto")]
    pub backend: String,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.sample {
        sample(&a.out, a.json)
    } else {
        pipeline(&a)
    }
}

/// The real demo: setup, prove through the engine, verify, analyse the own timeline.
pub fn pipeline(a: &Args) -> anyhow::Result<ExitCode> {
    use std::sync::Arc;
    use std::time::Instant;

    use anyhow::Context;
    use prover::circuit::PorepLike;

    // Locked for the whole demo: the prover writes its timeline and proofs here too.
    let mut dir = super::output::OutputDir::open(&a.out, super::analyze::OUTPUTS)?;
    let circuit = PorepLike::new(a.constraints, 0);
    circuit.layout().map_err(anyhow::Error::msg)?;
    tracing::info!("demo: TEST-ONLY setup for {} …", circuit.id());
    let t0 = Instant::now();
    let params = prover::setup::generate_test_params(circuit.clone(), &circuit.id(), 1).context("setup")?;
    let setup_time = t0.elapsed();
    let args = super::prove::Args {
        params: None,
        proofs: a.proofs,
        partitions: a.partitions,
        pw: Some(2),
        gw: Some(2),
        lock: Some(prover::engine::LockMode::Kernels),
        backend: Some(a.backend.clone()),
        verify: true,
        timeline: a.out.join("run.jsonl"),
        cuzk_log: Some(a.out.join("run.cuzk.log")),
        out: a.out.join("proofs"),
        witness_seed: 7,
        quiet: a.json,
        ..Default::default()
    };
    tracing::info!("demo: setup {:.2} s; proving {} proofs × {} partitions …", setup_time.as_secs_f64(), a.proofs, a.partitions);
    let outcome = super::prove::run_engine(&args, super::prove::ParamsIn::Ready { params: Arc::new(params), load: setup_time, source: "setup-cpu" })?;
    if outcome.interrupted {
        return Ok(ExitCode::from(130));
    }
    let run = super::analyze::read_log(&args.timeline, None, false)?;
    let mut s = summarize(&run, &AnalyzeOptions::default());
    s.input = Some(format!("proofscope demo: {} proofs × {} partitions of {} on {}", a.proofs, a.partitions, circuit.id(), outcome.backend));
    super::analyze::write_outputs(&timeline::lanes::LaidOut::new(&run), &s, &mut dir, &super::analyze::Outputs::all())?;
    let failed = !dir.failed().is_empty() || outcome.write_errors > 0;
    let written = dir.finish();
    super::analyze::print_warnings(&s);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!(
            "proved      {} of {} proofs ({} verified), {:.2} s/proof on {} (setup {:.2} s, TEST-ONLY)",
            outcome.results.len() - outcome.failed,
            outcome.results.len(),
            outcome.results.len() - outcome.failed,
            outcome.seconds_per_proof(),
            outcome.backend,
            outcome.params_load.as_secs_f64()
        );
        super::analyze::print_human(&s, &a.out, &written);
        println!("open        {}/report.md", a.out.display());
    }
    Ok(if outcome.failed > 0 || failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The sample-log demo: analyse the embedded log and write the report directory.
pub fn sample(out: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    let run = read_str(SAMPLE_LOG, None);
    let mut s = summarize(&run, &AnalyzeOptions::default());
    s.input = Some("cuzk-sample.log (embedded sample)".into());
    let mut dir = super::output::OutputDir::open(out, super::analyze::OUTPUTS)?;
    super::analyze::write_outputs(&timeline::lanes::LaidOut::new(&run), &s, &mut dir, &super::analyze::Outputs::all())?;
    let failed = !dir.failed().is_empty();
    let written = dir.finish();
    super::analyze::print_warnings(&s);
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        super::analyze::print_human(&s, out, &written);
        println!("open        {}/report.md", out.display());
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
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

    #[test]
    fn demo_pipeline_proves_and_analyses_its_own_timeline() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("demo");
        let a = Args { sample: false, out: out.clone(), json: true, constraints: 1 << 8, proofs: 1, partitions: 2, backend: "cpu".into() };
        assert_eq!(pipeline(&a).unwrap(), ExitCode::SUCCESS);
        assert!(out.join("report.md").exists());
        assert!(out.join("proofs/proof-0000.proof").exists());
        let run = timeline::read::read_path(&out.join("run.jsonl"), None).unwrap();
        assert!(!run.diagnostics.has_warnings(), "{:?}", run.diagnostics);
        let s = summarize(&run, &AnalyzeOptions::default());
        assert!(!s.diagnostics.has_warnings());
        let cuzk = timeline::read::read_path(&out.join("run.cuzk.log"), None).unwrap();
        assert!(!cuzk.diagnostics.has_warnings(), "{:?}", cuzk.diagnostics);
        assert_eq!(cuzk.spans_of(&timeline::SpanKind::Gpu).count(), 2);
    }
}
