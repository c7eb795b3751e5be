//! The roles a JSON access entry's fields play, and the names each is
//! found under without `--field`: nginx variable names, Caddy's and
//! Traefik's.

/// The fields rlctl can take from a JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Time,
    Client,
    User,
    Xff,
    UserAgent,
    Method,
    Path,
    Request,
    Status,
    LimitReqStatus,
    Protocol,
}

pub(super) const ROLES: [(Role, &str, &[&str]); 11] = [
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
        Role::UserAgent,
        "user_agent",
        &[
            "http_user_agent",
            "user_agent",
            "userAgent",
            "request.headers.User-Agent",
            "request_User-Agent",
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
    (
        Role::Protocol,
        "protocol",
        &[
            "server_protocol",
            "protocol",
            "request.proto",
            "RequestProtocol",
        ],
    ),
];
