//! The cuzk `TIMELINE` line format, defined once: the reader parses it, and
//! [`CuzkWriter`] is the one place that turns spans into its lines — the prover's tracing
//! layer streams through it as spans open and close, and [`render`] replays a finished run
//! (the simulator's) through it.
//!
//! Spans → lines: `synthesis` → SYNTH_START / SYNTH_END (`synth_ms`); `gpu_queue` →
//! GPU_QUEUE; `gpu_pickup` → GPU_PICKUP; `gpu` → GPU_START / GPU_END (`gpu_ms`), with the
//! detail keys `worker`, `partition`, `device`. GPU_PICKUP comes from the `gpu_pickup`
//! span; a `gpu` span with none before it (a producer that does not model the pickup) gets
//! one at its own start, so every call reads back with a pickup. START lines are written
//! when a span opens, END lines when it closes: a killed run still has its starts. Offsets
//! are whole milliseconds (truncated), as cuzk prints them.

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::event::{Run, Span, SpanKind};

/// The six events of a cuzk daemon log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CuzkEvent {
    SynthStart,
    SynthEnd,
    GpuQueue,
    GpuPickup,
    GpuStart,
    GpuEnd,
}

impl CuzkEvent {
    pub const ALL: [CuzkEvent; 6] = [
        CuzkEvent::SynthStart,
        CuzkEvent::SynthEnd,
        CuzkEvent::GpuQueue,
        CuzkEvent::GpuPickup,
        CuzkEvent::GpuStart,
        CuzkEvent::GpuEnd,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            CuzkEvent::SynthStart => "SYNTH_START",
            CuzkEvent::SynthEnd => "SYNTH_END",
            CuzkEvent::GpuQueue => "GPU_QUEUE",
            CuzkEvent::GpuPickup => "GPU_PICKUP",
            CuzkEvent::GpuStart => "GPU_START",
            CuzkEvent::GpuEnd => "GPU_END",
        }
    }
    /// Order of events of one partition at equal offsets (starts before ends).
    pub fn rank(self) -> u8 {
        match self {
            CuzkEvent::SynthStart => 0,
            CuzkEvent::SynthEnd => 1,
            CuzkEvent::GpuQueue => 2,
            CuzkEvent::GpuPickup => 3,
            CuzkEvent::GpuStart => 4,
            CuzkEvent::GpuEnd => 5,
        }
    }
}

impl std::str::FromStr for CuzkEvent {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        CuzkEvent::ALL.into_iter().find(|e| e.as_str() == s).ok_or(())
    }
}

/// Format one line (without newline): `TIMELINE,<offset_ms>,<event>,<job>,<k=v,...>`.
/// `detail` pairs are written in the given order; a pair with an empty value is a bare flag.
pub fn format_line(offset_ms: u64, event: CuzkEvent, job: &str, detail: &[(&str, String)]) -> String {
    let mut s = String::with_capacity(64 + job.len());
    let _ = write!(s, "TIMELINE,{offset_ms},{},{job},", event.as_str());
    for (i, (k, v)) in detail.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if v.is_empty() {
            s.push_str(k);
        } else {
            let _ = write!(s, "{k}={v}");
        }
    }
    s
}

/// Spans in, TIMELINE lines out, as the spans open and close (see the module doc).
#[derive(Debug, Default)]
pub struct CuzkWriter {
    /// (job, partition) whose GPU_PICKUP was written and whose GPU_START was not yet.
    picked: HashSet<(String, Option<u32>)>,
}

fn ms(ns: u64) -> u64 {
    ns / 1_000_000
}

fn job_of(s: &Span) -> &str {
    s.job.as_deref().unwrap_or("-")
}

/// The detail keys of a span: `partition`, and for GPU-side events `worker` and `device`.
fn detail(s: &Span, gpu_side: bool) -> Vec<(&'static str, String)> {
    let mut d = Vec::with_capacity(4);
    if gpu_side {
        if let Some(w) = s.worker {
            d.push(("worker", w.to_string()));
        }
    }
    if let Some(p) = s.partition {
        d.push(("partition", p.to_string()));
    }
    if gpu_side {
        if let Some(dev) = s.device {
            d.push(("device", dev.to_string()));
        }
    }
    d
}

impl CuzkWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The lines a span writes when it opens (at its `start_ns`), in order.
    pub fn open(&mut self, s: &Span) -> Vec<String> {
        let key = || (job_of(s).to_string(), s.partition);
        let line = |ev: CuzkEvent, gpu_side: bool| format_line(ms(s.start_ns), ev, job_of(s), &detail(s, gpu_side));
        match s.kind {
            SpanKind::Synthesis => vec![line(CuzkEvent::SynthStart, false)],
            SpanKind::GpuQueue => {
                self.picked.remove(&key());
                vec![line(CuzkEvent::GpuQueue, false)]
            }
            SpanKind::GpuPickup => {
                self.picked.insert(key());
                vec![line(CuzkEvent::GpuPickup, true)]
            }
            SpanKind::Gpu => {
                let mut out = Vec::with_capacity(2);
                if !self.picked.remove(&key()) {
                    out.push(line(CuzkEvent::GpuPickup, true));
                }
                out.push(line(CuzkEvent::GpuStart, true));
                out
            }
            _ => Vec::new(),
        }
    }

    /// The line a span writes when it closes, if any (`None` too for a span still open).
    pub fn close(&mut self, s: &Span) -> Option<String> {
        let end = s.end_ns?;
        let dur = ms(end.saturating_sub(s.start_ns)).to_string();
        let (ev, gpu_side, key) = match s.kind {
            SpanKind::Synthesis => (CuzkEvent::SynthEnd, false, "synth_ms"),
            SpanKind::Gpu => (CuzkEvent::GpuEnd, true, "gpu_ms"),
            _ => return None,
        };
        let mut d = detail(s, gpu_side);
        d.push((key, dur));
        Some(format_line(ms(end), ev, job_of(s), &d))
    }
}

/// A whole run as a cuzk log: every span's open and close replayed through a
/// [`CuzkWriter`] in time order (at equal times in the event order of
/// [`CuzkEvent::rank`]), so that tools written for cuzk logs read any run — the
/// simulator's included — exactly as they read the prover's.
pub fn render(run: &Run) -> String {
    fn rank(k: &SpanKind, close: bool) -> Option<u8> {
        let ev = match (k, close) {
            (SpanKind::Synthesis, false) => CuzkEvent::SynthStart,
            (SpanKind::Synthesis, true) => CuzkEvent::SynthEnd,
            (SpanKind::GpuQueue, false) => CuzkEvent::GpuQueue,
            (SpanKind::GpuPickup, false) => CuzkEvent::GpuPickup,
            (SpanKind::Gpu, false) => CuzkEvent::GpuStart,
            (SpanKind::Gpu, true) => CuzkEvent::GpuEnd,
            _ => return None,
        };
        Some(ev.rank())
    }
    let mut events: Vec<(u64, u8, usize, bool)> = Vec::new();
    for (i, s) in run.spans.iter().enumerate() {
        if let Some(r) = rank(&s.kind, false) {
            events.push((s.start_ns, r, i, false));
        }
        if let (Some(e), Some(r)) = (s.end_ns, rank(&s.kind, true)) {
            events.push((e, r, i, true));
        }
    }
    events.sort_unstable();
    let mut w = CuzkWriter::new();
    let mut out = String::with_capacity(events.len() * 72);
    for (_, _, i, close) in events {
        let s = &run.spans[i];
        let lines = if close { w.close(s).into_iter().collect() } else { w.open(s) };
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RunMeta;

    #[test]
    fn a_call_without_a_pickup_span_gets_one_at_its_start() {
        let mut run = Run::new(RunMeta::new("t"));
        let s = 1_000_000u64;
        run.spans = vec![
            Span::new(SpanKind::Synthesis, 0, 10 * s).job("j").partition(0),
            Span::new(SpanKind::GpuQueue, 10 * s, 12 * s).job("j").partition(0),
            Span::new(SpanKind::Gpu, 12 * s, 20 * s).job("j").partition(0).worker(1).device(0),
            Span::new(SpanKind::Synthesis, 0, 11 * s).job("j").partition(1),
            Span::new(SpanKind::GpuQueue, 11 * s, 13 * s).job("j").partition(1),
            Span::new(SpanKind::GpuPickup, 13 * s, 14 * s).job("j").partition(1).worker(0).device(0),
            Span::new(SpanKind::Gpu, 14 * s, 21 * s).job("j").partition(1).worker(0).device(0),
        ];
        let text = render(&run);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "TIMELINE,0,SYNTH_START,j,partition=0",
                "TIMELINE,0,SYNTH_START,j,partition=1",
                "TIMELINE,10,SYNTH_END,j,partition=0,synth_ms=10",
                "TIMELINE,10,GPU_QUEUE,j,partition=0",
                "TIMELINE,11,SYNTH_END,j,partition=1,synth_ms=11",
                "TIMELINE,11,GPU_QUEUE,j,partition=1",
                "TIMELINE,12,GPU_PICKUP,j,worker=1,partition=0,device=0",
                "TIMELINE,12,GPU_START,j,worker=1,partition=0,device=0",
                "TIMELINE,13,GPU_PICKUP,j,worker=0,partition=1,device=0",
                "TIMELINE,14,GPU_START,j,worker=0,partition=1,device=0",
                "TIMELINE,20,GPU_END,j,worker=1,partition=0,device=0,gpu_ms=8",
                "TIMELINE,21,GPU_END,j,worker=0,partition=1,device=0,gpu_ms=7",
            ]
        );
        let back = crate::read::read_str(&text, None);
        assert_eq!(back.diagnostics.lines_rejected, 0, "{:?}", back.diagnostics.warnings);
        assert_eq!(back.spans_of(&SpanKind::GpuPickup).count(), 2);
    }

    #[test]
    fn line_format() {
        let l = format_line(29137, CuzkEvent::SynthEnd, "j1", &[("partition", "4".into()), ("synth_ms", "29137".into())]);
        assert_eq!(l, "TIMELINE,29137,SYNTH_END,j1,partition=4,synth_ms=29137");
    }
}
