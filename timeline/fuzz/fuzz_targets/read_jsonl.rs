//! The JSON-lines reader on arbitrary bytes: never panics, counts every line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use timeline::read::{read_from, Format};

fuzz_target!(|data: &[u8]| {
    let run = read_from(data, "<fuzz>", Some(Format::Jsonl)).expect("reading a byte slice cannot fail");
    let d = &run.diagnostics;
    assert!(d.event_lines + d.lines_ignored <= d.lines_total);
    assert!(d.lines_rejected <= d.event_lines);
    for s in &run.spans {
        assert!(s.end_ns.is_none_or(|e| e >= s.start_ns));
    }
});
