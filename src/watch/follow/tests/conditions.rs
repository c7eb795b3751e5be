//! What the path holds and how much: a directory, a compressed file, an
//! unreadable path, over-long lines, a large backlog.

use super::*;

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
    let mut assembler = LineAssembler::new(1);
    let mut out = Vec::new();
    let mut line = vec![b'y'; MAX_LINE_BYTES];
    assembler.push(&line[..10], &mut out);
    assembler.push(&line[10..], &mut out);
    assembler.push(b"\n", &mut out);
    line.push(b'\n');
    assert_eq!(
        out,
        [Followed::Lines {
            file: 1,
            data: line.clone()
        }]
    );
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
        let mut assembler = LineAssembler::new(1);
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
                Followed::Lines { data: b, .. } => b,
                other => panic!("{other:?}"),
            })
            .collect();
        proptest::prop_assert_eq!(got, want);
    }
}
