//! The `proofscope` command line: wires the timeline, prover and simulator crates
//! together and owns no logic of its own. Each subcommand lives in `src/cmd/<name>.rs`.

use clap::{CommandFactory, Parser, Subcommand};

mod cmd;

#[derive(Parser)]
#[command(name = "proofscope", version, about = "Where does the time of a Groth16 prover go? Prove, analyse, simulate.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    // Each subcommand: one variant here, one module in src/cmd/. Keep one line per variant.
    /// Analyse a cuzk daemon log or proofscope JSON lines: verdict, summary.json, report.md, charts, tables.
    Analyze(cmd::analyze::Args),
    /// Compare runs side by side (logs, summary.json files or report directories; the first is the baseline).
    Compare(cmd::compare::Args),
    /// Write a full report of the cuzk sample log compiled into the binary (`--sample`).
    Demo(cmd::demo::Args),
    /// CUDA backend: kernel checks against the CPU path and device timings (`--features cuda`).
    Gpu(cmd::gpu::Args),
    /// Print the R1CS shape of a benchmark circuit of N constraints (or, with
    /// --synthesis-bench, time its synthesis on the circuit path against the PCE).
    Circuit(cmd::circuit::Args),
    /// TEST-ONLY seeded trusted setup: a parameter file for the PoRep-like circuit of N constraints.
    Setup(cmd::setup::Args),
    /// Prove J proofs × K partitions through the engine; timeline (JSON lines, cuzk log) and proofs out.
    Prove(cmd::prove::Args),
    /// Simulate a pipeline config: s/proof, utilisations, memory peaks, floors, verdict; timeline and parity out.
    Simulate(cmd::simulate::Args),
    /// Simulate every combination of --vary axes in parallel: table, Parquet, charts, RAM-budget picks.
    Sweep(cmd::sweep::Args),
    /// Fit a simulator model (costs, CPU capacity or contention) from measured logs; writes a model TOML.
    Calibrate(cmd::calibrate::Args),
    /// Calibrate from logs, check parity with the first, and predict other configurations.
    Predict(cmd::predict::Args),
    /// Campaign reports: the base config of the measured machine (`base`), the scoring of the predictions (`score`).
    Campaign(cmd::campaign::Args),
    /// Check a Chrome trace JSON (e.g. analyze's trace.json) for what Perfetto needs; exit 1 listing the problems.
    ValidateTrace(cmd::validate_trace::Args),
    /// Calibrate from logs, then predict what each phase made faster or resource made larger would buy.
    Whatif(cmd::whatif::Args),
    /// The JSON Schemas of the JSON outputs (summary.json, simulate --json, sweep.json, ...), generated from the types.
    Schema(cmd::schema::Args),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Write the man pages (proofscope.1 and one per command) into a folder.
    Man(cmd::man::Args),
}

/// The log filter without RUST_LOG.
const DEFAULT_LOG: &str = "warn,proofscope=info,timeline=info,simulator=info,prover=info";

fn main() -> std::process::ExitCode {
    // Diagnostics of every crate go through `tracing` to stderr: by default our crates'
    // info (what was written where) and everyone's warnings; RUST_LOG=debug shows the
    // readers', analyses' and simulator's steps with their timings.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| DEFAULT_LOG.into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .with_target(false)
        .init();
    let cli = Cli::parse();
    let result: anyhow::Result<std::process::ExitCode> = match cli.command {
        Command::Analyze(a) => cmd::analyze::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Gpu(a) => cmd::gpu::run(a),
        Command::Circuit(a) => cmd::circuit::run(a),
        Command::Setup(a) => cmd::setup::run(a),
        Command::Prove(a) => cmd::prove::run(a),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Predict(a) => cmd::predict::run(a),
        Command::Campaign(a) => cmd::campaign::run(a),
        Command::ValidateTrace(a) => cmd::validate_trace::run(a),
        Command::Whatif(a) => cmd::whatif::run(a),
        Command::Schema(a) => cmd::schema::run(a),
        Command::Completions(a) => cmd::completions::run(a, Cli::command()),
        Command::Man(a) => cmd::man::run(a, Cli::command()),
    };
    match result {
        Ok(code) => code,
        // Exit codes (docs/reference/cli.md): 0 done, 1 the work failed (a proof failed,
        // --strict found bad lines, a check fell short, an output could not be written),
        // 2 usage or input errors.
        // An output that could not be written (a full disk) is the work failing: 1.
        Err(e) if e.chain().any(|c| c.is::<cmd::output::WriteFailed>()) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every flag and argument of every command says what it is for (`--help`, the man
    /// pages and the completions are generated from this text).
    #[test]
    fn every_argument_has_help() {
        Cli::command().debug_assert();
        let mut missing = Vec::new();
        fn walk(c: &clap::Command, path: String, missing: &mut Vec<String>) {
            for a in c.get_arguments() {
                let builtin = matches!(a.get_id().as_str(), "help" | "version");
                if !builtin && a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} {}", a.get_id()));
                }
            }
            for s in c.get_subcommands() {
                if s.get_about().is_none() && s.get_name() != "help" {
                    missing.push(format!("{path} {} (no about)", s.get_name()));
                }
                walk(s, format!("{path} {}", s.get_name()), missing);
            }
        }
        walk(&Cli::command(), "proofscope".into(), &mut missing);
        assert!(missing.is_empty(), "arguments without help text: {missing:#?}");
    }
}
