//! Pretty JSON as `serde_json::to_writer_pretty` writes it (two-space indent), byte for
//! byte, with the long row lists rendered on every core: a 1M-event log's summary.json is
//! 137 MB, most of it the partition rows, and serialising it on one thread was a fifth of
//! `analyze --json`'s time (issue 17).
//!
//! How: the document is serialised without its row lists (each an empty `[]` at the top
//! level), then each list is rendered element by element, in windows of chunks, on rayon's
//! pool ([`Rows`]) and spliced in where its `[]` is. A top-level key is the only text
//! that starts a line with exactly two spaces and a quote (a newline inside a string is
//! escaped), so the place is unambiguous.

use std::io::{self, Write};

use rayon::prelude::*;
use serde::Serialize;

/// serde_json's `PrettyFormatter` with a two-space indent, starting at a depth (`indent`
/// levels deep: an element of a top-level list is at depth 2), indentation written in one
/// call rather than one per level.
struct PrettyAt {
    indent: usize,
    has_value: bool,
}

const SPACES: &[u8; 64] = b"                                                                ";

fn indent<W: ?Sized + Write>(w: &mut W, n: usize) -> io::Result<()> {
    let mut left = 2 * n;
    while left > 0 {
        let k = left.min(SPACES.len());
        w.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

impl serde_json::ser::Formatter for PrettyAt {
    #[inline]
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        w.write_all(b"[")
    }
    #[inline]
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.indent)?;
        }
        w.write_all(b"]")
    }
    #[inline]
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.indent)
    }
    #[inline]
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    #[inline]
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        w.write_all(b"{")
    }
    #[inline]
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.indent)?;
        }
        w.write_all(b"}")
    }
    #[inline]
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.indent)
    }
    #[inline]
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    #[inline]
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// A top-level list of a document written by [`write_pretty_with_rows`]: its key and a way
/// to render its non-empty element list.
pub struct Rows<'a> {
    key: &'static str,
    len: usize,
    render: Box<dyn Fn(usize, usize, &mut Vec<u8>) -> io::Result<()> + Sync + 'a>,
}

impl<'a> Rows<'a> {
    /// The list `rows`, under the top-level key `key`.
    pub fn new<T: Serialize + Sync>(key: &'static str, rows: &'a [T]) -> Rows<'a> {
        Rows {
            key,
            len: rows.len(),
            render: Box::new(move |from, to, out| {
                for (i, r) in rows[from..to].iter().enumerate() {
                    out.extend_from_slice(if from + i == 0 { b"\n    " } else { b",\n    " });
                    let mut ser = serde_json::Serializer::with_formatter(&mut *out, PrettyAt { indent: 2, has_value: false });
                    r.serialize(&mut ser).map_err(io::Error::other)?;
                }
                Ok(())
            }),
        }
    }
}

/// Elements rendered per task, and tasks per window (one window's text in memory at once).
const CHUNK: usize = 1024;
const WINDOW: usize = 16;

/// Write `head` (serialised with each of `rows`' keys holding an empty list) pretty-printed
/// as `serde_json::to_writer_pretty` would write the whole document, the lists in place.
/// Lists that are empty, or whose key is not at the top level of `head`, stay as they are.
pub fn write_pretty_with_rows<H: Serialize, W: Write>(head: &H, rows: &[Rows<'_>], w: &mut W) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(head).map_err(io::Error::other)?;
    // Where each list's `[]` is: (start of `[]`, its list).
    let mut at: Vec<(usize, &Rows<'_>)> = rows
        .iter()
        .filter(|r| r.len > 0)
        .filter_map(|r| {
            let marker = format!("\n  \"{}\": []", r.key);
            find(&text, marker.as_bytes()).map(|p| (p + marker.len() - 2, r))
        })
        .collect();
    at.sort_by_key(|(p, _)| *p);
    let mut done = 0;
    for (p, r) in at {
        w.write_all(&text[done..p])?;
        w.write_all(b"[")?;
        write_elements(r, w)?;
        w.write_all(b"\n  ]")?;
        done = p + 2;
    }
    w.write_all(&text[done..])
}

fn write_elements<W: Write>(r: &Rows<'_>, w: &mut W) -> io::Result<()> {
    let chunks: Vec<(usize, usize)> = (0..r.len).step_by(CHUNK).map(|a| (a, (a + CHUNK).min(r.len))).collect();
    // One buffer per task, reused from window to window (not a fresh allocation per chunk:
    // each would be mapped and unmapped again).
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); WINDOW.min(chunks.len())];
    for window in chunks.chunks(WINDOW) {
        let bufs = &mut bufs[..window.len()];
        bufs.par_iter_mut().zip(window.par_iter()).try_for_each(|(buf, &(a, b))| {
            buf.clear();
            (r.render)(a, b, buf)
        })?;
        for b in bufs.iter() {
            w.write_all(b)?;
        }
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Row {
        a: u32,
        b: Option<f64>,
        s: String,
        v: Vec<u8>,
        e: Vec<u8>,
        o: std::collections::BTreeMap<String, serde_json::Value>,
    }

    #[derive(Serialize, Default)]
    struct Doc {
        x: u32,
        rows: Vec<Row>,
        nested: Vec<Vec<Row>>,
        other: Vec<Row>,
        empty: Vec<Row>,
        tail: String,
    }

    #[test]
    fn rows_rendered_apart_give_serde_jsons_pretty_bytes() {
        let row = |i: usize| Row {
            a: i as u32,
            b: (i % 3 != 0).then_some(i as f64 / 7.0),
            s: format!("r\"{i}\"\n  \"rows\": []"),
            v: vec![i as u8; i % 4],
            e: vec![],
            o: if i % 2 == 0 { [("k".to_string(), serde_json::json!({"z": [1, {}], "y": []}))].into() } else { Default::default() },
        };
        for n in [0, 1, 2, CHUNK - 1, CHUNK, CHUNK * WINDOW + 3] {
            let mut doc = Doc { x: 1, rows: (0..n).map(row).collect(), nested: vec![vec![row(1)]], other: (0..n / 2).map(row).collect(), empty: vec![], tail: "t".into() };
            let want = serde_json::to_vec_pretty(&doc).unwrap();
            let rows = std::mem::take(&mut doc.rows);
            let other = std::mem::take(&mut doc.other);
            let mut got = Vec::new();
            write_pretty_with_rows(&doc, &[Rows::new("other", &other), Rows::new("rows", &rows), Rows::new("empty", &doc.empty)], &mut got).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap(), "{n} rows");
        }
    }
}
