//! Streaming writer of our JSON-lines format: a `meta` record first, then spans and
//! counters in any order, one per line. Buffered; the caller decides when to flush.

use std::io::{self, Write};

use crate::event::{Counter, Record, Run, RunMeta, Span};

pub struct JsonlWriter<W: Write> {
    out: W,
}

impl<W: Write> JsonlWriter<W> {
    pub fn new(out: W) -> Self {
        JsonlWriter { out }
    }
    fn record(&mut self, r: &Record) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, r)?;
        self.out.write_all(b"\n")
    }
    pub fn meta(&mut self, m: &RunMeta) -> io::Result<()> {
        self.record(&Record::Meta(m.clone()))
    }
    pub fn span(&mut self, s: &Span) -> io::Result<()> {
        self.record(&Record::Span(s.clone()))
    }
    pub fn counter(&mut self, c: &Counter) -> io::Result<()> {
        self.record(&Record::Counter(c.clone()))
    }
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Write a whole run: meta, spans, counters.
pub fn write_run<W: Write>(out: W, run: &Run) -> io::Result<()> {
    let mut w = JsonlWriter::new(io::BufWriter::new(out));
    w.meta(&run.meta)?;
    for s in &run.spans {
        w.span(s)?;
    }
    for c in &run.counters {
        w.counter(c)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Counter, SpanKind};
    use crate::read::read_str;

    #[test]
    fn round_trip() {
        let mut run = Run::new(RunMeta::new("test"));
        run.spans.push(Span::new(SpanKind::Synthesis, 0, 10).job("a").partition(0).worker(1));
        run.spans.push(Span::new(SpanKind::Gpu, 10, 30).job("a").partition(0).worker(0).device(0).arg("gpu_ms", 20));
        run.counters.push(Counter { name: "rss_bytes".into(), t_ns: 5, value: 1e9, device: None });
        let mut buf = Vec::new();
        write_run(&mut buf, &run).unwrap();
        let back = read_str(std::str::from_utf8(&buf).unwrap(), None);
        assert_eq!(back.meta, run.meta);
        assert_eq!(back.spans, run.spans);
        assert_eq!(back.counters, run.counters);
        assert_eq!(back.diagnostics.lines_rejected, 0);
    }
}
