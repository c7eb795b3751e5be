//! Tests of the opt-in shapes (`--distinct-paths`, `--scanners`, `--shuffle`,
//! `--servers`, large `--clients`) and of the client shapes the recommendation
//! heuristics look for (monitor, NAT office, crawler, scanner, runaway), read
//! back from the written lines.

use rustc_hash::{FxHashMap, FxHashSet};

use super::distinct::SLUG_WORDS;
use super::profiles::Kind;
use super::routes::Route;
use super::*;

fn config(clients: u32, lines: u64, shapes: Shapes) -> Config {
    Config {
        clients,
        length: Length::Lines(lines),
        shapes,
        ..Config::default()
    }
}

fn text(config: &Config) -> String {
    let mut out = Vec::new();
    Generator::new(config).unwrap().write_to(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// (address, path, status, user agent, user, epoch-ish time key) of a combined line.
struct Line<'a> {
    addr: &'a str,
    user: &'a str,
    time: &'a str,
    path: &'a str,
    status: u16,
    agent: &'a str,
}

fn parse(line: &str) -> Line<'_> {
    let quoted: Vec<&str> = line.split('"').collect();
    let head: Vec<&str> = quoted[0].split(' ').collect();
    let request: Vec<&str> = quoted[1].split(' ').collect();
    let path = request[1].split('?').next().unwrap();
    Line {
        addr: head[0],
        user: head[2],
        time: &quoted[0][quoted[0].find('[').unwrap() + 1..quoted[0].find(']').unwrap()],
        path,
        status: quoted[2]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap(),
        agent: quoted[5],
    }
}

fn pool_path(path: &str) -> bool {
    let hex8 = |s: &str| s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let asset = path.strip_prefix("/static/").is_some_and(|rest| {
        let parts: Vec<&str> = rest.split('.').collect();
        !rest.contains('/') && parts.len() == 3 && hex8(parts[1])
    });
    asset
        || path.strip_prefix("/api/orders/").is_some_and(hex8)
        || path.strip_prefix("/v/").is_some_and(|s| s.len() == 11)
        || path.strip_prefix("/blog/").is_some_and(|s| {
            s.split('-').count() >= 3 && s.split('-').all(|w| SLUG_WORDS.contains(&w))
        })
}

#[test]
fn distinct_paths_puts_exactly_n_pool_paths_in_a_long_enough_log() {
    let shapes = Shapes {
        distinct_paths: Some(2_000),
        ..Shapes::default()
    };
    let log = text(&config(40, 12_000, shapes));
    let lines: Vec<Line> = log.lines().map(parse).collect();
    assert_eq!(lines.len(), 12_000);
    let pool: Vec<&str> = lines
        .iter()
        .map(|l| l.path)
        .filter(|p| pool_path(p))
        .collect();
    let distinct: FxHashSet<&str> = pool.iter().copied().collect();
    assert_eq!(distinct.len(), 2_000, "{} pool requests", pool.len());
    for prefix in ["/static/", "/api/orders/", "/v/", "/blog/"] {
        let n = distinct.iter().filter(|p| p.starts_with(prefix)).count();
        assert_eq!(n, 500, "{prefix}");
    }
    // About a quarter of the requests (monitor and batch aside).
    let share = pool.len() as f64 / lines.len() as f64;
    assert!((0.15..0.30).contains(&share), "{share}");
    // With 30, the same number of lines holds 30 pool paths.
    let small = Shapes {
        distinct_paths: Some(30),
        ..Shapes::default()
    };
    let log = text(&config(40, 12_000, small));
    let few: FxHashSet<&str> = log
        .lines()
        .map(|l| parse(l).path)
        .filter(|p| pool_path(p))
        .collect();
    assert_eq!(few.len(), 30);
}

#[test]
fn without_shape_flags_no_shape_appears() {
    let generator = Generator::new(&config(40, 20_000, Shapes::default())).unwrap();
    assert!(
        generator
            .written_events()
            .all(|e| !matches!(e.route, Route::Distinct(_) | Route::Probe(_)))
    );
    let log = text(&config(40, 20_000, Shapes::default()));
    assert!(!log.lines().any(|l| pool_path(parse(l).path)));
}

#[test]
fn scanners_probe_many_paths_and_get_mostly_4xx() {
    let shapes = Shapes {
        scanners: 3,
        ..Shapes::default()
    };
    let generator = Generator::new(&config(30, 20_000, shapes)).unwrap();
    let scanners: FxHashSet<&str> = generator
        .profiles()
        .iter()
        .filter(|p| p.kind == Kind::Scanner)
        .map(|p| p.addr.as_str())
        .collect();
    assert_eq!(scanners.len(), 3);
    let all: FxHashSet<&str> = generator
        .profiles()
        .iter()
        .map(|p| p.addr.as_str())
        .collect();
    assert_eq!(all.len(), 33, "scanners add addresses of their own");
    let log = text(&config(30, 20_000, shapes));
    for addr in &scanners {
        let mine: Vec<Line> = log.lines().map(parse).filter(|l| l.addr == *addr).collect();
        assert!(mine.len() > 100, "{addr}: {}", mine.len());
        let client_errors = mine.iter().filter(|l| l.status / 100 == 4).count();
        assert!(client_errors * 100 >= mine.len() * 80, "{addr} mostly 4xx");
        let paths: FxHashSet<&str> = mine.iter().map(|l| l.path).collect();
        assert!(paths.len() * 2 > mine.len(), "{addr}: many distinct paths");
        assert!(
            mine.iter()
                .any(|l| l.path == "/.env" || l.path == "/wp-login.php")
        );
    }
    // Random names are also tried at the top, each a first segment of its own.
    let top_names = log
        .lines()
        .map(parse)
        .filter(|l| scanners.contains(l.addr))
        .filter(|l| l.path.len() == 11 && l.path.matches('/').count() == 1)
        .filter(|l| l.path[1..7].bytes().all(|b| b.is_ascii_alphanumeric()))
        .count();
    assert!(top_names > 10, "{top_names} names probed at the top");
}

fn sorted_lines(log: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = log.lines().collect();
    lines.sort_unstable();
    lines
}

/// Places where a line's time is earlier than the one before it (times of
/// one day, `dd/Mon/yyyy:HH:MM:SS`, compare as text from the hour on).
fn descents(log: &str) -> usize {
    let times: Vec<&str> = log.lines().map(|l| &parse(l).time[12..20]).collect();
    times.windows(2).filter(|w| w[1] < w[0]).count()
}

/// The base log of the reordering tests (60 clients, 30,000 lines).
fn base() -> Config {
    config(60, 30_000, Shapes::default())
}

/// The base log, and the same requests written with `shapes`: the same
/// lines, and the same order on every run.
fn reordered(shapes: Shapes) -> (String, String) {
    let other = Config { shapes, ..base() };
    let (plain, written) = (text(&base()), text(&other));
    assert_eq!(sorted_lines(&plain), sorted_lines(&written));
    assert_eq!(written, text(&other), "reproducible");
    (plain, written)
}

#[test]
fn shuffle_reorders_within_each_minute_only() {
    let (_, mixed) = reordered(Shapes {
        shuffle: true,
        ..Shapes::default()
    });
    assert!(descents(&mixed) > 1_000, "shuffled: {}", descents(&mixed));
    let minutes: Vec<&str> = mixed.lines().map(|l| &parse(l).time[12..17]).collect();
    assert!(minutes.windows(2).all(|w| w[0] <= w[1]), "minutes in order");
}

#[test]
fn logged_at_end_reorders_lines_by_at_most_the_longest_request() {
    let (_, late) = reordered(Shapes {
        logged_at_end: true,
        ..Shapes::default()
    });
    assert!(descents(&late) > 100, "logged at end: {}", descents(&late));
    // No line comes after one that began more than the longest request
    // (30 s) later. Times of one day: seconds from the hour on.
    let seconds = |l: &str| {
        let t = &parse(l).time[12..20];
        let part = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
        part(0..2) * 3600 + part(3..5) * 60 + part(6..8)
    };
    let mut latest = 0;
    for line in late.lines() {
        let t = seconds(line);
        assert!(t + 30 >= latest, "{line} after a line of second {latest}");
        latest = latest.max(t);
    }
}

#[test]
fn servers_concatenate_time_sorted_logs() {
    let (plain, ten) = reordered(Shapes {
        servers: 10,
        ..Shapes::default()
    });
    assert_eq!(descents(&plain), 0);
    assert_eq!(descents(&ten), 9, "ten sorted runs");
    assert_eq!(
        Generator::new(&Config {
            shapes: Shapes {
                servers: 0,
                ..Shapes::default()
            },
            ..base()
        })
        .err(),
        Some(GenerateError::Servers(0))
    );
    assert_eq!(
        Generator::new(&Config {
            shapes: Shapes {
                distinct_paths: Some(0),
                ..Shapes::default()
            },
            ..base()
        })
        .err(),
        Some(GenerateError::NoDistinctPaths)
    );
}

#[test]
fn a_large_cast_has_as_many_addresses_as_clients() {
    let clients = 150_000;
    let generator = Generator::new(&config(clients, 30_000, Shapes::default())).unwrap();
    let addrs: FxHashSet<&str> = generator
        .profiles()
        .iter()
        .map(|p| p.addr.as_str())
        .collect();
    assert_eq!(addrs.len(), clients as usize);
    let seen: FxHashSet<&str> = generator
        .events()
        .map(|e| generator.profiles()[e.profile as usize].addr.as_str())
        .collect();
    assert!(
        seen.len() > 15_000,
        "{} clients in 30,000 lines",
        seen.len()
    );
}

#[test]
fn each_client_shape_shows_its_signal() {
    let log = text(&config(120, 150_000, Shapes::default()));
    let lines: Vec<Line> = log.lines().map(parse).collect();
    let mut by_addr: FxHashMap<&str, Vec<&Line>> = FxHashMap::default();
    for l in &lines {
        by_addr.entry(l.addr).or_default().push(l);
    }
    // Monitor: one path, near-constant spacing (10 s +-5%, whole seconds here).
    let monitor = by_addr
        .values()
        .find(|ls| ls[0].agent.starts_with("ELB-HealthChecker"))
        .unwrap();
    assert!(monitor.iter().all(|l| l.path == "/health"));
    let secs: Vec<i64> = monitor
        .iter()
        .map(|l| {
            let t = &l.time[12..20];
            let part = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
            part(0..2) * 3600 + part(3..5) * 60 + part(6..8)
        })
        .collect();
    assert!(secs.windows(2).all(|w| (9..=11).contains(&(w[1] - w[0]))));
    // NAT office: many users and several user agents behind one address.
    let (users, agents) = by_addr
        .values()
        .map(|ls| {
            let users: FxHashSet<&str> = ls.iter().map(|l| l.user).collect();
            let agents: FxHashSet<&str> = ls.iter().map(|l| l.agent).collect();
            (users.len(), agents.len())
        })
        .max()
        .unwrap();
    assert!(users >= 20 && agents >= 4, "{users} users, {agents} agents");
    // Crawlers: Googlebot and bingbot.
    for bot in ["Googlebot", "bingbot"] {
        assert!(lines.iter().any(|l| l.agent.contains(bot)), "{bot}");
    }
    // Runaway: one address with a sustained second-by-second rate and 429s.
    let runaway = by_addr
        .values()
        .filter(|ls| ls.iter().any(|l| l.status == 429))
        .count();
    assert_eq!(runaway, 2);
}
