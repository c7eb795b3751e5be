use std::io::Write;
use std::sync::{Arc, Mutex};

use super::*;
use crate::ingest::FormatChoice;
use crate::watch::clock::ManualClock;
use crate::watch::testing::{
    LOG_START, POLICY, generated_log, ingest_settings, line_at, policy_keyed_by_ip, simulated,
};
use crate::watch::verdict::Verdict;
use crate::watch::watcher::WatchSettings;

fn watcher(path: &std::path::Path, verdict: Option<Verdict>) -> Watcher {
    watcher_of(&[path], verdict)
}

fn watcher_of(paths: &[&std::path::Path], verdict: Option<Verdict>) -> Watcher {
    let (rules, keys) = policy_keyed_by_ip(POLICY);
    Watcher::new(WatchSettings {
        files: paths.iter().map(|p| p.to_path_buf()).collect(),
        from_start: true,
        max_delay_ms: 5000,
        max_lateness_ms: 900_000,
        linger: Duration::from_secs(5),
        ingest: ingest_settings(FormatChoice::Auto, keys),
        rules,
        exemptions: Vec::new(),
        gateway: None,
        verdict,
    })
    .unwrap()
}

#[test]
fn a_replayed_log_reaches_a_verdict_and_writes_summaries() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&generated_log(3000, 5)).unwrap();
    // Every client may be hit; the log spans about 10 minutes.
    let mut w = watcher(file.path(), Some(Verdict::new(1.0, 5 * 60_000)));
    // The wall clock is long after the log: everything is released when quiet.
    let clock = ManualClock::new(1_800_000_000_000);
    let published: Published = Arc::new(Mutex::new(String::new()));
    let settings = SessionSettings {
        poll: Duration::from_millis(200),
        refresh: Duration::from_secs(1),
        interval: Some(Duration::from_secs(1)),
    };
    let mut out = JsonLines(Vec::new());
    let ending = run(
        &mut w,
        &clock,
        &settings,
        Some(&published),
        &mut out,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(ending, Ending::Passed);
    let text = published.lock().unwrap().clone();
    let requests: u64 = w.rules()[0].requests;
    assert!(requests > 2000, "{requests}");
    assert!(
        text.contains(&format!(
            "rlctl_requests_total{{rule=\"global\"}} {requests}"
        )),
        "{text}"
    );
    let summaries = String::from_utf8(out.0).unwrap();
    for line in summaries.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["rules"][0]["requests"].is_u64());
        // Each top client carries its profile (kinds matched, maybe none).
        for rule in v["rules"].as_array().unwrap() {
            assert!(rule["hour"]["baseline_p99"].is_u64(), "{rule}");
            for c in rule["top"].as_array().unwrap() {
                assert!(c["profile"].is_array() && c["peak_window"].is_u64(), "{c}");
            }
        }
    }
}

#[test]
fn a_strict_verdict_fails_and_a_stop_ends_the_loop() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&generated_log(3000, 5)).unwrap();
    let clock = ManualClock::new(1_800_000_000_000);
    let settings = SessionSettings {
        poll: Duration::from_millis(200),
        refresh: Duration::from_secs(1),
        interval: None,
    };
    let mut w = watcher(file.path(), Some(Verdict::new(0.0, 60_000)));
    let ending = run(
        &mut w,
        &clock,
        &settings,
        None,
        &mut JsonLines(Vec::new()),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert!(
        matches!(ending, Ending::Failed { share, .. } if share > 0.0),
        "{ending:?}"
    );
    let mut w = watcher(file.path(), None);
    let mut out = JsonLines(Vec::new());
    let ending = run(
        &mut w,
        &clock,
        &settings,
        None,
        &mut out,
        &AtomicBool::new(true),
    )
    .unwrap();
    assert_eq!(ending, Ending::Stopped);
    // Stopped, it writes its figures so far (a signal left nothing before).
    let text = String::from_utf8(out.0).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
}

/// Outputs that run `on_refresh` at each refresh and keep the summaries.
struct Acting<F: FnMut(&Snapshot)> {
    on_refresh: F,
    summaries: Vec<Snapshot>,
}

impl<F: FnMut(&Snapshot)> Outputs for Acting<F> {
    fn refresh(&mut self, snapshot: &Snapshot) -> io::Result<()> {
        (self.on_refresh)(snapshot);
        Ok(())
    }
    fn summary(&mut self, snapshot: &Snapshot) -> io::Result<()> {
        self.summaries.push(snapshot.clone());
        Ok(())
    }
}

fn settings() -> SessionSettings {
    SessionSettings {
        poll: Duration::from_millis(200),
        refresh: Duration::from_secs(1),
        interval: None,
    }
}

#[test]
fn a_stop_decides_the_requests_still_held_before_its_last_summary() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&generated_log(300, 5)).unwrap();
    let (rules, keys) = policy_keyed_by_ip(POLICY);
    let (want, _, _) = simulated(file.path(), &rules, &keys);
    let mut w = watcher(file.path(), None);
    let clock = ManualClock::new(1_800_000_000_000);
    let stop = AtomicBool::new(false);
    // Stopped right after the first read, which holds the last 5 s of the log.
    let mut out = Acting {
        on_refresh: |_| stop.store(true, Ordering::Relaxed),
        summaries: Vec::new(),
    };
    let ending = run(&mut w, &clock, &settings(), None, &mut out, &stop).unwrap();
    assert_eq!(ending, Ending::Stopped);
    let [last] = &out.summaries[..] else {
        panic!("{} summaries", out.summaries.len())
    };
    let got: Vec<(u64, u64)> = (last.rules.iter())
        .map(|r| (r.requests, r.would_reject))
        .collect();
    assert_eq!((got, last.pending), (want, 0));
}

#[test]
fn a_compressed_file_ends_the_watch_after_a_last_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    std::fs::write(&path, generated_log(300, 5)).unwrap();
    let mut w = watcher(&path, None);
    let clock = ManualClock::new(1_800_000_000_000);
    let replacement = dir.path().join("access.log.gz");
    let mut out = Acting {
        // logrotate with compress, writing its gzip under the followed name.
        on_refresh: |_| {
            std::fs::write(&replacement, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).unwrap();
            std::fs::rename(&replacement, &path).unwrap();
        },
        summaries: Vec::new(),
    };
    let error = run(
        &mut w,
        &clock,
        &settings(),
        None,
        &mut out,
        &AtomicBool::new(false),
    );
    assert!(
        matches!(
            error,
            Err(SessionError::Watch(WatchError::Compressed { .. }))
        ),
        "{error:?}"
    );
    let [last] = &out.summaries[..] else {
        panic!("{} summaries", out.summaries.len())
    };
    assert_eq!(last.pending, 0);
    assert!(last.rules[0].requests > 200, "{}", last.rules[0].requests);
}

/// A step that reads only skipped lines is quiet: the watch releases what
/// the wall clock has passed while another file keeps growing with garbage
/// (it waited for a step that read nothing, which never came).
#[test]
fn a_file_growing_with_skipped_lines_does_not_hold_the_others_back() {
    let dir = tempfile::tempdir().unwrap();
    let (log, noise) = (dir.path().join("access.log"), dir.path().join("noise.log"));
    std::fs::write(&log, generated_log(300, 5)).unwrap();
    std::fs::write(&noise, b"").unwrap();
    let mut w = watcher_of(&[&log, &noise], None);
    let clock = ManualClock::new(1_800_000_000_000);
    let stop = AtomicBool::new(false);
    let mut pending = Vec::new();
    let mut out = Acting {
        on_refresh: |snapshot: &Snapshot| {
            pending.push(snapshot.pending);
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&noise)
                .unwrap();
            f.write_all(b"not a log line\n").unwrap();
            stop.store(pending.len() >= 5, Ordering::Relaxed);
        },
        summaries: Vec::new(),
    };
    let quick = SessionSettings {
        refresh: Duration::from_millis(200),
        ..settings()
    };
    let ending = run(&mut w, &clock, &quick, None, &mut out, &stop).unwrap();
    assert_eq!(ending, Ending::Stopped);
    let requests = out.summaries[0].rules[0].requests;
    drop(out);
    // The first step read the log's requests: its last 5 s are held. Every
    // later step read only skipped lines: quiet, so the wall clock (long
    // past the log) releases them.
    assert!(pending.len() >= 5 && pending[0] > 0, "{pending:?}");
    assert!(pending[1..].iter().all(|&p| p == 0), "{pending:?}");
    assert!(requests > 250, "{requests}");
}

/// Two busy live files whose lines arrive 3 s and 7 s after their time (a
/// host clock behind this machine's, a shipper's latency), 4 s apart, within
/// --max-delay of each other: nothing is late. Releasing by the wall clock
/// on every step with requests let the first file's lines out before the
/// second's came, and made every line of the second late.
#[test]
fn busy_files_behind_the_wall_clock_are_put_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.log"), dir.path().join("b.log"));
    std::fs::write(&a, b"").unwrap();
    std::fs::write(&b, b"").unwrap();
    let mut w = watcher_of(&[&a, &b], None);
    let clock = ManualClock::new(LOG_START + 60_000);
    let stop = AtomicBool::new(false);
    let mut steps = 0;
    let mut out = Acting {
        on_refresh: |_: &Snapshot| {
            let secs_behind =
                |lag: crate::units::Millis| (clock.wall_ms() - lag - LOG_START) / 1000;
            for (path, ip, lag) in [(&a, "10.0.0.1", 3000), (&b, "10.0.0.2", 7000)] {
                let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                f.write_all(line_at(ip, secs_behind(lag), "/a").as_bytes())
                    .unwrap();
            }
            steps += 1;
            stop.store(steps >= 60, Ordering::Relaxed);
        },
        summaries: Vec::new(),
    };
    let quick = SessionSettings {
        refresh: Duration::from_millis(200),
        ..settings()
    };
    run(&mut w, &clock, &quick, None, &mut out, &stop).unwrap();
    let [last] = &out.summaries[..] else {
        panic!("{} summaries", out.summaries.len())
    };
    assert_eq!((last.late_lines, last.rules[0].unplaced), (0, 0));
    assert!(last.rules[0].requests >= 110, "{}", last.rules[0].requests);
}

/// Found by review: 50 lines of no access log (a program's start-up
/// messages) in one followed file stopped the watch with exit 2, and with it
/// the following of every other file.
#[test]
fn a_file_of_no_log_format_is_reported_and_the_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let (good, noise) = (dir.path().join("good.log"), dir.path().join("g.log"));
    std::fs::write(&good, b"").unwrap();
    std::fs::write(&noise, b"").unwrap();
    let mut w = watcher_of(&[&good, &noise], None);
    let clock = ManualClock::new(1_800_000_000_000);
    let stop = AtomicBool::new(false);
    let append = |path: &std::path::Path, text: &str| {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    };
    let mut refreshes = 0;
    let mut out = Acting {
        on_refresh: |_: &Snapshot| {
            refreshes += 1;
            match refreshes {
                1 => (0..20).for_each(|i| append(&good, &line_at("10.0.0.1", i, "/a"))),
                2 => (0..55).for_each(|i| append(&noise, &format!("Starting worker {i} ... ok\n"))),
                3 => (20..25).for_each(|i| append(&good, &line_at("10.0.0.1", i, "/a"))),
                _ => stop.store(true, Ordering::Relaxed),
            }
        },
        summaries: Vec::new(),
    };
    let quick = SessionSettings {
        refresh: Duration::from_millis(200),
        ..settings()
    };
    let ending = run(&mut w, &clock, &quick, None, &mut out, &stop).unwrap();
    assert_eq!(ending, Ending::Stopped);
    let [last] = &out.summaries[..] else {
        panic!("{} summaries", out.summaries.len())
    };
    assert_eq!(last.rules[0].requests, 25);
    let (g, n) = (&last.files[0], &last.files[1]);
    assert_eq!((g.lines, g.parsed), (25, 25));
    assert_eq!(n.events.get("undetected"), Some(&1));
    // The 55 lines came in one read: detection gave up on all of them.
    let reason = "log format not detected (watch tries again on the lines after)";
    assert_eq!((n.lines, n.parsed, last.skipped[reason]), (55, 0, 55));
}

/// Found by review: at SIGINT or SIGTERM a last line without its newline was
/// never counted (`simulate` reads it), nor were lines written since the
/// last poll.
#[test]
fn a_stop_reads_the_files_once_more_and_a_partial_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    std::fs::write(&path, line_at("10.0.0.1", 0, "/a")).unwrap();
    let mut w = watcher(&path, None);
    let clock = ManualClock::new(1_800_000_000_000);
    let stop = AtomicBool::new(false);
    let mut out = Acting {
        on_refresh: |_: &Snapshot| {
            // Written just before the signal: a line, then one without its newline.
            let more = [line_at("10.0.0.2", 1, "/a"), line_at("10.0.0.3", 2, "/a")].concat();
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(more.trim_end().as_bytes()).unwrap();
            stop.store(true, Ordering::Relaxed);
        },
        summaries: Vec::new(),
    };
    let ending = run(&mut w, &clock, &settings(), None, &mut out, &stop).unwrap();
    assert_eq!(ending, Ending::Stopped);
    let [last] = &out.summaries[..] else {
        panic!("{} summaries", out.summaries.len())
    };
    let f = &last.files[0];
    assert_eq!((f.lines, f.parsed, last.rules[0].requests), (3, 3, 3));
    assert!(f.readable);
}
