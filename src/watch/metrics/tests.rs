use super::*;
use crate::watch::rolling::HourFigures;

fn rule(name: &str) -> RuleFigures {
    RuleFigures {
        rule: name.into(),
        key: "ip".into(),
        limit: "20/1m".into(),
        algorithm: "token-bucket".into(),
        requests: 120,
        would_reject: 7,
        unplaced: 2,
        states: 3,
        top: Vec::new(),
        hour: HourFigures {
            clients_seen: 40,
            clients_hit: 2,
            exact: true,
            windows: 90,
            requests: 110,
            quantiles: vec![
                ("0.5".into(), 3),
                ("0.9".into(), 9),
                ("0.99".into(), 18),
                ("0.999".into(), 25),
            ],
            baseline_p99: 12,
        },
    }
}

fn snapshot() -> Snapshot {
    Snapshot {
        rules: vec![rule("global")],
        files: vec![FileFigures {
            file: "/var/log/nginx/access.log".into(),
            lines: 130,
            glued: 1,
            parsed: 128,
            readable: true,
            events: [("replaced".to_string(), 1)].into_iter().collect(),
        }],
        skipped: [("blank line".to_string(), 3)].into_iter().collect(),
        exempt_requests: 0,
        late_lines: 0,
        future_requests: 0,
        pending: 4,
        newest_ms: Some(1_700_000_000_000),
        lag_seconds: Some(0.25),
    }
}

#[test]
fn every_fixed_name_is_exported() {
    let text = render(&snapshot());
    for line in [
        "rlctl_requests_total{rule=\"global\"} 120",
        "rlctl_would_reject_total{rule=\"global\"} 7",
        "rlctl_requests_unplaced_total{rule=\"global\"} 2",
        "rlctl_clients_seen{rule=\"global\",window=\"1h\"} 40",
        "rlctl_clients_hit{rule=\"global\",window=\"1h\"} 2",
        "rlctl_lines_total{file=\"/var/log/nginx/access.log\"} 130",
        "rlctl_entries_glued_total{file=\"/var/log/nginx/access.log\"} 1",
        "rlctl_lines_skipped_total{reason=\"blank line\"} 3",
        "rlctl_lag_seconds 0.250",
        "rlctl_client_window_requests{rule=\"global\",quantile=\"0.5\"} 3",
        "rlctl_client_window_requests{rule=\"global\",quantile=\"0.999\"} 25",
        "# TYPE rlctl_client_window_requests summary",
        "rlctl_client_window_requests_sum{rule=\"global\"} 110",
        "rlctl_client_window_requests_count{rule=\"global\"} 90",
        "rlctl_policy_limit{rule=\"global\",window=\"1m\"} 20",
        "rlctl_file_events_total{file=\"/var/log/nginx/access.log\",event=\"replaced\"} 1",
        "rlctl_reorder_pending 4",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in\n{text}"
        );
    }
}

#[test]
fn the_text_follows_the_exposition_grammar() {
    let text = render(&snapshot());
    let sample = regex::Regex::new(
        r#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? -?[0-9.]+$"#,
    )
    .unwrap();
    let mut typed = std::collections::HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            let again = typed.insert(name.to_string(), kind.to_string());
            assert!(again.is_none(), "TYPE twice for {name}");
        } else if !line.starts_with("# HELP ") {
            assert!(sample.is_match(line), "not a sample line: {line:?}");
            let name = line.split(['{', ' ']).next().unwrap();
            // A summary's family holds its `_sum` and `_count`, and only
            // a summary's samples carry a `quantile` label.
            let family = (["_sum", "_count"].iter())
                .find_map(|suffix| name.strip_suffix(suffix))
                .filter(|base| typed.get(*base).is_some_and(|k| k == "summary"))
                .unwrap_or(name);
            let kind = typed
                .get(family)
                .unwrap_or_else(|| panic!("{name} before its TYPE"));
            assert!(!line.contains("quantile=") || kind == "summary", "{line}");
        }
    }
}

#[test]
fn hostile_label_values_are_escaped() {
    assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    let mut s = snapshot();
    s.rules = vec![rule("x\"} 1\nfake_metric 666")];
    s.skipped = [("bad \\ reason\n".to_string(), 1)].into_iter().collect();
    let text = render(&s);
    assert!(
        !text.lines().any(|l| l.starts_with("fake_metric")),
        "{text}"
    );
    assert!(text.contains("rlctl_requests_total{rule=\"x\\\"} 1\\nfake_metric 666\"} 120"));
    assert!(text.contains("{reason=\"bad \\\\ reason\\n\"} 1"));
}

#[test]
fn the_grafana_dashboard_queries_only_exported_metrics() {
    let dashboard: serde_json::Value =
        serde_json::from_str(include_str!("../../../docs/grafana-watch.json")).unwrap();
    let text = render(&snapshot());
    let exported: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let name = regex::Regex::new(r"rlctl_[a-z_]+").unwrap();
    let mut queried = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for m in name.find_iter(expr) {
                assert!(
                    exported.contains(m.as_str()),
                    "{} is not exported",
                    m.as_str()
                );
                queried += 1;
            }
        }
    }
    assert!(queried >= 10);
}
