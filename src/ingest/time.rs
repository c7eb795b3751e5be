//! Timestamp parsing for every shape access logs use, to UTC milliseconds:
//! nginx/Apache `$time_local` (`10/Oct/2000:13:55:36 -0700`), ISO 8601 / RFC 3339
//! (`$time_iso8601`, JSON loggers), and epoch numbers (`$msec`, Caddy's float `ts`,
//! epoch milliseconds). Zone offsets are honoured.
//!
//! Each parser reports whether the text carried a fraction of a second, so the
//! input's resolution can be tracked. Hand-written: this runs once per line.

use crate::text::time::days_from_civil;
#[cfg(test)]
use crate::text::time::{civil_from_days, format_rfc3339};
use crate::units::Millis;

pub use crate::units::{EARLIEST_MS, LATEST_MS, in_range};

/// A parsed timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// UTC milliseconds since the Unix epoch.
    pub ms: Millis,
    /// True when the text had a fractional-second part.
    pub subsecond: bool,
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 9 {
        return None;
    }
    b.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// The month (1–12) of its three-letter English name, in any case (`Jan`).
pub(crate) fn month_from_abbrev(m: &[u8]) -> Option<u32> {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    MONTHS
        .iter()
        .position(|name| name.eq_ignore_ascii_case(m))
        .map(|i| i as u32 + 1)
}

/// Whether the date exists: `31/Feb` and `29/Feb/2023` do not (they are bad
/// timestamps, not days of March).
fn valid_date(year: i64, month: u32, day: u32) -> bool {
    (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && (1..=days_in(year, month)).contains(&day)
}

/// Days of `month` (1 to 12) in `year`, in the proleptic Gregorian calendar.
fn days_in(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn hms_ms(h: u32, m: u32, s: u32) -> Option<i64> {
    (h < 24 && m < 60 && s <= 60).then(|| i64::from(h * 3600 + m * 60 + s) * 1000)
}

/// `+HHMM`, `-HHMM`, `+HH:MM`, `Z`: the offset east of UTC in milliseconds.
fn zone_offset_ms(z: &[u8]) -> Option<i64> {
    match z {
        b"Z" | b"z" | b"" => Some(0),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest {
                [h1, h2, b':', m1, m2] | [h1, h2, m1, m2] => ([*h1, *h2], [*m1, *m2]),
                [h1, h2] => ([*h1, *h2], [b'0', b'0']),
                _ => return None,
            };
            let (h, m) = (digits(&h)?, digits(&m)?);
            if h > 23 || m > 59 {
                return None;
            }
            let ms = i64::from(h * 60 + m) * 60_000;
            Some(if *sign == b'-' { -ms } else { ms })
        }
        _ => None,
    }
}

/// nginx/Apache `$time_local`: `10/Oct/2000:13:55:36 -0700` (brackets already removed).
pub fn parse_clf(text: &[u8]) -> Option<Stamp> {
    if text.len() < 20 || text[2] != b'/' || text[6] != b'/' || text[11] != b':' {
        return None;
    }
    let day = digits(&text[0..2])?;
    let month = month_from_abbrev(&text[3..6])?;
    let year = i64::from(digits(&text[7..11])?);
    if !valid_date(year, month, day) || text[14] != b':' || text[17] != b':' {
        return None;
    }
    let clock = hms_ms(
        digits(&text[12..14])?,
        digits(&text[15..17])?,
        digits(&text[18..20])?,
    )?;
    let rest = &text[20..];
    let (frac_ms, subsecond, rest) = fraction(rest);
    let zone = rest.strip_prefix(b" ").unwrap_or(rest);
    let offset = zone_offset_ms(zone)?;
    let ms = days_from_civil(year, month, day) * 86_400_000 + clock + frac_ms - offset;
    Some(Stamp { ms, subsecond })
}

/// An optional `.123…` fraction: milliseconds (truncated), whether present, rest of text.
fn fraction(text: &[u8]) -> (i64, bool, &[u8]) {
    let Some(after_dot) = text.strip_prefix(b".").or_else(|| text.strip_prefix(b",")) else {
        return (0, false, text);
    };
    let n = after_dot.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 {
        return (0, false, text);
    }
    let mut ms = 0i64;
    for i in 0..3 {
        ms = ms * 10
            + after_dot
                .get(i)
                .filter(|_| i < n)
                .map_or(0, |&c| i64::from(c - b'0'));
    }
    (ms, true, &after_dot[n..])
}

/// ISO 8601 / RFC 3339: `2026-01-05T00:00:00Z`, `…T03:56:14+03:30`, `… 00:00:00.123456`,
/// and Go's wall clock `2026/01/05 00:00:00.500`; without a zone meaning UTC.
pub fn parse_iso8601(text: &[u8]) -> Option<Stamp> {
    // `-` between the date's parts, or `/` with a space before the clock:
    // Go's wall clock (`2006/01/02 15:04:05.000`, Caddy's `time_format wall`
    // and `wall_milli`, found by review), local time read as UTC.
    let wall = text.len() >= 19 && text[4] == b'/' && text[7] == b'/' && text[10] == b' ';
    if text.len() < 19
        || !wall && (text[4] != b'-' || text[7] != b'-' || !matches!(text[10], b'T' | b't' | b' '))
    {
        return None;
    }
    let year = i64::from(digits(&text[0..4])?);
    let month = digits(&text[5..7])?;
    let day = digits(&text[8..10])?;
    if !valid_date(year, month, day) || text[13] != b':' || text[16] != b':' {
        return None;
    }
    let clock = hms_ms(
        digits(&text[11..13])?,
        digits(&text[14..16])?,
        digits(&text[17..19])?,
    )?;
    let (frac_ms, subsecond, rest) = fraction(&text[19..]);
    let offset = zone_offset_ms(rest.strip_prefix(b" ").unwrap_or(rest))?;
    let ms = days_from_civil(year, month, day) * 86_400_000 + clock + frac_ms - offset;
    Some(Stamp { ms, subsecond })
}

/// Epoch time as text: seconds (`1767571200`), seconds with a fraction (`$msec`
/// `1767571200.123`, Caddy `1716723772.6014807`), or integer milliseconds,
/// microseconds or nanoseconds (told apart by magnitude).
pub fn parse_epoch(text: &[u8]) -> Option<Stamp> {
    let (int_part, rest) = match memchr::memchr(b'.', text) {
        Some(dot) => (&text[..dot], &text[dot..]),
        None => (text, &b""[..]),
    };
    if int_part.is_empty() || int_part.len() > 19 {
        return None;
    }
    let whole = int_part.iter().try_fold(0i64, |acc, &c| {
        if !c.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(i64::from(c - b'0'))
    })?;
    let (frac_ms, subsecond, tail) = fraction(rest);
    if !tail.is_empty() {
        return None;
    }
    if subsecond {
        return Some(Stamp {
            ms: whole.checked_mul(1000)?.checked_add(frac_ms)?,
            subsecond,
        });
    }
    Some(epoch_integer(whole))
}

/// An integer epoch of unknown unit: seconds, milliseconds, microseconds or nanoseconds.
pub fn epoch_integer(n: i64) -> Stamp {
    match n.unsigned_abs() {
        0..100_000_000_000 => Stamp {
            ms: n * 1000,
            subsecond: false,
        },
        100_000_000_000..100_000_000_000_000 => Stamp {
            ms: n,
            subsecond: true,
        },
        100_000_000_000_000..100_000_000_000_000_000 => Stamp {
            ms: n / 1000,
            subsecond: true,
        },
        _ => Stamp {
            ms: n / 1_000_000,
            subsecond: true,
        },
    }
}

/// Epoch seconds as a JSON float (`1716723772.6014807`). A number written
/// as a float comes from a clock finer than the second even when its
/// fraction is 0 (Caddy's `1767571211.0`), so the stamp is sub-second.
pub fn epoch_float(secs: f64) -> Option<Stamp> {
    if !secs.is_finite() || secs.abs() > 1e17 {
        return None;
    }
    if secs.fract() == 0.0 && secs.abs() >= 1e11 {
        return Some(epoch_integer(secs as i64));
    }
    Some(Stamp {
        ms: (secs * 1000.0).floor() as i64,
        subsecond: true,
    })
}

/// Any of the textual shapes above, tried in order of cost.
pub fn parse_any(text: &[u8]) -> Option<Stamp> {
    let text = text.trim_ascii();
    let text = text
        .strip_prefix(b"[")
        .and_then(|t| t.strip_suffix(b"]"))
        .unwrap_or(text);
    parse_iso8601(text)
        .or_else(|| parse_clf(text))
        .or_else(|| parse_epoch(text))
}

/// Parses `$time_local` with a one-entry cache of the date part and one of the
/// zone: consecutive lines almost always share the day and the zone, so only the
/// clock is parsed again. A third entry keeps the minute of the usual 26-byte
/// shape (`10/Oct/2000:13:55:36 -0700`): a line of the same minute and zone
/// only has its seconds read.
#[derive(Debug, Default, Clone)]
pub struct ClfCache {
    /// `dd/Mon/yyyy:HH:MM` of the last 26-byte stamp without a fraction.
    minute_text: [u8; 17],
    /// Its text after the seconds (` -0700`).
    minute_zone: [u8; 6],
    /// Its time at second 0 (UTC milliseconds), `None` until one is seen.
    minute_ms: Option<i64>,
    day_text: [u8; 11],
    day_ms: Option<i64>,
    /// The text after the clock (` +0000`) of a line without a fraction, and its offset.
    zone_text: [u8; ZONE_TEXT_MAX],
    zone_len: usize,
    zone_ms: Option<i64>,
}

/// The longest text after the clock the zone cache keeps (` +0000`, ` +00:00`).
const ZONE_TEXT_MAX: usize = 8;

fn two_digits(tens: u8, ones: u8) -> Option<u32> {
    (tens.is_ascii_digit() && ones.is_ascii_digit())
        .then(|| u32::from(tens - b'0') * 10 + u32::from(ones - b'0'))
}

impl ClfCache {
    /// Same result as [`parse_clf`].
    #[inline]
    pub fn parse(&mut self, text: &[u8]) -> Option<Stamp> {
        let Ok(usual) = <&[u8; 26]>::try_from(text) else {
            return self.parse_by_day(text);
        };
        if let Some(minute_ms) = self.minute_ms
            && usual[..17] == self.minute_text
            && usual[20..] == self.minute_zone
            && usual[17] == b':'
            && let Some(second) = two_digits(usual[18], usual[19]).filter(|&s| s <= 60)
        {
            return Some(Stamp {
                ms: minute_ms + i64::from(second) * 1000,
                subsecond: false,
            });
        }
        let stamp = self.parse_by_day(text)?;
        if !stamp.subsecond {
            // A valid stamp: its seconds are two digits.
            let second = two_digits(usual[18], usual[19])?;
            self.minute_text.copy_from_slice(&usual[..17]);
            self.minute_zone.copy_from_slice(&usual[20..]);
            self.minute_ms = Some(stamp.ms - i64::from(second) * 1000);
        }
        Some(stamp)
    }

    /// [`Self::parse`] from the caches of the day and the zone.
    fn parse_by_day(&mut self, text: &[u8]) -> Option<Stamp> {
        if text.len() < 20 || text[11] != b':' {
            return None;
        }
        let day_ms = match self.day_ms {
            Some(ms) if text[..11] == self.day_text => ms,
            _ => {
                parse_clf(text)?; // a new day: validate the whole text once
                let day = days_from_civil(
                    i64::from(digits(&text[7..11])?),
                    month_from_abbrev(&text[3..6])?,
                    digits(&text[0..2])?,
                );
                self.day_text.copy_from_slice(&text[..11]);
                self.day_ms = Some(day * 86_400_000);
                day * 86_400_000
            }
        };
        if text[14] != b':' || text[17] != b':' {
            return None;
        }
        let clock = hms_ms(
            two_digits(text[12], text[13])?,
            two_digits(text[15], text[16])?,
            two_digits(text[18], text[19])?,
        )?;
        let rest = &text[20..];
        if let Some(offset) = self
            .zone_ms
            .filter(|_| rest == &self.zone_text[..self.zone_len])
        {
            return Some(Stamp {
                ms: day_ms + clock - offset,
                subsecond: false,
            });
        }
        let (frac_ms, subsecond, zone) = fraction(rest);
        let offset = zone_offset_ms(zone.strip_prefix(b" ").unwrap_or(zone))?;
        if !subsecond && rest.len() <= ZONE_TEXT_MAX {
            self.zone_text[..rest.len()].copy_from_slice(rest);
            self.zone_len = rest.len();
            self.zone_ms = Some(offset);
        }
        Some(Stamp {
            ms: day_ms + clock + frac_ms - offset,
            subsecond,
        })
    }
}

#[cfg(test)]
mod tests;
