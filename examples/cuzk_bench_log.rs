//! Writes the analyzer benches' generated cuzk log (`benches/common/cuzk_log.rs`) to a
//! file, so that the whole `proofscope analyze` command can be timed on it:
//!
//!     cargo run --release --example cuzk_bench_log -- 1000000 /tmp/cuzk-1m.log
//!
//! Arguments: the number of TIMELINE events (6 per partition, 10 partitions per proof;
//! default 1 000 000) and the file (default `cuzk-bench.log`). The file is written whole
//! or not at all (a temporary file beside it, renamed into place). Plain `std`: it also
//! builds alone, `rustc -O --edition 2021 examples/cuzk_bench_log.rs`.

#[path = "../benches/common/cuzk_log.rs"]
mod cuzk_log;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let n = match args.next().map(|a| a.replace('_', "").parse::<usize>()) {
        None => 1_000_000,
        Some(Ok(n)) if n >= 6 => n,
        Some(_) => {
            eprintln!("usage: cuzk_bench_log [EVENTS ≥ 6] [FILE]");
            return ExitCode::from(2);
        }
    };
    let path = PathBuf::from(args.next().unwrap_or_else(|| "cuzk-bench.log".into()));
    let text = cuzk_log::cuzk_log(n);
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    if let Err(e) = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &path)) {
        let _ = std::fs::remove_file(&tmp);
        eprintln!("cannot write {}: {e}", path.display());
        return ExitCode::from(1);
    }
    println!("{}: {} events, {} bytes", path.display(), n / 6 * 6, text.len());
    ExitCode::SUCCESS
}
