//! `spans.parquet` and `counters.parquet`: the raw events of a [`Run`] as columnar
//! tables, so that a notebook can query any run with Python polars or pandas without
//! knowing our JSON-lines format.
//!
//! spans: `kind` (str), `start_ns` (u64), `end_ns` (u64, null for open spans),
//! `duration_ns` (u64, null for open spans), `job` (str), `partition`, `worker`,
//! `device` (u32, null when the producer did not say), `args` (str: a JSON object,
//! `{}` when empty). counters: `name` (str), `t_ns` (u64), `value` (f64), `device` (u32,
//! null for host counters). Rows are in the run's order (spans by start, counters by time).

use std::path::Path;

use polars::prelude::*;

use crate::event::Run;

#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("cannot create {path}: {source}")]
    Create { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Polars { path: String, source: PolarsError },
}

/// The spans of `run` as a DataFrame (schema in the module docs).
pub fn spans_frame(run: &Run) -> PolarsResult<DataFrame> {
    let s = &run.spans;
    let kind: Vec<&str> = s.iter().map(|x| x.kind.as_str()).collect();
    let start: Vec<u64> = s.iter().map(|x| x.start_ns).collect();
    let end: Vec<Option<u64>> = s.iter().map(|x| x.end_ns).collect();
    let dur: Vec<Option<u64>> = s.iter().map(|x| x.end_ns.map(|e| e.saturating_sub(x.start_ns))).collect();
    let job: Vec<Option<&str>> = s.iter().map(|x| x.job.as_deref()).collect();
    let partition: Vec<Option<u32>> = s.iter().map(|x| x.partition).collect();
    let worker: Vec<Option<u32>> = s.iter().map(|x| x.worker).collect();
    let device: Vec<Option<u32>> = s.iter().map(|x| x.device).collect();
    let args: Vec<String> =
        s.iter().map(|x| serde_json::to_string(&x.args).unwrap_or_else(|_| "{}".to_string())).collect();
    DataFrame::new_infer_height(vec![
        Column::new("kind".into(), kind),
        Column::new("start_ns".into(), start),
        Column::new("end_ns".into(), end),
        Column::new("duration_ns".into(), dur),
        Column::new("job".into(), job),
        Column::new("partition".into(), partition),
        Column::new("worker".into(), worker),
        Column::new("device".into(), device),
        Column::new("args".into(), args),
    ])
}

/// The counters of `run` as a DataFrame (schema in the module docs).
pub fn counters_frame(run: &Run) -> PolarsResult<DataFrame> {
    let c = &run.counters;
    let name: Vec<&str> = c.iter().map(|x| x.name.as_str()).collect();
    let t: Vec<u64> = c.iter().map(|x| x.t_ns).collect();
    let value: Vec<f64> = c.iter().map(|x| x.value).collect();
    let device: Vec<Option<u32>> = c.iter().map(|x| x.device).collect();
    DataFrame::new_infer_height(vec![
        Column::new("name".into(), name),
        Column::new("t_ns".into(), t),
        Column::new("value".into(), value),
        Column::new("device".into(), device),
    ])
}

/// Write a frame to `path` as Parquet (zstd-compressed, readable by pyarrow/polars/pandas).
pub fn write_frame(df: &mut DataFrame, path: &Path) -> Result<(), ParquetError> {
    let name = path.display().to_string();
    // Written to a temporary file and renamed into place when complete (crate::atomic).
    let mut f = crate::atomic::AtomicFile::create(path).map_err(|source| ParquetError::Create { path: name.clone(), source })?;
    ParquetWriter::new(f.file()).finish(df).map_err(|source| ParquetError::Polars { path: name.clone(), source })?;
    f.commit().map_err(|source| ParquetError::Create { path: name, source })?;
    Ok(())
}

/// Write `spans.parquet` and `counters.parquet` into `dir`; returns the two paths.
pub fn write_events(run: &Run, dir: &Path) -> Result<[std::path::PathBuf; 2], ParquetError> {
    let sp = dir.join("spans.parquet");
    let cp = dir.join("counters.parquet");
    let frame_err = |p: &Path| {
        let path = p.display().to_string();
        move |source| ParquetError::Polars { path, source }
    };
    write_frame(&mut spans_frame(run).map_err(frame_err(&sp))?, &sp)?;
    write_frame(&mut counters_frame(run).map_err(frame_err(&cp))?, &cp)?;
    Ok([sp, cp])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use crate::event::{Span, SpanKind};
    use crate::export::fixtures::{sample_run, synthetic};

    fn read(path: &Path) -> DataFrame {
        ParquetReader::new(File::open(path).unwrap()).finish().unwrap()
    }

    #[test]
    fn spans_and_counters_round_trip() {
        let mut run = synthetic(2, 3, 2, true);
        // An open span and a span with args must survive too.
        let mut open = Span::new(SpanKind::Gpu, 9, 0).job("x").worker(1);
        open.end_ns = None;
        run.spans.push(open);
        run.spans.push(Span::new(SpanKind::Other("warp".into()), 1, 4).arg("bytes", 12).arg("lock", "kernels"));
        run.normalize();
        let dir = tempfile::tempdir().unwrap();
        let [sp, cp] = write_events(&run, dir.path()).unwrap();

        let df = read(&sp);
        assert_eq!(df.height(), run.spans.len());
        let names: Vec<&str> = df.get_column_names().into_iter().map(|n| n.as_str()).collect();
        assert_eq!(names, ["kind", "start_ns", "end_ns", "duration_ns", "job", "partition", "worker", "device", "args"]);
        let kind = df.column("kind").unwrap().str().unwrap();
        let start = df.column("start_ns").unwrap().u64().unwrap();
        let end = df.column("end_ns").unwrap().u64().unwrap();
        let dur = df.column("duration_ns").unwrap().u64().unwrap();
        let job = df.column("job").unwrap().str().unwrap();
        let part = df.column("partition").unwrap().u32().unwrap();
        let worker = df.column("worker").unwrap().u32().unwrap();
        let device = df.column("device").unwrap().u32().unwrap();
        let args = df.column("args").unwrap().str().unwrap();
        for (i, s) in run.spans.iter().enumerate() {
            assert_eq!(kind.get(i), Some(s.kind.as_str()), "row {i}");
            assert_eq!(start.get(i), Some(s.start_ns));
            assert_eq!(end.get(i), s.end_ns);
            assert_eq!(dur.get(i), s.end_ns.map(|_| s.duration_ns()));
            assert_eq!(job.get(i), s.job.as_deref());
            assert_eq!(part.get(i), s.partition);
            assert_eq!(worker.get(i), s.worker);
            assert_eq!(device.get(i), s.device);
            let a: crate::event::Args = serde_json::from_str(args.get(i).unwrap()).unwrap();
            assert_eq!(a, s.args);
        }
        assert_eq!(end.null_count(), 1);

        let df = read(&cp);
        assert_eq!(df.height(), run.counters.len());
        let name = df.column("name").unwrap().str().unwrap();
        let t = df.column("t_ns").unwrap().u64().unwrap();
        let v = df.column("value").unwrap().f64().unwrap();
        let d = df.column("device").unwrap().u32().unwrap();
        for (i, c) in run.counters.iter().enumerate() {
            assert_eq!((name.get(i), t.get(i), v.get(i), d.get(i)), (Some(c.name.as_str()), Some(c.t_ns), Some(c.value), c.device));
        }
    }

    #[test]
    fn sample_log_and_empty_run_write() {
        let dir = tempfile::tempdir().unwrap();
        let run = sample_run();
        let [sp, _] = write_events(&run, dir.path()).unwrap();
        assert_eq!(read(&sp).height(), run.spans.len());
        let [sp, cp] = write_events(&Run::default(), dir.path()).unwrap();
        assert_eq!((read(&sp).height(), read(&cp).height()), (0, 0));
        let run = crate::export::fixtures::extreme_run();
        let [sp, cp] = write_events(&run, dir.path()).unwrap();
        let df = read(&sp);
        assert_eq!(df.column("duration_ns").unwrap().u64().unwrap().get(0), Some(0), "an end before its start lasts 0 ns");
        assert_eq!((df.height(), read(&cp).height()), (run.spans.len(), run.counters.len()));
    }

    #[test]
    fn unwritable_path_is_a_clear_error() {
        let err = write_events(&Run::default(), Path::new("/nonexistent/dir")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/spans.parquet"), "{err}");
    }
}
