//! Line wrappers: a provider rarely has the daemon's bare stderr. Under systemd the
//! TIMELINE lines are read back through `journalctl` — with the journal's short prefix
//! (`Dec 01 13:00:00 host cuzk[1234]: TIMELINE,…`, also `-o short-iso` /
//! `short-precise`), or as one JSON object per line (`-o json`: the line in `MESSAGE`, the
//! wall clock in `__REALTIME_TIMESTAMP`, µs since the epoch, the host in `_HOSTNAME`);
//! under Docker's json-file driver each line is `{"log":"…\n","stream":…,"time":"RFC 3339"}`;
//! and the daemon's own structured log (`format = "json"`) puts JSON objects between them.
//! This module takes one such line and gives back the text inside, with the wall clock
//! and host the wrapper adds. Detection is by content, line by line (formats mix where
//! logs were concatenated); [`Wrapper`] forces one (`--format journal` …).
//!
//! Nothing here fails: a line that is not of the forced wrapper, or a JSON object that
//! carries no log line, comes back with an empty text (an ordinary line, counted as
//! ignored by the reader).

use std::borrow::Cow;

use serde::Deserialize;

/// How a line was wrapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wrapper {
    /// The daemon's stderr as it is (TIMELINE lines, ordinary log lines).
    Plain,
    /// `journalctl`'s short formats: `Mon DD HH:MM:SS host ident[pid]: line` (also with
    /// fractional seconds, and the ISO date of `-o short-iso`).
    Journal,
    /// `journalctl -o json`: the line in `MESSAGE`.
    JournalJson,
    /// Docker's json-file driver: the line in `log`.
    Docker,
    /// A JSON object that is none of the above: the daemon's structured log
    /// (`format = "json"`), kept only if its message is a TIMELINE line.
    DaemonJson,
}

impl Wrapper {
    pub const ALL: [Wrapper; 5] = [Wrapper::Plain, Wrapper::Journal, Wrapper::JournalJson, Wrapper::Docker, Wrapper::DaemonJson];
    pub fn as_str(self) -> &'static str {
        match self {
            Wrapper::Plain => "plain",
            Wrapper::Journal => "journal",
            Wrapper::JournalJson => "journal_json",
            Wrapper::Docker => "docker",
            Wrapper::DaemonJson => "daemon_json",
        }
    }
}

/// One line with its wrapper taken off.
#[derive(Clone, Debug, PartialEq)]
pub struct Unwrapped<'a> {
    /// The daemon's line (empty when the wrapper carries none).
    pub text: Cow<'a, str>,
    pub wrapper: Wrapper,
    /// Wall-clock time the wrapper gives, ns since the Unix epoch.
    pub wall_ns: Option<i64>,
    /// Host the wrapper names.
    pub host: Option<String>,
}

impl<'a> Unwrapped<'a> {
    fn plain(text: &'a str) -> Self {
        Unwrapped { text: Cow::Borrowed(text), wrapper: Wrapper::Plain, wall_ns: None, host: None }
    }
    fn empty(wrapper: Wrapper) -> Self {
        Unwrapped { text: Cow::Borrowed(""), wrapper, wall_ns: None, host: None }
    }
}

/// The fields of the JSON wrappers we read; every other field is skipped.
#[derive(Deserialize, Default)]
#[serde(default)]
struct JsonLine<'a> {
    /// journald: a string, or an array of bytes when the line is not UTF-8; null when empty.
    #[serde(rename = "MESSAGE")]
    message_journal: Option<serde_json::Value>,
    #[serde(rename = "__REALTIME_TIMESTAMP", borrow)]
    realtime: Option<Cow<'a, str>>,
    #[serde(rename = "_HOSTNAME", borrow)]
    hostname: Option<Cow<'a, str>>,
    /// Docker json-file.
    #[serde(borrow)]
    log: Option<Cow<'a, str>>,
    #[serde(borrow)]
    time: Option<Cow<'a, str>>,
    /// The daemon's structured log (tracing-subscriber's JSON: `fields.message`; others:
    /// `message` or `msg`).
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow)]
    msg: Option<Cow<'a, str>>,
    fields: Option<Fields<'a>>,
    /// Our own JSON-lines records carry it (`meta`, `span`, `counter`).
    #[serde(rename = "type", borrow)]
    record_type: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Fields<'a> {
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
}

/// True when `line` is a JSON object that is one of our own records (`{"type":"span",…}`):
/// how the reader tells our JSON lines from JSON-wrapped daemon lines. `None` when the line
/// is not a JSON object at all.
pub fn is_our_record(line: &str) -> Option<bool> {
    let t = line.trim();
    if !t.starts_with('{') {
        return None;
    }
    let j: JsonLine<'_> = serde_json::from_str(t).ok()?;
    Some(matches!(j.record_type.as_deref(), Some("meta" | "span" | "counter")))
}

/// Take the wrapper off one line: detected by content, or the `forced` one.
pub fn unwrap_line(line: &str, forced: Option<Wrapper>) -> Unwrapped<'_> {
    let t = line.trim_start();
    match forced {
        Some(Wrapper::Plain) => return Unwrapped::plain(line),
        Some(Wrapper::Journal) => return journal_short(t).unwrap_or_else(|| Unwrapped::empty(Wrapper::Journal)),
        Some(w) => {
            let u = if t.starts_with('{') { json(t) } else { None };
            return match u {
                Some(u) if u.wrapper == w => u,
                _ => Unwrapped::empty(w),
            };
        }
        None => {}
    }
    // The common case first: a bare TIMELINE line.
    if t.starts_with("TIMELINE,") {
        return Unwrapped::plain(line);
    }
    if t.starts_with('{') {
        if let Some(u) = json(t) {
            return u;
        }
        return Unwrapped::plain(line);
    }
    journal_short(t).unwrap_or_else(|| Unwrapped::plain(line))
}

/// A JSON-wrapped line; `None` when `t` is not a JSON object.
fn json(t: &str) -> Option<Unwrapped<'_>> {
    let j: JsonLine<'_> = serde_json::from_str(t.trim_end()).ok()?;
    let host = j.hostname.as_deref().map(str::to_string);
    if let Some(m) = j.message_journal {
        let text: String = match m {
            serde_json::Value::String(s) => s,
            // Non-UTF-8 messages come as an array of bytes.
            serde_json::Value::Array(a) => {
                let bytes: Vec<u8> = a.iter().filter_map(|v| v.as_u64()).map(|b| b as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            _ => String::new(),
        };
        let wall_ns = j.realtime.as_deref().and_then(|r| r.trim().parse::<i64>().ok()).map(|us| us.saturating_mul(1000));
        return Some(Unwrapped { text: Cow::Owned(text), wrapper: Wrapper::JournalJson, wall_ns, host });
    }
    if let Some(l) = j.log {
        let text = match l {
            Cow::Borrowed(s) => Cow::Owned(s.trim_end_matches(['\n', '\r']).to_string()),
            Cow::Owned(mut s) => {
                while s.ends_with(['\n', '\r']) {
                    s.pop();
                }
                Cow::Owned(s)
            }
        };
        let wall_ns = j.time.as_deref().and_then(rfc3339_ns);
        return Some(Unwrapped { text, wrapper: Wrapper::Docker, wall_ns, host });
    }
    // The daemon's structured log: kept only when its message is a TIMELINE line.
    let msg = j.fields.and_then(|f| f.message).or(j.message).or(j.msg);
    let text = match msg {
        Some(m) if m.contains("TIMELINE,") => Cow::Owned(m.into_owned()),
        _ => Cow::Borrowed(""),
    };
    let wall_ns = j.time.as_deref().and_then(rfc3339_ns);
    Some(Unwrapped { text, wrapper: Wrapper::DaemonJson, wall_ns, host })
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The year assumed for journald's short prefix, which has none: a leap year, so that
/// Feb 29 parses. Only differences of wall clocks are used (to place daemon runs on one
/// axis), and they are right unless the log crosses a new year (use `-o short-iso` or
/// `-o json` for such logs).
pub const SHORT_PREFIX_YEAR: i64 = 2000;

/// `Mon DD HH:MM:SS[.ffffff] host ident[pid]: message`, or
/// `YYYY-MM-DDTHH:MM:SS[.f](Z|±hhmm|±hh:mm) host ident[pid]: message` (`-o short-iso`).
fn journal_short(t: &str) -> Option<Unwrapped<'_>> {
    let (wall_ns, rest) = if t.len() > 16 && MONTHS.contains(&t.get(..3)?) && t.as_bytes()[3] == b' ' {
        let month = MONTHS.iter().position(|m| *m == &t[..3])? as i64 + 1;
        let day: i64 = t.get(4..6)?.trim().parse().ok()?;
        let rest = t.get(6..)?.strip_prefix(' ')?;
        let (clock, rest) = rest.split_once(' ')?;
        let ns = clock_ns(clock)?;
        (days_from_civil(SHORT_PREFIX_YEAR, month, day) * 86_400 * 1_000_000_000 + ns, rest)
    } else if t.len() > 20 && t.as_bytes()[4] == b'-' && t.as_bytes()[10] == b'T' {
        let (stamp, rest) = t.split_once(' ')?;
        (rfc3339_ns(stamp)?, rest)
    } else {
        return None;
    };
    // host, then `ident[pid]:` or `ident:`, then the message.
    let (host, rest) = rest.split_once(' ')?;
    let colon = rest.find(": ")?;
    let ident = &rest[..colon];
    if ident.is_empty() || ident.contains(' ') {
        return None;
    }
    Some(Unwrapped { text: Cow::Borrowed(&rest[colon + 2..]), wrapper: Wrapper::Journal, wall_ns: Some(wall_ns), host: Some(host.to_string()) })
}

/// `HH:MM:SS[.fraction]` → ns since midnight.
fn clock_ns(c: &str) -> Option<i64> {
    let (hms, frac) = match c.split_once('.') {
        Some((a, f)) => (a, Some(f)),
        None => (c, None),
    };
    let mut it = hms.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let s: i64 = it.next()?.parse().ok()?;
    if it.next().is_some() || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut ns = ((h * 60 + m) * 60 + s) * 1_000_000_000;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        ns += f.parse::<i64>().ok()? * 10i64.pow(9 - f.len() as u32);
    }
    Some(ns)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 timestamp (`2024-12-01T13:00:00.123456789Z`, `…+01:00`, `…+0100`) → ns since
/// the epoch.
pub fn rfc3339_ns(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let y: i64 = s.get(0..4)?.parse().ok()?;
    let mo: i64 = s.get(5..7)?.parse().ok()?;
    let d: i64 = s.get(8..10)?.parse().ok()?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let rest = s.get(11..)?;
    let tz_at = rest.find(['Z', 'z', '+', '-'])?;
    let clock = clock_ns(&rest[..tz_at])?;
    let tz = &rest[tz_at..];
    let offset_s: i64 = if tz.eq_ignore_ascii_case("z") {
        0
    } else {
        let sign = if tz.starts_with('-') { -1 } else { 1 };
        let digits: String = tz[1..].chars().filter(|c| *c != ':').collect();
        if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let h: i64 = digits[..2].parse().ok()?;
        let m: i64 = digits[2..].parse().ok()?;
        sign * (h * 3600 + m * 60)
    };
    // Checked: a year past 2262 does not fit i64 nanoseconds (None, not an overflow).
    days_from_civil(y, mo, d).checked_mul(86_400 * 1_000_000_000)?.checked_add(clock)?.checked_sub(offset_s * 1_000_000_000)
}

/// `ns` since the epoch as RFC 3339 UTC with nanoseconds (`2026-12-03T10:00:00.123456789Z`):
/// the inverse of [`rfc3339_ns`] (Howard Hinnant's civil_from_days, the inverse of
/// [`days_from_civil`]).
pub fn rfc3339_utc(ns: i64) -> String {
    let (secs, sub) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{sub:09}Z", sod / 3600, sod % 3600 / 60, sod % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_utc_is_the_inverse_of_rfc3339_ns() {
        for s in ["1970-01-01T00:00:00.000000000Z", "2026-12-03T10:04:05.123456789Z", "2000-02-29T23:59:59.999999999Z", "2100-03-01T00:00:00.000000001Z"] {
            let ns = rfc3339_ns(s).unwrap();
            assert_eq!(rfc3339_utc(ns), s);
        }
    }

    const L: &str = "TIMELINE,29137,SYNTH_END,j1,partition=4,synth_ms=29137";

    #[test]
    fn plain_and_ordinary_lines_pass_through() {
        let u = unwrap_line(L, None);
        assert_eq!((u.text.as_ref(), u.wrapper, u.wall_ns), (L, Wrapper::Plain, None));
        let o = "2026-11-30T05:00:00.000Z  INFO cuzk_core::engine: partition synthesis complete";
        assert_eq!(unwrap_line(o, None).wrapper, Wrapper::Plain);
    }

    #[test]
    fn journal_short_prefix() {
        let l1 = format!("Dec 01 13:00:00 gpu-host-3 cuzk[1234]: {L}");
        let u = unwrap_line(&l1, None);
        assert_eq!(u.text, L);
        assert_eq!(u.wrapper, Wrapper::Journal);
        assert_eq!(u.host.as_deref(), Some("gpu-host-3"));
        let base = unwrap_line(&format!("Dec 01 00:00:00 h cuzk[1]: {L}"), None).wall_ns.unwrap();
        assert_eq!(u.wall_ns.unwrap() - base, 13 * 3600 * 1_000_000_000);
        // short-precise and a single-digit day (padded with a space).
        let l2 = format!("Dec  1 13:00:00.250000 h cuzk[1]: {L}");
        let p = unwrap_line(&l2, None);
        assert_eq!(p.wall_ns.unwrap() - u.wall_ns.unwrap(), 250_000_000);
        // short-iso
        let l3 = format!("2024-12-01T13:00:00+0000 h cuzk[1]: {L}");
        let i = unwrap_line(&l3, None);
        assert_eq!(i.wall_ns, Some(1_733_058_000_000_000_000));
        assert_eq!(i.text, L);
        // Not a journal prefix: an ordinary line stays plain.
        assert_eq!(unwrap_line("Decided to do things", None).wrapper, Wrapper::Plain);
    }

    #[test]
    fn journal_json() {
        let line = format!(r#"{{"__CURSOR":"s=1","__REALTIME_TIMESTAMP":"1733058000123456","_HOSTNAME":"h7","MESSAGE":"{L}","_PID":"12"}}"#);
        let u = unwrap_line(&line, None);
        assert_eq!((u.text.as_ref(), u.wrapper), (L, Wrapper::JournalJson));
        assert_eq!(u.wall_ns, Some(1_733_058_000_123_456_000));
        assert_eq!(u.host.as_deref(), Some("h7"));
        // A message journald stored as bytes.
        let bytes: Vec<String> = L.bytes().map(|b| b.to_string()).collect();
        let line = format!(r#"{{"MESSAGE":[{}]}}"#, bytes.join(","));
        assert_eq!(unwrap_line(&line, None).text, L);
        assert_eq!(is_our_record(&line), Some(false));
    }

    #[test]
    fn docker_json_file() {
        let line = format!(r#"{{"log":"{L}\n","stream":"stderr","time":"2024-12-01T13:00:00.5Z"}}"#);
        let u = unwrap_line(&line, None);
        assert_eq!((u.text.as_ref(), u.wrapper), (L, Wrapper::Docker));
        assert_eq!(u.wall_ns, Some(1_733_058_000_500_000_000));
    }

    #[test]
    fn the_daemons_json_log_is_skipped_unless_it_carries_a_timeline_line() {
        let info = r#"{"timestamp":"2024-12-01T13:00:00Z","level":"INFO","fields":{"message":"partition synthesis complete"},"target":"cuzk_core"}"#;
        let u = unwrap_line(info, None);
        assert_eq!((u.text.as_ref(), u.wrapper), ("", Wrapper::DaemonJson));
        let tl = format!(r#"{{"level":"INFO","fields":{{"message":"{L}"}}}}"#);
        assert_eq!(unwrap_line(&tl, None).text, L);
    }

    #[test]
    fn our_records_are_told_apart() {
        assert_eq!(is_our_record(r#"{"type":"span","kind":"gpu","start_ns":0}"#), Some(true));
        assert_eq!(is_our_record(r#"{"MESSAGE":"x"}"#), Some(false));
        assert_eq!(is_our_record("TIMELINE,1"), None);
    }

    #[test]
    fn a_forced_wrapper_takes_only_its_lines() {
        let docker = format!(r#"{{"log":"{L}\n","time":"2024-12-01T13:00:00Z"}}"#);
        assert_eq!(unwrap_line(&docker, Some(Wrapper::JournalJson)).text, "");
        assert_eq!(unwrap_line(&docker, Some(Wrapper::Docker)).text, L);
        assert_eq!(unwrap_line(L, Some(Wrapper::Journal)).text, "");
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_ns("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(rfc3339_ns("2000-03-01T00:00:00Z"), Some(951_868_800_000_000_000));
        assert_eq!(rfc3339_ns("2024-12-01T13:00:00.123456789Z"), Some(1_733_058_000_123_456_789));
        // Past i64 nanoseconds (2262-04-11): none, not an overflow.
        for bad in ["", "2024-13-01T00:00:00Z", "2024-12-01T25:00:00Z", "2024-12-01T13:00:00", "x024-12-01T13:00:00Z", "2999-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            assert_eq!(rfc3339_ns(bad), None, "{bad}");
        }
    }
}
