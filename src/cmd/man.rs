//! `proofscope man -o DIR`: man pages generated from the command line's own definition
//! (clap_mangen): `proofscope.1` and one `proofscope-<command>.1` per subcommand, so the
//! pages say exactly what `--help` says. `man -l DIR/proofscope-analyze.1` reads one.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Output folder for the pages.
    #[arg(short, long, default_value = "man")]
    pub out: PathBuf,
}

pub fn run(a: Args, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let dir = super::output::dir(&a.out)?;
    let mut written = 0;
    let mut page = |c: clap::Command, file: String| -> anyhow::Result<()> {
        let mut buf = Vec::new();
        clap_mangen::Man::new(c).render(&mut buf)?;
        super::output::write_atomic(&dir.join(file), &buf)?;
        written += 1;
        Ok(())
    };
    let name = cmd.get_name().to_string();
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let full = format!("{name}-{}", sub.get_name());
        page(sub.clone().name(full.clone()), format!("{full}.1"))?;
    }
    page(cmd, format!("{name}.1"))?;
    tracing::info!("{written} man pages in {}", dir.display());
    Ok(ExitCode::SUCCESS)
}
