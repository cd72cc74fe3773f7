//! `proofscope compare A B [C…]`: several runs side by side. Each input is a log (analysed
//! on the fly), a `summary.json`, or a report directory holding one. The first run is the
//! baseline; the table shows s/proof, steady state, GPU utilisation, the binding
//! resource, × baseline, × previous and the p50 of every phase; `--csv DIR` writes the
//! same table as DIR/compare.csv.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use timeline::analysis::compare::compare;
use timeline::analysis::{summarize, AnalyzeOptions, Summary, SUMMARY_SCHEMA_VERSION};

#[derive(clap::Args)]
pub struct Args {
    /// Runs to compare: logs, summary.json files or report directories (first = baseline).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Labels of the runs, comma-separated (default: file or directory names).
    #[arg(long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// Output folder: the table goes to DIR/compare.md and DIR/compare.json (it is printed
    /// to stdout either way).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Print the comparison as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write the table as CSV: DIR/compare.csv (one row per run, a `p50_ms_<phase>`
    /// column per phase).
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Gap threshold used when an input is a log (ms, ≥ 0).
    #[arg(long, default_value_t = 1.0, value_parser = super::input::nonneg_ms)]
    pub min_gap_ms: f64,
    /// Exit 1 when an input is not a usable run (not a log nor a summary, empty, no event,
    /// no completed proof) or its reader rejected lines; without it, a warning.
    #[arg(long)]
    pub strict: bool,
    /// Read inputs whose schema_version is newer than this proofscope's (an error otherwise).
    #[arg(long)]
    pub force: bool,
}

/// Load one input as a Summary: a summary.json (an object with `schema_version` and
/// `throughput`), a directory holding one, or else a log to analyse. A summary of a newer
/// schema is refused unless `force`.
pub fn load(path: &Path, opts: &AnalyzeOptions, force: bool) -> anyhow::Result<Summary> {
    let file = if path.is_dir() { path.join("summary.json") } else { path.to_path_buf() };
    if file.extension().is_some_and(|e| e == "json") || path.is_dir() {
        // A report folder may keep it gzipped (summary.json.gz, as reports/ does).
        let text = super::input::read_json_text(&file)?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            if v.get("schema_version").is_some() && v.get("throughput").is_some() {
                let version = v["schema_version"].as_u64().unwrap_or(0);
                if version > SUMMARY_SCHEMA_VERSION as u64 && !force {
                    anyhow::bail!(
                        "{}: summary schema_version {version} is newer than this proofscope reads ({SUMMARY_SCHEMA_VERSION}); upgrade proofscope, or pass --force to read it anyway",
                        file.display()
                    );
                }
                return serde_json::from_value(v).with_context(|| format!("{} is not a proofscope summary", file.display()));
            }
        }
    }
    let run = super::analyze::read_log(&file, None, force)?;
    let mut s = summarize(&run, opts);
    s.input = Some(file.display().to_string());
    Ok(s)
}

/// What makes an input a poor row of the table: the reader's problems and rejections, or
/// no completed proof at all (a trace.json, a random file: a "0 proofs" row).
pub fn doubts(s: &Summary) -> Vec<String> {
    let d = &s.diagnostics;
    let mut out: Vec<String> = d.problems.clone();
    if d.lines_rejected > 0 || d.open_spans > 0 {
        out.push(format!("{} lines rejected ({} duplicates), {} spans never ended", d.lines_rejected, d.duplicates, d.open_spans));
    }
    if s.proofs_completed == 0 {
        out.push("no completed proof: nothing to compare".into());
    }
    out
}

/// A report directory's name, or a file's stem (the directory of a `summary.json`).
fn label_of(path: &Path) -> String {
    let (p, dir) = if path.file_name().is_some_and(|n| n == "summary.json") {
        (path.parent().unwrap_or(path), true)
    } else {
        (path, path.is_dir())
    };
    let name = if dir { p.file_name() } else { p.file_stem() };
    name.map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let opts = AnalyzeOptions { min_gap_ms: a.min_gap_ms, ..Default::default() };
    if let Some(out) = &a.out {
        super::output::check_dir(out)?;
    }
    if let Some(c) = &a.csv {
        super::output::check_folder("--csv", c)?;
    }
    let mut runs = Vec::new();
    let mut doubtful = false;
    for (i, p) in a.inputs.iter().enumerate() {
        let label = a.labels.get(i).cloned().unwrap_or_else(|| label_of(p));
        let s = load(p, &opts, a.force)?;
        for d in doubts(&s) {
            tracing::warn!("{} ({label}): {d}", p.display());
            doubtful = true;
        }
        runs.push((label, s));
    }
    let c = compare(&runs);
    let md = c.to_markdown();
    if let Some(out) = &a.out {
        let mut dir = super::output::OutputDir::open(out, &["compare.md", "compare.json", "compare.csv"])?;
        dir.write("compare.md", md.as_bytes())?;
        dir.write("compare.json", (serde_json::to_string_pretty(&c)? + "\n").as_bytes())?;
        dir.finish();
    }
    let mut failed = false;
    if let Some(csv) = &a.csv {
        failed = write_csv(&c, csv)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{md}");
    }
    Ok(if failed || (a.strict && doubtful) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `--csv DIR`: DIR/compare.csv (its own locked folder; it may be -o's). Returns whether
/// it could not be written (named on stderr).
fn write_csv(c: &timeline::analysis::compare::Comparison, csv: &Path) -> anyhow::Result<bool> {
    #[cfg(feature = "analysis")]
    {
        let mut d = super::output::OutputDir::open(csv, &["compare.csv"])?;
        let path = d.join("compare.csv");
        let r = timeline::export::tables::compare_frame(c)
            .map_err(|source| timeline::export::parquet::ParquetError::Polars { path: path.display().to_string(), source })
            .and_then(|mut df| timeline::export::csv::write_csv(&mut df, &path));
        match r {
            Ok(()) => {
                d.record("compare.csv");
                tracing::info!("wrote {}", path.display());
            }
            Err(e) => d.fail("compare.csv", e),
        }
        let failed = d.has_failures();
        d.finish();
        Ok(failed)
    }
    #[cfg(not(feature = "analysis"))]
    {
        let _ = c;
        anyhow::bail!("--csv {}: this proofscope was built without the `analysis` feature (no tables)", csv.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const SAMPLE: &str = include_str!("../../timeline/assets/cuzk-sample.log");

    #[test]
    fn compares_a_log_with_its_own_summary() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.log");
        fs::write(&log, SAMPLE).unwrap();
        let opts = AnalyzeOptions::default();
        let s = load(&log, &opts, false).unwrap();
        let sj = dir.path().join("rep").join("summary.json");
        fs::create_dir_all(sj.parent().unwrap()).unwrap();
        fs::write(&sj, serde_json::to_vec(&s).unwrap()).unwrap();
        let from_json = load(&sj, &opts, false).unwrap();
        // (Text JSON may round floats by an ulp: compare the table's numbers.)
        assert_eq!(from_json.steady_state_s_per_proof, s.steady_state_s_per_proof);
        assert_eq!(from_json.idle_gaps, s.idle_gaps);
        assert_eq!(from_json.binding_resource, s.binding_resource);
        let from_dir = load(&dir.path().join("rep"), &opts, false).unwrap();
        assert_eq!(from_dir.steady_state_s_per_proof, s.steady_state_s_per_proof);
        assert_eq!(label_of(&sj), "rep");
        assert_eq!(label_of(&log), "a");
        let out = dir.path().join("cmp");
        let code = run(Args { inputs: vec![log, sj], labels: vec![], out: Some(out.clone()), json: false, csv: None, min_gap_ms: 1.0, strict: true, force: false }).unwrap();
        assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::SUCCESS));
        assert!(out.join("compare.json").exists());
        let md = fs::read_to_string(out.join("compare.md")).unwrap();
        assert!(md.contains("| rep | 3 | 47.64 |") && md.contains("1.00×"), "{md}");
    }

    #[test]
    fn a_jsonl_log_with_one_line_is_read_as_a_log() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("one.json");
        fs::write(&p, r#"{"type":"span","kind":"gpu","start_ns":0,"end_ns":5,"job":"a"}"#).unwrap();
        let s = load(&p, &AnalyzeOptions::default(), false).unwrap();
        assert_eq!(s.run.spans, 1);
        assert_eq!(s.proofs_completed, 1);
    }
}
