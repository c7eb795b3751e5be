//! Two sequences found by review, end to end: an Envoy bucket full again after
//! an idle spell admits `max_tokens` at once, and Traefik keeps a rule's
//! buckets per router.

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

const TRAEFIK_POLICY: &str = "[[rule]]\nname = \"global\"\nkey = \"ip\"\nlimit = \"2/1s\"\nburst = 2\nalgorithm = \"token-bucket\"\n\n\
[[rule]]\nname = \"login\"\nkey = \"ip\"\nmethod = \"POST\"\nroute = \"^/login$\"\nlimit = \"100/1s\"\nburst = 100\nalgorithm = \"token-bucket\"\n";

/// Two GETs empty `global`'s bucket of router `rl-all`; the POSTs go to
/// router `rl-login`, whose `rl-global` is another instance with a full
/// bucket: nothing is rejected.
const TRAEFIK_LOG: &str = "1767571200.000 192.0.2.1 \"GET /a HTTP/1.1\" 200\n\
1767571200.001 192.0.2.1 \"GET /a HTTP/1.1\" 200\n\
1767571200.002 192.0.2.1 \"POST /login HTTP/1.1\" 200\n\
1767571200.003 192.0.2.1 \"POST /login HTTP/1.1\" 200\n";

#[test]
fn traefik_gateway_keeps_a_rules_buckets_per_router() {
    let dir = tempfile::tempdir().unwrap();
    let decisions = dir.path().join("d.csv");
    let out = run(
        TRAEFIK_POLICY,
        TRAEFIK_LOG,
        &["simulate"],
        &[
            "-q",
            "--gateway",
            "traefik",
            "--format",
            "csv",
            "--decisions",
            decisions.to_str().unwrap(),
        ],
    );
    let allowed: Vec<String> = (std::fs::read_to_string(&decisions).unwrap().lines())
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().to_string())
        .collect();
    assert_eq!(allowed, ["true"; 4], "{out}");
    // `global` once per router that chains it, each seeing its own requests.
    for rule in ["global @ rl-login", "global @ rl-all", "login"] {
        let row = out
            .lines()
            .find(|l| l.contains(&format!(",{rule},")))
            .unwrap_or_else(|| panic!("{rule}: {out}"));
        assert!(row.contains(",2,0,"), "{row}\n{out}");
    }
    let check = run(
        TRAEFIK_POLICY,
        TRAEFIK_LOG,
        &["export", "--target", "traefik"],
        &["--check"],
    );
    assert!(
        check.contains("policy rejects 2, traefik rejects 0; they differ on 2 requests"),
        "{check}"
    );
    assert!(check.contains("buckets per router: 2"), "{check}");
}

const METHOD_POLICY: &str = "[[rule]]\nname = \"global\"\nkey = \"ip\"\nlimit = \"100/1s\"\nburst = 100\nalgorithm = \"token-bucket\"\n\n\
[[rule]]\nname = \"gets\"\nkey = \"ip\"\nmethod = \"GET\"\nlimit = \"1/1s\"\nburst = 1\nalgorithm = \"token-bucket\"\n";

/// Found while replaying the routers: `rl-all`'s ``PathPrefix(`/`)`` (16
/// bytes, Traefik's default priority) outranked ``Method(`GET`)`` (13), so the
/// GET rule never took a request. `rl-all` is written at priority 1: the
/// second GET meets the GET rule's empty bucket, as the policy says.
#[test]
fn traefik_method_only_rule_takes_its_requests_beside_a_rule_for_all() {
    let log = "1767571200.000 192.0.2.1 \"GET /a HTTP/1.1\" 200\n\
1767571200.001 192.0.2.1 \"GET /a HTTP/1.1\" 200\n";
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, METHOD_POLICY).unwrap();
    let out = success(
        rlctl()
            .args(["export", "--target", "traefik", "--policy"])
            .arg(&policy),
    );
    let config = String::from_utf8(out.stdout).unwrap();
    let rl_all = config
        .split("rl-all:")
        .nth(1)
        .unwrap_or_else(|| panic!("{config}"));
    assert!(rl_all.contains("priority: 1"), "{config}");
    let check = run(
        METHOD_POLICY,
        log,
        &["export", "--target", "traefik"],
        &["--check"],
    );
    assert!(
        check.contains("policy rejects 1, traefik rejects 1; they differ on 0 requests"),
        "{check}"
    );
}
