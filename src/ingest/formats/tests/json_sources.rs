//! The JSON sources (Cloud Logging, Azure, Cloudflare, Caddy, Traefik and
//! Envoy JSON) on their fixtures, with the counts worked out by hand.

use super::{Expected, T0, check, read};
use crate::ingest::FormatChoice;
use crate::ingest::arrival::TimeOf;

/// The JSON sources, worked out by hand.
const JSON_SOURCES: &[Expected] = &[
    // The 5th line is a Cloud Logging entry without httpRequest (skipped).
    Expected {
        file: "gcp.log",
        format: "gcp",
        lines: 5,
        parsed: 4,
        clients: 2,
        top_client: "192.0.2.5",
        top_requests: 3,
        busiest_second: 2,
        first_ms: T0 + 100,
    },
    // Arrival = time − timeTaken: 0.750, 0.900, −1.000 (a 3 s download), 2.099.
    Expected {
        file: "azure-frontdoor.log",
        format: "azure-frontdoor",
        lines: 4,
        parsed: 4,
        clients: 2,
        top_client: "192.0.2.8",
        top_requests: 3,
        busiest_second: 2,
        first_ms: T0 - 1_000,
    },
    Expected {
        file: "azure-appgw.log",
        format: "azure-appgw",
        lines: 5,
        parsed: 5,
        clients: 3,
        top_client: "192.0.2.77",
        top_requests: 3,
        busiest_second: 2,
        first_ms: T0,
    },
    // EdgeStartTimestamp as RFC 3339, Unix seconds and Unix nanoseconds.
    Expected {
        file: "cloudflare.log",
        format: "cloudflare",
        lines: 5,
        parsed: 5,
        clients: 3,
        top_client: "192.0.2.90",
        top_requests: 3,
        busiest_second: 3,
        first_ms: T0,
    },
    // downstream_remote_address without the port, `[2001:db8::5]:40000` too; status 0 counts.
    Expected {
        file: "envoy-json.log",
        format: "envoy-json",
        lines: 4,
        parsed: 4,
        clients: 2,
        top_client: "10.44.1.23",
        top_requests: 3,
        busiest_second: 2,
        first_ms: T0 + 100,
    },
    // client_ip preferred to remote_ip; arrival = ts − duration (0.625, 0.874, −1.250 for a 2.5 s websocket with status 0, 1.499); a TLS line skipped.
    Expected {
        file: "caddy.log",
        format: "caddy",
        lines: 5,
        parsed: 4,
        clients: 2,
        top_client: "203.0.113.7",
        top_requests: 3,
        busiest_second: 2,
        first_ms: T0 - 1_250,
    },
    Expected {
        file: "traefik-json.log",
        format: "traefik-json",
        lines: 3,
        parsed: 3,
        clients: 2,
        top_client: "192.0.2.44",
        top_requests: 2,
        busiest_second: 2,
        first_ms: T0 + 250,
    },
];

#[test]
fn json_sources() {
    for expected in JSON_SOURCES {
        check(expected);
    }
}

#[test]
fn json_sources_with_time_of_logged() {
    let first = |file| read(&[file], FormatChoice::Auto, TimeOf::Logged).table.ts[0];
    // Caddy: ts as written; Cloudflare: EdgeEndTimestamp; Envoy JSON: start + duration.
    assert_eq!(first("caddy.log"), T0 + 750);
    assert_eq!(first("cloudflare.log"), T0);
    assert_eq!(first("envoy-json.log"), T0 + 103);
    let last = |file| {
        *read(&[file], FormatChoice::Auto, TimeOf::Logged)
            .table
            .ts
            .last()
            .unwrap()
    };
    assert_eq!(last("cloudflare.log"), T0 + 32_000);
    // Traefik JSON: StartUTC + Duration (60 s for the websocket).
    assert_eq!(last("traefik-json.log"), T0 + 60_750);
}
