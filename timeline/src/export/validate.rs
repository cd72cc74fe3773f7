//! A validator of the trace JSON that [`super::trace`] writes: the properties Perfetto
//! relies on to draw it right, checked mechanically so that tests (and `proofscope`
//! users with a suspicious trace) need not eyeball the UI.
//!
//! Checked: the top-level shape; every event has a phase, pid and tid and finite,
//! non-negative times; `X` slices on one thread are properly nested (no partial
//! overlaps); async `b`/`e` pairs match by (cat, id, name), begin before they end and
//! none is left open; flows have exactly one `s` and one `f`, the `f` not before the
//! `s`, each bound to a slice enclosing it on its thread; counter samples of one track
//! are in time order; every pid used has a `process_name` and every thread with
//! slices or flows a `thread_name`.
//!
//! Times are compared in integer nanoseconds (microseconds × 1000, rounded), so the
//! float representation cannot invent or hide an overlap.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde_json::Value;

/// What a valid trace contains.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    pub events: usize,
    pub slices: usize,
    pub async_pairs: usize,
    pub flows: usize,
    pub counter_samples: usize,
    pub processes: usize,
    pub threads: usize,
    /// Deepest nesting of slices seen on any thread (1 = no nesting).
    pub max_depth: usize,
}

/// One problem, with the index of the event in `traceEvents` where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceIssue {
    pub event: Option<usize>,
    pub message: String,
}

impl fmt::Display for TraceIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.event {
            Some(i) => write!(f, "event #{i}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Validate a trace held as text.
pub fn validate_trace_str(text: &str) -> Result<TraceStats, Vec<TraceIssue>> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => validate_trace(&v),
        Err(e) => Err(vec![TraceIssue { event: None, message: format!("not JSON: {e}") }]),
    }
}

struct Slice {
    idx: usize,
    start: i64,
    end: i64,
}

/// A field as integer nanoseconds from a microsecond number.
fn ns_of(ev: &Value, key: &str) -> Result<i64, String> {
    match ev.get(key).and_then(Value::as_f64) {
        Some(x) if x.is_finite() && x >= 0.0 => Ok((x * 1000.0).round() as i64),
        Some(x) => Err(format!("`{key}` is {x}, expected a finite non-negative number")),
        None => Err(format!("`{key}` missing or not a number")),
    }
}

fn id_of(ev: &Value) -> Option<String> {
    match ev.get("id")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Validate a parsed trace. `Ok` carries counts; `Err` lists every problem found.
pub fn validate_trace(trace: &Value) -> Result<TraceStats, Vec<TraceIssue>> {
    let mut issues = Vec::new();
    let events: &Vec<Value> = match trace {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("traceEvents") {
            Some(Value::Array(a)) => a,
            _ => return Err(vec![TraceIssue { event: None, message: "object without a `traceEvents` array".into() }]),
        },
        _ => return Err(vec![TraceIssue { event: None, message: "top level is neither an array nor an object".into() }]),
    };
    let mut bad = |event: Option<usize>, message: String| issues.push(TraceIssue { event, message });

    let mut stats = TraceStats { events: events.len(), ..Default::default() };
    let mut process_named: BTreeSet<u64> = BTreeSet::new();
    let mut thread_named: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut pids_used: BTreeMap<u64, usize> = BTreeMap::new();
    let mut threads_used: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    let mut slices: BTreeMap<(u64, u64), Vec<Slice>> = BTreeMap::new();
    // (cat, id, name) -> index and time of the open `b`
    let mut open_async: HashMap<(String, String, String), (usize, i64)> = HashMap::new();
    // (cat, id) -> (s, f) as (index, pid, tid, ts)
    type FlowEnd = (usize, u64, u64, i64);
    let mut flows: BTreeMap<(String, String), (Vec<FlowEnd>, Vec<FlowEnd>)> = BTreeMap::new();
    let mut counter_last: HashMap<(u64, String), i64> = HashMap::new();

    for (i, ev) in events.iter().enumerate() {
        let Some(ph) = ev.get("ph").and_then(Value::as_str) else {
            bad(Some(i), "missing `ph`".into());
            continue;
        };
        let (Some(pid), Some(tid)) = (ev.get("pid").and_then(Value::as_u64), ev.get("tid").and_then(Value::as_u64)) else {
            bad(Some(i), format!("`{ph}` event without integer `pid` and `tid`"));
            continue;
        };
        let name = ev.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let cat = ev.get("cat").and_then(Value::as_str).unwrap_or("").to_string();
        if ph == "M" {
            let arg_name = ev.pointer("/args/name").and_then(Value::as_str);
            match name.as_str() {
                "process_name" if arg_name.is_some() => {
                    process_named.insert(pid);
                }
                "thread_name" if arg_name.is_some() => {
                    thread_named.insert((pid, tid));
                }
                "process_name" | "thread_name" => bad(Some(i), format!("`{name}` without args.name")),
                _ => {}
            }
            continue;
        }
        pids_used.entry(pid).or_insert(i);
        let ts = match ns_of(ev, "ts") {
            Ok(t) => t,
            Err(m) => {
                bad(Some(i), m);
                continue;
            }
        };
        match ph {
            "X" => {
                let dur = match ns_of(ev, "dur") {
                    Ok(d) => d,
                    Err(m) => {
                        bad(Some(i), m);
                        continue;
                    }
                };
                if name.is_empty() {
                    bad(Some(i), "slice without a name".into());
                }
                threads_used.entry((pid, tid)).or_insert(i);
                slices.entry((pid, tid)).or_default().push(Slice { idx: i, start: ts, end: ts.saturating_add(dur) });
                stats.slices += 1;
            }
            "b" | "e" => {
                let Some(id) = id_of(ev) else {
                    bad(Some(i), format!("async `{ph}` without an id"));
                    continue;
                };
                let key = (cat, id, name);
                if ph == "b" {
                    if open_async.insert(key.clone(), (i, ts)).is_some() {
                        bad(Some(i), format!("async begin {:?} while one with the same cat/id/name is open", key));
                    }
                } else {
                    match open_async.remove(&key) {
                        None => bad(Some(i), format!("async end {:?} without a begin", key)),
                        Some((_, bts)) if bts > ts => bad(Some(i), format!("async end {:?} before its begin", key)),
                        Some(_) => stats.async_pairs += 1,
                    }
                }
            }
            "s" | "f" => {
                let Some(id) = id_of(ev) else {
                    bad(Some(i), format!("flow `{ph}` without an id"));
                    continue;
                };
                threads_used.entry((pid, tid)).or_insert(i);
                let e = flows.entry((cat, id)).or_default();
                let side = if ph == "s" { &mut e.0 } else { &mut e.1 };
                side.push((i, pid, tid, ts));
            }
            "t" => {}
            "C" => {
                match ev.get("args") {
                    Some(Value::Object(a)) if !a.is_empty() && a.values().all(|v| v.as_f64().is_some_and(f64::is_finite)) => {}
                    _ => bad(Some(i), format!("counter `{name}` needs args of finite numbers")),
                }
                let last = counter_last.entry((pid, name.clone())).or_insert(ts);
                if ts < *last {
                    bad(Some(i), format!("counter `{name}` on pid {pid} goes back in time"));
                }
                *last = ts;
                stats.counter_samples += 1;
            }
            other => bad(Some(i), format!("phase `{other}` is not one this writer emits")),
        }
    }

    for ((cat, id, name), (i, _)) in open_async {
        bad(Some(i), format!("async begin ({cat}, {id}, {name}) never ends"));
    }

    // Nesting: sorted by start, longer first, a slice must end within every slice still open.
    for ((pid, tid), list) in &mut slices {
        list.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end), s.idx));
        let mut stack: Vec<&Slice> = Vec::new();
        for s in list.iter() {
            while stack.last().is_some_and(|top| top.end <= s.start) {
                stack.pop();
            }
            if let Some(top) = stack.last() {
                if s.end > top.end {
                    bad(
                        Some(s.idx),
                        format!(
                            "slice [{}, {}] ns partially overlaps event #{} [{}, {}] ns on pid {pid} tid {tid}",
                            s.start, s.end, top.idx, top.start, top.end
                        ),
                    );
                    continue;
                }
            }
            stack.push(s);
            stats.max_depth = stats.max_depth.max(stack.len());
        }
    }

    let encloses = |pid: u64, tid: u64, ts: i64| {
        slices.get(&(pid, tid)).is_some_and(|l| l.iter().any(|s| s.start <= ts && ts <= s.end))
    };
    for ((cat, id), (starts, finishes)) in &flows {
        if starts.len() != 1 || finishes.len() != 1 {
            let at = starts.first().or(finishes.first()).map(|e| e.0);
            bad(at, format!("flow ({cat}, {id}) has {} start(s) and {} finish(es), expected one each", starts.len(), finishes.len()));
            continue;
        }
        let (s, f) = (starts[0], finishes[0]);
        if f.3 < s.3 {
            bad(Some(f.0), format!("flow ({cat}, {id}) finishes before it starts"));
        }
        for e in [s, f] {
            if !encloses(e.1, e.2, e.3) {
                bad(Some(e.0), format!("flow ({cat}, {id}) point is not inside any slice of pid {} tid {}", e.1, e.2));
            }
        }
        stats.flows += 1;
    }

    for (pid, i) in &pids_used {
        if !process_named.contains(pid) {
            bad(Some(*i), format!("pid {pid} has no process_name metadata"));
        }
    }
    for ((pid, tid), i) in &threads_used {
        if !thread_named.contains(&(*pid, *tid)) {
            bad(Some(*i), format!("pid {pid} tid {tid} has no thread_name metadata"));
        }
    }
    stats.processes = pids_used.len();
    stats.threads = threads_used.len();

    if issues.is_empty() {
        Ok(stats)
    } else {
        Err(issues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Run, SpanKind};
    use crate::export::fixtures::{sample_run, synthetic};
    use crate::export::trace::trace_json;
    use crate::lanes::LaidOut;
    use serde_json::json;

    fn valid(run: &Run) -> TraceStats {
        let v = trace_json(&LaidOut::new(run));
        match validate_trace(&v) {
            Ok(s) => s,
            Err(e) => panic!("{} issues, first: {:#?}", e.len(), &e[..e.len().min(5)]),
        }
    }

    #[test]
    fn sample_log_trace_is_valid() {
        let run = sample_run();
        let st = valid(&run);
        let gpu = run.spans_of(&SpanKind::Gpu).count();
        let synth = run.spans_of(&SpanKind::Synthesis).count();
        let queue = run.spans_of(&SpanKind::GpuQueue).count();
        // Queue waits, and a slice per proof.
        assert_eq!(st.async_pairs, queue + run.jobs().len());
        assert_eq!(st.slices, run.spans.len() - queue);
        // Every partition that was synthesised and proven gets a flow.
        assert_eq!(st.flows, gpu.min(synth));
        assert_eq!(st.processes, 3, "proofs + host + GPU 0");
        assert!(st.threads >= 3);
    }

    #[test]
    fn synthetic_runs_with_nested_kernels_are_valid() {
        let run = synthetic(4, 10, 2, true);
        let st = valid(&run);
        assert_eq!(st.max_depth, 3, "gpu > lock_hold > kernel");
        assert_eq!(st.flows, 40);
        assert_eq!(st.counter_samples, 81);
        assert_eq!(st.processes, 4, "proofs + host + 2 GPUs");
        // The overshooting tail_msm was clamped, and says so.
        let v = trace_json(&LaidOut::new(&run));
        let clamped = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("tail_msm J")) && e["args"].get("end_ns_before_clamp").is_some()).count();
        assert_eq!(clamped, 40);
        // Without kernels, only the gpu level.
        assert_eq!(valid(&synthetic(3, 10, 1, false)).max_depth, 1);
    }

    #[test]
    fn open_spans_and_empty_runs_are_valid() {
        let text = "TIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,5,SYNTH_END,a,partition=0\nTIMELINE,6,GPU_QUEUE,a,partition=0\n\
                    TIMELINE,7,GPU_PICKUP,a,worker=0,partition=0\nTIMELINE,8,GPU_START,a,worker=0,partition=0\n\
                    TIMELINE,9,SYNTH_START,a,partition=1\nTIMELINE,12,SYNTH_END,a,partition=1\nTIMELINE,13,GPU_QUEUE,a,partition=1\n";
        let run = crate::read::read_str(text, None);
        assert_eq!(run.diagnostics.open_spans, 2);
        let st = valid(&run);
        assert_eq!(st.async_pairs, 2 + 1, "two queue waits, one proof");
        let v = trace_json(&LaidOut::new(&run));
        assert!(v["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "gpu J0 p0 (open)" && e["args"]["open"] == true));
        // Slices are named for a person: kind, job number, partition.
        assert!(v["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "synthesis J0 p1" && e["args"]["job"] == "a"));
        let st = valid(&Run::default());
        assert_eq!((st.slices, st.processes), (0, 0));
        let st = valid(&crate::export::fixtures::extreme_run());
        assert_eq!((st.slices, st.async_pairs, st.counter_samples), (4, 1 + 2, 1), "non-finite counters are left out; a queue wait and two proofs");
    }

    fn base() -> Vec<Value> {
        vec![
            json!({"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}}),
            json!({"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}}),
            json!({"ph":"X","name":"a","pid":1,"tid":1,"ts":0.0,"dur":10.0}),
            json!({"ph":"X","name":"b","pid":1,"tid":1,"ts":2.0,"dur":3.0}),
        ]
    }

    fn first_issue(events: Vec<Value>) -> String {
        match validate_trace(&json!({ "traceEvents": events })) {
            Ok(s) => panic!("planted error not caught: {s:?}"),
            Err(e) => e[0].to_string(),
        }
    }

    #[test]
    fn validator_accepts_the_base_and_catches_planted_errors() {
        assert_eq!(validate_trace(&json!(base())).unwrap().max_depth, 2);

        let mut e = base();
        e.push(json!({"ph":"X","name":"c","pid":1,"tid":1,"ts":8.0,"dur":5.0}));
        assert!(first_issue(e).contains("partially overlaps"), "partial overlap");

        // Overlap by a single nanosecond is still caught.
        let mut e = base();
        e.push(json!({"ph":"X","name":"c","pid":1,"tid":1,"ts":4.0,"dur":6.001}));
        assert!(first_issue(e).contains("partially overlaps"));

        let mut e = base();
        e.push(json!({"ph":"b","name":"q","cat":"queue","id":"0x1","pid":1,"tid":0,"ts":1.0}));
        assert!(first_issue(e).contains("never ends"));

        let mut e = base();
        e.push(json!({"ph":"e","name":"q","cat":"queue","id":"0x1","pid":1,"tid":0,"ts":1.0}));
        assert!(first_issue(e).contains("without a begin"));

        let mut e = base();
        e.push(json!({"ph":"b","name":"q","cat":"queue","id":"0x1","pid":1,"tid":0,"ts":5.0}));
        e.push(json!({"ph":"e","name":"q","cat":"queue","id":"0x1","pid":1,"tid":0,"ts":4.0}));
        assert!(first_issue(e).contains("before its begin"));

        let mut e = base();
        e.push(json!({"ph":"s","name":"f","cat":"flow","id":1,"pid":1,"tid":1,"ts":1.0}));
        assert!(first_issue(e).contains("0 finish"));

        let mut e = base();
        e.push(json!({"ph":"s","name":"f","cat":"flow","id":1,"pid":1,"tid":1,"ts":5.0}));
        e.push(json!({"ph":"f","bp":"e","name":"f","cat":"flow","id":1,"pid":1,"tid":1,"ts":3.0}));
        assert!(first_issue(e).contains("finishes before it starts"));

        let mut e = base();
        e.push(json!({"ph":"s","name":"f","cat":"flow","id":1,"pid":1,"tid":1,"ts":5.0}));
        e.push(json!({"ph":"f","bp":"e","name":"f","cat":"flow","id":1,"pid":1,"tid":1,"ts":50.0}));
        assert!(first_issue(e).contains("not inside any slice"));

        let mut e = base();
        e.push(json!({"ph":"C","name":"util","pid":1,"tid":0,"ts":5.0,"args":{"value":1}}));
        e.push(json!({"ph":"C","name":"util","pid":1,"tid":0,"ts":4.0,"args":{"value":1}}));
        assert!(first_issue(e).contains("back in time"));

        let mut e = base();
        e.push(json!({"ph":"C","name":"util","pid":1,"tid":0,"ts":5.0,"args":{"value":"high"}}));
        assert!(first_issue(e).contains("finite numbers"));

        let mut e = base();
        e.push(json!({"ph":"X","name":"x","pid":2,"tid":1,"ts":0.0,"dur":1.0}));
        let all = validate_trace(&json!(e)).unwrap_err();
        assert!(all.iter().any(|i| i.message.contains("pid 2 has no process_name")));
        assert!(all.iter().any(|i| i.message.contains("pid 2 tid 1 has no thread_name")));

        let mut e = base();
        e.push(json!({"ph":"X","name":"x","pid":1,"tid":1,"ts":-1.0,"dur":1.0}));
        assert!(first_issue(e).contains("non-negative"));

        let mut e = base();
        e.push(json!({"name":"x","pid":1,"tid":1}));
        assert!(first_issue(e).contains("missing `ph`"));

        assert!(validate_trace_str("{\"traceEvents\": 3}").is_err());
        assert!(validate_trace_str("not json").is_err());
    }

    use proptest::prelude::*;

    /// Any span at all: a kind (including unknown ones), a start, an optional end (open
    /// spans), with or without worker, device, job and partition.
    fn any_span() -> impl Strategy<Value = crate::event::Span> {
        let kinds = prop::sample::select(vec![
            SpanKind::Synthesis,
            SpanKind::GpuQueue,
            SpanKind::GpuPickup,
            SpanKind::Gpu,
            SpanKind::PrepMsm,
            SpanKind::Ntt,
            SpanKind::MsmH,
            SpanKind::TailMsm,
            SpanKind::LockWait,
            SpanKind::LockHold,
            SpanKind::Finalize,
            SpanKind::Other("mystery".into()),
        ]);
        (
            kinds,
            0u64..50_000_000,
            prop::option::weighted(0.9, 0u64..20_000_000),
            prop::option::of(0u32..3),
            prop::option::of(0u32..2),
            prop::option::of(0u32..3),
            0u32..4,
            // A CUDA stream (`lane`), or a `query` naming an MSM kind (pieces follow their MSM).
            prop::option::weighted(0.2, 1u32..4),
            prop::option::weighted(0.2, prop::sample::select(vec!["msm_h", "ntt", "gpu"])),
        )
            .prop_map(|(kind, start, len, worker, device, job, part, lane, query)| {
                let mut s = crate::event::Span::new(kind, start, start);
                s.end_ns = len.map(|l| start + l);
                s.worker = worker;
                s.device = device;
                s.job = job.map(|j| format!("j{j}").into());
                s.partition = Some(part);
                if let Some(l) = lane {
                    s.args.insert(crate::event::arg::LANE.into(), l.into());
                }
                if let Some(q) = query {
                    s.args.insert(crate::event::arg::QUERY.into(), q.into());
                }
                s
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// Whatever the producer sends (overlaps on one worker, open spans, kernels outside
        /// any call), the writer's trace is valid and shows every non-queue span once.
        #[test]
        fn any_run_gives_a_valid_trace(spans in prop::collection::vec(any_span(), 0..80)) {
            let mut run = Run::default();
            run.spans = spans;
            run.normalize();
            let v = trace_json(&LaidOut::new(&run));
            let st = validate_trace(&v).map_err(|e| TestCaseError::fail(format!("{:?}", &e[..e.len().min(3)])))?;
            let queue = run.spans_of(&SpanKind::GpuQueue).count();
            prop_assert_eq!(st.slices, run.spans.len() - queue);
            // Queue waits, and a slice per proof.
            prop_assert_eq!(st.async_pairs, queue + run.jobs().len());
        }
    }

    #[test]
    fn validator_catches_a_writer_that_drops_lanes() {
        // Put every slice of a real trace on one thread: overlaps must be reported.
        let mut v = trace_json(&LaidOut::new(&synthetic(2, 10, 1, true)));
        for e in v["traceEvents"].as_array_mut().unwrap() {
            if e["ph"] == "X" {
                e["tid"] = json!(1);
                e["pid"] = json!(1);
            }
        }
        let issues = validate_trace(&v).unwrap_err();
        assert!(issues.iter().any(|i| i.message.contains("partially overlaps")));
    }
}
