//! The cuzk `TIMELINE` line format, defined once: the reader parses it, the prover's
//! tracing layer writes it.

use std::fmt::Write as _;

/// The six events of a cuzk daemon log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CuzkEvent {
    SynthStart,
    SynthEnd,
    GpuQueue,
    GpuPickup,
    GpuStart,
    GpuEnd,
}

impl CuzkEvent {
    pub const ALL: [CuzkEvent; 6] = [
        CuzkEvent::SynthStart,
        CuzkEvent::SynthEnd,
        CuzkEvent::GpuQueue,
        CuzkEvent::GpuPickup,
        CuzkEvent::GpuStart,
        CuzkEvent::GpuEnd,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            CuzkEvent::SynthStart => "SYNTH_START",
            CuzkEvent::SynthEnd => "SYNTH_END",
            CuzkEvent::GpuQueue => "GPU_QUEUE",
            CuzkEvent::GpuPickup => "GPU_PICKUP",
            CuzkEvent::GpuStart => "GPU_START",
            CuzkEvent::GpuEnd => "GPU_END",
        }
    }
    /// Order of events of one partition at equal offsets (starts before ends).
    pub fn rank(self) -> u8 {
        match self {
            CuzkEvent::SynthStart => 0,
            CuzkEvent::SynthEnd => 1,
            CuzkEvent::GpuQueue => 2,
            CuzkEvent::GpuPickup => 3,
            CuzkEvent::GpuStart => 4,
            CuzkEvent::GpuEnd => 5,
        }
    }
}

impl std::str::FromStr for CuzkEvent {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        CuzkEvent::ALL.into_iter().find(|e| e.as_str() == s).ok_or(())
    }
}

/// Format one line (without newline): `TIMELINE,<offset_ms>,<event>,<job>,<k=v,...>`.
/// `detail` pairs are written in the given order; a pair with an empty value is a bare flag.
pub fn format_line(offset_ms: u64, event: CuzkEvent, job: &str, detail: &[(&str, String)]) -> String {
    let mut s = String::with_capacity(64 + job.len());
    let _ = write!(s, "TIMELINE,{offset_ms},{},{job},", event.as_str());
    for (i, (k, v)) in detail.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if v.is_empty() {
            s.push_str(k);
        } else {
            let _ = write!(s, "{k}={v}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn line_format() {
        let l = format_line(29137, CuzkEvent::SynthEnd, "j1", &[("partition", "4".into()), ("synth_ms", "29137".into())]);
        assert_eq!(l, "TIMELINE,29137,SYNTH_END,j1,partition=4,synth_ms=29137");
    }
}
