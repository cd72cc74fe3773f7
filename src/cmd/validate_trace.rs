//! `proofscope validate-trace FILE`: check a Chrome trace-event JSON (the `trace.json`
//! that `analyze` writes, or any trace meant for Perfetto) with
//! `timeline::export::validate::validate_trace`, so that a user with a suspicious trace
//! gets the list of problems (slices partially overlapping on a thread, unmatched async
//! pairs, dangling flows, unnamed threads...) instead of a silently wrong picture.
//! Exit 0 when valid (counts printed), 1 with the problems on stderr, 2 when the file
//! cannot be read. A gzip- or zstd-compressed trace is read as the trace it holds.

use std::path::PathBuf;
use std::process::ExitCode;

use timeline::export::validate::{validate_trace_str, TraceIssue, TraceStats};

#[derive(clap::Args)]
pub struct Args {
    /// The trace file (Chrome trace-event JSON: an array, or an object with `traceEvents`;
    /// gzip- or zstd-compressed or not).
    pub file: PathBuf,
    /// List at most this many problems (0 = all).
    #[arg(long, default_value_t = 50)]
    pub max_problems: usize,
}

/// Read (gunzipping or zstd-decompressing it when it is: the traces kept in reports/ are
/// gzipped) and validate the file; `Err` only when it cannot be read.
pub fn check(a: &Args) -> anyhow::Result<Result<TraceStats, Vec<TraceIssue>>> {
    Ok(validate_trace_str(&super::input::read_text(&a.file)?))
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match check(&a)? {
        Ok(s) => {
            println!(
                "{}: valid trace: {} events, {} slices (max depth {}), {} async pairs, {} flows, {} counter samples, {} processes, {} threads",
                a.file.display(),
                s.events,
                s.slices,
                s.max_depth,
                s.async_pairs,
                s.flows,
                s.counter_samples,
                s.processes,
                s.threads
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(issues) => {
            let shown = if a.max_problems == 0 { issues.len() } else { issues.len().min(a.max_problems) };
            eprintln!("{}: invalid trace: {} problem(s)", a.file.display(), issues.len());
            for i in &issues[..shown] {
                eprintln!("  {i}");
            }
            if shown < issues.len() {
                eprintln!("  … and {} more (--max-problems 0 lists all)", issues.len() - shown);
            }
            Ok(ExitCode::from(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(file: PathBuf) -> Args {
        Args { file, max_problems: 50 }
    }

    fn code(c: ExitCode) -> String {
        format!("{c:?}")
    }

    #[test]
    fn the_trace_written_by_analyze_validates() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sample.log");
        std::fs::write(&log, include_str!("../../timeline/assets/cuzk-sample.log")).unwrap();
        let out = dir.path().join("report");
        let a = super::super::analyze::Args {
            log: vec![log],
            out: Some(out.clone()),
            json: false,
            labels: vec![],
            strict: true,
            force: false,
            min_gap_ms: 1.0,
            format: None,
            no_charts: false,
            charts: vec![],
            no_tables: false,
            csv: None,
            window: None,
        };
        super::super::analyze::run(a).unwrap();
        let trace = out.join("trace.json");
        let stats = check(&args(trace.clone())).unwrap().expect("analyze's trace.json must validate");
        // The sample has 3 proofs × 10 partitions: 30 synthesis and 30 gpu slices at least,
        // and one synthesis→gpu flow per partition.
        assert!(stats.slices >= 60, "{stats:?}");
        assert_eq!(stats.flows, 30, "{stats:?}");
        assert!(stats.processes >= 2, "{stats:?}");
        assert_eq!(code(run(args(trace.clone())).unwrap()), code(ExitCode::SUCCESS));
        // Gzipped (as in reports/): the same trace, the same answer.
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&std::fs::read(&trace).unwrap()).unwrap();
        let tgz = dir.path().join("trace.json.gz");
        std::fs::write(&tgz, gz.finish().unwrap()).unwrap();
        assert_eq!(check(&args(tgz.clone())).unwrap().expect("the gzipped trace validates"), stats);
        // A damaged gzip stream is an error naming the file (exit 2), not "invalid trace".
        let bytes = std::fs::read(&tgz).unwrap();
        std::fs::write(&tgz, &bytes[..bytes.len() / 2]).unwrap();
        assert!(format!("{:#}", check(&args(tgz)).unwrap_err()).contains("trace.json.gz"));
    }

    #[test]
    fn a_broken_trace_exits_1_and_a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        // Two slices on one thread that overlap partially, and a thread without a name.
        let bad = r#"{"traceEvents":[
            {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}},
            {"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10},
            {"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":10}
        ]}"#;
        let f = dir.path().join("bad.json");
        std::fs::write(&f, bad).unwrap();
        let issues = check(&args(f.clone())).unwrap().unwrap_err();
        assert!(issues.iter().any(|i| i.message.contains("overlap")), "{issues:?}");
        assert!(issues.iter().any(|i| i.message.contains("thread_name")), "{issues:?}");
        assert_eq!(code(run(args(f)).unwrap()), code(ExitCode::from(1)));

        let nj = dir.path().join("notjson.json");
        std::fs::write(&nj, "{ nope").unwrap();
        assert_eq!(code(run(args(nj)).unwrap()), code(ExitCode::from(1)));

        let err = run(args(dir.path().join("missing.json"))).unwrap_err();
        assert!(format!("{err:#}").contains("missing.json"));
    }
}
