//! Traefik's routing path as rlctl reads it
//! (`src/simulate/gateway/traefik_path.rs`) against the same steps computed
//! with Go's own `net/url` and `path` (`tests/engines/traefik_route.go`):
//! Traefik itself does not install here, the library it parses targets
//! with does.

use std::io::Write;
use std::process::{Command, Stdio};

use rlctl::events::Interner;
use rlctl::ingest::endpoint::replayed_path;
use rlctl::ingest::record::split_request;
use rlctl::scenario::names::NameFilter;
use rlctl::simulate::gateway::Gateway;
use rlctl::simulate::gateway::request_names::{NameReading, PathReading};

use crate::support::engines::{Engine, require};

/// Pieces of drawn targets: escapes in both cases, of reserved, unreserved
/// and other bytes, broken ones, dot segments, bytes Go escapes in a path,
/// a query, a fragment, a space and control bytes.
const PIECES: [&str; 58] = [
    "/", "a", "Z", "0", ".", "..", "%2f", "%2F", "%2e", "%2E", "%41", "%7e", "%7E", "%20", "%3a",
    "%3A", "%25", "%zz", "%", "%c3%a9", "%C3", "%ff", "%00", "%5b", "%21", "é", "|", "\"", "#",
    "?", ";", "!", "(", ")", "*", "[", "]", "'", "~", "//", "/./", "/../", "+", "=", "@", ":", "$",
    "&", ",", "^", "`", "{", "}", "<", ">", "\\", "\u{1f}", " ",
];

/// `tests/engines/{name}.go` built with `go` into a new directory (the
/// binary is in it, named `name`).
fn built_go(go: &std::path::Path, name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engines")
        .join(format!("{name}.go"));
    let binary = dir.path().join(name);
    let built = Command::new(go)
        .args(["build", "-o"])
        .arg(&binary)
        .arg(&source)
        .env("GO111MODULE", "off")
        .env("GOCACHE", dir.path().join("cache"))
        .env("GOPATH", dir.path().join("gopath"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    (dir, binary)
}

#[test]
fn traefik_path_is_what_go_makes_of_each_target() {
    let Some(go) = require(Engine::Go) else {
        return;
    };
    let (_dir, binary) = built_go(&go, "traefik_route");

    let mut draw = crate::support::draws(0x9e37_79b9_7f4a_7c15);
    let targets: Vec<String> = (0..20_000)
        .map(|i| {
            let pieces: String = (0..draw(15)).map(|_| PIECES[draw(PIECES.len())]).collect();
            // An absolute-form target; a scheme without `//`, before a
            // path or a rootless one; what Go takes for no scheme. (An
            // authority other than `h` is not drawn: ingestion keeps the
            // path of an absolute-form target, not its authority.)
            match ["http://h/", "a:/", "Ab1+.-:", "a:", "1a:", "a_b:", ":"].get(i % 40) {
                None => format!("/{pieces}"),
                Some(&"http://h/") => format!("http://h/{pieces}"),
                Some(start) => format!("{start}{}", pieces.trim_start_matches('/')),
            }
        })
        .chain(["*", "*?x", "/", "/..", "/a?q=#x", "/a#x", "a:b#x", "a:?#"].map(String::from))
        .collect();
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = (targets.iter())
        .map(|t| serde_json::to_string(t).unwrap() + "\n")
        .collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), targets.len());

    let traefik = NameReading {
        paths: PathReading::Traefik,
        ..NameReading::default()
    };
    let mut wrong = Vec::new();
    let mut refused = 0;
    for (target, line) in targets.iter().zip(&lines) {
        let (_, routed) = line.split_once('\t').unwrap();
        let go: Option<String> = (routed != "-").then(|| serde_json::from_str(routed).unwrap());
        refused += usize::from(go.is_none());
        let read = traefik.path(replayed_path(target)).map(|p| p.into_owned());
        if read != go {
            wrong.push(format!("{target:?}: go {go:?}, rlctl {read:?}"));
        }
    }
    crate::support::assert_same_readings("Go", targets.len(), refused, 1000, &wrong);
}

#[test]
fn traefik_gateway_refuses_the_versions_go_refuses() {
    // Request lines sent as they are to Go's own HTTP server: those whose
    // version Go refuses are answered 400 or 505 before any handler (so
    // before Traefik's router and its middlewares); the others reach the
    // handler (299). rlctl reads each line as a log writes it and must
    // count it for Traefik exactly when Go's handler saw it. `HTTP/2.0` and
    // `HTTP/3.0` are left out: logs write real HTTP/2 and 3 requests so, and
    // rlctl counts those, while Go answers the words sent over HTTP/1 505.
    let Some(go) = require(Engine::Go) else {
        return;
    };
    let (_dir, binary) = built_go(&go, "go_http_server");
    let mut server = Command::new(&binary)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut address = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut address,
    )
    .unwrap();
    let address: std::net::SocketAddr = address.trim().parse().unwrap();
    let lines = [
        "GET /a HTTP/1.1",
        "GET /a HTTP/1.0",
        "GET /a",
        "POST /a",
        "GET /a HTTP/1.2",
        "GET /a HTTP/1.10",
        "GET /a HTTP/1.01",
        "GET /a HTTP/0.9",
        "GET /a HTTP/4.0",
        "GET /a HTTP/2.1",
        "GET /a HTTP/1",
        "GET /a HTTP/12.0",
        "GET /a HTTP/1.1x",
        "GET /a HTTP/2",
        "GET /a HTTP/1.x",
        "GET /a http/1.1",
    ];
    let mut wrong = Vec::new();
    for line in lines {
        let response = crate::gateway::response_to_line(address, line, "");
        let status = String::from_utf8_lossy(&response[9..12]).into_owned();
        // The line's request as the replay's rules see it: a rule over
        // every request, read as Traefik reads names.
        let (method, target, version) = split_request(line.as_bytes());
        let (mut methods, mut paths) = (Interner::default(), Interner::default());
        let method = methods.intern(&String::from_utf8_lossy(method));
        let path = paths.intern(&String::from_utf8_lossy(target));
        let every = NameFilter::new(
            &methods,
            &paths,
            (None, None),
            Gateway::Traefik.name_reading(),
        );
        let counted = every.picks(method, path, version);
        if counted != (status == "299") {
            wrong.push(format!("{line:?}: Go {status}, rlctl counts it: {counted}"));
        }
    }
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
