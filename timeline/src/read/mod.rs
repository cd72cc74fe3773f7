//! Readers: turn a log (file or stdin) into a [`Run`]. Four formats: an Nsight Systems
//! SQLite export ([`nsys`]), recognised by the SQLite magic; a Chrome / Perfetto
//! trace (one JSON document, as PyTorch's Kineto writes: [`chrome`]), recognised from the
//! first bytes (a top-level object with `traceEvents`, an array of events); otherwise,
//! detected from the first meaningful line, our JSON lines (`{"type":...}` records) and the
//! cuzk daemon's `TIMELINE,<offset_ms>,<event>,<job_id>,<detail>` lines mixed with ordinary
//! log lines — bare or wrapped as a provider keeps them (journald, `journalctl -o json`,
//! Docker json-file, the daemon's JSON log between them: [`wrap`], detected line by line).
//! Files and stdin may be gzip- or zstd-compressed (detected by magic bytes, decompressed
//! as a stream). Readers never panic on input: every line they cannot use is counted in
//! [`Diagnostics`](crate::event::Diagnostics) and the first ones are named by number.

pub mod chrome;
pub mod cuzk;
pub mod jsonl;
pub mod lines;
pub mod nsys;
pub mod wrap;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use crate::event::Run;

/// Input formats: our JSON lines, a cuzk log — its wrapper detected per line (`Cuzk`) or
/// forced (`Plain`, `Journal`, `JournalJson`, `Docker`: every line is taken to be so
/// wrapped, and a line that is not is an ordinary line) — or another tool's Chrome /
/// Perfetto trace (`ChromeTrace`), or an Nsight Systems SQLite export (`NsysSqlite`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Cuzk,
    Plain,
    Journal,
    JournalJson,
    Docker,
    ChromeTrace,
    NsysSqlite,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Cuzk => "cuzk",
            Format::Plain => "plain",
            Format::Journal => "journal",
            Format::JournalJson => "journal-json",
            Format::Docker => "docker",
            Format::ChromeTrace => "chrome-trace",
            Format::NsysSqlite => "nsys-sqlite",
        }
    }
    /// The wrapper a cuzk format forces (`None`: detected per line, or not a cuzk format).
    pub fn wrapper(self) -> Option<wrap::Wrapper> {
        match self {
            Format::Plain => Some(wrap::Wrapper::Plain),
            Format::Journal => Some(wrap::Wrapper::Journal),
            Format::JournalJson => Some(wrap::Wrapper::JournalJson),
            Format::Docker => Some(wrap::Wrapper::Docker),
            Format::Jsonl | Format::Cuzk | Format::ChromeTrace | Format::NsysSqlite => None,
        }
    }
}

/// The names `--format` takes.
pub const FORMAT_NAMES: &str = "jsonl, cuzk (wrapper detected per line), plain, journal, journal-json, docker, chrome-trace, nsys-sqlite";

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "jsonl" | "json" => Ok(Format::Jsonl),
            "cuzk" | "timeline" | "auto" => Ok(Format::Cuzk),
            "plain" => Ok(Format::Plain),
            "journal" | "journald" => Ok(Format::Journal),
            "journal-json" | "journald-json" => Ok(Format::JournalJson),
            "docker" => Ok(Format::Docker),
            "chrome-trace" | "chrome" | "perfetto" | "kineto" => Ok(Format::ChromeTrace),
            "nsys-sqlite" | "nsys" | "sqlite" => Ok(Format::NsysSqlite),
            other => Err(format!("unknown format `{other}` (expected one of {FORMAT_NAMES})")),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot open {path}: {source}")]
    Open { path: String, source: io::Error },
    #[error("error reading {path} at line {line}: {source}")]
    Io { path: String, line: u64, source: io::Error },
    /// The input is not of the format it was read as, as a whole (a Chrome trace that is not
    /// valid JSON, or cut off): nothing of it can be trusted.
    #[error("{path}: {message}")]
    Format { path: String, message: String },
}

/// Guess the format from the first non-blank line: a JSON object with our `type` tag (or
/// any line starting with `{` that is not a JSON object: our reader names what is wrong
/// with it) is our JSON lines; a JSON object without it is a wrapped daemon line
/// (journald, Docker, the daemon's JSON log); anything else is read as a cuzk log (which
/// tolerates ordinary log lines).
pub fn detect(first_line: &str) -> Format {
    match wrap::is_our_record(first_line) {
        Some(false) => Format::Cuzk,
        Some(true) => Format::Jsonl,
        None if first_line.trim_start().starts_with('{') => Format::Jsonl,
        None => Format::Cuzk,
    }
}

/// Read a log from a path (`-` is stdin), detecting the format unless one is given.
pub fn read_path(path: &Path, format: Option<Format>) -> Result<Run, ReadError> {
    let name = path.display().to_string();
    if name == "-" {
        // Stdin too may be gzipped (`zcat`-less pipelines): the same detection as files.
        let stdin = io::stdin();
        return read_bytes(stdin.lock(), &name, format);
    }
    let f = File::open(path).map_err(|source| ReadError::Open { path: name.clone(), source })?;
    // An Nsight Systems export is read in place (SQLite reads files); compressed, it goes
    // through the stream path (a temporary file).
    if format == Some(Format::NsysSqlite) || format.is_none() && nsys::is_sqlite_file(path) {
        if !nsys::is_sqlite_file(path) {
            let r = decompressed(f).map_err(|source| ReadError::Io { path: name.clone(), line: 1, source })?;
            return nsys::read_stream(r, &name);
        }
        return nsys::read_file(path, &name);
    }
    read_bytes(f, &name, format)
}

/// Read a log from any byte source (a file, a progress-wrapped file), decompressing it as a
/// stream when it starts with the gzip or zstd magic: timelines are often kept gzipped
/// (reports/ does), rotated daemon logs gzipped or zstd-compressed, with or without the
/// original name in the header; concatenated members/frames are read one after the other.
/// `name` is used in error messages.
pub fn read_bytes<R: io::Read>(source: R, name: &str, format: Option<Format>) -> Result<Run, ReadError> {
    let r = decompressed(source).map_err(|source| ReadError::Io { path: name.to_string(), line: 1, source })?;
    read_from(r, name, format)
}

/// Any byte source as a buffered reader of its content: gunzipped or zstd-decompressed,
/// as a stream, when it starts with either's magic, as it is otherwise. The one place that
/// knows the compressions (logs, and `validate-trace` on a gzipped trace).
pub fn decompressed<'a, R: io::Read + 'a>(source: R) -> io::Result<Box<dyn BufRead + 'a>> {
    let mut r = BufReader::with_capacity(1 << 20, source);
    let head = r.fill_buf()?;
    if head.starts_with(&GZIP_MAGIC) {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(r))));
    }
    if head.starts_with(&ZSTD_MAGIC) {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, zstd::stream::read::Decoder::with_buffer(r)?)));
    }
    Ok(Box::new(r))
}

/// The first two bytes of every gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The first four bytes of every zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Read a whole log held in memory. Reading a byte slice fails only on a Chrome trace that
/// is not one as a whole ([`ReadError::Format`]): the run is then empty, with the error as
/// its problem (never a quiet empty run).
pub fn read_str(text: &str, format: Option<Format>) -> Run {
    read_from(text.as_bytes(), "<memory>", format).unwrap_or_else(|e| {
        let mut run = Run::default();
        run.diagnostics.problem(e.to_string());
        run
    })
}

/// Read from any buffered reader; `name` is used in error messages.
pub fn read_from<R: BufRead>(r: R, name: &str, format: Option<Format>) -> Result<Run, ReadError> {
    let t0 = std::time::Instant::now();
    let run = read_inner(r, name, format, lines::CHUNK_BYTES, lines::default_decoders())?;
    let d = &run.diagnostics;
    tracing::debug!(
        "read {name}: format {}, {} lines ({} events, {} rejected, {} ignored), {} spans ({} open), {} counters in {:.1} ms",
        d.format,
        d.lines_total,
        d.event_lines,
        d.lines_rejected,
        d.lines_ignored,
        run.spans.len(),
        d.open_spans,
        run.counters.len(),
        t0.elapsed().as_secs_f64() * 1e3
    );
    Ok(run)
}

/// `chunk_bytes`, `decoders`: the size of the pieces the lines are decoded in
/// ([`lines::CHUNK_BYTES`]) and the threads that decode them.
fn read_inner<R: BufRead>(mut r: R, name: &str, format: Option<Format>, chunk_bytes: usize, decoders: usize) -> Result<Run, ReadError> {
    // A Chrome trace is one JSON document, perhaps on one huge line: recognised from its
    // first bytes (read ahead, then read again through the chain) before any line is split.
    if format == Some(Format::NsysSqlite) {
        return nsys::read_stream(r, name);
    }
    let mut prefix = Vec::new();
    if format.is_none() {
        (&mut r).take(chrome::SNIFF_BYTES as u64).read_to_end(&mut prefix).map_err(|source| ReadError::Io { path: name.to_string(), line: 1, source })?;
    }
    let chrome = format == Some(Format::ChromeTrace) || format.is_none() && chrome::sniff(&prefix);
    let nsys = format.is_none() && nsys::sniff(&prefix);
    let mut r = io::Cursor::new(prefix).chain(r);
    if nsys {
        return nsys::read_stream(r, name);
    }
    if chrome {
        return chrome::read(r, name);
    }
    let mut chunks = lines::ChunkReader::new(&mut r, name, chunk_bytes);
    // The first non-blank line decides the format unless one is forced; the chunks read to
    // find it (or the first one) are decoded first.
    let (fmt, held) = match format {
        Some(f) => (f, chunks.next_chunk()?.into_iter().collect()),
        None => {
            let (found, held) = chunks.detect(detect)?;
            (found.unwrap_or(Format::Jsonl), held)
        }
    };
    let (mut run, seen) = match fmt {
        Format::Jsonl => lines::pipeline(&mut chunks, held, decoders, || |_, l: &str| jsonl::decode(l), jsonl::assemble)?,
        // Chrome traces and Nsight exports were read above, forced or recognised: a line
        // format is all that is left.
        cuzk_format => {
            let wrapper = cuzk_format.wrapper();
            lines::pipeline(
                &mut chunks,
                held,
                decoders,
                || {
                    let mut dec = cuzk::Decoder::new(wrapper);
                    move |n, l: &str| dec.decode(n, l)
                },
                cuzk::assemble,
            )?
        }
    };
    if fmt != Format::Jsonl && fmt != Format::Cuzk {
        run.diagnostics.format = format!("cuzk ({})", fmt.name());
    }
    run.diagnostics.binary_lines = seen.binary;
    judge_input(&mut run);
    if run.spans.is_empty() && run.counters.is_empty() && !seen.samples.is_empty() {
        // Say what the lines looked like: the user sees at once what was fed in.
        let shapes: Vec<String> = seen.samples.iter().map(|(n, l)| format!("line {n}: {l}")).collect();
        run.diagnostics.problem(format!("no event could be built; the first lines look like: {}", shapes.join(" | ")));
    }
    Ok(run)
}

/// The input as a whole: an empty file, a file with no event of its format (the wrong
/// format, a binary or compressed file read as text), one whose every event line was
/// rejected, a schema version newer than this build's. Each is a [`Diagnostics::problems`]
/// entry: a warning, and `--strict` fails on it.
pub fn judge_input(run: &mut Run) {
    let d = &run.diagnostics;
    let (total, events, rejected, binary) = (d.lines_total, d.event_lines, d.lines_rejected, d.binary_lines);
    let fmt = d.format.clone();
    let not_text = if binary > 0 { format!("; {binary} of them are not text (invalid UTF-8 or NUL bytes): a binary or compressed file?") } else { String::new() };
    let nothing = run.spans.is_empty() && run.counters.is_empty();
    if total == 0 {
        run.diagnostics.problem("empty input: no lines at all");
    } else if events == 0 {
        let what = if fmt.starts_with("cuzk") { "TIMELINE line (cuzk format)" } else { "JSON record (jsonl format)" };
        run.diagnostics.problem(format!("no event in {total} lines: not one {what}{not_text}"));
    } else if nothing && rejected > 0 {
        run.diagnostics.problem(format!("no usable event: every one of the {events} event lines was rejected{not_text}"));
    }
    if run.meta.schema_version > crate::event::SCHEMA_VERSION {
        run.diagnostics.problem(format!(
            "schema_version {} is newer than this proofscope reads ({}): its fields may mean something else",
            run.meta.schema_version,
            crate::event::SCHEMA_VERSION
        ));
    }
}

/// The input's schema version when it is newer than this build reads (an error unless the
/// user forces the read).
pub fn unknown_schema(run: &Run) -> Option<u32> {
    (run.meta.schema_version > crate::event::SCHEMA_VERSION).then_some(run.meta.schema_version)
}

/// Convenience for callers holding any `Read`.
pub fn read_any<R: Read>(r: R, name: &str, format: Option<Format>) -> Result<Run, ReadError> {
    read_from(BufReader::new(r), name, format)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same run, whatever the size of the pieces the lines are decoded in: one piece
    /// (decoded on the calling thread) or many (decoded on several threads, job ids
    /// interned per piece and mapped back, samples and binary lines counted per piece).
    #[test]
    fn pieces_of_any_size_read_the_same_run() {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fleet/");
        let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
        for f in ["host-a.log.gz", "host-b.log", "host-c.jsonl", "host-d.log"] {
            let mut bytes = Vec::new();
            decompressed(File::open(format!("{data}{f}")).unwrap()).unwrap().read_to_end(&mut bytes).unwrap();
            inputs.push((f.to_string(), bytes));
        }
        inputs.push(("sample".into(), std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/cuzk-sample.log")).unwrap()));
        let mut messy: Vec<u8> = b"\n  \r\n".to_vec();
        for i in 0..400u32 {
            let job = i % 37;
            messy.extend_from_slice(format!("TIMELINE,{},SYNTH_START,job-{job},partition={}\r\n", i * 10, i % 3).as_bytes());
            messy.extend_from_slice(format!("TIMELINE,{},SYNTH_END,job-{job},partition={},synth_ms=5\n", i * 10 + 5, i % 3).as_bytes());
            match i % 50 {
                7 => messy.extend_from_slice(b"bad \xff\xfe line\n"),
                11 => messy.extend_from_slice(b"nul\0line\n"),
                13 => messy.extend_from_slice(format!("TIMELINE,x,SYNTH_START,job-{job}\n").as_bytes()),
                17 => messy.extend_from_slice(&[b'y'; 5000]),
                _ => {}
            }
            if i == 200 {
                // A daemon restart: offsets from 0 again.
                messy.extend_from_slice(b"TIMELINE,0,SYNTH_START,job-0,partition=9\n");
            }
        }
        messy.extend_from_slice(b"TIMELINE,99999,SYNTH_START,job-last,partition=0");
        inputs.push(("messy".into(), messy));
        inputs.push(("garbage".into(), b"\nnot a log\n\xffstill not\nnor this\nnor that\n".repeat(50)));
        for (name, bytes) in &inputs {
            let whole = read_inner(&bytes[..], name, None, lines::CHUNK_BYTES, 1).unwrap();
            assert!(whole.diagnostics.lines_total > 0, "{name}");
            for (chunk, decoders) in [(1, 1), (64, 3), (1000, 2), (4096, 3)] {
                // Through a small buffer, as a file is read: the chunks are many.
                let src = std::io::BufReader::with_capacity(97, &bytes[..]);
                let pieces = read_inner(src, name, None, chunk, decoders).unwrap();
                assert!(pieces == whole, "{name}: pieces of {chunk} bytes on {decoders} threads read another run");
            }
        }
    }
}
