//! The tables of issue 17's data contract through the built binary: `analyze` of a fleet
//! writes key columns (`run_id`, `label`, `host`, `proof_type`) on every table and typed
//! span arguments; `--csv DIR` on `analyze`, `compare` and `sweep` writes the same tables
//! as CSV (same header, same rows); a bad `--csv` folder is a clear error before any work;
//! `sweep.json` has nulls and a `failure` for a VRAM-OOM configuration, like
//! `sweep.parquet`; every Parquet table under reports/ (the working tree's) keeps the
//! contract.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{run, Ran, PHASE8, SAMPLE};
use polars::prelude::*;

const LIMIT: Duration = Duration::from_secs(120);
const TABLES: [&str; 5] = ["spans", "counters", "partitions", "jobs", "gaps"];

fn go(d: &Path, args: &[&str]) -> Ran {
    let r = run(args, d, LIMIT);
    assert!(r.misbehaved().is_none(), "{}", r.misbehaved().unwrap_or_default());
    r
}

fn parquet(p: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).finish().unwrap()
}

/// The CSV at `p` read with `like`'s schema; it must hold the same table.
fn same_csv(p: &Path, like: &DataFrame) {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let header: Vec<&str> = like.get_column_names().into_iter().map(|c| c.as_str()).collect();
    assert_eq!(text.lines().next().unwrap_or(""), header.join(","), "{}", p.display());
    let back = CsvReadOptions::default()
        .with_has_header(true)
        .with_schema(Some(like.schema().clone()))
        .try_into_reader_with_file_path(Some(p.to_path_buf()))
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(back.height(), like.height(), "{}", p.display());
    assert!(back.equals_missing(like), "{}: not the Parquet's table", p.display());
}

fn fleet() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("timeline/tests/data/fleet")
}

#[test]
fn a_fleets_tables_carry_their_keys_and_csv_copies() {
    let d = tempfile::tempdir().unwrap();
    let f = fleet();
    let r = go(d.path(), &["analyze", f.to_str().unwrap(), "-o", "runs", "--no-charts", "--csv", "csv"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let hosts = ["host-a", "host-b", "host-c", "host-d"];
    let mut ids = Vec::new();
    for h in hosts {
        for t in TABLES {
            let df = parquet(&d.path().join(format!("runs/{h}/{t}.parquet")));
            let cols: Vec<&str> = df.get_column_names().into_iter().map(|c| c.as_str()).collect();
            assert_eq!(&cols[..4], ["run_id", "label", "host", "proof_type"], "{h} {t}");
            let label = df.column("label").unwrap().str().unwrap();
            assert!(label.iter().all(|l| l == Some(h)), "{h} {t}");
            same_csv(&d.path().join(format!("csv/{h}/{t}.csv")), &df);
            if t == "spans" {
                ids.push(df.column("run_id").unwrap().str().unwrap().get(0).unwrap().to_string());
                assert_eq!(df.column("gpu_ms").unwrap().dtype(), &DataType::Float64);
                assert_eq!(df.column("lane").unwrap().dtype(), &DataType::Int64);
            }
        }
    }
    ids.dedup();
    assert_eq!(ids.len(), 4, "one run id per host: {ids:?}");
    // host-c is wrapped by journalctl -o json: its host name is known.
    let c = parquet(&d.path().join("runs/host-c/jobs.parquet"));
    assert!(c.column("host").unwrap().str().unwrap().get(0).is_some(), "{c}");
    // host-a mixes PoRep and WinningPoSt: each job keyed by its type.
    let a = parquet(&d.path().join("runs/host-a/spans.parquet"));
    let (job, ty) = (a.column("job").unwrap().str().unwrap(), a.column("proof_type").unwrap().str().unwrap());
    for i in 0..a.height() {
        match job.get(i) {
            Some("a-wp") => assert_eq!(ty.get(i), Some("winning-post")),
            Some("a1" | "a2") => assert_eq!(ty.get(i), Some("porep-c2")),
            _ => {}
        }
    }
    // GPU_END's gpu_ms is a number column, no longer inside args.
    let gpu_ms = a.column("gpu_ms").unwrap().f64().unwrap();
    assert!(gpu_ms.len() > gpu_ms.null_count());
    assert!(a.column("args").unwrap().str().unwrap().iter().all(|s| !s.unwrap_or("").contains("gpu_ms")));
}

#[test]
fn csv_without_o_into_the_report_folder_and_bad_folders() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sample.log"), SAMPLE).unwrap();
    // --json without -o: only the CSVs.
    let r = go(d.path(), &["analyze", "sample.log", "--json", "--csv", "c"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for t in TABLES {
        assert!(d.path().join(format!("c/{t}.csv")).is_file(), "{t}");
    }
    assert!(!d.path().join("out").exists());
    // The report folder itself (its lock taken in turn, not twice).
    let r = go(d.path(), &["analyze", "sample.log", "-o", "rep", "--no-charts", "--csv", "rep"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for t in TABLES {
        same_csv(&d.path().join(format!("rep/{t}.csv")), &parquet(&d.path().join(format!("rep/{t}.parquet"))));
    }
    // Without --csv, the folder keeps this run only: the CSVs go.
    let r = go(d.path(), &["analyze", "sample.log", "-o", "rep", "--no-charts"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!d.path().join("rep/spans.csv").exists());
    // A file, or a folder under a file: an error naming --csv, before any work.
    std::fs::write(d.path().join("file"), "x").unwrap();
    for bad in ["file", "file/sub"] {
        for args in [vec!["analyze", "sample.log", "--json", "--csv", bad], vec!["compare", "sample.log", "sample.log", "--csv", bad]] {
            let r = go(d.path(), &args);
            assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
            assert!(r.stderr.contains("--csv") && r.stderr.contains("not a folder"), "{args:?}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "{args:?}: no work before the check");
        }
    }
}

#[test]
fn compare_writes_its_table_as_csv() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sample.log"), SAMPLE).unwrap();
    let r = go(d.path(), &["analyze", "sample.log", "-o", "a", "--no-charts", "--no-tables"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = go(d.path(), &["compare", "a", "sample.log", "--csv", "c", "-o", "c"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(d.path().join("c/compare.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("label,proofs_completed,s_per_proof,steady_state_s_per_proof,") && lines[0].contains(",p50_ms_synthesis"), "{}", lines[0]);
    assert!(lines[1].starts_with("a,3,47.6425,47.6425,"), "{}", lines[1]);
    assert!(d.path().join("c/compare.json").is_file() && d.path().join("c/compare.md").is_file());
}

#[test]
fn sweep_json_has_nulls_for_a_vram_oom_row_and_csv_matches_parquet() {
    let d = tempfile::tempdir().unwrap();
    let cfg = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("simulator/configs/phase10.toml");
    // Phase 10 runs out of VRAM at t = 0 on its 16 GiB card and runs on 80 GiB.
    let r = go(d.path(), &["sweep", cfg.to_str().unwrap(), "--vary", "vram=16,80", "-o", "s", "--no-charts", "--csv", "c"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("s/sweep.json")).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let (oom, ok) = (&rows[0], &rows[1]);
    assert_eq!(oom["params"], serde_json::json!([["vram", "16"]]));
    assert_eq!(oom["feasible"], false);
    assert_eq!(oom["failure"]["kind"], "vram_oom");
    assert_eq!(oom["failure"]["t_s"], 0.0);
    assert!(oom["result"].is_null(), "no figures for a failed configuration: {oom}");
    assert_eq!(ok["feasible"], true);
    assert!(ok["failure"].is_null());
    assert!(ok["result"]["steady_state_s_per_proof"].as_f64().is_some_and(|x| x > 0.0), "{ok}");
    assert_eq!(ok["result"]["feasible"], true);
    // The Parquet agrees (nulls, the failure) and the CSV is the same table.
    let df = parquet(&d.path().join("s/sweep.parquet"));
    let steady = df.column("steady_state_s_per_proof").unwrap().f64().unwrap();
    assert_eq!(steady.get(0), None);
    assert_eq!(steady.get(1), ok["result"]["steady_state_s_per_proof"].as_f64());
    assert_eq!(df.column("failure").unwrap().str().unwrap().get(0), Some("vram_oom"));
    same_csv(&d.path().join("c/sweep.csv"), &df);
    // The Markdown shows no figure for it either.
    let md = std::fs::read_to_string(d.path().join("s/sweep.md")).unwrap();
    let line = md.lines().find(|l| l.starts_with("| 16 |")).unwrap();
    let cells: Vec<&str> = line.split('|').map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(cells[1], "vram_oom at 0 s", "{line}");
    assert!(cells[2..].iter().all(|c| *c == "—"), "{line}");
    // A bad --csv: an error before the simulations.
    std::fs::write(d.path().join("file"), "x").unwrap();
    std::fs::write(d.path().join("phase8.toml"), PHASE8).unwrap();
    let r = go(d.path(), &["sweep", "phase8.toml", "--vary", "pw=2", "-o", "s2", "--csv", "file"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("--csv file: not a folder"), "{}", r.stderr);
    assert!(!d.path().join("s2").exists());
}

/// Every Parquet table under reports/ (the working tree: a fresh clone's are the committed
/// ones) keeps the data contract: an analysis table
/// carries the key columns that let runs be stacked, and a sweep's `pw`/`gw` are integers
/// beside its `failure` column. (Analyses of the GPU runs keep no tables: `proofscope analyze`
/// of their timelines in reports/gpu/data/ writes them.)
#[test]
fn every_table_committed_under_reports_keeps_the_contract() {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reports"), &mut files);
    assert!(!files.is_empty(), "no Parquet table under reports/: scripts/make-reports.sh writes some");
    for f in &files {
        let df = parquet(f);
        let cols: Vec<&str> = df.get_column_names().into_iter().map(|c| c.as_str()).collect();
        if f.file_name().is_some_and(|n| n == "sweep.parquet") {
            for k in ["pw", "gw"] {
                assert!(df.column(k).is_ok_and(|c| c.dtype().is_integer()), "{}: `{k}` is not an integer column ({cols:?})", f.display());
            }
            assert!(cols.contains(&"failure"), "{}: no `failure` column ({cols:?})", f.display());
        } else {
            for k in ["run_id", "label", "host", "proof_type"] {
                assert!(cols.contains(&k), "{}: no `{k}` column ({cols:?}): written before the data contract; regenerate it or take it out", f.display());
            }
        }
    }
}
