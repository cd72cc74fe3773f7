//! `report.html` in a real browser: `analyze` writes the page, headless Chromium (Debian's
//! package) loads it from disk with the network off, and the page must say
//! `data-status="ok"` (its script ran without error and drew the waterfall) and a screenshot
//! must show more than a blank page. A page whose data block is broken must say `error`, so
//! the check can fail. A two-device run's page (the real two-H200 run) carries its *Devices
//! and the host* section and loads as well.
//!
//! Chromium is looked up at `$PROOFSCOPE_CHROMIUM`, then `/usr/bin/chromium`. Without it the
//! browser checks are skipped with a message, unless `PROOFSCOPE_REQUIRE_CHROMIUM=1` (set by
//! `.ci/run`, which installs it), which makes a missing browser a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{run, SAMPLE};

fn chromium() -> Option<PathBuf> {
    let p = std::env::var_os("PROOFSCOPE_CHROMIUM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var("PROOFSCOPE_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
        "PROOFSCOPE_REQUIRE_CHROMIUM=1 but no Chromium at {}",
        p.display()
    );
    eprintln!("SKIPPED: no Chromium at {} (apt-get install chromium, or set PROOFSCOPE_CHROMIUM)", p.display());
    None
}

/// Chromium as the project runs it: headless, no sandbox (CI runs as root), no network
/// services, a fresh profile.
fn browser(chrome: &Path, profile: &Path, extra: &[String], page: &Path) -> std::process::Output {
    let mut c = Command::new(chrome);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--virtual-time-budget=3000",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c.args(extra);
    c.arg(format!("file://{}", page.display()));
    c.output().expect("run chromium")
}

fn status_of(dom: &str) -> Option<String> {
    let i = dom.find("data-status=\"")? + "data-status=\"".len();
    Some(dom[i..i + dom[i..].find('"')?].to_string())
}

#[test]
fn report_html_loads_in_a_headless_browser_and_draws() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sample.log"), SAMPLE).unwrap();
    let r = run(&["analyze", "sample.log", "-o", "rep"], d.path(), Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let page = d.path().join("rep/report.html");
    let html = std::fs::read_to_string(&page).expect("analyze writes report.html");
    assert!(html.contains("id=\"cv\"") && html.contains("application/json"), "the page carries its waterfall and data");
    assert!(html.contains("<svg"), "the charts are inline");
    let Some(chrome) = chromium() else { return };

    let profile = d.path().join("profile");
    let out = browser(&chrome, &profile, &["--dump-dom".into()], &page);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_eq!(status_of(&dom).as_deref(), Some("ok"), "the page's script failed; stderr:\n{}", String::from_utf8_lossy(&out.stderr));

    let shot = d.path().join("shot.png");
    let out = browser(&chrome, &profile, &[format!("--screenshot={}", shot.display()), "--window-size=1400,1000".into()], &page);
    let png = std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot; stderr:\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    // A blank 1400 × 1000 page compresses to a few kB; the report with its bars is far larger.
    assert!(png.len() > 30_000, "the screenshot looks blank ({} bytes)", png.len());
    if let Some(keep) = std::env::var_os("PROOFSCOPE_KEEP_SCREENSHOT") {
        let _ = std::fs::copy(&shot, keep);
    }

    // The check can fail: the same page with its data block emptied reports the error.
    let start = html.find("type=\"application/json\">").unwrap() + "type=\"application/json\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let broken = format!("{}{{}}{}", &html[..start], &html[end..]);
    let bad = d.path().join("broken.html");
    std::fs::write(&bad, broken).unwrap();
    let out = browser(&chrome, &profile, &["--dump-dom".into()], &bad);
    let st = status_of(&String::from_utf8_lossy(&out.stdout)).unwrap_or_default();
    assert!(st.starts_with("error"), "a broken page must report an error, got {st:?}");
}

/// With two devices the page has its *Devices and the host* section (static HTML before the
/// waterfall) and its script still runs: status `ok`, the section in the browser's DOM.
#[test]
fn a_two_device_report_html_loads_with_its_devices_section() {
    let d = tempfile::tempdir().unwrap();
    let log = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reports/gpu/data/2026-11-30-multi-gpu-d2.jsonl.gz");
    let r = run(&["analyze", log.to_str().unwrap(), "-o", "rep"], d.path(), Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let page = d.path().join("rep/report.html");
    let Some(chrome) = chromium() else { return };
    let out = browser(&chrome, &d.path().join("profile"), &["--dump-dom".into()], &page);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_eq!(status_of(&dom).as_deref(), Some("ok"), "the page's script failed; stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(dom.contains("Devices and the host: host") && dom.contains("class=\"devices\""), "the section is in the DOM");
}
