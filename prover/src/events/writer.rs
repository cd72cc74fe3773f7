//! The writer thread: receives opened and closed spans and counters from the layer and
//! the samplers, writes JSON lines and cuzk `TIMELINE` lines (through
//! [`CuzkWriter`]) behind buffered writers, and keeps the whole run in memory when asked.
//!
//! Durability: each record goes to its buffer whole (so a file only ever ends at a line
//! boundary when the buffer spills), the buffers are flushed at least every
//! [`FLUSH_EVERY`] and on every [`Msg::Flush`] (the CLI sends one at each proof's end), so
//! a killed run's timeline holds every event up to its last second. A write error on one
//! output (a full disk, `/dev/full`) is reported once, naming the file, and that output is
//! closed; the other output, the in-memory run and the engine go on (proofs are never lost
//! to a timeline that cannot be written). The errors come back in [`SinkStats::errors`].

use std::io::{self, BufWriter, Write};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use timeline::event::{Run, RunMeta};
use timeline::write::cuzk::CuzkWriter;

use super::{Msg, SinkStats};

/// The longest an event waits in a buffer before it is written.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// One output file: a buffered writer, its name, and whether it failed.
struct Out {
    w: Option<BufWriter<Box<dyn Write + Send>>>,
    name: String,
    dirty: bool,
}

impl Out {
    fn new(w: Option<Box<dyn Write + Send>>, name: Option<String>, default: &str) -> Out {
        Out { w: w.map(|w| BufWriter::with_capacity(1 << 16, w)), name: name.unwrap_or_else(|| default.to_string()), dirty: false }
    }

    fn fail(&mut self, e: io::Error, errors: &mut Vec<String>) {
        let msg = format!("cannot write {}: {e}; it is not written any further (the run goes on)", self.name);
        tracing::error!("{msg}");
        errors.push(msg);
        // Drop without flushing again (the buffer could not be written).
        if let Some(w) = self.w.take() {
            let (_, _) = w.into_parts();
        }
    }

    /// Write one whole record (a line with its newline).
    fn line(&mut self, bytes: &[u8], errors: &mut Vec<String>) {
        if let Some(w) = self.w.as_mut() {
            match w.write_all(bytes) {
                Ok(()) => self.dirty = true,
                Err(e) => self.fail(e, errors),
            }
        }
    }

    fn flush(&mut self, errors: &mut Vec<String>) {
        if let Some(w) = self.w.as_mut() {
            if self.dirty {
                match w.flush() {
                    Ok(()) => self.dirty = false,
                    Err(e) => self.fail(e, errors),
                }
            }
        }
    }
}

pub(crate) fn writer_loop(
    rx: Receiver<Msg>,
    jsonl: Option<Box<dyn Write + Send>>,
    jsonl_name: Option<String>,
    cuzk: Option<Box<dyn Write + Send>>,
    cuzk_name: Option<String>,
    collect: bool,
    meta: RunMeta,
) -> io::Result<(SinkStats, Run)> {
    let mut js = Out::new(jsonl, jsonl_name, "the JSON-lines timeline");
    let mut cz = Out::new(cuzk, cuzk_name, "the cuzk log");
    let mut stats = SinkStats::default();
    let mut run = Run::new(meta.clone());
    let mut buf: Vec<u8> = Vec::with_capacity(512);
    let record = |out: &mut Out, r: &timeline::event::Record, errors: &mut Vec<String>, buf: &mut Vec<u8>| {
        if out.w.is_none() {
            return;
        }
        buf.clear();
        if serde_json::to_writer(&mut *buf, r).is_ok() {
            buf.push(b'\n');
            out.line(buf, errors);
        }
    };
    record(&mut js, &timeline::event::Record::Meta(meta.clone()), &mut stats.errors, &mut buf);
    js.flush(&mut stats.errors);
    let mut cuzk = CuzkWriter::new();
    let mut last_flush = Instant::now();
    loop {
        let wait = FLUSH_EVERY.saturating_sub(last_flush.elapsed());
        let msg = match rx.recv_timeout(wait) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match msg {
            None => {}
            Some(Msg::Open(s)) => {
                if cz.w.is_some() {
                    for l in cuzk.open(&s) {
                        cz.line(format!("{l}\n").as_bytes(), &mut stats.errors);
                        stats.cuzk_lines += 1;
                    }
                }
            }
            Some(Msg::Close(s)) => {
                if cz.w.is_some() {
                    if let Some(l) = cuzk.close(&s) {
                        cz.line(format!("{l}\n").as_bytes(), &mut stats.errors);
                        stats.cuzk_lines += 1;
                    }
                }
                if s.end_ns.is_some() {
                    stats.spans += 1;
                } else {
                    stats.open_spans += 1;
                }
                let r = timeline::event::Record::Span(s);
                record(&mut js, &r, &mut stats.errors, &mut buf);
                if collect {
                    if let timeline::event::Record::Span(s) = r {
                        run.spans.push(s);
                    }
                }
            }
            Some(Msg::Counter(c)) => {
                stats.counters += 1;
                let r = timeline::event::Record::Counter(c);
                record(&mut js, &r, &mut stats.errors, &mut buf);
                if collect {
                    if let timeline::event::Record::Counter(c) = r {
                        run.counters.push(c);
                    }
                }
            }
            Some(Msg::Flush(done)) => {
                js.flush(&mut stats.errors);
                cz.flush(&mut stats.errors);
                last_flush = Instant::now();
                let _ = done.send(());
                continue;
            }
            Some(Msg::Stop) => break,
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            js.flush(&mut stats.errors);
            cz.flush(&mut stats.errors);
            last_flush = Instant::now();
        }
    }
    js.flush(&mut stats.errors);
    cz.flush(&mut stats.errors);
    run.normalize();
    Ok((stats, run))
}

#[cfg(test)]
mod tests {
    use super::super::{EventSink, SinkConfig};
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A writer that takes `ok` bytes, then fails like a full disk.
    struct Full {
        ok: usize,
        seen: Arc<Mutex<Vec<u8>>>,
    }
    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let mut s = self.seen.lock().unwrap();
            if s.len() + b.len() > self.ok {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            s.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_timeline_is_reported_by_name_and_the_rest_goes_on() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let cz = Arc::new(Mutex::new(Vec::new()));
        let cfg = SinkConfig {
            jsonl: Some(Box::new(Full { ok: 600, seen: seen.clone() })),
            jsonl_name: Some("run.jsonl".into()),
            cuzk: Some(Box::new(Full { ok: usize::MAX, seen: cz.clone() })),
            cuzk_name: Some("run.log".into()),
            collect: true,
            ..Default::default()
        };
        let sink = EventSink::start(cfg).unwrap();
        for i in 0..200 {
            sink.counter("queue_depth", i as f64, None);
        }
        let (stats, run) = sink.finish(false).unwrap();
        assert_eq!(stats.counters, 200);
        assert_eq!(run.counters.len(), 200, "the in-memory run is complete");
        assert_eq!(stats.errors.len(), 1, "{:?}", stats.errors);
        assert!(stats.errors[0].contains("run.jsonl") && stats.errors[0].contains("No space"), "{:?}", stats.errors);
        // What reached the file ends at a line boundary.
        let bytes = seen.lock().unwrap().clone();
        assert!(bytes.is_empty() || bytes.ends_with(b"\n"));
    }

    #[test]
    fn buffered_events_reach_the_file_within_a_second() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let cfg = SinkConfig { jsonl: Some(Box::new(Full { ok: usize::MAX, seen: seen.clone() })), ..Default::default() };
        let sink = EventSink::start(cfg).unwrap();
        sink.counter("queue_depth", 1.0, None);
        std::thread::sleep(super::FLUSH_EVERY + std::time::Duration::from_millis(600));
        let text = String::from_utf8(seen.lock().unwrap().clone()).unwrap();
        assert!(text.contains("queue_depth"), "{text}");
        sink.finish(false).unwrap();
    }
}
