//! Dating the lines of a W3C log that has a `time` column and no `date`:
//! each line is on the date of the last `#Date:` directive before it ("the
//! date and time at which the entries were added", W3C Working Draft
//! WD-logfile-960323). Past that, each line is on the day that puts it
//! nearest the line before it, never before its directive's day: a time
//! more than twelve hours before the previous line's is on the next day (a
//! log running past midnight without a new directive), one more than twelve
//! hours after it on the day before (a line written late, just after
//! midnight). Each line depends on the lines before
//! it, so such an input is parsed in order
//! ([`crate::ingest::record::LineParser::in_order`]).

use std::borrow::Cow;

use crate::ingest::record::SkipReason;
use crate::ingest::time::{self, Stamp};
use crate::units::Millis;

const DAY_MS: Millis = 86_400_000;

/// A line's time this much before the previous line's is on the next day;
/// this much after it, on the day before.
const ROLLOVER_MS: Millis = DAY_MS / 2;

/// The date lines are on, from the directives and lines read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dating {
    /// The start of the current day (UTC); `None` before any `#Date:`, or
    /// after one rlctl could not read.
    day: Option<Millis>,
    /// The start of the last directive's day: no line goes back before it.
    directive_day: Millis,
    /// The time of day of the last line (or directive), in milliseconds.
    last_clock: Millis,
}

impl Dating {
    /// Reads the value of a `#Date:` directive: `2026-01-05 00:00:00` (as
    /// IIS writes it), `12-Jan-1996 00:00:00` (the draft's example), or
    /// either date alone (midnight).
    pub fn directive(&mut self, value: &[u8]) -> Result<(), SkipReason> {
        let stamp = directive_stamp(value.trim_ascii());
        self.day = stamp.map(|s| s.ms.div_euclid(DAY_MS) * DAY_MS);
        let (Some(stamp), Some(day)) = (stamp, self.day) else {
            return Err(SkipReason::Malformed(
                "a #Date: directive without a date and time rlctl reads (2026-01-05 00:00:00)",
            ));
        };
        (self.directive_day, self.last_clock) = (day, stamp.ms - day);
        Ok(())
    }

    /// The time of a line whose `time` column is `clock` (`HH:MM[:SS[.fff]]`).
    pub fn date(&mut self, clock: &[u8]) -> Result<Stamp, SkipReason> {
        let day = self.day.ok_or(SkipReason::Malformed(
            "no #Date: line rlctl reads before this one gives its date (the columns have time but no date)",
        ))?;
        let of_day = time_of_day(clock).ok_or(SkipReason::BadTime)?;
        let day = if of_day.ms + ROLLOVER_MS < self.last_clock {
            day + DAY_MS
        } else if of_day.ms > self.last_clock + ROLLOVER_MS && day > self.directive_day {
            day - DAY_MS
        } else {
            day
        };
        (self.day, self.last_clock) = (Some(day), of_day.ms);
        Ok(Stamp {
            ms: day + of_day.ms,
            ..of_day
        })
    }
}

/// `HH:MM[:SS[.fff]]` as milliseconds since midnight.
fn time_of_day(clock: &[u8]) -> Option<Stamp> {
    let text = [&b"1970-01-01T"[..], &with_seconds(clock), b"Z"].concat();
    time::parse_iso8601(&text).filter(|s| (0..DAY_MS).contains(&s.ms))
}

/// A W3C time with its seconds: the draft's grammar makes them optional
/// (`HH:MM`).
pub(super) fn with_seconds(clock: &[u8]) -> Cow<'_, [u8]> {
    match clock.len() {
        5 => [clock, b":00"].concat().into(),
        _ => clock.into(),
    }
}

/// A directive's date and time, in either spelling; a date alone is midnight.
fn directive_stamp(value: &[u8]) -> Option<Stamp> {
    let (date, clock) = match value.iter().position(|&b| b == b' ') {
        Some(space) => (&value[..space], value[space + 1..].trim_ascii()),
        None => (value, &b"00:00:00"[..]),
    };
    let date = match date.get(4) {
        Some(b'-') => Cow::Borrowed(date),
        _ => Cow::Owned(iso_date(date)?),
    };
    time::parse_iso8601(&[&date[..], b"T", &with_seconds(clock), b"Z"].concat())
}

/// `12-Jan-1996` (day, month name, year) as `1996-01-12`.
fn iso_date(date: &[u8]) -> Option<Vec<u8>> {
    let mut parts = date.split(|&b| b == b'-');
    let (day, month, year) = (parts.next()?, parts.next()?, parts.next()?);
    let month = time::month_from_abbrev(month)?;
    if parts.next().is_some() || day.is_empty() || day.len() > 2 || year.len() != 4 {
        return None;
    }
    let day = if day.len() == 1 {
        [b"0", day].concat()
    } else {
        day.to_vec()
    };
    Some([year, format!("-{month:02}-").as_bytes(), &day].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_5: Millis = 1_767_571_200_000; // 2026-01-05T00:00:00Z

    proptest::proptest! {
        /// Any times after a directive: each line keeps its time of day, is
        /// on the day nearest the line before it (the directive first), and
        /// never before the directive's day.
        #[test]
        fn each_line_is_on_the_day_nearest_the_line_before_it(
            directive_second in 0i64..86_400,
            seconds in proptest::collection::vec(0i64..86_400, 1..40),
        ) {
            let clock = |s: i64| format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
            let mut dating = Dating::default();
            let directive = format!("2026-01-05 {}", clock(directive_second));
            dating.directive(directive.as_bytes()).unwrap();
            let mut before = JAN_5 + directive_second * 1000;
            for s in seconds {
                let t = dating.date(clock(s).as_bytes()).unwrap().ms;
                proptest::prop_assert_eq!(t.rem_euclid(DAY_MS), s * 1000);
                proptest::prop_assert!(t >= JAN_5);
                // The day nearest the line before, unless that is before
                // the directive's day.
                let nearest = (-1..=1).map(|d| t + d * DAY_MS).all(|other| {
                    other < JAN_5 || (t - before).abs() <= (other - before).abs()
                });
                proptest::prop_assert!(nearest, "{} after {}", t, before);
                before = t;
            }
        }
    }

    #[test]
    fn a_line_is_on_the_date_of_the_directive_before_it() {
        let mut dating = Dating::default();
        assert!(matches!(
            dating.date(b"00:00:01"),
            Err(SkipReason::Malformed(_))
        ));
        dating.directive(b" 2026-01-05 08:00:00").unwrap();
        let stamp = dating.date(b"08:00:01.250").unwrap();
        assert_eq!(stamp.ms, JAN_5 + 8 * 3_600_000 + 1_250);
        assert!(stamp.subsecond);
        dating.directive(b"06-Jan-2026 00:00:00").unwrap();
        assert_eq!(dating.date(b"00:00:02").unwrap().ms, JAN_5 + DAY_MS + 2_000);
    }

    #[test]
    fn past_midnight_without_a_directive_is_the_next_day() {
        let mut dating = Dating::default();
        dating.directive(b"2026-01-05 23:00:00").unwrap();
        assert_eq!(dating.date(b"23:59:59").unwrap().ms, JAN_5 + DAY_MS - 1_000);
        // A line a little out of order stays on its day.
        assert_eq!(
            dating.date(b"23:59:50").unwrap().ms,
            JAN_5 + DAY_MS - 10_000
        );
        assert_eq!(dating.date(b"00:00:01").unwrap().ms, JAN_5 + DAY_MS + 1_000);
        // Each line is on the day nearest the line before it: the same day
        // for a time less than twelve hours on, however far through the day.
        assert_eq!(
            dating.date(b"11:59:00").unwrap().ms,
            JAN_5 + DAY_MS + 43_140_000
        );
        assert_eq!(
            dating.date(b"23:00:00").unwrap().ms,
            JAN_5 + 2 * DAY_MS - 3_600_000
        );
        assert_eq!(
            dating.date(b"00:30:00").unwrap().ms,
            JAN_5 + 2 * DAY_MS + 1_800_000
        );
    }

    #[test]
    fn a_line_written_late_just_after_midnight_stays_on_its_day() {
        let mut dating = Dating::default();
        dating.directive(b"2026-01-05 23:59:00").unwrap();
        assert_eq!(dating.date(b"23:59:59").unwrap().ms, JAN_5 + DAY_MS - 1_000);
        assert_eq!(dating.date(b"00:00:01").unwrap().ms, JAN_5 + DAY_MS + 1_000);
        assert_eq!(dating.date(b"23:59:58").unwrap().ms, JAN_5 + DAY_MS - 2_000);
        assert_eq!(dating.date(b"00:00:02").unwrap().ms, JAN_5 + DAY_MS + 2_000);
        // Never before the directive's day: its first line may come hours on.
        dating.directive(b"2026-01-05").unwrap();
        assert_eq!(
            dating.date(b"23:00").unwrap().ms,
            JAN_5 + DAY_MS - 3_600_000
        );
    }

    #[test]
    fn a_line_earlier_than_its_directive_by_half_a_day_is_the_next_day() {
        let mut dating = Dating::default();
        dating.directive(b"2026-01-05 20:00:00").unwrap();
        assert_eq!(
            dating.date(b"01:00:00").unwrap().ms,
            JAN_5 + DAY_MS + 3_600_000
        );
    }

    #[test]
    fn an_unreadable_directive_leaves_the_lines_after_it_without_a_date() {
        let mut dating = Dating::default();
        dating.directive(b"2026-01-05 00:00:00").unwrap();
        assert!(dating.directive(b"yesterday").is_err());
        assert!(matches!(
            dating.date(b"00:00:01"),
            Err(SkipReason::Malformed(_))
        ));
        for bad in [
            &b"32-Jan-2026 00:00:00"[..],
            b"5-Foo-2026 00:00:00",
            b"5-Jan-26 00:00:00",
        ] {
            assert!(
                dating.directive(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        dating.directive(b"5-jan-2026 00:00").unwrap();
        assert_eq!(dating.date(b"25:00:00").unwrap_err(), SkipReason::BadTime);
        assert_eq!(dating.date(b"00:10").unwrap().ms, JAN_5 + 600_000);
    }
}
