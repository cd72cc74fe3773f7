//! Format detection, then every analysis and the Markdown report: nothing downstream of
//! a reader may panic on what the reader let through.
#![no_main]

use libfuzzer_sys::fuzz_target;
use timeline::analysis::{summarize, AnalyzeOptions};
use timeline::read::read_from;

fuzz_target!(|data: &[u8]| {
    // A byte slice fails to read only as a Chrome trace that is not one as a whole.
    let run = match read_from(data, "<fuzz>", None) {
        Ok(run) => run,
        Err(timeline::read::ReadError::Format { .. }) => return,
        Err(e) => panic!("reading a byte slice failed: {e}"),
    };
    let s = summarize(&run, &AnalyzeOptions { min_gap_ms: 0.0, ..Default::default() });
    for d in &s.utilization.devices {
        assert!(d.gpu_utilization <= 1.0 + 1e-9);
    }
    let _ = timeline::report::render(&s, &[]);
});
