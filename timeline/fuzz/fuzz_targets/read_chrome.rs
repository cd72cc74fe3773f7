//! The Chrome-trace reader on arbitrary bytes: never panics; an error is a format error
//! naming the input; what it reads counts every event and keeps times in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use timeline::read::{read_from, Format, ReadError};

fuzz_target!(|data: &[u8]| {
    let run = match read_from(data, "<fuzz>", Some(Format::ChromeTrace)) {
        Ok(run) => run,
        Err(ReadError::Format { path, .. }) => {
            assert_eq!(path, "<fuzz>");
            return;
        }
        Err(e) => panic!("reading a byte slice failed: {e}"),
    };
    let d = &run.diagnostics;
    assert!(d.event_lines + d.lines_ignored <= d.lines_total);
    assert!(d.lines_rejected <= d.event_lines);
    for s in &run.spans {
        assert!(s.end_ns.is_none_or(|e| e >= s.start_ns && e <= timeline::event::MAX_TIME_NS));
    }
});
