//! Colours and number formats shared by the charts, so that a kind or a gap cause has the
//! same colour in every picture. (Intervals and quantiles: [`crate::stats`].)

use plotters::style::RGBColor;

use crate::event::SpanKind;

/// The colour of a span kind (chosen so that neighbours in a `gpu` call contrast).
pub fn kind_color(kind: &SpanKind) -> RGBColor {
    match kind {
        SpanKind::Synthesis => RGBColor(70, 130, 180),
        SpanKind::Witness => RGBColor(120, 170, 215),
        SpanKind::Constraints => RGBColor(31, 80, 140),
        SpanKind::PceBuild => RGBColor(255, 200, 60),
        SpanKind::GpuQueue => RGBColor(199, 199, 199),
        SpanKind::GpuPickup => RGBColor(160, 160, 160),
        SpanKind::Gpu => RGBColor(245, 166, 35),
        SpanKind::PrepMsm => RGBColor(148, 103, 189),
        SpanKind::Ntt => RGBColor(44, 160, 44),
        SpanKind::MsmH => RGBColor(23, 120, 60),
        SpanKind::NttMsmH => RGBColor(33, 140, 52),
        SpanKind::MsmRest => RGBColor(0, 128, 110),
        SpanKind::MsmL => RGBColor(0, 150, 136),
        SpanKind::MsmA => RGBColor(102, 187, 106),
        SpanKind::MsmBG1 => RGBColor(0, 105, 92),
        SpanKind::MsmBG2 => RGBColor(0, 77, 64),
        SpanKind::BatchAdd => RGBColor(214, 39, 40),
        SpanKind::TailMsm => RGBColor(255, 112, 67),
        SpanKind::CpuMsmBG2 => RGBColor(140, 86, 75),
        SpanKind::H2d => RGBColor(23, 190, 207),
        SpanKind::D2h => RGBColor(100, 210, 230),
        SpanKind::ShiftTable => RGBColor(188, 189, 34),
        SpanKind::Setup => RGBColor(140, 140, 140),
        SpanKind::LockWait => RGBColor(219, 219, 141),
        SpanKind::LockHold => RGBColor(127, 127, 127),
        SpanKind::Finalize => RGBColor(227, 119, 194),
        SpanKind::Verify => RGBColor(106, 61, 154),
        SpanKind::Fallback => RGBColor(255, 0, 255),
        SpanKind::RamWait => RGBColor(250, 128, 114),
        SpanKind::Other(_) => RGBColor(90, 90, 90),
    }
}

/// The colour of an idle-gap cause (the analyzer's vocabulary; unknown causes are grey).
pub fn cause_color(cause: &str) -> RGBColor {
    match cause {
        "cold_start" => RGBColor(170, 170, 170),
        "synthesis_starved" => RGBColor(220, 40, 40),
        "memory" => RGBColor(250, 128, 114),
        "dispatch" => RGBColor(255, 140, 0),
        "lock" => RGBColor(150, 90, 200),
        "cpu_prep" => RGBColor(160, 100, 60),
        _ => RGBColor(90, 90, 90),
    }
}

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
