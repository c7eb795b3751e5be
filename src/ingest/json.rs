//! JSON lines: one object per line, fields found by their usual names or by an
//! explicit `--field ROLE=PATH` mapping with dotted paths into nested objects.
//!
//! Recognised without flags: nginx `escape=json` formats built from nginx variable
//! names, Caddy (`ts`, `request.client_ip`/`remote_ip`, `request.method`,
//! `request.uri`, `status`) and Traefik (`StartUTC`, `ClientHost`, `RequestMethod`,
//! `RequestPath`, `DownstreamStatus`). Text before the first `{` (a
//! docker-compose `caddy  | ` prefix) is ignored.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::IngestError;
use super::json_doc::{FieldPath, JsonDoc, TapeDoc, ValueDoc};
use super::json_tape::{Kind, NONE, Tape};
use super::record::{LineParser, Record, SkipReason, split_request};

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
    /// For each role (in [`ROLES`] order), the paths to try in order.
    paths: Vec<(Role, Vec<FieldPath>)>,
    extra: Vec<FieldPath>,
    /// The first key of every path, each once; [`FieldPath::first`] indexes it.
    first_keys: Vec<String>,
    /// `first_keys` by name.
    first_index: FxHashMap<Box<[u8]>, usize>,
    /// The tape of the current line, and its root members by first key (reused).
    tape: Tape,
    firsts: Vec<u32>,
}

impl JsonParser {
    /// `mapping` holds `ROLE=PATH` pairs (`--field`); `extra` the paths of `field:NAME` keys.
    pub fn new(mapping: &[(String, String)], extra: &[String]) -> Result<Self, IngestError> {
        let mut texts: Vec<(Role, Vec<&str>)> = ROLES
            .iter()
            .map(|(role, _, defaults)| (*role, defaults.to_vec()))
            .collect();
        for (name, path) in mapping {
            let Some(i) = ROLES.iter().position(|(_, n, _)| n == name) else {
                return Err(IngestError::Usage(format!(
                    "--field {name}={path}: unknown role `{name}` (roles: {})",
                    role_names().join(", ")
                )));
            };
            texts[i].1 = vec![path.as_str()];
        }
        let mut parser = JsonParser {
            paths: Vec::new(),
            extra: Vec::new(),
            first_keys: Vec::new(),
            first_index: FxHashMap::default(),
            tape: Tape::default(),
            firsts: Vec::new(),
        };
        parser.paths = texts
            .into_iter()
            .map(|(role, paths)| (role, paths.into_iter().map(|p| parser.path(p)).collect()))
            .collect();
        parser.extra = extra.iter().map(|p| parser.path(p)).collect();
        Ok(parser)
    }

    /// Splits a dotted path and registers its first key.
    fn path(&mut self, text: &str) -> FieldPath {
        let keys: Vec<String> = text.split('.').map(str::to_string).collect();
        let next = self.first_keys.len();
        let first = *self
            .first_index
            .entry(keys[0].as_bytes().into())
            .or_insert(next);
        if first == next {
            self.first_keys.push(keys[0].clone());
        }
        FieldPath { keys, first }
    }

    fn fill_from_tape<'a>(
        &mut self,
        text: &'a [u8],
        tape: &Tape,
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        let root = tape.root();
        if root.kind != Kind::Object {
            return Err(SkipReason::BadJson);
        }
        self.firsts.clear();
        self.firsts.resize(self.first_keys.len(), NONE);
        for (index, member) in tape.children(root) {
            let key = &text[member.key_start as usize..member.key_end as usize];
            if let Some(&first) = self.first_index.get(key) {
                self.firsts[first] = index;
            }
        }
        let doc = TapeDoc {
            text,
            tape,
            firsts: &self.firsts,
        };
        self.fill(&doc, record)
    }

    fn candidates(&self, role: Role) -> &[FieldPath] {
        self.paths
            .iter()
            .find(|(r, _)| *r == role)
            .map_or(&[], |(_, p)| p)
    }

    /// Fills `record` from a parsed line, whichever reader parsed it.
    fn fill<'a, D: JsonDoc<'a>>(&self, doc: &D, record: &mut Record<'a>) -> Result<(), SkipReason> {
        let get = |role| self.candidates(role).iter().find_map(|p| doc.lookup(p));
        let (method, path, request) = (get(Role::Method), get(Role::Path), get(Role::Request));
        let status = get(Role::Status);
        if method.is_none() && path.is_none() && request.is_none() && status.is_none() {
            return Err(SkipReason::NotAccessEntry);
        }
        record.time = Some(
            get(Role::Time)
                .and_then(|t| doc.time(t))
                .ok_or(SkipReason::BadTime)?,
        );
        record.status = match status {
            Some(s) => doc.status(s)?,
            None => None,
        };
        if let Some(request) = request.and_then(|r| doc.as_str(r)) {
            let (m, p) = split_request(request);
            record.method = Cow::Owned(m.to_vec());
            record.path = Cow::Owned(p.to_vec());
        }
        if let Some(m) = method {
            record.method = doc.text(m);
        }
        if let Some(p) = path {
            record.path = doc.text(p);
        }
        let text = |role| get(role).map(|v| doc.text(v)).unwrap_or_default();
        record.addr = text(Role::Client);
        record.user = text(Role::User);
        record.xff = text(Role::Xff);
        record.limit_req_status = text(Role::LimitReqStatus);
        for (slot, path) in record.extra.iter_mut().zip(&self.extra) {
            *slot = doc.lookup(path).map(|v| doc.text(v)).unwrap_or_default();
        }
        Ok(())
    }
}

impl LineParser for JsonParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        let start = memchr::memchr(b'{', line).ok_or(SkipReason::BadJson)?;
        let text = &line[start..];
        let mut tape = std::mem::take(&mut self.tape);
        let result = if tape.parse(text).is_ok() {
            self.fill_from_tape(text, &tape, record)
        } else {
            // Outside the tape's subset (escapes, exponents...) or not JSON at all.
            let object: Value = serde_json::from_slice(text).map_err(|_| SkipReason::BadJson)?;
            if !object.is_object() {
                return Err(SkipReason::BadJson);
            }
            self.fill(&ValueDoc(&object), record)
        };
        self.tape = tape;
        result
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

    /// The same line parsed only through `serde_json`.
    fn parse_by_value<'a>(p: &JsonParser, line: &'a [u8]) -> Result<Record<'a>, SkipReason> {
        let mut r = Record::default();
        r.clear(p.extra.len());
        let start = memchr::memchr(b'{', line).ok_or(SkipReason::BadJson)?;
        let object: Value =
            serde_json::from_slice(&line[start..]).map_err(|_| SkipReason::BadJson)?;
        if !object.is_object() {
            return Err(SkipReason::BadJson);
        }
        p.fill(&ValueDoc(&object), &mut r).map(|()| r)
    }

    /// One JSON member as text: keys access logs use, values of every kind.
    fn member() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let key = proptest::sample::select(vec![
            "time",
            "ts",
            "msec",
            "remote_addr",
            "request",
            "status",
            "method",
            "uri",
            "remote_user",
            "limit_req_status",
            "http_x_forwarded_for",
            "headers",
            "other",
        ]);
        let scalar = proptest::sample::select(vec![
            r#""2026-01-05T00:00:01.5Z""#,
            r#""10/Oct/2000:13:55:36 +0000""#,
            "1767571200",
            "1767571200123",
            "1716723772.6014807",
            "1.7e9",
            "-3",
            "200",
            "404.0",
            r#""503""#,
            r#""GET /a/1?x=2 HTTP/1.1""#,
            r#""GET""#,
            r#""/a\"b""#,
            r#""1.2.3.4""#,
            r#""-""#,
            r#""PASSED""#,
            "true",
            "null",
            "[]",
            r#"["curl/8", 2]"#,
            r#""caf\u00e9""#,
            r#""\u00ff\u00fe""#,
            "12345678901234567890",
        ]);
        let nested = (key.clone(), scalar.clone())
            .prop_map(|(k, v)| format!(r#"{{"client_ip":"9.9.9.9","{k}":{v},"uri":"/n/7"}}"#));
        let value = prop_oneof![4 => scalar.prop_map(str::to_string), 1 => nested];
        (key, value).prop_map(|(k, v)| format!(r#""{k}":{v}"#))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        #[test]
        fn the_tape_and_serde_json_read_lines_alike(
            members in proptest::collection::vec(member(), 0..8),
            damage in proptest::option::of((0usize..200, 0usize..3)),
        ) {
            // A timestamp and a request first, so that most lines are events;
            // later members may repeat their keys (the last one counts).
            let mut line = format!(
                r#"prefix {{"time":"2026-01-05T00:00:00Z","request":"GET /r HTTP/1.1","status":201{}{}}}"#,
                if members.is_empty() { "" } else { "," },
                members.join(",")
            );
            if let Some((at, what)) = damage {
                let at = (0..=at.min(line.len())).rev().find(|&i| line.is_char_boundary(i)).unwrap_or(0);
                line.insert_str(at, ["}", ",", "\""][what]);
            }
            let extra = ["request.headers".to_string(), "other".to_string()];
            let mut fast = JsonParser::new(&[], &extra).unwrap();
            let slow = JsonParser::new(&[], &extra).unwrap();
            let mut r = Record::default();
            r.clear(2);
            let got = fast.parse(line.as_bytes(), &mut r).map(|()| r);
            let want = parse_by_value(&slow, line.as_bytes());
            match (got, want) {
                (Ok(a), Ok(b)) => {
                    proptest::prop_assert_eq!(
                        (a.time, &a.addr, &a.user, &a.xff, &a.method, &a.path, a.status),
                        (b.time, &b.addr, &b.user, &b.xff, &b.method, &b.path, b.status),
                        "{}", line
                    );
                    proptest::prop_assert_eq!(&a.limit_req_status, &b.limit_req_status);
                    proptest::prop_assert_eq!(&a.extra, &b.extra);
                }
                (a, b) => proptest::prop_assert_eq!(a.err(), b.err(), "{}", line),
            }
        }
    }
}
