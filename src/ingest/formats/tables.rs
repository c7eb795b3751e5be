//! The tables of the named sources: format strings, column lists and JSON
//! field maps, each from its vendor's documentation (cited in
//! [`super::SOURCES`] and `docs/sources.md`).

use crate::ingest::columns::{DurationUnit, Layout, Role as ColumnRole};
use crate::ingest::json::{DurationUnit as JsonDuration, JsonMap};

/// Kubernetes ingress-nginx's default `log-format-upstream` (`upstreaminfo`).
pub(super) const INGRESS_NGINX: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id"#;

/// Envoy's default access log format, command operators renamed as variables
/// (`%START_TIME%` → `$start_time`, `%DURATION%` → `$duration`,
/// `%REQ(X-FORWARDED-FOR)%` → `$http_x_forwarded_for`, …).
pub(super) const ENVOY: &str = r#"[$start_time] "$request_method $request_uri $protocol" $status $response_flags $bytes_received $bytes_sent $duration $upstream_service_time "$http_x_forwarded_for" "$http_user_agent" "$request_id" "$authority" "$upstream_host""#;

/// Istio's default proxy access log format, renamed the same way
/// (`%DOWNSTREAM_REMOTE_ADDRESS%` → `$downstream_remote_address`).
pub(super) const ISTIO: &str = r#"[$start_time] "$request_method $request_uri $protocol" $status $response_flags $response_code_details $connection_termination_details "$upstream_transport_failure_reason" $bytes_received $bytes_sent $duration $upstream_service_time "$http_x_forwarded_for" "$http_user_agent" "$request_id" "$authority" "$upstream_host" $upstream_cluster $upstream_local_address $downstream_local_address $downstream_remote_address $requested_server_name $route_name"#;

/// AWS Application Load Balancer access log entries, in the documented order
/// (fields added later are read as extra columns).
pub(super) const ALB_FIELDS: &[&str] = &[
    "type",
    "time",
    "elb",
    "client:port",
    "target:port",
    "request_processing_time",
    "target_processing_time",
    "response_processing_time",
    "elb_status_code",
    "target_status_code",
    "received_bytes",
    "sent_bytes",
    "request",
    "user_agent",
    "ssl_cipher",
    "ssl_protocol",
    "target_group_arn",
    "trace_id",
    "domain_name",
    "chosen_cert_arn",
    "matched_rule_priority",
    "request_creation_time",
    "actions_executed",
    "redirect_url",
    "error_reason",
    "target:port_list",
    "target_status_code_list",
    "classification",
    "classification_reason",
    "conn_trace_id",
];

pub(super) static ALB: Layout = Layout {
    fields: Some(ALB_FIELDS),
    roles: &[
        ("time", ColumnRole::EndTime),
        ("client:port", ColumnRole::ClientPort),
        ("elb_status_code", ColumnRole::Status),
        ("request", ColumnRole::Request),
        ("request_creation_time", ColumnRole::StartTime),
    ],
    duration_unit: DurationUnit::Seconds,
    first_column: Some(&["http", "https", "h2", "grpcs", "ws", "wss"]),
    min_columns: 13,
    plus_for_space: false,
};

/// The W3C extended log file format's names (IIS, and the CloudFront names
/// that are the same); the `#Fields:` header says which a file has.
pub(super) const W3C_ROLES: &[(&str, ColumnRole)] = &[
    ("date", ColumnRole::Date),
    ("time", ColumnRole::Time),
    ("c-ip", ColumnRole::Client),
    ("cs-method", ColumnRole::Method),
    ("cs-uri-stem", ColumnRole::Stem),
    ("cs-uri-query", ColumnRole::Query),
    ("cs-uri", ColumnRole::Target),
    ("sc-status", ColumnRole::Status),
    ("x-forwarded-for", ColumnRole::Xff),
    ("cs(x-forwarded-for)", ColumnRole::Xff),
    ("cs-username", ColumnRole::User),
    ("time-taken", ColumnRole::Duration),
    ("cs-version", ColumnRole::Protocol),
    ("cs-protocol-version", ColumnRole::Protocol),
];

pub(super) static CLOUDFRONT: Layout = Layout {
    fields: None,
    roles: W3C_ROLES,
    duration_unit: DurationUnit::Seconds,
    first_column: None,
    min_columns: 2,
    plus_for_space: false,
};

pub(super) static W3C: Layout = Layout {
    fields: None,
    roles: W3C_ROLES,
    duration_unit: DurationUnit::Millis,
    first_column: None,
    min_columns: 2,
    plus_for_space: true,
};

/// Google Cloud Logging entries with an `httpRequest` (the HTTP(S) load
/// balancer's request logs, exported or read with `gcloud logging read`).
pub(super) static GCP: JsonMap = JsonMap {
    roles: &[
        ("time", &["timestamp"]),
        ("client", &["httpRequest.remoteIp"]),
        ("method", &["httpRequest.requestMethod"]),
        ("path", &["httpRequest.requestUrl"]),
        ("status", &["httpRequest.status"]),
        ("protocol", &["httpRequest.protocol"]),
    ],
    time_is_start: false,
    duration: None,
    logged_time: None,
    signature: &["httpRequest.requestUrl", "timestamp"],
};

/// Azure Front Door access logs (`FrontDoorAccessLog`), one record per line.
pub(super) static AZURE_FRONT_DOOR: JsonMap = JsonMap {
    roles: &[
        ("time", &["time"]),
        ("client", &["properties.clientIp"]),
        ("method", &["properties.httpMethod"]),
        ("path", &["properties.requestUri"]),
        ("status", &["properties.httpStatusCode"]),
    ],
    time_is_start: false,
    duration: Some(("properties.timeTaken", JsonDuration::Seconds)),
    logged_time: None,
    signature: &["properties.clientIp", "properties.httpStatusCode"],
};

/// Azure Application Gateway access logs (`ApplicationGatewayAccessLog`).
pub(super) static AZURE_APP_GATEWAY: JsonMap = JsonMap {
    roles: &[
        ("time", &["time", "timeStamp"]),
        ("client", &["properties.clientIP"]),
        ("method", &["properties.httpMethod"]),
        ("path", &["properties.requestUri"]),
        ("status", &["properties.httpStatus"]),
    ],
    time_is_start: false,
    duration: None,
    logged_time: None,
    signature: &["properties.clientIP", "properties.httpStatus"],
};

/// Cloudflare Logpush, the `http_requests` dataset.
pub(super) static CLOUDFLARE: JsonMap = JsonMap {
    roles: &[
        ("time", &["EdgeStartTimestamp"]),
        ("client", &["ClientIP"]),
        ("method", &["ClientRequestMethod"]),
        ("path", &["ClientRequestURI", "ClientRequestPath"]),
        ("status", &["EdgeResponseStatus"]),
        ("protocol", &["ClientRequestProtocol"]),
    ],
    time_is_start: true,
    duration: None,
    logged_time: Some(&["EdgeEndTimestamp", "EdgeStartTimestamp"]),
    signature: &["ClientRequestMethod", "EdgeStartTimestamp"],
};

/// Envoy JSON access logs with the key names of Istio's JSON encoding (and
/// Contour's), the de facto standard since Envoy has no default JSON format.
pub(super) static ENVOY_JSON: JsonMap = JsonMap {
    roles: &[
        ("time", &["start_time", "@timestamp", "timestamp"]),
        ("client", &["downstream_remote_address"]),
        ("xff", &["x_forwarded_for"]),
        ("method", &["method"]),
        ("path", &["path"]),
        ("status", &["response_code"]),
        ("protocol", &["protocol"]),
    ],
    time_is_start: true,
    duration: Some(("duration", JsonDuration::Millis)),
    logged_time: None,
    signature: &["downstream_remote_address", "response_code"],
};

/// Caddy's JSON access log (`http.log.access`).
pub(super) static CADDY: JsonMap = JsonMap {
    roles: &[
        ("time", &["ts"]),
        (
            "client",
            &[
                "request.client_ip",
                "request.remote_ip",
                "request.remote_addr",
            ],
        ),
        ("xff", &["request.headers.X-Forwarded-For"]),
        ("method", &["request.method"]),
        ("path", &["request.uri"]),
        ("status", &["status"]),
        ("user", &["user_id"]),
        ("protocol", &["request.proto"]),
    ],
    time_is_start: false,
    duration: Some(("duration", JsonDuration::Caddy)),
    logged_time: None,
    signature: &["request.uri", "ts"],
};

/// Traefik's JSON access log.
pub(super) static TRAEFIK_JSON: JsonMap = JsonMap {
    roles: &[
        ("time", &["StartUTC", "StartLocal"]),
        ("client", &["ClientHost"]),
        ("xff", &["request_X-Forwarded-For"]),
        ("method", &["RequestMethod"]),
        ("path", &["RequestPath"]),
        ("status", &["DownstreamStatus"]),
        ("user", &["ClientUsername"]),
        ("protocol", &["RequestProtocol"]),
    ],
    time_is_start: true,
    duration: Some(("Duration", JsonDuration::Nanos)),
    logged_time: None,
    signature: &["RequestPath", "StartUTC"],
};
