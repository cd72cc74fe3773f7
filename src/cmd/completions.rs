//! `proofscope completions SHELL`: the shell completion script, generated from the command
//! line's own definition (clap_complete), so it can never list a flag that does not exist.
//! E.g. `proofscope completions bash > ~/.local/share/bash-completion/completions/proofscope`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

pub fn run(a: Args, mut cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, name, &mut script);
    // A closed pipe (`| head`) is the reader's choice, not an error.
    match std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
