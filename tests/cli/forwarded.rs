//! `xff` keys end to end: one sequence of requests, from several connecting
//! addresses with X-Forwarded-For headers that start with no address
//! (`unknown`), carry a port or are missing, sent to a real nginx and a real
//! HAProxy running the configurations `rlctl export` writes, and replayed by
//! `rlctl simulate --gateway` from a log of the same requests: each real
//! server's answers are the replay's decisions, request by request, though
//! the two servers key these requests differently.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::export::{export, start_haproxy};
use crate::support::nginx::{Nginx, http_get_with};
use crate::support::{rlctl, success};

/// One rule keyed on X-Forwarded-For: 1 at once and 3 a minute.
const POLICY: &str = "[[rule]]\nname='g'\nkey='xff'\nlimit='3/1m'\nburst=1\n";

/// Each request's connecting address (127.0.0.N) and X-Forwarded-For header.
const REQUESTS: [(u8, Option<&str>); 19] = [
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
    (5, Some("2001:DB8::9")),
    (6, None),
    (6, None),
    (6, None),
    (6, None),
    (6, None),
];

/// One request: the connecting address 127.0.0.N, the X-Forwarded-For
/// header and the Basic-auth user (`None`: neither header).
type Request<'a> = (u8, Option<&'a str>, Option<&'a str>);

/// `requests` of [`REQUESTS`]' shape, without users.
fn anonymous(requests: &[(u8, Option<&'static str>)]) -> Vec<Request<'static>> {
    requests
        .iter()
        .map(|&(source, xff)| (source, xff, None))
        .collect()
}

/// Sends `requests` in order to `server`; the statuses.
fn send(server: SocketAddr, requests: &[Request<'_>]) -> Vec<u16> {
    requests
        .iter()
        .map(|&(source, xff, user)| {
            let mut headers = xff.map_or(String::new(), |v| format!("X-Forwarded-For: {v}\r\n"));
            if let Some(user) = user {
                let credentials = basic(&format!("{user}:x"));
                headers.push_str(&format!("Authorization: Basic {credentials}\r\n"));
            }
            http_get_with(server, Ipv4Addr::new(127, 0, 0, source), "/", &headers).unwrap()
        })
        .collect()
}

/// Base64 of `text`, as Basic authentication sends credentials.
fn basic(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            let c = if i <= chunk.len() {
                ALPHABET[(n >> (18 - 6 * i) & 63) as usize]
            } else {
                b'='
            };
            out.push(c as char);
        }
    }
    out
}

/// `rlctl simulate --gateway GATEWAY --policy POLICY --decisions` over a log
/// of `requests` 10 ms apart, as the servers log them: allowed or not,
/// request by request.
fn replayed(gateway: &str, policy_text: &str, requests: &[Request<'_>]) -> Vec<bool> {
    let log: String = (requests.iter().enumerate())
        .map(|(i, (source, xff, user))| {
            format!(
                "1767571200.{:03} 127.0.0.{source} {} \"GET / HTTP/1.1\" 200 \"{}\"\n",
                i * 10,
                user.unwrap_or("-"),
                xff.unwrap_or("-")
            )
        })
        .collect();
    decisions_of(gateway, policy_text, &log)
}

/// `rlctl simulate --gateway GATEWAY --policy POLICY --decisions` over `log`
/// (lines of the servers' format): allowed or not, request by request.
fn decisions_of(gateway: &str, policy_text: &str, log: &str) -> Vec<bool> {
    let dir = tempfile::tempdir().unwrap();
    let (log_path, policy, decisions) = (
        dir.path().join("access.log"),
        dir.path().join("policy.toml"),
        dir.path().join("decisions.csv"),
    );
    std::fs::write(&log_path, log).unwrap();
    std::fs::write(&policy, policy_text).unwrap();
    success(
        rlctl()
            .args(["simulate", "-q", "--gateway", gateway, "--log-format"])
            .arg(r#"$msec $remote_addr $remote_user "$request" $status "$http_x_forwarded_for""#)
            .arg("--policy")
            .arg(&policy)
            .arg("--decisions")
            .arg(&decisions)
            .arg(&log_path),
    );
    let csv = std::fs::read_to_string(&decisions).unwrap();
    csv.lines().skip(1).map(|l| l.ends_with(",true")).collect()
}

/// The exported nginx configuration of `policy`, serving `/`.
fn nginx_config(policy: &str) -> String {
    nginx_config_on(policy, &["127.0.0.1:{{port}}"])
}

fn admitted(statuses: &[u16]) -> Vec<bool> {
    statuses.iter().map(|&s| s == 200).collect()
}

#[test]
fn the_replays_key_xff_as_the_real_nginx_and_haproxy_do() {
    let requests = anonymous(&REQUESTS);
    // nginx's map: `unknown` is one client, 6 requests; 192.0.2.9 with or
    // without a port another, 5; 2001:db8::9 a third, 2, and `2001:DB8::9`
    // a fourth (the map keys on the text, where the policy reads one
    // address); the connecting 127.0.0.6 a fifth, 5. nginx takes the one at
    // once as burst=0: the first of each passes, the rest come within 20 s.
    let nginx = replayed("nginx", POLICY, &requests);
    let first_only = |n: usize| (0..n).map(|i| i == 0);
    let expected: Vec<bool> = [6, 5, 2, 1, 5].into_iter().flat_map(first_only).collect();
    assert_eq!(nginx, expected);
    // HAProxy's (`req.hdr_ip`, else `src`): `unknown` is no address, so those
    // requests count by their connecting address, 3 each; 2001:db8::9 is one
    // address however written, 3; HAProxy denies above C + L - 1 = 3 earlier
    // ones, the fifth of 192.0.2.9 and of 127.0.0.6 (keyed as one client,
    // `unknown` would lose its fifth and sixth).
    let haproxy = replayed("haproxy", POLICY, &requests);
    let up_to_four = |n: usize| (0..n).map(|i| i < 4);
    let expected: Vec<bool> = [3, 3, 5, 3, 5].into_iter().flat_map(up_to_four).collect();
    assert_eq!(haproxy, expected);

    if let Some(server) = Nginx::start(&nginx_config(POLICY)) {
        let statuses = send(server.addr(), &requests);
        let log = server.error_log();
        assert_eq!(admitted(&statuses), nginx, "{statuses:?}\n{log}");
    }
    if let Some((_running, addr, _dir)) = start_haproxy(POLICY) {
        let statuses = send(addr, &requests);
        assert_eq!(admitted(&statuses), haproxy, "{statuses:?}");
    }
}

#[test]
fn a_key_of_two_parts_keeps_them_apart_in_nginx_as_in_the_replay() {
    // X-Forwarded-For 192.0.2.1 with user 23, and 192.0.2.12 with user 3:
    // joined without a separator, nginx counted them as one client.
    let policy = "[[rule]]\nname='g'\nkey='xff+user'\nlimit='1/1m'\nburst=1\n";
    let requests: [Request<'_>; 4] = [
        (2, Some("192.0.2.1"), Some("23")),
        (2, Some("192.0.2.12"), Some("3")),
        (2, Some("192.0.2.1"), Some("23")),
        (2, Some("192.0.2.12"), None),
    ];
    let nginx = replayed("nginx", policy, &requests);
    assert_eq!(nginx, [true, true, false, true]);
    if let Some(server) = Nginx::start(&nginx_config(policy)) {
        let statuses = send(server.addr(), &requests);
        let log = server.error_log();
        assert_eq!(admitted(&statuses), nginx, "{statuses:?}\n{log}");
    }
}

#[test]
fn exemptions_match_clients_as_the_real_nginx_and_haproxy_read_them() {
    // Exempt X-Forwarded-For `2001:db8::9` and `127.0.0.2`. nginx's map
    // compares the token as written: `2001:DB8::9` is not exempt there, and
    // `unknown` (no address) never is. HAProxy compares addresses, and keys
    // `unknown` on the connecting address: 127.0.0.2's requests are exempt.
    let policy = format!(
        "{POLICY}[[rule]]\nname='monitor'\nkey='xff'\nclient='2001:db8::9'\nexempt=true\n\
         [[rule]]\nname='office'\nkey='xff'\nclient='127.0.0.2'\nexempt=true\n"
    );
    let requests = anonymous(&[
        (2, Some("unknown")),
        (2, Some("unknown")),
        (2, Some("unknown")),
        (2, Some("unknown")),
        (2, Some("unknown")),
        (4, Some("2001:DB8::9")),
        (4, Some("2001:DB8::9")),
        (4, Some("2001:db8::9")),
        (4, Some("2001:db8::9")),
        (5, None),
        (5, None),
    ]);
    // nginx: `unknown` counted (1 at once: the first passes), `2001:DB8::9`
    // counted, `2001:db8::9` exempt, 127.0.0.5 counted.
    let nginx = replayed("nginx", &policy, &requests);
    let t = true;
    let f = false;
    assert_eq!(nginx, [t, f, f, f, f, t, f, t, t, t, f]);
    // HAProxy: every request but 127.0.0.5's exempt; those two are within
    // the C + L - 1 = 3 it admits.
    let haproxy = replayed("haproxy", &policy, &requests);
    assert_eq!(haproxy, [t; 11]);

    if let Some(server) = Nginx::start(&nginx_config(&policy)) {
        let statuses = send(server.addr(), &requests);
        let log = server.error_log();
        assert_eq!(admitted(&statuses), nginx, "{statuses:?}\n{log}");
    }
    if let Some((_running, addr, _dir)) = start_haproxy(&policy) {
        let statuses = send(addr, &requests);
        assert_eq!(admitted(&statuses), haproxy, "{statuses:?}");
    }
}

/// `rlctl simulate --gateway nginx --policy POLICY --decisions` over three
/// requests from `address`, 1 ms apart: allowed or not, request by request.
fn replayed_from(address: &str, policy: &str) -> Vec<bool> {
    let log: String = (0..3)
        .map(|i| format!("1767571200.{i:03} {address} - \"GET / HTTP/1.1\" 200 \"-\"\n"))
        .collect();
    decisions_of("nginx", policy, &log)
}

/// The exported nginx configuration of `policy`, serving `/` on `listen`
/// lines (each with the `{{port}}` placeholder).
fn nginx_config_on(policy: &str, listen: &[&str]) -> String {
    let listen: String = listen
        .iter()
        .map(|l| format!("    listen {l};\n"))
        .collect();
    format!(
        "{}\nserver {{\n{listen}    location / {{ empty_gif; }}\n}}\n",
        export(policy, "nginx", &[])
    )
}

/// One rule, 1 at once, and an exempt `ip` client.
fn exempting(client: &str) -> String {
    format!(
        "[[rule]]\nname='g'\nlimit='1/1m'\nburst=1\n\
         [[rule]]\nname='mine'\nclient='{client}'\nexempt=true\n"
    )
}

#[test]
fn an_exempt_address_spelled_otherwise_is_exempt_in_nginx_as_in_the_replay() {
    // The export writes an `ip` client as nginx prints `$remote_addr`:
    // `0:0:0:0:0:0:0:1` was compared as written and never matched `::1`.
    let policy = exempting("0:0:0:0:0:0:0:1");
    let replayed = replayed_from("::1", &policy);
    assert_eq!(replayed, [true; 3]);
    let listen = ["127.0.0.1:{{port}}", "[::1]:{{port}}"];
    let ipv6 = |server: SocketAddr| SocketAddr::new(Ipv6Addr::LOCALHOST.into(), server.port());
    nginx_agrees(&policy, &listen, "[::1]:0", ipv6, &replayed);
}

#[test]
fn an_exempt_ipv4_address_is_exempt_on_a_dual_stack_nginx_as_in_the_replay() {
    // A dual-stack listener prints an IPv4 client as `::ffff:127.0.0.1`,
    // which the replay reads as the IPv4 client it stands for.
    let policy = exempting("127.0.0.1");
    let replayed = replayed_from("::ffff:127.0.0.1", &policy);
    assert_eq!(replayed, [true; 3]);
    let listen = ["[::]:{{port}} ipv6only=off"];
    nginx_agrees(&policy, &listen, "[::]:0", |server| server, &replayed);
}

/// A real nginx running the export of `policy` on `listen` answers three
/// requests sent to `to(its address)` as the replay decided them (skipped
/// where `probe`, an IPv6 address to bind, cannot be bound).
fn nginx_agrees(
    policy: &str,
    listen: &[&str],
    probe: &str,
    to: impl Fn(SocketAddr) -> SocketAddr,
    replayed: &[bool],
) {
    if std::net::TcpListener::bind(probe).is_err() {
        eprintln!("skipping the live part: cannot bind {probe} here");
        return;
    }
    if let Some(server) = Nginx::start(&nginx_config_on(policy, listen)) {
        let statuses: Vec<u16> = (0..3).map(|_| http_get_from(to(server.addr()))).collect();
        let log = server.error_log();
        assert_eq!(admitted(&statuses), replayed, "{statuses:?}\n{log}");
    }
}

/// The status of `GET /` sent to `server` from the host's own address.
fn http_get_from(server: SocketAddr) -> u16 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server).unwrap();
    write!(
        stream,
        "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let response = String::from_utf8_lossy(&bytes);
    response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"))
}
