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

/// Polls once at `secs` and returns what came out.
fn poll(f: &mut Follower, secs: u64) -> Vec<Followed> {
    let mut out = Vec::new();
    f.poll(Duration::from_secs(secs), &mut out);
    out
}

fn lines(text: &str) -> Followed {
    Followed::Lines(text.as_bytes().to_vec())
}

fn event(e: FileEvent) -> Followed {
    Followed::Event(e)
}

/// Only the line bytes of `out`, concatenated.
fn text(out: &[Followed]) -> String {
    out.iter()
        .filter_map(|f| match f {
            Followed::Lines(b) => Some(String::from_utf8_lossy(b).into_owned()),
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
            Followed::Header(b"#Version: 1.0\n#Fields: time c-ip\n#Date: 2026-01-06\n".to_vec()),
        ]
    );
    append(&path, b"00:00:03 c\n");
    assert_eq!(poll(&mut f, 1), [lines("00:00:03 c\n")]);
    // From the start, the header is among the lines: no header item.
    let mut f = Follower::new(&path, true, LINGER);
    assert!(
        !poll(&mut f, 0)
            .iter()
            .any(|x| matches!(x, Followed::Header(_)))
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    let rotated = dir.path().join("access.log.1");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
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
            lines("b1\n"),
        ]
    );
    // A late write to the old file is still read while it lingers...
    append(&rotated, b"a5");
    assert_eq!(poll(&mut f, 6), []);
    // ...and its partial last line is handed over when it closes.
    assert_eq!(
        poll(&mut f, 6 + 5),
        [lines("a5\n"), event(FileEvent::Closed)]
    );
    append(&path, b"b2\n");
    assert_eq!(poll(&mut f, 12), [lines("b2\n")]);
}

#[test]
fn copytruncate_starts_again_from_byte_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
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
            lines("again 1\n"),
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

#[test]
fn a_directory_in_place_of_the_file_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
    append(&path, b"before\n");
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    // What the old file held is still read; the directory is reported once.
    assert_eq!(
        poll(&mut f, 1),
        [lines("before\n"), event(FileEvent::NotAFile)]
    );
    assert_eq!(poll(&mut f, 2), []);
    assert!(!f.readable());
    fs::remove_dir(&path).unwrap();
    append(&path, b"after\n");
    let out = poll(&mut f, 3);
    assert_eq!(text(&out), "after\n");
    assert!(out.contains(&event(FileEvent::Opened { offset: 0 })));
}

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(text).unwrap();
    gzip.finish().unwrap()
}

#[test]
fn a_compressed_file_is_reported_once_and_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, &gzip(b"a line\n"));
    let mut f = Follower::new(&path, true, LINGER);
    assert_eq!(
        poll(&mut f, 0),
        [
            event(FileEvent::Opened { offset: 0 }),
            event(FileEvent::Compressed("gzip"))
        ]
    );
    assert_eq!(poll(&mut f, 1), []);
    // A zstd file in its place, then a plain one.
    fs::remove_file(&path).unwrap();
    fs::write(&path, zstd::encode_all(&b"a line\n"[..], 0).unwrap()).unwrap();
    let out = poll(&mut f, 2);
    assert!(
        out.contains(&event(FileEvent::Compressed("zstd"))),
        "{out:?}"
    );
    assert_eq!(text(&out), "");
    fs::remove_file(&path).unwrap();
    append(&path, b"plain\n");
    let out = poll(&mut f, 3);
    assert_eq!(text(&out), "plain\n");
    assert!(out.contains(&event(FileEvent::Opened { offset: 0 })));
}

#[test]
fn compressed_bytes_are_seen_however_they_arrive() {
    // Found by review: an empty file that then got gzip bytes, a file
    // truncated and rewritten compressed, and a magic number written in two
    // pieces were read as lines.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, true, LINGER);
    poll(&mut f, 0);
    append(&path, &gzip(b"x\n"));
    assert_eq!(poll(&mut f, 1), [event(FileEvent::Compressed("gzip"))]);

    let path = dir.path().join("truncated.log");
    append(&path, b"plain line\n");
    let mut f = Follower::new(&path, true, LINGER);
    assert_eq!(text(&poll(&mut f, 0)), "plain line\n");
    fs::write(&path, zstd::encode_all(&b"x\n"[..], 0).unwrap()).unwrap();
    let out = poll(&mut f, 1);
    assert!(
        out.contains(&event(FileEvent::Compressed("zstd"))),
        "{out:?}"
    );
    assert_eq!(text(&out), "");

    let path = dir.path().join("pieces.log");
    let whole = zstd::encode_all(&b"x\n"[..], 0).unwrap();
    append(&path, &whole[..2]);
    let mut f = Follower::new(&path, true, LINGER);
    assert_eq!(poll(&mut f, 0), [event(FileEvent::Opened { offset: 0 })]);
    append(&path, &whole[2..]);
    assert_eq!(poll(&mut f, 1), [event(FileEvent::Compressed("zstd"))]);

    // A plain line may start like a magic number: `(` is zstd's first byte.
    let path = dir.path().join("paren.log");
    append(&path, b"(");
    let mut f = Follower::new(&path, true, LINGER);
    assert_eq!(text(&poll(&mut f, 0)), "");
    append(&path, b"a) line\n");
    assert_eq!(text(&poll(&mut f, 1)), "(a) line\n");
}

#[test]
fn an_unreadable_path_is_reported_once_and_retried() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
    fs::remove_file(&path).unwrap();
    // Permission bits do not stop root, so when the test runs as root a
    // symlink loop makes the path unreadable instead.
    append(&path, b"secret\n");
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let privileged = File::open(&path).is_ok();
    if privileged {
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&path, &path).unwrap();
    }
    let out = poll(&mut f, 1);
    assert!(
        matches!(out.last(), Some(Followed::Event(FileEvent::Unreadable(_)))),
        "{out:?}"
    );
    assert_eq!(poll(&mut f, 2), []);
    fs::remove_file(&path).unwrap();
    append(&path, b"readable\n");
    assert_eq!(text(&poll(&mut f, 3)), "readable\n");
    assert!(f.readable());
}

#[test]
fn a_ten_megabyte_line_is_reported_by_length_and_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    append(&path, b"");
    let mut f = Follower::new(&path, false, LINGER);
    poll(&mut f, 0);
    append(&path, b"short\n");
    let big = vec![b'x'; 10_000_000];
    // Written in pieces across polls: memory stays under the line limit.
    for (i, piece) in big.chunks(3_000_000).enumerate() {
        append(&path, piece);
        poll(&mut f, 1 + i as u64);
        let held = f.current.as_ref().unwrap().lines.partial.capacity();
        assert!(held <= MAX_LINE_BYTES, "{held}");
    }
    append(&path, b"\nafter\n");
    let out = poll(&mut f, 9);
    assert_eq!(
        out,
        [Followed::TooLong { bytes: 10_000_000 }, lines("after\n")]
    );
}

#[test]
fn a_line_of_exactly_the_limit_is_kept() {
    let mut assembler = LineAssembler::default();
    let mut out = Vec::new();
    let mut line = vec![b'y'; MAX_LINE_BYTES];
    assembler.push(&line[..10], &mut out);
    assembler.push(&line[10..], &mut out);
    assembler.push(b"\n", &mut out);
    line.push(b'\n');
    assert_eq!(out, [Followed::Lines(line.clone())]);
    out.clear();
    line.pop();
    line.push(b'y');
    assembler.push(&line, &mut out);
    assembler.push(b"\n", &mut out);
    assert_eq!(
        out,
        [Followed::TooLong {
            bytes: MAX_LINE_BYTES as u64 + 1
        }]
    );
}

#[test]
fn a_large_backlog_is_read_in_budgeted_polls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    let line = [b'z'; 99];
    let mut data = Vec::new();
    while (data.len() as u64) < READ_BUDGET + 1000 {
        data.extend_from_slice(&line);
        data.push(b'\n');
    }
    append(&path, &data);
    let mut f = Follower::new(&path, true, LINGER);
    let mut out = Vec::new();
    let first = f.poll(Duration::ZERO, &mut out);
    assert!(first.more && first.bytes == READ_BUDGET);
    let second = f.poll(Duration::ZERO, &mut out);
    assert!(!second.more);
    assert_eq!(first.bytes + second.bytes, data.len() as u64);
    assert_eq!(text(&out).len(), data.len());
}

proptest::proptest! {
    /// However the bytes are cut into reads, the lines handed over are the
    /// file's lines (a last line without newline comes at finish).
    #[test]
    fn any_cut_of_the_bytes_gives_the_same_lines(
        data in proptest::collection::vec(proptest::sample::select(vec![b'a', b'\n', 0, 0xff, b'\r']), 0..300),
        cuts in proptest::collection::vec(0usize..300, 0..10),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        cuts.push(0);
        cuts.push(data.len());
        cuts.sort_unstable();
        let mut assembler = LineAssembler::default();
        let mut out = Vec::new();
        for w in cuts.windows(2) {
            assembler.push(&data[w[0]..w[1]], &mut out);
        }
        assembler.finish(&mut out);
        let mut want = data.clone();
        if !want.is_empty() && !want.ends_with(b"\n") {
            want.push(b'\n');
        }
        let got: Vec<u8> = out
            .into_iter()
            .flat_map(|f| match f {
                Followed::Lines(b) => b,
                other => panic!("{other:?}"),
            })
            .collect();
        proptest::prop_assert_eq!(got, want);
    }
}
