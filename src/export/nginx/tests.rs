use super::*;
use crate::policy::Policy;

fn lim(text: &str) -> Limit {
    text.parse().unwrap()
}

#[test]
fn rates_pick_the_exact_unit_or_round_up() {
    assert_eq!(rate(lim("600/1m")).text, "10r/s");
    assert_eq!(rate(lim("10/s")).text, "10r/s");
    assert_eq!(rate(lim("40/1m")).text, "40r/m");
    assert_eq!(rate(lim("1/10s")).text, "6r/m");
    assert_eq!(rate(lim("7200/1h")).text, "2r/s");
    let hourly = rate(lim("5000/1h"));
    assert_eq!(hourly.text, "84r/m");
    assert!(hourly.note.contains("rounded up"), "{}", hourly.note);
    // Far below 1r/m still rounds up to the slowest rate nginx has.
    assert_eq!(rate(lim("1/1d")).text, "1r/m");
    assert!(rate(lim("40/1m")).note.contains("666 milli-requests/s"));
    assert!(!rate(lim("60/1m")).note.contains("milli"));
}

#[test]
fn burst_and_zone_follow_nginx_conventions() {
    assert_eq!(burst(7), 6);
    assert_eq!(burst(1), 0);
    assert_eq!(burst(0), 0);
    assert_eq!(zone_megabytes(10_000, 128), 2);
    assert_eq!(zone_megabytes(8_192, 128), 1);
    assert_eq!(zone_megabytes(0, 128), 1);
    assert_eq!(zone_megabytes(100_000, 256), 25);
    assert_eq!(state_bytes(&[ClientPart::Address]), 128);
    assert_eq!(state_bytes(&[ClientPart::Address, ClientPart::User]), 256);
}

#[test]
fn quoting_survives_nginx_unescaping() {
    assert_eq!(quote(r#"^/a\.b"c$"#), r#""^/a\\.b\"c$""#);
}

#[test]
fn renders_burst_minus_one_and_scoped_keys() {
    let rules = Policy::parse(
        r#"
[[rule]]
name = "global"
limit = "40/1m"
burst = 7
[[rule]]
name = "leaky"
key = "ip+user"
limit = "10r/s"
burst = 5
algorithm = "leaky-bucket"
method = "POST"
route = '^/api/"x"$'
"#,
        "p.toml",
    )
    .unwrap();
    let out = Nginx.render(&rules, &ExportOptions::default()).unwrap();
    assert!(out.contains("limit_req_zone $binary_remote_addr zone=rl_global:2m rate=40r/m;"));
    assert!(out.contains("limit_req zone=rl_global burst=6 nodelay;"));
    // leaky-bucket bursts already follow nginx's convention: unchanged.
    assert!(out.contains("limit_req zone=rl_leaky burst=5 nodelay;"));
    // Parts joined with +, and no key when every part is empty.
    assert!(out.contains("map \"$binary_remote_addr+$remote_user\" $rl_leaky_client {\n    \"+\" \"\";\n    default \"$binary_remote_addr+$remote_user\";\n}"), "{out}");
    assert!(out.contains("\"~*^POST$\" $rl_leaky_client;"));
    // A `$` ending the route is `\z` (PCRE's `$` also matches before a final newline).
    assert!(
        out.contains(r#""~^/api/\"x\"\\z" $rl_leaky_method;"#),
        "{out}"
    );
    assert!(out.contains("limit_req_zone $rl_leaky_key zone=rl_leaky:3m"));
    assert!(!out.contains("limit_req_dry_run"));
    let dry = Nginx
        .render(
            &rules,
            &ExportOptions {
                dry_run: true,
                clients: 10,
            },
        )
        .unwrap();
    assert!(dry.contains("limit_req_dry_run on;"));
    assert!(dry.contains("zone=rl_global:1m"));
    let one = Policy::parse("[[rule]]\nname='one'\nlimit='1/s'\nburst=1", "p").unwrap();
    let out = Nginx.render(&one, &ExportOptions::default()).unwrap();
    assert!(out.contains("limit_req zone=rl_one nodelay;"), "{out}");
}

#[test]
fn limits_beyond_nginx_counters_are_refused_not_written() {
    // Found by review: these were written, and `nginx -t` refused them.
    let policy = |limit: &str, algorithm: &str| {
        let text = format!("[[rule]]\nname='x'\nlimit='{limit}'\nalgorithm='{algorithm}'");
        Policy::parse(&text, "p.toml").unwrap()
    };
    for (limit, algorithm) in [
        ("18446744073709551615/1s", "sliding-log"),
        ("9223372036854775807/24h", "fixed-window"),
        ("9300000000000000/1s", "sliding-log"),
    ] {
        let refused = Nginx.render(&policy(limit, algorithm), &ExportOptions::default());
        assert!(
            matches!(
                &refused,
                Err(ExportError::Unsupported {
                    target: "nginx",
                    ..
                })
            ),
            "{limit}: {refused:?}"
        );
    }
    // As `simulate --gateway nginx` models it, where it fits.
    let big = Nginx
        .render(
            &policy("1000000000000/1s", "sliding-log"),
            &ExportOptions::default(),
        )
        .unwrap();
    assert!(big.contains("rate=1000000000000r/s;"), "{big}");
}

#[test]
fn the_variables_hash_advice_counts_the_x_forwarded_for_map() {
    let render = |rules: usize| {
        let text: String = (0..rules)
            .map(|i| format!("[[rule]]\nname='r{i}'\nroute='^/p{i}/'\nkey='xff'\nlimit='10/1m'\n"))
            .collect();
        let policy = Policy::parse_policy(&text, "p").unwrap();
        let out = Nginx
            .render_policy(&policy, &ExportOptions::default())
            .unwrap();
        assert_eq!(
            out.matches("\nmap ").count(),
            rules + 1,
            "a route map per rule and the X-Forwarded-For one: {out}"
        );
        out
    };
    assert!(!render(29).contains("variables_hash"));
    assert!(render(30).contains("# 31 map variables: if `nginx -t` warns"));
}
