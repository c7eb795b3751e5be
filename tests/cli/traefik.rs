//! Traefik's routing path as rlctl reads it
//! (`src/simulate/gateway/traefik_path.rs`) against the same steps computed
//! with Go's own `net/url` and `path` (`tests/engines/traefik_route.go`):
//! Traefik itself does not install here, the library it parses targets
//! with does.

use std::io::Write;
use std::process::{Command, Stdio};

use rlctl::ingest::endpoint::replayed_path;
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

#[test]
fn traefik_path_is_what_go_makes_of_each_target() {
    let Some(go) = require(Engine::Go) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/engines/traefik_route.go");
    let binary = dir.path().join("route");
    let built = Command::new(&go)
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
