//! Reader of our JSON-lines format: one [`Record`] per line, streamed. Unknown record
//! types, bad JSON and bad fields are rejected line by line with the line number; the
//! rest of the file still loads.

use crate::event::{Counter, JobId, Record, Run, Span, MAX_TIME_NS};

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

/// One decoded line (stage 1, on a decoding thread). Not boxed: an allocation per line
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

/// Stage 2: check and collect the records (the batches come in input order).
pub(crate) fn assemble(batches: &mut dyn Iterator<Item = Vec<(u64, Item)>>) -> Run {
    let mut run = Run::default();
    run.diagnostics.format = "jsonl".into();
    let mut meta_seen = false;
    // The line of each kept span (same index), to name duplicates.
    let mut span_lines: Vec<u64> = Vec::new();
    let too_late = |t: u64| t > MAX_TIME_NS;
    // Each job id once, shared by its spans (serde gives every span an allocation of its own).
    let mut ids: rustc_hash::FxHashSet<JobId> = Default::default();
    for (n, item) in batches.flatten() {
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
            Record::Span(mut s) => {
                if let Some(j) = s.job.take() {
                    s.job = Some(match ids.get(&*j) {
                        Some(shared) => shared.clone(),
                        None => {
                            ids.insert(j.clone());
                            j
                        }
                    });
                }
                if let Some(t) = [Some(s.start_ns), s.end_ns].into_iter().flatten().find(|&t| too_late(t)) {
                    run.diagnostics.reject(n, format!("span `{}`: time {t} ns is beyond 10 years ({MAX_TIME_NS} ns), not a time of a run", s.kind));
                    continue;
                }
                if let Some(e) = s.end_ns {
                    if e < s.start_ns {
                        run.diagnostics.reject(n, format!("span `{}` ends before it starts ({} < {})", s.kind, e, s.start_ns));
                        continue;
                    }
                } else {
                    run.diagnostics.open_spans += 1;
                }
                run.spans.push(s);
                span_lines.push(n);
            }
            Record::Counter(c) => {
                if !c.value.is_finite() {
                    run.diagnostics.reject(n, format!("counter `{}` has a non-finite value", c.name));
                } else if too_late(c.t_ns) {
                    run.diagnostics.reject(n, format!("counter `{}`: time {} ns is beyond 10 years ({MAX_TIME_NS} ns), not a time of a run", c.name, c.t_ns));
                } else {
                    run.counters.push(c);
                }
            }
        }
    }
    if !meta_seen {
        run.meta.source = "jsonl".into();
    }
    drop_duplicates(&mut run, &span_lines);
    run.normalize();
    run
}

/// Drop exact repeats of a span (same kind, job, partition, worker, start and end: a log
/// concatenated with itself, a line written twice), keeping the first, each rejected with
/// the line of the one it repeats. Spans are grouped by (start, end) through a sort of
/// their indices, so no span is hashed or copied.
fn drop_duplicates(run: &mut Run, lines: &[u64]) {
    let spans = &run.spans;
    let key = |i: u32| {
        let s = &spans[i as usize];
        (s.start_ns, s.end_ns, &s.kind, &s.job, s.partition, s.worker)
    };
    // Sorted by the identity, then by file order: a repeat follows the first of its group.
    let mut order: Vec<u32> = (0..spans.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut dup: Vec<(u32, u32)> = Vec::new();
    let mut first = 0;
    for k in 1..order.len() {
        if key(order[k]) == key(order[first]) {
            dup.push((order[k], order[first]));
        } else {
            first = k;
        }
    }
    if dup.is_empty() {
        return;
    }
    dup.sort_unstable();
    for &(i, first) in &dup {
        let s = &run.spans[i as usize];
        let msg = || format!(
            "duplicate of line {}: the same `{}` span (job {}, partition {}, worker {}, {}..{} ns) again; dropped",
            lines[first as usize],
            s.kind,
            s.job.as_deref().unwrap_or("-"),
            s.partition.map_or("-".into(), |p| p.to_string()),
            s.worker.map_or("-".into(), |w| w.to_string()),
            s.start_ns,
            s.end_ns.map_or("open".into(), |e| e.to_string()),
        );
        if s.end_ns.is_none() {
            run.diagnostics.open_spans = run.diagnostics.open_spans.saturating_sub(1);
        }
        run.diagnostics.reject_with(lines[i as usize], msg);
        run.diagnostics.duplicates += 1;
    }
    let mut drop = vec![false; run.spans.len()];
    for &(i, _) in &dup {
        drop[i as usize] = true;
    }
    let mut k = 0;
    run.spans.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
}

#[cfg(test)]
mod tests {
    use crate::read::{read_str, Format};

    #[test]
    fn spans_of_one_job_share_its_id() {
        let log = "\
{\"type\":\"span\",\"kind\":\"synthesis\",\"start_ns\":0,\"end_ns\":5,\"job\":\"a\",\"partition\":0}
{\"type\":\"span\",\"kind\":\"synthesis\",\"start_ns\":1,\"end_ns\":6,\"job\":\"b\",\"partition\":0}
{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":5,\"end_ns\":9,\"job\":\"a\",\"partition\":0}
{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":6,\"end_ns\":9,\"job\":\"b\",\"partition\":0}
";
        let run = read_str(log, Some(Format::Jsonl));
        assert_eq!(run.spans.len(), 4, "{:?}", run.diagnostics);
        let of = |name: &str| run.spans.iter().filter_map(|s| s.job.as_ref()).filter(|j| &***j == name).collect::<Vec<_>>();
        for name in ["a", "b"] {
            let ids = of(name);
            assert_eq!(ids.len(), 2);
            assert!(std::sync::Arc::ptr_eq(ids[0], ids[1]), "{name}: two copies of one id");
        }
    }
}
