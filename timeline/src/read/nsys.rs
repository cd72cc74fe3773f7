//! Reader of an Nsight Systems capture exported to SQLite (`nsys export --type sqlite`).
//!
//! Why: `nsys` is the profiler most CUDA programs are measured with, and its report is not
//! a trace-event JSON. Its SQLite export holds the device's timeline as CUPTI activity
//! records — which is all the device-side analyses (utilisation, idle gaps, the lanes, the
//! trace) need. Read as a [`Run`] of the same shape as the device work of a Chrome trace
//! ([`super::chrome`]), `analyze` works on it unchanged.
//!
//! What is read (the documented export schema; any of the three tables may be missing, the
//! ones present are read):
//! - `CUPTI_ACTIVITY_KIND_KERNEL` (`start`, `end` in ns, `deviceId`, `streamId`,
//!   `shortName` else `demangledName`: ids into `StringIds(id, value)`) → span kind `kernel`,
//!   its name the `name` argument (the demangled one `demangled`, when both are there);
//! - `CUPTI_ACTIVITY_KIND_MEMCPY` (`start`, `end`, `deviceId`, `streamId`, `bytes`,
//!   `copyKind`: 1 = HtoD, 2 = DtoH, 8 = DtoD, … CUPTI's `CUpti_ActivityMemcpyKind`) → span
//!   kind `memcpy` named `Memcpy HtoD`, with the `direction` and `bytes` arguments;
//! - `CUPTI_ACTIVITY_KIND_MEMSET` (`start`, `end`, `deviceId`, `streamId`, `bytes`) → span
//!   kind `memset`.
//!
//! Every span is on its `deviceId` with its `streamId` as the `stream` argument (a lane per
//! stream), times shifted so that the run starts at 0 (the earliest row). Not read: the
//! host side (CUDA API calls, NVTX ranges, OS runtime, sampling), GPU metrics, the names of
//! the GPUs (`TARGET_INFO_GPU`).
//!
//! Errors: a file that is not an SQLite database, or one without any of the three tables
//! (not an nsys export, or one captured without CUDA tracing), is an error naming the file
//! (and the tables it holds); a row with a NULL or non-integer `start` or `end`, an end
//! before its start or a time beyond 10 years is rejected, named by its table and rowid
//! (the warning's `line` is the rowid), and the rest still loads. SQLite reads a real file:
//! stdin and compressed input are first written to a temporary one ([`read_stream`]).

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::ReadError;
use crate::event::{Args, LineWarning, Run, RunMeta, Span, SpanKind, MAX_KEPT_WARNINGS, MAX_TIME_NS};

/// The first 16 bytes of every SQLite 3 database file.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The activity tables read, with the span kind each becomes.
const TABLES: [(&str, SpanKind); 3] = [
    ("CUPTI_ACTIVITY_KIND_KERNEL", SpanKind::Kernel),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", SpanKind::Memcpy),
    ("CUPTI_ACTIVITY_KIND_MEMSET", SpanKind::Memset),
];

/// Whether the first bytes of an input are an SQLite database (read as an nsys export).
pub fn sniff(prefix: &[u8]) -> bool {
    prefix.starts_with(SQLITE_MAGIC)
}

/// Whether the file at `path` starts with the SQLite magic (false when it cannot be read).
pub fn is_sqlite_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && sniff(&head)
}

/// The name of a CUPTI memcpy kind (`copyKind`).
pub fn copy_kind(k: i64) -> &'static str {
    match k {
        1 => "HtoD",
        2 => "DtoH",
        3 => "HtoA",
        4 => "AtoH",
        5 => "AtoA",
        6 => "AtoD",
        7 => "DtoA",
        8 => "DtoD",
        9 => "HtoH",
        10 => "PtoP",
        _ => "unknown",
    }
}

/// Read an export from any byte source (stdin, a decompressed stream): written to a
/// temporary file first, since SQLite reads files.
pub fn read_stream<R: Read>(mut r: R, name: &str) -> Result<Run, ReadError> {
    let io_err = |source: io::Error| ReadError::Io { path: name.to_string(), line: 1, source };
    let mut tmp = tempfile::Builder::new().prefix("proofscope-nsys-").suffix(".sqlite").tempfile().map_err(io_err)?;
    io::copy(&mut r, tmp.as_file_mut()).map_err(io_err)?;
    read_file(tmp.path(), name)
}

/// One row as read, before times are normalised.
struct Row {
    kind: SpanKind,
    start: i64,
    end: i64,
    device: Option<u32>,
    args: Args,
}

/// Read the export at `path`, opened read-only; `name` is used in messages.
pub fn read_file(path: &Path, name: &str) -> Result<Run, ReadError> {
    let fail = |what: &str, e: rusqlite::Error| ReadError::Format { path: name.to_string(), message: format!("{what} (read as an Nsight Systems SQLite export): {e}") };
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(|e| fail("cannot open the SQLite database", e))?;
    let tables: Vec<String> = (|| {
        let mut st = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
        let names = st.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        Ok(names)
    })()
    .map_err(|e| fail("not a readable SQLite database", e))?;
    let present: Vec<&(&str, SpanKind)> = TABLES.iter().filter(|(t, _)| tables.iter().any(|x| x == t)).collect();
    if present.is_empty() {
        let mut found: Vec<&str> = tables.iter().take(12).map(String::as_str).collect();
        if tables.len() > 12 {
            found.push("…");
        }
        let found = if found.is_empty() { "none".to_string() } else { found.join(", ") };
        return Err(ReadError::Format {
            path: name.to_string(),
            message: format!(
                "not an Nsight Systems export with device activity: none of the tables {} (tables found: {found}; an nsys capture without CUDA tracing has none)",
                TABLES.iter().map(|t| t.0).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let strings: HashMap<i64, String> = if tables.iter().any(|t| t == "StringIds") {
        (|| {
            let mut st = db.prepare("SELECT id, value FROM StringIds")?;
            let m = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?.collect::<Result<HashMap<_, _>, _>>()?;
            Ok(m)
        })()
        .map_err(|e| fail("cannot read table StringIds", e))?
    } else {
        HashMap::new()
    };

    let mut rows: Vec<Row> = Vec::new();
    let (mut total, mut rejected) = (0u64, 0u64);
    let mut warnings: Vec<LineWarning> = Vec::new();
    let mut by_table: Vec<String> = Vec::new();
    for (table, kind) in present {
        let cols: Vec<String> = (|| {
            let mut st = db.prepare(&format!("PRAGMA table_info({table})"))?;
            let c = st.query_map([], |r| r.get::<_, String>(1))?.collect::<Result<Vec<_>, _>>()?;
            Ok(c)
        })()
        .map_err(|e| fail(&format!("cannot read the columns of {table}"), e))?;
        let has = |c: &str| cols.iter().any(|x| x == c);
        let missing: Vec<&str> = ["start", "end"].into_iter().filter(|c| !has(c)).collect();
        if !missing.is_empty() {
            return Err(ReadError::Format { path: name.to_string(), message: format!("table {table} has no column {} (its columns: {})", missing.join(", "), cols.join(", ")) });
        }
        let col = |c: &str| if has(c) { format!("\"{c}\"") } else { "NULL".to_string() };
        let sql = format!(
            "SELECT rowid, \"start\", \"end\", {}, {}, {}, {}, {}, {} FROM {table} ORDER BY rowid",
            col("deviceId"),
            col("streamId"),
            col("shortName"),
            col("demangledName"),
            col("bytes"),
            col("copyKind")
        );
        let mut n = 0u64;
        let read = (|| -> rusqlite::Result<()> {
            let mut st = db.prepare(&sql)?;
            let mut q = st.query([])?;
            while let Some(r) = q.next()? {
                n += 1;
                let rowid = r.get::<_, i64>(0).unwrap_or(0);
                let int = |i: usize| -> Result<Option<i64>, String> {
                    match r.get_ref(i) {
                        Ok(ValueRef::Integer(v)) => Ok(Some(v)),
                        Ok(ValueRef::Null) => Ok(None),
                        Ok(ValueRef::Real(f)) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(Some(f as i64)),
                        Ok(other) => Err(format!("is not an integer but {:?}", other.data_type())),
                        Err(e) => Err(e.to_string()),
                    }
                };
                let row = (|| -> Result<Row, String> {
                    let named = ["start", "end", "deviceId", "streamId", "shortName", "demangledName", "bytes", "copyKind"];
                    let mut v = [None; 8];
                    for (i, c) in named.iter().enumerate() {
                        v[i] = int(i + 1).map_err(|e| format!("`{c}` {e}"))?;
                    }
                    let (Some(start), Some(end)) = (v[0], v[1]) else {
                        return Err(format!("`{}` is NULL", if v[0].is_none() { "start" } else { "end" }));
                    };
                    if end < start {
                        return Err(format!("`end` ({end}) is before `start` ({start})"));
                    }
                    let device = v[2].and_then(|d| u32::try_from(d).ok()).filter(|&d| d < 1024);
                    let mut args = Args::new();
                    if let Some(s) = v[3] {
                        args.insert("stream".into(), Value::from(s));
                    }
                    let text = |id: Option<i64>| id.and_then(|i| strings.get(&i).cloned());
                    match kind {
                        SpanKind::Kernel => {
                            let (short, long) = (text(v[4]), text(v[5]));
                            let kname = short.clone().or_else(|| long.clone()).unwrap_or_else(|| match v[4].or(v[5]) {
                                Some(id) => format!("kernel (string #{id})"),
                                None => "kernel".to_string(),
                            });
                            args.insert("name".into(), Value::String(kname));
                            if let (Some(_), Some(l)) = (short, long) {
                                args.insert("demangled".into(), Value::String(l));
                            }
                        }
                        SpanKind::Memcpy => {
                            let dir = v[7].map(copy_kind).unwrap_or("unknown");
                            args.insert("name".into(), Value::String(format!("Memcpy {dir}")));
                            args.insert("direction".into(), Value::String(dir.into()));
                        }
                        _ => {
                            args.insert("name".into(), Value::String("Memset".into()));
                        }
                    }
                    if let Some(b) = v[6] {
                        args.insert("bytes".into(), Value::from(b));
                    }
                    Ok(Row { kind: kind.clone(), start, end, device, args })
                })();
                match row {
                    Ok(row) => rows.push(row),
                    Err(why) => {
                        rejected += 1;
                        if warnings.len() < MAX_KEPT_WARNINGS {
                            warnings.push(LineWarning { line: rowid.max(0) as u64, message: format!("{table} rowid {rowid}: {why}") });
                        }
                    }
                }
            }
            Ok(())
        })();
        read.map_err(|e| fail(&format!("cannot read table {table}"), e))?;
        total += n;
        by_table.push(format!("{n} in {table}"));
    }

    let mut run = Run::new(RunMeta::new("nsys-sqlite"));
    let t0 = rows.iter().map(|r| r.start).min().unwrap_or(0);
    run.spans.reserve(rows.len());
    for r in rows {
        let rel = |t: i64| u64::try_from(t.saturating_sub(t0)).ok().filter(|&x| x <= MAX_TIME_NS);
        let (Some(start), Some(end)) = (rel(r.start), rel(r.end)) else {
            rejected += 1;
            if warnings.len() < MAX_KEPT_WARNINGS {
                warnings.push(LineWarning { line: 0, message: format!("a {} row at {} ns is more than 10 years after the first row: not a time of a run", r.kind.as_str(), r.end) });
            }
            continue;
        };
        run.spans.push(Span { kind: r.kind, start_ns: start, end_ns: Some(end), job: None, partition: None, worker: None, device: r.device, args: r.args });
    }
    run.meta.extra.insert("trace_start_ns".into(), Value::from(t0));
    let d = &mut run.diagnostics;
    d.format = "nsys-sqlite".into();
    // Counted in rows, as lines are for the line formats.
    d.lines_total = total;
    d.event_lines = total;
    d.lines_rejected = rejected;
    warnings.sort_by_key(|w| w.line);
    d.warnings = warnings;
    if total == 0 {
        d.problem(format!("an Nsight Systems export with no device activity: {} (nothing to analyse)", by_table.join(", ")));
    } else if run.spans.is_empty() {
        d.problem(format!("no usable device activity: every one of the {total} rows was rejected"));
    }
    run.normalize();
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_magic_and_copy_kinds() {
        assert!(sniff(b"SQLite format 3\0\x10\x00"));
        assert!(!sniff(b"SQLite format 3"));
        assert!(!sniff(b"{\"traceEvents\": []}"));
        assert_eq!((copy_kind(1), copy_kind(2), copy_kind(8), copy_kind(42)), ("HtoD", "DtoH", "DtoD", "unknown"));
    }
}
