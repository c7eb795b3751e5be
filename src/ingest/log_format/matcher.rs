//! Matching a line against a compiled `log_format`: literal-delimited
//! scanning (each variable runs to the next occurrence of the literal after
//! it), or a regular expression with lazy groups for formats with adjacent
//! variables.

use memchr::memmem::Finder;
use regex::bytes::{CaptureLocations, Regex};

use super::{Role, Token, role_of};
use crate::ingest::IngestError;
use crate::ingest::record::SkipReason;

/// How lines are matched against the format.
#[derive(Debug, Clone)]
pub(super) enum Matcher {
    /// Literal-delimited scanning (the fast path).
    Scan(Vec<Step>),
    /// A regex with one group per variable, for formats with adjacent variables.
    Regex {
        regex: Regex,
        /// Reused by every line (no allocation per match).
        locations: CaptureLocations,
    },
}

/// One step of literal-delimited scanning.
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// The line must continue with these bytes.
    Literal(Vec<u8>),
    /// A variable's value: up to the next unescaped `until` (the literal that
    /// follows it), or to the end of the line when nothing follows.
    Var {
        /// `$time_local` holds one space of its own, skipped before searching.
        time_local: bool,
        until: Option<Box<Finder<'static>>>,
        /// When `$time_local` follows `until`: the literal after it (empty at
        /// the end), so that the value runs to the `until` a date follows (a
        /// `$remote_user` of `a [01/Jan/2020:00:00:00 +0000]`, which nginx
        /// writes unescaped, has one inside it).
        time_then: Option<Vec<u8>>,
    },
}

/// The scanning steps of a format without adjacent variables.
pub(super) fn steps(tokens: &[Token]) -> Vec<Step> {
    tokens
        .iter()
        .enumerate()
        .map(|(i, token)| match token {
            Token::Literal(lit) => Step::Literal(lit.clone()),
            Token::Var(name) => Step::Var {
                time_local: role_of(name) == Role::TimeLocal,
                until: match tokens.get(i + 1) {
                    Some(Token::Literal(next)) => Some(Box::new(Finder::new(next).into_owned())),
                    _ => None,
                },
                time_then: match (tokens.get(i + 1), tokens.get(i + 2)) {
                    (Some(Token::Literal(_)), Some(Token::Var(time)))
                        if role_of(time) == Role::TimeLocal =>
                    {
                        Some(match tokens.get(i + 3) {
                            Some(Token::Literal(then)) => then.clone(),
                            _ => Vec::new(),
                        })
                    }
                    _ => None,
                },
            },
        })
        .collect()
}

pub(super) fn scan(
    steps: &[Step],
    line: &[u8],
    spans: &mut Vec<(usize, usize)>,
) -> Result<(), SkipReason> {
    let mut pos = 0;
    for step in steps {
        match step {
            Step::Literal(lit) => {
                if !line[pos..].starts_with(lit) {
                    return Err(SkipReason::Malformed("line does not match the log_format"));
                }
                pos += lit.len();
            }
            Step::Var {
                time_local,
                until,
                time_then,
            } => {
                let end = match until {
                    Some(finder) => {
                        let from = if *time_local {
                            memchr::memchr(b' ', &line[pos..]).map_or(pos, |s| pos + s + 1)
                        } else {
                            pos
                        };
                        let first = find_delimiter(&line[from..], finder)
                            .ok_or(SkipReason::Malformed("line does not match the log_format"))?;
                        let dated = time_then
                            .as_ref()
                            .and_then(|then| delimiter_before_date(&line[from..], finder, then));
                        from + dated.unwrap_or(first)
                    }
                    None => line.len(),
                };
                spans.push((pos, end));
                pos = end;
            }
        }
    }
    Ok(())
}

/// The first occurrence of `delim` in `hay` that is not escaped by a backslash
/// (nginx `escape=json` writes `\"` inside quoted values).
pub(super) fn find_delimiter(hay: &[u8], finder: &Finder<'_>) -> Option<usize> {
    let mut from = 0;
    while let Some(off) = finder.find(&hay[from..]) {
        let at = from + off;
        if !crate::text::ends_in_escape(&hay[..at]) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The first unescaped `delim` in `hay` followed by a `$time_local` date
/// and `then`.
fn delimiter_before_date(hay: &[u8], delim: &Finder<'_>, then: &[u8]) -> Option<usize> {
    const DATE: &[u8] = b"00/Aaa/0000:00:00:00 +0000";
    let is_date = |text: &[u8]| {
        text.len() >= DATE.len()
            && DATE.iter().zip(text).all(|(&want, &b)| match want {
                b'0' => b.is_ascii_digit(),
                b'A' => b.is_ascii_uppercase(),
                b'a' => b.is_ascii_lowercase(),
                b'+' => b == b'+' || b == b'-',
                other => b == other,
            })
            && text[DATE.len()..].starts_with(then)
    };
    let mut from = 0;
    while let Some(at) = find_delimiter(&hay[from..], delim).map(|at| from + at) {
        if is_date(&hay[at + delim.needle().len()..]) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// What a variable's value can look like, so adjacent variables split where they must.
pub(super) fn value_pattern(role: Role, last: bool) -> &'static str {
    match role {
        Role::Msec => r"[0-9]+(?:\.[0-9]+)?",
        Role::Status => r"-?[0-9]{1,3}|-",
        Role::TimeIso | Role::StartIso => r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(?:Z|[+-][0-9:]+)?",
        Role::TimeLocal => r"[0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9:]{8} [+-][0-9]{4}",
        Role::Addr => r"[0-9A-Za-z:.\[\]_-]+|-",
        Role::Method => r"[A-Z]+|-",
        _ if last => ".*",
        _ => ".*?",
    }
}

pub(super) fn regex_for(tokens: &[Token]) -> Result<Regex, IngestError> {
    let mut pattern = String::from("(?s-u)^");
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Literal(lit) => pattern.push_str(&regex::escape(&String::from_utf8_lossy(lit))),
            Token::Var(name) => {
                pattern.push('(');
                pattern.push_str(value_pattern(role_of(name), i + 1 == tokens.len()));
                pattern.push(')');
            }
        }
    }
    Regex::new(&pattern).map_err(|e| IngestError::Format(format!("cannot compile log_format: {e}")))
}
