//! `spans.parquet` and `counters.parquet`: the raw events of a [`Run`] as columnar
//! tables, so that a notebook or SQL can query any run with polars, pandas or DuckDB
//! without knowing our JSON-lines format. Every table starts with the run's key columns
//! ([`RunKeys`]: `run_id`, `label`, `host`, `proof_type`) so that runs stack.
//!
//! spans: the keys, `kind` (str), `start_ns` (u64), `end_ns` (u64, null for open spans),
//! `duration_ns` (u64, null for open spans), `job` (str), `partition`, `worker`, `device`
//! (u32, null when the producer did not say), the well-known arguments as typed columns
//! ([`SPAN_ARG_COLUMNS`], null where the span does not have them) and `args` (str: a JSON
//! object of the other arguments, `{}` when none). counters: the keys, `name` (str),
//! `t_ns` (u64), `value` (f64), `device` (u32, null for host counters). Rows are in the
//! run's order (spans by start, counters by time). Column by column with units:
//! docs/reference/summary-json.md#parquet-tables.

use std::path::Path;

use polars::prelude::*;

use super::keys::RunKeys;
use crate::event::{arg, Args, Run};

#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("cannot create {path}: {source}")]
    Create { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Polars { path: String, source: PolarsError },
}

/// The type of a promoted span argument's column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    /// Int64: an integer (a float with no fraction counts; anything else stays in `args`).
    Int,
    /// Float64: any number.
    Float,
    /// String.
    Str,
}

/// The well-known span arguments that `spans.parquet` promotes to typed columns, in
/// column order (after `device`): what the prover, the simulator and cuzk logs write. A
/// value of another type than its column's stays in `args` (nothing is lost).
pub const SPAN_ARG_COLUMNS: &[(&str, ArgType)] = &[
    (arg::GPU_NS, ArgType::Int),
    (arg::FINISH_NS, ArgType::Int),
    (arg::BYTES, ArgType::Int),
    (arg::LANE, ArgType::Int),
    (arg::CHUNKS, ArgType::Int),
    (arg::POINTS, ArgType::Int),
    // Constraints of a synthesis (the prover).
    ("constraints", ArgType::Int),
    // CPU time of a step over the threads of its pool, and their number (the prover's prep_msm).
    (arg::CPU_NS, ArgType::Int),
    (arg::THREADS, ArgType::Int),
    // cuzk's SYNTH_END / GPU_END figures and the simulator's `gpu` spans, ms.
    ("synth_ms", ArgType::Float),
    ("gpu_ms", ArgType::Float),
    (arg::WHAT, ArgType::Str),
    (arg::LOCK, ArgType::Str),
    (arg::QUERY, ArgType::Str),
];

fn as_int(v: &serde_json::Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64))
}

/// Whether `args[key]` fits its promoted column (then it is there, not in `args`).
fn promoted(ty: ArgType, v: &serde_json::Value) -> bool {
    match ty {
        ArgType::Int => as_int(v).is_some(),
        ArgType::Float => v.as_f64().is_some(),
        ArgType::Str => v.is_string(),
    }
}

/// The arguments not promoted to a column, as a JSON object.
fn rest_of(args: &Args) -> String {
    if args.is_empty() {
        return "{}".to_string();
    }
    let rest: std::collections::BTreeMap<&String, &serde_json::Value> = args
        .iter()
        .filter(|(k, v)| !SPAN_ARG_COLUMNS.iter().any(|(name, ty)| name == k && promoted(*ty, v)))
        .collect();
    serde_json::to_string(&rest).unwrap_or_else(|_| "{}".to_string())
}

/// The spans of `run` as a DataFrame (schema in the module docs).
pub fn spans_frame(run: &Run, keys: &RunKeys) -> PolarsResult<DataFrame> {
    spans_frame_rows(run, keys, 0..run.spans.len())
}

/// A promoted argument's column while it is built.
enum ArgCol<'a> {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Str(Vec<Option<&'a str>>),
}

/// The rows `rows` of [`spans_frame`] (the spans `run.spans[rows]`), same columns.
pub fn spans_frame_rows(run: &Run, keys: &RunKeys, rows: std::ops::Range<usize>) -> PolarsResult<DataFrame> {
    let s = &run.spans[rows];
    let mut cols = keys.columns(s.iter().map(|x| keys.proof_type(x.job.as_deref())).collect());
    let kind: Vec<&str> = s.iter().map(|x| x.kind.as_str()).collect();
    let start: Vec<u64> = s.iter().map(|x| x.start_ns).collect();
    let end: Vec<Option<u64>> = s.iter().map(|x| x.end_ns).collect();
    let dur: Vec<Option<u64>> = s.iter().map(|x| x.end_ns.map(|e| e.saturating_sub(x.start_ns))).collect();
    let job: Vec<Option<&str>> = s.iter().map(|x| x.job.as_deref()).collect();
    let partition: Vec<Option<u32>> = s.iter().map(|x| x.partition).collect();
    let worker: Vec<Option<u32>> = s.iter().map(|x| x.worker).collect();
    let device: Vec<Option<u32>> = s.iter().map(|x| x.device).collect();
    cols.extend([
        Column::new("kind".into(), kind),
        Column::new("start_ns".into(), start),
        Column::new("end_ns".into(), end),
        Column::new("duration_ns".into(), dur),
        Column::new("job".into(), job),
        Column::new("partition".into(), partition),
        Column::new("worker".into(), worker),
        Column::new("device".into(), device),
    ]);
    // One pass over each span's arguments (none to a few) fills the promoted columns and
    // says whether any is left for `args`.
    let mut promoted_cols: Vec<ArgCol<'_>> = SPAN_ARG_COLUMNS
        .iter()
        .map(|&(_, ty)| match ty {
            ArgType::Int => ArgCol::Int(vec![None; s.len()]),
            ArgType::Float => ArgCol::Float(vec![None; s.len()]),
            ArgType::Str => ArgCol::Str(vec![None; s.len()]),
        })
        .collect();
    // The rows whose `args` is not `{}`, with their text.
    let mut rests: Vec<(usize, String)> = Vec::new();
    for (i, x) in s.iter().enumerate() {
        let mut rest = false;
        for (k, v) in &x.args {
            let Some(c) = SPAN_ARG_COLUMNS.iter().position(|(name, ty)| name == k && promoted(*ty, v)) else {
                rest = true;
                continue;
            };
            match &mut promoted_cols[c] {
                ArgCol::Int(col) => col[i] = as_int(v),
                ArgCol::Float(col) => col[i] = v.as_f64(),
                ArgCol::Str(col) => col[i] = v.as_str(),
            }
        }
        if rest {
            rests.push((i, rest_of(&x.args)));
        }
    }
    for (&(name, _), col) in SPAN_ARG_COLUMNS.iter().zip(promoted_cols) {
        cols.push(match col {
            ArgCol::Int(v) => Column::new(name.into(), v),
            ArgCol::Float(v) => Column::new(name.into(), v),
            ArgCol::Str(v) => Column::new(name.into(), v),
        });
    }
    let mut args: Vec<&str> = vec!["{}"; s.len()];
    for (i, r) in &rests {
        args[*i] = r;
    }
    cols.push(Column::new("args".into(), args));
    DataFrame::new_infer_height(cols)
}

/// Rows per row group of polars' Parquet writer (0.55: `ParquetWriter::finish`'s default).
const ROW_GROUP: usize = 512 * 512;

/// The row groups `ParquetWriter::finish` makes of a frame of `n` rows in one chunk, at
/// `group` rows a group: `n / group` groups of equal size, the last with the remainder;
/// one group below `2 × group` rows.
fn row_groups(n: usize, group: usize) -> Vec<std::ops::Range<usize>> {
    let target = n / group;
    if target <= 1 {
        return vec![0..n];
    }
    let size = n / target;
    let mut out: Vec<std::ops::Range<usize>> = (0..target - 1).map(|g| g * size..(g + 1) * size).collect();
    out.push((target - 1) * size..n);
    out
}

/// Write `spans.parquet` at `path`: the file [`write_frame`] writes for [`spans_frame`],
/// built and written one row group at a time, so that only one group's columns are in
/// memory beside the run (a 1.2M-event log's whole frame took 300 MB).
pub fn write_spans(run: &Run, keys: &RunKeys, path: &Path) -> Result<(), ParquetError> {
    write_spans_in_groups(run, keys, path, ROW_GROUP)
}

fn write_spans_in_groups(run: &Run, keys: &RunKeys, path: &Path, group: usize) -> Result<(), ParquetError> {
    let groups = row_groups(run.spans.len(), group);
    let name = path.display().to_string();
    let polars = |source| ParquetError::Polars { path: name.clone(), source };
    let mut f = crate::atomic::AtomicFile::create(path).map_err(|source| ParquetError::Create { path: name.clone(), source })?;
    {
        let mut writer = None;
        let mut file = Some(f.file());
        for rows in groups {
            let df = spans_frame_rows(run, keys, rows).map_err(polars)?;
            if writer.is_none() {
                let file = file.take().expect("the file goes to the first group's writer");
                writer = Some(ParquetWriter::new(file).with_row_group_size(Some(group)).batched(df.schema()).map_err(polars)?);
            }
            // (An empty frame writes no row group, as `finish` writes none.)
            writer.as_mut().expect("made above").write_batch(&df).map_err(polars)?;
        }
        writer.expect("one group at least").finish().map_err(polars)?;
    }
    f.commit().map_err(|source| ParquetError::Create { path: name, source })?;
    Ok(())
}

/// The counters of `run` as a DataFrame (schema in the module docs).
pub fn counters_frame(run: &Run, keys: &RunKeys) -> PolarsResult<DataFrame> {
    let c = &run.counters;
    let mut cols = keys.columns(vec![keys.proof_type(None); c.len()]);
    let name: Vec<&str> = c.iter().map(|x| x.name.as_str()).collect();
    let t: Vec<u64> = c.iter().map(|x| x.t_ns).collect();
    let value: Vec<f64> = c.iter().map(|x| x.value).collect();
    let device: Vec<Option<u32>> = c.iter().map(|x| x.device).collect();
    cols.extend([
        Column::new("name".into(), name),
        Column::new("t_ns".into(), t),
        Column::new("value".into(), value),
        Column::new("device".into(), device),
    ]);
    DataFrame::new_infer_height(cols)
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
pub fn write_events(run: &Run, keys: &RunKeys, dir: &Path) -> Result<[std::path::PathBuf; 2], ParquetError> {
    let sp = dir.join("spans.parquet");
    let cp = dir.join("counters.parquet");
    let frame_err = |p: &Path| {
        let path = p.display().to_string();
        move |source| ParquetError::Polars { path, source }
    };
    write_frame(&mut spans_frame(run, keys).map_err(frame_err(&sp))?, &sp)?;
    write_frame(&mut counters_frame(run, keys).map_err(frame_err(&cp))?, &cp)?;
    Ok([sp, cp])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use crate::analysis::{summarize, AnalyzeOptions};
    use crate::event::{Span, SpanKind};
    use crate::export::fixtures::{sample_run, synthetic};
    use crate::export::keys::KEY_COLUMNS;

    fn read(path: &Path) -> DataFrame {
        ParquetReader::new(File::open(path).unwrap()).finish().unwrap()
    }

    fn keys_of(run: &Run, label: &str) -> RunKeys {
        RunKeys::new(run, &summarize(run, &AnalyzeOptions::default()), label)
    }

    #[test]
    fn spans_and_counters_round_trip() {
        let mut run = synthetic(2, 3, 2, true);
        // An open span and spans with args must survive too.
        let mut open = Span::new(SpanKind::Gpu, 9, 0).job("x").worker(1);
        open.end_ns = None;
        run.spans.push(open);
        run.spans.push(Span::new(SpanKind::Other("warp".into()), 1, 4).arg("bytes", 12).arg("lock", "kernels").arg("mine", "x"));
        // Well-known arguments of the wrong type stay in `args`; an integral float is an integer.
        run.spans.push(Span::new(SpanKind::MsmH, 2, 7).job("job0").arg("lane", "two").arg("chunks", 3.0).arg("gpu_ns", 4.5).arg("gpu_ms", 7).arg("what", 5));
        run.meta.host = Some("gpu-7".into());
        run.normalize();
        let dir = tempfile::tempdir().unwrap();
        let keys = keys_of(&run, "lab");
        let [sp, cp] = write_events(&run, &keys, dir.path()).unwrap();

        let df = read(&sp);
        assert_eq!(df.height(), run.spans.len());
        let names: Vec<&str> = df.get_column_names().into_iter().map(|n| n.as_str()).collect();
        let mut want: Vec<&str> = KEY_COLUMNS.to_vec();
        want.extend(["kind", "start_ns", "end_ns", "duration_ns", "job", "partition", "worker", "device"]);
        want.extend(SPAN_ARG_COLUMNS.iter().map(|(n, _)| *n));
        want.push("args");
        assert_eq!(names, want);
        for (name, ty) in SPAN_ARG_COLUMNS {
            let dt = df.column(name).unwrap().dtype().clone();
            let want = match ty {
                ArgType::Int => DataType::Int64,
                ArgType::Float => DataType::Float64,
                ArgType::Str => DataType::String,
            };
            assert_eq!(dt, want, "{name}");
        }
        let run_id = df.column("run_id").unwrap().str().unwrap();
        let label = df.column("label").unwrap().str().unwrap();
        let host = df.column("host").unwrap().str().unwrap();
        let ptype = df.column("proof_type").unwrap().str().unwrap();
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
            assert_eq!((run_id.get(i), label.get(i), host.get(i)), (Some(keys.run_id.as_str()), Some("lab"), Some("gpu-7")));
            assert_eq!(ptype.get(i), keys.proof_type(s.job.as_deref()));
            assert_eq!(kind.get(i), Some(s.kind.as_str()), "row {i}");
            assert_eq!(start.get(i), Some(s.start_ns));
            assert_eq!(end.get(i), s.end_ns);
            assert_eq!(dur.get(i), s.end_ns.map(|_| s.duration_ns()));
            assert_eq!(job.get(i), s.job.as_deref());
            assert_eq!(part.get(i), s.partition);
            assert_eq!(worker.get(i), s.worker);
            assert_eq!(device.get(i), s.device);
            // The promoted columns and the rest of the args make up the span's args.
            let mut a: crate::event::Args = serde_json::from_str(args.get(i).unwrap()).unwrap();
            for (name, _) in SPAN_ARG_COLUMNS {
                let v = df.column(name).unwrap().get(i).unwrap();
                let v = match v {
                    AnyValue::Null => continue,
                    AnyValue::Int64(x) => serde_json::Value::from(x),
                    AnyValue::Float64(x) => serde_json::Value::from(x),
                    AnyValue::String(x) => serde_json::Value::from(x),
                    other => panic!("{name}: {other:?}"),
                };
                assert!(a.insert(name.to_string(), v).is_none(), "{name} both promoted and in args");
            }
            if s.kind == SpanKind::MsmH && s.start_ns == 2 {
                assert_eq!(a.get("chunks"), Some(&serde_json::Value::from(3)));
                assert_eq!(a.get("gpu_ms"), Some(&serde_json::Value::from(7.0)));
                a.insert("chunks".into(), 3.0.into());
                a.insert("gpu_ms".into(), 7.into());
            }
            assert_eq!(a, s.args, "row {i}");
        }
        assert_eq!(end.null_count(), 1);
        // The odd span: typed where its values fit, the rest in args.
        let i = run.spans.iter().position(|s| s.kind == SpanKind::MsmH && s.start_ns == 2).unwrap();
        assert_eq!(df.column("chunks").unwrap().i64().unwrap().get(i), Some(3));
        assert_eq!(df.column("gpu_ms").unwrap().f64().unwrap().get(i), Some(7.0));
        assert_eq!((df.column("lane").unwrap().i64().unwrap().get(i), df.column("gpu_ns").unwrap().i64().unwrap().get(i)), (None, None));
        let rest: serde_json::Value = serde_json::from_str(args.get(i).unwrap()).unwrap();
        assert_eq!(rest, serde_json::json!({"gpu_ns": 4.5, "lane": "two", "what": 5}));
        let i = run.spans.iter().position(|s| s.kind.as_str() == "warp").unwrap();
        assert_eq!((df.column("bytes").unwrap().i64().unwrap().get(i), df.column("lock").unwrap().str().unwrap().get(i)), (Some(12), Some("kernels")));
        assert_eq!(args.get(i), Some(r#"{"mine":"x"}"#));

        let df = read(&cp);
        assert_eq!(df.height(), run.counters.len());
        assert_eq!(&df.get_column_names()[..4].iter().map(|n| n.as_str()).collect::<Vec<_>>(), &KEY_COLUMNS);
        let name = df.column("name").unwrap().str().unwrap();
        let t = df.column("t_ns").unwrap().u64().unwrap();
        let v = df.column("value").unwrap().f64().unwrap();
        let d = df.column("device").unwrap().u32().unwrap();
        for (i, c) in run.counters.iter().enumerate() {
            assert_eq!((name.get(i), t.get(i), v.get(i), d.get(i)), (Some(c.name.as_str()), Some(c.t_ns), Some(c.value), c.device));
        }
        assert_eq!(df.column("label").unwrap().str().unwrap().get(0), Some("lab"));
    }

    #[test]
    fn cuzk_figures_are_typed_columns() {
        let dir = tempfile::tempdir().unwrap();
        let run = sample_run();
        let keys = keys_of(&run, "sample");
        let [sp, _] = write_events(&run, &keys, dir.path()).unwrap();
        let df = read(&sp);
        assert_eq!(df.height(), run.spans.len());
        // SYNTH_END's synth_ms and GPU_END's gpu_ms: 30 partitions each, none left in args.
        let synth = df.column("synth_ms").unwrap().f64().unwrap();
        let gpu = df.column("gpu_ms").unwrap().f64().unwrap();
        assert_eq!((synth.len() - synth.null_count(), gpu.len() - gpu.null_count()), (30, 30));
        assert!(df.column("args").unwrap().str().unwrap().iter().all(|a| a == Some("{}")));
        let kinds = df.column("kind").unwrap().str().unwrap();
        let i = (0..df.height()).find(|&i| kinds.get(i) == Some("synthesis")).unwrap();
        let s = &run.spans[i];
        assert_eq!(synth.get(i), s.args.get("synth_ms").and_then(|v| v.as_f64()));
        assert_eq!(df.column("proof_type").unwrap().null_count(), 0, "the sample's jobs have a type");
    }

    #[test]
    fn sample_log_and_empty_run_write() {
        let dir = tempfile::tempdir().unwrap();
        let empty = Run::default();
        let [sp, cp] = write_events(&empty, &keys_of(&empty, "e"), dir.path()).unwrap();
        assert_eq!((read(&sp).height(), read(&cp).height()), (0, 0));
        assert_eq!(read(&sp).column("gpu_ns").unwrap().dtype(), &DataType::Int64, "typed even when empty");
        let run = crate::export::fixtures::extreme_run();
        let [sp, cp] = write_events(&run, &keys_of(&run, "x"), dir.path()).unwrap();
        let df = read(&sp);
        assert_eq!(df.column("duration_ns").unwrap().u64().unwrap().get(0), Some(0), "an end before its start lasts 0 ns");
        assert_eq!((df.height(), read(&cp).height()), (run.spans.len(), run.counters.len()));
    }

    /// `spans.parquet` written a row group at a time is the file of the whole frame.
    #[test]
    fn spans_written_by_row_groups_are_the_whole_frames_file() {
        assert_eq!(row_groups(0, 1000), [0..0]);
        assert_eq!(row_groups(1999, 1000), [0..1999]);
        assert_eq!(row_groups(3500, 1000), [0..1166, 1166..2332, 2332..3500]);
        let dir = tempfile::tempdir().unwrap();
        for n in [0usize, 5, 1999, 2000, 3500] {
            let mut run = synthetic(1, 1, 1, true);
            let proto = run.spans.clone();
            run.spans = (0..n).map(|i| {
                let mut s = proto[i % proto.len()].clone();
                s.start_ns += i as u64;
                if let Some(e) = s.end_ns.as_mut() { *e += i as u64 }
                if i % 7 == 0 { s = s.arg("mine", i as u64).arg("gpu_ms", 1.5); }
                s
            }).collect();
            let keys = keys_of(&run, "g");
            let whole = dir.path().join(format!("whole-{n}.parquet"));
            let mut df = spans_frame(&run, &keys).unwrap();
            ParquetWriter::new(File::create(&whole).unwrap()).with_row_group_size(Some(1000)).finish(&mut df).unwrap();
            let grouped = dir.path().join(format!("grouped-{n}.parquet"));
            write_spans_in_groups(&run, &keys, &grouped, 1000).unwrap();
            assert_eq!(std::fs::read(&grouped).unwrap(), std::fs::read(&whole).unwrap(), "{n} spans");
        }
    }

    #[test]
    fn unwritable_path_is_a_clear_error() {
        let run = Run::default();
        let err = write_events(&run, &keys_of(&run, "e"), Path::new("/nonexistent/dir")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/spans.parquet"), "{err}");
    }
}
