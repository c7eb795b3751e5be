//! Every rotation case on real temporary files, with time driven by hand.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::ingest::lines::MAX_LINE_BYTES;

const LINGER: Duration = Duration::from_secs(5);

fn append(path: &Path, text: &[u8]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text).unwrap();
}

/// An empty `access.log` in a new directory, followed from its end and
/// polled once at 0 s: (the directory, the log, its follower).
fn following_an_empty_log() -> (tempfile::TempDir, std::path::PathBuf, Follower) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
    (dir, path, f)
}

/// Polls once at `secs` and returns what came out.
fn poll(f: &mut Follower, secs: u64) -> Vec<Followed> {
    let mut out = Vec::new();
    f.poll(Duration::from_secs(secs), &mut out);
    out
}

/// Lines of the first file opened at the path.
fn lines(text: &str) -> Followed {
    lines_of(1, text)
}

/// Lines of the file numbered `file`.
fn lines_of(file: u32, text: &str) -> Followed {
    Followed::Lines {
        file,
        data: text.as_bytes().to_vec(),
    }
}

fn event(e: FileEvent) -> Followed {
    Followed::Event(e)
}

/// Only the line bytes of `out`, concatenated.
fn text(out: &[Followed]) -> String {
    out.iter()
        .filter_map(|f| match f {
            Followed::Lines { data: b, .. } => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn reads_only_what_is_appended_after_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"old 1\nold 2\n");
    let mut f = Follower::new(&path, false, LINGER);
    assert_eq!(poll(&mut f, 0), [event(FileEvent::Opened { offset: 12 })]);
    assert_eq!(poll(&mut f, 1), []);
    append(&path, b"new 1\nnew 2\n");
    assert_eq!(poll(&mut f, 2), [lines("new 1\nnew 2\n")]);
    assert!(f.readable());
}

#[test]
fn from_start_reads_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"old 1\nold 2\n");
    let mut f = Follower::new(&path, true, LINGER);
    assert_eq!(
        poll(&mut f, 0),
        [
            event(FileEvent::Opened { offset: 0 }),
            lines("old 1\nold 2\n")
        ]
    );
}

#[test]
fn a_header_before_the_offset_comes_after_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u_ex.log");
    let head = "#Version: 1.0\n#Fields: time c-ip\n00:00:01 a\n#Date: 2026-01-06\n";
    append(&path, format!("{head}00:00:02 b\n").as_bytes());
    let mut f = Follower::new(&path, false, LINGER);
    let offset = (head.len() + "00:00:02 b\n".len()) as u64;
    assert_eq!(
        poll(&mut f, 0),
        [
            event(FileEvent::Opened { offset }),
            Followed::Header {
                file: 1,
                lines: b"#Version: 1.0\n#Fields: time c-ip\n#Date: 2026-01-06\n".to_vec()
            },
        ]
    );
    append(&path, b"00:00:03 c\n");
    assert_eq!(poll(&mut f, 1), [lines("00:00:03 c\n")]);
    // From the start, the header is among the lines: no header item.
    let mut f = Follower::new(&path, true, LINGER);
    assert!(
        !poll(&mut f, 0)
            .iter()
            .any(|x| matches!(x, Followed::Header { .. }))
    );
}

#[test]
fn a_partial_last_line_waits_for_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    // At start, the last line is incomplete: following starts at its beginning.
    append(&path, b"done\nhal");
    let mut f = Follower::new(&path, false, LINGER);
    assert_eq!(poll(&mut f, 0), [event(FileEvent::Opened { offset: 5 })]);
    assert_eq!(text(&poll(&mut f, 0)), "");
    append(&path, b"f of a line");
    assert_eq!(poll(&mut f, 1), []);
    append(&path, b"\nnext\npart");
    assert_eq!(poll(&mut f, 2), [lines("half of a line\nnext\n")]);
    // Finishing hands over the partial line.
    let mut out = Vec::new();
    f.finish(&mut out);
    assert_eq!(out, [lines("part\n")]);
}

#[test]
fn rename_and_create_reads_both_files_to_their_end() {
    let (dir, path, mut f) = following_an_empty_log();
    let rotated = dir.path().join("access.log.1");
    append(&path, b"a1\n");
    fs::rename(&path, &rotated).unwrap();
    // The writer still writes to the renamed file until it reopens.
    append(&rotated, b"a2\n");
    assert_eq!(
        poll(&mut f, 1),
        [event(FileEvent::Missing), lines("a1\na2\n")]
    );
    append(&rotated, b"a3\n");
    assert_eq!(poll(&mut f, 2), [lines("a3\n")]);
    // The writer reopens: a new file at the path, and a last line in the old one.
    append(&rotated, b"a4\n");
    append(&path, b"b1\n");
    assert_eq!(
        poll(&mut f, 3),
        [
            event(FileEvent::Replaced),
            lines("a4\n"),
            event(FileEvent::Opened { offset: 0 }),
            lines_of(2, "b1\n"),
        ]
    );
    assert!(f.reads(1) && f.reads(2));
    // A late write to the old file is still read while it lingers, told
    // from the new file's lines in the same poll...
    append(&rotated, b"a5\na6");
    append(&path, b"b2\n");
    assert_eq!(poll(&mut f, 6), [lines("a5\n"), lines_of(2, "b2\n")]);
    // ...and its partial last line is handed over when it closes.
    assert_eq!(
        poll(&mut f, 6 + 5),
        [lines("a6\n"), event(FileEvent::Closed)]
    );
    assert!(!f.reads(1) && f.reads(2));
    append(&path, b"b3\n");
    assert_eq!(poll(&mut f, 12), [lines_of(2, "b3\n")]);
}

#[test]
fn a_file_quiet_before_its_rotation_lingers_from_the_rotation() {
    // Found by review: the linger counted from the last write, so a log
    // quiet for longer than it before logrotate ran was closed at once, and
    // the writer's lines before it reopened were lost.
    let (dir, path, mut f) = following_an_empty_log();
    let rotated = dir.path().join("access.log.1");
    append(&path, b"a1\n");
    assert_eq!(poll(&mut f, 1), [lines("a1\n")]);
    // Ten quiet seconds, then the rotation.
    fs::rename(&path, &rotated).unwrap();
    append(&path, b"");
    assert_eq!(
        poll(&mut f, 11),
        [
            event(FileEvent::Replaced),
            event(FileEvent::Opened { offset: 0 })
        ]
    );
    // The writer has not reopened yet: the old file stays open...
    assert_eq!(poll(&mut f, 12), []);
    // ...and what it writes there before reopening is read.
    append(&rotated, b"a2\n");
    assert_eq!(poll(&mut f, 13), [lines("a2\n")]);
    assert_eq!(poll(&mut f, 13 + 5), [event(FileEvent::Closed)]);
}

#[test]
fn copytruncate_starts_again_from_byte_zero() {
    let (dir, path, mut f) = following_an_empty_log();
    append(&path, b"line 1\nline 2\n");
    assert_eq!(text(&poll(&mut f, 1)), "line 1\nline 2\n");
    // logrotate copytruncate: copy, then truncate in place; the writer appends.
    fs::copy(&path, dir.path().join("access.log.1")).unwrap();
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&path, b"x\n");
    assert_eq!(poll(&mut f, 2), [event(FileEvent::Truncated), lines("x\n")]);
}

#[test]
fn copytruncate_is_seen_even_when_the_file_grew_back_past_the_offset() {
    let (_dir, path, mut f) = following_an_empty_log();
    append(&path, b"first 1\n");
    assert_eq!(text(&poll(&mut f, 1)), "first 1\n");
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&path, b"second 1\nsecond 2\n");
    assert_eq!(
        poll(&mut f, 2),
        [event(FileEvent::Truncated), lines("second 1\nsecond 2\n")]
    );
}

/// Found by review: lines of one length that end alike reached the old
/// offset with the same 32 bytes before it, and the truncation was missed.
#[test]
fn copytruncate_is_seen_when_the_new_lines_end_like_the_old_at_the_offset() {
    let (_dir, path, mut f) = following_an_empty_log();
    let line = |n: u32| format!("10.0.0.{n} GET /a HTTP/1.1 200 1 \"-\" \"the same agent\"\n");
    let old: String = (1..=3).map(line).collect();
    append(&path, old.as_bytes());
    assert_eq!(text(&poll(&mut f, 1)), old);
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    let new: String = (4..=7).map(line).collect();
    append(&path, new.as_bytes());
    let out = poll(&mut f, 2);
    assert_eq!(out[0], event(FileEvent::Truncated));
    assert_eq!(text(&out), new);
}

#[test]
fn a_deleted_and_recreated_file_is_followed_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"kept\n");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
    fs::remove_file(&path).unwrap();
    assert_eq!(poll(&mut f, 1), [event(FileEvent::Missing)]);
    assert!(!f.readable());
    append(&path, b"again 1\n");
    assert_eq!(
        poll(&mut f, 2),
        [
            event(FileEvent::Replaced),
            event(FileEvent::Opened { offset: 0 }),
            lines_of(2, "again 1\n"),
        ]
    );
    assert!(f.readable());
}

#[test]
fn a_file_that_appears_later_is_read_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    let mut f = Follower::new(&path, false, LINGER);
    assert_eq!(poll(&mut f, 0), [event(FileEvent::Missing)]);
    assert_eq!(poll(&mut f, 1), []);
    append(&path, b"hello\n");
    assert_eq!(
        poll(&mut f, 2),
        [event(FileEvent::Opened { offset: 0 }), lines("hello\n")]
    );
}

mod conditions;
