//! The tables `analyze` writes (as Parquet, and as CSV with `--csv`): `spans` and
//! `counters` (the raw events, [`super::parquet`]), `partitions` and `jobs` (the
//! per-partition and per-job tables of the analysis, [`crate::analysis::tables`]: one
//! column per field of [`PartitionRow`] / [`JobRow`], same names and units — times in ms
//! since the run epoch, f64; nulls where the log does not say) and `gaps` (the listed idle
//! gaps of `summary.json`). Every one starts with the run's key columns ([`RunKeys`]) so
//! that the tables of several runs stack. Also the table of `compare` ([`compare_frame`]).
//! Built one at a time ([`run_table`]), so that only one table is in memory beside the run.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::keys::RunKeys;
use super::parquet::{write_frame, ParquetError};
use crate::analysis::compare::Comparison;
use crate::analysis::gaps::IdleGap;
use crate::analysis::tables::{JobRow, PartitionRow};
use crate::analysis::Summary;
use crate::event::Run;

/// The tables of a run, in the order they are written (file `<name>.parquet`, `<name>.csv`).
pub const RUN_TABLES: [&str; 5] = ["spans", "counters", "partitions", "jobs", "gaps"];

/// The run's table `name` (one of [`RUN_TABLES`]).
pub fn run_table(name: &str, run: &Run, summary: &Summary, keys: &RunKeys) -> PolarsResult<DataFrame> {
    match name {
        "spans" => super::parquet::spans_frame(run, keys),
        "counters" => super::parquet::counters_frame(run, keys),
        "partitions" => partitions_frame(&summary.partitions, keys),
        "jobs" => jobs_frame(&summary.jobs, keys),
        "gaps" => gaps_frame(&summary.idle_gaps, keys),
        other => Err(PolarsError::ComputeError(format!("no table named {other}").into())),
    }
}

fn col_f(name: &str, v: Vec<Option<f64>>) -> Column {
    Column::new(name.into(), v)
}

/// The per-partition table as a DataFrame.
pub fn partitions_frame(rows: &[PartitionRow], keys: &RunKeys) -> PolarsResult<DataFrame> {
    macro_rules! f {
        ($name:ident) => {
            col_f(stringify!($name), rows.iter().map(|r| r.$name).collect())
        };
    }
    macro_rules! u {
        ($name:ident) => {
            Column::new(stringify!($name).into(), rows.iter().map(|r| r.$name).collect::<Vec<Option<u32>>>())
        };
    }
    let mut cols = keys.columns(rows.iter().map(|r| keys.proof_type(Some(&r.job))).collect());
    cols.extend([
        Column::new("job".into(), rows.iter().map(|r| r.job.as_str()).collect::<Vec<_>>()),
        u!(partition),
        u!(device),
        u!(worker),
        u!(synth_worker),
        f!(synth_start_ms),
        f!(synth_end_ms),
        f!(synth_ms),
        f!(queued_ms),
        f!(picked_up_ms),
        f!(gpu_start_ms),
        f!(gpu_end_ms),
        f!(queue_wait_ms),
        f!(pickup_to_start_ms),
        f!(gpu_wall_ms),
        f!(kernel_ms),
        f!(prep_msm_ms),
        f!(cpu_msm_b_g2_ms),
        f!(finalize_ms),
        f!(lock_wait_ms),
        Column::new("open".into(), rows.iter().map(|r| r.open).collect::<Vec<bool>>()),
    ]);
    DataFrame::new_infer_height(cols)
}

/// The per-job table as a DataFrame.
pub fn jobs_frame(rows: &[JobRow], keys: &RunKeys) -> PolarsResult<DataFrame> {
    macro_rules! f {
        ($name:ident) => {
            col_f(stringify!($name), rows.iter().map(|r| r.$name).collect())
        };
    }
    // The job's own type is the key column `proof_type`.
    let mut cols = keys.columns(rows.iter().map(|r| Some(r.proof_type.as_str())).collect());
    cols.extend([
        Column::new("job".into(), rows.iter().map(|r| r.job.as_str()).collect::<Vec<_>>()),
        Column::new("partitions".into(), rows.iter().map(|r| r.partitions).collect::<Vec<u32>>()),
        Column::new("gpu_partitions".into(), rows.iter().map(|r| r.gpu_partitions).collect::<Vec<u32>>()),
        Column::new("first_start_ms".into(), rows.iter().map(|r| r.first_start_ms).collect::<Vec<f64>>()),
        f!(first_synth_start_ms),
        f!(last_synth_end_ms),
        f!(first_gpu_start_ms),
        f!(last_gpu_end_ms),
        f!(completed_ms),
        f!(latency_s),
        Column::new("synth_total_ms".into(), rows.iter().map(|r| r.synth_total_ms).collect::<Vec<f64>>()),
        Column::new("gpu_wall_total_ms".into(), rows.iter().map(|r| r.gpu_wall_total_ms).collect::<Vec<f64>>()),
        f!(kernel_total_ms),
        Column::new("open_spans".into(), rows.iter().map(|r| r.open_spans).collect::<Vec<u32>>()),
        Column::new("unmatched_spans".into(), rows.iter().map(|r| r.unmatched_spans).collect::<Vec<u32>>()),
        Column::new("complete".into(), rows.iter().map(|r| r.complete).collect::<Vec<bool>>()),
    ]);
    DataFrame::new_infer_height(cols)
}

/// The listed idle gaps as a DataFrame; `proof_type` is the type of the work the gap
/// ended at (`after_type`; the gaps before a run's first work: the run's type when it
/// has one).
pub fn gaps_frame(rows: &[IdleGap], keys: &RunKeys) -> PolarsResult<DataFrame> {
    let mut cols = keys.columns(rows.iter().map(|g| g.after_type.as_deref().or_else(|| keys.proof_type(g.after_job.as_deref()))).collect());
    let opt_str = |name: &str, f: &dyn Fn(&IdleGap) -> Option<&str>| Column::new(name.into(), rows.iter().map(f).collect::<Vec<Option<&str>>>());
    cols.extend([
        Column::new("device".into(), rows.iter().map(|g| g.device).collect::<Vec<u32>>()),
        Column::new("start_ns".into(), rows.iter().map(|g| g.start_ns).collect::<Vec<u64>>()),
        Column::new("end_ns".into(), rows.iter().map(|g| g.end_ns).collect::<Vec<u64>>()),
        Column::new("start_ms".into(), rows.iter().map(|g| g.start_ms).collect::<Vec<f64>>()),
        Column::new("end_ms".into(), rows.iter().map(|g| g.end_ms).collect::<Vec<f64>>()),
        Column::new("duration_ms".into(), rows.iter().map(|g| g.duration_ms).collect::<Vec<f64>>()),
        Column::new("cause".into(), rows.iter().map(|g| g.cause.as_str()).collect::<Vec<&str>>()),
        Column::new("leading".into(), rows.iter().map(|g| g.leading).collect::<Vec<bool>>()),
        opt_str("before_job", &|g| g.before_job.as_deref()),
        Column::new("before_partition".into(), rows.iter().map(|g| g.before_partition).collect::<Vec<Option<u32>>>()),
        opt_str("before_type", &|g| g.before_type.as_deref()),
        opt_str("after_job", &|g| g.after_job.as_deref()),
        Column::new("after_partition".into(), rows.iter().map(|g| g.after_partition).collect::<Vec<Option<u32>>>()),
        opt_str("after_type", &|g| g.after_type.as_deref()),
        Column::new("after_queued_ms".into(), rows.iter().map(|g| g.after_queued_ms).collect::<Vec<Option<f64>>>()),
    ]);
    DataFrame::new_infer_height(cols)
}

/// The table of `compare`: one row per run (`compare.json`'s rows), the p50 of each
/// phase as a column `p50_ms_<kind>` (null where the run has no such phase).
pub fn compare_frame(c: &Comparison) -> PolarsResult<DataFrame> {
    let r = &c.rows;
    let f = |name: &str, g: &dyn Fn(&crate::analysis::compare::CompareRow) -> Option<f64>| Column::new(name.into(), r.iter().map(g).collect::<Vec<Option<f64>>>());
    let mut cols = vec![
        Column::new("label".into(), r.iter().map(|x| x.label.as_str()).collect::<Vec<&str>>()),
        Column::new("proofs_completed".into(), r.iter().map(|x| x.proofs_completed).collect::<Vec<u64>>()),
        f("s_per_proof", &|x| x.s_per_proof),
        f("steady_state_s_per_proof", &|x| x.steady_state_s_per_proof),
        f("total_s_per_proof", &|x| x.total_s_per_proof),
        f("gpu_utilization", &|x| x.gpu_utilization),
        f("kernel_utilization", &|x| x.kernel_utilization),
        Column::new("binding_resource".into(), r.iter().map(|x| x.binding_resource.as_str()).collect::<Vec<&str>>()),
        f("speedup_vs_baseline", &|x| x.speedup_vs_baseline),
        f("speedup_vs_previous", &|x| x.speedup_vs_previous),
        f("host_other_cores", &|x| x.host_other_cores),
        f("host_steal_cores", &|x| x.host_steal_cores),
    ];
    for (i, k) in c.phase_kinds.iter().enumerate() {
        cols.push(f(&format!("p50_ms_{k}"), &|x| x.phase_p50_ms.get(i).copied().flatten()));
    }
    DataFrame::new_infer_height(cols)
}

/// Write the run's table `name` (one of [`RUN_TABLES`]) at `path` as Parquet: the file
/// [`write_frame`] writes for [`run_table`]; `spans`, the large one, a row group at a time
/// ([`super::parquet::write_spans`]).
pub fn write_run_table(name: &str, run: &Run, summary: &Summary, keys: &RunKeys, path: &Path) -> Result<(), ParquetError> {
    if name == "spans" {
        return super::parquet::write_spans(run, keys, path);
    }
    let mut df = run_table(name, run, summary, keys).map_err(|source| ParquetError::Polars { path: path.display().to_string(), source })?;
    write_frame(&mut df, path)
}

/// Write the run's tables ([`RUN_TABLES`]) into `dir` as `<name>.parquet`, one at a time;
/// returns the paths.
pub fn write_run_tables(run: &Run, summary: &Summary, keys: &RunKeys, dir: &Path) -> Result<Vec<PathBuf>, ParquetError> {
    let mut out = Vec::new();
    for name in RUN_TABLES {
        let p = dir.join(format!("{name}.parquet"));
        write_run_table(name, run, summary, keys, &p)?;
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{summarize, AnalyzeOptions};
    use crate::export::fixtures::sample_run;
    use crate::export::keys::KEY_COLUMNS;

    fn read(path: &Path) -> DataFrame {
        ParquetReader::new(std::fs::File::open(path).unwrap()).finish().unwrap()
    }

    #[test]
    fn every_run_table_starts_with_the_keys_and_round_trips() {
        let run = sample_run();
        let s = summarize(&run, &AnalyzeOptions::default());
        let keys = RunKeys::new(&run, &s, "sample");
        let dir = tempfile::tempdir().unwrap();
        let paths = write_run_tables(&run, &s, &keys, dir.path()).unwrap();
        let names: Vec<String> = paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, RUN_TABLES.map(|t| format!("{t}.parquet")));
        let t = s.proof_types[0].proof_type.clone();
        for (name, p) in RUN_TABLES.iter().zip(&paths) {
            let df = read(p);
            let cols: Vec<&str> = df.get_column_names().into_iter().map(|c| c.as_str()).collect();
            assert_eq!(&cols[..4], &KEY_COLUMNS, "{name}");
            assert_eq!(cols.iter().filter(|c| **c == "proof_type").count(), 1, "{name}");
            for k in ["run_id", "label", "host", "proof_type"] {
                assert_eq!(df.column(k).unwrap().dtype(), &DataType::String, "{name}.{k}");
            }
            let ids = df.column("run_id").unwrap().str().unwrap();
            assert!(ids.iter().all(|x| x == Some(keys.run_id.as_str())), "{name}");
            assert!(df.column("label").unwrap().str().unwrap().iter().all(|x| x == Some("sample")), "{name}");
            assert_eq!(df.column("host").unwrap().null_count(), df.height(), "{name}: the sample names no host");
            assert!(df.column("proof_type").unwrap().str().unwrap().iter().all(|x| x == Some(t.as_str())), "{name}");
        }
        let heights: Vec<usize> = paths.iter().map(|p| read(p).height()).collect();
        assert_eq!(heights, [run.spans.len(), run.counters.len(), s.partitions.len(), s.jobs.len(), s.idle_gaps.len()]);
        assert!(!s.idle_gaps.is_empty(), "the sample has listed gaps");

        let g = read(&paths[4]);
        let dur = g.column("duration_ms").unwrap().f64().unwrap();
        let cause = g.column("cause").unwrap().str().unwrap();
        let before = g.column("before_partition").unwrap().u32().unwrap();
        for (i, x) in s.idle_gaps.iter().enumerate() {
            assert_eq!((dur.get(i), cause.get(i), before.get(i)), (Some(x.duration_ms), Some(x.cause.as_str()), x.before_partition));
        }
        assert_eq!(g.column("leading").unwrap().dtype(), &DataType::Boolean);
        let j = read(&paths[3]);
        assert_eq!(j.column("partitions").unwrap().dtype(), &DataType::UInt32);
        assert_eq!(j.column("latency_s").unwrap().f64().unwrap().get(1), s.jobs[1].latency_s);
    }

    #[test]
    fn mixed_types_key_each_row_by_its_job() {
        // Two jobs of two types: rows of a job carry its type, counters (no job) none.
        use crate::event::{Counter, Span, SpanKind};
        let mut run = Run::default();
        for (j, kind) in [("a", "porep-c2"), ("b", "window-post")] {
            run.spans.push(Span::new(SpanKind::Synthesis, 0, 10).job(j).partition(0).arg("kind", kind));
            run.spans.push(Span::new(SpanKind::Gpu, 20, 30).job(j).partition(0).worker(0));
        }
        run.counters.push(Counter { name: "rss_bytes".into(), t_ns: 5, value: 1.0, device: None });
        run.normalize();
        let s = summarize(&run, &AnalyzeOptions::default());
        assert_eq!(s.proof_types.len(), 2, "{:?}", s.proof_types);
        let keys = RunKeys::new(&run, &s, "mix");
        let spans = run_table("spans", &run, &s, &keys).unwrap();
        let jobs = spans.column("job").unwrap().str().unwrap();
        let types = spans.column("proof_type").unwrap().str().unwrap();
        for i in 0..spans.height() {
            let want = if jobs.get(i) == Some("a") { "porep-c2" } else { "window-post" };
            assert_eq!(types.get(i), Some(want));
        }
        let counters = run_table("counters", &run, &s, &keys).unwrap();
        assert_eq!(counters.column("proof_type").unwrap().null_count(), 1);
        assert!(run_table("nope", &run, &s, &keys).is_err());
    }
}
