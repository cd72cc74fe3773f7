//! The `proofscope` command line: wires the timeline, prover and simulator crates
//! together and owns no logic of its own. Each subcommand lives in `src/cmd/<name>.rs`.

use clap::{Parser, Subcommand};

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
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result: anyhow::Result<std::process::ExitCode> = match cli.command {};
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
