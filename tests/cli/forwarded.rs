//! `xff` keys end to end: one sequence of requests, from several connecting
//! addresses with X-Forwarded-For headers that start with no address
//! (`unknown`), carry a port or are missing, sent to a real nginx and a real
//! HAProxy running the configurations `rlctl export` writes, and replayed by
//! `rlctl simulate --gateway` from a log of the same requests: each real
//! server's answers are the replay's decisions, request by request, though
//! the two servers key these requests differently.

use std::net::{Ipv4Addr, SocketAddr};

use crate::export::{export, start_haproxy};
use crate::support::nginx::{Nginx, http_get_with};
use crate::support::{rlctl, success};

/// One rule keyed on X-Forwarded-For: 1 at once and 3 a minute.
const POLICY: &str = "[[rule]]\nname='g'\nkey='xff'\nlimit='3/1m'\nburst=1\n";

/// Each request's connecting address (127.0.0.N) and X-Forwarded-For header.
const REQUESTS: [(u8, Option<&str>); 18] = [
    (2, Some("unknown")),
    (3, Some("unknown")),
    (2, Some("unknown, 198.51.100.1")),
    (3, Some("unknown")),
    (2, Some("unknown")),
    (3, Some("unknown")),
    (4, Some("192.0.2.9:443")),
    (5, Some("192.0.2.9")),
    (4, Some(" 192.0.2.9:8080 , 10.0.0.1")),
    (5, Some("192.0.2.9")),
    (4, Some("192.0.2.9")),
    (4, Some("[2001:db8::9]")),
    (5, Some("[2001:db8::9]")),
    (6, None),
    (6, None),
    (6, None),
    (6, None),
    (6, None),
];

/// Sends [`REQUESTS`] in order to `server`; the statuses.
fn send(server: SocketAddr) -> Vec<u16> {
    REQUESTS
        .iter()
        .map(|&(source, xff)| {
            let header = xff.map_or(String::new(), |v| format!("X-Forwarded-For: {v}\r\n"));
            http_get_with(server, Ipv4Addr::new(127, 0, 0, source), "/", &header).unwrap()
        })
        .collect()
}

/// `rlctl simulate --gateway GATEWAY --decisions` over a log of [`REQUESTS`]
/// 10 ms apart, as the servers log them: allowed or not, request by request.
fn replayed(gateway: &str) -> Vec<bool> {
    let dir = tempfile::tempdir().unwrap();
    let log: String = (REQUESTS.iter().enumerate())
        .map(|(i, (source, xff))| {
            format!(
                "1767571200.{:03} 127.0.0.{source} \"GET / HTTP/1.1\" 200 \"{}\"\n",
                i * 10,
                xff.unwrap_or("-")
            )
        })
        .collect();
    let (log_path, policy, decisions) = (
        dir.path().join("access.log"),
        dir.path().join("policy.toml"),
        dir.path().join("decisions.csv"),
    );
    std::fs::write(&log_path, log).unwrap();
    std::fs::write(&policy, POLICY).unwrap();
    success(
        rlctl()
            .args(["simulate", "-q", "--gateway", gateway, "--log-format"])
            .arg(r#"$msec $remote_addr "$request" $status "$http_x_forwarded_for""#)
            .arg("--policy")
            .arg(&policy)
            .arg("--decisions")
            .arg(&decisions)
            .arg(&log_path),
    );
    let csv = std::fs::read_to_string(&decisions).unwrap();
    csv.lines().skip(1).map(|l| l.ends_with(",true")).collect()
}

fn admitted(statuses: &[u16]) -> Vec<bool> {
    statuses.iter().map(|&s| s == 200).collect()
}

#[test]
fn the_replays_key_xff_as_the_real_nginx_and_haproxy_do() {
    // The policy's reading (nginx's map): `unknown` is one client, 6 requests;
    // 192.0.2.9 with or without a port another, 5; 2001:db8::9 a third, 2;
    // the connecting 127.0.0.6 a fourth, 5. nginx takes the one at once as
    // burst=0: the first of each passes, the rest come within its 20 s.
    let nginx = replayed("nginx");
    let first_only = |n: usize| (0..n).map(|i| i == 0);
    let expected: Vec<bool> = [6, 5, 2, 5].into_iter().flat_map(first_only).collect();
    assert_eq!(nginx, expected);
    // HAProxy's (`req.hdr_ip`, else `src`): `unknown` is no address, so those
    // requests count by their connecting address, 3 each; HAProxy denies
    // above C + L - 1 = 3 earlier ones, the fifth of 192.0.2.9 and of
    // 127.0.0.6 (keyed as one client, `unknown` would lose its fifth and sixth).
    let haproxy = replayed("haproxy");
    let up_to_four = |n: usize| (0..n).map(|i| i < 4);
    let expected: Vec<bool> = [3, 3, 5, 2, 5].into_iter().flat_map(up_to_four).collect();
    assert_eq!(haproxy, expected);

    let config = format!(
        "{}\nserver {{\n    listen 127.0.0.1:{{{{port}}}};\n    location / {{ empty_gif; }}\n}}\n",
        export(POLICY, "nginx", &[])
    );
    if let Some(server) = Nginx::start(&config) {
        let statuses = send(server.addr());
        assert_eq!(
            admitted(&statuses),
            nginx,
            "{statuses:?}\n{}",
            server.error_log()
        );
    }
    if let Some((_running, addr, _dir)) = start_haproxy(POLICY) {
        let statuses = send(addr);
        assert_eq!(admitted(&statuses), haproxy, "{statuses:?}");
    }
}
