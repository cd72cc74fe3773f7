//! Render a simulated (or any) run as the cuzk daemon's TIMELINE log, so that tools
//! written for cuzk logs read simulated runs too: synthesis → SYNTH_START/SYNTH_END,
//! gpu_queue → GPU_QUEUE, gpu → GPU_PICKUP/GPU_START/GPU_END with the worker. Offsets are
//! whole milliseconds, as cuzk prints them; lines come out sorted by time.

use timeline::write::cuzk::{format_line, CuzkEvent};
use timeline::{Run, SpanKind};

pub fn render(run: &Run) -> String {
    let mut lines: Vec<(u64, u8, String)> = Vec::new();
    let ms = |ns: u64| ns / 1_000_000;
    for s in &run.spans {
        let (Some(job), Some(p), Some(end)) = (&s.job, s.partition, s.end_ns) else { continue };
        let part = ("partition", p.to_string());
        match s.kind {
            SpanKind::Synthesis => {
                lines.push((s.start_ns, 0, format_line(ms(s.start_ns), CuzkEvent::SynthStart, job, std::slice::from_ref(&part))));
                lines.push((end, 1, format_line(ms(end), CuzkEvent::SynthEnd, job, &[part, ("synth_ms", ms(end - s.start_ns).to_string())])));
            }
            SpanKind::GpuQueue => lines.push((s.start_ns, 2, format_line(ms(s.start_ns), CuzkEvent::GpuQueue, job, &[part]))),
            SpanKind::Gpu => {
                let w = ("worker", s.worker.unwrap_or(0).to_string());
                let mut detail = vec![w, part];
                if let Some(d) = s.device {
                    detail.push(("device", d.to_string()));
                }
                lines.push((s.start_ns, 3, format_line(ms(s.start_ns), CuzkEvent::GpuPickup, job, &detail)));
                lines.push((s.start_ns, 4, format_line(ms(s.start_ns), CuzkEvent::GpuStart, job, &detail)));
                detail.push(("gpu_ms", ms(end - s.start_ns).to_string()));
                lines.push((end, 5, format_line(ms(end), CuzkEvent::GpuEnd, job, &detail)));
            }
            _ => {}
        }
    }
    lines.sort_by_key(|l| (l.0, l.1));
    let mut out = String::with_capacity(lines.len() * 80);
    for (_, _, l) in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{simulate, Options};

    #[test]
    fn reads_back_as_a_cuzk_log_with_the_same_calls() {
        let mut c = crate::calibrate::default_base();
        c.pipeline.proofs = 2;
        let run = simulate(&c, Options { record: true }).run.unwrap();
        let text = render(&run);
        assert!(text.lines().all(|l| l.starts_with("TIMELINE,")));
        let back = timeline::read::read_str(&text, None);
        assert_eq!(back.diagnostics.format, "cuzk");
        assert_eq!(back.diagnostics.lines_rejected, 0);
        assert_eq!(back.diagnostics.open_spans, 0);
        for k in [SpanKind::Synthesis, SpanKind::Gpu, SpanKind::GpuQueue] {
            assert_eq!(back.spans_of(&k).count(), run.spans_of(&k).count(), "{k}");
        }
    }
}
