//! How every command reads a log (analyze, compare, calibrate, predict, simulate
//! --compare-to, campaign base, demo): gzip detected (files and stdin), the format detected
//! or forced (an Nsight Systems SQLite export read in place), a progress spinner on big files, a schema version newer than this build
//! refused unless `--force`, and what is wrong with the input as a whole (empty, no event
//! of its format, binary) said on stderr. Line-level warnings are the caller's to print.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use timeline::read::Format;
use timeline::Run;

/// Read `path` (`-` = stdin); see the module doc.
pub fn read_run(path: &Path, format: Option<Format>, force: bool) -> anyhow::Result<Run> {
    let run = read_raw(path, format)?;
    if let Some(v) = timeline::read::unknown_schema(&run) {
        if !force {
            anyhow::bail!(
                "{}: schema_version {v} is newer than this proofscope reads ({}): its fields may mean something else; upgrade proofscope, or pass --force to read it anyway",
                path.display(),
                timeline::SCHEMA_VERSION
            );
        }
    }
    for p in &run.diagnostics.problems {
        tracing::warn!("{}: {p}", path.display());
    }
    Ok(run)
}

/// Read with a progress spinner on big files (drawn only on a terminal).
fn read_raw(path: &Path, format: Option<Format>) -> anyhow::Result<Run> {
    // Stdin, and an Nsight Systems export (SQLite reads it in place, no progress to show).
    let nsys = format == Some(Format::NsysSqlite) || format.is_none() && timeline::read::nsys::is_sqlite_file(path);
    if path.as_os_str() == "-" || nsys {
        return Ok(timeline::read::read_path(path, format)?);
    }
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let pb = if len > 4 << 20 { ProgressBar::new(len) } else { ProgressBar::hidden() };
    pb.set_style(
        ProgressStyle::with_template("{spinner} reading {msg} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(path.display().to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    let name = path.display().to_string();
    let run = timeline::read::read_bytes(pb.wrap_read(f), &name, format);
    pb.finish_and_clear();
    Ok(run?)
}

/// A number of milliseconds ≥ 0 (flags such as --min-gap-ms): NaN and infinities refused.
pub fn nonneg_ms(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a number of milliseconds ≥ 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_schema_needs_force_and_bad_numbers_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("future.jsonl");
        std::fs::write(&p, "{\"type\":\"meta\",\"schema_version\":999,\"source\":\"x\",\"tool_version\":\"9\"}\n{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5,\"job\":\"a\"}\n").unwrap();
        let e = read_run(&p, None, false).unwrap_err().to_string();
        assert!(e.contains("future.jsonl") && e.contains("schema_version 999") && e.contains("--force"), "{e}");
        assert_eq!(read_run(&p, None, true).unwrap().spans.len(), 1);
        for bad in ["NaN", "nan", "inf", "-1", "x", ""] {
            assert!(nonneg_ms(bad).is_err(), "{bad}");
        }
        assert_eq!(nonneg_ms("2.5"), Ok(2.5));
    }
}

/// The text of a JSON output kept in reports/ (a `summary.json`, a parity report), gunzipped
/// or zstd-decompressed when it is (big ones are kept compressed, as `summary.json.gz`):
/// `path` itself, or else `path` + `.gz` beside it.
pub fn read_json_text(path: &Path) -> anyhow::Result<String> {
    let gz = path.with_file_name(format!("{}.gz", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()));
    read_text(if !path.exists() && gz.is_file() { &gz } else { path })
}

/// The whole text of `path`, gunzipped or zstd-decompressed when it is (by magic bytes).
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    use std::io::Read;
    let cannot = || format!("cannot read {}", path.display());
    let f = File::open(path).with_context(cannot)?;
    let mut text = String::new();
    timeline::read::decompressed(f).and_then(|mut r| r.read_to_string(&mut text)).with_context(cannot)?;
    Ok(text)
}

#[cfg(test)]
mod json_text_tests {
    use super::*;

    #[test]
    fn json_text_is_read_plain_or_from_the_gzipped_file_beside_it() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.json"), "{\"x\": 1}").unwrap();
        assert_eq!(read_json_text(&d.path().join("a.json")).unwrap(), "{\"x\": 1}");
        let mut e = flate2::write::GzEncoder::new(std::fs::File::create(d.path().join("b.json.gz")).unwrap(), flate2::Compression::best());
        e.write_all(b"{\"y\": 2}").unwrap();
        e.finish().unwrap();
        assert_eq!(read_json_text(&d.path().join("b.json")).unwrap(), "{\"y\": 2}");
        let err = read_json_text(&d.path().join("c.json")).unwrap_err();
        assert!(format!("{err:#}").contains("c.json"), "{err:#}");
    }
}
