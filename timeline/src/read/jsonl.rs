//! Reader of our JSON-lines format: one [`Record`] per line, streamed. Unknown record
//! types, bad JSON and bad fields are rejected line by line with the line number; the
//! rest of the file still loads.

use crate::event::{Counter, Record, Run, Span};

/// Decode one record. Our writer puts the tag first (`{"type":"span",…`): such lines are
/// decoded straight into their type (the extra `type` field is ignored), which avoids
/// serde's buffering of internally tagged enums and is several times faster. Anything
/// else goes through the tagged [`Record`].
fn parse_record(t: &str) -> Result<Record, serde_json::Error> {
    let tagged = |tag: &str| t.strip_prefix(tag).is_some_and(|r| r.starts_with(',') || r.starts_with('}'));
    if tagged(r#"{"type":"span""#) {
        return serde_json::from_str::<Span>(t).map(Record::Span);
    }
    if tagged(r#"{"type":"counter""#) {
        return serde_json::from_str::<Counter>(t).map(Record::Counter);
    }
    serde_json::from_str::<Record>(t)
}

/// One decoded line (stage 1, on the reading thread). Not boxed: an allocation per line
/// would cost more than moving the (rare, large) `meta` variant.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Item {
    Blank,
    Record(Record),
    /// Not a valid record, with serde's reason (cut to 200 bytes).
    Bad(String),
}

/// Stage 1: line → [`Item`] (the JSON decoding, the expensive part).
pub(crate) fn decode(line: &str) -> Item {
    let t = line.trim();
    if t.is_empty() {
        return Item::Blank;
    }
    match parse_record(t) {
        Ok(r) => Item::Record(r),
        Err(e) => {
            let mut msg = e.to_string();
            // Cut at a character boundary: the message may quote the input (found by the
            // `read_jsonl` fuzz target: a multi-byte character at byte 200 panicked).
            let mut cut = msg.len().min(200);
            while !msg.is_char_boundary(cut) {
                cut -= 1;
            }
            msg.truncate(cut);
            Item::Bad(msg)
        }
    }
}

/// Stage 2: check and collect the records.
pub(crate) fn assemble(items: &mut dyn Iterator<Item = (u64, Item)>) -> Run {
    let mut run = Run::default();
    run.diagnostics.format = "jsonl".into();
    let mut meta_seen = false;
    for (n, item) in items {
        run.diagnostics.lines_total += 1;
        let rec = match item {
            Item::Blank => {
                run.diagnostics.lines_ignored += 1;
                continue;
            }
            Item::Bad(msg) => {
                run.diagnostics.event_lines += 1;
                run.diagnostics.reject(n, format!("not a valid record: {msg}"));
                continue;
            }
            Item::Record(r) => r,
        };
        run.diagnostics.event_lines += 1;
        match rec {
            Record::Meta(m) => {
                if meta_seen {
                    run.diagnostics.reject(n, "second `meta` record ignored");
                } else {
                    run.meta = m;
                    meta_seen = true;
                }
            }
            Record::Span(s) => {
                if let Some(e) = s.end_ns {
                    if e < s.start_ns {
                        run.diagnostics.reject(n, format!("span `{}` ends before it starts ({} < {})", s.kind, e, s.start_ns));
                        continue;
                    }
                } else {
                    run.diagnostics.open_spans += 1;
                }
                run.spans.push(s);
            }
            Record::Counter(c) => {
                if c.value.is_finite() {
                    run.counters.push(c);
                } else {
                    run.diagnostics.reject(n, format!("counter `{}` has a non-finite value", c.name));
                }
            }
        }
    }
    if !meta_seen {
        run.meta.source = "jsonl".into();
    }
    run.normalize();
    run
}
