//! `trace.json`: a [`Run`] in the Chrome trace-event format, for ui.perfetto.dev (or
//! chrome://tracing), where a performance engineer can zoom into any partition.
//!
//! Layout: a "Proofs" process first, with one track holding a slice per proof (its first
//! synthesis start → its last GPU end); one process for the host (synthesis lanes, host
//! counters) and one per GPU (its workers' lanes, its counters, its queue waits); `M`
//! events name and order them. Every serial lane of [`crate::lanes`] is one thread, so
//! complete (`X`) slices on a thread never partially overlap, kernel slices sit nested in
//! their `gpu` slice, and MSMs that ran side by side on their own CUDA streams (`lane`)
//! are each on their stream's thread (`gpu0 w0 lane 2: msm_a`). Proofs and queue waits are
//! async `b`/`e` pairs (overlapping proofs stack on their one track), counters are `C`
//! events, and a flow (`s` → `f`, bound to the enclosing slices) links each partition's
//! synthesis to its GPU call. Timestamps are microseconds (the format's unit) with
//! nanosecond decimals.
//!
//! Open spans (a killed run) are drawn to the end of the run, named `<kind> (open)`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use rustc_hash::FxHashMap;
use serde_json::ser::{CompactFormatter, Formatter};
use serde_json::{json, Map, Value};

use crate::event::{Run, Span, SpanKind};
use crate::lanes::{LaidOut, LaneGroup, Placed};

/// Process id of the host (synthesis lanes, counters without a device).
pub const HOST_PID: u64 = 1;
/// Process id of the proofs' track (a slice per proof).
pub const PROOFS_PID: u64 = 2;
/// Async ids of proof slices start here (queue waits count from 1).
const PROOF_ID_BASE: u64 = 1 << 40;
/// Process id of GPU `d` is `DEVICE_PID_BASE + d`.
pub const DEVICE_PID_BASE: u64 = 100;

fn device_pid(d: u32) -> u64 {
    DEVICE_PID_BASE + d as u64
}

/// Nanoseconds to the format's microseconds, keeping nanosecond precision.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The category of a slice, for Perfetto's filters.
fn category(kind: &SpanKind) -> &'static str {
    match kind {
        k if k.is_synthesis_side() => "synthesis",
        SpanKind::Gpu | SpanKind::GpuPickup => "gpu",
        SpanKind::GpuQueue => "queue",
        // (`read::chrome` reads `copy` back as `memcpy`, `memset` as `memset`.)
        SpanKind::H2d | SpanKind::D2h | SpanKind::Memcpy => "copy",
        SpanKind::Memset => "memset",
        k if k.is_kernel() => "kernel",
        SpanKind::LockWait | SpanKind::LockHold => "lock",
        SpanKind::RamWait => "memory",
        SpanKind::Failed => "failure",
        SpanKind::PrepMsm | SpanKind::CpuMsmBG2 | SpanKind::Finalize => "cpu",
        _ => "other",
    }
}

/// The `stream` argument of a device's kernel, copy or memset slice: its thread (lane) on the
/// device's process, as Kineto gives each CUDA stream a thread. Tools that read Kineto's traces
/// pick their GPU work by it (Meta's HTA: without it, its idle-time and temporal breakdowns
/// find no kernels). None where the span has a `stream` argument of its own (read from
/// another tool's trace).
fn stream_arg(s: &Span, tid: u64) -> Option<u64> {
    // A span read from another tool's trace keeps that trace's stream number.
    (s.device.is_some() && s.kind.is_device_work() && !s.args.contains_key("stream")).then_some(tid)
}

fn span_args(s: &Span) -> Map<String, Value> {
    let mut a = Map::new();
    if let Some(j) = &s.job {
        a.insert("job".into(), json!(j));
    }
    if let Some(p) = s.partition {
        a.insert("partition".into(), json!(p));
    }
    if let Some(w) = s.worker {
        a.insert("worker".into(), json!(w));
    }
    if let Some(d) = s.device {
        a.insert("device".into(), json!(d));
    }
    for (k, v) in &s.args {
        a.entry(k.clone()).or_insert_with(|| v.clone());
    }
    a
}

/// A JSON object from its fields, moving the values in (`json!` would serialise them
/// again, which for a whole trace means a deep copy).
fn obj<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Whether a span read from another tool's trace (`read::chrome`) keeps that slice's name
/// (the kernel's); its kind is then the category.
fn imported_name(s: &Span) -> Option<&str> {
    let imported = matches!(s.kind, SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset | SpanKind::Other(_));
    s.args.get("name").and_then(Value::as_str).filter(|n| imported && !n.is_empty())
}

/// A slice's name: its kind, then the job's number (order of first appearance) and the
/// partition where the span has them: `synthesis J3 p7`, `gpu J0`, `lock_wait`.
fn slice_name(s: &Span, job_no: Option<usize>) -> String {
    if let Some(n) = imported_name(s) {
        return n.to_string();
    }
    let mut name = s.kind.as_str().to_string();
    if let Some(n) = job_no {
        name.push_str(&format!(" J{n}"));
    }
    if let Some(p) = s.partition {
        name.push_str(&format!(" p{p}"));
    }
    name
}

fn meta_event(name: &str, pid: u64, tid: u64, args: Value) -> Value {
    obj([("ph", "M".into()), ("name", name.into()), ("pid", pid.into()), ("tid", tid.into()), ("args", args)])
}

/// One event of the trace, borrowed from the run and its lanes. [`Ev::to_value`] is the
/// event as a JSON value (`trace_json`, a fleet's trace); [`Ev::write`] writes the bytes
/// `serde_json` writes for that value (keys in order, as a `Map` keeps them), without
/// building it: what `write_trace` does, 2.3× faster (issue 17). A test holds the two to
/// the same bytes, event by event, on every committed run.
enum Ev<'a> {
    /// `M`: a process's or a thread's name or sort index.
    Meta { name: &'static str, pid: u64, tid: u64, arg: MetaArg<'a> },
    /// `X`: a span drawn on its lane (thread `pid`/`tid`); `job_no` numbers its job.
    Slice { span: &'a Span, placed: &'a Placed, pid: u64, tid: u64, job_no: Option<usize> },
    /// `b`/`e` of proof `n` (the `b` with its args).
    Proof { ph: &'static str, n: u64, ts: u64, args: Option<ProofArgs<'a>> },
    /// `b`/`e` of the `n`-th queue wait (the `b` with its span's args).
    Queue { ph: &'static str, n: u64, pid: u64, name: &'static str, ts: u64, span: Option<&'a Span> },
    /// `C`: a counter's sample.
    Counter { name: &'a str, pid: u64, ts: u64, value: f64 },
    /// `s`/`f` of flow `id` (`f` binds to the enclosing slice).
    Flow { ph: &'static str, id: u64, pid: u64, tid: u64, ts: u64 },
}

enum MetaArg<'a> {
    Name(&'a str),
    SortIndex(u64),
}

struct ProofArgs<'a> {
    proof: usize,
    job: &'a str,
    partitions: usize,
    duration_s: f64,
    finished: bool,
}

impl Ev<'_> {
    fn to_value(&self) -> Value {
        match *self {
            Ev::Meta { name, pid, tid, ref arg } => {
                let args = match *arg {
                    MetaArg::Name(n) => json!({ "name": n }),
                    MetaArg::SortIndex(i) => json!({ "sort_index": i }),
                };
                meta_event(name, pid, tid, args)
            }
            Ev::Slice { span: s, placed: p, pid, tid, job_no } => {
                let mut args = span_args(s);
                if let Some(st) = stream_arg(s, tid) {
                    args.insert("stream".into(), json!(st));
                }
                let mut name = slice_name(s, job_no);
                if p.open {
                    name.push_str(" (open)");
                    args.insert("open".into(), json!(true));
                }
                if p.clamped {
                    args.insert("end_ns_before_clamp".into(), json!(s.end_ns));
                }
                obj([
                    ("ph", "X".into()),
                    ("name", name.into()),
                    ("cat", category(&s.kind).into()),
                    ("pid", pid.into()),
                    ("tid", tid.into()),
                    ("ts", us(p.start_ns).into()),
                    ("dur", us(p.end_ns - p.start_ns).into()),
                    ("args", Value::Object(args)),
                ])
            }
            Ev::Proof { ph, n, ts, ref args } => {
                let id = format!("0x{:x}", PROOF_ID_BASE + n);
                let [a, b, c, d, e, f, g] = [("ph", ph.into()), ("name", "proof".into()), ("cat", "proof".into()), ("id", id.into()), ("pid", PROOFS_PID.into()), ("tid", 0.into()), ("ts", us(ts).into())];
                match args {
                    None => obj([a, b, c, d, e, f, g]),
                    Some(p) => {
                        let mut args = Map::new();
                        args.insert("proof".into(), json!(format!("J{}", p.proof)));
                        args.insert("job".into(), json!(p.job));
                        args.insert("partitions".into(), json!(p.partitions));
                        args.insert("duration_s".into(), json!(p.duration_s));
                        if !p.finished {
                            args.insert("finished".into(), json!(false));
                        }
                        obj([a, b, c, d, e, f, g, ("args", Value::Object(args))])
                    }
                }
            }
            Ev::Queue { ph, n, pid, name, ts, span } => {
                let id = format!("0x{:x}", n + 1);
                let [a, b, c, d, e, f, g] = [("ph", ph.into()), ("name", name.into()), ("cat", "queue".into()), ("id", id.into()), ("pid", pid.into()), ("tid", 0.into()), ("ts", us(ts).into())];
                match span {
                    None => obj([a, b, c, d, e, f, g]),
                    Some(s) => obj([a, b, c, d, e, f, g, ("args", Value::Object(span_args(s)))]),
                }
            }
            Ev::Counter { name, pid, ts, value } => obj([
                ("ph", "C".into()),
                ("name", name.into()),
                ("pid", pid.into()),
                ("tid", 0.into()),
                ("ts", us(ts).into()),
                ("args", obj([("value", value.into())])),
            ]),
            Ev::Flow { ph, id, pid, tid, ts } => {
                let [a, b, c, d, e, f, g] = [("ph", ph.into()), ("name", "synthesis→gpu".into()), ("cat", "flow".into()), ("id", id.into()), ("pid", pid.into()), ("tid", tid.into()), ("ts", us(ts).into())];
                if ph == "f" {
                    obj([a, b, c, d, e, f, g, ("bp", "e".into())])
                } else {
                    obj([a, b, c, d, e, f, g])
                }
            }
        }
    }

    /// Append the event's JSON to `out`: the bytes `serde_json::to_writer(out,
    /// &self.to_value())` writes (an object's keys in sorted order, as `serde_json`'s `Map`
    /// keeps them), with no allocation.
    fn write(&self, out: &mut Vec<u8>) {
        match *self {
            Ev::Meta { name, pid, tid, ref arg } => {
                match *arg {
                    MetaArg::Name(n) => {
                        out.extend_from_slice(b"{\"args\":{\"name\":");
                        j_str(out, n);
                    }
                    MetaArg::SortIndex(i) => {
                        out.extend_from_slice(b"{\"args\":{\"sort_index\":");
                        j_u64(out, i);
                    }
                }
                out.extend_from_slice(b"},\"name\":");
                j_str(out, name);
                out.extend_from_slice(b",\"ph\":\"M\",\"pid\":");
                j_u64(out, pid);
                out.extend_from_slice(b",\"tid\":");
                j_u64(out, tid);
                out.push(b'}');
            }
            Ev::Slice { span: s, placed: p, pid, tid, job_no } => {
                out.extend_from_slice(b"{\"args\":");
                j_span_args(out, s, p.open, p.clamped, stream_arg(s, tid));
                out.extend_from_slice(b",\"cat\":");
                j_str(out, category(&s.kind));
                out.extend_from_slice(b",\"dur\":");
                j_f64(out, us(p.end_ns - p.start_ns));
                out.extend_from_slice(b",\"name\":\"");
                match imported_name(s) {
                    Some(n) => j_str_contents(out, n),
                    None => {
                        j_str_contents(out, s.kind.as_str());
                        if let Some(n) = job_no {
                            out.extend_from_slice(b" J");
                            j_u64(out, n as u64);
                        }
                        if let Some(n) = s.partition {
                            out.extend_from_slice(b" p");
                            j_u64(out, n as u64);
                        }
                    }
                }
                if p.open {
                    out.extend_from_slice(b" (open)");
                }
                out.extend_from_slice(b"\",\"ph\":\"X\"");
                j_place(out, pid, tid, p.start_ns);
            }
            Ev::Proof { ph, n, ts, ref args } => {
                out.push(b'{');
                if let Some(p) = args {
                    out.extend_from_slice(b"\"args\":{\"duration_s\":");
                    j_f64(out, p.duration_s);
                    if !p.finished {
                        out.extend_from_slice(b",\"finished\":false");
                    }
                    out.extend_from_slice(b",\"job\":");
                    j_str(out, p.job);
                    out.extend_from_slice(b",\"partitions\":");
                    j_u64(out, p.partitions as u64);
                    out.extend_from_slice(b",\"proof\":\"J");
                    j_u64(out, p.proof as u64);
                    out.extend_from_slice(b"\"},");
                }
                out.extend_from_slice(b"\"cat\":\"proof\",\"id\":");
                j_hex_id(out, PROOF_ID_BASE + n);
                out.extend_from_slice(b",\"name\":\"proof\",\"ph\":");
                j_str(out, ph);
                j_place(out, PROOFS_PID, 0, ts);
            }
            Ev::Queue { ph, n, pid, name, ts, span } => {
                out.push(b'{');
                if let Some(s) = span {
                    out.extend_from_slice(b"\"args\":");
                    j_span_args(out, s, false, false, None);
                    out.push(b',');
                }
                out.extend_from_slice(b"\"cat\":\"queue\",\"id\":");
                j_hex_id(out, n + 1);
                out.extend_from_slice(b",\"name\":");
                j_str(out, name);
                out.extend_from_slice(b",\"ph\":");
                j_str(out, ph);
                j_place(out, pid, 0, ts);
            }
            Ev::Counter { name, pid, ts, value } => {
                out.extend_from_slice(b"{\"args\":{\"value\":");
                j_f64(out, value);
                out.extend_from_slice(b"},\"name\":");
                j_str(out, name);
                out.extend_from_slice(b",\"ph\":\"C\"");
                j_place(out, pid, 0, ts);
            }
            Ev::Flow { ph, id, pid, tid, ts } => {
                out.push(b'{');
                if ph == "f" {
                    out.extend_from_slice(b"\"bp\":\"e\",");
                }
                out.extend_from_slice(b"\"cat\":\"flow\",\"id\":");
                j_u64(out, id);
                out.extend_from_slice(",\"name\":\"synthesis→gpu\",\"ph\":".as_bytes());
                j_str(out, ph);
                j_place(out, pid, tid, ts);
            }
        }
    }
}

/// The end of an event that has a place on the timeline: `,"pid":P,"tid":T,"ts":X}` (X in µs).
fn j_place(out: &mut Vec<u8>, pid: u64, tid: u64, ts_ns: u64) {
    out.extend_from_slice(b",\"pid\":");
    j_u64(out, pid);
    out.extend_from_slice(b",\"tid\":");
    j_u64(out, tid);
    out.extend_from_slice(b",\"ts\":");
    j_f64(out, us(ts_ns));
    out.push(b'}');
}

/// An integer as `serde_json` writes it.
fn j_u64(out: &mut Vec<u8>, n: u64) {
    let _ = CompactFormatter.write_u64(out, n);
}

/// A float as `serde_json` writes it (`null` where it is not finite, as `Value::from` has it).
fn j_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let _ = CompactFormatter.write_f64(out, v);
    } else {
        out.extend_from_slice(b"null");
    }
}

/// `"0x…"`: an async id (`format!("0x{:x}")`).
fn j_hex_id(out: &mut Vec<u8>, n: u64) {
    let _ = write!(out, "\"0x{n:x}\"");
}

/// A string, quoted and escaped as `serde_json` does.
fn j_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    j_str_contents(out, s);
    out.push(b'"');
}

/// A string's characters, escaped as `serde_json` escapes them: `"` and `\` with a
/// backslash, control characters as `\b \t \n \f \r` or `\u00xx` (lowercase hex), the rest
/// (UTF-8 included) as they are.
fn j_str_contents(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let mut from = 0;
    for (i, &c) in b.iter().enumerate() {
        if c >= 0x20 && c != b'"' && c != b'\\' {
            continue;
        }
        out.extend_from_slice(&b[from..i]);
        from = i + 1;
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 0xf) as usize]]);
            }
        }
    }
    out.extend_from_slice(&b[from..]);
}

/// A value of the fields a span's args get from the span itself.
#[derive(Clone, Copy)]
enum Own<'a> {
    Str(&'a str),
    U64(u64),
    True,
    OptU64(Option<u64>),
}

/// A span's args as [`span_args`] (then `open`, `end_ns_before_clamp`) makes them and
/// `serde_json` writes them: the span's own fields (`job`, `partition`, `worker`, `device`,
/// and `open` or `end_ns_before_clamp` for a slice drawn so) merged in key order with its
/// [`Span::args`], its fields winning over args of the same name.
fn j_span_args<'s>(out: &mut Vec<u8>, s: &'s Span, open: bool, clamped: bool, stream: Option<u64>) {
    let mut own: [(&str, Own<'s>); 7] = [("", Own::True); 7];
    let mut n = 0;
    let mut add = |k: &'static str, v: Own<'s>| {
        own[n] = (k, v);
        n += 1;
    };
    // In key order.
    if let Some(d) = s.device {
        add("device", Own::U64(d as u64));
    }
    if clamped {
        add("end_ns_before_clamp", Own::OptU64(s.end_ns));
    }
    if let Some(j) = &s.job {
        add("job", Own::Str(j));
    }
    if open {
        add("open", Own::True);
    }
    if let Some(p) = s.partition {
        add("partition", Own::U64(p as u64));
    }
    if let Some(st) = stream {
        add("stream", Own::U64(st));
    }
    if let Some(w) = s.worker {
        add("worker", Own::U64(w as u64));
    }
    let mut own = own[..n].iter().peekable();
    let mut args = s.args.iter().peekable();
    out.push(b'{');
    let mut first = true;
    loop {
        let take_own = match (own.peek(), args.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((k, _)), Some((a, _))) => match (*k).cmp(a.as_str()) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => {
                    args.next();
                    true
                }
                std::cmp::Ordering::Greater => false,
            },
        };
        if !first {
            out.push(b',');
        }
        first = false;
        if take_own {
            let &(k, v) = own.next().expect("peeked");
            j_str(out, k);
            out.push(b':');
            match v {
                Own::Str(s) => j_str(out, s),
                Own::U64(n) | Own::OptU64(Some(n)) => j_u64(out, n),
                Own::True => out.extend_from_slice(b"true"),
                Own::OptU64(None) => out.extend_from_slice(b"null"),
            }
        } else {
            let (k, v) = args.next().expect("peeked");
            j_str(out, k);
            out.push(b':');
            let _ = serde_json::to_writer(&mut *out, v);
        }
    }
    out.push(b'}');
}

/// Where the events of a trace go: JSON values ([`Values`]) or bytes ([`Bytes`]).
trait Sink {
    fn event(&mut self, e: Ev<'_>);
}

/// Events as JSON values, into a `Vec` or a streaming sink.
struct Values<'s, E: Extend<Value>>(&'s mut E);

impl<E: Extend<Value>> Sink for Values<'_, E> {
    fn event(&mut self, e: Ev<'_>) {
        self.0.extend(std::iter::once(e.to_value()));
    }
}

fn meta(ev: &mut impl Sink, name: &'static str, pid: u64, tid: u64, arg: MetaArg<'_>) {
    ev.event(Ev::Meta { name, pid, tid, arg });
}

/// Produce every event of the trace of a run laid out on its lanes, in file order, into `ev`.
fn events(laid: &LaidOut<'_>, ev: &mut impl Sink) {
    let run = laid.run();
    let run_end = run.end_ns();
    let lanes = laid.lanes();

    // Processes: the host always (it carries synthesis and host counters), then every device
    // that has a lane, a queue wait or a counter.
    let mut devices: Vec<u32> = lanes
        .iter()
        .filter_map(|l| match l.group {
            LaneGroup::Device(d) => Some(d),
            LaneGroup::Synthesis => None,
        })
        .chain(run.spans.iter().filter(|s| s.kind == SpanKind::GpuQueue).map(|s| s.device_or_0()))
        .chain(run.counters.iter().filter_map(|c| c.device))
        .collect();
    devices.sort_unstable();
    devices.dedup();
    let proofs = proof_slices(run);
    if !proofs.is_empty() {
        meta(ev, "process_name", PROOFS_PID, 0, MetaArg::Name("Proofs (first synthesis → last GPU end)"));
        meta(ev, "process_sort_index", PROOFS_PID, 0, MetaArg::SortIndex(0));
    }
    meta(ev, "process_name", HOST_PID, 0, MetaArg::Name("Host (synthesis)"));
    meta(ev, "process_sort_index", HOST_PID, 0, MetaArg::SortIndex(1));
    let dev = run.meta.device_word();
    for &d in &devices {
        let name = match run.meta.gpus.get(d as usize) {
            Some(g) => format!("{dev} {d}: {g}"),
            None => format!("{dev} {d}"),
        };
        meta(ev, "process_name", device_pid(d), 0, MetaArg::Name(&name));
        meta(ev, "process_sort_index", device_pid(d), 0, MetaArg::SortIndex(2 + d as u64));
    }

    // Threads: one per lane, numbered from 1 within their process.
    let mut next_tid: HashMap<u64, u64> = HashMap::new();
    // span index -> (lane, position in the lane) where it was drawn (8 bytes a span; `at`
    // gives its pid, tid, start and end).
    const NOWHERE: (u32, u32) = (u32::MAX, u32::MAX);
    let mut placed_at: Vec<(u32, u32)> = vec![NOWHERE; run.spans.len()];
    let mut lane_ids: Vec<(u64, u64)> = Vec::with_capacity(lanes.len());
    // Jobs numbered by first appearance, for slice names a person can read (`msm_h J3 p7`;
    // the job's full id stays in the slice's args).
    let mut job_no: FxHashMap<&str, usize> = FxHashMap::default();
    for s in &run.spans {
        if let Some(j) = s.job.as_deref() {
            let n = job_no.len();
            job_no.entry(j).or_insert(n);
        }
    }
    for (li, lane) in lanes.iter().enumerate() {
        let pid = match lane.group {
            LaneGroup::Synthesis => HOST_PID,
            LaneGroup::Device(d) => device_pid(d),
        };
        let tid = {
            let t = next_tid.entry(pid).or_insert(0);
            *t += 1;
            *t
        };
        lane_ids.push((pid, tid));
        meta(ev, "thread_name", pid, tid, MetaArg::Name(&lane.label(run)));
        meta(ev, "thread_sort_index", pid, tid, MetaArg::SortIndex(tid));
        for (k, p) in lane.spans.iter().enumerate() {
            let s = &run.spans[p.index];
            let job_no = s.job.as_deref().and_then(|j| job_no.get(j)).copied();
            ev.event(Ev::Slice { span: s, placed: p, pid, tid, job_no });
            placed_at[p.index] = (li as u32, k as u32);
        }
    }
    let at = |i: usize| -> Option<(u64, u64, u64, u64)> {
        let (l, k) = placed_at[i];
        (l != NOWHERE.0).then(|| {
            let p = &lanes[l as usize].spans[k as usize];
            let (pid, tid) = lane_ids[l as usize];
            (pid, tid, p.start_ns, p.end_ns)
        })
    };

    // Proofs: async slices of one name, so they share one track (overlaps stack).
    for (n, p) in proofs.iter().enumerate() {
        let args = ProofArgs {
            proof: job_no.get(p.job).copied().unwrap_or(n),
            job: p.job,
            partitions: p.partitions,
            duration_s: (p.end_ns - p.start_ns) as f64 / 1e9,
            finished: p.finished,
        };
        ev.event(Ev::Proof { ph: "b", n: n as u64, ts: p.start_ns, args: Some(args) });
        ev.event(Ev::Proof { ph: "e", n: n as u64, ts: p.end_ns, args: None });
    }

    // Queue waits: async slices on their device's process.
    for (n, s) in run.spans.iter().filter(|s| s.kind == SpanKind::GpuQueue).enumerate() {
        let pid = device_pid(s.device_or_0());
        let end = s.end_ns.unwrap_or(run_end).max(s.start_ns);
        let name = if s.is_open() { "gpu_queue (open)" } else { "gpu_queue" };
        let n = n as u64;
        ev.event(Ev::Queue { ph: "b", n, pid, name, ts: s.start_ns, span: Some(s) });
        ev.event(Ev::Queue { ph: "e", n, pid, name, ts: end, span: None });
    }

    // Counters, on their device's process (host counters on the host).
    for c in &run.counters {
        if !c.value.is_finite() {
            continue;
        }
        let pid = c.device.map_or(HOST_PID, device_pid);
        ev.event(Ev::Counter { name: &c.name, pid, ts: c.t_ns, value: c.value });
    }

    // Flows: each partition's synthesis to the first GPU call of that partition after it.
    let mut gpu_of: FxHashMap<(&str, u32), Vec<usize>> = FxHashMap::default();
    for (i, s) in run.spans.iter().enumerate() {
        if let (SpanKind::Gpu, Some(j), Some(p)) = (&s.kind, &s.job, s.partition) {
            gpu_of.entry((&**j, p)).or_default().push(i);
        }
    }
    let mut flow_id = 0u64;
    for (i, s) in run.spans.iter().enumerate() {
        let (SpanKind::Synthesis, Some(j), Some(p), Some(_)) = (&s.kind, &s.job, s.partition, s.end_ns) else { continue };
        let Some((spid, stid, ss, se)) = at(i) else { continue };
        let Some(cands) = gpu_of.get(&(&**j, p)) else { continue };
        let Some((gpid, gtid, gs, _)) = cands.iter().filter_map(|&g| at(g)).filter(|g| g.2 >= se).min_by_key(|g| g.2) else {
            continue;
        };
        flow_id += 1;
        // Bind inside the source slice (its midpoint) and to the slice enclosing the GPU start.
        let mid = ss + (se - ss) / 2;
        ev.event(Ev::Flow { ph: "s", id: flow_id, pid: spid, tid: stid, ts: mid });
        ev.event(Ev::Flow { ph: "f", id: flow_id, pid: gpid, tid: gtid, ts: gs });
    }
}

/// One proof's slice: from its first synthesis start (its first span's start when it has no
/// synthesis) to its last GPU end (its last span's end when no GPU call ended; open spans
/// end at the run's end, and the proof is then not `finished`).
struct ProofSlice<'a> {
    job: &'a str,
    start_ns: u64,
    end_ns: u64,
    partitions: usize,
    finished: bool,
}

/// A slice per job, in order of first appearance.
fn proof_slices(run: &Run) -> Vec<ProofSlice<'_>> {
    #[derive(Default)]
    struct Acc {
        first: Option<u64>,
        synth: Option<u64>,
        gpu_end: Option<u64>,
        last: u64,
        open: bool,
        parts: std::collections::BTreeSet<u32>,
    }
    let run_end = run.end_ns();
    let mut order: Vec<&str> = Vec::new();
    let mut acc: FxHashMap<&str, Acc> = FxHashMap::default();
    for s in &run.spans {
        let Some(j) = s.job.as_deref() else { continue };
        let a = acc.entry(j).or_insert_with(|| {
            order.push(j);
            Acc::default()
        });
        a.first = Some(a.first.map_or(s.start_ns, |f| f.min(s.start_ns)));
        if s.kind == SpanKind::Synthesis {
            a.synth = Some(a.synth.map_or(s.start_ns, |f| f.min(s.start_ns)));
        }
        if let Some(p) = s.partition {
            a.parts.insert(p);
        }
        match s.end_ns {
            Some(e) => {
                a.last = a.last.max(e);
                if s.kind == SpanKind::Gpu {
                    a.gpu_end = Some(a.gpu_end.map_or(e, |g| g.max(e)));
                }
            }
            None => a.open = true,
        }
    }
    order
        .into_iter()
        .filter_map(|j| {
            let a = acc.remove(j)?;
            let start = a.synth.or(a.first)?;
            let (end, finished) = match a.gpu_end {
                Some(g) => (g, true),
                None if a.open => (run_end, false),
                None => (a.last, false),
            };
            Some(ProofSlice { job: j, start_ns: start, end_ns: end.max(start), partitions: a.parts.len(), finished })
        })
        .collect()
}

/// `otherData`: what the run was (shown by Perfetto under "Info and stats").
fn other_data(run: &Run) -> Value {
    let mut other = Map::new();
    other.insert("source".into(), json!(run.meta.source));
    other.insert("tool_version".into(), json!(run.meta.tool_version));
    if let Ok(cfg) = serde_json::to_value(&run.meta.config) {
        other.insert("config".into(), cfg);
    }
    Value::Object(other)
}

/// The whole trace as a JSON value (`{"traceEvents": [...], ...}`).
pub fn trace_json(laid: &LaidOut<'_>) -> Value {
    let mut ev: Vec<Value> = Vec::new();
    events(laid, &mut Values(&mut ev));
    obj([("traceEvents", Value::Array(ev)), ("displayTimeUnit", "ms".into()), ("otherData", other_data(laid.run()))])
}

/// Streams events to the writer as they are produced, keeping the first error.
struct EventSink<W: Write> {
    out: W,
    first: bool,
    err: Option<io::Error>,
}

impl<W: Write> Extend<Value> for EventSink<W> {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        for e in iter {
            if self.err.is_some() {
                return;
            }
            let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
            self.first = false;
            let r = self.out.write_all(sep).and_then(|_| serde_json::to_writer(&mut self.out, &e).map_err(io::Error::from));
            if let Err(e) = r {
                self.err = Some(e);
            }
        }
    }
}

/// Streams events' bytes ([`Ev::write`]) to the writer through one buffer, handed over
/// whenever it holds [`Bytes::CHUNK`], keeping the first error.
struct Bytes<W: Write> {
    out: W,
    buf: Vec<u8>,
    first: bool,
    err: Option<io::Error>,
}

impl<W: Write> Bytes<W> {
    const CHUNK: usize = 1 << 20;

    fn new(out: W) -> Self {
        Bytes { out, buf: Vec::with_capacity(Self::CHUNK + (1 << 16)), first: true, err: None }
    }

    fn flush_buf(&mut self) {
        if self.err.is_none() {
            if let Err(e) = self.out.write_all(&self.buf) {
                self.err = Some(e);
            }
        }
        self.buf.clear();
    }

    /// The writer, once everything buffered is written to it.
    fn finish(mut self) -> io::Result<W> {
        self.flush_buf();
        match self.err {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

impl<W: Write> Sink for Bytes<W> {
    fn event(&mut self, e: Ev<'_>) {
        let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
        self.first = false;
        self.buf.extend_from_slice(sep);
        e.write(&mut self.buf);
        if self.buf.len() >= Self::CHUNK {
            self.flush_buf();
        }
    }
}

/// Write `trace.json` for a run laid out on its lanes at `path`, streaming (one event per
/// line; the trace is never held in memory as a whole). The bytes are those of
/// [`write_trace_values`] (each event a `serde_json::Value` written by `serde_json`),
/// written directly.
pub fn write_trace(laid: &LaidOut<'_>, path: &Path) -> io::Result<()> {
    // Written to a temporary file and renamed into place when complete (crate::atomic).
    write_trace_synced(laid, path)?.commit()
}

/// [`write_trace`], left under its temporary name (written and synced) for the caller to
/// put in place ([`crate::atomic::write_synced`]).
pub fn write_trace_synced(laid: &LaidOut<'_>, path: &Path) -> io::Result<crate::atomic::AtomicFile> {
    crate::atomic::write_synced(path, |w| {
        let mut sink = Bytes::new(w);
        sink.buf.extend_from_slice(b"{\"traceEvents\":[");
        events(laid, &mut sink);
        let w = sink.finish()?;
        write!(w, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":")?;
        serde_json::to_writer(&mut *w, &other_data(laid.run()))?;
        w.write_all(b"}\n")
    })
}

/// `trace.json` as it was written before [`write_trace`] wrote bytes itself: each event a
/// `serde_json::Value`, written by `serde_json` (the same bytes, 2.3× slower). The
/// reference of the tests and the baseline of `benches/analyze.rs`.
#[doc(hidden)]
pub fn write_trace_values(laid: &LaidOut<'_>, path: &Path) -> io::Result<()> {
    crate::atomic::write_with(path, |w| {
        let mut sink = EventSink { out: w, first: true, err: None };
        sink.out.write_all(b"{\"traceEvents\":[")?;
        events(laid, &mut Values(&mut sink));
        if let Some(e) = sink.err {
            return Err(e);
        }
        let w = sink.out;
        write!(w, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":")?;
        serde_json::to_writer(&mut *w, &other_data(laid.run()))?;
        w.write_all(b"}\n")
    })
}

/// Threads of one process of a host's own trace become threads `old pid × this + old tid`
/// of the host's one process in a fleet trace.
const FLEET_TID_STRIDE: u64 = 1000;
/// Flow ids of host `h` in a fleet trace are offset by `h ×` this (flow ids are global).
const FLEET_FLOW_STRIDE: u64 = 1 << 32;

/// A fleet's `trace.json`: one process per host (pid = its 1-based position), holding
/// every thread of that host's own trace (synthesis lanes, each GPU's workers, queue
/// waits), named `<old process> · <thread>`. Hosts are added one at a time and streamed
/// to the file, so the fleet's trace is never in memory as a whole.
pub struct FleetTrace<'w> {
    sink: EventSink<&'w mut dyn Write>,
    hosts: u64,
}

impl FleetTrace<'_> {
    /// Append one host's events (its run laid out on its lanes) as process `hosts + 1`,
    /// named `label`.
    pub fn add(&mut self, label: &str, laid: &LaidOut<'_>) -> io::Result<()> {
        self.hosts += 1;
        let h = self.hosts;
        let mut sink = Values(&mut self.sink);
        sink.event(Ev::Meta { name: "process_name", pid: h, tid: 0, arg: MetaArg::Name(label) });
        sink.event(Ev::Meta { name: "process_sort_index", pid: h, tid: 0, arg: MetaArg::SortIndex(h) });
        let mut remap = Remap { inner: &mut self.sink, host: h, proc_names: HashMap::new() };
        events(laid, &mut Values(&mut remap));
        match self.sink.err.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Rewrites a host's own events into its one process of a fleet trace (see [`FleetTrace`]).
struct Remap<'a, S: Extend<Value>> {
    inner: &'a mut S,
    host: u64,
    proc_names: HashMap<u64, String>,
}

impl<S: Extend<Value>> Extend<Value> for Remap<'_, S> {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        for mut e in iter {
            let Some(o) = e.as_object_mut() else { continue };
            let pid = o.get("pid").and_then(Value::as_u64).unwrap_or(0);
            let tid = o.get("tid").and_then(Value::as_u64).unwrap_or(0);
            let ph = o.get("ph").and_then(Value::as_str).unwrap_or("").to_string();
            let name = o.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            let proc_name = self.proc_names.get(&pid).cloned().unwrap_or_default();
            if ph == "M" {
                match name.as_str() {
                    "process_name" => {
                        let n = o.get("args").and_then(|a| a.get("name")).and_then(Value::as_str).unwrap_or("").to_string();
                        self.proc_names.insert(pid, n);
                        continue;
                    }
                    "process_sort_index" => continue,
                    "thread_name" => {
                        let n = o.get("args").and_then(|a| a.get("name")).and_then(Value::as_str).unwrap_or("").to_string();
                        o.insert("args".into(), json!({"name": format!("{proc_name} · {n}")}));
                    }
                    "thread_sort_index" => {
                        let i = o.get("args").and_then(|a| a.get("sort_index")).and_then(Value::as_u64).unwrap_or(0);
                        o.insert("args".into(), json!({"sort_index": pid * FLEET_TID_STRIDE + i}));
                    }
                    _ => {}
                }
            }
            if ph == "C" && pid != HOST_PID {
                o.insert("name".into(), json!(format!("{proc_name} · {name}")));
            }
            if let Some(id) = o.get("id").cloned() {
                let new = match id {
                    Value::Number(n) => json!(n.as_u64().unwrap_or(0) + self.host * FLEET_FLOW_STRIDE),
                    other => json!(format!("h{}:{}", self.host, other.as_str().map_or(other.to_string(), str::to_string))),
                };
                o.insert("id".into(), new);
            }
            o.insert("pid".into(), json!(self.host));
            o.insert("tid".into(), json!(pid * FLEET_TID_STRIDE + tid));
            self.inner.extend(std::iter::once(e));
        }
    }
}

/// Write a fleet's `trace.json` at `path` (whole or not at all): `fill` adds the hosts
/// ([`FleetTrace::add`]) and returns what the caller wants back.
pub fn write_fleet_trace<T>(path: &Path, fill: impl FnOnce(&mut FleetTrace<'_>) -> io::Result<T>) -> io::Result<T> {
    let mut out: Option<T> = None;
    crate::atomic::write_with(path, |w| {
        w.write_all(b"{\"traceEvents\":[")?;
        let mut ft = FleetTrace { sink: EventSink { out: w, first: true, err: None }, hosts: 0 };
        out = Some(fill(&mut ft)?);
        let w = ft.sink.out;
        write!(w, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":")?;
        serde_json::to_writer(&mut *w, &json!({"fleet_hosts": ft.hosts, "tool_version": env!("CARGO_PKG_VERSION")}))?;
        w.write_all(b"}\n")
    })?;
    Ok(out.expect("set by fill"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RunMeta;
    use crate::export::fixtures::{sample_run, synthetic};

    #[test]
    fn a_fleet_trace_has_one_process_per_host() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trace.json");
        let hosts = write_fleet_trace(&p, |t| {
            t.add("alpha", &LaidOut::new(&sample_run()))?;
            t.add("beta", &LaidOut::new(&synthetic(3, 4, 2, true)))?;
            Ok(2)
        })
        .unwrap();
        assert_eq!(hosts, 2);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let mut pids: Vec<u64> = ev.iter().filter_map(|e| e["pid"].as_u64()).collect();
        pids.sort_unstable();
        pids.dedup();
        assert_eq!(pids, [1, 2]);
        let names: Vec<&str> = ev.iter().filter(|e| e["name"] == "process_name").filter_map(|e| e["args"]["name"].as_str()).collect();
        assert_eq!(names, ["alpha", "beta"]);
        // Every slice of each host's own trace is there.
        let slices = |t: &Value| t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").count();
        let own = slices(&trace_json(&LaidOut::new(&sample_run()))) + slices(&trace_json(&LaidOut::new(&synthetic(3, 4, 2, true))));
        assert_eq!(slices(&v), own);
        assert!(ev.iter().any(|e| e["name"] == "thread_name" && e["args"]["name"].as_str().is_some_and(|n| n.contains(" · "))));
        if let Err(issues) = crate::export::validate::validate_trace(&v) {
            panic!("{issues:?}");
        }
    }

    #[test]
    fn one_track_holds_a_slice_per_proof() {
        // 3 proofs × 4 partitions on 2 GPUs: each proof from its first synthesis start to its
        // last GPU end, all on one track (one name, one pid and tid) of the Proofs process.
        let run = synthetic(3, 4, 2, false);
        let v = trace_json(&LaidOut::new(&run));
        let ev = v["traceEvents"].as_array().unwrap();
        let proofs: Vec<&Value> = ev.iter().filter(|e| e["cat"] == "proof").collect();
        assert_eq!(proofs.len(), 6, "a begin and an end per proof");
        assert!(proofs.iter().all(|e| e["name"] == "proof" && e["pid"] == PROOFS_PID && e["tid"] == 0));
        for (j, job) in ["job0", "job1", "job2"].iter().enumerate() {
            let of = |k: SpanKind| run.spans.iter().filter(move |s| s.kind == k && s.job.as_deref() == Some(*job));
            let start = of(SpanKind::Synthesis).map(|s| s.start_ns).min().unwrap();
            let end = of(SpanKind::Gpu).filter_map(|s| s.end_ns).max().unwrap();
            let b = proofs.iter().find(|e| e["ph"] == "b" && e["args"]["job"] == *job).unwrap();
            let e = proofs.iter().find(|e| e["ph"] == "e" && e["id"] == b["id"]).unwrap();
            assert_eq!(b["ts"].as_f64().unwrap(), us(start));
            assert_eq!(e["ts"].as_f64().unwrap(), us(end));
            assert_eq!(b["args"]["proof"], format!("J{j}"));
            assert_eq!(b["args"]["partitions"], 4);
        }
        // The proofs overlap (a pipeline), which a track of async slices allows.
        let st = crate::export::validate::validate_trace(&v).unwrap();
        assert_eq!(st.async_pairs, 3 + run.spans_of(&SpanKind::GpuQueue).count());
        assert!(ev.iter().any(|e| e["name"] == "process_name" && e["pid"] == PROOFS_PID));
    }

    #[test]
    fn msms_on_streams_are_threads_of_their_own() {
        // The CUDA backend's MSMs on lanes 1 and 2 overlap each other and the ntt on the
        // worker's own stream: each stream is its own thread, nothing nests falsely.
        let sp = |k: SpanKind, a: u64, b: u64| Span::new(k, a * 1000, b * 1000).worker(0).device(0).job("j").partition(0);
        let mut run = Run::default();
        run.spans = vec![
            sp(SpanKind::Gpu, 0, 1000),
            sp(SpanKind::Ntt, 10, 900),
            sp(SpanKind::MsmL, 20, 700).arg(crate::event::arg::LANE, 1),
            sp(SpanKind::MsmA, 30, 800).arg(crate::event::arg::LANE, 2),
            sp(SpanKind::BatchAdd, 40, 300).arg(crate::event::arg::QUERY, "msm_a"),
        ];
        run.normalize();
        let v = trace_json(&LaidOut::new(&run));
        let ev = v["traceEvents"].as_array().unwrap();
        let thread = |name: &str| ev.iter().find(|e| e["ph"] == "X" && e["name"] == name).map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap())).unwrap();
        let (gpu, l1, l2) = (thread("gpu J0 p0"), thread("msm_l J0 p0"), thread("msm_a J0 p0"));
        assert_eq!(thread("ntt J0 p0"), gpu);
        assert!(gpu != l1 && l1 != l2 && gpu != l2);
        assert_eq!(thread("batch_add J0 p0"), l2, "a piece follows its MSM");
        let names: Vec<&str> = ev.iter().filter(|e| e["name"] == "thread_name").filter_map(|e| e["args"]["name"].as_str()).collect();
        assert_eq!(names, ["gpu0 w0", "gpu0 w0 lane 1: msm_l", "gpu0 w0 lane 2: msm_a"]);
        let st = crate::export::validate::validate_trace(&v).unwrap();
        assert_eq!(st.max_depth, 2);
    }

    /// Real runs whose `trace.json` is pinned byte for byte by the golden file (the
    /// writer's output before it wrote bytes itself, issue 17): MSMs on CUDA streams, a
    /// long engine run, a cuzk daemon log, an imported Kineto trace, and the fixtures.
    const GOLDEN_INPUTS: [&str; 5] = [
        "reports/gpu/data/2026-12-01-run47-2e16-lanes-on.jsonl.gz",
        "reports/gpu/data/2026-12-02-run60-tight25-vram7.jsonl.gz",
        "reports/gpu/data/2026-12-01-run45-engine-2e20-default.jsonl.gz",
        "timeline/tests/data/fleet/host-a.log.gz",
        "timeline/tests/data/kineto-small.json",
    ];
    const GOLDEN: &str = "timeline/tests/data/trace-json-golden.txt.gz";

    fn repo(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
    }

    /// Every golden input's `trace.json` as written by [`write_trace`], each after a
    /// `### <input>` line.
    fn golden_traces() -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trace.json");
        let mut all = Vec::new();
        let named = GOLDEN_INPUTS.iter().map(|f| (f.to_string(), crate::read::read_path(&repo(f), None).unwrap()));
        let fixtures = [("fixture sample_run", sample_run()), ("fixture synthetic(3, 4, 2, true)", synthetic(3, 4, 2, true)), ("fixture extreme_run", crate::export::fixtures::extreme_run()), ("fixture empty", Run::default())];
        for (name, run) in named.chain(fixtures.into_iter().map(|(n, r)| (n.to_string(), r))) {
            write_trace(&LaidOut::new(&run), &p).unwrap();
            all.extend_from_slice(format!("### {name}\n").as_bytes());
            all.extend_from_slice(&std::fs::read(&p).unwrap());
        }
        all
    }

    #[test]
    fn trace_json_of_real_runs_is_byte_for_byte_the_golden_file() {
        use std::io::Read;
        let got = golden_traces();
        if std::env::var_os("PROOFSCOPE_BLESS_TRACE").is_some() {
            let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(repo(GOLDEN)).unwrap(), flate2::Compression::best());
            gz.write_all(&got).unwrap();
            gz.finish().unwrap();
        }
        let mut want = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(repo(GOLDEN)).unwrap()).read_to_end(&mut want).unwrap();
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            let show = |b: &[u8]| String::from_utf8_lossy(&b[at.saturating_sub(200)..(at + 200).min(b.len())]).into_owned();
            panic!("trace.json differs from the golden file at byte {at} (lengths {} and {}):\n got: {}\nwant: {}", got.len(), want.len(), show(&got), show(&want));
        }
    }

    /// Checks each event's bytes against `serde_json`'s for its value.
    struct SameBytes {
        n: usize,
        fast: Vec<u8>,
        reference: Vec<u8>,
        what: String,
    }

    impl Sink for SameBytes {
        fn event(&mut self, e: Ev<'_>) {
            self.fast.clear();
            self.reference.clear();
            e.write(&mut self.fast);
            serde_json::to_writer(&mut self.reference, &e.to_value()).unwrap();
            assert!(
                self.fast == self.reference,
                "{}: event {} differs\n fast: {}\n  ref: {}",
                self.what,
                self.n,
                String::from_utf8_lossy(&self.fast),
                String::from_utf8_lossy(&self.reference)
            );
            self.n += 1;
        }
    }

    fn same_bytes(what: &str, run: &Run) -> usize {
        let mut c = SameBytes { n: 0, fast: Vec::new(), reference: Vec::new(), what: what.to_string() };
        events(&LaidOut::new(run), &mut c);
        c.n
    }

    /// Strings that need escaping everywhere a string is written, args whose names are
    /// those of a span's own fields (which win) or sort around them, floats of every form.
    fn strange_run() -> Run {
        let mut meta = RunMeta::new("strange \"source\"\n");
        meta.gpus = vec!["H200 \"NVL\"\t\\ 141 GB".into()];
        let mut r = Run::new(meta);
        let job = "j\"o\\b\u{1}\u{8}\u{c}\n\r\t\u{1f}\u{7f} é → 😀";
        let big = u64::MAX / 2;
        r.spans.push(Span::new(SpanKind::Synthesis, 1_234, 987_654_321).job(job).partition(3).arg("job", "shadowed").arg("Job", 1).arg("a", json!({"z": [1.5, -0.0, 1e21, 1e-7, null, "q\""], "a": true})));
        r.spans.push(Span::new(SpanKind::Gpu, 987_654_400, 2_000_000_001).job(job).partition(3).device(0).worker(1).arg("open", "no").arg("devicf", 2).arg("device", 9).arg("zzz", f64::MAX).arg("end_ns_before_clamp", 5));
        r.spans.push(Span::new(SpanKind::Kernel, 987_654_500, 2_000_000_900).device(0).worker(1).job(job).arg("name", "void k<\"T\">(\\x)\u{0}").arg(" ", "space"));
        r.spans.push(Span::new(SpanKind::Other("odd \"kind\"\n".into()), 5, 7).device(0).worker(1).arg("name", ""));
        let mut open = Span::new(SpanKind::MsmH, 1_000_000_000, 0).job(job).device(0).worker(1).arg("open", 3);
        open.end_ns = None;
        r.spans.push(open);
        r.spans.push(Span::new(SpanKind::GpuQueue, 987_654_321, 987_654_400).job(job).partition(3).device(0).arg("waited \u{2028}", 1u64 << 60));
        r.spans.push(Span::new(SpanKind::Synthesis, big, big + 3).job("k").partition(0));
        for (i, v) in [0.0, -0.0, 1.0, 0.1, 1e15, 1e16, 1e21, 1e-7, 123456789.123, f64::MIN_POSITIVE, f64::MAX, -3.5].into_iter().enumerate() {
            r.counters.push(crate::event::Counter { name: format!("c\"{i}\u{1b}"), t_ns: i as u64 * 333, value: v, device: if i % 2 == 0 { Some(0) } else { None } });
        }
        r.normalize();
        r
    }

    #[test]
    fn events_bytes_are_serde_jsons_for_every_committed_run() {
        let mut n = 0;
        for (what, run) in [("sample_run", sample_run()), ("synthetic", synthetic(3, 4, 2, true)), ("extreme_run", crate::export::fixtures::extreme_run()), ("strange_run", strange_run()), ("empty", Run::default())] {
            n += same_bytes(what, &run);
        }
        let mut files: Vec<_> = std::fs::read_dir(repo("reports/gpu/data")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".gz")).collect();
        files.extend([repo("timeline/tests/data/kineto-small.json"), repo("timeline/tests/data/fleet/host-a.log.gz"), repo("timeline/tests/data/fleet/host-c.jsonl")]);
        files.sort();
        assert!(files.len() > 50, "{files:?}");
        for f in &files {
            let run = crate::read::read_path(f, None).unwrap();
            n += same_bytes(&f.display().to_string(), &run);
        }
        assert!(n > 100_000, "{n} events");
    }

    #[test]
    fn written_file_is_the_reference_writers() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        for run in [sample_run(), synthetic(40, 10, 2, true), crate::export::fixtures::extreme_run(), strange_run(), Run::default()] {
            let laid = LaidOut::new(&run);
            write_trace(&laid, &a).unwrap();
            write_trace_values(&laid, &b).unwrap();
            let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
            assert!(a == b, "{} and {} bytes", a.len(), b.len());
            let v: Value = serde_json::from_slice(&a).unwrap();
            assert_eq!(v, trace_json(&laid));
        }
        // Larger than the buffer handed over at once.
        let run = synthetic(400, 10, 2, true);
        let laid = LaidOut::new(&run);
        write_trace(&laid, &a).unwrap();
        write_trace_values(&laid, &b).unwrap();
        let len = std::fs::metadata(&a).unwrap().len();
        assert!(len > 2 * Bytes::<Vec<u8>>::CHUNK as u64, "{len}");
        assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    }

    #[test]
    fn streamed_file_equals_the_value() {
        let dir = tempfile::tempdir().unwrap();
        for run in [sample_run(), synthetic(3, 4, 2, true), Run::default()] {
            let p = dir.path().join("trace.json");
            write_trace(&LaidOut::new(&run), &p).unwrap();
            let back: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            assert_eq!(back, trace_json(&LaidOut::new(&run)));
        }
        let err = write_trace(&LaidOut::new(&sample_run()), Path::new("/nonexistent/dir/trace.json")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/trace.json"), "{err}");
    }
}
