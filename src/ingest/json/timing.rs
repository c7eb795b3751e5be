//! Moving a JSON line's time between arrival and logging by its duration:
//! a source's own duration field, or nginx's `request_time` behind the
//! logged times it names by variable.

use crate::ingest::arrival;
use crate::ingest::json_doc::{FieldPath, JsonDoc};
use crate::ingest::time::Stamp;

/// The unit of a duration field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationUnit {
    Seconds,
    Millis,
    Nanos,
    /// Caddy's, in whichever `duration_format` its log has
    /// ([`arrival::caddy_duration_ms`]).
    Caddy,
}

/// How the event time is moved from the logged one, per source.
#[derive(Debug, Clone)]
pub(super) struct Timing {
    /// Subtract (arrival from an end time) or add (end from a start time).
    pub(super) subtract: bool,
    pub(super) duration: FieldPath,
    pub(super) unit: DurationUnit,
}

impl Timing {
    /// `time` moved by the line's duration (arrival from an end time, or end
    /// from a start time); as it is when the line has no usable duration.
    pub(super) fn moved<'a, D: JsonDoc<'a>>(&self, time: Stamp, doc: &D) -> Stamp {
        let Some(found) = doc.find(&self.duration) else {
            return time;
        };
        let ms = match self.unit {
            DurationUnit::Caddy => arrival::caddy_duration_ms(&doc.text(found)),
            DurationUnit::Seconds => doc.number(found).map(|s| s * 1e3),
            DurationUnit::Millis => doc.number(found),
            DurationUnit::Nanos => doc.number(found).map(|ns| ns / 1e6),
        };
        let Some(ms) = ms else {
            return time;
        };
        if !(0.0..1e12).contains(&ms) {
            return time;
        }
        let ms = ms.round() as i64;
        if self.subtract {
            arrival::arrival_from_end(time, ms)
        } else {
            arrival::end_from_arrival(time, ms)
        }
    }
}

/// nginx's variables for the time a line is logged (the end of the request),
/// and for the request's duration in seconds, as a JSON format names them.
pub(super) const NGINX_END_TIMES: [&str; 3] = ["time_iso8601", "time_local", "msec"];
pub(super) const NGINX_DURATION: &str = "request_time";

/// Whether `path` is one key named as nginx's logged time.
pub(super) fn is_nginx_end_time(path: &FieldPath) -> bool {
    matches!(&path.keys[..], [key] if NGINX_END_TIMES.contains(&key.as_str()))
}
