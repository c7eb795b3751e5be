//! Tests of the whole generator: line shapes of every format for a hand-built
//! event, the time order of the merge, each traffic component, determinism,
//! and the `--lines` scaling.

use rustc_hash::{FxHashMap, FxHashSet};

use super::profiles::{Kind, Profile};
use super::routes::Route;
use super::traffic::{Event, Timing, Traffic};
use super::writer::{COMBINED, JsonFormat, LineFormat, TemplateFormat, push_json};
use super::*;

const START: Millis = 1_767_571_200_000;

fn profile() -> Profile {
    Profile {
        kind: Kind::Steady,
        addr: "203.0.113.7".into(),
        user: Some("anna.smith".into()),
        user_agent: "curl/8.5.0",
        forwarded_for: Some("10.1.2.3".into()),
        browser: false,
        own_user_id: 1,
        mix: &[],
        timing: Timing::Poisson { rate: 1.0 },
    }
}

/// 01:02:03.123 on the default start day.
fn event() -> Event {
    Event {
        ts: START + 3_723_123,
        profile: 0,
        route: Route::Search(0, 2, 3),
        status: 200,
        body_bytes: 5120,
        request_time_ms: 68,
        referer: Some("https://shop.example.com/"),
    }
}

fn line(format: &mut dyn LineFormat, profile: &Profile, event: &Event) -> String {
    let mut out = Vec::new();
    format.write_line(event, profile, &mut out);
    String::from_utf8(out).unwrap()
}

fn template(text: &str, offset: &str) -> TemplateFormat {
    TemplateFormat::parse(text, offset.parse().unwrap()).unwrap()
}

#[test]
fn combined_line_has_nginx_shape() {
    let mut f = template(COMBINED, "+0000");
    assert_eq!(
        line(&mut f, &profile(), &event()),
        "203.0.113.7 - anna.smith [05/Jan/2026:01:02:03 +0000] \
         \"GET /api/search?q=shoes+red&page=3 HTTP/1.1\" 200 5120 \
         \"https://shop.example.com/\" \"curl/8.5.0\"\n"
    );
    let mut anonymous = profile();
    anonymous.user = None;
    let mut e = event();
    e.referer = None;
    e.route = Route::CreateOrder;
    let mut f = template(COMBINED, "-0130");
    assert_eq!(
        line(&mut f, &anonymous, &e),
        "203.0.113.7 - - [04/Jan/2026:23:32:03 -0130] \"POST /api/orders HTTP/1.1\" \
         200 5120 \"-\" \"curl/8.5.0\"\n"
    );
}

#[test]
fn json_line_has_every_key() {
    let text = line(&mut JsonFormat::new(), &profile(), &event());
    assert_eq!(
        text,
        "{\"time\":\"2026-01-05T01:02:03.123Z\",\"remote_addr\":\"203.0.113.7\",\
         \"remote_user\":\"anna.smith\",\"request_method\":\"GET\",\
         \"request_uri\":\"/api/search?q=shoes+red&page=3\",\"status\":200,\
         \"body_bytes_sent\":5120,\"http_referer\":\"https://shop.example.com/\",\
         \"http_user_agent\":\"curl/8.5.0\",\"http_x_forwarded_for\":\"10.1.2.3\",\
         \"request_time\":0.068}\n"
    );
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["status"], 200);
    let mut p = profile();
    p.forwarded_for = None;
    p.user = None;
    let value: serde_json::Value =
        serde_json::from_str(&line(&mut JsonFormat::new(), &p, &event())).unwrap();
    assert_eq!(value["http_x_forwarded_for"], "-");
    assert_eq!(value["remote_user"], "-");
}

#[test]
fn log_format_template_fills_every_variable() {
    let mut f = template(
        r#"$msec $remote_addr "$request" $status $request_time "$remote_user""#,
        "+0000",
    );
    assert_eq!(
        line(&mut f, &profile(), &event()),
        "1767574923.123 203.0.113.7 \"GET /api/search?q=shoes+red&page=3 HTTP/1.1\" \
         200 0.068 \"anna.smith\"\n"
    );
    let mut f = template(
        "${time_local}|$time_iso8601|$request_method|$request_uri|$uri|$args|\
         $query_string|$server_protocol|$host|$body_bytes_sent|$http_referer|\
         $http_user_agent|$http_x_forwarded_for|${status}x",
        "+0530",
    );
    assert_eq!(
        line(&mut f, &profile(), &event()),
        "05/Jan/2026:06:32:03 +0530|2026-01-05T06:32:03+05:30|GET|\
         /api/search?q=shoes+red&page=3|/api/search|q=shoes+red&page=3|\
         q=shoes+red&page=3|HTTP/1.1|shop.example.com|5120|https://shop.example.com/|\
         curl/8.5.0|10.1.2.3|200x\n"
    );
    let mut e = event();
    e.route = Route::User(7);
    let mut f = template("$uri $args", "+0000");
    assert_eq!(line(&mut f, &profile(), &e), "/api/users/7 -\n");
}

#[test]
fn unknown_variables_and_formats_are_rejected() {
    let offset = TimeOffset::default();
    let err = TemplateFormat::parse("$remote_addr $upstream_addr", offset).unwrap_err();
    assert_eq!(err, GenerateError::Variable("$upstream_addr".into()));
    assert!(err.to_string().contains("$request_time"));
    assert!(TemplateFormat::parse("${status", offset).is_err());
    assert!(TemplateFormat::parse("cost $ 5", offset).is_err());
    assert_eq!(Format::parse("json"), Ok(Format::Json));
    assert!(matches!(Format::parse("$status"), Ok(Format::Template(_))));
    assert!(Format::parse("common").is_err());
}

#[test]
fn values_are_escaped_for_each_format() {
    let mut p = profile();
    p.user = Some("eve\"\\\n\u{1}é".into());
    let mut f = template("$remote_user", "+0000");
    assert_eq!(
        line(&mut f, &p, &event()),
        "eve\\x22\\x5C\\x0A\\x01\\xC3\\xA9\n"
    );
    for s in [
        "plain",
        "q\"uote",
        "back\\slash",
        "nl\n\t\r\u{8}\u{c}\u{1f}",
        "é ✓",
    ] {
        let mut out = Vec::new();
        push_json(&mut out, s);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(s).unwrap()
        );
    }
}

fn config(clients: u32, length: Length) -> Config {
    Config {
        clients,
        length,
        ..Config::default()
    }
}

fn minutes(m: u32) -> Length {
    Length::Duration(Window::from_secs(m * 60).unwrap())
}

#[test]
fn merged_events_are_time_ordered_and_inside_the_run() {
    let generator = Generator::new(&config(50, minutes(20))).unwrap();
    let events: Vec<Event> = generator.events().collect();
    assert!(events.len() > 10_000, "{}", events.len());
    assert!(events.windows(2).all(|w| w[0].ts <= w[1].ts));
    assert!(
        events
            .iter()
            .all(|e| (START..START + 1_200_000).contains(&e.ts))
    );
    let streams: FxHashSet<u32> = events.iter().map(|e| e.profile).collect();
    assert_eq!(streams.len(), generator.profiles().len());
}

#[test]
fn every_traffic_component_shows_up() {
    let generator = Generator::new(&config(100, minutes(30))).unwrap();
    let profiles = generator.profiles();
    let events: Vec<Event> = generator.events().collect();
    let of = |kind| {
        events
            .iter()
            .filter(move |e| profiles[e.profile as usize].kind == kind)
    };

    let office_users: FxHashSet<&str> = of(Kind::Office)
        .filter_map(|e| profiles[e.profile as usize].user.as_deref())
        .collect();
    let office_addrs: FxHashSet<&str> = of(Kind::Office)
        .map(|e| profiles[e.profile as usize].addr.as_str())
        .collect();
    assert!(
        office_users.len() > 10 && office_addrs.len() == 1,
        "{office_users:?}"
    );

    let busiest = |kind, span: i64| {
        let mut counts: FxHashMap<(u32, i64), u32> = FxHashMap::default();
        for e in of(kind) {
            *counts.entry((e.profile, e.ts / span)).or_default() += 1;
        }
        counts.into_values().max().unwrap_or(0)
    };
    assert!(busiest(Kind::Runaway, 1000) > 20, "runaway peak");
    assert!(busiest(Kind::Batch, 10_000) >= 50, "batch burst");
    assert!(busiest(Kind::Steady, 1000) < busiest(Kind::Runaway, 1000));
    assert!(of(Kind::Runaway).any(|e| e.status == 429));
    assert!(
        events
            .iter()
            .filter(|e| e.status == 429)
            .all(|e| { profiles[e.profile as usize].kind == Kind::Runaway })
    );

    let crawled: FxHashSet<Route> = of(Kind::Crawler).map(|e| e.route).collect();
    assert!(crawled.len() > 500, "crawler paths {}", crawled.len());
    assert!(of(Kind::Crawler).all(|e| profiles[e.profile as usize].user_agent.contains("bot")));
    let monitor: Vec<i64> = of(Kind::Monitor).map(|e| e.ts).collect();
    assert!(
        monitor
            .windows(2)
            .all(|w| (9_400..=10_600).contains(&(w[1] - w[0])))
    );

    assert!(of(Kind::Steady).any(|e| profiles[e.profile as usize].addr.contains(':')));
    assert!(of(Kind::Steady).any(|e| profiles[e.profile as usize].forwarded_for.is_some()));
    let statuses: FxHashSet<u16> = events.iter().map(|e| e.status).collect();
    for status in [200, 201, 304, 404, 500] {
        assert!(statuses.contains(&status), "no {status}");
    }
    let ok = events
        .iter()
        .filter(|e| matches!(e.status, 200 | 201 | 304))
        .count();
    assert!(ok * 100 > events.len() * 85, "mostly successes");
}

fn bytes(config: &Config) -> Vec<u8> {
    let mut out = Vec::new();
    Generator::new(config).unwrap().write_to(&mut out).unwrap();
    out
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    for format in [Format::Combined, Format::Json] {
        let mut c = config(20, minutes(5));
        c.format = format;
        let first = bytes(&c);
        assert!(!first.is_empty());
        assert_eq!(first, bytes(&c));
        c.seed = 43;
        assert_ne!(first, bytes(&c));
    }
}

#[test]
fn lines_mode_writes_exactly_n_and_scales_the_run() {
    let hour = bytes(&config(30, minutes(60)));
    let n = hour.iter().filter(|&&b| b == b'\n').count() as u64;
    let generator = Generator::new(&config(30, Length::Lines(n))).unwrap();
    let secs = generator.run_secs() as f64;
    assert!((secs - 3600.0).abs() < 360.0, "{n} lines -> {secs} s");
    for want in [1, 777, 5_000] {
        let out = bytes(&config(30, Length::Lines(want)));
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count() as u64, want);
    }
    assert_eq!(
        Generator::new(&config(30, Length::Lines(0))).err(),
        Some(GenerateError::NoLines)
    );
}

#[test]
fn unbounded_runs_repeat_the_runaway_episode_every_cycle() {
    let profiles = profiles::cast(20, &mut Rng::new(5));
    let cycle = 600_000;
    let traffic = Traffic::new(&profiles, 5, START, cycle, true, false);
    let mut cycles_with_loop = FxHashSet::default();
    for e in traffic.take_while(|e| e.ts < START + 3 * cycle) {
        if e.status == 429 {
            cycles_with_loop.insert((e.ts - START) / cycle);
        }
    }
    assert_eq!(cycles_with_loop.len(), 3);
}

#[test]
fn too_few_clients_is_an_error() {
    assert_eq!(
        Generator::new(&config(5, minutes(1))).err(),
        Some(GenerateError::TooFewClients(5))
    );
    assert!(Generator::new(&config(6, minutes(1))).is_ok());
}

#[test]
fn a_log_outside_the_years_rlctl_reads_is_refused_before_a_line_is_written() {
    use crate::units::{EARLIEST_MS, LATEST_MS};
    let build = |start: i64, offset: &str, format: Format| {
        let config = Config {
            start,
            time_offset: offset.parse().unwrap(),
            format,
            ..config(30, minutes(1))
        };
        Generator::new(&config)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let late = build(LATEST_MS - 10_000, "+0000", Format::Combined).unwrap_err();
    assert!(
        late.starts_with("the log would reach 10000-01-01T00:00:49.998Z"),
        "{late}"
    );
    let early = build(EARLIEST_MS, "-0500", Format::Combined).unwrap_err();
    assert!(
        early.starts_with("the log would reach 0000-12-31T19:00:00.000 at -0500, outside"),
        "{early}"
    );
    assert!(build(LATEST_MS - 120_000, "+0000", Format::Combined).is_ok());
    assert!(build(EARLIEST_MS, "+0000", Format::Combined).is_ok());
    // A format that shows UTC only is not held to the offset's local time.
    let msec = || Format::parse("$msec $remote_addr").unwrap();
    assert!(build(EARLIEST_MS, "-0500", msec()).is_ok());
    assert!(build(EARLIEST_MS, "-0500", Format::Json).is_ok());
    assert!(clock::parse_start("0000-01-01T00:00:00Z").is_err());
    assert!(clock::parse_start("0001-01-01T00:00:00Z").is_ok());
}
