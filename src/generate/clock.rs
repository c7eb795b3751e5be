//! Calendar arithmetic for the generator: parsing `--start` and `--time-offset`,
//! and rendering one second as nginx prints it (`$time_local`, `$time_iso8601`)
//! and as RFC 3339 UTC (JSON `time`). No time-zone database, no chrono: a fixed
//! offset is all nginx's log timestamps carry.
//!
//! [`SecondStamps`] formats each second once; lines are written in time order,
//! so a second's strings are reused for every line in it.

use std::str::FromStr;

use super::GenerateError;
use crate::text::time::{civil_from_days, days_from_civil};
use crate::units::{MS_PER_SEC, Millis};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds) into milliseconds since the epoch.
pub fn parse_start(text: &str) -> Result<Millis, GenerateError> {
    let err = || GenerateError::Start(text.to_string());
    let b = text.trim().as_bytes();
    let shape_ok = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b'T' || b[10] == b't')
        && b[13] == b':'
        && b[16] == b':'
        && (b[19] == b'Z' || b[19] == b'z');
    if !shape_ok {
        return Err(err());
    }
    let num = |from: usize, to: usize| -> Result<u32, GenerateError> {
        let digits = &b[from..to];
        if !digits.iter().all(u8::is_ascii_digit) {
            return Err(err());
        }
        Ok(digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let (year, month, day) = (i64::from(num(0, 4)?), num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let valid = year >= 1
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return Err(err());
    }
    let secs =
        days_from_civil(year, month, day) * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    Ok(secs * MS_PER_SEC)
}

/// When a request at `ts` is written outside the years rlctl reads, in UTC
/// or at `offset` (where lines show local time): that time as the log would
/// show it.
pub fn out_of_range(ts: Millis, offset: Option<TimeOffset>) -> Option<String> {
    let time = crate::text::time::format_rfc3339;
    if !crate::units::in_range(ts) {
        return Some(time(ts));
    }
    let offset = offset?;
    let local = ts + i64::from(offset.minutes()) * 60 * MS_PER_SEC;
    (!crate::units::in_range(local))
        .then(|| format!("{} at {offset}", time(local).trim_end_matches('Z')))
}

/// A fixed UTC offset such as `+0000` or `-0500`, as nginx prints in `$time_local`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeOffset {
    minutes: i32,
}

impl TimeOffset {
    /// The offset in minutes east of UTC.
    pub fn minutes(self) -> i32 {
        self.minutes
    }
}

impl std::fmt::Display for TimeOffset {
    /// `+HHMM` or `-HHMM`, as parsed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.minutes < 0 { '-' } else { '+' };
        let m = self.minutes.unsigned_abs();
        write!(f, "{sign}{:02}{:02}", m / 60, m % 60)
    }
}

impl FromStr for TimeOffset {
    type Err = GenerateError;

    /// `+HHMM` or `-HHMM`, hours up to 14 (the widest offset in use).
    fn from_str(text: &str) -> Result<Self, GenerateError> {
        let err = || GenerateError::TimeOffset(text.to_string());
        let b = text.trim().as_bytes();
        if b.len() != 5 || !(b[0] == b'+' || b[0] == b'-') {
            return Err(err());
        }
        if !b[1..].iter().all(u8::is_ascii_digit) {
            return Err(err());
        }
        let d = |i: usize| i32::from(b[i] - b'0');
        let (hours, mins) = (d(1) * 10 + d(2), d(3) * 10 + d(4));
        if hours > 14 || mins >= 60 {
            return Err(err());
        }
        let sign = if b[0] == b'-' { -1 } else { 1 };
        Ok(TimeOffset {
            minutes: sign * (hours * 60 + mins),
        })
    }
}

/// The three renderings of one second, recomputed only when the second changes.
#[derive(Debug, Clone)]
pub struct SecondStamps {
    offset: TimeOffset,
    second: Option<i64>,
    /// `05/Jan/2026:00:00:00 +0000` (`$time_local`).
    pub local: [u8; 26],
    /// `2026-01-05T00:00:00+00:00` (`$time_iso8601`).
    pub iso8601: [u8; 25],
    /// `2026-01-05T00:00:00` in UTC (the JSON `time` before its milliseconds).
    pub utc: [u8; 19],
}

impl SecondStamps {
    /// Stamps for a log written with the given zone offset.
    pub fn new(offset: TimeOffset) -> Self {
        SecondStamps {
            offset,
            second: None,
            local: [0; 26],
            iso8601: [0; 25],
            utc: [0; 19],
        }
    }

    /// Makes the stamps describe the second holding `ts` (epoch milliseconds).
    pub fn update(&mut self, ts: Millis) {
        let second = ts.div_euclid(MS_PER_SEC);
        if self.second == Some(second) {
            return;
        }
        self.second = Some(second);
        let off = i64::from(self.offset.minutes) * 60;
        let (y, mo, d, h, mi, s) = split(second + off);
        let sign = if off < 0 { b'-' } else { b'+' };
        let (oh, om) = ((off.abs() / 3600) as u32, (off.abs() / 60 % 60) as u32);

        let mut w = Cursor::new(&mut self.local);
        w.two(d)
            .byte(b'/')
            .bytes(MONTHS[mo as usize - 1].as_bytes());
        w.byte(b'/').year(y).byte(b':').two(h).byte(b':').two(mi);
        w.byte(b':').two(s).byte(b' ').byte(sign).two(oh).two(om);

        let mut w = Cursor::new(&mut self.iso8601);
        w.year(y).byte(b'-').two(mo).byte(b'-').two(d).byte(b'T');
        w.two(h).byte(b':').two(mi).byte(b':').two(s);
        w.byte(sign).two(oh).byte(b':').two(om);

        let (y, mo, d, h, mi, s) = split(second);
        let mut w = Cursor::new(&mut self.utc);
        w.year(y).byte(b'-').two(mo).byte(b'-').two(d).byte(b'T');
        w.two(h).byte(b':').two(mi).byte(b':').two(s);
    }
}

fn split(second: i64) -> (i64, u32, u32, u32, u32, u32) {
    let (y, mo, d) = civil_from_days(second.div_euclid(86_400));
    let sod = second.rem_euclid(86_400) as u32;
    (y, mo, d, sod / 3600, sod / 60 % 60, sod % 60)
}

/// Writes fixed-width fields into a stamp buffer.
struct Cursor<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(buf: &'a mut [u8]) -> Self {
        Cursor { buf, at: 0 }
    }
    fn byte(&mut self, b: u8) -> &mut Self {
        self.buf[self.at] = b;
        self.at += 1;
        self
    }
    fn bytes(&mut self, bs: &[u8]) -> &mut Self {
        for &b in bs {
            self.byte(b);
        }
        self
    }
    fn two(&mut self, n: u32) -> &mut Self {
        self.byte(b'0' + (n / 10 % 10) as u8)
            .byte(b'0' + (n % 10) as u8)
    }
    fn year(&mut self, y: i64) -> &mut Self {
        let y = y.clamp(0, 9999) as u32;
        self.two(y / 100).two(y % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamps(ts: Millis, offset: &str) -> (String, String, String) {
        let mut s = SecondStamps::new(offset.parse().unwrap());
        s.update(ts);
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        (text(&s.local), text(&s.iso8601), text(&s.utc))
    }

    #[test]
    fn start_parses_to_epoch_millis() {
        assert_eq!(parse_start("2026-01-05T00:00:00Z"), Ok(1_767_571_200_000));
        assert_eq!(parse_start("1970-01-01T00:00:01Z"), Ok(1000));
        assert_eq!(parse_start("2024-02-29T23:59:59Z"), Ok(1_709_251_199_000));
        for bad in [
            "2026-01-05",
            "2026-01-05T00:00:00",
            "2026-01-05T00:00:00+01:00",
            "2026-13-05T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-01-05T24:00:00Z",
            "2026-01-05T00:00:0xZ",
        ] {
            assert!(parse_start(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn offsets_parse_and_reject_nonsense() {
        assert_eq!("+0000".parse::<TimeOffset>().unwrap().minutes(), 0);
        assert_eq!("-0530".parse::<TimeOffset>().unwrap().minutes(), -330);
        assert_eq!("+1400".parse::<TimeOffset>().unwrap().minutes(), 840);
        for text in ["+0000", "-0530", "+1400"] {
            assert_eq!(text.parse::<TimeOffset>().unwrap().to_string(), text);
        }
        for bad in ["0000", "+000", "+01:00", "+1500", "+0060", "UTC"] {
            assert!(bad.parse::<TimeOffset>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_second_renders_like_nginx() {
        let t = 1_767_571_200_123;
        assert_eq!(
            stamps(t, "+0000"),
            (
                "05/Jan/2026:00:00:00 +0000".into(),
                "2026-01-05T00:00:00+00:00".into(),
                "2026-01-05T00:00:00".into()
            )
        );
        // Local wall clock moves with the offset; the UTC rendering does not.
        assert_eq!(
            stamps(t, "-0500"),
            (
                "04/Jan/2026:19:00:00 -0500".into(),
                "2026-01-04T19:00:00-05:00".into(),
                "2026-01-05T00:00:00".into()
            )
        );
        assert_eq!(
            stamps(t + 3_723_000, "+0530").0,
            "05/Jan/2026:06:32:03 +0530"
        );
        assert_eq!(
            stamps(1_709_251_199_000, "+0000").0,
            "29/Feb/2024:23:59:59 +0000"
        );
    }
}
