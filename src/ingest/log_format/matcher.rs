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
            Step::Var { time_local, until } => {
                let end = match until {
                    Some(finder) => {
                        let from = if *time_local {
                            memchr::memchr(b' ', &line[pos..]).map_or(pos, |s| pos + s + 1)
                        } else {
                            pos
                        };
                        from + find_delimiter(&line[from..], finder)
                            .ok_or(SkipReason::Malformed("line does not match the log_format"))?
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
        let backslashes = hay[..at].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
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
