//! HAProxy's HTTP log format (`option httplog`), behind any syslog prefix:
//!
//! `[syslog prefix] haproxy[PID]: CLIENT:PORT [DATE] FRONTEND BACKEND/SERVER
//! TR/Tw/Tc/Tr/Ta STATUS BYTES CC CS TSC AC/FC/BC/SC/RC SQ/BQ [{REQ HDRS}]
//! [{RESP HDRS}] "REQUEST"`
//!
//! from the "HTTP log format" section of haproxy's `doc/configuration.txt`
//! (`log-format "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS
//! %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r"`). The date has
//! milliseconds and no zone (HAProxy writes local time; it is read as UTC). It
//! is when the request arrived (`%tr`, the first byte of the request; the
//! connection's accept date before HAProxy 1.9); `--time-of logged` adds `Ta`,
//! the total active time, for when the response ended. The syslog prefix is
//! skipped wherever it ends: the line is found from its `[DATE]`.

use std::borrow::Cow;

use memchr::memchr;

use super::IngestError;
use super::arrival::{self, TimeOf};
use super::record::{LineParser, Record, SkipReason, parse_status, split_request};
use super::time;
use crate::events::Protocol;

/// Fields `--key field:NAME` can name.
pub const FIELD_NAMES: &[&str] = &[
    "frontend_name",
    "backend_name",
    "server_name",
    "termination_state",
    "captured_request_headers",
];

const MALFORMED: SkipReason = SkipReason::Malformed(
    "expected HAProxy's `CLIENT:PORT [DATE] FRONTEND BACKEND/SERVER TIMERS STATUS …`",
);

/// The parser of HAProxy HTTP log lines.
#[derive(Debug, Clone)]
pub struct HaproxyParser {
    /// For each `field:NAME` asked for, its index in [`FIELD_NAMES`].
    extra: Vec<usize>,
    time_of: TimeOf,
}

impl HaproxyParser {
    /// A parser capturing the named `extra` fields.
    pub fn new(extra: &[String], time_of: TimeOf) -> Result<Self, IngestError> {
        let extra = extra
            .iter()
            .map(|name| {
                FIELD_NAMES.iter().position(|f| f == name).ok_or_else(|| {
                    IngestError::UnknownField {
                        field: name.clone(),
                        format: "haproxy".into(),
                        known: FIELD_NAMES.join(", "),
                    }
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(HaproxyParser { extra, time_of })
    }
}

/// Where `[DATE]` opens: a `[` followed by `dd/Mon/yyyy:`.
fn date_bracket(line: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'[', line).find(|&i| {
        line.get(i + 3) == Some(&b'/')
            && line.get(i + 7) == Some(&b'/')
            && line.get(i + 12) == Some(&b':')
    })
}

/// The address of HAProxy's `%ci:%cp`: the port follows the last colon, and
/// an IPv6 address is not bracketed (`2001:db8::7:51000`), so the key's own
/// port handling, which leaves an unbracketed IPv6 address whole, cannot
/// tell it apart. With more than one colon the port is cut only where what
/// is left is an IPv6 address (`::1` alone keeps its `1`).
fn without_client_port(client: &[u8]) -> &[u8] {
    let Some(colon) = memchr::memrchr(b':', client) else {
        return client;
    };
    let (host, port) = (&client[..colon], &client[colon + 1..]);
    let is_port = !port.is_empty() && port.iter().all(u8::is_ascii_digit);
    let host_is_ipv6 = || {
        std::str::from_utf8(host)
            .ok()
            .and_then(|h| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::Ipv6Addr>()
                    .ok()
            })
            .is_some()
    };
    match is_port && (!host.contains(&b':') || host_is_ipv6()) {
        true => host,
        false => client,
    }
}

/// The next space-separated token of `rest` and what follows it.
fn token(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = rest.trim_ascii_start();
    if rest.is_empty() {
        return None;
    }
    let end = memchr(b' ', rest).unwrap_or(rest.len());
    Some((&rest[..end], &rest[end..]))
}

/// `client` without the syslog priority that `log … format short` or
/// `priority` writes right before it (`<134>192.0.2.7:33318`: "a level
/// between angle brackets", doc/configuration.txt), which is no part of the
/// address (found by review).
fn without_priority(client: &[u8]) -> &[u8] {
    match client
        .strip_prefix(b"<")
        .and_then(|rest| Some((rest, memchr(b'>', rest)?)))
    {
        Some((rest, end))
            if (1..=3).contains(&end) && rest[..end].iter().all(u8::is_ascii_digit) =>
        {
            &rest[end + 1..]
        }
        _ => client,
    }
}

impl LineParser for HaproxyParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        let open = date_bracket(line).ok_or(MALFORMED)?;
        let before = line[..open].trim_ascii_end();
        let client = &before[before.iter().rposition(|&b| b == b' ').map_or(0, |i| i + 1)..];
        let client = without_priority(client);
        let close = open + memchr(b']', &line[open..]).ok_or(MALFORMED)?;
        let start = time::parse_clf(&line[open + 1..close]).ok_or(SkipReason::BadTime)?;
        let rest = &line[close + 1..];
        let (frontend, rest) = token(rest).ok_or(MALFORMED)?;
        let (backend_server, rest) = token(rest).ok_or(MALFORMED)?;
        let (timers, rest) = token(rest).ok_or(MALFORMED)?;
        let (status, rest) = token(rest).ok_or(MALFORMED)?;
        if timers.iter().filter(|&&b| b == b'/').count() != 4 {
            return Err(MALFORMED);
        }
        let (backend, server) = match memchr(b'/', backend_server) {
            Some(slash) => (&backend_server[..slash], &backend_server[slash + 1..]),
            None => (backend_server, &b""[..]),
        };
        // BYTES CC CS TSC AC/FC/BC/SC/RC SQ/BQ, then optional {headers}, then "REQUEST".
        let (mut termination, mut headers) = (&b""[..], &b""[..]);
        let mut rest = rest;
        for i in 0..6 {
            let (value, next) = token(rest).ok_or(MALFORMED)?;
            if i == 3 {
                termination = value;
            }
            rest = next;
        }
        let rest = rest.trim_ascii_start();
        let quote = memchr(b'"', rest).ok_or(MALFORMED)?;
        if rest[..quote].starts_with(b"{") {
            let end = memchr(b'}', &rest[..quote]).unwrap_or(quote);
            headers = &rest[1..end];
        }
        let request = &rest[quote + 1..];
        let (request, whole) = match memchr::memrchr(b'"', request) {
            Some(end) => (&request[..end], true),
            None => (request, false), // truncated by the syslog line length
        };
        let (method, target, protocol) = split_request(request);
        // A line cut short says nothing of the version.
        record.protocol = if whole { protocol } else { Protocol::Unknown };
        record.addr = Cow::Borrowed(without_client_port(client));
        record.method = Cow::Borrowed(method);
        record.path = Cow::Borrowed(target);
        record.status = parse_status(status)?;
        record.time = Some(match self.time_of {
            TimeOf::Arrival => start,
            TimeOf::Logged => {
                let active = timers.rsplit(|&b| b == b'/').next().unwrap_or_default();
                arrival::millis_text(active)
                    .map_or(start, |ta| arrival::end_from_arrival(start, ta))
            }
        });
        for (slot, &field) in record.extra.iter_mut().zip(&self.extra) {
            *slot = Cow::Borrowed(match field {
                0 => frontend,
                1 => backend,
                2 => server,
                3 => termination,
                _ => headers,
            });
        }
        Ok(())
    }

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(self.clone())
    }

    fn name(&self) -> String {
        "haproxy".into()
    }
}

#[cfg(test)]
mod tests;
