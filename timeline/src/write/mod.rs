//! Writers of the event model: our JSON lines (streaming, one record per line) and the
//! cuzk `TIMELINE` line format, so that tools written for cuzk logs read ours too.

pub mod cuzk;
pub mod jsonl;
