use std::io::Write;
use std::sync::{Arc, Mutex};

use super::*;
use crate::ingest::FormatChoice;
use crate::watch::clock::ManualClock;
use crate::watch::testing::{POLICY, generated_log, ingest_settings, policy_keyed_by_ip};
use crate::watch::verdict::Verdict;
use crate::watch::watcher::WatchSettings;

fn watcher(path: &std::path::Path, verdict: Option<Verdict>) -> Watcher {
    let (rules, keys) = policy_keyed_by_ip(POLICY);
    Watcher::new(WatchSettings {
        files: vec![path.to_path_buf()],
        from_start: true,
        max_delay_ms: 5000,
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
