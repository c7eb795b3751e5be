//! A whole watch over real files rotated while it runs, against
//! `simulate::replay` over every line written.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::*;
use crate::ingest::FormatChoice;
use crate::ingest::key::KeySet;
use crate::watch::testing::{
    LOG_START, POLICY, generated_log, ingest_settings, line_at, policy_keyed_by_ip, simulated,
};

fn append(path: &Path, data: &[u8]) {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(data)
        .unwrap();
}

/// Splits `log` into `n` pieces of whole lines.
fn pieces(log: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=n {
        let mut end = (log.len() * i / n).max(start);
        if end < log.len() {
            end += memchr::memchr(b'\n', &log[end..]).map_or(log.len() - end, |j| j + 1);
        }
        out.push(&log[start..end.min(log.len())]);
        start = end.min(log.len());
    }
    out
}

/// A watch of `path` with `rules` in shadow, keyed by `keys`, followed from
/// the start of its last line (or from byte 0 with `from_start`).
fn watch_settings(
    path: &Path,
    rules: Vec<CheckedRule>,
    keys: KeySet,
    from_start: bool,
) -> WatchSettings {
    WatchSettings {
        files: vec![path.to_path_buf()],
        from_start,
        max_delay_ms: 5000,
        max_lateness_ms: 900_000,
        linger: Duration::from_secs(2),
        ingest: ingest_settings(FormatChoice::Auto, keys),
        rules,
        exemptions: Vec::new(),
        gateway: None,
        verdict: None,
    }
}

#[test]
fn rotations_lose_nothing_and_decisions_equal_simulate() {
    let (rules, keys) = policy_keyed_by_ip(POLICY);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"an old line that is not followed\n");
    let settings = watch_settings(&path, rules.clone(), keys.clone(), false);
    let mut watcher = Watcher::new(settings).unwrap();
    let mut secs = 0;
    let mut step = |w: &mut Watcher| {
        secs += 1;
        w.step(Duration::from_secs(secs), Millis::MAX).unwrap()
    };
    step(&mut watcher);
    let mut log = generated_log(5000, 7);
    // A 2 MB line in the middle: skipped and counted as too long.
    let middle = memchr::memchr(b'\n', &log[log.len() / 2..]).unwrap() + log.len() / 2 + 1;
    log.splice(
        middle..middle,
        [vec![b'x'; 2 << 20], b"\n".to_vec()].concat(),
    );
    let parts = pieces(&log, 10);
    let mut events = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        match i {
            // Rename, the writer keeps writing to the renamed file, then reopens.
            3 => {
                fs::rename(&path, dir.path().join("access.log.1")).unwrap();
                append(&dir.path().join("access.log.1"), part);
                events.extend(step(&mut watcher).events);
                continue;
            }
            4 => append(&path, part), // the reopened file
            // copytruncate: copy, truncate, the writer appends from byte 0.
            7 => {
                fs::copy(&path, dir.path().join("access.log.2")).unwrap();
                OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(0)
                    .unwrap();
                append(&path, part);
            }
            _ => append(&path, part),
        }
        events.extend(step(&mut watcher).events);
    }
    for _ in 0..3 {
        events.extend(step(&mut watcher).events);
    }
    watcher.finish().unwrap();
    let names: Vec<&str> = events.iter().map(|(_, e)| event_name(e)).collect();
    assert_eq!(
        names,
        ["missing", "replaced", "opened", "closed", "truncated"]
    );

    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&log).unwrap();
    let (want_counts, _, report) = simulated(file.path(), &rules, &keys);
    let snapshot = watcher.snapshot(0);
    let got_counts: Vec<(u64, u64)> = snapshot
        .rules
        .iter()
        .map(|r| (r.requests, r.would_reject))
        .collect();
    assert_eq!(got_counts, want_counts);
    let f = &snapshot.files[0];
    assert_eq!((f.lines, f.parsed), (report.lines, report.parsed));
    assert_eq!(snapshot.skipped, report.skipped_by_reason);
    assert_eq!(snapshot.skipped.values().sum::<u64>() + f.parsed, f.lines);
    assert_eq!(snapshot.skipped["line longer than 1048576 bytes"], 1);
    assert_eq!((snapshot.late_lines, snapshot.pending), (0, 0));
}

#[test]
fn a_timestamp_far_in_the_future_is_set_aside_not_allowed_to_make_everything_late() {
    let (rules, keys) = policy_keyed_by_ip("[[rule]]\nname='g'\nlimit='1/1s'\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    let line = |day: &str| {
        format!("10.0.0.1 - - [{day}:13:55:36 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"ua\"\n")
    };
    let text = [
        line("10/Oct/2025"),
        line("10/Oct/2099"),
        line("11/Oct/2025"),
    ]
    .concat();
    append(&path, text.as_bytes());
    let mut watcher = Watcher::new(watch_settings(&path, rules, keys, true)).unwrap();
    // The wall clock on 2025-10-12.
    watcher.step(Duration::ZERO, 1_760_227_200_000).unwrap();
    watcher.finish().unwrap();
    let s = watcher.snapshot(1_760_227_200_000);
    assert_eq!((s.future_requests, s.late_lines), (1, 0));
    assert_eq!(s.rules[0].requests, 2);
    assert_eq!(s.files[0].parsed, 3);
}

/// A W3C log rotated to a file whose `#Fields:` name other columns, while its
/// writer still writes to the renamed file: each file's lines are read in
/// its own columns.
#[test]
fn a_rotated_away_w3c_file_is_read_in_its_own_columns() {
    let (rules, keys) =
        policy_keyed_by_ip("[[rule]]\nname='posts'\nmethod='POST'\nlimit='100/1h'\n");
    let dir = tempfile::tempdir().unwrap();
    let (path, rotated) = (dir.path().join("u_ex.log"), dir.path().join("u_ex.log.1"));
    let header = |fields: &str| format!("#Date: 2026-01-06 00:00:00\n#Fields: {fields}\n");
    let old = header("time c-ip cs-method cs-uri-stem sc-status");
    append(
        &path,
        format!("{old}00:00:01 192.0.2.1 POST /a 200\n").as_bytes(),
    );
    let settings = watch_settings(&path, rules, keys, true);
    let mut watcher = Watcher::new(settings).unwrap();
    watcher.step(Duration::from_secs(1), Millis::MAX).unwrap();
    fs::rename(&path, &rotated).unwrap();
    let new = header("time cs-uri-stem c-ip sc-status cs-method");
    append(
        &path,
        format!("{new}00:00:02 /b 192.0.2.2 200 POST\n").as_bytes(),
    );
    watcher.step(Duration::from_secs(2), Millis::MAX).unwrap();
    // The old file's writer has not reopened yet.
    append(&rotated, b"00:00:03 192.0.2.1 POST /c 200\n");
    append(&path, b"00:00:04 /d 192.0.2.2 200 POST\n");
    let events = watcher
        .step(Duration::from_secs(3), Millis::MAX)
        .unwrap()
        .events;
    assert!(events.is_empty(), "{events:?}");
    watcher.finish().unwrap();
    let s = watcher.snapshot(0);
    assert_eq!((s.files[0].lines, s.files[0].parsed), (8, 4));
    assert_eq!(s.rules[0].requests, 4);
}

/// A combined line of `ip` for `path` at `secs` past 13:00 on one day.
/// A watch of two files under `policy` (with a verdict of 50% held for ten
/// minutes) to which each of `pieces` (front, backlog) is written in turn,
/// a step after each; and what `simulate` gives on all the lines.
fn two_files(policy: &str, pieces: &[(String, String)]) -> (Watcher, Vec<(u64, u64)>) {
    let (rules, keys) = policy_keyed_by_ip(policy);
    let dir = tempfile::tempdir().unwrap();
    let (front, backlog) = (dir.path().join("a.log"), dir.path().join("b.log"));
    append(&front, b"");
    append(&backlog, b"");
    let mut settings = watch_settings(&front, rules.clone(), keys.clone(), true);
    settings.files.push(backlog.clone());
    settings.verdict = Some(Verdict::new(0.5, 600_000));
    let mut watcher = Watcher::new(settings).unwrap();
    let mut secs = 0;
    let mut all = String::new();
    for (a, b) in pieces {
        for (path, text) in [(&front, a), (&backlog, b)] {
            append(path, text.as_bytes());
            all += text;
            secs += 1;
            watcher
                .step(Duration::from_secs(secs), Millis::MAX)
                .unwrap();
        }
    }
    watcher.finish().unwrap();
    let mut both = tempfile::NamedTempFile::new().unwrap();
    both.write_all(all.as_bytes()).unwrap();
    let (want, _, _) = simulated(both.path(), &rules, &keys);
    (watcher, want)
}

/// One rule's (requests, would-reject), (clients hit, seen) and unplaced.
type Figures = ((u64, u64), (u64, u64), u64);

/// Each rule's [`Figures`].
fn figures(s: &Snapshot) -> Vec<Figures> {
    (s.rules.iter())
        .map(|r| {
            let hour = (r.hour.clients_hit, r.hour.clients_seen);
            ((r.requests, r.would_reject), hour, r.unplaced)
        })
        .collect()
}

/// A log shipper catching up: one file's ten minutes arrive after another
/// file's same ten minutes were decided. Every backlog line is late, and is
/// decided in its client's own time, so the watch decides as `simulate` on
/// both files together: the quiet clients are not hit, the burst is.
#[test]
fn a_backlog_is_decided_as_the_sorted_log_and_does_not_fail_the_verdict() {
    let policy = "[[rule]]\nname='per-ip'\nlimit='60/1m'\nburst=5\nalgorithm='token-bucket'\n\n\
                  [[rule]]\nname='search'\nroute='^/search'\nlimit='2r/s'\nburst=1\nalgorithm='leaky-bucket'\n";
    // The front file: five clients searching every 3 s, and one in a burst
    // of 210 requests in 21 s, over ten minutes.
    let mut a = String::new();
    for secs in (0..600).step_by(3) {
        for c in 1..=5 {
            a += &line_at(&format!("10.0.1.{c}"), secs, "/search");
        }
        if (100..120).contains(&secs) {
            a += &line_at("10.0.1.9", secs, "/a").repeat(30);
        }
    }
    // The backlog: ten clients once a minute, and a burst of 100 searches
    // in one second.
    let mut b = String::new();
    for minute in 0..10 {
        for c in 1..=10 {
            b += &line_at(&format!("10.0.2.{c}"), minute * 60 + c, "/b");
        }
    }
    b += &line_at("10.0.2.99", 300, "/search").repeat(100);
    let (watcher, want) = two_files(policy, &[(a, String::new()), (String::new(), b)]);
    let s = watcher.snapshot(0);
    let got = figures(&s);
    assert_eq!(got.iter().map(|f| f.0).collect::<Vec<_>>(), want);
    assert_eq!(s.late_lines, 200);
    // Only the two bursting clients are hit, each by one rule; the verdict
    // (50%) holds. (Late lines decided at the newest time hit 11 of 17
    // clients: 65%.)
    let hit: Vec<_> = got.iter().map(|f| (f.1, f.2)).collect();
    assert_eq!(hit, [((1, 17), 0), ((1, 6), 0)]);
    assert!(!matches!(watcher.judgement(), Judgement::Failed { .. }));
}

/// A backlog written in pieces while the other file moves on by a minute
/// each time: the backlog's client keeps its state between pieces (it is
/// within --max-lateness), so its burst is caught as `simulate` catches it.
#[test]
fn a_backlog_in_pieces_keeps_its_clients_state() {
    let policy = "[[rule]]\nname='per-ip'\nlimit='60/1m'\nburst=100\nalgorithm='token-bucket'\n";
    let pieces: Vec<(String, String)> = (0..6)
        .map(|i| {
            let front = (600 + i * 60..660 + i * 60)
                .map(|secs| line_at("10.0.1.1", secs, "/a"))
                .collect();
            let burst = (300 + i * 10..310 + i * 10)
                .map(|secs| line_at("10.0.2.99", secs, "/b").repeat(10))
                .collect();
            (front, burst)
        })
        .collect();
    let (watcher, want) = two_files(policy, &pieces);
    let got = figures(&watcher.snapshot(0));
    assert_eq!(vec![got[0].0], want);
    assert!(want[0].1 > 400, "{want:?}");
    assert_eq!((got[0].1, got[0].2), ((1, 2), 0));
}

/// Two load-balanced servers: every client is in both files, and one file's
/// ten minutes arrive after the other's. No backlog line can be placed in
/// its client's time order (each has later decisions): none is decided, so
/// none is a false hit, and each is counted as unplaced.
#[test]
fn a_backlog_of_clients_decided_since_is_unplaced_not_hit() {
    let policy = "[[rule]]\nname='per-ip'\nlimit='30/1m'\nalgorithm='sliding-log'\n";
    let server = |offset: i64| -> String {
        (0..600)
            .step_by(6)
            .flat_map(|secs| {
                (1..=20).map(move |c| line_at(&format!("10.0.0.{c}"), secs + offset, "/a"))
            })
            .collect()
    };
    let (watcher, want) = two_files(
        policy,
        &[(server(0), String::new()), (String::new(), server(3))],
    );
    let got = figures(&watcher.snapshot(0));
    assert_eq!(want, [(4000, 0)]);
    // The backlog's lines from 573 s on are no backlog: they are newer than
    // the last line released (570 s: the 64th newest request was at 576 s,
    // and the buffer waits 5 s behind it), so they are decided in order.
    assert_eq!(got, [((2000 + 100, 0), (0, 20), 2000 - 100)]);
    assert!(!matches!(watcher.judgement(), Judgement::Failed { .. }));
}

/// Twenty seconds of lines half an hour ahead of their neighbours (a host
/// whose clock jumped, then was set right), from a client that goes on
/// sending: they are held until the log reaches them, so nothing after them
/// is late and the watch decides as `simulate` does. (Released once the
/// newest time was 5 s past them, they made every later line late and
/// their client's unplaced.)
#[test]
fn a_line_far_ahead_waits_and_makes_nothing_late() {
    let policy = "[[rule]]\nname='per-ip'\nlimit='30/1m'\nalgorithm='sliding-log'\n";
    let minutes = |from: i64, to: i64| -> String {
        (from..to)
            .step_by(6)
            .flat_map(|secs| {
                let burst = if (300..330).contains(&secs) { 10 } else { 1 };
                (1..=20).map(move |c| line_at(&format!("10.0.0.{c}"), secs, "/a").repeat(burst))
            })
            .collect()
    };
    let ahead: String = (2400..2420)
        .map(|secs| line_at("10.0.0.1", secs, "/a"))
        .collect();
    let pieces = [
        (minutes(0, 240) + &ahead, String::new()),
        (minutes(240, 600), String::new()),
    ];
    let (watcher, want) = two_files(policy, &pieces);
    let got = figures(&watcher.snapshot(0));
    assert_eq!(watcher.snapshot(0).late_lines, 0);
    assert_eq!(vec![got[0].0], want);
    assert!(want[0].1 > 0, "{want:?}");
    assert_eq!(got[0].2, 0);
}

/// A stop decides what the reorder buffer holds, a line far ahead of a live
/// log included; the verdict's clock does not go past the wall clock with
/// it, so that line cannot make `--for 10m` hold after five minutes of log.
#[test]
fn a_line_ahead_decided_at_a_stop_does_not_settle_the_verdict() {
    let (rules, keys) =
        policy_keyed_by_ip("[[rule]]\nname='r'\nlimit='100/1m'\nalgorithm='fixed-window'\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.log");
    let mut log: String = (0..300)
        .step_by(6)
        .flat_map(|secs| (1..=20).map(move |c| line_at(&format!("10.0.0.{c}"), secs, "/a")))
        .collect();
    log += &line_at("10.0.0.1", 1200, "/a");
    append(&path, log.as_bytes());
    let mut settings = watch_settings(&path, rules, keys, true);
    settings.verdict = Some(Verdict::new(0.5, 600_000));
    let mut watcher = Watcher::new(settings).unwrap();
    // Live: the wall clock is at the log's end, five minutes in.
    watcher
        .step(Duration::from_secs(1), LOG_START + 300_000)
        .unwrap();
    watcher.drain();
    let snapshot = watcher.snapshot(LOG_START + 300_000);
    assert_eq!((snapshot.pending, snapshot.rules[0].requests), (0, 1001));
    assert_eq!(watcher.judgement(), &Judgement::Waiting);
}
