//! The single source of timeline events: one `tracing` layer ([`TimelineLayer`]) that
//! turns the prover's spans into our JSON-lines spans **and** cuzk `TIMELINE,...` lines,
//! plus an [`EventSink`] that owns the writer thread.
//!
//! Hot path: opening and closing a span costs a clock read, a few field copies and a
//! channel send; serialisation, formatting and I/O happen on the writer thread, behind
//! buffered writers. Span names are [`SpanKind`] names; the fields `job`, `partition`,
//! `worker`, `device` fill the span's identity (inherited from the parent span when not
//! given) and every other field becomes an arg. A span named `ctx` only carries fields
//! for its children and is never written.
//!
//! cuzk lines come from [`timeline::write::cuzk::CuzkWriter`], fed as spans open and
//! close (START lines at the open, so a killed run still has its starts).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use timeline::event::{Counter, Run, RunMeta, Span, SpanKind};
use timeline::write::cuzk::CuzkWriter;
use timeline::write::jsonl::JsonlWriter;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Name of the context-only span.
pub const CTX: &str = "ctx";

enum Msg {
    Open(Span),
    Close(Span),
    Counter(Counter),
    Flush(Sender<()>),
    Stop,
}

struct Shared {
    tx: Sender<Msg>,
    epoch: Instant,
    /// Spans opened and not yet closed, by tracing id (to mark them on an abort).
    open: Mutex<HashMap<u64, Span>>,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

/// Where the events go.
#[derive(Default)]
pub struct SinkConfig {
    pub jsonl: Option<Box<dyn Write + Send>>,
    pub cuzk: Option<Box<dyn Write + Send>>,
    /// Keep every record in memory and return them as a [`Run`] from [`EventSink::finish`].
    pub collect: bool,
    /// Sample the process RSS (counter `rss_bytes`) at this period.
    pub rss_every: Option<Duration>,
    pub meta: RunMeta,
}

impl SinkConfig {
    pub fn jsonl_file(mut self, path: &Path) -> io::Result<Self> {
        self.jsonl = Some(Box::new(File::create(path)?));
        Ok(self)
    }
    pub fn cuzk_file(mut self, path: &Path) -> io::Result<Self> {
        self.cuzk = Some(Box::new(File::create(path)?));
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
        let shared = Arc::new(Shared { tx, epoch, open: Mutex::new(HashMap::new()) });
        let SinkConfig { jsonl, cuzk, collect, rss_every, meta } = cfg;
        let writer = std::thread::Builder::new()
            .name("timeline-writer".into())
            .spawn(move || writer_loop(rx, jsonl, cuzk, collect, meta))?;
        let sink = EventSink { shared, writer: Mutex::new(Some(writer)), sampler: Mutex::new(None) };
        if let Some(period) = rss_every {
            let stop = Arc::new(AtomicBool::new(false));
            let (s2, sh) = (stop.clone(), sink.shared.clone());
            let h = std::thread::Builder::new().name("rss-sampler".into()).spawn(move || {
                // Cumulative CPU seconds: the prover's, the whole machine's busy time and the
                // hypervisor's steal; each last reading kept with its time.
                let names = [
                    timeline::event::counters::CPU_BUSY_CORES,
                    timeline::event::counters::HOST_BUSY_CORES,
                    timeline::event::counters::HOST_STEAL_CORES,
                ];
                let mut last: [Option<(u64, f64)>; 3] = [None; 3];
                while !s2.load(Ordering::Relaxed) {
                    let t_ns = sh.now_ns();
                    if let Some(rss) = rss_bytes() {
                        let _ = sh.tx.send(Msg::Counter(Counter { name: timeline::event::counters::RSS_BYTES.into(), t_ns, value: rss as f64, device: None }));
                    }
                    // Cores busy since the previous sample, stamped at this sample's time.
                    let process = process_cpu_seconds();
                    let host = HostCpu::read();
                    let now = [process, host.map(|h| h.busy_s), host.map(|h| h.steal_s)];
                    for ((name, now), last) in names.iter().zip(now).zip(last.iter_mut()) {
                        let Some(secs) = now else { continue };
                        if let Some((t0, s0)) = *last {
                            if t_ns > t0 {
                                let cores = ((secs - s0) / ((t_ns - t0) as f64 * 1e-9)).max(0.0);
                                let _ = sh.tx.send(Msg::Counter(Counter { name: (*name).into(), t_ns, value: cores, device: None }));
                            }
                        }
                        *last = Some((t_ns, secs));
                    }
                    std::thread::sleep(period);
                }
            })?;
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

/// Resident set size of this process, from /proc/self/statm (pages × page size).
/// User + system CPU time of the whole process (every thread), seconds.
pub fn process_cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// CPU time of the whole machine since boot, seconds, from /proc/stat's aggregate `cpu` line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostCpu {
    /// user + nice + system + irq + softirq (guest time is counted inside user).
    pub busy_s: f64,
    /// Time the hypervisor ran something else while this machine had work.
    pub steal_s: f64,
}

impl HostCpu {
    pub fn read() -> Option<HostCpu> {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        HostCpu::parse(&std::fs::read_to_string("/proc/stat").ok()?, if hz > 0 { hz as f64 } else { 100.0 })
    }

    /// The `cpu` line of /proc/stat: `cpu user nice system idle iowait irq softirq steal ...`
    /// in ticks of 1/hz s; None when it is missing or short.
    pub fn parse(stat: &str, hz: f64) -> Option<HostCpu> {
        let line = stat.lines().find(|l| l.split_whitespace().next() == Some("cpu"))?;
        let v: Vec<u64> = line.split_whitespace().skip(1).map_while(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            return None;
        }
        let busy = v[0] + v[1] + v[2] + v[5] + v[6];
        Some(HostCpu { busy_s: busy as f64 / hz, steal_s: v[7] as f64 / hz })
    }
}

pub fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

fn page_size() -> u64 {
    static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PAGE.get_or_init(read_page_size)
}

fn read_page_size() -> u64 {
    // KernelPageSize of the first mapping; 4 KiB when it cannot be read.
    std::fs::read_to_string("/proc/self/smaps")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("KernelPageSize:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .map(|kb| kb * 1024)
        .unwrap_or(4096)
}

fn writer_loop(
    rx: Receiver<Msg>,
    jsonl: Option<Box<dyn Write + Send>>,
    cuzk: Option<Box<dyn Write + Send>>,
    collect: bool,
    meta: RunMeta,
) -> io::Result<(SinkStats, Run)> {
    let mut js = jsonl.map(|w| JsonlWriter::new(BufWriter::with_capacity(1 << 16, w)));
    let mut cz = cuzk.map(|w| BufWriter::with_capacity(1 << 16, w));
    let mut stats = SinkStats::default();
    let mut run = Run::new(meta.clone());
    if let Some(w) = js.as_mut() {
        w.meta(&meta)?;
    }
    let mut cuzk = CuzkWriter::new();
    for msg in rx.iter() {
        match msg {
            Msg::Open(s) => {
                if let Some(out) = cz.as_mut() {
                    for l in cuzk.open(&s) {
                        writeln!(out, "{l}")?;
                        stats.cuzk_lines += 1;
                    }
                }
            }
            Msg::Close(s) => {
                if let Some(out) = cz.as_mut() {
                    if let Some(l) = cuzk.close(&s) {
                        writeln!(out, "{l}")?;
                        stats.cuzk_lines += 1;
                    }
                }
                if s.end_ns.is_some() {
                    stats.spans += 1;
                } else {
                    stats.open_spans += 1;
                }
                if let Some(w) = js.as_mut() {
                    w.span(&s)?;
                }
                if collect {
                    run.spans.push(s);
                }
            }
            Msg::Counter(c) => {
                stats.counters += 1;
                if let Some(w) = js.as_mut() {
                    w.counter(&c)?;
                }
                if collect {
                    run.counters.push(c);
                }
            }
            Msg::Flush(done) => {
                if let Some(w) = js.as_mut() {
                    w.flush()?;
                }
                if let Some(w) = cz.as_mut() {
                    w.flush()?;
                }
                let _ = done.send(());
            }
            Msg::Stop => break,
        }
    }
    if let Some(w) = js.as_mut() {
        w.flush()?;
    }
    if let Some(w) = cz.as_mut() {
        w.flush()?;
    }
    run.normalize();
    Ok((stats, run))
}

/// The `tracing` layer. Install it with [`EventSink::dispatch`].
#[derive(Clone)]
pub struct TimelineLayer {
    shared: Arc<Shared>,
}

struct Partial(Span);

struct FieldVisitor<'a>(&'a mut Span);

impl FieldVisitor<'_> {
    fn put(&mut self, field: &Field, v: serde_json::Value) {
        let as_u32 = |v: &serde_json::Value| v.as_u64().and_then(|x| u32::try_from(x).ok());
        match field.name() {
            "job" => self.0.job = Some(v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())),
            "partition" => self.0.partition = as_u32(&v),
            "worker" => self.0.worker = as_u32(&v),
            "device" => self.0.device = as_u32(&v),
            name => {
                self.0.args.insert(name.to_string(), v);
            }
        }
    }
}

impl Visit for FieldVisitor<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, format!("{value:?}").into());
    }
}

impl<S> Layer<S> for TimelineLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut s = Span::new(attrs.metadata().name().parse().unwrap_or(SpanKind::Other(String::new())), 0, 0);
        s.end_ns = None;
        // Identity inherited from the nearest ancestor that has one.
        if let Some(parent) = span.parent() {
            if let Some(p) = parent.extensions().get::<Partial>() {
                s.job = p.0.job.clone();
                s.partition = p.0.partition;
                s.worker = p.0.worker;
                s.device = p.0.device;
            }
        }
        attrs.record(&mut FieldVisitor(&mut s));
        s.start_ns = self.shared.now_ns();
        if attrs.metadata().name() != CTX {
            let _ = self.shared.tx.send(Msg::Open(s.clone()));
            if let Ok(mut m) = self.shared.open.lock() {
                m.insert(id.into_u64(), s.clone());
            }
        }
        span.extensions_mut().insert(Partial(s));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(p) = span.extensions_mut().get_mut::<Partial>() {
                values.record(&mut FieldVisitor(&mut p.0));
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let end = self.shared.now_ns();
        let Some(span) = ctx.span(&id) else { return };
        if span.name() == CTX {
            return;
        }
        let Some(Partial(mut s)) = span.extensions_mut().remove::<Partial>() else { return };
        let was_open = self.shared.open.lock().map(|mut m| m.remove(&id.into_u64()).is_some()).unwrap_or(true);
        if !was_open {
            // Already written as open by an abort.
            return;
        }
        s.end_ns = Some(end.max(s.start_ns));
        let _ = self.shared.tx.send(Msg::Close(s));
    }
}

#[cfg(test)]
mod host_cpu_tests {
    use super::HostCpu;

    #[test]
    fn host_cpu_reads_busy_and_steal_from_the_aggregate_line() {
        let stat = "cpu  100 20 30 5000 7 3 2 40 0 0\ncpu0 50 10 15 2500 3 1 1 20 0 0\nintr 1 2 3\n";
        let h = HostCpu::parse(stat, 100.0).unwrap();
        // user + nice + system + irq + softirq; idle and iowait are not busy.
        assert!((h.busy_s - 1.55).abs() < 1e-12, "{h:?}");
        assert!((h.steal_s - 0.40).abs() < 1e-12, "{h:?}");
        // Only the aggregate line counts, wherever it is.
        assert_eq!(HostCpu::parse("cpu0 1 1 1 1 1 1 1 1\ncpu 1 0 0 0 0 0 0 9\n", 1.0).unwrap().steal_s, 9.0);
        for bad in ["", "cpu 1 2 3", "intr 1 2 3 4 5 6 7 8 9", "cpu a b c d e f g h"] {
            assert_eq!(HostCpu::parse(bad, 100.0), None, "{bad:?}");
        }
        // The real file of this machine parses (Linux CI and devices).
        if std::path::Path::new("/proc/stat").exists() {
            assert!(HostCpu::read().is_some_and(|h| h.busy_s > 0.0));
        }
    }
}
