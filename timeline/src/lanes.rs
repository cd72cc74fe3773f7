//! Serial lanes: which row (chart) or thread (trace) each span is drawn on.
//!
//! Both the waterfall chart and the Perfetto trace need the same thing: rows on which
//! spans never partially overlap, so that a row reads as one serial worker. Spans that
//! carry a worker id go to that worker's row; those that do not (cuzk logs name no
//! synthesis worker) are packed greedily onto the fewest rows. Within a row, spans may
//! nest (a kernel inside its `gpu` call); a child that pokes out of its parent by no more
//! than [`CLAMP_TOLERANCE_NS`] (timestamp rounding) is clamped into it, and anything that
//! would still overlap partially goes to an overflow row of the same worker.
//!
//! A GPU worker that runs a partition's MSMs side by side on lanes (own CUDA streams; the
//! spans carry the `lane` argument) gets one lane per stream (`gpu0 w0 lane 2`), so that
//! concurrent MSMs are drawn side by side instead of as false nesting; a `batch_add` or
//! `tail_msm` that names its MSM (`query`) follows that MSM onto its lane.
//!
//! The device work of another tool's trace (`read::chrome`: kernels, copies, memsets with
//! no worker) is packed per CUDA stream (its `stream` argument): `gpu0 stream 7`.
//!
//! Queue waits (`gpu_queue`) are not work on any worker and are left out; the trace
//! shows them as async slices and the chart omits them.
//!
//! The outputs that draw rows — the waterfall (SVG and PNG), `report.html` and `trace.json`
//! — take a [`LaidOut`]: the run with its assignment, computed once on first use and shared,
//! so that one `analyze` assigns lanes once and every output draws the same rows.

use std::sync::OnceLock;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::event::{arg, Run, Span, SpanKind};

/// How far a nested span may overshoot its parent's end and still be clamped into it.
pub const CLAMP_TOLERANCE_NS: u64 = 1_000_000;

/// The resource a lane belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LaneGroup {
    /// Host-side partition synthesis (and any other span with neither device nor worker
    /// that is not a queue wait).
    Synthesis,
    /// Everything a GPU worker does on this device (the `gpu` call, its kernels, prep,
    /// locks, finalisation).
    Device(u32),
}

/// One span placed on a lane.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    /// Index into `run.spans`.
    pub index: usize,
    pub start_ns: u64,
    /// End after clamping into the parent; open spans end at the run's end.
    pub end_ns: u64,
    /// 0 for top-level spans, 1 for a span nested in another, and so on.
    pub depth: u32,
    /// The span never ended (a killed run); drawn to the end of the run.
    pub open: bool,
    /// The end was pulled in to fit the parent.
    pub clamped: bool,
}

/// A serial row: a worker (or a packed lane when the producer named no worker).
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    pub group: LaneGroup,
    /// The worker id from the spans, `None` for packed lanes.
    pub worker: Option<u32>,
    /// The stream (the spans' `lane` argument) this lane draws; `None` for the worker's own.
    pub stream: Option<u32>,
    /// 0 for the worker's main lane; 1, 2, … for overflow (or packed) lanes.
    pub sub: u32,
    /// Spans ordered by (start, longer first): parents before their children.
    pub spans: Vec<Placed>,
}

impl Lane {
    /// A short human name, e.g. `synth 3`, `gpu0 w1`, `gpu0 w1 #2`, `gpu0 w1 lane 2`.
    pub fn name(&self) -> String {
        // A stream of another tool's trace (`read::chrome`): no worker, packed per stream.
        if let (LaneGroup::Device(d), None, Some(st)) = (self.group, self.worker, self.stream) {
            return if self.sub > 0 { format!("gpu{d} stream {st} #{}", self.sub + 1) } else { format!("gpu{d} stream {st}") };
        }
        let mut base = match (self.group, self.worker) {
            (LaneGroup::Synthesis, Some(w)) => format!("synth w{w}"),
            (LaneGroup::Synthesis, None) => format!("synth {}", self.sub),
            (LaneGroup::Device(d), Some(w)) => format!("gpu{d} w{w}"),
            (LaneGroup::Device(d), None) => format!("gpu{d} lane {}", self.sub),
        };
        if let Some(l) = self.stream {
            base.push_str(&format!(" lane {l}"));
        }
        if self.worker.is_some() && self.sub > 0 {
            format!("{base} #{}", self.sub + 1)
        } else {
            base
        }
    }

    /// Whether this is a worker's own first lane (not a stream's, not an overflow lane).
    pub fn is_main(&self) -> bool {
        self.worker.is_some() && self.stream.is_none() && self.sub == 0
    }

    /// What the lane holds: its top-level kinds, most time first (two at most, then `…`):
    /// `msm_b_g2`, `finalize, tail_msm`.
    pub fn holds(&self, run: &Run) -> String {
        let mut by_kind: Vec<(&str, u64)> = Vec::new();
        for p in self.spans.iter().filter(|p| p.depth == 0) {
            let k = run.spans[p.index].kind.as_str();
            let d = p.end_ns - p.start_ns;
            match by_kind.iter_mut().find(|e| e.0 == k) {
                Some(e) => e.1 += d,
                None => by_kind.push((k, d)),
            }
        }
        by_kind.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut s: Vec<&str> = by_kind.iter().take(2).map(|e| e.0).collect();
        if by_kind.len() > 2 {
            s.push("…");
        }
        s.join(", ")
    }

    /// The name, and for a lane that is not a worker's own what it holds: `gpu0 w0 lane 2:
    /// msm_a`, `gpu1 w0 #2: finalize` (rows of the waterfall, threads of the trace).
    pub fn label(&self, run: &Run) -> String {
        let holds = if self.worker.is_some() && !self.is_main() { self.holds(run) } else { String::new() };
        if holds.is_empty() {
            self.name()
        } else {
            format!("{}: {holds}", self.name())
        }
    }
}

/// The stream (`lane` argument) of each span that ran on one, by span index: its own, or for
/// a span naming its MSM in `query` (`batch_add`, `tail_msm`), the lane of that MSM of the
/// same partition on the same worker whose time holds the span's start. Only spans with a
/// worker take a stream, and the device work of an imported trace (its `stream` argument).
fn streams(run: &Run) -> HashMap<usize, u32> {
    let lane_of = |s: &Span| s.args.get(arg::LANE).and_then(serde_json::Value::as_u64).and_then(|l| u32::try_from(l).ok());
    let mut out = HashMap::new();
    type Key<'a> = (Option<&'a str>, Option<u32>, u32, Option<u32>, &'a str);
    let mut msms: HashMap<Key<'_>, Vec<(u64, u64, u32)>> = HashMap::new();
    for (i, s) in run.spans.iter().enumerate() {
        // The device work of another tool's trace (`read::chrome`) names its CUDA stream.
        if s.worker.is_none() && matches!(s.kind, SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset) {
            if let Some(st) = s.args.get("stream").and_then(serde_json::Value::as_u64).and_then(|l| u32::try_from(l).ok()) {
                out.insert(i, st);
            }
            continue;
        }
        if let (Some(l), Some(_)) = (lane_of(s), s.worker) {
            out.insert(i, l);
            let end = s.end_ns.unwrap_or(u64::MAX);
            msms.entry((s.job.as_deref(), s.partition, s.device_or_0(), s.worker, s.kind.as_str())).or_default().push((s.start_ns, end, l));
        }
    }
    if msms.is_empty() {
        return out;
    }
    for (i, s) in run.spans.iter().enumerate() {
        if out.contains_key(&i) || s.worker.is_none() {
            continue;
        }
        let Some(q) = s.args.get(arg::QUERY).and_then(serde_json::Value::as_str) else { continue };
        let key = (s.job.as_deref(), s.partition, s.device_or_0(), s.worker, q);
        if let Some(&(_, _, l)) = msms.get(&key).and_then(|v| v.iter().find(|m| m.0 <= s.start_ns && s.start_ns < m.1)) {
            out.insert(i, l);
        }
    }
    out
}

/// Which group a span belongs to; `None` for spans that are not worker time (queue waits).
pub fn group_of(span: &Span) -> Option<LaneGroup> {
    match &span.kind {
        SpanKind::GpuQueue => None,
        k if k.is_synthesis_side() => Some(LaneGroup::Synthesis),
        // A synthesis worker waiting for the RAM budget, before its synthesis.
        SpanKind::RamWait => Some(LaneGroup::Synthesis),
        SpanKind::Other(_) if span.device.is_none() && span.worker.is_none() => Some(LaneGroup::Synthesis),
        _ => Some(LaneGroup::Device(span.device_or_0())),
    }
}

/// Order of kinds at equal (start, end): the enclosing call first.
fn nesting_rank(kind: &SpanKind) -> u8 {
    match kind {
        SpanKind::Gpu => 0,
        SpanKind::LockHold => 1,
        SpanKind::LockWait => 2,
        k if k.is_device_work() => 4,
        _ => 3,
    }
}

/// A lane under construction: its placed spans and the stack of open ends.
struct Builder {
    spans: Vec<Placed>,
    /// (start, end) of the spans enclosing the current time, innermost last.
    stack: Vec<(u64, u64)>,
}

impl Builder {
    fn new() -> Self {
        Builder { spans: Vec::new(), stack: Vec::new() }
    }

    /// Try to place [start, end]: top level if nothing is open at `start`, nested if it
    /// fits (or nearly fits) in the innermost open span. Returns false on a partial overlap.
    fn try_place(&mut self, index: usize, start: u64, end: u64, open: bool) -> bool {
        // Spans that ended by the time this one starts are closed (touching spans follow
        // each other; they do not nest).
        while let Some(&(_, e)) = self.stack.last() {
            if e <= start {
                self.stack.pop();
            } else {
                break;
            }
        }
        let (end, clamped) = match self.stack.last() {
            None => (end, false),
            Some(&(_, pe)) if end <= pe => (end, false),
            Some(&(_, pe)) if !open && end - pe <= CLAMP_TOLERANCE_NS => (pe, true),
            Some(_) => return false,
        };
        self.spans.push(Placed { index, start_ns: start, end_ns: end, depth: self.stack.len() as u32, open, clamped });
        self.stack.push((start, end));
        true
    }
}

/// Lay every worker-time span of `run` on serial lanes, grouped (synthesis first, then
/// devices ascending) and ordered by worker within a group.
pub fn assign(run: &Run) -> Vec<Lane> {
    let run_end = run.end_ns();
    let streams = streams(run);
    // (group, worker, stream) -> span indices
    let mut by_worker: BTreeMap<(LaneGroup, Option<u32>, Option<u32>), Vec<usize>> = BTreeMap::new();
    for (i, s) in run.spans.iter().enumerate() {
        if let Some(g) = group_of(s) {
            by_worker.entry((g, s.worker, streams.get(&i).copied())).or_default().push(i);
        }
    }
    let mut lanes = Vec::new();
    for ((group, worker, stream), mut idx) in by_worker {
        let span_end = |i: usize| run.spans[i].end_ns.unwrap_or(run_end).max(run.spans[i].start_ns);
        idx.sort_by_cached_key(|&i| (run.spans[i].start_ns, Reverse(span_end(i)), nesting_rank(&run.spans[i].kind)));
        let built = match worker {
            Some(_) => place_worker(run, &idx, run_end),
            None => pack(run, &idx, run_end),
        };
        for (sub, b) in built.into_iter().enumerate() {
            lanes.push(Lane { group, worker, stream, sub: sub as u32, spans: b.spans });
        }
    }
    lanes
}

/// A run and its lane assignment ([`assign`]), computed on the first call of
/// [`LaidOut::lanes`] and kept: the outputs of one `analyze` (waterfall SVG and PNG,
/// `report.html`, `trace.json`, a fleet's trace) share it instead of each assigning the
/// lanes again. It borrows the run, so the run cannot change under the assignment. It is
/// `Sync`: `analyze` writes `trace.json` on a thread of its own beside the other outputs.
pub struct LaidOut<'r> {
    run: &'r Run,
    lanes: OnceLock<Vec<Lane>>,
}

impl<'r> LaidOut<'r> {
    /// Nothing is computed yet (a command that draws nothing never assigns lanes).
    pub fn new(run: &'r Run) -> Self {
        LaidOut { run, lanes: OnceLock::new() }
    }

    /// The run.
    pub fn run(&self) -> &'r Run {
        self.run
    }

    /// The run's lanes: [`assign`]`(run)`, computed on the first call only.
    pub fn lanes(&self) -> &[Lane] {
        self.lanes.get_or_init(|| assign(self.run))
    }
}

/// How many of a worker's lanes a span tries before it opens a new one.
const MAX_TRIED_LANES: usize = 32;

/// One worker's spans: its main lane, plus overflow lanes for what does not nest.
fn place_worker(run: &Run, idx: &[usize], run_end: u64) -> Vec<Builder> {
    let mut lanes: Vec<Builder> = vec![Builder::new()];
    for &i in idx {
        let s = &run.spans[i];
        let end = s.end_ns.unwrap_or(run_end).max(s.start_ns);
        let open = s.end_ns.is_none();
        // Only the first lanes are tried: a worker whose spans overlap without nesting by the
        // thousand (a corrupt log) gets a lane each past them, in linear time, not quadratic.
        if !lanes.iter_mut().take(MAX_TRIED_LANES).any(|l| l.try_place(i, s.start_ns, end, open)) {
            let mut b = Builder::new();
            b.try_place(i, s.start_ns, end, open);
            lanes.push(b);
        }
    }
    lanes
}

/// Spans with no worker id: greedy interval packing, each onto the lowest-numbered lane
/// that is free at its start (a min-heap of lane ends keeps it O(n log n)).
fn pack(run: &Run, idx: &[usize], run_end: u64) -> Vec<Builder> {
    let mut lanes: Vec<Builder> = Vec::new();
    // Lanes busy until `end`, and lanes free now (by index, lowest first).
    let mut busy: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut free: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    for &i in idx {
        let s = &run.spans[i];
        let end = s.end_ns.unwrap_or(run_end).max(s.start_ns);
        while let Some(&Reverse((e, l))) = busy.peek() {
            if e <= s.start_ns {
                busy.pop();
                free.push(Reverse(l));
            } else {
                break;
            }
        }
        let l = match free.pop() {
            Some(Reverse(l)) => l,
            None => {
                lanes.push(Builder::new());
                lanes.len() - 1
            }
        };
        // The lane is free at `start`, so this places it at top level.
        lanes[l].stack.clear();
        lanes[l].try_place(i, s.start_ns, end, s.end_ns.is_none());
        busy.push(Reverse((end, l)));
    }
    lanes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RunMeta;

    fn run(spans: Vec<Span>) -> Run {
        let mut r = Run::new(RunMeta::new("test"));
        r.spans = spans;
        r.normalize();
        r
    }

    #[test]
    fn packs_workerless_synthesis_onto_fewest_lanes() {
        // Three overlapping, then one that fits after the first ends.
        let r = run(vec![
            Span::new(SpanKind::Synthesis, 0, 10),
            Span::new(SpanKind::Synthesis, 1, 20),
            Span::new(SpanKind::Synthesis, 2, 30),
            Span::new(SpanKind::Synthesis, 10, 25),
            Span::new(SpanKind::Synthesis, 21, 40),
        ]);
        let lanes = assign(&r);
        assert_eq!(lanes.len(), 3);
        let starts: Vec<Vec<u64>> = lanes.iter().map(|l| l.spans.iter().map(|p| p.start_ns).collect()).collect();
        assert_eq!(starts, vec![vec![0, 10], vec![1, 21], vec![2]]);
    }

    #[test]
    fn kernels_nest_and_overshoot_is_clamped() {
        let r = run(vec![
            Span::new(SpanKind::Gpu, 0, 100).worker(0),
            Span::new(SpanKind::Ntt, 10, 50).worker(0),
            Span::new(SpanKind::MsmH, 50, 100_500).worker(0), // pokes out by rounding
            Span::new(SpanKind::Gpu, 100, 200).worker(1),
        ]);
        let lanes = assign(&r);
        assert_eq!(lanes.len(), 2);
        let w0 = &lanes[0];
        assert_eq!(w0.name(), "gpu0 w0");
        assert_eq!(w0.spans.iter().map(|p| p.depth).collect::<Vec<_>>(), vec![0, 1, 1]);
        assert!(w0.spans[2].clamped && w0.spans[2].end_ns == 100);
    }

    #[test]
    fn partial_overlap_on_a_worker_goes_to_an_overflow_lane() {
        // Split finalisation: finalize of partition 0 overlaps the next gpu call.
        let r = run(vec![
            Span::new(SpanKind::Gpu, 0, 100).worker(0).device(1),
            Span::new(SpanKind::Finalize, 90, 5_000_000).worker(0).device(1),
            Span::new(SpanKind::Gpu, 100, 200).worker(0).device(1),
        ]);
        let lanes = assign(&r);
        assert_eq!(lanes.len(), 2);
        assert_eq!(lanes[0].spans.len(), 2);
        assert_eq!(lanes[1].name(), "gpu1 w0 #2");
        assert_eq!(run_kind(&r, &lanes[1].spans[0]), SpanKind::Finalize);
    }

    #[test]
    fn open_spans_run_to_the_end_and_queue_waits_are_skipped() {
        let mut open = Span::new(SpanKind::Gpu, 50, 0).worker(0);
        open.end_ns = None;
        let r = run(vec![Span::new(SpanKind::GpuQueue, 0, 50), Span::new(SpanKind::Gpu, 0, 40).worker(0), open, Span::new(SpanKind::Synthesis, 0, 300)]);
        let lanes = assign(&r);
        let all: Vec<&Placed> = lanes.iter().flat_map(|l| &l.spans).collect();
        assert_eq!(all.len(), 3);
        let o = all.iter().find(|p| p.open).unwrap();
        assert_eq!((o.start_ns, o.end_ns), (50, 300));
    }

    #[test]
    fn msms_on_lanes_get_a_lane_each_and_their_pieces_follow() {
        // As the CUDA backend writes them: two MSMs side by side on lanes 1 and 2, each with
        // a batch_add naming it, inside one gpu call; an ntt on the worker's own stream.
        let sp = |k: SpanKind, a: u64, b: u64| Span::new(k, a, b).worker(0).device(0).job("j").partition(0);
        let r = run(vec![
            sp(SpanKind::Gpu, 0, 1000),
            sp(SpanKind::Ntt, 10, 900),
            sp(SpanKind::MsmL, 20, 700).arg(arg::LANE, 1),
            sp(SpanKind::MsmA, 30, 800).arg(arg::LANE, 2),
            sp(SpanKind::BatchAdd, 40, 300).arg(arg::QUERY, "msm_l"),
            sp(SpanKind::BatchAdd, 50, 350).arg(arg::QUERY, "msm_a"),
            sp(SpanKind::TailMsm, 360, 700).arg(arg::QUERY, "msm_a"),
        ]);
        let lanes = assign(&r);
        let names: Vec<String> = lanes.iter().map(|l| l.label(&r)).collect();
        assert_eq!(names, ["gpu0 w0", "gpu0 w0 lane 1: msm_l", "gpu0 w0 lane 2: msm_a"]);
        let kinds = |l: &Lane| l.spans.iter().map(|p| (run_kind(&r, p), p.depth)).collect::<Vec<_>>();
        assert_eq!(kinds(&lanes[0]), [(SpanKind::Gpu, 0), (SpanKind::Ntt, 1)]);
        assert_eq!(kinds(&lanes[1]), [(SpanKind::MsmL, 0), (SpanKind::BatchAdd, 1)]);
        assert_eq!(kinds(&lanes[2]), [(SpanKind::MsmA, 0), (SpanKind::BatchAdd, 1), (SpanKind::TailMsm, 1)]);
        // An overflow lane says what it holds too.
        let r = run(vec![
            Span::new(SpanKind::Gpu, 0, 100).worker(0),
            Span::new(SpanKind::Finalize, 90, 5_000_000).worker(0),
            Span::new(SpanKind::Gpu, 100, 200).worker(0),
        ]);
        assert_eq!(assign(&r)[1].label(&r), "gpu0 w0 #2: finalize");
    }

    #[test]
    fn laid_out_assigns_once_and_equals_assign() {
        let r = run(vec![Span::new(SpanKind::Synthesis, 0, 10), Span::new(SpanKind::Synthesis, 1, 20), Span::new(SpanKind::Gpu, 5, 9).worker(0)]);
        let laid = LaidOut::new(&r);
        assert!(laid.lanes.get().is_none(), "nothing assigned before it is asked for");
        let first = laid.lanes();
        assert_eq!(first, assign(&r).as_slice());
        // The second call hands back the same lanes, not a new assignment.
        assert!(std::ptr::eq(first, laid.lanes()));
        assert!(std::ptr::eq(laid.run(), &r));
    }

    fn run_kind(r: &Run, p: &Placed) -> SpanKind {
        r.spans[p.index].kind.clone()
    }
}
