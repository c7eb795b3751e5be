//! Time units and the two small value syntaxes every command shares:
//! durations (`10s`, `1m`, `5m`, `1h`) and limits (`600/1m`, `10r/s`, `5000/1h`).
//!
//! Parsing lives here so the options layer, the policy file and the tests all
//! agree on one grammar. Nothing here touches I/O.

use std::fmt;
use std::str::FromStr;

/// A point in time: milliseconds since the Unix epoch (UTC).
pub type Millis = i64;

/// Milliseconds in one second.
pub const MS_PER_SEC: i64 = 1000;

/// The earliest instant rlctl accepts: 0001-01-01T00:00:00Z. With
/// [`LATEST_MS`], the years ISO 8601 and `$time_local` can write; ingestion
/// skips times outside as bad timestamps, so no arithmetic on times can overflow.
pub const EARLIEST_MS: Millis = -62_135_596_800_000;

/// The latest instant rlctl accepts: 9999-12-31T23:59:59.999Z.
pub const LATEST_MS: Millis = 253_402_300_799_999;

/// True when `ms` is within [`EARLIEST_MS`]..=[`LATEST_MS`].
pub fn in_range(ms: Millis) -> bool {
    (EARLIEST_MS..=LATEST_MS).contains(&ms)
}

/// Why a duration or limit did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error(
        "invalid duration `{0}`: expected a whole number above zero and a unit, e.g. 1s, 10s, 1m, 5m, 1h"
    )]
    Duration(String),
    #[error(
        "invalid limit `{0}`: expected REQUESTS/WINDOW, e.g. 600/1m, 10/s, 10r/s, 10r/m, 5000/1h"
    )]
    Limit(String),
    #[error(
        "invalid duration `{0}`: at most {max} seconds (about 136 years)",
        max = u32::MAX
    )]
    DurationTooLong(String),
    #[error(
        "invalid limit `{0}`: at most {max} requests per window, and a window of at most {secs} seconds (about 136 years)",
        max = u64::MAX,
        secs = u32::MAX
    )]
    LimitTooLarge(String),
}

/// A span of time in whole seconds (windows and limit periods are never sub-second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Window {
    secs: u32,
}

impl Window {
    /// A window of `secs` seconds; `None` when zero.
    pub fn from_secs(secs: u32) -> Option<Self> {
        (secs > 0).then_some(Window { secs })
    }

    /// Length in seconds.
    pub fn secs(self) -> u32 {
        self.secs
    }

    /// Length in milliseconds.
    pub fn millis(self) -> i64 {
        i64::from(self.secs) * MS_PER_SEC
    }

    /// The epoch-aligned index of the window holding `t`: floor(t / W).
    pub fn index(self, t: Millis) -> i64 {
        t.div_euclid(self.millis())
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.secs;
        if s.is_multiple_of(3600) {
            write!(f, "{}h", s / 3600)
        } else if s.is_multiple_of(60) {
            write!(f, "{}m", s / 60)
        } else {
            write!(f, "{s}s")
        }
    }
}

impl FromStr for Window {
    type Err = UnitError;

    /// `1s`, `10s`, `1m`, `5m`, `1h`, `1d`; a bare unit (`s`, `m`) means one of it;
    /// `sec`, `min`, `hour` spellings are accepted too.
    fn from_str(text: &str) -> Result<Self, UnitError> {
        let err = || UnitError::Duration(text.to_string());
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let too_long = || UnitError::DurationTooLong(text.to_string());
        let scale: u64 = match unit.trim() {
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86_400,
            _ => return Err(err()),
        };
        // Digits alone that do not fit are a number too large, not a typo.
        let n: u64 = if digits.is_empty() {
            1
        } else {
            digits.parse().map_err(|_| too_long())?
        };
        match n.checked_mul(scale) {
            Some(0) => Err(err()),
            Some(s) if s <= u64::from(u32::MAX) => Ok(Window { secs: s as u32 }),
            _ => Err(too_long()),
        }
    }
}

/// A rate limit: at most `requests` per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limit {
    /// L: requests allowed per window.
    pub requests: u64,
    /// W: the window.
    pub window: Window,
}

impl Limit {
    /// Average admitted rate in requests per second (L / W).
    pub fn per_second(self) -> f64 {
        self.requests as f64 / f64::from(self.window.secs())
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.requests, self.window)
    }
}

impl FromStr for Limit {
    type Err = UnitError;

    /// `600/1m`, `10/s`, `10r/s`, `10r/m` (nginx style), `5000/1h`.
    fn from_str(text: &str) -> Result<Self, UnitError> {
        let err = || UnitError::Limit(text.to_string());
        let (count, period) = text.trim().split_once('/').ok_or_else(err)?;
        let count = count.trim();
        let count = count.strip_suffix('r').unwrap_or(count);
        let too_large = || UnitError::LimitTooLarge(text.to_string());
        let digits = !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit());
        let requests: u64 = count
            .parse()
            .map_err(|_| if digits { too_large() } else { err() })?;
        if requests == 0 {
            return Err(err());
        }
        let window: Window = period.parse().map_err(|e| match e {
            UnitError::DurationTooLong(_) => too_large(),
            _ => err(),
        })?;
        Ok(Limit { requests, window })
    }
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        let secs = |s: &str| s.parse::<Window>().map(Window::secs);
        assert_eq!(secs("1s"), Ok(1));
        assert_eq!(secs("10s"), Ok(10));
        assert_eq!(secs("1m"), Ok(60));
        assert_eq!(secs("5m"), Ok(300));
        assert_eq!(secs("1h"), Ok(3600));
        assert_eq!(secs("m"), Ok(60));
        assert!(secs("0s").is_err());
        assert!(secs("").is_err());
        assert!(secs("10").is_err());
        assert!(secs("1w").is_err());
        assert!(secs("99999999999h").is_err());
        assert!(secs("-1s").is_err());
    }

    #[test]
    fn limits_parse_in_every_spelling() {
        let lim = |s: &str| s.parse::<Limit>().map(|l| (l.requests, l.window.secs()));
        assert_eq!(lim("600/1m"), Ok((600, 60)));
        assert_eq!(lim("10/s"), Ok((10, 1)));
        assert_eq!(lim("10r/s"), Ok((10, 1)));
        assert_eq!(lim("10r/m"), Ok((10, 60)));
        assert_eq!(lim("5000/1h"), Ok((5000, 3600)));
        assert!(lim("0/1m").is_err());
        assert!(lim("600").is_err());
        assert!(lim("x/1m").is_err());
        assert!(lim("10/0s").is_err());
    }

    #[test]
    fn numbers_too_large_are_told_apart_from_typos() {
        let text = |s: &str| s.parse::<Limit>().unwrap_err().to_string();
        for big in [
            "99999999999999999999/1m",
            "10/99999999999d",
            "10/4294967296s",
        ] {
            assert!(
                text(big).contains("at most 18446744073709551615 requests"),
                "{big}"
            );
        }
        assert!(text("1o/1m").contains("expected REQUESTS/WINDOW"));
        assert!(text("10/99999999999999999999999q").contains("expected REQUESTS/WINDOW"));
        let window = "99999999999h".parse::<Window>().unwrap_err().to_string();
        assert!(window.contains("at most 4294967295 seconds"), "{window}");
        assert_eq!(
            "4294967295s".parse::<Window>().map(Window::secs),
            Ok(u32::MAX)
        );
    }

    #[test]
    fn windows_are_epoch_aligned_and_display_compactly() {
        let w: Window = "1m".parse().unwrap();
        assert_eq!(w.index(0), 0);
        assert_eq!(w.index(59_999), 0);
        assert_eq!(w.index(60_000), 1);
        assert_eq!(w.index(-1), -1);
        assert_eq!(w.to_string(), "1m");
        assert_eq!(Window::from_secs(90).unwrap().to_string(), "90s");
        assert_eq!("600/1m".parse::<Limit>().unwrap().to_string(), "600/1m");
        // Zero is refused, and the message says why (it said only "a number").
        let zero = "0s".parse::<Window>().unwrap_err().to_string();
        assert!(zero.contains("a whole number above zero"), "{zero}");
    }
}
