//! End-to-end tests of exemptions in `rlctl export`: one snapshot per target,
//! outputs that parse or pass the product's own check, real nginx and HAProxy
//! that never reject an exempt path or client while they reject the others,
//! and the clients each product cannot see refused by name.

use predicates::str::contains;

use crate::export::{TARGETS, TWO_RULES, export, haproxy_check, start_haproxy, write_policy, yaml};
use crate::support::nginx::{Nginx, statuses_of};
use crate::support::rlctl;

#[test]
fn exempt_clients_with_line_breaks_are_refused_by_every_target() {
    let policy = "[[rule]]\nname='g'\nlimit='3/1m'\n[[rule]]\nname='evil'\nkey='field:http_x_api_key'\nclient=\"k\\n}\\nfrontend x\"\nexempt=true\n";
    for target in TARGETS {
        let dir = tempfile::tempdir().unwrap();
        let path = write_policy(dir.path(), policy);
        rlctl()
            .args(["export", "--target", target, "--policy"])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(contains(
                "rule `evil`: the client holds a control character or line break",
            ));
    }
}

/// A policy with a path exemption, a client exemption and a combined one.
const EXEMPTIONS: &str = "[[rule]]\nname='global'\nlimit='3/1m'\nburst=3\n\
[[rule]]\nname='health'\nroute='^/healthz$'\nexempt=true\n\
[[rule]]\nname='monitor'\nclient='127.0.0.9'\nexempt=true\n\
[[rule]]\nname='partner'\nkey='xff'\nclient='10.9.9.9'\nmethod='POST'\nroute='^/hook'\nexempt=true\n";

#[test]
fn nginx_accepts_exemptions() {
    let out = export(EXEMPTIONS, "nginx", &[]);
    assert!(out.contains("map $rlctl_exempt $rl_global_open"), "{out}");
    if let Some(Err(message)) = Nginx::check_config(&out) {
        panic!("nginx -t rejected the export:\n{message}\n{out}");
    }
}

#[test]
fn haproxy_accepts_exemptions() {
    let out = export(EXEMPTIONS, "haproxy", &[]);
    assert!(
        out.contains("acl rlctl_exempt var(txn.rlctl_exempt) -m bool"),
        "{out}"
    );
    assert!(out.contains("http-request set-var(txn.rlctl_exempt) bool(true) if { method POST } { path -m reg '^/hook' } { var(txn.rlctl_xff) -m ip 10.9.9.9 }"), "{out}");
    haproxy_check(&out);
}

#[test]
fn haproxy_patterns_that_start_with_a_dash_are_not_read_as_flags() {
    // Found by review: `{ method -X }` failed `haproxy -c`, while `-M` and a
    // client `-i` passed it and were read as flags, so the rule and the
    // exemption never matched on a live HAProxy.
    let policy = "[[rule]]\nname = \"global\"\nlimit = \"10/1m\"\n\n\
        [[rule]]\nname = \"x\"\nmethod = \"-X\"\nroute = \"-x\"\nlimit = \"5/1m\"\n\n\
        [[rule]]\nname = \"m\"\nmethod = \"-M\"\nlimit = \"5/1m\"\n\n\
        [[rule]]\nname = \"k\"\nkey = \"field:http_x_api_key\"\nclient = \"-i\"\nmethod = \"-U\"\nexempt = true\n";
    let out = export(policy, "haproxy", &[]);
    assert!(
        out.contains("{ method -- '-X' } { path -m reg -- '-x' }"),
        "{out}"
    );
    assert!(out.contains("{ method -- '-M' }"), "{out}");
    assert!(
        out.contains("{ method -- '-U' } { req.fhdr(x-api-key) -m str -- '-i' }"),
        "{out}"
    );
    haproxy_check(&out);
}

/// The rules of [`TWO_RULES`] with exemptions every target can express: a
/// path, and a client keyed on a header with a method and a route.
fn portable_exemptions() -> String {
    format!(
        "{TWO_RULES}\n[[rule]]\nname = \"health\"\nroute = \"^/healthz$\"\nexempt = true\n\n\
         [[rule]]\nname = \"partner\"\nkey = \"field:http_x_api_key\"\nclient = \"k-42\"\nmethod = \"POST\"\nroute = \"^/hook\"\nexempt = true\n"
    )
}

#[test]
fn every_target_snapshot_with_exemptions() {
    for target in TARGETS {
        let out = export(&portable_exemptions(), target, &[]);
        insta::assert_snapshot!(format!("export_exempt_{target}"), out);
    }
}

#[test]
fn exemptions_parse_in_every_format_and_pass_the_products_checks() {
    let policy = portable_exemptions();
    let envoy = yaml(&export(&policy, "envoy", &[]));
    let routes = &envoy["virtual_hosts"][0]["routes"];
    assert_eq!(routes[0]["name"].as_str(), Some("rl-exempt-health"));
    let off = &routes[0]["typed_per_filter_config"]["envoy.filters.http.local_ratelimit"];
    assert!(off["token_bucket"].is_mapping() && off["filter_enabled"].is_null());
    assert_eq!(
        routes[1]["match"]["headers"][1]["string_match"]["exact"].as_str(),
        Some("k-42")
    );
    let traefik = yaml(&export(&policy, "traefik", &[]));
    let router = &traefik["http"]["routers"]["rl-exempt-partner"];
    assert_eq!(
        router["rule"].as_str(),
        Some("Method(`POST`) && PathRegexp(`^/hook`) && Header(`x-api-key`, `k-42`)")
    );
    assert!(router["middlewares"].is_null());
    let kong = yaml(&export(&policy, "kong", &[]));
    let routes = kong["services"][0]["routes"].as_sequence().unwrap();
    let named = |name: &str| routes.iter().find(|r| r["name"].as_str() == Some(name));
    // The path alone gets a copy for the rules' GET (Kong would take the GET
    // rule's route, a method and a path, first).
    assert_eq!(
        named("rl-exempt-health-get").unwrap()["methods"][0].as_str(),
        Some("GET")
    );
    let route = named("rl-exempt-partner").unwrap();
    assert_eq!(route["headers"]["x-api-key"][0].as_str(), Some("k-42"));
    assert_eq!(
        route["plugins"][0]["config"]["second"].as_u64(),
        Some(1_000_000_000)
    );
    let waf: serde_json::Value = serde_json::from_str(&export(&policy, "aws-waf", &[])).unwrap();
    for rule in waf["Rules"].as_array().unwrap() {
        let scope = &rule["Statement"]["RateBasedStatement"]["ScopeDownStatement"];
        assert!(scope.to_string().contains("\"NotStatement\""), "{scope}");
    }
    haproxy_check(&export(&policy, "haproxy", &[]));
    if let Some(Err(message)) = Nginx::check_config(&export(&policy, "nginx", &[])) {
        panic!("nginx -t rejected the export:\n{message}");
    }
}

#[test]
fn address_clients_are_exempted_where_the_product_sees_the_address_and_refused_elsewhere() {
    for target in ["nginx", "haproxy", "traefik", "aws-waf"] {
        assert!(
            export(EXEMPTIONS, target, &[]).contains("monitor"),
            "{target}"
        );
    }
    // Envoy: an address alone (or with a method) skips the filter through
    // its matching API; an address with a route is refused, that rule only.
    let without_route = EXEMPTIONS.replace("route='^/hook'\n", "");
    let envoy = yaml(&export(&without_route, "envoy", &[]));
    let matchers =
        &envoy["http_filters"][0]["typed_config"]["xds_matcher"]["matcher_list"]["matchers"];
    let skips_an_address = |m: &serde_norway::Value| {
        let text = serde_norway::to_string(m).unwrap();
        text.contains("address_prefix") && text.contains("SkipFilter")
    };
    assert_eq!(matchers.as_sequence().map(Vec::len), Some(2), "{envoy:?}");
    assert!(
        skips_an_address(&matchers[0]) && skips_an_address(&matchers[1]),
        "{envoy:?}"
    );
    for (target, rule, why) in [
        (
            "envoy",
            "partner",
            "Envoy cannot join a client address with a route exactly",
        ),
        (
            "kong",
            "monitor",
            "Kong's HTTP routes cannot match the client address",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let policy = write_policy(dir.path(), EXEMPTIONS);
        rlctl()
            .args(["export", "--target", target, "--policy"])
            .arg(&policy)
            .assert()
            .code(2)
            .stderr(contains(format!(
                "{target} cannot express rule `{rule}`: {why}"
            )));
    }
}

#[test]
fn real_nginx_never_limits_exempt_requests() {
    let config = format!(
        "{}\nserver {{\n    listen 127.0.0.1:{{{{port}}}};\n    location / {{ empty_gif; }}\n}}\n",
        export(EXEMPTIONS, "nginx", &[])
    );
    let Some(nginx) = Nginx::start(&config) else {
        return;
    };
    let statuses = |client: u8, path: &str, n: usize| statuses_of(nginx.addr(), client, path, n);
    assert_eq!(
        statuses(2, "/healthz", 6),
        [200; 6],
        "{}",
        nginx.error_log()
    );
    assert_eq!(statuses(9, "/x", 6), [200; 6], "the exempt client");
    assert_eq!(statuses(2, "/x", 5), [200, 200, 200, 429, 429]);
    assert_eq!(
        statuses(2, "/healthz", 2),
        [200, 200],
        "still exempt after the limit"
    );
}

#[test]
fn real_haproxy_never_limits_exempt_requests() {
    // global: 3/1m burst 3, so HAProxy denies once 3 + 3 - 1 = 5 are exceeded:
    // six pass. Eight exempt requests first would use them up if counted.
    let Some((_running, addr, _dir)) = start_haproxy(EXEMPTIONS) else {
        return;
    };
    let statuses = |client: u8, path: &str, n: usize| statuses_of(addr, client, path, n);
    assert_eq!(statuses(2, "/healthz", 8), [200; 8], "the exempt path");
    assert_eq!(statuses(9, "/x", 8), [200; 8], "the exempt client");
    assert_eq!(
        statuses(2, "/x", 8),
        [200, 200, 200, 200, 200, 200, 429, 429],
        "exempt requests were not counted"
    );
    assert_eq!(
        statuses(2, "/healthz", 2),
        [200, 200],
        "still exempt after the limit"
    );
    assert_eq!(statuses(3, "/healthz?x=1", 2), [200, 200], "query ignored");
}

#[test]
fn envoy_snapshot_with_address_exemptions() {
    let policy = format!(
        "{TWO_RULES}\n[[rule]]\nname = \"monitor\"\nclient = \"203.0.113.9\"\nexempt = true\n\n\
         [[rule]]\nname = \"partner\"\nkey = \"xff+field:http_x_api_key\"\nclient = \"2001:db8::7+k-42\"\nmethod = \"POST\"\nexempt = true\n"
    );
    insta::assert_snapshot!(
        "export_exempt_envoy_addresses",
        export(&policy, "envoy", &[])
    );
}

#[test]
fn an_exempt_address_is_exported_as_the_policy_writes_it() {
    // Simulation compares it with canonical keys (`10.0.0.7`), but nginx's
    // $remote_addr on a dual-stack socket is `::ffff:10.0.0.7`, as written.
    let policy = "[[rule]]\nname = \"g\"\nlimit = \"10/1m\"\n\n[[rule]]\nname = \"probe\"\nclient = \"::ffff:10.0.0.7\"\nexempt = true\n";
    let out = export(policy, "nginx", &[]);
    assert!(out.contains("::ffff:10.0.0.7"), "{out}");
}

#[test]
fn a_prefix_client_is_refused_by_every_target_as_no_product_matches_it() {
    // nginx wrote a map on `$remote_addr` that never matches `192.0.2.0/24`,
    // so the exemption silently exempted nothing.
    let policy = "[[rule]]\nname='g'\nlimit='3/1m'\n[[rule]]\nname='office'\nclient='192.0.2.0/24'\nexempt=true\n";
    let dir = tempfile::tempdir().unwrap();
    let path = write_policy(dir.path(), policy);
    for target in TARGETS {
        rlctl()
            .args(["export", "--target", target, "--policy"])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(contains(format!("{target} cannot express rule `office`")));
    }
}
