//! Issue 17 (interop): an Nsight Systems SQLite export (`nsys export --type sqlite`) read as
//! a run (`timeline::read::nsys`). Nsight Systems is not installed on any machine we reach:
//! the fixture `data/nsys-small.sqlite` is built by [`build_fixture`] below to the export's
//! documented schema (the CUPTI activity tables and `StringIds`), not captured by nsys.
//! Regenerate it with `NSYS_FIXTURE_WRITE=1 cargo test ... --test nsys`.
//!
//! The fixture, in ns since its first row (the rows start at 5 s of the session), all on
//! device 0:
//! - stream 7: memcpy HtoD 0–100 000 (1 MiB), kernel `msm_bucket` 100 000–500 000,
//!   kernel `msm_bucket` 1 650 000–1 850 000, memcpy DtoH 1 850 000–1 900 000 (64 KiB);
//! - stream 8: kernel `ntt_forward` 300 000–600 000, memset 600 000–650 000 (4 KiB);
//! - a gap 650 000–1 650 000 (1 ms) with nothing on the device.
//!
//! Busy (the union): 0–650 000 and 1 650 000–1 900 000 = 900 000 ns of a 1 900 000 ns
//! window: utilisation 9/19.

use std::path::Path;

use rusqlite::{params, Connection};
use timeline::analysis::{gaps, utilization, AnalyzeOptions};
use timeline::read::{read_bytes, read_path, Format, ReadError};
use timeline::{Run, SpanKind};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nsys-small.sqlite");

/// The session time (ns) of the first row.
const BASE: i64 = 5_000_000_000;

/// The export's tables as `nsys export --type sqlite` documents them (the columns read, and
/// the neighbours that make a row recognisable; the rest of the documented columns are
/// left out).
const SCHEMA: &str = "
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds(id),
    shortName INTEGER NOT NULL REFERENCES StringIds(id), mangledName INTEGER REFERENCES StringIds(id),
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    registersPerThread INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, dstDeviceId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, totalMemory INTEGER);
";

/// Build the fixture at `path` (see the module doc for its content).
fn build_fixture(path: &Path) {
    let _ = std::fs::remove_file(path);
    let db = Connection::open(path).unwrap();
    db.execute_batch(SCHEMA).unwrap();
    for (id, s) in [(1, "msm_bucket"), (2, "void msm_bucket<256u>(unsigned long const*, int)"), (3, "ntt_forward"), (4, "void ntt_forward(unsigned int*, int)")] {
        db.execute("INSERT INTO StringIds VALUES (?1, ?2)", params![id, s]).unwrap();
    }
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H200', 150754820096)", []).unwrap();
    let kernel = |start: i64, end: i64, stream: i64, corr: i64, long: i64, short: i64| {
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 1, ?3, ?4, 288230376151711744, ?5, ?6, NULL, 128, 1, 1, 256, 1, 1, 32)",
            params![BASE + start, BASE + end, stream, corr, long, short],
        )
        .unwrap();
    };
    kernel(100_000, 500_000, 7, 11, 2, 1);
    kernel(300_000, 600_000, 8, 12, 4, 3);
    kernel(1_650_000, 1_850_000, 7, 14, 2, 1);
    let memcpy = |start: i64, end: i64, bytes: i64, kind: i64, corr: i64| {
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?1, ?2, 0, 1, 7, ?3, 288230376151711744, ?4, ?5, 0, 1, 0, 0)",
            params![BASE + start, BASE + end, corr, bytes, kind],
        )
        .unwrap();
    };
    memcpy(0, 100_000, 1 << 20, 1, 10);
    memcpy(1_850_000, 1_900_000, 64 << 10, 2, 15);
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?1, ?2, 0, 1, 8, 13, 288230376151711744, 0, 4096, 1)", params![BASE + 600_000, BASE + 650_000]).unwrap();
    db.execute_batch("VACUUM").unwrap();
}

fn fixture() -> Run {
    read_path(Path::new(FIXTURE), None).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn spans_of(run: &Run) -> Vec<String> {
    run.spans.iter().map(|s| format!("{} {} {:?} {:?} {:?}", s.kind.as_str(), s.start_ns, s.end_ns, s.device, s.args)).collect()
}

#[test]
fn the_committed_fixture_is_what_its_builder_makes() {
    let d = tempfile::tempdir().unwrap();
    let fresh = d.path().join("nsys-small.sqlite");
    build_fixture(&fresh);
    if std::env::var_os("NSYS_FIXTURE_WRITE").is_some() {
        std::fs::copy(&fresh, FIXTURE).unwrap();
    }
    let len = std::fs::metadata(FIXTURE).unwrap().len();
    assert!(len < 50 << 10, "{len} bytes");
    assert_eq!(spans_of(&read_path(&fresh, None).unwrap()), spans_of(&fixture()));
}

#[test]
fn the_fixture_reads_as_kernels_and_copies_on_one_device() {
    let run = fixture();
    let d = &run.diagnostics;
    assert_eq!(d.format, "nsys-sqlite");
    assert!(!d.has_warnings(), "{d:?}");
    assert_eq!((d.lines_total, d.event_lines, d.lines_rejected), (6, 6, 0));
    assert_eq!(run.meta.source, "nsys-sqlite");
    assert_eq!(run.meta.extra["trace_start_ns"], BASE);
    assert_eq!(run.devices(), vec![0]);
    let count = |k: &str| run.spans.iter().filter(|s| s.kind.as_str() == k).count();
    assert_eq!((count("kernel"), count("memcpy"), count("memset"), run.spans.len()), (3, 2, 1, 6));
    assert_eq!((run.spans[0].start_ns, run.end_ns()), (0, 1_900_000));
    let name = |s: &timeline::Span| s.args["name"].as_str().unwrap().to_string();
    let kernels: Vec<(String, u64, Option<u64>, u64)> =
        run.spans.iter().filter(|s| s.kind == SpanKind::Kernel).map(|s| (name(s), s.start_ns, s.end_ns, s.args["stream"].as_u64().unwrap())).collect();
    assert_eq!(
        kernels,
        vec![("msm_bucket".into(), 100_000, Some(500_000), 7), ("ntt_forward".into(), 300_000, Some(600_000), 8), ("msm_bucket".into(), 1_650_000, Some(1_850_000), 7)]
    );
    let k = run.spans.iter().find(|s| s.kind == SpanKind::Kernel).unwrap();
    assert_eq!(k.args["demangled"], "void msm_bucket<256u>(unsigned long const*, int)");
    let copies: Vec<(String, String, u64, u64)> = run
        .spans
        .iter()
        .filter(|s| s.kind == SpanKind::Memcpy)
        .map(|s| (name(s), s.args["direction"].as_str().unwrap().to_string(), s.args["bytes"].as_u64().unwrap(), s.start_ns))
        .collect();
    assert_eq!(copies, vec![("Memcpy HtoD".into(), "HtoD".into(), 1 << 20, 0), ("Memcpy DtoH".into(), "DtoH".into(), 64 << 10, 1_850_000)]);
    let memset = run.spans.iter().find(|s| s.kind == SpanKind::Memset).unwrap();
    assert_eq!((memset.start_ns, memset.end_ns, memset.args["bytes"].as_u64(), memset.args["stream"].as_u64()), (600_000, Some(650_000), Some(4096), Some(8)));
    assert!(run.spans.iter().all(|s| s.device == Some(0) && s.kind.is_device_work()));
    // A lane per stream.
    let laid = timeline::lanes::LaidOut::new(&run);
    let rows: Vec<(String, usize)> = laid.lanes().iter().filter(|l| l.stream.is_some()).map(|l| (l.name(), l.spans.len())).collect();
    assert_eq!(rows, vec![("gpu0 stream 7".to_string(), 4), ("gpu0 stream 8".into(), 2)]);
}

#[test]
fn device_busy_time_and_the_gap_are_the_hand_computed_ones() {
    let run = fixture();
    let u = utilization::analyze(&run);
    assert_eq!(u.devices.len(), 1);
    let d0 = &u.devices[0];
    assert!(close(d0.kernel_busy_ms.unwrap(), 0.9) && close(d0.window_ms, 1.9) && close(d0.window_start_ms, 0.0), "{d0:?}");
    assert!(close(d0.kernel_utilization.unwrap(), 9.0 / 19.0), "{d0:?}");
    assert!(close(u.kernel_utilization.unwrap(), 9.0 / 19.0));
    let g = gaps::analyze(&run, &AnalyzeOptions { min_gap_ms: 0.5, ..Default::default() });
    let found: Vec<(u32, u64, u64, gaps::GapCause)> = g.gaps.iter().map(|x| (x.device, x.start_ns, x.end_ns, x.cause)).collect();
    assert_eq!(found, vec![(0, 650_000, 1_650_000, gaps::GapCause::Other)]);
    assert_eq!(g.totals.below_threshold_count, 0);
}

#[test]
fn detection_by_content_forcing_stdin_like_and_compressed_input() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let want = spans_of(&fixture());
    // Through a byte source (stdin, a progress-wrapped file): written to a temporary file.
    assert_eq!(spans_of(&read_bytes(&bytes[..], "<stdin>", None).unwrap()), want);
    assert_eq!(spans_of(&read_bytes(&bytes[..], "<stdin>", Some(Format::NsysSqlite)).unwrap()), want);
    // Gzipped, as a file and as a stream.
    let d = tempfile::tempdir().unwrap();
    let gz = d.path().join("nsys-small.sqlite.gz");
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, &bytes).unwrap();
    e.finish().unwrap();
    assert_eq!(spans_of(&read_path(&gz, None).unwrap()), want);
    assert_eq!(spans_of(&read_path(&gz, Some(Format::NsysSqlite)).unwrap()), want);
    assert_eq!("nsys-sqlite".parse::<Format>(), Ok(Format::NsysSqlite));
    assert_eq!(Format::NsysSqlite.name(), "nsys-sqlite");
}

fn format_error(r: Result<Run, ReadError>) -> String {
    match r {
        Err(e @ ReadError::Format { .. }) => e.to_string(),
        other => panic!("expected a format error, got {:?}", other.map(|r| r.diagnostics)),
    }
}

#[test]
fn what_is_not_an_nsys_export_is_an_error_naming_the_file_and_tables() {
    let d = tempfile::tempdir().unwrap();
    // A valid SQLite database of another program.
    let other = d.path().join("other.sqlite");
    let db = Connection::open(&other).unwrap();
    db.execute_batch("CREATE TABLE users (id INTEGER); CREATE TABLE orders (id INTEGER);").unwrap();
    drop(db);
    let e = format_error(read_path(&other, None));
    assert!(e.contains("other.sqlite") && e.contains("CUPTI_ACTIVITY_KIND_KERNEL") && e.contains("tables found: orders, users"), "{e}");
    // The SQLite magic followed by garbage: a corrupt database.
    let corrupt = d.path().join("corrupt.sqlite");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..4000u32).map(|i| (i * 7 + 3) as u8));
    std::fs::write(&corrupt, &bytes).unwrap();
    let e = format_error(read_path(&corrupt, None));
    assert!(e.contains("corrupt.sqlite") && e.contains("SQLite"), "{e}");
    // The committed fixture cut in half.
    let cut = d.path().join("cut.sqlite");
    let full = std::fs::read(FIXTURE).unwrap();
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    match read_path(&cut, None) {
        Err(e) => assert!(e.to_string().contains("cut.sqlite"), "{e}"),
        Ok(run) => assert!(run.spans.len() < 6 || run.diagnostics.has_warnings(), "{:?}", run.diagnostics),
    }
    // Forced on a text file.
    let text = d.path().join("log.txt");
    std::fs::write(&text, "TIMELINE,1,GPU_START,j,\n".repeat(200)).unwrap();
    let e = read_path(&text, Some(Format::NsysSqlite)).unwrap_err().to_string();
    assert!(e.contains("log.txt"), "{e}");
}

#[test]
fn bad_rows_are_rejected_by_table_and_rowid_and_the_rest_loads() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("bad.sqlite");
    let db = Connection::open(&p).unwrap();
    // Only a kernel table, without the NOT NULL constraints (a damaged export), no StringIds.
    db.execute_batch(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, shortName INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 1, 3, 9);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5000, 4000, 1, 3, 9);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (NULL, 4000, 1, 3, 9);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('soon', 4000, 1, 3, 9);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (3000, 3500, 1, 4, NULL);",
    )
    .unwrap();
    drop(db);
    let run = read_path(&p, None).unwrap();
    let dg = &run.diagnostics;
    assert_eq!((dg.lines_total, dg.lines_rejected, run.spans.len()), (5, 3, 2));
    let msgs: Vec<String> = dg.warnings.iter().map(|w| format!("{}: {}", w.line, w.message)).collect();
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert!(msgs[0].starts_with("2: CUPTI_ACTIVITY_KIND_KERNEL rowid 2: `end` (4000) is before `start` (5000)"), "{msgs:?}");
    assert!(msgs[1].contains("rowid 3: `start` is NULL"), "{msgs:?}");
    assert!(msgs[2].contains("rowid 4: `start` is not an integer"), "{msgs:?}");
    // Device 1, times from the first good row; a name id without StringIds is said as such.
    assert_eq!((run.spans[0].device, run.spans[0].start_ns, run.spans[0].end_ns), (Some(1), 0, Some(1000)));
    assert_eq!(run.spans[0].args["name"], "kernel (string #9)");
    assert_eq!(run.spans[1].args["name"], "kernel");

    // Tables present but empty: a problem of the input, not an error.
    let e = d.path().join("empty.sqlite");
    Connection::open(&e).unwrap().execute_batch("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER);").unwrap();
    let run = read_path(&e, None).unwrap();
    assert!(run.spans.is_empty());
    assert!(run.diagnostics.problems.iter().any(|p| p.contains("no device activity")), "{:?}", run.diagnostics.problems);
}
