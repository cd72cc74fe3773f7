//! Reader of other tools' GPU traces: a Chrome / Perfetto trace-event JSON document, as
//! PyTorch's profiler (Kineto), Perfetto, `nsys export` and our own `trace.json` write it.
//!
//! Why: the analyzer's questions — how busy was each device, where were the holes, how
//! long do the phases take — do not depend on the producer being ours. A profile of any
//! CUDA program names its kernels and copies on the device's timeline, which is all the
//! device-side analyses need; reading it as a [`Run`] makes `analyze` (utilisation, idle
//! gaps, phase statistics, the charts and the trace) work on it unchanged.
//!
//! What is read:
//! - the object form (`{"traceEvents": [...], ...}`, other keys ignored except Kineto's
//!   `deviceProperties`, which names the GPUs) and the bare array form (`[...]`, whose
//!   closing `]` the format allows to be missing: a trace whose writer was stopped);
//! - complete events (`"ph":"X"`, `ts` and `dur` in µs) and `B`/`E` pairs (per pid and
//!   tid; a `B` never closed is a span that never ended, an `E` without `B` is rejected);
//!   counters (`C`: one counter per numeric argument); metadata (`M`: `process_name`,
//!   `process_labels`, `thread_name`). Every other phase (instants, async and flow events,
//!   …) is counted as ignored;
//! - device work by category: `kernel` → span kind `kernel`, `gpu_memcpy` / `Memcpy` (and
//!   our own trace's `copy`) → `memcpy`, `gpu_memset` / `Memset` → `memset`. The event's
//!   name (the kernel's) is the span's `name` argument, its arguments are kept, its stream
//!   (`args.stream`, else the tid) is the `stream` argument;
//! - the device of a device event: its `args.device`, else the number in its process's
//!   name or label (`GPU 1`, Kineto's `process_labels`; our `GPU 1: NVIDIA H200`), else the
//!   pid itself when it is a small number (Kineto puts GPU events on pid = device index),
//!   else the next free index;
//! - everything else (`cpu_op`, `user_annotation`, `python_function`, `cuda_runtime`, …) is
//!   a host-side span of kind = its category (a category that is also one of our kinds, such
//!   as our trace's `synthesis` or `gpu`, gets a `trace_` prefix: it is not our measurement
//!   of that phase). They are kept (phase statistics, the waterfall) but are not device
//!   work, and are never read as synthesis, queueing or locks: gap causes are what device
//!   spans alone allow (the leading gap is `cold_start`, the others `other`).
//!
//! Times: `ts` is read as the format's microseconds (a double), rounded to nanoseconds, and
//! the run starts at 0 (the earliest event); an end is start + `dur`, so durations keep
//! their nanoseconds. Timestamps relative to an epoch (Kineto's `baseTimeNanoseconds`) are
//! exact to the nanosecond; absolute ones of ~10^15 µs carry a double's ~0.25 µs, as in
//! every viewer of the format.
//!
//! Errors: input that is not a Chrome trace (not JSON, an object without `traceEvents`,
//! cut off inside the object form) is an error naming the file, the line and column and
//! the event (`event #12`); an event that is not usable (a field of the wrong type, a
//! negative `dur`, …) is rejected with its number, its field and the line where it starts,
//! and the rest still loads. A trace without any device event is a problem of the input
//! (`--strict` fails) that says what it holds instead. The document is streamed (one event
//! in memory at a time besides the spans built).

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::ReadError;
use crate::event::{Args, Counter, Run, RunMeta, Span, SpanKind, MAX_TIME_NS};

/// How much of an input is looked at to recognise a Chrome trace.
pub const SNIFF_BYTES: usize = 64 << 10;

/// The UTF-8 byte-order mark some writers put first.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether the first bytes of an input are a Chrome trace: a JSON object with the key
/// `traceEvents` among its own keys (found in `prefix`), or an array whose first element is
/// an object with `ph` (or an empty array). Our JSON lines and the wrapped daemon lines are
/// one-line objects without `traceEvents`; a cuzk log line starting with `[` (a log prefix)
/// is not followed by an object.
pub fn sniff(prefix: &[u8]) -> bool {
    let b = prefix.strip_prefix(BOM).unwrap_or(prefix);
    let i = skip_ws(b, 0);
    match b.get(i) {
        Some(b'{') => object_has_key(b, i, b"traceEvents") == Some(true),
        Some(b'[') => {
            let j = skip_ws(b, i + 1);
            match b.get(j) {
                Some(b']') => true,
                Some(b'{') => object_has_key(b, j, b"ph") == Some(true),
                _ => false,
            }
        }
        _ => false,
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Whether the object opening at `b[start]` has `key` among its own keys: `Some` once
/// decided (found, or the object closed without it), `None` when `b` ends first.
fn object_has_key(b: &[u8], start: usize, key: &[u8]) -> Option<bool> {
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let from = i + 1;
                let mut j = from;
                loop {
                    match b.get(j) {
                        None => return None,
                        Some(b'\\') => j += 2,
                        Some(b'"') => break,
                        Some(_) => j += 1,
                    }
                }
                if depth == 1 && expect_key && &b[from..j] == key {
                    return Some(true);
                }
                expect_key = false;
                i = j + 1;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                expect_key = depth == 1 && b[i] == b'{';
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(false);
                }
            }
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

/// A reader that counts the lines it has handed out (serde_json reads byte by byte, so at
/// any moment the count is the line of the last byte read).
struct Counting<R> {
    inner: R,
    newlines: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let nl = buf[..n].iter().filter(|&&c| c == b'\n').count() as u64;
        if nl > 0 {
            self.newlines.set(self.newlines.get() + nl);
        }
        Ok(n)
    }
}

/// Which of the two forms the document has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Unknown,
    Object,
    Array,
}

/// What a slice is on our side.
#[derive(Clone, Debug, PartialEq)]
enum Class {
    Device(SpanKind),
    Host,
}

fn classify(cat: &str) -> Class {
    match cat.to_ascii_lowercase().as_str() {
        "kernel" => Class::Device(SpanKind::Kernel),
        "gpu_memcpy" | "memcpy" | "copy" => Class::Device(SpanKind::Memcpy),
        "gpu_memset" | "memset" => Class::Device(SpanKind::Memset),
        _ => Class::Host,
    }
}

/// The kind of a host-side slice: its category, prefixed with `trace_` when that is one of
/// our kinds (our own trace's `synthesis`, `gpu`: not our measurement of that phase); `host`
/// when it has none.
fn host_kind(cat: &str) -> SpanKind {
    if cat.is_empty() {
        return SpanKind::Other("host".into());
    }
    if SpanKind::known(cat).is_some() {
        return SpanKind::Other(format!("trace_{cat}"));
    }
    SpanKind::Other(cat.to_string())
}

/// A slice as read, before devices are resolved and times normalised.
struct Raw {
    index: u64,
    line: u64,
    class: Class,
    cat: String,
    name: String,
    pid: String,
    tid: String,
    start: i64,
    end: Option<i64>,
    args: Map<String, Value>,
}

/// A counter sample as read.
struct RawCounter {
    pid: String,
    name: String,
    t: i64,
    value: f64,
}

/// Everything the streaming parse collects.
struct State {
    newlines: Rc<Cell<u64>>,
    form: Form,
    /// Events seen (1-based number of the current one).
    events: u64,
    /// Inside an event (a cut there is an event cut off).
    in_event: bool,
    rejected: u64,
    ignored: u64,
    metadata: u64,
    warnings: Vec<(u64, String)>,
    slices: Vec<Raw>,
    counters: Vec<RawCounter>,
    /// Open `B` slices per (pid, tid), innermost last: indexes into `slices`.
    open: HashMap<(String, String), Vec<usize>>,
    process_names: HashMap<String, String>,
    process_labels: HashMap<String, String>,
    thread_names: HashMap<(String, String), String>,
    /// Kineto's `deviceProperties`: (device id, name, total memory bytes).
    device_props: Vec<(u32, String, Option<f64>)>,
    base_time_ns: Option<Value>,
    /// Slices per category (for the message when none is on a device).
    by_cat: BTreeMap<String, u64>,
    /// Ignored events per phase.
    by_phase: BTreeMap<String, u64>,
}

impl State {
    fn line(&self) -> u64 {
        self.newlines.get() + 1
    }

    fn reject(&mut self, line: u64, index: u64, why: impl fmt::Display) {
        self.rejected += 1;
        if self.warnings.len() < crate::event::MAX_KEPT_WARNINGS {
            self.warnings.push((line, format!("event #{index}: {why}")));
        }
    }

    /// One trace event (any JSON value), number `index`, starting on `line`.
    fn event(&mut self, v: Value, index: u64, line: u64) {
        if let Err(why) = self.event_inner(v, index, line) {
            self.reject(line, index, why);
        }
    }

    fn event_inner(&mut self, v: Value, index: u64, line: u64) -> Result<(), String> {
        let Value::Object(mut o) = v else {
            return Err(format!("not a JSON object but {}", kind_of(&v)));
        };
        let ph = match o.get("ph") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(format!("`ph` is not a string but {}", kind_of(other))),
            None => return Err("`ph` is missing".into()),
        };
        let text = |o: &Map<String, Value>, k: &str| -> Result<String, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!("`{k}` is not a string but {}", kind_of(other))),
            }
        };
        let id = |o: &Map<String, Value>, k: &str| -> Result<String, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Number(n)) => Ok(n.to_string()),
                Some(other) => Err(format!("`{k}` is neither a number nor a string but {}", kind_of(other))),
            }
        };
        let args = |o: &mut Map<String, Value>| -> Result<Map<String, Value>, String> {
            match o.remove("args") {
                None | Some(Value::Null) => Ok(Map::new()),
                Some(Value::Object(m)) => Ok(m),
                Some(other) => Err(format!("`args` is not an object but {}", kind_of(&other))),
            }
        };
        match ph.as_str() {
            "X" | "B" => {
                let start = ts_ns(&o, "ts")?;
                let end = if ph == "X" {
                    let dur = number(&o, "dur")?;
                    if dur < 0.0 {
                        return Err(format!("`dur` is negative ({dur})"));
                    }
                    let d = (dur * 1000.0).round();
                    if d > MAX_TIME_NS as f64 {
                        return Err(format!("`dur` {dur} µs is beyond 10 years, not a duration of a run"));
                    }
                    Some(start.saturating_add(d as i64))
                } else {
                    None
                };
                let (cat, name, pid, tid) = (text(&o, "cat")?, text(&o, "name")?, id(&o, "pid")?, id(&o, "tid")?);
                let args = args(&mut o)?;
                let class = classify(&cat);
                *self.by_cat.entry(if cat.is_empty() { "(no category)".into() } else { cat.clone() }).or_default() += 1;
                if ph == "B" {
                    self.open.entry((pid.clone(), tid.clone())).or_default().push(self.slices.len());
                }
                self.slices.push(Raw { index, line, class, cat, name, pid, tid, start, end, args });
            }
            "E" => {
                let t = ts_ns(&o, "ts")?;
                let (pid, tid) = (id(&o, "pid")?, id(&o, "tid")?);
                let extra = args(&mut o)?;
                let Some(i) = self.open.get_mut(&(pid.clone(), tid.clone())).and_then(|v| v.pop()) else {
                    return Err(format!("`E` without an open `B` on pid {pid} tid {tid}"));
                };
                let b = &mut self.slices[i];
                if t < b.start {
                    // Put it back: it may still be closed by a later `E`.
                    self.open.entry((pid, tid)).or_default().push(i);
                    return Err(format!("`E` at {} µs is before its `B` (event #{}) at {} µs", t as f64 / 1e3, b.index, b.start as f64 / 1e3));
                }
                b.end = Some(t);
                for (k, v) in extra {
                    b.args.entry(k).or_insert(v);
                }
            }
            "M" => {
                let name = text(&o, "name")?;
                let (pid, tid) = (id(&o, "pid")?, id(&o, "tid")?);
                let args = args(&mut o)?;
                let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
                match name.as_str() {
                    "process_name" => {
                        if let Some(n) = s("name") {
                            self.process_names.insert(pid, n);
                        }
                    }
                    "process_labels" => {
                        if let Some(n) = s("labels") {
                            self.process_labels.insert(pid, n);
                        }
                    }
                    "thread_name" => {
                        if let Some(n) = s("name") {
                            self.thread_names.insert((pid, tid), n);
                        }
                    }
                    _ => {}
                }
                self.metadata += 1;
            }
            "C" => {
                let t = ts_ns(&o, "ts")?;
                let (name, pid) = (text(&o, "name")?, id(&o, "pid")?);
                let args = args(&mut o)?;
                let values: Vec<(String, f64)> = args.iter().filter_map(|(k, v)| v.as_f64().filter(|x| x.is_finite()).map(|x| (k.clone(), x))).collect();
                if values.is_empty() {
                    return Err(format!("counter `{name}` has no numeric argument"));
                }
                let single = values.len() == 1;
                for (k, value) in values {
                    let name = if name.is_empty() {
                        k
                    } else if single && k == "value" {
                        name.clone()
                    } else {
                        format!("{name}.{k}")
                    };
                    self.counters.push(RawCounter { pid: pid.clone(), name, t, value });
                }
            }
            other => {
                self.ignored += 1;
                *self.by_phase.entry(other.to_string()).or_default() += 1;
            }
        }
        Ok(())
    }

    /// Kineto's `deviceProperties`: `[{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": …}]`.
    fn device_properties(&mut self, v: Value) {
        let Value::Array(a) = v else { return };
        for d in a {
            let (Some(id), Some(name)) = (d.get("id").and_then(Value::as_u64), d.get("name").and_then(Value::as_str)) else { continue };
            if id < 1024 {
                self.device_props.push((id as u32, name.to_string(), d.get("totalGlobalMem").and_then(Value::as_f64)));
            }
        }
    }
}

/// A JSON value's type, for messages.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn number(o: &Map<String, Value>, k: &str) -> Result<f64, String> {
    match o.get(k) {
        None => Err(format!("`{k}` is missing")),
        Some(Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()).ok_or_else(|| format!("`{k}` is not a finite number")),
        Some(other) => Err(format!("`{k}` is not a number but {}", kind_of(other))),
    }
}

/// A timestamp (µs) in ns, within ±`MAX_TIME_NS` × 1000 (any epoch; normalised later).
fn ts_ns(o: &Map<String, Value>, k: &str) -> Result<i64, String> {
    let us = number(o, k)?;
    let ns = (us * 1000.0).round();
    if ns.abs() > 4.0e18 {
        return Err(format!("`{k}` {us} µs is out of range"));
    }
    Ok(ns as i64)
}

struct Top<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace: a JSON object with `traceEvents`, or an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.form = Form::Array;
        Events(self.0).visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.form = Form::Object;
        let mut seen = false;
        let mut keys: Vec<String> = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            match k.as_str() {
                "traceEvents" => {
                    map.next_value_seed(Events(&mut *self.0))?;
                    seen = true;
                }
                "deviceProperties" => {
                    let v: Value = map.next_value()?;
                    self.0.device_properties(v);
                }
                "baseTimeNanoseconds" => self.0.base_time_ns = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if keys.len() < 8 {
                keys.push(k);
            }
        }
        if !seen {
            let hint = if keys.iter().any(|k| k == "type") { " (one record per line is proofscope's JSON lines: --format jsonl)" } else { "" };
            return Err(de::Error::custom(format!("not a Chrome trace: the top-level JSON object has no `traceEvents` (its keys: {}){hint}", keys.join(", "))));
        }
        Ok(())
    }
}

struct Events<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Event(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

struct Event<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Event<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // The element's first byte has been read: the line count is the line it starts on.
        let st = self.0;
        st.events += 1;
        st.in_event = true;
        let line = st.line();
        let v = Value::deserialize(d)?;
        st.in_event = false;
        let n = st.events;
        st.event(v, n, line);
        Ok(())
    }
}

/// Read a Chrome trace from `r`; `name` is used in error messages.
pub(crate) fn read<R: BufRead>(mut r: R, name: &str) -> Result<Run, ReadError> {
    let io_err = |line: u64, source: io::Error| ReadError::Io { path: name.to_string(), line, source };
    if r.fill_buf().map_err(|e| io_err(1, e))?.starts_with(BOM) {
        r.consume(BOM.len());
    }
    let newlines = Rc::new(Cell::new(0));
    let mut st = State {
        newlines: newlines.clone(),
        form: Form::Unknown,
        events: 0,
        in_event: false,
        rejected: 0,
        ignored: 0,
        metadata: 0,
        warnings: Vec::new(),
        slices: Vec::new(),
        counters: Vec::new(),
        open: HashMap::new(),
        process_names: HashMap::new(),
        process_labels: HashMap::new(),
        thread_names: HashMap::new(),
        device_props: Vec::new(),
        base_time_ns: None,
        by_cat: BTreeMap::new(),
        by_phase: BTreeMap::new(),
    };
    let mut de = serde_json::Deserializer::from_reader(Counting { inner: r, newlines });
    let parsed = Top(&mut st).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = parsed {
        let in_event = if st.in_event { format!(" (in event #{})", st.events) } else { String::new() };
        if e.is_io() {
            return Err(io_err(st.line(), e.into()));
        }
        if e.is_eof() && st.form == Form::Array {
            // The array form may end without its `]` (a writer that was stopped); an event
            // cut in the middle is rejected, the ones before it are kept.
            if st.in_event {
                let (line, n) = (st.line(), st.events);
                st.reject(line, n, "cut off by the end of the input (a trace whose writer was stopped?)");
            }
        } else if e.is_eof() {
            return Err(ReadError::Format { path: name.to_string(), message: format!("the Chrome trace ends in the middle, {e}{in_event}: a truncated file?") });
        } else if e.is_syntax() {
            return Err(ReadError::Format { path: name.to_string(), message: format!("not valid JSON (read as a Chrome trace): {e}{in_event}") });
        } else {
            return Err(ReadError::Format { path: name.to_string(), message: format!("{e}{in_event}") });
        }
    }
    Ok(assemble(st))
}

/// The number after `GPU` (or `device`) in a process name or label: `GPU 1`, `GPU 1: NVIDIA
/// H200`, `CPU device 0`.
fn device_number(label: &str) -> Option<u32> {
    let l = label.to_ascii_lowercase();
    for word in ["gpu", "device", "cuda"] {
        let mut from = 0;
        while let Some(p) = l[from..].find(word) {
            let rest = l[from + p + word.len()..].trim_start_matches([' ', ':', '#']);
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse::<u32>() {
                if n < 1024 {
                    return Some(n);
                }
            }
            from += p + word.len();
        }
    }
    None
}

/// The number in a stream's thread name or tid: `7`, `stream 7`, `stream 7 `.
fn stream_number(s: &str) -> Option<u64> {
    let t = s.trim();
    t.parse().ok().or_else(|| t.to_ascii_lowercase().strip_prefix("stream").and_then(|r| r.trim().parse().ok()))
}

/// Build the run: devices resolved, times normalised, what the input holds judged.
fn assemble(mut st: State) -> Run {
    let mut run = Run::new(RunMeta::new("chrome-trace"));
    let d = &mut run.diagnostics;
    d.format = "chrome-trace".into();
    // Counted in events: those read (slices, metadata, counters, rejected ones) and those
    // ignored (instants, flows, …) make up the total, as lines do for the line formats.
    d.lines_total = st.events;
    d.event_lines = st.events - st.ignored;
    d.lines_ignored = st.ignored;

    // Devices of the pids that hold device work.
    let device_arg = |r: &Raw| r.args.get("device").and_then(Value::as_u64).filter(|&d| d < 1024).map(|d| d as u32);
    let mut pid_dev: HashMap<String, u32> = HashMap::new();
    let mut unresolved: Vec<String> = Vec::new();
    for r in st.slices.iter().filter(|r| matches!(r.class, Class::Device(_))) {
        if pid_dev.contains_key(&r.pid) || unresolved.contains(&r.pid) {
            continue;
        }
        let named = st.process_labels.get(&r.pid).and_then(|l| device_number(l)).or_else(|| st.process_names.get(&r.pid).and_then(|n| device_number(n)));
        let small = r.pid.parse::<u32>().ok().filter(|&p| p < 1024);
        match device_arg(r).or(named).or(small) {
            Some(dv) => {
                pid_dev.insert(r.pid.clone(), dv);
            }
            None => unresolved.push(r.pid.clone()),
        }
    }
    let mut used: HashSet<u32> = pid_dev.values().copied().collect();
    for pid in unresolved {
        let next = (0..).find(|i| !used.contains(i)).unwrap_or(0);
        used.insert(next);
        pid_dev.insert(pid, next);
    }

    // The run starts at the earliest event.
    let t0 = st.slices.iter().map(|r| r.start).chain(st.counters.iter().map(|c| c.t)).min().unwrap_or(0);
    let rel = |t: i64| -> Option<u64> { u64::try_from(t.checked_sub(t0)?).ok().filter(|&x| x <= MAX_TIME_NS) };

    let mut device_events = 0u64;
    let slices = std::mem::take(&mut st.slices);
    run.spans.reserve(slices.len());
    for r in slices {
        let (Some(start), end) = (rel(r.start), r.end.map(rel)) else {
            st.reject(r.line, r.index, format!("`ts` is more than 10 years after the trace's first event ({MAX_TIME_NS} ns): not a time of a run"));
            continue;
        };
        if end == Some(None) {
            st.reject(r.line, r.index, "its end is more than 10 years after the trace's first event: not a time of a run");
            continue;
        }
        let end = end.flatten();
        let mut args: Args = r.args.into_iter().collect();
        args.insert("name".into(), Value::String(r.name.clone()));
        let (kind, device) = match &r.class {
            Class::Device(k) => {
                device_events += 1;
                let stream = args
                    .get("stream")
                    .and_then(Value::as_u64)
                    .or_else(|| stream_number(&r.tid))
                    .or_else(|| st.thread_names.get(&(r.pid.clone(), r.tid.clone())).and_then(|n| stream_number(n)));
                if let Some(s) = stream {
                    args.entry("stream".into()).or_insert(Value::from(s));
                }
                let dv = args.get("device").and_then(Value::as_u64).filter(|&d| d < 1024).map(|d| d as u32).or_else(|| pid_dev.get(&r.pid).copied());
                (k.clone(), dv)
            }
            Class::Host => {
                let thread = st.thread_names.get(&(r.pid.clone(), r.tid.clone())).cloned().unwrap_or_else(|| r.tid.clone());
                if !thread.is_empty() {
                    args.entry("thread".into()).or_insert(Value::String(thread));
                }
                // A host slice on a device's process (Kineto's `gpu_user_annotation`) is drawn
                // with that device; it is still not device work.
                (host_kind(&r.cat), pid_dev.get(&r.pid).copied())
            }
        };
        if end.is_none() {
            run.diagnostics.open_spans += 1;
            if st.warnings.len() < crate::event::MAX_KEPT_WARNINGS {
                st.warnings.push((r.line, format!("event #{}: `B` of `{}` (pid {} tid {}) has no matching `E`: kept as a span that never ended", r.index, r.name, r.pid, r.tid)));
            }
        }
        run.spans.push(Span { kind, start_ns: start, end_ns: end, job: None, partition: None, worker: None, device, args });
    }
    for c in std::mem::take(&mut st.counters) {
        if let Some(t) = rel(c.t) {
            run.counters.push(Counter { name: c.name, t_ns: t, value: c.value, device: pid_dev.get(&c.pid).copied() });
        }
    }

    // The machine, as far as the trace names it.
    let mut gpus: BTreeMap<u32, String> = BTreeMap::new();
    for (id, name, mem) in &st.device_props {
        gpus.insert(*id, name.clone());
        if let Some(m) = mem {
            let i = *id as usize;
            if run.meta.machine.gpu_mem_gib.len() <= i {
                run.meta.machine.gpu_mem_gib.resize(i + 1, 0.0);
            }
            run.meta.machine.gpu_mem_gib[i] = m / (1u64 << 30) as f64;
        }
    }
    for (pid, dv) in &pid_dev {
        if let Some(n) = st.process_names.get(pid).and_then(|n| n.split_once(": ")).map(|(_, g)| g.trim().to_string()).filter(|g| !g.is_empty()) {
            gpus.entry(*dv).or_insert(n);
        }
    }
    if let Some(&max) = gpus.keys().last() {
        run.meta.gpus = (0..=max).map(|i| gpus.get(&i).cloned().unwrap_or_default()).collect();
    }
    run.meta.extra.insert("trace_start_us".into(), Value::from(t0 as f64 / 1e3));
    if let Some(b) = st.base_time_ns.take() {
        run.meta.extra.insert("base_time_ns".into(), b);
    }

    let d = &mut run.diagnostics;
    d.lines_rejected = st.rejected;
    d.warnings = st.warnings.drain(..).map(|(line, message)| crate::event::LineWarning { line, message }).collect();
    d.warnings.sort_by_key(|w| w.line);
    if st.events == 0 {
        d.problem("a Chrome trace with no events at all (`traceEvents` is empty): nothing to analyse");
    } else if device_events == 0 {
        let mut found: Vec<(u64, String)> = st.by_cat.iter().map(|(c, n)| (*n, c.clone())).collect();
        found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut parts: Vec<String> = found.iter().take(6).map(|(n, c)| format!("{n} {c}")).collect();
        if found.len() > 6 {
            parts.push(format!("{} more categories", found.len() - 6));
        }
        if st.metadata > 0 {
            parts.push(format!("{} metadata", st.metadata));
        }
        if st.ignored > 0 {
            let phases: Vec<String> = st.by_phase.keys().map(|p| format!("`{p}`")).collect();
            parts.push(format!("{} other events ({})", st.ignored, phases.join(", ")));
        }
        if st.rejected > 0 {
            parts.push(format!("{} rejected", st.rejected));
        }
        let slices: u64 = found.iter().map(|f| f.0).sum();
        let what = if slices > 0 { "slices" } else { "events" };
        d.problem(format!(
            "a Chrome trace with {} event{}, none on a device (kernel, memcpy, memset): {what} found: {}. Nothing to analyse as device work (a CPU-only profile? PyTorch: profile with ProfilerActivity.CUDA)",
            st.events,
            if st.events == 1 { "" } else { "s" },
            parts.join(", ")
        ));
    }
    run.normalize();
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_tells_chrome_traces_from_json_lines_and_logs() {
        assert!(sniff(b"{\"traceEvents\": []}"));
        assert!(sniff(b"\n  {\n  \"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"x\"}],\n \"traceEvents\": ["));
        assert!(sniff(b"\xEF\xBB\xBF[{\"ph\":\"X\",\"ts\":1}"));
        assert!(sniff(b"[ ]"));
        assert!(sniff(b"[\n{\"name\": \"a\", \"ph\": \"B\""));
        assert!(!sniff(b"{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0}\n{\"type\":\"span\"}"));
        assert!(!sniff(b"{\"log\":\"{\\\"traceEvents\\\": []}\"}\n"));
        assert!(!sniff(b"{\"a\": {\"traceEvents\": []}}"), "not a top-level key");
        assert!(!sniff(b"[2024-01-01 10:00:00] INFO TIMELINE,1,GPU_START,j,"));
        assert!(!sniff(b"TIMELINE,1,GPU_START"));
        assert!(!sniff(b""));
        // Undecided within the prefix: not taken for one.
        assert!(!sniff(b"{\"otherData\": {\"a\": 1, "));
    }

    #[test]
    fn device_and_stream_numbers_come_from_names() {
        assert_eq!(device_number("GPU 1"), Some(1));
        assert_eq!(device_number("GPU 0: NVIDIA H200"), Some(0));
        assert_eq!(device_number("CPU device 3"), Some(3));
        assert_eq!(device_number("python3"), None);
        assert_eq!(stream_number("stream 7 "), Some(7));
        assert_eq!(stream_number("7"), Some(7));
        assert_eq!(stream_number("main thread"), None);
    }
}
