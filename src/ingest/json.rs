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

use super::IngestError;
use super::arrival::TimeOf;
use super::json_doc::{FieldPath, JsonDoc, TapeDoc, ValueDoc, json_object};
use super::json_tape::{Kind, NONE, Tape};
use super::record::{LineParser, Record, SkipReason, split_request};
pub(super) use glue::leading_object;
use glue::{before_entry, only_object};
use roles::{ROLES, Role};
pub use timing::DurationUnit;
use timing::{NGINX_DURATION, NGINX_END_TIMES, Timing, is_nginx_end_time};

/// The JSON fields of one log source: a table, read by [`JsonParser`].
#[derive(Debug, PartialEq, Eq)]
pub struct JsonMap {
    /// For each role name (`time`, `client`, `method`, `path`, `request`,
    /// `status`, `user`, `xff`, `protocol`), the dotted paths to try in order; roles not
    /// listed are not read.
    pub roles: &'static [(&'static str, &'static [&'static str])],
    /// True when the `time` role is when the request arrived (else when the
    /// line was logged, usually the end of the response).
    pub time_is_start: bool,
    /// The request's duration, to move between arrival and logged time.
    pub duration: Option<(&'static str, DurationUnit)>,
    /// With `--time-of logged`, read the time from these paths instead (a
    /// source that logs both the start and the end).
    pub logged_time: Option<&'static [&'static str]>,
    /// Paths every line of the source has (detection looks for them).
    pub signature: &'static [&'static str],
}

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
    /// Set for sources whose time is moved by a duration (`--time-of`).
    timing: Option<Timing>,
    /// For the `json` format, with `--time-of arrival`: nginx's logged times,
    /// read by their variable names, moved back by `request_time`.
    nginx_end: Option<Timing>,
    /// Whether the first lines hold such a time and `request_time` (so that
    /// the format's description names the time used).
    nginx_end_seen: bool,
    /// Where a second object starts in the line last parsed, when one was
    /// glued onto it (a newline missing): the entry parsed was the text
    /// before.
    glued: Option<usize>,
    /// How many entries cut short were looked past in the line being read
    /// (see `glue.rs`).
    cut_short: usize,
}

impl JsonParser {
    /// `mapping` holds `ROLE=PATH` pairs (`--field`); `extra` the paths of `field:NAME` keys.
    pub fn new(mapping: &[(String, String)], extra: &[String]) -> Result<Self, IngestError> {
        let texts: Vec<(Role, Vec<&str>)> = ROLES
            .iter()
            .map(|(role, _, defaults)| (*role, defaults.to_vec()))
            .collect();
        Self::with_paths(texts, mapping, extra)
    }

    /// With `--time-of arrival`, reads nginx's logged times (`time_iso8601`,
    /// `time_local`, `msec`, found by those names) as the arrival: the time
    /// minus `request_time`, as a literal `log_format` does. `head`, the
    /// input's first bytes, tells whether the description names that time.
    pub fn with_nginx_times(mut self, time_of: TimeOf, head: &[u8]) -> Self {
        if time_of == TimeOf::Arrival {
            self.nginx_end = Some(Timing {
                subtract: true,
                duration: self.path(NGINX_DURATION),
                unit: DurationUnit::Seconds,
            });
            let has = |key: &str| memchr::memmem::find(head, format!("\"{key}\"").as_bytes());
            self.nginx_end_seen =
                has(NGINX_DURATION).is_some() && NGINX_END_TIMES.iter().any(|k| has(k).is_some());
        }
        self
    }

    /// A parser for one source's fields (`--field` pairs still override them).
    pub fn for_map(
        map: &JsonMap,
        mapping: &[(String, String)],
        extra: &[String],
        time_of: TimeOf,
    ) -> Result<Self, IngestError> {
        let logged = time_of == TimeOf::Logged;
        let texts: Vec<(Role, Vec<&str>)> = ROLES
            .iter()
            .map(|(role, name, _)| {
                let paths = match (*role, map.logged_time) {
                    (Role::Time, Some(paths)) if logged => paths,
                    _ => map
                        .roles
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(&[][..], |(_, paths)| paths),
                };
                (*role, paths.to_vec())
            })
            .collect();
        let mut parser = Self::with_paths(texts, mapping, extra)?;
        let moved = map.logged_time.is_none() && logged == map.time_is_start;
        if let (Some((path, unit)), true) = (map.duration, moved) {
            let duration = parser.path(path);
            parser.timing = Some(Timing {
                subtract: !logged,
                duration,
                unit,
            });
        }
        Ok(parser)
    }

    fn with_paths<'m>(
        mut texts: Vec<(Role, Vec<&'m str>)>,
        mapping: &'m [(String, String)],
        extra: &[String],
    ) -> Result<Self, IngestError> {
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
            timing: None,
            nginx_end: None,
            nginx_end_seen: false,
            glued: None,
            cut_short: 0,
        };
        parser.paths = texts
            .into_iter()
            .map(|(role, paths)| (role, paths.into_iter().map(|p| parser.path(p)).collect()))
            .collect();
        parser.extra = extra.iter().map(|p| parser.path(p)).collect();
        Ok(parser)
    }

    /// Splits a dotted path and registers its first key (and, for a path
    /// with dots, the whole text as one key too: see [`FieldPath::flat`]).
    fn path(&mut self, text: &str) -> FieldPath {
        let keys: Vec<String> = text.split('.').map(str::to_string).collect();
        let flat = (keys.len() > 1).then(|| Box::new(self.key(text.to_string())));
        let mut path = self.key(keys[0].clone());
        path.keys = keys;
        path.flat = flat;
        path
    }

    /// The path of one key, registered as a first key.
    fn key(&mut self, key: String) -> FieldPath {
        let next = self.first_keys.len();
        let first = *self
            .first_index
            .entry(key.as_bytes().into())
            .or_insert(next);
        if first == next {
            self.first_keys.push(key.clone());
        }
        FieldPath {
            keys: vec![key],
            first,
            flat: None,
        }
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
        let get = |role| self.candidates(role).iter().find_map(|p| doc.find(p));
        let (method, path, request) = (get(Role::Method), get(Role::Path), get(Role::Request));
        let status = get(Role::Status);
        if method.is_none() && path.is_none() && request.is_none() && status.is_none() {
            return Err(SkipReason::NotAccessEntry);
        }
        let (time_path, time) = (self.candidates(Role::Time).iter())
            .find_map(|p| doc.find(p).map(|t| (p, t)))
            .and_then(|(p, t)| Some((p, doc.time(t)?)))
            .ok_or(SkipReason::BadTime)?;
        record.time = Some(match (&self.timing, &self.nginx_end) {
            (Some(timing), _) => timing.moved(time, doc),
            (None, Some(end)) if is_nginx_end_time(time_path) => end.moved(time, doc),
            _ => time,
        });
        record.status = match status {
            Some(s) => doc.status(s)?,
            None => None,
        };
        if let Some(request) = request.and_then(|r| doc.as_str(r)) {
            let (m, p, protocol) = split_request(request);
            record.protocol = protocol.unless_versionless();
            record.method = Cow::Owned(m.to_vec());
            record.path = Cow::Owned(p.to_vec());
        }
        if let Some(m) = method {
            record.method = doc.text(m);
        }
        record.no_method = method.is_none() && request.is_none();
        if let Some(p) = path {
            record.path = doc.text(p);
        }
        if let Some(version) = get(Role::Protocol) {
            record.protocol.read_field(&doc.text(version));
        }
        let text = |role| get(role).map(|v| doc.text(v)).unwrap_or_default();
        record.addr = text(Role::Client);
        record.user = text(Role::User);
        record.xff = text(Role::Xff);
        record.user_agent = text(Role::UserAgent);
        record.limit_req_status = text(Role::LimitReqStatus);
        for (slot, path) in record.extra.iter_mut().zip(&self.extra) {
            *slot = doc.find(path).map(|v| doc.text(v)).unwrap_or_default();
        }
        Ok(())
    }
}

impl JsonParser {
    /// Fills `record` from `text`, one JSON object.
    fn parse_object<'a>(
        &mut self,
        text: &'a [u8],
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        let mut tape = std::mem::take(&mut self.tape);
        let result = if tape.parse(text).is_ok() {
            self.fill_from_tape(text, &tape, record)
        } else if only_object(text) {
            // Outside the tape's subset (escapes, exponents, bytes that are
            // not UTF-8...) or not JSON at all.
            match json_object(text) {
                Some(object) => self.fill(&ValueDoc(&object), record),
                None => Err(SkipReason::BadJson),
            }
        } else {
            // More after the object (entries glued onto one line): not read
            // again whole, so that each entry of such a line costs its own
            // length.
            Err(SkipReason::BadJson)
        };
        self.tape = tape;
        result
    }
}

impl JsonParser {
    /// Fills `record` from the entry `line` starts with (a line's first,
    /// or one glued after another), finding any entry glued after it.
    fn parse_entry<'a>(
        &mut self,
        line: &'a [u8],
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        self.glued = None;
        let start = memchr::memchr(b'{', line).ok_or(SkipReason::BadJson)?;
        let text = &line[start..];
        match self.parse_object(text, record) {
            Err(SkipReason::BadJson) => {
                let at =
                    (self.second_entry(text, record.extra.len())).ok_or(SkipReason::BadJson)?;
                self.glued = Some(start + at);
                self.parse_object(before_entry(text, at), record)
            }
            parsed => parsed,
        }
    }
}

impl LineParser for JsonParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        self.cut_short = 0;
        match self.parse_entry(line, record) {
            Err(SkipReason::NotAccessEntry) if is_records_envelope(line) => {
                Err(SkipReason::Envelope)
            }
            result => result,
        }
    }

    fn parse_glued<'a>(
        &mut self,
        line: &'a [u8],
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        self.parse_entry(line, record)
    }

    fn glued(&mut self) -> Option<usize> {
        self.glued.take()
    }

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(self.clone())
    }

    fn name(&self) -> String {
        "json".into()
    }

    fn time_used(&self) -> Option<&'static str> {
        self.nginx_end_seen.then_some(
            "arrival: time_iso8601, time_local or msec minus request_time; other times as logged",
        )
    }
}

/// Whether `text` (a line, or a file's first bytes) starts an object whose
/// first member is a `records` array: the envelope Azure's storage and Event
/// Hubs deliver entries in, one document for many.
pub fn is_records_envelope(text: &[u8]) -> bool {
    compact_start(text).starts_with(b"{\"records\":[")
}

/// The first 64 bytes of `text` without their white space: how a document
/// starts, pretty-printed or not.
pub fn compact_start(text: &[u8]) -> Vec<u8> {
    (text.iter().take(64).copied())
        .filter(|b| !b.is_ascii_whitespace())
        .collect()
}

mod glue;
mod roles;
#[cfg(test)]
mod tests;
mod timing;
