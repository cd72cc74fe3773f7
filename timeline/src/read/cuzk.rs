//! Reader of the cuzk daemon's log: `TIMELINE,<offset_ms>,<event>,<job_id>,<detail>` lines
//! (detail split on the first four commas only, then `key=value` pairs or bare flags such
//! as `monolithic`), mixed with ordinary log lines, roughly but not strictly in time order.
//!
//! Events are sorted by offset (start events before end events at equal offsets), then
//! paired per (job, partition) into spans: SYNTH_START..SYNTH_END → `synthesis`,
//! GPU_QUEUE..GPU_PICKUP → `gpu_queue`, GPU_PICKUP..GPU_START → `gpu_pickup`,
//! GPU_START..GPU_END → `gpu`. A start without its end becomes an open span.
//!
//! Lines may come wrapped (journald, Docker, see [`super::wrap`]); the wrapper's wall clock
//! and host are kept. Whole-proof ("monolithic") jobs have no `partition=`: their events
//! pair per job (partition `None`), and the detail's `kind=<proof type>` and `monolithic`
//! flag stay in the span's args, where the proof-type analysis reads them.
//!
//! Daemon restarts: offsets count from the daemon's start, so a restart shows as offsets
//! jumping back. An event whose offset is more than [`RESTART_BACK_MS`] below the largest
//! offset so far (in file order), after which the log goes on forward, starts a new daemon
//! run ([`split_daemon_runs`]); each run's events pair among
//! themselves (a job id seen in an earlier run gets an `@run<N>` suffix). Runs are placed
//! on one axis: by the wrapper's wall clock where every run has one (journald, Docker),
//! else end to end in file order, a second apart. [`Diagnostics::daemon_runs`](crate::event::Diagnostics)
//! lists them.

use crate::event::{Args, DaemonRun, JobId, Run, RunMeta, Span, SpanKind, MAX_KEPT_WARNINGS};
use crate::read::wrap::{self, Wrapper};
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;
use crate::write::cuzk::CuzkEvent;

/// An offset this far below the largest one before it (ms) starts a new daemon run. Lines
/// of one daemon are out of order by milliseconds (threads writing to one stderr); a
/// restart resets the offsets to 0.
pub const RESTART_BACK_MS: u64 = 5_000;

#[derive(Debug)]
struct Entry<'a> {
    t_ns: u64,
    line: u64,
    event: CuzkEvent,
    job: &'a str,
    partition: Option<u32>,
    worker: Option<u32>,
    device: Option<u32>,
    args: Args,
}

/// The text up to the next comma (or the end), advancing `rest` past it; `None` once the
/// input is used up (`rest` is `None`). Exactly `split(',')`, without the pattern
/// machinery: this runs on every field of every line.
fn next_field<'a>(rest: &mut Option<&'a str>) -> Option<&'a str> {
    let s = rest.take()?;
    match s.as_bytes().iter().position(|&b| b == b',') {
        Some(i) => {
            *rest = Some(&s[i + 1..]);
            Some(&s[..i])
        }
        None => Some(s),
    }
}

/// `s.trim()`, the Unicode look-up skipped when `s` starts and ends with a printable ASCII
/// character (every field a daemon writes): that character is not whitespace, so `trim`
/// would return `s` as it is. Seven trims a line were ~6 % of the reading thread.
fn trim(s: &str) -> &str {
    let plain = |b: u8| b > b' ' && b < 0x7f;
    match s.as_bytes() {
        [first, .., last] if plain(*first) && plain(*last) => s,
        [only] if plain(*only) => s,
        _ => s.trim(),
    }
}

/// `s.split_once('=')` by bytes (`=` is ASCII, never part of a multi-byte character).
fn split_eq(s: &str) -> Option<(&str, &str)> {
    let i = s.as_bytes().iter().position(|&b| b == b'=')?;
    Some((&s[..i], &s[i + 1..]))
}

/// Parse one TIMELINE line (from the `TIMELINE,` marker on). `Ok(None)`: not a TIMELINE line.
fn parse_entry(line_no: u64, line: &str) -> Result<Option<Entry<'_>>, String> {
    let pos = if line.starts_with("TIMELINE,") { Some(0) } else { line.find("TIMELINE,") };
    let Some(pos) = pos else { return Ok(None) };
    let mut rest = Some(&line[pos + "TIMELINE,".len()..]);
    // The first three fields, then the detail (which has commas of its own).
    let offset = trim(next_field(&mut rest).unwrap_or(""));
    let event = trim(next_field(&mut rest).ok_or("missing event field")?);
    let job = trim(next_field(&mut rest).ok_or("missing job_id field")?);
    let detail = trim(rest.unwrap_or(""));
    // Integer milliseconds (the format's) parse fast; anything else as a float.
    let t_ms: f64 = match offset.parse::<u64>() {
        Ok(v) => v as f64,
        Err(_) => offset.parse().map_err(|_| format!("offset_ms `{offset}` is not a number"))?,
    };
    // Within 10 years of the daemon's start (MAX_TIME_NS): a corrupt offset is rejected
    // here, by its line, rather than stretching the run to centuries.
    if !(0.0..=crate::event::MAX_TIME_NS as f64 / 1.0e6).contains(&t_ms) {
        return Err(format!("offset_ms `{offset}` is out of range (0 to 10 years in ms)"));
    }
    let event: CuzkEvent = event.parse().map_err(|_| format!("unknown event `{event}`"))?;
    if job.is_empty() {
        return Err("empty job_id".into());
    }
    let mut e = Entry {
        t_ns: (t_ms * 1.0e6).round() as u64,
        line: line_no,
        event,
        job,
        partition: None,
        worker: None,
        device: None,
        args: Args::new(),
    };
    let mut detail = Some(detail);
    while let Some(tok) = next_field(&mut detail) {
        let tok = trim(tok);
        if tok.is_empty() {
            continue;
        }
        match split_eq(tok) {
            None => {
                e.args.insert(tok.to_string(), serde_json::Value::Bool(true));
            }
            Some((k, v)) => {
                let (k, v) = (trim(k), trim(v));
                let as_u32 = || v.parse::<u32>().map_err(|_| format!("`{k}={v}` is not a non-negative integer"));
                match k {
                    "partition" => e.partition = Some(as_u32()?),
                    "worker" => e.worker = Some(as_u32()?),
                    "device" | "gpu" => e.device = Some(as_u32()?),
                    _ => {
                        let val = v
                            .parse::<i64>()
                            .map(serde_json::Value::from)
                            .or_else(|_| v.parse::<f64>().map(serde_json::Value::from))
                            .unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
                        e.args.insert(k.to_string(), val);
                    }
                }
            }
        }
    }
    let _ = line_no;
    Ok(Some(e))
}

/// An entry once its job id is interned: (job index, partition) keys are cheap to hash.
#[derive(Debug)]
pub(crate) struct Ev {
    t_ns: u64,
    /// The wrapper's wall clock, ns since the epoch.
    wall_ns: Option<i64>,
    line: u64,
    event: CuzkEvent,
    job: u32,
    partition: Option<u32>,
    worker: Option<u32>,
    device: Option<u32>,
    args: Args,
}

type Key = (u32, Option<u32>);

/// What one line was (stage 1, on a decoding thread).
pub(crate) enum What {
    /// An ordinary log line.
    Ignored,
    /// A TIMELINE line that cannot be used, with the reason.
    Bad(String),
    /// An event; `new_job` carries the job id the first time the chunk's decoder sees it
    /// (a decoder's ids are dense, in order of first appearance, so the assembler maps
    /// them onto the run's table).
    Event { ev: Ev, new_job: Option<String> },
}

/// One decoded line: what it was, its wrapper, and the host the wrapper names the first
/// time it names one.
pub(crate) struct Item {
    what: What,
    wrapper: Wrapper,
    new_host: Option<String>,
}

/// Stage 1: line → [`Item`], interning job ids as it goes (one decoder per chunk of
/// lines, see [`super::lines`]).
#[derive(Default)]
pub(crate) struct Decoder {
    job_ids: FxHashMap<String, u32>,
    /// A forced wrapper (`--format journal` …), else detected per line.
    forced: Option<Wrapper>,
    host: Option<String>,
}

impl Decoder {
    pub(crate) fn new(forced: Option<Wrapper>) -> Self {
        Decoder { forced, ..Default::default() }
    }

    pub(crate) fn decode(&mut self, n: u64, line: &str) -> Item {
        let u = wrap::unwrap_line(line, self.forced);
        let new_host = match (&u.host, &self.host) {
            (Some(h), None) => {
                self.host = Some(h.clone());
                Some(h.clone())
            }
            _ => None,
        };
        let what = self.decode_text(n, &u.text, u.wall_ns);
        Item { what, wrapper: u.wrapper, new_host }
    }

    fn decode_text(&mut self, n: u64, line: &str, wall_ns: Option<i64>) -> What {
        match parse_entry(n, line) {
            Ok(None) => What::Ignored,
            Err(msg) => What::Bad(msg),
            Ok(Some(e)) => {
                let (job, new_job) = match self.job_ids.get(e.job) {
                    Some(&j) => (j, None),
                    None => {
                        let j = self.job_ids.len() as u32;
                        self.job_ids.insert(e.job.to_string(), j);
                        (j, Some(e.job.to_string()))
                    }
                };
                let ev = Ev {
                    t_ns: e.t_ns,
                    wall_ns,
                    line: e.line,
                    event: e.event,
                    job,
                    partition: e.partition,
                    worker: e.worker,
                    device: e.device,
                    args: e.args,
                };
                What::Event { ev, new_job }
            }
        }
    }
}

/// Stage 2: count, sort by offset and pair the events into spans. The batches come in
/// input order, each from a decoder of its own: a batch's job ids are its own (dense, in
/// order of first appearance), mapped here onto the run's table.
///
/// The events are paired in sorted order while the batches still come ([`Live`]) when the
/// log allows it — one daemon run, and no event that comes (in the file) after a later one
/// already paired: events are paired once the log is [`LIVE_WINDOW_NS`] past them, so lines
/// out of order by less than that always are — so that little is left after the last line;
/// otherwise (a restart, lines further out of order) they are sorted and paired after it. Either way the same [`Pairer`] sees the
/// events in the same order: the run is the same.
pub(crate) fn assemble(batches: &mut dyn Iterator<Item = Vec<(u64, Item)>>) -> Run {
    assemble_with(batches, true).0
}

/// [`assemble`]; `live`: pair while reading when the log allows it (tests compare both
/// ways). Also says whether the events were paired while reading.
fn assemble_with(batches: &mut dyn Iterator<Item = Vec<(u64, Item)>>, live: bool) -> (Run, bool) {
    let mut run = Run::new(RunMeta::new("cuzk-log"));
    run.diagnostics.format = "cuzk".into();
    let mut jobs: Vec<String> = Vec::new();
    // Each id shared by its spans (one allocation per job, not per span), made when the job
    // is first seen.
    let mut ids: Vec<JobId> = Vec::new();
    let mut job_ids: FxHashMap<String, u32> = FxHashMap::default();
    // The batch's job ids → the run's.
    let mut remap: Vec<u32> = Vec::new();
    let mut evs: Vec<Ev> = Vec::new();
    let mut wrappers = [0u64; Wrapper::ALL.len()];
    let mut live = live.then(Live::default);
    for batch in batches {
        // A new batch: its ids start again from 0.
        remap.clear();
        let first = evs.len();
        for (n, item) in batch {
            run.diagnostics.lines_total += 1;
            if let Some(h) = item.new_host {
                run.meta.host.get_or_insert(h);
            }
            let w = item.wrapper;
            match item.what {
                What::Ignored => run.diagnostics.lines_ignored += 1,
                What::Bad(msg) => {
                    wrappers[w as usize] += 1;
                    run.diagnostics.event_lines += 1;
                    run.diagnostics.reject(n, msg);
                }
                What::Event { mut ev, new_job } => {
                    wrappers[w as usize] += 1;
                    run.diagnostics.event_lines += 1;
                    if let Some(j) = new_job {
                        let id = match job_ids.get(&j) {
                            Some(&id) => id,
                            None => {
                                let id = jobs.len() as u32;
                                ids.push(JobId::from(j.as_str()));
                                job_ids.insert(j.clone(), id);
                                jobs.push(j);
                                id
                            }
                        };
                        remap.push(id);
                    }
                    ev.job = remap[ev.job as usize];
                    evs.push(ev);
                }
            }
        }
        if live.as_mut().is_some_and(|l| !l.take(&evs, first, &ids)) {
            // Out of order beyond the window: sorted and paired after the last line.
            live = None;
        }
    }
    // The serial tail after the last line, timed step by step (`RUST_LOG=debug`).
    let t_tail = std::time::Instant::now();
    for w in Wrapper::ALL {
        if wrappers[w as usize] > 0 {
            run.diagnostics.wrappers.insert(w.as_str().to_string(), wrappers[w as usize]);
        }
    }
    let (mut segs, seg_of) = split_daemon_runs(&evs);
    let while_read = live.is_some() && segs.len() <= 1;
    // Several daemon runs: what was paired while reading goes (sorted again below).
    let live = live.filter(|_| segs.len() <= 1);
    let pairer = match live {
        // One daemon run, every event taken in order: paired already.
        Some(l) => l.finish(&evs, &ids),
        None => {
            if segs.len() > 1 {
                place_daemon_runs(&mut run, &mut segs, &mut evs, &seg_of, &mut jobs);
                let known = ids.len();
                ids.extend(jobs[known..].iter().map(|j| JobId::from(j.as_str())));
            }
            // Sort by (daemon run, offset, rank), equal keys in file order: the events'
            // indices, by a stable sort (a merge sort: a daemon's log is nearly in order,
            // its runs are merged, not sorted again). Times are already shifted onto the
            // one axis. Sorting (key, index) tuples instead took 24 MB more for a million
            // events (filling them: 15-21 ms on the 2-core dev machine, mostly page faults).
            let key = |i: u32| (seg_of.get(i as usize).copied().unwrap_or(0), evs[i as usize].t_ns, evs[i as usize].event.rank());
            let mut order: Vec<u32> = (0..evs.len() as u32).collect();
            order.par_sort_by_key(|&i| key(i));
            let mut p = Pairer::default();
            for &i in &order {
                p.feed(i, &evs, &ids);
            }
            p
        }
    };
    let t_paired = std::time::Instant::now();
    pairer.finish(&mut run, &mut evs, &ids);
    // The events are spans now: their memory goes (on a thread of its own: freeing a
    // million events' arguments takes ~20 ms) while the spans are sorted.
    std::thread::spawn(move || drop(evs));
    let t_spans = std::time::Instant::now();
    run.normalize();
    let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
    tracing::debug!(
        "cuzk read's tail: pairing {} {:.1} ms, spans {:.1} ms, span order {:.1} ms",
        if while_read { "while reading, the rest" } else { "after reading (order and pairs)" },
        ms(t_tail, t_paired),
        ms(t_paired, t_spans),
        ms(t_spans, std::time::Instant::now())
    );
    (run, while_read)
}

/// How far (ns of offset) an event may come after a later one in the log and still be
/// paired while reading: events are paired once the log has gone this far past them.
/// A daemon's lines are out of order by milliseconds (threads writing to one stderr).
pub const LIVE_WINDOW_NS: u64 = 1_000_000_000;

/// Events waiting for the window to pass beyond which pairing while reading gives up (a
/// log too dense or too disordered to pair as it comes: sorted after the last line).
const LIVE_MAX_PENDING: usize = 1 << 16;

/// Pairing while reading: the events not yet paired, sorted by (offset, rank) with equal
/// keys in file order, are fed to the [`Pairer`] once the largest offset read is
/// [`LIVE_WINDOW_NS`] past them. That is the order of the sort after the last line as long
/// as no event comes before one already fed ([`Live::take`] gives up then) and the log is
/// one daemon run (checked at the end).
#[derive(Default)]
struct Live {
    pairer: Pairer,
    /// Indices of the events not fed yet, in order.
    pending: Vec<u32>,
    /// The (offset, rank) of the last event fed.
    fed: Option<(u64, u8)>,
    max_t: u64,
}

impl Live {
    /// Take the events from `first` on (the batch just read); false when they cannot be
    /// paired in order while reading.
    fn take(&mut self, evs: &[Ev], first: usize, ids: &[JobId]) -> bool {
        let key = |e: &Ev| (e.t_ns, e.event.rank());
        for e in &evs[first..] {
            if self.fed.is_some_and(|f| key(e) < f) {
                return false;
            }
            self.max_t = self.max_t.max(e.t_ns);
        }
        // The pending events are sorted and come before the new ones in the file: a stable
        // sort keeps equal keys in file order (and finds the pending ones' run already sorted).
        self.pending.extend(first as u32..evs.len() as u32);
        self.pending.sort_by_key(|&i| key(&evs[i as usize]));
        let passed = self.max_t.saturating_sub(LIVE_WINDOW_NS);
        let n = self.pending.partition_point(|&i| evs[i as usize].t_ns < passed);
        for &i in &self.pending[..n] {
            self.pairer.feed(i, evs, ids);
        }
        if n > 0 {
            self.fed = Some(key(&evs[self.pending[n - 1] as usize]));
            self.pending.drain(..n);
        }
        self.pending.len() <= LIVE_MAX_PENDING
    }

    /// The events still pending, fed in order: the pairs of the whole log.
    fn finish(mut self, evs: &[Ev], ids: &[JobId]) -> Pairer {
        for &i in &self.pending {
            self.pairer.feed(i, evs, ids);
        }
        self.pairer
    }
}

/// The pairing of events into spans, fed the events in sorted order (see the module doc):
/// one implementation whether the events are paired while reading or after.
#[derive(Default)]
struct Pairer {
    synth: FxHashMap<Key, u32>,
    queued: FxHashMap<Key, u32>,
    picked: FxHashMap<Key, u32>,
    started: FxHashMap<Key, u32>,
    /// (offset, event, job, partition, worker) of the previous event: duplicates are rejected.
    last: Option<(u64, CuzkEvent, u32, Option<u32>, Option<u32>)>,
    spans: Vec<Span>,
    /// (span, end event) of the spans closed by an end event, whose args join the span's
    /// at [`Pairer::finish`]: moved out of the events then, once nothing can pair them
    /// again (pairing while reading may give up and start over).
    end_args: Vec<(u32, u32)>,
    /// The rejections, in order: the first [`MAX_KEPT_WARNINGS`] (line, message), and how
    /// many in all. Counted into the diagnostics at the end, after the lines the decoders
    /// rejected, as a reader that pairs after the last line would.
    rejects: Vec<(u64, String)>,
    rejected: u64,
}

impl Pairer {
    fn reject(&mut self, line: u64, message: impl FnOnce() -> String) {
        self.rejected += 1;
        if self.rejects.len() < MAX_KEPT_WARNINGS {
            self.rejects.push((line, message()));
        }
    }

    /// A start event followed by another of its kind for the same (job, partition) before
    /// its end: the later one pairs with the end (an end belongs to the latest start), the
    /// earlier one is rejected, named by its line: a stray line, or one whose end was lost.
    fn superseded(&mut self, prev: &Ev, next: &Ev) {
        self.reject(prev.line, || format!("{} never ended: another one for the same job and partition follows on line {} before its end; dropped", prev.event.as_str(), next.line));
    }

    /// A span from its start event `s` and its end event (`None`: open). The args of an end
    /// event that closes the partition's last span (SYNTH_END, GPU_END) join later
    /// (`end_args`); others' are copied.
    fn push(&mut self, kind: SpanKind, s: &Ev, end: Option<(u32, &Ev)>, ids: &[JobId]) {
        let mut sp = Span::new(kind, s.t_ns, end.map_or(s.t_ns, |(_, e)| e.t_ns));
        if end.is_none() {
            sp.end_ns = None;
        }
        sp.job = Some(ids[s.job as usize].clone());
        sp.partition = s.partition;
        sp.worker = end.and_then(|(_, e)| e.worker).or(s.worker);
        sp.device = end.and_then(|(_, e)| e.device).or(s.device);
        sp.args = s.args.clone();
        if let Some((i, e)) = end {
            if matches!(e.event, CuzkEvent::SynthEnd | CuzkEvent::GpuEnd) {
                self.end_args.push((self.spans.len() as u32, i));
            } else {
                sp.args.extend(e.args.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        self.spans.push(sp);
    }

    /// The next event in sorted order.
    fn feed(&mut self, i: u32, evs: &[Ev], ids: &[JobId]) {
        let e = &evs[i as usize];
        let job_name = |e: &Ev| &*ids[e.job as usize];
        let sig = (e.t_ns, e.event, e.job, e.partition, e.worker);
        if self.last == Some(sig) {
            self.reject(e.line, || format!("duplicate {} for job {} partition {:?}", e.event.as_str(), job_name(e), e.partition));
            return;
        }
        self.last = Some(sig);
        let key: Key = (e.job, e.partition);
        match e.event {
            CuzkEvent::SynthStart => {
                if let Some(prev) = self.synth.insert(key, i) {
                    self.superseded(&evs[prev as usize], e);
                }
            }
            CuzkEvent::SynthEnd => match self.synth.remove(&key) {
                Some(s) => self.push(SpanKind::Synthesis, &evs[s as usize], Some((i, e)), ids),
                None => self.reject(e.line, || format!("SYNTH_END without SYNTH_START (job {} partition {:?})", job_name(e), e.partition)),
            },
            CuzkEvent::GpuQueue => {
                if let Some(prev) = self.queued.insert(key, i) {
                    self.superseded(&evs[prev as usize], e);
                }
            }
            CuzkEvent::GpuPickup => {
                if let Some(q) = self.queued.remove(&key) {
                    self.push(SpanKind::GpuQueue, &evs[q as usize], Some((i, e)), ids);
                }
                if let Some(prev) = self.picked.insert(key, i) {
                    self.superseded(&evs[prev as usize], e);
                }
            }
            CuzkEvent::GpuStart => {
                if let Some(p) = self.picked.remove(&key) {
                    self.push(SpanKind::GpuPickup, &evs[p as usize], Some((i, e)), ids);
                }
                if let Some(prev) = self.started.insert(key, i) {
                    self.superseded(&evs[prev as usize], e);
                }
            }
            CuzkEvent::GpuEnd => match self.started.remove(&key) {
                Some(s) => self.push(SpanKind::Gpu, &evs[s as usize], Some((i, e)), ids),
                None => self.reject(e.line, || format!("GPU_END without GPU_START (job {} partition {:?})", job_name(e), e.partition)),
            },
        }
    }

    /// Into the run: the spans (the end events' args moved in), the rejections, and what
    /// never ended — open spans (a killed run), reported, never counted busy.
    fn finish(mut self, run: &mut Run, evs: &mut [Ev], ids: &[JobId]) {
        for &(s, e) in &self.end_args {
            let a = std::mem::take(&mut evs[e as usize].args);
            let sp = &mut self.spans[s as usize];
            if sp.args.is_empty() {
                sp.args = a;
            } else {
                sp.args.extend(a);
            }
        }
        let d = &mut run.diagnostics;
        let kept = self.rejects.len() as u64;
        for (line, message) in self.rejects.drain(..) {
            d.reject(line, message);
        }
        d.lines_rejected += self.rejected - kept;
        let mut open: Vec<(SpanKind, u32)> = Vec::new();
        open.extend(self.synth.drain().map(|(_, e)| (SpanKind::Synthesis, e)));
        open.extend(self.queued.drain().map(|(_, e)| (SpanKind::GpuQueue, e)));
        open.extend(self.picked.drain().map(|(_, e)| (SpanKind::GpuPickup, e)));
        open.extend(self.started.drain().map(|(_, e)| (SpanKind::Gpu, e)));
        open.sort_by_key(|(_, e)| evs[*e as usize].line);
        for (kind, i) in open {
            let e = &evs[i as usize];
            run.diagnostics.open_spans += 1;
            if run.diagnostics.warnings.len() < MAX_KEPT_WARNINGS {
                run.diagnostics.warnings.push(crate::event::LineWarning {
                    line: e.line,
                    message: format!("{} of job {} partition {:?} never ended (open span)", e.event.as_str(), &*ids[e.job as usize], e.partition),
                });
            }
            self.push(kind, e, None, ids);
        }
        run.spans = self.spans;
    }
}

/// Daemon runs placed end to end (no wall clock) are this far apart on the axis, ns.
pub const END_TO_END_GAP_NS: u64 = 1_000_000_000;

/// One daemon run while reading (see the module doc).
struct Seg {
    first_line: u64,
    /// Largest offset so far, ns.
    max_t: u64,
    events: u64,
    /// The daemon's start by the wall clock (ns since the epoch), when lines carry one.
    anchor: Option<i64>,
    /// Every event of the run had a wall clock.
    all_wall: bool,
}

/// Events that decide whether a jump back in the offsets is a restart (see
/// [`split_daemon_runs`]).
const RESTART_LOOKAHEAD: usize = 16;

/// The daemon runs of a log, in file order, and each event's run. An event whose offset is
/// more than [`RESTART_BACK_MS`] below the largest offset of the current run starts a new
/// run if the log goes on *forward* from it: of the next [`RESTART_LOOKAHEAD`] events, more
/// are later than it than earlier. Lines out of order (even a log written backwards) go on
/// downward and stay in the run.
fn split_daemon_runs(evs: &[Ev]) -> (Vec<Seg>, Vec<u32>) {
    let restart_ns = RESTART_BACK_MS * 1_000_000;
    let mut segs: Vec<Seg> = Vec::new();
    let mut seg_of: Vec<u32> = Vec::with_capacity(evs.len());
    for (i, ev) in evs.iter().enumerate() {
        let restart = match segs.last() {
            None => true,
            Some(s) if ev.t_ns.saturating_add(restart_ns) < s.max_t => {
                let next = &evs[i + 1..(i + 1 + RESTART_LOOKAHEAD).min(evs.len())];
                let later = next.iter().filter(|e| e.t_ns > ev.t_ns).count();
                let earlier = next.iter().filter(|e| e.t_ns < ev.t_ns).count();
                later > earlier
            }
            Some(_) => false,
        };
        if restart {
            segs.push(Seg { first_line: ev.line, max_t: 0, events: 0, anchor: None, all_wall: true });
        }
        let s = segs.last_mut().expect("pushed above");
        s.max_t = s.max_t.max(ev.t_ns);
        s.events += 1;
        match ev.wall_ns {
            // The daemon's start by the wall clock: the smallest (wall − offset), from the
            // line least delayed between the event and its wrapper's stamp.
            Some(w) => s.anchor = Some(s.anchor.map_or(w - ev.t_ns as i64, |a: i64| a.min(w - ev.t_ns as i64))),
            None => s.all_wall = false,
        }
        seg_of.push((segs.len() - 1) as u32);
    }
    (segs, seg_of)
}

/// Several daemon runs in one log: shift each onto one axis (wall clock where every run
/// has one, else end to end), give job ids that recur in a later run a suffix, and record
/// the runs in the diagnostics.
fn place_daemon_runs(run: &mut Run, segs: &mut [Seg], evs: &mut [Ev], seg_of: &[u32], jobs: &mut Vec<String>) {
    let wall = segs.iter().all(|s| s.all_wall && s.anchor.is_some());
    let base = segs.iter().filter_map(|s| s.anchor).min().unwrap_or(0);
    let mut shifts = Vec::with_capacity(segs.len());
    let mut next_free = 0u64;
    for s in segs.iter() {
        let shift = if wall { (s.anchor.unwrap_or(base) - base).max(0) as u64 } else { next_free };
        // End to end: the next run starts a second after this one's last event (at most at
        // the last time an event may have: many long runs must not wrap the axis around).
        next_free = shift.saturating_add(s.max_t).saturating_add(END_TO_END_GAP_NS).min(crate::event::MAX_TIME_NS);
        shifts.push(shift);
    }
    // Job ids per daemon run: the same id in a later run is another request.
    let mut seen: FxHashMap<u32, u32> = FxHashMap::default();
    let mut renamed: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    for (e, &k) in evs.iter_mut().zip(seg_of) {
        e.t_ns = e.t_ns.saturating_add(shifts[k as usize]).min(crate::event::MAX_TIME_NS);
        match seen.get(&e.job) {
            None => {
                seen.insert(e.job, k);
            }
            Some(&first) if first == k => {}
            Some(_) => {
                let j = *renamed.entry((e.job, k)).or_insert_with(|| {
                    jobs.push(format!("{}@run{}", jobs[e.job as usize], k + 1));
                    (jobs.len() - 1) as u32
                });
                e.job = j;
            }
        }
    }
    for (k, s) in segs.iter().enumerate() {
        run.diagnostics.daemon_runs.push(DaemonRun {
            index: k as u32 + 1,
            first_line: s.first_line,
            events: s.events,
            start_ms: shifts[k] as f64 / 1e6,
            end_ms: shifts[k].saturating_add(s.max_t).min(crate::event::MAX_TIME_NS) as f64 / 1e6,
            wall_clock_start_ns: s.anchor,
            placed_by: if wall { "wall_clock" } else { "end_to_end" }.to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{read_str, Format};

    #[test]
    fn detail_splits_on_first_four_commas_only() {
        let e = parse_entry(1, "TIMELINE,12,GPU_END,job-1,worker=1,partition=3,gpu_ms=5642,monolithic").unwrap().unwrap();
        assert_eq!(e.t_ns, 12_000_000);
        assert_eq!(e.event, CuzkEvent::GpuEnd);
        assert_eq!(e.partition, Some(3));
        assert_eq!(e.worker, Some(1));
        assert_eq!(e.args["gpu_ms"], serde_json::json!(5642));
        assert_eq!(e.args["monolithic"], serde_json::json!(true));
    }

    #[test]
    fn pairs_out_of_order_lines_and_keeps_open_spans() {
        let log = "\
noise line
TIMELINE,10,SYNTH_END,a,partition=0,synth_ms=10
TIMELINE,0,SYNTH_START,a,partition=0
TIMELINE,11,GPU_QUEUE,a,partition=0
TIMELINE,12,GPU_PICKUP,a,worker=0,partition=0
TIMELINE,12,GPU_START,a,worker=0,partition=0
TIMELINE,20,GPU_END,a,worker=0,partition=0,gpu_ms=8
TIMELINE,21,SYNTH_START,a,partition=1
TIMELINE,22,BOGUS,a,partition=1
TIMELINE,x,SYNTH_START,a,partition=1
TIMELINE,25,GPU_END,a,worker=0,partition=9
";
        let run = read_str(log, Some(Format::Cuzk));
        let kinds: Vec<_> = run.spans.iter().map(|s| (s.kind.as_str().to_string(), s.start_ns / 1_000_000, s.end_ns.map(|e| e / 1_000_000))).collect();
        assert_eq!(
            kinds,
            vec![
                ("synthesis".into(), 0, Some(10)),
                ("gpu_queue".into(), 11, Some(12)),
                ("gpu_pickup".into(), 12, Some(12)),
                ("gpu".into(), 12, Some(20)),
                ("synthesis".into(), 21, None),
            ]
        );
        assert_eq!(run.diagnostics.lines_rejected, 3);
        assert_eq!(run.diagnostics.open_spans, 1);
        assert_eq!(run.diagnostics.lines_ignored, 1);
        let lines: Vec<u64> = run.diagnostics.warnings.iter().map(|w| w.line).collect();
        assert!(lines.contains(&9) && lines.contains(&10) && lines.contains(&11), "{lines:?}");
        // One id per job, shared by its spans (not a copy each).
        let ids: Vec<&crate::event::JobId> = run.spans.iter().filter_map(|s| s.job.as_ref()).collect();
        assert_eq!(ids.len(), 5);
        assert!(ids.iter().all(|j| &***j == "a" && std::sync::Arc::ptr_eq(j, ids[0])), "{ids:?}");
    }

    /// Placed end to end, many long daemon runs once added up past `u64::MAX` (a panic with
    /// overflow checks, a wrapped axis without): 100 runs of ~9.8 years each.
    #[test]
    fn many_long_daemon_runs_stay_on_the_axis() {
        let long_ms = crate::event::MAX_TIME_NS / 1_000_000 - 1_000;
        let mut log = String::new();
        for r in 0..100 {
            for p in 0..10 {
                log.push_str(&format!("TIMELINE,{},SYNTH_START,r{r},partition={p}\nTIMELINE,{},SYNTH_END,r{r},partition={p}\n", 2 * p, 2 * p + 1));
            }
            log.push_str(&format!("TIMELINE,{long_ms},SYNTH_START,r{r},partition=10\n"));
        }
        let run = read_str(&log, Some(Format::Cuzk));
        let runs = &run.diagnostics.daemon_runs;
        assert_eq!(runs.len(), 100);
        let cap = crate::event::MAX_TIME_NS as f64 / 1e6;
        assert!(runs.windows(2).all(|w| w[0].end_ms <= w[1].start_ms && w[1].start_ms <= cap), "runs in order on the axis, up to its end");
        assert!(run.spans.iter().all(|s| s.start_ns <= crate::event::MAX_TIME_NS));
        assert_eq!(run.spans.len(), 100 * 11);
    }

    #[test]
    fn fields_trim_and_split_as_str_does() {
        for s in ["", " ", "a", "ab", " a", "a ", "\ta\r", "\u{a0}x", "x\u{2003}", "\u{85}", "é", " é ", "k=v", "=", "a=b=c", " k = v "] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(split_eq(s), s.split_once('='), "{s:?}");
        }
    }

    /// Lines decoded in batches of `size`, each batch by a decoder of its own (as the
    /// reader's pieces are).
    fn batches(log: &str, size: usize) -> Vec<Vec<(u64, Item)>> {
        let lines: Vec<&str> = log.lines().collect();
        let mut n = 0u64;
        lines
            .chunks(size.max(1))
            .map(|c| {
                let mut dec = Decoder::new(None);
                c.iter()
                    .map(|l| {
                        n += 1;
                        (n, dec.decode(n, l))
                    })
                    .collect()
            })
            .collect()
    }

    /// Pairing while reading and after reading give the same run, whatever the batches:
    /// lines out of order within the window and beyond it, duplicates, starts superseded,
    /// ends without starts, whole-proof jobs, spans left open, restarts, bad lines.
    #[test]
    fn pairing_while_reading_is_pairing_after() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        const EVENTS: [&str; 6] = ["SYNTH_START", "SYNTH_END", "GPU_QUEUE", "GPU_PICKUP", "GPU_START", "GPU_END"];
        // (job, partition or whole proof, step, jitter in ms, odd line): a job's partition
        // walks its events in order, a step of offset at a time.
        let line = (0u32..6, prop::option::of(0u32..4), 0u8..6, -3000i64..3000, 0u8..40);
        let mut runner = TestRunner::new(Config { cases: 300, ..Config::default() });
        let live_seen = std::cell::Cell::new(0);
        runner
            .run(&(prop::collection::vec(line, 0..120), 1usize..40, 0u8..3), |(lines, size, jitter_scale)| {
                let mut t = 10_000i64;
                let mut log = String::new();
                for (k, (job, part, ev, jitter, odd)) in lines.iter().enumerate() {
                    t += 150;
                    // Scale 0: in order; 1: jitter within the window; 2: beyond it.
                    let j = match jitter_scale {
                        0 => 0,
                        1 => jitter / 10,
                        _ => *jitter,
                    };
                    let at = (t + j).max(0);
                    let p = part.map(|p| format!("partition={p},")).unwrap_or_else(|| "kind=winning-post,monolithic,".into());
                    let event = EVENTS[*ev as usize];
                    match odd {
                        0 => log.push_str("an ordinary line\n"),
                        1 => log.push_str(&format!("TIMELINE,x,{event},j{job},{p}\n")),
                        // A restart: offsets from 0 again.
                        2 if k > 20 => t = 0,
                        3 => {
                            // A duplicate.
                            log.push_str(&format!("TIMELINE,{at},{event},j{job},{p}worker=1\n"));
                        }
                        _ => {}
                    }
                    log.push_str(&format!("TIMELINE,{at},{event},j{job},{p}worker=1,synth_ms={k},gpu_ms=3\n"));
                }
                let (after, used) = assemble_with(&mut batches(&log, size).into_iter(), false);
                prop_assert!(!used);
                let (live, used) = assemble_with(&mut batches(&log, size).into_iter(), true);
                if used {
                    live_seen.set(live_seen.get() + 1);
                }
                prop_assert!(live == after, "{log}");
                Ok(())
            })
            .unwrap();
        // The in-order logs of one daemon run are paired while reading.
        let live_seen = live_seen.get();
        assert!(live_seen > 50, "paired while reading in {live_seen} of 300 cases");
    }

    /// A log in order is paired while reading; one line far out of order, or a restart,
    /// sends it back to the sort after the last line.
    #[test]
    fn pairing_while_reading_gives_up_on_disorder_and_restarts() {
        let mut log = String::new();
        for p in 0..50u32 {
            log.push_str(&format!("TIMELINE,{},SYNTH_START,a,partition={p}\nTIMELINE,{},SYNTH_END,a,partition={p}\n", p * 2000, p * 2000 + 1500));
        }
        let read = |log: &str| assemble_with(&mut batches(log, 7).into_iter(), true);
        let (run, live) = read(&log);
        assert!(live);
        assert_eq!(run.spans.len(), 50);
        // A line 5 s late (the window is 1 s): sorted after the last line, same spans.
        let late = format!("{log}TIMELINE,95000,SYNTH_START,b,partition=0\nTIMELINE,96000,SYNTH_END,b,partition=0\n");
        let (run, live) = read(&late);
        assert!(!live);
        assert_eq!(run.spans.len(), 51);
        assert_eq!(run.spans.iter().filter(|s| s.job.as_deref() == Some("b")).count(), 1);
        // A restart.
        let restart = format!("{log}TIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,10,SYNTH_END,a,partition=0\nTIMELINE,20,SYNTH_START,c,partition=0\n");
        let (run, live) = read(&restart);
        assert!(!live);
        assert_eq!(run.diagnostics.daemon_runs.len(), 2);
        assert!(run.spans.iter().any(|s| s.job.as_deref() == Some("a@run2")));
    }

    #[test]
    fn duplicates_are_rejected_once() {
        let log = "TIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,5,SYNTH_END,a,partition=0\n";
        let run = read_str(log, None);
        assert_eq!(run.spans.len(), 1);
        assert_eq!(run.diagnostics.lines_rejected, 1);
        assert_eq!(run.diagnostics.warnings[0].line, 2);
    }
}
