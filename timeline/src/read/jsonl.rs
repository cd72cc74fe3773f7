//! Reader of our JSON-lines format: one [`Record`] per line, streamed. Unknown record
//! types, bad JSON and bad fields are rejected line by line with the line number; the
//! rest of the file still loads.

use super::{Lines, ReadError};
use crate::event::{Record, Run};

pub fn parse_lines(lines: &mut Lines<'_>) -> Result<Run, ReadError> {
    let mut run = Run::default();
    run.diagnostics.format = "jsonl".into();
    let mut meta_seen = false;
    for item in lines {
        let (n, line) = item?;
        run.diagnostics.lines_total += 1;
        let t = line.trim();
        if t.is_empty() {
            run.diagnostics.lines_ignored += 1;
            continue;
        }
        run.diagnostics.event_lines += 1;
        match serde_json::from_str::<Record>(t) {
            Ok(Record::Meta(m)) => {
                if meta_seen {
                    run.diagnostics.reject(n, "second `meta` record ignored");
                } else {
                    run.meta = m;
                    meta_seen = true;
                }
            }
            Ok(Record::Span(s)) => {
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
            Ok(Record::Counter(c)) => {
                if c.value.is_finite() {
                    run.counters.push(c);
                } else {
                    run.diagnostics.reject(n, format!("counter `{}` has a non-finite value", c.name));
                }
            }
            Err(e) => {
                let mut msg = e.to_string();
                msg.truncate(200);
                run.diagnostics.reject(n, format!("not a valid record: {msg}"));
            }
        }
    }
    if !meta_seen {
        run.meta.source = "jsonl".into();
    }
    run.normalize();
    Ok(run)
}
