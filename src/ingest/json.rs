//! JSON lines: one object per line, fields found by their usual names or by an
//! explicit `--field ROLE=PATH` mapping with dotted paths into nested objects.
//!
//! Recognised without flags: nginx `escape=json` formats built from nginx variable
//! names, Caddy (`ts`, `request.client_ip`/`remote_ip`, `request.method`,
//! `request.uri`, `status`) and Traefik (`StartUTC`, `ClientHost`, `RequestMethod`,
//! `RequestPath`, `DownstreamStatus`). Text before the first `{` (a
//! docker-compose `caddy  | ` prefix) is ignored.

use std::borrow::Cow;

use serde_json::Value;

use super::IngestError;
use super::record::{Bytes, LineParser, Record, SkipReason, split_request};
use super::time::{self, Stamp};

/// The fields rlctl can take from a JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Time,
    Client,
    User,
    Xff,
    Method,
    Path,
    Request,
    Status,
    LimitReqStatus,
}

const ROLES: [(Role, &str, &[&str]); 9] = [
    (
        Role::Time,
        "time",
        &[
            "time",
            "timestamp",
            "@timestamp",
            "ts",
            "time_iso8601",
            "time_local",
            "msec",
            "StartUTC",
            "start_time",
        ],
    ),
    (
        Role::Client,
        "client",
        &[
            "remote_addr",
            "client_ip",
            "ip",
            "request.client_ip",
            "request.remote_ip",
            "ClientHost",
            "ClientAddr",
        ],
    ),
    (
        Role::User,
        "user",
        &["remote_user", "user", "user_id", "ClientUsername"],
    ),
    (
        Role::Xff,
        "xff",
        &[
            "http_x_forwarded_for",
            "x_forwarded_for",
            "request.headers.X-Forwarded-For",
            "request_X-Forwarded-For",
        ],
    ),
    (
        Role::Method,
        "method",
        &[
            "request_method",
            "method",
            "request.method",
            "RequestMethod",
        ],
    ),
    (
        Role::Path,
        "path",
        &["request_uri", "uri", "path", "request.uri", "RequestPath"],
    ),
    (Role::Request, "request", &["request"]),
    (
        Role::Status,
        "status",
        &[
            "status",
            "DownstreamStatus",
            "response.status",
            "status_code",
        ],
    ),
    (
        Role::LimitReqStatus,
        "limit_req_status",
        &["limit_req_status"],
    ),
];

/// The role names `--field` accepts.
pub fn role_names() -> Vec<&'static str> {
    ROLES.iter().map(|(_, name, _)| *name).collect()
}

/// A JSON-lines parser with its field paths resolved.
#[derive(Debug, Clone)]
pub struct JsonParser {
    /// For each role, the paths to try in order (each path split at dots).
    paths: Vec<(Role, Vec<Vec<String>>)>,
    extra: Vec<Vec<String>>,
}

fn split_path(path: &str) -> Vec<String> {
    path.split('.').map(str::to_string).collect()
}

impl JsonParser {
    /// `mapping` holds `ROLE=PATH` pairs (`--field`); `extra` the paths of `field:NAME` keys.
    pub fn new(mapping: &[(String, String)], extra: &[String]) -> Result<Self, IngestError> {
        let mut paths: Vec<(Role, Vec<Vec<String>>)> = ROLES
            .iter()
            .map(|(role, _, defaults)| (*role, defaults.iter().map(|p| split_path(p)).collect()))
            .collect();
        for (name, path) in mapping {
            let Some(i) = ROLES.iter().position(|(_, n, _)| n == name) else {
                return Err(IngestError::Usage(format!(
                    "--field {name}={path}: unknown role `{name}` (roles: {})",
                    role_names().join(", ")
                )));
            };
            paths[i].1 = vec![split_path(path)];
        }
        Ok(JsonParser {
            paths,
            extra: extra.iter().map(|p| split_path(p)).collect(),
        })
    }

    fn find<'v>(&self, object: &'v Value, role: Role) -> Option<&'v Value> {
        let (_, candidates) = self.paths.iter().find(|(r, _)| *r == role)?;
        candidates.iter().find_map(|path| lookup(object, path))
    }
}

/// Follows a dotted path; an array on the way (or at the end) yields its first element.
fn lookup<'v>(mut value: &'v Value, path: &[String]) -> Option<&'v Value> {
    for key in path {
        value = first_of(value).as_object()?.get(key)?;
    }
    let value = first_of(value);
    (!value.is_null()).then_some(value)
}

fn first_of(value: &Value) -> &Value {
    match value {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => other,
    }
}

fn text_of(value: &Value) -> Bytes<'static> {
    match value {
        Value::String(s) => Cow::Owned(s.clone().into_bytes()),
        other => Cow::Owned(other.to_string().into_bytes()),
    }
}

fn time_of(value: &Value) -> Option<Stamp> {
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(time::epoch_integer(i)),
            None => time::epoch_float(n.as_f64()?),
        },
        Value::String(s) => time::parse_any(s.as_bytes()),
        _ => None,
    }
}

fn status_of(value: &Value) -> Result<Option<u16>, SkipReason> {
    match value {
        Value::Number(n) => n
            .as_u64()
            .filter(|s| (100..=999).contains(s))
            .map(|s| Some(s as u16))
            .ok_or(SkipReason::BadStatus),
        Value::String(s) => super::record::parse_status(s.as_bytes()),
        _ => Err(SkipReason::BadStatus),
    }
}

impl LineParser for JsonParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        let start = memchr::memchr(b'{', line).ok_or(SkipReason::BadJson)?;
        let object: Value =
            serde_json::from_slice(&line[start..]).map_err(|_| SkipReason::BadJson)?;
        if !object.is_object() {
            return Err(SkipReason::BadJson);
        }
        let get = |role| self.find(&object, role);
        let (method, path, request) = (get(Role::Method), get(Role::Path), get(Role::Request));
        let status = get(Role::Status);
        if method.is_none() && path.is_none() && request.is_none() && status.is_none() {
            return Err(SkipReason::NotAccessEntry);
        }
        record.time = Some(
            get(Role::Time)
                .and_then(time_of)
                .ok_or(SkipReason::BadTime)?,
        );
        record.status = match status {
            Some(s) => status_of(s)?,
            None => None,
        };
        if let Some(request) = request.and_then(Value::as_str) {
            let (m, p) = split_request(request.as_bytes());
            record.method = Cow::Owned(m.to_vec());
            record.path = Cow::Owned(p.to_vec());
        }
        if let Some(m) = method {
            record.method = text_of(m);
        }
        if let Some(p) = path {
            record.path = text_of(p);
        }
        record.addr = get(Role::Client).map(text_of).unwrap_or_default();
        record.user = get(Role::User).map(text_of).unwrap_or_default();
        record.xff = get(Role::Xff).map(text_of).unwrap_or_default();
        record.limit_req_status = get(Role::LimitReqStatus).map(text_of).unwrap_or_default();
        for (slot, path) in record.extra.iter_mut().zip(&self.extra) {
            *slot = lookup(&object, path).map(text_of).unwrap_or_default();
        }
        Ok(())
    }

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(self.clone())
    }

    fn name(&self) -> String {
        "json".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with<'a>(mapping: &[(&str, &str)], line: &'a str) -> Result<Record<'a>, SkipReason> {
        let mapping: Vec<(String, String)> = mapping
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let mut p = JsonParser::new(&mapping, &["request.headers.User-Agent".into()]).unwrap();
        let mut r = Record::default();
        r.clear(1);
        p.parse(line.as_bytes(), &mut r).map(|()| r)
    }

    #[test]
    fn nginx_escape_json_names() {
        let r = parse_with(&[], r#"{"time_iso8601":"2026-01-05T00:00:00+00:00","remote_addr":"1.2.3.4","request":"GET /a?b=1 HTTP/1.1","status":"200","remote_user":"-"}"#).unwrap();
        assert_eq!(r.time.unwrap().ms, 1_767_571_200_000);
        assert_eq!(
            (&*r.addr, &*r.method, &*r.path, r.status),
            (&b"1.2.3.4"[..], &b"GET"[..], &b"/a?b=1"[..], Some(200))
        );
    }

    #[test]
    fn caddy_with_docker_prefix() {
        let line = r#"caddy  | {"level":"info","ts":1716723772.6014807,"request":{"remote_ip":"10.5.1.1","client_ip":"10.10.10.117","method":"GET","uri":"/x","headers":{"User-Agent":["curl/8"]}},"status":200}"#;
        let r = parse_with(&[], line).unwrap();
        assert_eq!(r.time.unwrap().ms, 1_716_723_772_601);
        assert_eq!((&*r.addr, &*r.path), (&b"10.10.10.117"[..], &b"/x"[..]));
        assert_eq!(&*r.extra[0], b"curl/8");
        let startup = r#"caddy  | {"level":"info","ts":1761019822.3152757,"msg":"maxprocs: Leaving GOMAXPROCS=12"}"#;
        assert_eq!(
            parse_with(&[], startup).unwrap_err(),
            SkipReason::NotAccessEntry
        );
    }

    #[test]
    fn traefik_names() {
        let r = parse_with(&[], r#"{"StartUTC":"2026-01-05T00:00:01.5Z","ClientHost":"9.9.9.9","RequestMethod":"POST","RequestPath":"/login","DownstreamStatus":401}"#).unwrap();
        assert_eq!(
            (r.time.unwrap().ms, r.status),
            (1_767_571_201_500, Some(401))
        );
    }

    #[test]
    fn explicit_mapping_and_epoch_millis() {
        let r = parse_with(
            &[("time", "t.when"), ("client", "who")],
            r#"{"t":{"when":1767571200123},"who":"k1","path":"/p"}"#,
        )
        .unwrap();
        assert_eq!(
            (r.time.unwrap().ms, &*r.addr),
            (1_767_571_200_123, &b"k1"[..])
        );
        assert!(JsonParser::new(&[("nope".into(), "x".into())], &[]).is_err());
    }

    #[test]
    fn bad_lines() {
        assert_eq!(
            parse_with(&[], "not json").unwrap_err(),
            SkipReason::BadJson
        );
        assert_eq!(parse_with(&[], "{broken").unwrap_err(), SkipReason::BadJson);
        assert_eq!(
            parse_with(&[], r#"{"path":"/x"}"#).unwrap_err(),
            SkipReason::BadTime
        );
        assert_eq!(
            parse_with(&[], r#"{"ts":1,"path":"/x","status":"abc"}"#).unwrap_err(),
            SkipReason::BadStatus
        );
    }
}
