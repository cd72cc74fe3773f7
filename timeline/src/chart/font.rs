//! The embedded font. plotters' `ab_glyph` backend draws text only with fonts registered
//! at run time, so charts carry their own (DejaVu Sans, license in
//! `timeline/assets/DejaVuSans-LICENSE.txt`) and never depend on fonts of the host.

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle};

use super::ChartError;

/// The family name charts ask for; the embedded font is registered under it.
pub const FAMILY: &str = "sans-serif";

static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
static REGISTERED: OnceLock<bool> = OnceLock::new();

/// Register the embedded font with plotters (once per process; cheap afterwards).
/// Every chart function calls it; other crates drawing with plotters (the simulator's
/// sweep plots) call it before their first text.
pub fn ensure_font() -> Result<(), ChartError> {
    let ok = *REGISTERED.get_or_init(|| {
        [FontStyle::Normal, FontStyle::Bold, FontStyle::Italic, FontStyle::Oblique]
            .into_iter()
            .all(|style| register_font(FAMILY, style, FONT_BYTES).is_ok())
    });
    if ok {
        Ok(())
    } else {
        Err(ChartError::Font)
    }
}
