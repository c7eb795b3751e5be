//! Dating the lines of a W3C log that has a `time` column and no `date`:
//! each line is on the date of the last `#Date:` directive before it ("the
//! date and time at which the entries were added", W3C Working Draft
//! WD-logfile-960323), and moves to the next day where its time is more
//! than twelve hours before the previous line's (a log running past midnight
//! without a new directive). Each line depends on the lines before it, so
//! such an input is parsed in order ([`crate::ingest::record::LineParser::in_order`]).

use crate::ingest::record::SkipReason;
use crate::ingest::time::{self, Stamp};
use crate::units::Millis;

const DAY_MS: Millis = 86_400_000;

/// A line's time this much before the previous line's is on the next day.
const ROLLOVER_MS: Millis = DAY_MS / 2;

/// The date lines are on, from the directives and lines read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dating {
    /// The start of the current day (UTC); `None` before any `#Date:`, or
    /// after one rlctl could not read.
    day: Option<Millis>,
    /// The time of day of the last line (or directive), in milliseconds.
    last_clock: Millis,
}

impl Dating {
    /// Reads the value of a `#Date:` directive: `2026-01-05 00:00:00` (as
    /// IIS writes it) or `12-Jan-1996 00:00:00` (the draft's example).
    pub fn directive(&mut self, value: &[u8]) -> Result<(), SkipReason> {
        let stamp = directive_stamp(value.trim_ascii());
        self.day = stamp.map(|s| s.ms.div_euclid(DAY_MS) * DAY_MS);
        let stamp = stamp.ok_or(SkipReason::Malformed(
            "a #Date: directive without a date and time rlctl reads (2026-01-05 00:00:00)",
        ))?;
        self.last_clock = stamp.ms.rem_euclid(DAY_MS);
        Ok(())
    }

    /// The time of a line whose `time` column is `clock` (`HH:MM:SS[.fff]`).
    pub fn date(&mut self, clock: &[u8]) -> Result<Stamp, SkipReason> {
        let day = self.day.ok_or(SkipReason::Malformed(
            "no #Date: directive before the line gives its date (the columns have time but no date)",
        ))?;
        let of_day = time_of_day(clock).ok_or(SkipReason::BadTime)?;
        let day = match of_day.ms + ROLLOVER_MS < self.last_clock {
            true => day + DAY_MS,
            false => day,
        };
        (self.day, self.last_clock) = (Some(day), of_day.ms);
        Ok(Stamp {
            ms: day + of_day.ms,
            ..of_day
        })
    }
}

/// `HH:MM:SS[.fff]` as milliseconds since midnight.
fn time_of_day(clock: &[u8]) -> Option<Stamp> {
    let mut text = [0u8; 48];
    let prefix = b"1970-01-01T";
    let len = prefix.len() + clock.len() + 1;
    if len > text.len() {
        return None;
    }
    text[..prefix.len()].copy_from_slice(prefix);
    text[prefix.len()..len - 1].copy_from_slice(clock);
    text[len - 1] = b'Z';
    time::parse_iso8601(&text[..len]).filter(|s| (0..DAY_MS).contains(&s.ms))
}

/// A directive's date and time, in either spelling.
fn directive_stamp(value: &[u8]) -> Option<Stamp> {
    if value.get(4) == Some(&b'-') {
        return time::parse_iso8601(value);
    }
    // `12-Jan-1996 00:00:00`: day, month name, year.
    const MONTHS: [&[u8]; 12] = [
        b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov",
        b"dec",
    ];
    let (date, clock) = value.split_at(value.iter().position(|&b| b == b' ')?);
    let mut parts = date.split(|&b| b == b'-');
    let (day, month, year) = (parts.next()?, parts.next()?, parts.next()?);
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))?;
    if parts.next().is_some() || day.is_empty() || day.len() > 2 || year.len() != 4 {
        return None;
    }
    let iso = format!(
        "{}-{:02}-{:0>2}T{}Z",
        std::str::from_utf8(year).ok()?,
        month + 1,
        std::str::from_utf8(day).ok()?,
        std::str::from_utf8(clock.trim_ascii()).ok()?,
    );
    time::parse_iso8601(iso.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_5: Millis = 1_767_571_200_000; // 2026-01-05T00:00:00Z

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
        // The next day's late lines stay on it: no second rollover until a
        // time falls twelve hours back again.
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
        dating.directive(b"5-jan-2026 00:00:00").unwrap();
        assert_eq!(dating.date(b"25:00:00").unwrap_err(), SkipReason::BadTime);
    }
}
