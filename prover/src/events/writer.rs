//! The writer thread: receives opened and closed spans and counters from the layer and
//! the samplers, writes JSON lines and cuzk `TIMELINE` lines (through
//! [`CuzkWriter`]) behind buffered writers, and keeps the whole run in memory when asked.

use std::io::{self, BufWriter, Write};

use crossbeam_channel::Receiver;
use timeline::event::{Run, RunMeta};
use timeline::write::cuzk::CuzkWriter;
use timeline::write::jsonl::JsonlWriter;

use super::{Msg, SinkStats};

pub(crate) fn writer_loop(
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
