//! The prover's timeline events: one `tracing` layer turns the prover's spans into our
//! JSON-lines spans and cuzk `TIMELINE` lines, off the hot path. The pieces, each in its
//! module:
//!
//! - [`layer`]: the `tracing` layer ([`TimelineLayer`]) — span identity and fields;
//! - [`writer`]: the writer thread — JSON lines, cuzk lines (through
//!   [`timeline::write::cuzk::CuzkWriter`]), the in-memory run;
//! - [`host`]: the /proc sampler — RSS, the process's and the machine's busy cores, steal;
//! - this module: [`EventSink`], which owns the channel, the writer and the sampler.
//!
//! Hot path: opening and closing a span costs a clock read, a few field copies and a
//! channel send; serialisation, formatting and I/O happen on the writer thread, behind
//! buffered writers. Span names are [`timeline::event::kind`] names; the fields `job`,
//! `partition`, `worker`, `device` fill the span's identity (inherited from the parent span
//! when not given) and every other field becomes an arg. A span named [`CTX`] only carries
//! fields for its children and is never written.

pub mod host;
pub mod layer;
mod writer;

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Sender};
use timeline::event::{Counter, Run, RunMeta, Span};

pub use host::{process_cpu_seconds, rss_bytes, HostCpu};
pub use layer::TimelineLayer;

/// Sleep `period`, waking at least every 20 ms to return early once `stop` is set: a
/// sampler with a long period (an hour) still stops at once when the run ends.
pub fn sleep_unless_stopped(stop: &AtomicBool, period: Duration) {
    // (A period too long for an Instant is a sleep until stopped.)
    let until = Instant::now().checked_add(period);
    while !stop.load(Ordering::Relaxed) {
        let left = until.map_or(Duration::MAX, |u| u.saturating_duration_since(Instant::now()));
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod sleep_tests {
    use super::*;

    #[test]
    fn a_sampler_with_an_endless_period_stops_at_once() {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let h = std::thread::spawn(move || sleep_unless_stopped(&s2, Duration::MAX));
        std::thread::sleep(Duration::from_millis(50));
        let t0 = Instant::now();
        stop.store(true, Ordering::Relaxed);
        h.join().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(1));
        sleep_unless_stopped(&AtomicBool::new(false), Duration::from_millis(30));
    }
}

#[cfg(test)]
mod meta_tests {
    use super::*;

    fn now_ns() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64
    }

    #[test]
    fn the_meta_records_the_wall_clock_of_the_epoch() {
        let before = now_ns();
        let sink = EventSink::start(SinkConfig { collect: true, ..Default::default() }).unwrap();
        let after = now_ns();
        let (_, run) = sink.finish(false).unwrap();
        let at = timeline::read::wrap::rfc3339_ns(run.meta.started_at.as_deref().unwrap()).unwrap();
        assert!(before <= at && at <= after, "{before} <= {at} <= {after}");
        // One the caller gives is kept.
        let mut meta = RunMeta::new("t");
        meta.started_at = Some("2026-12-03T10:00:00Z".into());
        let (_, run) = EventSink::start(SinkConfig { collect: true, meta, ..Default::default() }).unwrap().finish(false).unwrap();
        assert_eq!(run.meta.started_at.as_deref(), Some("2026-12-03T10:00:00Z"));
    }
}

/// Name of the context-only span.
pub const CTX: &str = "ctx";

pub(crate) enum Msg {
    Open(Span),
    Close(Span),
    Counter(Counter),
    Flush(Sender<()>),
    Stop,
}

pub(crate) struct Shared {
    pub(crate) tx: Sender<Msg>,
    epoch: Instant,
    /// Spans opened and not yet closed, by tracing id (to mark them on an abort).
    pub(crate) open: Mutex<HashMap<u64, Span>>,
}

impl Shared {
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

/// Where the events go.
#[derive(Default)]
pub struct SinkConfig {
    pub jsonl: Option<Box<dyn Write + Send>>,
    /// The JSON-lines output's name in error messages (its path).
    pub jsonl_name: Option<String>,
    pub cuzk: Option<Box<dyn Write + Send>>,
    pub cuzk_name: Option<String>,
    /// Keep every record in memory and return them as a [`Run`] from [`EventSink::finish`].
    pub collect: bool,
    /// Sample the process RSS (counter `rss_bytes`) at this period.
    pub rss_every: Option<Duration>,
    pub meta: RunMeta,
}

impl SinkConfig {
    pub fn jsonl_file(mut self, path: &Path) -> io::Result<Self> {
        self.jsonl = Some(Box::new(File::create(path)?));
        self.jsonl_name = Some(path.display().to_string());
        Ok(self)
    }
    pub fn cuzk_file(mut self, path: &Path) -> io::Result<Self> {
        self.cuzk = Some(Box::new(File::create(path)?));
        self.cuzk_name = Some(path.display().to_string());
        Ok(self)
    }
}

/// Counts of what the writer wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkStats {
    pub spans: u64,
    pub open_spans: u64,
    pub counters: u64,
    pub cuzk_lines: u64,
    /// Write errors, one per output that failed (naming its file); that output stopped
    /// there, everything else went on.
    pub errors: Vec<String>,
}

/// What the writer thread returns.
type WriterResult = io::Result<(SinkStats, Run)>;

/// Owner of the writer thread and the RSS sampler.
pub struct EventSink {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<WriterResult>>>,
    sampler: Mutex<Option<(Arc<AtomicBool>, JoinHandle<()>)>>,
}

impl EventSink {
    pub fn start(cfg: SinkConfig) -> io::Result<EventSink> {
        let (tx, rx) = unbounded();
        let epoch = Instant::now();
        let wall_ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
        let shared = Arc::new(Shared { tx, epoch, open: Mutex::new(HashMap::new()) });
        let SinkConfig { jsonl, jsonl_name, cuzk, cuzk_name, collect, rss_every, mut meta } = cfg;
        // The wall clock of the epoch (t = 0), unless the caller gave one: what ties the
        // timeline to the moment it was made (a pre-registered campaign checks it).
        meta.started_at.get_or_insert_with(|| timeline::read::wrap::rfc3339_utc(wall_ns));
        let writer = std::thread::Builder::new()
            .name("timeline-writer".into())
            .spawn(move || writer::writer_loop(rx, jsonl, jsonl_name, cuzk, cuzk_name, collect, meta))?;
        let sink = EventSink { shared, writer: Mutex::new(Some(writer)), sampler: Mutex::new(None) };
        if let Some(period) = rss_every {
            let stop = Arc::new(AtomicBool::new(false));
            let (s2, sh) = (stop.clone(), sink.shared.clone());
            let h = std::thread::Builder::new().name("rss-sampler".into()).spawn(move || host::sample_loop(&s2, &sh, period))?;
            if let Ok(mut g) = sink.sampler.lock() {
                *g = Some((stop, h));
            }
        }
        Ok(sink)
    }

    /// The layer to install (in a dispatch of the threads that prove).
    pub fn layer(&self) -> TimelineLayer {
        TimelineLayer { shared: self.shared.clone() }
    }

    /// A dispatch holding only this sink's layer: threads set it as their default, so
    /// several engines (or tests) never mix their events.
    pub fn dispatch(&self) -> tracing::Dispatch {
        use tracing_subscriber::layer::SubscriberExt;
        tracing::Dispatch::new(tracing_subscriber::registry().with(self.layer()))
    }

    /// Nanoseconds since this sink's epoch (the run's time origin).
    pub fn now_ns(&self) -> u64 {
        self.shared.now_ns()
    }

    pub fn counter(&self, name: &str, value: f64, device: Option<u32>) {
        let _ = self.shared.tx.send(Msg::Counter(Counter { name: name.into(), t_ns: self.now_ns(), value, device }));
    }

    /// A handle that adds counters to this sink from another thread (the NVML sampler).
    pub fn counters(&self) -> CounterHandle {
        CounterHandle { shared: self.shared.clone() }
    }

    /// Block until everything sent so far is written and flushed.
    pub fn flush(&self) {
        let (tx, rx) = crossbeam_channel::bounded(1);
        if self.shared.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.recv_timeout(Duration::from_secs(30));
        }
    }

    /// Stop: optionally write the spans still open (end unknown, as a killed run leaves
    /// them), flush, join the writer. Returns what was written (and, with `collect`,
    /// the whole run). A second call returns empty results.
    pub fn finish(&self, mark_open: bool) -> io::Result<(SinkStats, Run)> {
        if let Some((stop, h)) = self.sampler.lock().ok().and_then(|mut g| g.take()) {
            stop.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
        if mark_open {
            let open: Vec<Span> = self.shared.open.lock().map(|mut m| m.drain().map(|(_, s)| s).collect()).unwrap_or_default();
            for s in open {
                let _ = self.shared.tx.send(Msg::Close(s));
            }
        }
        // Layers may outlive the sink (a dispatch kept by a thread): stop explicitly.
        let handle = self.writer.lock().ok().and_then(|mut g| g.take());
        match handle {
            Some(h) => {
                let _ = self.shared.tx.send(Msg::Stop);
                h.join().unwrap_or_else(|_| Err(io::Error::other("timeline writer thread panicked")))
            }
            None => Ok((SinkStats::default(), Run::default())),
        }
    }
}

impl Drop for EventSink {
    fn drop(&mut self) {
        // Dropped without `finish`: let the writer thread end (it flushes what it has).
        if self.writer.lock().map(|g| g.is_some()).unwrap_or(false) {
            let _ = self.shared.tx.send(Msg::Stop);
        }
        if let Ok(g) = self.sampler.lock() {
            if let Some((stop, _)) = g.as_ref() {
                stop.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Sends counters to an [`EventSink`] from any thread; samples sent after the sink
/// finished are dropped.
#[derive(Clone)]
pub struct CounterHandle {
    shared: Arc<Shared>,
}

impl CounterHandle {
    /// Nanoseconds since the sink's epoch.
    pub fn now_ns(&self) -> u64 {
        self.shared.now_ns()
    }
    /// One sample stamped `t_ns` (from [`CounterHandle::now_ns`]).
    pub fn counter_at(&self, name: &str, t_ns: u64, value: f64, device: Option<u32>) {
        let _ = self.shared.tx.send(Msg::Counter(Counter { name: name.into(), t_ns, value, device }));
    }
}
