//! Colours and number formats shared by the charts, so that a kind or a gap cause has the
//! same colour in every picture. (Intervals and quantiles: [`crate::stats`].)

use plotters::style::RGBColor;

use crate::event::SpanKind;

/// The colour of a span kind. Every kind, the device-busy band, every gap cause and the
/// lighter shade of `gpu` and `synthesis` (odd jobs) differ from each other by a CIE76
/// colour difference of at least 20 (tested): MSMs that run side by side on lanes, or a
/// `verify` beside the busy band, never share a colour family.
pub fn kind_color(kind: &SpanKind) -> RGBColor {
    match kind {
        SpanKind::Synthesis => RGBColor(70, 130, 180),
        SpanKind::Witness => RGBColor(8, 180, 219),
        SpanKind::Constraints => RGBColor(116, 97, 139),
        SpanKind::PceBuild => RGBColor(228, 211, 105),
        SpanKind::PceWait => RGBColor(230, 120, 160),
        SpanKind::GpuQueue => RGBColor(213, 232, 241),
        SpanKind::GpuPickup => RGBColor(112, 132, 90),
        SpanKind::Gpu => RGBColor(245, 150, 25),
        SpanKind::PrepMsm => RGBColor(147, 69, 131),
        SpanKind::Ntt => RGBColor(58, 127, 5),
        SpanKind::MsmH => RGBColor(38, 67, 23),
        SpanKind::NttMsmH => RGBColor(135, 236, 142),
        SpanKind::MsmRest => RGBColor(9, 183, 165),
        SpanKind::MsmL => RGBColor(105, 168, 162),
        SpanKind::MsmA => RGBColor(80, 132, 240),
        SpanKind::MsmBG1 => RGBColor(152, 40, 147),
        SpanKind::MsmBG2 => RGBColor(150, 157, 73),
        SpanKind::BatchAdd => RGBColor(174, 18, 68),
        SpanKind::TailMsm => RGBColor(231, 93, 10),
        SpanKind::CpuMsmBG2 => RGBColor(141, 115, 37),
        SpanKind::H2d => RGBColor(47, 238, 232),
        SpanKind::D2h => RGBColor(49, 103, 118),
        SpanKind::ShiftTable => RGBColor(81, 95, 8),
        SpanKind::Setup => RGBColor(184, 126, 159),
        SpanKind::LockWait => RGBColor(187, 223, 145),
        SpanKind::LockHold => RGBColor(148, 120, 98),
        SpanKind::Finalize => RGBColor(255, 102, 228),
        SpanKind::Verify => RGBColor(6, 36, 159),
        SpanKind::Fallback => RGBColor(255, 0, 255),
        SpanKind::RamWait => RGBColor(221, 35, 160),
        SpanKind::Failed => RGBColor(120, 0, 0),
        // Another tool's trace (`read::chrome`): picked as far as possible from the rest.
        SpanKind::Kernel => RGBColor(12, 254, 5),
        SpanKind::Memcpy => RGBColor(3, 6, 253),
        SpanKind::Memset => RGBColor(214, 255, 8),
        SpanKind::Other(_) => RGBColor(34, 40, 88),
    }
}

/// The colour of an idle-gap cause (the analyzer's vocabulary; unknown causes are grey).
pub fn cause_color(cause: &str) -> RGBColor {
    match cause {
        "cold_start" => RGBColor(185, 169, 182),
        "synthesis_starved" => RGBColor(225, 35, 35),
        "memory" => RGBColor(229, 118, 111),
        "dispatch" => RGBColor(196, 146, 0),
        "lock" => RGBColor(137, 16, 179),
        "cpu_prep" => RGBColor(178, 109, 45),
        _ => RGBColor(212, 205, 164),
    }
}

/// The device-busy band of the waterfall (union of a device's `gpu` spans).
pub const BUSY_COLOR: RGBColor = RGBColor(50, 50, 50);

/// How much lighter a top-level bar of every second job is drawn (jobs side by side stay apart).
pub const JOB_SHADE: f64 = 0.35;

/// The causes in the analyzer's order, for stable legends.
pub const CAUSES: [&str; 7] = ["cold_start", "synthesis_starved", "memory", "dispatch", "lock", "cpu_prep", "other"];

/// Mix a colour towards white (`t` = 0: unchanged, 1: white).
pub fn lighten(c: RGBColor, t: f64) -> RGBColor {
    let m = |x: u8| (x as f64 + (255.0 - x as f64) * t).round() as u8;
    RGBColor(m(c.0), m(c.1), m(c.2))
}

/// A number with an SI suffix: 1.5k, 70G, 0.25.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (d, suf) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / d;
    let s = if x.fract() == 0.0 || x.abs() >= 100.0 { format!("{x:.0}") } else if x.abs() >= 10.0 { format!("{x:.1}") } else { format!("{x:.2}") };
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    format!("{s}{suf}")
}

/// A duration given in milliseconds, in the most readable unit.
pub fn duration_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", si(ms / 1000.0))
    } else if ms >= 1.0 {
        format!("{} ms", si(ms))
    } else {
        format!("{} µs", si(ms * 1000.0))
    }
}

/// Quantile of sorted values for a chart: the one definition ([`crate::stats`]), NaN for no
/// values (plotters draws nothing for it).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    crate::stats::quantile_sorted(sorted, q).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    /// CIE L*a*b* of an sRGB colour (D65).
    fn lab(c: RGBColor) -> [f64; 3] {
        let lin = |u: u8| {
            let u = u as f64 / 255.0;
            if u <= 0.04045 { u / 12.92 } else { ((u + 0.055) / 1.055).powf(2.4) }
        };
        let (r, g, b) = (lin(c.0), lin(c.1), lin(c.2));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        [116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))]
    }

    #[test]
    fn every_legend_colour_is_distinct() {
        // Everything a waterfall legend can show, and the shade of odd jobs' top-level bars.
        let mut all: Vec<(String, RGBColor)> = SpanKind::KNOWN.iter().map(|k| (k.as_str().to_string(), kind_color(k))).collect();
        all.push(("other kinds".into(), kind_color(&SpanKind::Other("x".into()))));
        all.push(("device busy".into(), BUSY_COLOR));
        all.extend(CAUSES.iter().map(|c| (format!("idle: {c}"), cause_color(c))));
        all.push(("gpu, odd job".into(), lighten(kind_color(&SpanKind::Gpu), JOB_SHADE)));
        all.push(("synthesis, odd job".into(), lighten(kind_color(&SpanKind::Synthesis), JOB_SHADE)));
        let mut worst = (f64::INFINITY, String::new());
        for (i, (a, ca)) in all.iter().enumerate() {
            for (b, cb) in &all[i + 1..] {
                let (la, lb) = (lab(*ca), lab(*cb));
                let d = ((la[0] - lb[0]).powi(2) + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2)).sqrt();
                if d < worst.0 {
                    worst = (d, format!("{a} / {b}"));
                }
            }
        }
        assert!(worst.0 >= 20.0, "closest pair {} differs by only {:.1}", worst.1, worst.0);
        // The families the issue named: the MSMs of one partition, verify against the busy
        // band and against the `other` gap cause.
        let d = |a: RGBColor, b: RGBColor| {
            let (la, lb) = (lab(a), lab(b));
            ((la[0] - lb[0]).powi(2) + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2)).sqrt()
        };
        assert!(d(kind_color(&SpanKind::MsmBG1), kind_color(&SpanKind::MsmBG2)) > 40.0);
        assert!(d(kind_color(&SpanKind::MsmH), kind_color(&SpanKind::MsmBG1)) > 40.0);
        assert!(d(BUSY_COLOR, cause_color("other")) > 40.0);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(si(7.0e10), "70G");
        assert_eq!(si(1500.0), "1500");
        assert_eq!(si(15000.0), "15k");
        assert_eq!(si(0.25), "0.25");
        assert_eq!(duration_ms(4490.0), "4.49 s");
        assert_eq!(duration_ms(21.0), "21 ms");
        assert_eq!(duration_ms(0.5), "500 µs");
    }
}
