//! `summary.json`, rendered on two cores. A million-event log's summary is ~140 MB of
//! pretty JSON, nearly all of it the rows of four tables (idle gaps, transitions, jobs,
//! partitions); serialising it took ~0.2 s on one thread, the last thing `analyze --json`
//! did while the other core sat idle.
//!
//! Here this thread serialises the summary through [`Pretty`], a formatter that writes
//! exactly what `serde_json`'s `PrettyFormatter` writes (two-space indents), with those
//! four tables left empty ([`rows`]); where each table's array closes, the formatter writes
//! its rows in blocks, the even blocks rendered here straight into the output, the odd
//! ones by a second thread into a few buffers that go back and forth (memory fresh from the
//! kernel costs more than the rendering on the machines this runs on: a buffer of the
//! whole of one thread's share, ~70 MB, made the step slower, not faster). The bytes are
//! those of `serde_json::to_writer_pretty` (tested on summaries of every shape).

use std::cell::Cell;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use serde::{Serialize, Serializer};
use serde_json::ser::Formatter;

use crate::analysis::summary::Summary;

/// Below this many rows in all the summary is written on one thread.
const SPLIT_ROWS: usize = 4096;

/// Rows per block.
const BLOCK: usize = 512;

/// Blocks the second thread may have rendered ahead of the output.
const AHEAD: usize = 3;

thread_local! {
    /// While [`write`] runs on this thread: the tables serialised through [`rows`] are left
    /// empty (their rows are written by the formatter), and counted.
    static DEFER: Cell<Option<usize>> = const { Cell::new(None) };
}

/// [`DEFER`] set for as long as it lives (unset again on every path out, a panic included).
struct Defer;

impl Defer {
    fn set() -> Defer {
        DEFER.with(|d| d.set(Some(0)));
        Defer
    }
    /// Tables left empty so far.
    fn count() -> usize {
        DEFER.with(|d| d.get().unwrap_or(0))
    }
}

impl Drop for Defer {
    fn drop(&mut self) {
        DEFER.with(|d| d.set(None));
    }
}

/// The serializer of [`Summary`]'s four large tables: every row, as a `Vec`'s own would,
/// or, while [`write`] runs on this thread, none (the formatter writes them).
pub(crate) fn rows<T: Serialize, S: Serializer>(rows: &[T], s: S) -> Result<S::Ok, S::Error> {
    match DEFER.with(Cell::get) {
        Some(n) => {
            DEFER.with(|d| d.set(Some(n + 1)));
            s.collect_seq(std::iter::empty::<&T>())
        }
        None => s.collect_seq(rows),
    }
}

/// A table's rows, rendered a block at a time on either thread.
trait Rows: Sync {
    fn len(&self) -> usize;
    /// Rows `range` as they stand in an array two levels deep (`\n    {…}`, `,\n    {…}`
    /// after the first row).
    /// (Into a `Vec`: serde_json writes token by token, and through `dyn Write` each token
    /// was a call, ~0.2 s of a million-event summary.)
    fn render(&self, range: std::ops::Range<usize>, out: &mut Vec<u8>) -> io::Result<()>;
}

impl<T: Serialize + Sync> Rows for Vec<T> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn render(&self, range: std::ops::Range<usize>, out: &mut Vec<u8>) -> io::Result<()> {
        for i in range {
            out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
            self[i].serialize(&mut serde_json::Serializer::with_formatter(&mut *out, Pretty::new(2))).map_err(io::Error::from)?;
        }
        Ok(())
    }
}

/// Write `summary` as pretty JSON (the bytes of `serde_json::to_writer_pretty`), the rows
/// of its large tables rendered on two threads.
pub fn write<W: Write>(w: &mut W, summary: &Summary) -> io::Result<()> {
    let tables: [(&'static [u8], &dyn Rows); 4] = [
        (b"idle_gaps", &summary.idle_gaps),
        (b"cross_job_transitions", &summary.cross_job_transitions),
        (b"jobs", &summary.jobs),
        (b"partitions", &summary.partitions),
    ];
    if tables.iter().map(|(_, r)| r.len()).sum::<usize>() < SPLIT_ROWS {
        return serde_json::to_writer_pretty(w, summary).map_err(io::Error::from);
    }
    // Before a byte is written: the tables the summary leaves empty here are exactly these
    // (a table given the `rows` serializer but not listed would come out as `[]`).
    let (outline, deferred) = {
        let _defer = Defer::set();
        (serde_json::to_value(summary).map_err(io::Error::from)?, Defer::count())
    };
    let listed = tables.iter().all(|(k, _)| std::str::from_utf8(k).ok().and_then(|k| outline.get(k)).is_some_and(|v| v.as_array().is_some_and(Vec::is_empty)));
    if deferred != tables.len() || !listed {
        return Err(io::Error::other(format!("summary.json: {deferred} tables left to the formatter, {} listed", tables.len())));
    }
    let written = Cell::new(0usize);
    std::thread::scope(|sc| {
        let (tx_job, rx_job) = sync_channel::<Job<'_>>(AHEAD);
        let (tx_done, rx_done) = sync_channel::<io::Result<Vec<u8>>>(AHEAD);
        sc.spawn(move || {
            for job in rx_job {
                let mut buf = job.buf;
                buf.clear();
                let done = job.rows.render(job.range, &mut buf).map(|()| buf);
                if tx_done.send(done).is_err() {
                    break;
                }
            }
        });
        let mut f = Pretty::new(0);
        f.split = Some(Split { tables, written: &written, helper: Helper { jobs: tx_job, done: rx_done, spare: Vec::new() }, key_now: Vec::new(), capturing: false, table: None });
        {
            let _defer = Defer::set();
            summary.serialize(&mut serde_json::Serializer::with_formatter(&mut *w, f)).map_err(io::Error::from)?;
        }
        // (Checked above; kept as a last guard.)
        if written.get() != tables.len() {
            return Err(io::Error::other(format!("summary.json: {} of {} tables written", written.get(), tables.len())));
        }
        Ok(())
    })
}

/// A block for the second thread, and the buffer to render it into.
struct Job<'s> {
    rows: &'s dyn Rows,
    range: std::ops::Range<usize>,
    buf: Vec<u8>,
}

/// The second thread, seen from the formatter.
struct Helper<'s> {
    jobs: SyncSender<Job<'s>>,
    done: Receiver<io::Result<Vec<u8>>>,
    /// Buffers back from the output, for the next blocks.
    spare: Vec<Vec<u8>>,
}

impl<'s> Helper<'s> {
    /// Write `rows` to `w`: even blocks rendered here, odd ones by the second thread, at
    /// most [`AHEAD`] of them ahead.
    fn write_rows<W: ?Sized + Write>(&mut self, rows: &'s dyn Rows, w: &mut W) -> io::Result<()> {
        let n = rows.len();
        let block = |b: usize| b * BLOCK..((b + 1) * BLOCK).min(n);
        let blocks = n.div_ceil(BLOCK);
        let gone = || io::Error::other("summary.json: the second rendering thread stopped");
        // The odd blocks asked for so far (the next to ask for is 2 × asked + 1).
        let mut asked = 0;
        let ask = |this: &mut Self, asked: &mut usize| -> io::Result<()> {
            let b = 2 * *asked + 1;
            if b < blocks {
                let buf = this.spare.pop().unwrap_or_default();
                this.jobs.send(Job { rows, range: block(b), buf }).map_err(|_| gone())?;
                *asked += 1;
            }
            Ok(())
        };
        for _ in 0..AHEAD {
            ask(self, &mut asked)?;
        }
        // This thread's blocks, rendered here and written out (a buffer that stays warm).
        let mut own = self.spare.pop().unwrap_or_default();
        for b in 0..blocks {
            if b % 2 == 0 {
                own.clear();
                rows.render(block(b), &mut own)?;
                w.write_all(&own)?;
            } else {
                let buf = self.done.recv().map_err(|_| gone())??;
                w.write_all(&buf)?;
                self.spare.push(buf);
                ask(self, &mut asked)?;
            }
        }
        self.spare.push(own);
        Ok(())
    }
}

/// How [`Pretty`] writes the four tables' rows (see the module doc).
struct Split<'s> {
    tables: [(&'static [u8], &'s dyn Rows); 4],
    /// Tables written so far.
    written: &'s Cell<usize>,
    helper: Helper<'s>,
    /// A top-level key is being written (its text goes to `key_now`).
    capturing: bool,
    key_now: Vec<u8>,
    /// Inside the array of this table.
    table: Option<&'s dyn Rows>,
}

/// `serde_json::ser::PrettyFormatter` with two-space indents, written out so that it can
/// start at any depth (rows rendered on their own) and splice rows in (see [`Split`]).
/// Numbers, strings and escapes are the trait's own defaults, as `PrettyFormatter`'s are.
struct Pretty<'s> {
    current_indent: usize,
    has_value: bool,
    split: Option<Split<'s>>,
}

impl Pretty<'_> {
    fn new(depth: usize) -> Self {
        Pretty { current_indent: depth, has_value: false, split: None }
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        for _ in 0..self.current_indent {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Formatter for Pretty<'_> {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(s) = &mut self.split {
            if self.current_indent == 1 {
                s.table = s.tables.iter().find(|(k, _)| *k == &s.key_now[..]).map(|(_, r)| *r);
            }
        }
        self.current_indent += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent -= 1;
        if let Some(s) = &mut self.split {
            if self.current_indent == 1 {
                if let Some(rows) = s.table.take() {
                    // The table was left empty (`rows`): its rows go here.
                    if self.has_value {
                        return Err(io::Error::other("summary.json: a table's rows were written twice"));
                    }
                    s.helper.write_rows(rows, w)?;
                    self.has_value = rows.len() > 0;
                    s.written.set(s.written.get() + 1);
                }
            }
        }
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if let Some(s) = &mut self.split {
            if self.current_indent == 1 {
                s.capturing = true;
                s.key_now.clear();
            }
        }
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        if let Some(s) = &mut self.split {
            s.capturing = false;
        }
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        if let Some(s) = &mut self.split {
            if s.capturing {
                s.key_now.extend_from_slice(fragment.as_bytes());
            }
        }
        w.write_all(fragment.as_bytes())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pretty(s: &Summary) -> Vec<u8> {
        serde_json::to_vec_pretty(s).unwrap()
    }

    /// A summary with every table filled from a real analysis, its rows repeated to `n`
    /// partitions (strings with characters that need escaping among them).
    fn summary_with(n: usize) -> Summary {
        let run = crate::read::read_str(include_str!("../../assets/cuzk-sample.log"), None);
        let mut s = crate::analysis::summarize(&run, &Default::default());
        assert!(!s.partitions.is_empty() && !s.jobs.is_empty());
        let base = s.partitions.clone();
        s.partitions = (0..n).map(|i| {
            let mut r = base[i % base.len()].clone();
            if i % 7 == 3 {
                r.job = format!("job \"{i}\"\t\\ é");
            }
            r
        }).collect();
        s
    }

    #[test]
    fn the_bytes_of_serde_jsons_pretty_printer() {
        // One thread (few rows), and two: rows in odd and even numbers of blocks, a last
        // block cut short, tables empty and of one row.
        for n in [0, 1, 9, SPLIT_ROWS, BLOCK * 7 + 3, BLOCK * (2 * AHEAD + 4)] {
            let mut s = summary_with(n.max(1));
            s.partitions.truncate(n);
            for empty in [false, true] {
                if empty {
                    s.jobs.clear();
                    s.idle_gaps.truncate(1);
                }
                let mut got = Vec::new();
                write(&mut got, &s).unwrap();
                assert!(got == pretty(&s), "{n} rows (other tables emptied: {empty}): bytes differ");
            }
        }
        // Outside `write`, every row.
        let s = summary_with(9);
        let v: serde_json::Value = serde_json::from_slice(&pretty(&s)).unwrap();
        assert_eq!(v["partitions"].as_array().unwrap().len(), 9);
    }

    #[test]
    fn a_failed_write_is_an_error() {
        let s = summary_with(SPLIT_ROWS + 1);
        for room in [10, 1000, 1 << 20] {
            let mut full = vec![0u8; room];
            let mut w = &mut full[..];
            assert!(write(&mut w, &s).is_err(), "{room} bytes of room");
        }
    }
}
