//! The named log sources (`--log-format alb`, `traefik`, …): for each, the
//! parser family that reads it and the table that configures that parser,
//! the client and time it uses, and where its fields are documented.
//!
//! A source is data, not code: a new one is a row here plus, for its family,
//! a column list, a JSON field map or an nginx-style format string. The
//! families (one parser each) are [`combined`](super::combined),
//! [`log_format`](super::log_format), [`columns`](super::columns),
//! [`json`](super::json) and [`haproxy`](super::haproxy).

use super::arrival::TimeOf;
use super::columns::{self, ColumnsParser, Layout, Separator};
use super::combined::CombinedParser;
use super::haproxy::HaproxyParser;
use super::json::{JsonMap, JsonParser};
use super::log_escapes::LogEscape;
use super::log_format::LogFormatParser;
use super::record::LineParser;
use super::{IngestError, Settings};

/// How a source's lines are parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Family {
    /// The combined parser with a prefix or trailer of the source's own.
    Combined(CombinedKind),
    /// A fixed format written as an nginx `log_format` string (the variable
    /// names give each field its role, see [`log_format`](super::log_format)).
    LogFormat {
        format: &'static str,
        /// The format logs no client address: use the first X-Forwarded-For address.
        addr_from_xff: bool,
        /// How the server escapes bytes of the target: as `\xHH` (nginx),
        /// or not at all (Envoy).
        escape: LogEscape,
    },
    /// Columns named by a `#Fields:` header or a documented list.
    Columns(&'static Layout),
    /// JSON lines with the source's field names.
    Json(&'static JsonMap),
    /// HAProxy's HTTP log format.
    Haproxy,
}

/// The variants of combined lines a source may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CombinedKind {
    /// Apache `vhost_combined`: `%v:%p` before the address.
    Vhost,
    /// Traefik: `COUNT "ROUTER" "URL" Nms` after the user agent.
    Traefik,
}

/// A named log source.
#[derive(Debug, PartialEq, Eq)]
pub struct Source {
    /// The `--log-format` name.
    pub name: &'static str,
    /// The product, for messages and docs.
    pub title: &'static str,
    pub family: Family,
    /// Where the client address of `--key ip` comes from.
    pub client: &'static str,
    /// The time used by default (`--time-of arrival`).
    pub arrival: &'static str,
    /// The time used with `--time-of logged`.
    pub logged: &'static str,
    /// The time resolution the source logs.
    pub resolution: &'static str,
    /// Where the fields are documented (vendor page or source file).
    pub doc: &'static str,
}

/// Every named source, the most specific first (detection tries them in order).
pub static SOURCES: &[Source] = &[
    Source {
        name: "gcp",
        title: "Google Cloud HTTP(S) load balancer (Cloud Logging JSON)",
        family: Family::Json(&GCP),
        client: "httpRequest.remoteIp",
        arrival: "timestamp (as logged)",
        logged: "timestamp",
        resolution: "microsecond (kept to the millisecond)",
        doc: "https://cloud.google.com/load-balancing/docs/https/https-logging-monitoring; https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry#HttpRequest",
    },
    Source {
        name: "azure-frontdoor",
        title: "Azure Front Door access log",
        family: Family::Json(&AZURE_FRONT_DOOR),
        client: "properties.clientIp",
        arrival: "time minus properties.timeTaken (arrival)",
        logged: "time (when the edge delivered the response)",
        resolution: "second or finer, as the time is written",
        doc: "https://learn.microsoft.com/en-us/azure/frontdoor/monitor-front-door-reference (FrontDoorAccessLog)",
    },
    Source {
        name: "azure-appgw",
        title: "Azure Application Gateway access log",
        family: Family::Json(&AZURE_APP_GATEWAY),
        client: "properties.clientIP",
        arrival: "time (as logged; timeTaken's unit differs between v1 and v2)",
        logged: "time",
        resolution: "second or finer, as the time is written",
        doc: "https://learn.microsoft.com/en-us/azure/application-gateway/monitor-application-gateway-reference (ApplicationGatewayAccessLog)",
    },
    Source {
        name: "cloudflare",
        title: "Cloudflare Logpush (http_requests)",
        family: Family::Json(&CLOUDFLARE),
        client: "ClientIP",
        arrival: "EdgeStartTimestamp (arrival; RFC 3339, Unix seconds or nanoseconds)",
        logged: "EdgeEndTimestamp",
        resolution: "as the timestamps option writes it (unixnano: nanoseconds)",
        doc: "https://developers.cloudflare.com/logs/reference/log-fields/zone/http_requests/",
    },
    Source {
        name: "envoy-json",
        title: "Envoy JSON access log (Istio's key names)",
        family: Family::Json(&ENVOY_JSON),
        client: "downstream_remote_address without the port",
        arrival: "start_time (%START_TIME%, arrival)",
        logged: "start_time plus duration",
        resolution: "millisecond",
        doc: "https://istio.io/latest/docs/tasks/observability/logs/access-log/; envoyproxy/envoy: docs/root/configuration/observability/access_log/usage.rst (Format Dictionaries)",
    },
    Source {
        name: "caddy",
        title: "Caddy JSON access log",
        family: Family::Json(&CADDY),
        client: "request.client_ip (set from trusted proxies), else request.remote_ip",
        arrival: "ts minus duration (arrival)",
        logged: "ts (when the response was written)",
        resolution: "sub-millisecond (kept to the millisecond)",
        doc: "https://caddyserver.com/docs/logging; caddyserver/caddy: modules/caddyhttp/server.go (logRequest)",
    },
    Source {
        name: "traefik-json",
        title: "Traefik JSON access log",
        family: Family::Json(&TRAEFIK_JSON),
        client: "ClientHost",
        arrival: "StartUTC (arrival)",
        logged: "StartUTC plus Duration",
        resolution: "nanosecond (kept to the millisecond)",
        doc: "https://doc.traefik.io/traefik/observability/access-logs/ (JSON format, fields)",
    },
    Source {
        name: "alb",
        title: "AWS Application Load Balancer",
        family: Family::Columns(&ALB),
        client: "client:port without the port",
        arrival: "request_creation_time (when the load balancer received the request)",
        logged: "time (when the load balancer sent the response)",
        resolution: "microsecond (kept to the millisecond)",
        doc: "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-access-logs.html#access-log-entry-format",
    },
    Source {
        name: "cloudfront",
        title: "AWS CloudFront standard logs",
        family: Family::Columns(&CLOUDFRONT),
        client: "c-ip",
        arrival: "date + time minus time-taken (arrival)",
        logged: "date + time (when the response ended)",
        resolution: "second",
        doc: "https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logs-reference.html#BasicDistributionFileFormat",
    },
    Source {
        name: "w3c",
        title: "W3C extended log file format (IIS)",
        family: Family::Columns(&W3C),
        client: "c-ip",
        arrival: "date + time minus time-taken in ms (arrival)",
        logged: "date + time (when the transaction completed)",
        resolution: "second",
        doc: "https://www.w3.org/TR/WD-logfile.html; https://learn.microsoft.com/en-us/windows/win32/http/w3c-logging",
    },
    Source {
        name: "haproxy",
        title: "HAProxy HTTP log (option httplog), behind a syslog prefix",
        family: Family::Haproxy,
        client: "%ci (the port dropped)",
        arrival: "[%tr] (when the request arrived; the accept date before HAProxy 1.9)",
        logged: "[%tr] plus Ta (the total active time)",
        resolution: "millisecond",
        doc: "haproxy/haproxy: doc/configuration.txt, section \"HTTP log format\"",
    },
    Source {
        name: "ingress-nginx",
        title: "Kubernetes ingress-nginx (upstreaminfo)",
        family: Family::LogFormat {
            format: INGRESS_NGINX,
            addr_from_xff: false,
            escape: LogEscape::Default,
        },
        client: "$remote_addr",
        arrival: "$time_local minus $request_time (arrival)",
        logged: "$time_local (when the response ended)",
        resolution: "second",
        doc: "kubernetes/ingress-nginx: internal/ingress/controller/config/config.go (logFormatUpstream); https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/log-format/",
    },
    Source {
        name: "traefik",
        title: "Traefik common log format",
        family: Family::Combined(CombinedKind::Traefik),
        client: "ClientHost",
        arrival: "StartUTC (when the request arrived)",
        logged: "StartUTC plus the duration",
        resolution: "second",
        doc: "traefik/traefik: pkg/middlewares/accesslog/logger_formatters.go (CommonLogFormatter); https://doc.traefik.io/traefik/observability/access-logs/",
    },
    Source {
        name: "istio",
        title: "Istio proxy (Envoy) default format",
        family: Family::LogFormat {
            format: ISTIO,
            addr_from_xff: false,
            escape: LogEscape::None,
        },
        client: "%DOWNSTREAM_REMOTE_ADDRESS% without the port",
        arrival: "%START_TIME% (arrival)",
        logged: "%START_TIME% plus %DURATION%",
        resolution: "millisecond",
        doc: "https://istio.io/latest/docs/tasks/observability/logs/access-log/#default-access-log-format",
    },
    Source {
        name: "envoy",
        title: "Envoy default format",
        family: Family::LogFormat {
            format: ENVOY,
            addr_from_xff: true,
            escape: LogEscape::None,
        },
        client: "the first X-Forwarded-For address (Envoy's default format logs no client address)",
        arrival: "%START_TIME% (arrival)",
        logged: "%START_TIME% plus %DURATION%",
        resolution: "millisecond",
        doc: "envoyproxy/envoy: docs/root/configuration/observability/access_log/usage.rst (Default Format String)",
    },
    Source {
        name: "vhost_combined",
        title: "Apache vhost_combined",
        family: Family::Combined(CombinedKind::Vhost),
        client: "%h (after the %v:%p virtual host, kept as field `vhost`)",
        arrival: "%t (the time the request was received)",
        logged: "%t",
        resolution: "second",
        doc: "https://httpd.apache.org/docs/2.4/mod/mod_log_config.html#formats; LogFormat vhost_combined in Debian's apache2.conf",
    },
];

/// The source called `name` (`--log-format NAME`).
pub fn named(name: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.name == name)
}

/// What the report and stderr say about an input read as `source`.
pub fn describe(source: &Source, time_of: TimeOf) -> String {
    let time = match time_of {
        TimeOf::Arrival => source.arrival,
        TimeOf::Logged => source.logged,
    };
    format!("{}; client: {}; time: {time}", source.name, source.client)
}

/// The parser of `source` configured by `settings`, for an input whose first
/// bytes are `head` (where a `#Fields:` header names the columns).
pub fn parser(
    source: &Source,
    settings: &Settings,
    head: &[u8],
) -> Result<Box<dyn LineParser>, IngestError> {
    let extra = &settings.keys.fields;
    let logged = settings.time_of == TimeOf::Logged;
    Ok(match source.family {
        Family::Combined(kind) => {
            let parser = CombinedParser::new(extra)?.with_xff(settings.keys.uses_xff());
            Box::new(match kind {
                CombinedKind::Vhost => parser.with_vhost(),
                CombinedKind::Traefik => parser.with_traefik(logged),
            })
        }
        Family::LogFormat {
            format,
            addr_from_xff,
            escape,
        } => {
            let mut parser = LogFormatParser::new(format, extra)?.with_time_of(settings.time_of);
            if addr_from_xff {
                parser = parser.with_addr_from_xff();
            }
            Box::new(parser.with_escape(escape))
        }
        Family::Haproxy => Box::new(HaproxyParser::new(extra, settings.time_of)?),
        Family::Json(map) => Box::new(JsonParser::for_map(
            map,
            &settings.json_fields,
            extra,
            settings.time_of,
        )?),
        Family::Columns(layout) => {
            let names = match layout.fields {
                Some(fields) => fields.iter().map(|f| f.to_string()).collect(),
                None => columns::header_fields(head).ok_or_else(|| {
                    IngestError::Format(format!(
                        "--log-format {}: no `#Fields:` header in the first lines",
                        source.name
                    ))
                })?,
            };
            let separator = match layout.fields {
                Some(_) => Separator::Space,
                None => columns::separator_of(head),
            };
            Box::new(ColumnsParser::new(
                layout,
                &names,
                separator,
                extra,
                settings.time_of,
            )?)
        }
    })
}

mod tables;
#[cfg(test)]
mod tests;

use tables::{
    ALB, AZURE_APP_GATEWAY, AZURE_FRONT_DOOR, CADDY, CLOUDFLARE, CLOUDFRONT, ENVOY, ENVOY_JSON,
    GCP, INGRESS_NGINX, ISTIO, TRAEFIK_JSON, W3C,
};
