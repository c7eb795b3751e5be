//! Sequences found by review, end to end: an Envoy bucket full again after
//! an idle spell admits `max_tokens` at once.

use super::LOG_FORMAT;
use crate::support::rlctl;
use crate::support::success;

/// `rlctl CMD --log-format .. --policy POLICY ARGS LOG`.
fn run(policy: &str, log: &str, cmd: &[&str], args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (p, l) = (dir.path().join("p.toml"), dir.path().join("a.log"));
    std::fs::write(&p, policy).unwrap();
    std::fs::write(&l, log).unwrap();
    let out = success(
        rlctl()
            .args(cmd)
            .args(["--log-format", LOG_FORMAT, "--policy"])
            .arg(&p)
            .args(args)
            .arg(&l),
    );
    String::from_utf8(out.stdout).unwrap()
}

const ENVOY_POLICY: &str = "[[rule]]\nname = \"global\"\nkey = \"ip\"\nlimit = \"3/1s\"\nburst = 2\nalgorithm = \"token-bucket\"\n";

/// 2 tokens, 1 per 300 ms: idle 10 s, the bucket is full and admits both
/// requests of one millisecond.
const ENVOY_LOG: &str = "1767571200.000 192.0.2.1 \"GET /a HTTP/1.1\" 200\n\
1767571210.000 192.0.2.1 \"GET /a HTTP/1.1\" 200\n\
1767571210.000 192.0.2.1 \"GET /a HTTP/1.1\" 200\n";

#[test]
fn envoy_gateway_admits_a_full_bucket_at_epoch_times() {
    let out = run(
        ENVOY_POLICY,
        ENVOY_LOG,
        &["simulate"],
        &["-q", "--gateway", "envoy", "--format", "csv"],
    );
    let row = out.lines().find(|l| l.starts_with("envoy,")).unwrap();
    assert!(row.contains(",3,0,"), "{out}");
    let check = run(
        ENVOY_POLICY,
        ENVOY_LOG,
        &["export", "--target", "envoy"],
        &["--check"],
    );
    assert!(
        check.contains("policy rejects 0, envoy rejects 0; they differ on 0 requests"),
        "{check}"
    );
}
