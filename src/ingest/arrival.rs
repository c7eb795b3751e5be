//! Which moment of a request its event is stamped with: when it arrived, or
//! when the server wrote the log line (usually when the response ended).
//!
//! Limiters decide on arrival, so replay is faithful only on arrival times.
//! Where a format tells when the request arrived (a start time, or an end time
//! and the request's duration), the parser uses it by default; `--time-of
//! logged` asks for the time as written.

use super::time::Stamp;

/// `--time-of`: the moment an event is stamped with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeOf {
    /// When the request arrived, where the format tells (else as logged).
    #[default]
    Arrival,
    /// The time as the log line has it.
    Logged,
}

impl TimeOf {
    /// Parses `arrival` or `logged` (the `--time-of` values).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "arrival" => Ok(TimeOf::Arrival),
            "logged" => Ok(TimeOf::Logged),
            other => Err(format!("`{other}`: expected arrival or logged")),
        }
    }
}

/// The arrival of a request that ended at `end` after `duration_ms`.
///
/// A whole-second end time (`$time_local`, W3C `time`) only says that the
/// request ended within that second; the arrival is then the second holding
/// the middle of the possible arrivals (`end + 0.5 s − duration`), so the
/// events keep whole-second resolution.
pub fn arrival_from_end(end: Stamp, duration_ms: i64) -> Stamp {
    if end.subsecond {
        Stamp {
            ms: end.ms - duration_ms,
            subsecond: true,
        }
    } else {
        Stamp {
            ms: (end.ms + 500 - duration_ms).div_euclid(1000) * 1000,
            subsecond: false,
        }
    }
}

/// The end of a request that arrived at `start` and took `duration_ms`.
pub fn end_from_arrival(start: Stamp, duration_ms: i64) -> Stamp {
    Stamp {
        ms: start.ms + duration_ms,
        subsecond: start.subsecond || duration_ms % 1000 != 0,
    }
}

/// A duration written as decimal seconds (`0.003`, `1.5`, `12`, Go's `1.5s`),
/// in milliseconds (rounded down); `None` for `-`, negatives and anything else.
pub fn seconds_text_ms(text: &[u8]) -> Option<i64> {
    let text = text.strip_suffix(b"s").unwrap_or(text);
    let (whole, fraction) = match memchr::memchr(b'.', text) {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    if whole.is_empty() && fraction.is_empty() || whole.len() > 12 {
        return None;
    }
    let digits = |d: &[u8]| d.iter().all(u8::is_ascii_digit);
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let seconds = whole
        .iter()
        .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
    let millis = fraction
        .iter()
        .chain(std::iter::repeat(&b'0'))
        .take(3)
        .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
    Some(seconds * 1000 + millis)
}

/// A duration written as whole milliseconds (`12`, HAProxy `Ta`, Envoy
/// `%DURATION%`, Traefik's `12ms`); `None` for `-`, `-1` and anything else.
pub fn millis_text(text: &[u8]) -> Option<i64> {
    let text = text.strip_suffix(b"ms").unwrap_or(text);
    if text.is_empty() || text.len() > 15 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        text.iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0')),
    )
}

/// A Caddy `duration` in ms, in whichever `duration_format` the log has
/// (caddyserver/caddy `modules/logging/encoders.go`, zap's encoders): float
/// seconds (the default), whole nanoseconds (`ns`, `nano`), or Go's
/// `Duration.String()` (`string`: `1m2.5s`, `2.5ms`, `150µs`). A number is
/// read as seconds, but a whole number above a day's seconds, which no
/// request lasts, as nanoseconds (zap writes nanoseconds whole); `millis`
/// floats cannot be told from seconds and are read as seconds (found by
/// review: `duration_format nano` moved arrivals days back).
pub fn caddy_duration_ms(text: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(text).ok()?.trim();
    if let Ok(number) = text.parse::<f64>() {
        let whole = !text.contains(['.', 'e', 'E']);
        return Some(match whole && number > 86_400.0 {
            true => number / 1e6,
            false => number * 1e3,
        });
    }
    go_duration_ms(text)
}

/// Go's `time.Duration` text (`1h2m3.5s`, `2.5ms`, `150µs`, `0s`) in ms.
fn go_duration_ms(text: &str) -> Option<f64> {
    // Nanoseconds per unit.
    const UNITS: [(&str, f64); 8] = [
        ("ns", 1.0),
        ("us", 1e3),
        ("\u{b5}s", 1e3),
        ("\u{3bc}s", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
        ("m", 60e9),
        ("h", 3600e9),
    ];
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    let mut total = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&end| end > 0)?;
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        // The longest unit that starts here (`ms` before `m`).
        let (unit, scale) = (UNITS.iter())
            .filter(|(unit, _)| rest.starts_with(unit))
            .max_by_key(|(unit, _)| unit.len())?;
        total += value * scale;
        rest = &rest[unit.len()..];
    }
    (!text.is_empty()).then_some(total / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn caddy_durations_in_every_format() {
        let ms = |t: &str| caddy_duration_ms(t.as_bytes());
        // Seconds (the default), whole nanoseconds, Go's text.
        assert_eq!(ms("0.0125"), Some(12.5));
        assert_eq!(ms("2"), Some(2000.0));
        assert_eq!(ms("1000000"), Some(1.0));
        assert_eq!(ms("125000000"), Some(125.0));
        assert_eq!(ms("86400"), Some(86_400_000.0));
        assert_eq!(ms("1m2.5s"), Some(62_500.0));
        assert_eq!(ms("2.5ms"), Some(2.5));
        assert_eq!(ms("150\u{b5}s"), Some(0.15));
        assert_eq!(ms("150us"), Some(0.15));
        assert_eq!(ms("1h0m0s"), Some(3_600_000.0));
        assert_eq!(ms("0s"), Some(0.0));
        assert_eq!(ms("800ns"), Some(0.0008));
        for bad in ["", "s", "1x", "-", "1.2.3s", "ms5"] {
            assert_eq!(ms(bad), None, "{bad}");
        }
    }

    proptest::proptest! {
        /// Go's `Duration.String()` of any duration (`1h2m3.5s`, `2.5ms`,
        /// `150µs`, `800ns`) reads back as that many milliseconds.
        #[test]
        fn go_durations_read_back(
            ns in (0u64..1_000_000, 0u32..9).prop_map(|(m, k)| m * 10u64.pow(k)),
        ) {
            let ms = caddy_duration_ms(go_text(ns).as_bytes()).unwrap();
            let want = ns as f64 / 1e6;
            proptest::prop_assert!((ms - want).abs() <= want * 1e-12 + 1e-9, "{} gave {} for {}", go_text(ns), ms, want);
        }
    }

    /// `time.Duration.String()` as Go writes it (src/time/time.go).
    fn go_text(ns: u64) -> String {
        let fraction = |value: u64, digits: usize| {
            let text = format!("{value:0digits$}");
            match text.trim_end_matches('0') {
                "" => String::new(),
                kept => format!(".{kept}"),
            }
        };
        match ns {
            0 => "0s".into(),
            1..1_000 => format!("{ns}ns"),
            1_000..1_000_000 => format!("{}{}\u{b5}s", ns / 1_000, fraction(ns % 1_000, 3)),
            1_000_000..1_000_000_000 => {
                format!("{}{}ms", ns / 1_000_000, fraction(ns % 1_000_000, 6))
            }
            _ => {
                let (h, m) = (ns / 3_600_000_000_000, ns / 60_000_000_000 % 60);
                let s = format!(
                    "{}{}s",
                    ns / 1_000_000_000 % 60,
                    fraction(ns % 1_000_000_000, 9)
                );
                match (h, m) {
                    (0, 0) => s,
                    (0, m) => format!("{m}m{s}"),
                    (h, m) => format!("{h}h{m}m{s}"),
                }
            }
        }
    }

    fn stamp(ms: i64, subsecond: bool) -> Stamp {
        Stamp { ms, subsecond }
    }

    #[test]
    fn arrival_subtracts_the_duration() {
        assert_eq!(
            arrival_from_end(stamp(10_250, true), 300),
            stamp(9_950, true)
        );
        // Whole seconds: ended within [10 s, 11 s); after 0.3 s the arrival is
        // within [9.7 s, 10.7 s): most likely second 10.
        assert_eq!(
            arrival_from_end(stamp(10_000, false), 300),
            stamp(10_000, false)
        );
        assert_eq!(
            arrival_from_end(stamp(10_000, false), 700),
            stamp(9_000, false)
        );
        assert_eq!(
            arrival_from_end(stamp(10_000, false), 1_700),
            stamp(8_000, false)
        );
        assert_eq!(
            end_from_arrival(stamp(9_000, false), 1_500),
            stamp(10_500, true)
        );
        assert_eq!(
            end_from_arrival(stamp(9_000, false), 2_000),
            stamp(11_000, false)
        );
    }

    #[test]
    fn durations_as_text() {
        assert_eq!(seconds_text_ms(b"0.003"), Some(3));
        assert_eq!(seconds_text_ms(b"1.5"), Some(1_500));
        assert_eq!(seconds_text_ms(b"1.5s"), Some(1_500));
        assert_eq!(seconds_text_ms(b"12"), Some(12_000));
        assert_eq!(seconds_text_ms(b"0.0004"), Some(0));
        for bad in [&b"-"[..], b"-1", b"", b".", b"1.2.3", b"x"] {
            assert_eq!(seconds_text_ms(bad), None, "{bad:?}");
        }
        assert_eq!(millis_text(b"109"), Some(109));
        assert_eq!(millis_text(b"12ms"), Some(12));
        assert_eq!(millis_text(b"-1"), None);
        assert_eq!(millis_text(b"+1"), None);
    }

    #[test]
    fn time_of_names() {
        assert_eq!(TimeOf::parse("arrival"), Ok(TimeOf::Arrival));
        assert_eq!(TimeOf::parse("logged"), Ok(TimeOf::Logged));
        assert!(TimeOf::parse("start").is_err());
    }
}
