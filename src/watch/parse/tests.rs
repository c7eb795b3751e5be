use super::*;
use crate::ingest::key::{KeySet, KeySpec};

fn settings(format: FormatChoice) -> Settings {
    let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
    crate::watch::testing::ingest_settings(format, keys)
}

const GOOD: &str =
    "1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"\n";

#[test]
fn lines_are_parsed_and_counted_by_reason() {
    let s = settings(FormatChoice::Combined);
    let mut p = FileParser::new("x.log");
    let data = format!("{GOOD}\n\u{0}\u{1}binary\u{ff}\n{GOOD}");
    let chunk = p.parse(1, data.as_bytes(), &s).unwrap().unwrap();
    assert_eq!((chunk.lines, chunk.parsed, chunk.events.len()), (4, 2, 2));
    p.too_long();
    let c = p.counts();
    assert_eq!((c.lines, c.parsed, c.skipped_total()), (5, 2, 3));
    assert_eq!(c.skipped["blank line"], 1);
    assert_eq!(c.skipped["line longer than 1048576 bytes"], 1);
    assert_eq!(c.lines, c.parsed + c.skipped_total());
}

#[test]
fn detection_waits_for_enough_lines_then_decides_once() {
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("x.log");
    // One garbage line says nothing yet: held.
    assert!(p.parse(1, b"garbage\n", &s).unwrap().is_none());
    // With a log line beside it, combined wins; the held line is parsed too.
    let chunk = p.parse(1, GOOD.as_bytes(), &s).unwrap().unwrap();
    assert_eq!((chunk.lines, chunk.parsed), (2, 1));
    assert_eq!(p.format(), "combined (detected)");
    assert_eq!(p.counts().lines, 2);
}

#[test]
fn blank_lines_first_leave_detection_to_the_lines_after_them() {
    // A followed file that starts with blank lines is not taken for combined
    // before its first log line comes (ingestion reads a whole input of
    // blank lines as blank; a followed file may go on).
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("x.log");
    assert!(p.parse(1, b"\n\n", &s).unwrap().is_none());
    let json = "{\"time\":\"2026-01-05T00:00:00Z\",\"remote_addr\":\"1.2.3.4\",\"request_uri\":\"/a\",\"status\":200}\n";
    let chunk = p.parse(1, json.repeat(3).as_bytes(), &s).unwrap().unwrap();
    assert_eq!((chunk.lines, chunk.parsed), (5, 3));
    assert!(p.format().starts_with("json"), "{}", p.format());
}

#[test]
fn a_first_line_longer_than_the_detection_window_is_skipped_not_cut() {
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("x.log");
    let long = GOOD.replace("/a ", &format!("/{} ", "a".repeat(70_000)));
    assert!(p.parse(1, long.as_bytes(), &s).unwrap().is_none());
    let chunk = p.parse(1, GOOD.repeat(2).as_bytes(), &s).unwrap().unwrap();
    assert_eq!((chunk.lines, chunk.parsed), (3, 3));
    assert_eq!(p.format(), "combined (detected)");
}

/// Found by review: a followed file whose first lines were no access log
/// (a program's start-up messages, binary garbage) stopped the whole watch.
#[test]
fn lines_detection_gives_up_on_are_skipped_and_detection_is_tried_again() {
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("x.log");
    let garbage = "Starting worker 1 ... ok\n".repeat(DETECT_LINES);
    assert!(p.parse(1, garbage.as_bytes(), &s).unwrap().is_none());
    let why = p.take_undetected().expect("reported");
    assert!(
        why.contains("cannot detect the log format of x.log"),
        "{why}"
    );
    let reason = SkipReason::FormatNotDetected.to_string();
    let c = p.counts();
    assert_eq!((c.lines, c.parsed, c.skipped[&reason]), (50, 0, 50));
    // Binary garbage after them: skipped too, reported only once.
    let binary = "\u{0}\u{1}\u{ff}\u{1b}[2J\n".repeat(DETECT_LINES);
    assert!(p.parse(1, binary.as_bytes(), &s).unwrap().is_none());
    assert_eq!(p.take_undetected(), None);
    assert_eq!(p.counts().skipped[&reason], 100);
    // Then access lines: detected on them, and read.
    let chunk = p.parse(1, GOOD.repeat(3).as_bytes(), &s).unwrap().unwrap();
    assert_eq!((chunk.lines, chunk.parsed), (3, 3));
    assert_eq!(p.format(), "combined (detected)");
    let c = p.counts();
    assert_eq!((c.lines, c.parsed, c.skipped_total()), (103, 3, 100));
}

#[test]
fn held_lines_are_counted_when_the_file_ends_undetected() {
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("x.log");
    assert!(p.parse(1, b"what\n", &s).unwrap().is_none());
    let chunk = p.finish(&s).unwrap().unwrap();
    assert_eq!((chunk.lines, chunk.parsed), (1, 0));
    assert_eq!(p.counts().lines, 1);
}

/// A W3C file followed from its end: the header from before the offset
/// names the columns and dates the lines, and is not counted.
#[test]
fn the_header_before_the_followed_lines_names_and_dates_them() {
    for format in [FormatChoice::Auto, FormatChoice::named("w3c").unwrap()] {
        let s = settings(format);
        let mut p = FileParser::new("u_ex.log");
        p.header(
            1,
            b"#Version: 1.0\n#Date: 2026-01-06 00:00:00\n#Fields: time c-ip cs-method cs-uri-stem sc-status\n",
            &s,
        );
        let chunk = p
            .parse(1, b"00:00:05 192.0.2.1 GET / 200\n", &s)
            .unwrap()
            .unwrap();
        assert_eq!(chunk.events.len(), 1);
        assert_eq!(chunk.events[0].ts, 1_767_657_605_000); // 2026-01-06T00:00:05Z
        let c = p.counts();
        assert_eq!((c.lines, c.parsed, c.skipped_total()), (1, 1, 0));
        assert!(p.format().starts_with("w3c"), "{}", p.format());
    }
}

/// The events of `batches` (a file's number and its lines), parsed one
/// after another, as `time client endpoint`.
fn events_of(p: &mut FileParser, s: &Settings, batches: &[(u32, &str)]) -> Vec<String> {
    let chunks: Vec<ChunkResult> = (batches.iter())
        .filter_map(|(file, text)| p.parse(*file, text.as_bytes(), s).unwrap())
        .collect();
    chunks
        .iter()
        .flat_map(|c| {
            c.events.iter().map(|e| {
                let (client, endpoint) = (c.clients.name(e.client), c.endpoints.name(e.endpoint));
                format!("{} {client} {endpoint}", e.ts)
            })
        })
        .collect()
}

/// A W3C file whose `#Fields:` change (a rotation, an IIS restart after its
/// fields were changed): the lines after the new header are read in its
/// columns, dated by the `#Date:` just before it, and counted once.
#[test]
fn a_header_that_names_new_columns_is_read_as_theirs() {
    for format in [FormatChoice::Auto, FormatChoice::named("w3c").unwrap()] {
        let s = settings(format);
        let mut p = FileParser::new("u_ex.log");
        let first = "#Date: 2026-01-06 00:00:00\n#Fields: time c-ip cs-method cs-uri-stem sc-status\n00:00:05 192.0.2.1 GET /a 200\n";
        let repeated =
            "#Fields: time c-ip cs-method cs-uri-stem sc-status\n00:00:06 192.0.2.1 GET /b 200\n";
        let changed = "#Date: 2026-01-07 00:00:00\n#Fields: time cs-uri-stem c-ip sc-status cs-method\n00:00:07 /c 192.0.2.2 200 GET\n";
        let later = "00:00:08 /d 192.0.2.3 200 POST\n#Fields: time c-ip cs-method cs-uri-stem sc-status\n00:00:09 192.0.2.4 GET /e 200\n";
        let batches = [(1, &*format!("{first}{repeated}{changed}")), (1, later)];
        assert_eq!(
            events_of(&mut p, &s, &batches),
            [
                "1767657605000 192.0.2.1 GET /a",
                "1767657606000 192.0.2.1 GET /b",
                "1767744007000 192.0.2.2 GET /c",
                "1767744008000 192.0.2.3 POST /d",
                "1767744009000 192.0.2.4 GET /e",
            ]
        );
        let c = p.counts();
        assert_eq!((c.lines, c.parsed, c.skipped_total()), (11, 5, 6));
        let directive = SkipReason::Directive.to_string();
        assert_eq!(c.skipped.keys().collect::<Vec<_>>(), [&directive]);
        assert!(p.format().starts_with("w3c"), "{}", p.format());
    }
}

/// Headers one after another, in the header from before the followed lines
/// (an IIS restart earlier in the file) or in one batch, and the day a
/// line past midnight rolled over to: each line is read in the columns of
/// the last header before it, on the day the lines before it reached.
#[test]
fn the_last_header_before_a_line_names_its_columns() {
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("u_ex.log");
    p.header(
        1,
        b"#Date: 2026-01-06 00:00:00\n#Fields: time c-ip cs-method cs-uri-stem sc-status\n#Date: 2026-01-06 00:00:00\n#Fields: time cs-uri-stem c-ip sc-status cs-method\n",
        &s,
    );
    let lines = "23:59:00 /a 192.0.2.1 200 GET\n00:00:30 /b 192.0.2.1 200 GET\n";
    let batch = "#Fields: time c-ip cs-method cs-uri-stem sc-status\n#Fields: time c-ip sc-status cs-method cs-uri-stem\n00:01:00 192.0.2.2 200 POST /c\n";
    assert_eq!(
        events_of(&mut p, &s, &[(1, lines), (1, batch)]),
        [
            "1767743940000 192.0.2.1 GET /a",
            "1767744030000 192.0.2.1 GET /b",
            "1767744060000 192.0.2.2 POST /c",
        ]
    );
    let c = p.counts();
    assert_eq!((c.lines, c.parsed, c.skipped_total()), (5, 3, 2));
}

/// A W3C log rotated to a file whose header names other columns: the lines
/// the rotated-away file still gets (its writer has not reopened yet) are
/// read in its own columns, not in the new file's; each file's lines are
/// read in the columns of its last header, whatever order the files' lines
/// come in (a file that took the path and was replaced before its first
/// lines were read comes after the one that replaced it).
#[test]
fn a_rotated_away_file_keeps_its_columns() {
    let s = settings(FormatChoice::Auto);
    let mut p = FileParser::new("u_ex.log");
    let header = |fields: &str| format!("#Date: 2026-01-06 00:00:00\n#Fields: {fields}\n");
    let old = header("time c-ip cs-method cs-uri-stem sc-status");
    let new = header("time cs-uri-stem c-ip sc-status cs-method");
    let newer = header("time sc-status cs-method cs-uri-stem c-ip");
    let batches = [
        (1, &*format!("{old}00:00:05 192.0.2.1 GET /a 200\n")),
        (2, &*format!("{new}00:00:06 /b 192.0.2.2 200 GET\n")),
        (1, "00:00:07 192.0.2.1 POST /c 200\n"),
        (4, &*format!("{newer}00:00:08 200 PUT /d 192.0.2.4\n")),
        (3, &*format!("{old}00:00:09 192.0.2.3 GET /e 200\n")),
        (4, "00:00:10 200 GET /f 192.0.2.4\n"),
        (2, "00:00:11 /g 192.0.2.2 200 DELETE\n"),
    ];
    assert_eq!(
        events_of(&mut p, &s, &batches),
        [
            "1767657605000 192.0.2.1 GET /a",
            "1767657606000 192.0.2.2 GET /b",
            "1767657607000 192.0.2.1 POST /c",
            "1767657608000 192.0.2.4 PUT /d",
            "1767657609000 192.0.2.3 GET /e",
            "1767657610000 192.0.2.4 GET /f",
            "1767657611000 192.0.2.2 DELETE /g",
        ]
    );
    let c = p.counts();
    assert_eq!((c.lines, c.parsed, c.skipped_total()), (15, 7, 8));
    // A file no longer read is forgotten; a file read later is read afresh.
    p.forget_closed(|file| file == 4);
    assert_eq!(p.parsers.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [4]);
}

/// The header read before following starts is the first file's, even when
/// the first lines after it are a new file's (the log was rotated before its
/// writer wrote again) and decide detection: the first file's later lines are
/// read in its header's columns and dated by its `#Date:`, the new file's in
/// its own.
#[test]
fn the_header_before_following_stays_with_its_file() {
    for format in [FormatChoice::Auto, FormatChoice::named("w3c").unwrap()] {
        let label = format!("{format:?}");
        let s = settings(format);
        let mut p = FileParser::new("u_ex.log");
        p.header(
            1,
            b"#Date: 2026-01-06 00:00:00\n#Fields: time c-ip cs-method cs-uri-stem sc-status\n#Date: 2026-01-06 00:00:00\n#Fields: time cs-uri-stem c-ip sc-status cs-method\n",
            &s,
        );
        let new = "#Date: 2026-01-07 00:00:00\n#Fields: time c-ip sc-status cs-method cs-uri-stem\n00:00:06 192.0.2.2 200 GET /b\n";
        let batches = [
            (2, new),
            (1, "00:00:07 /c 192.0.2.1 200 POST\n"),
            (2, "00:00:08 192.0.2.2 200 PUT /d\n"),
        ];
        assert_eq!(
            events_of(&mut p, &s, &batches),
            [
                "1767744006000 192.0.2.2 GET /b",
                "1767657607000 192.0.2.1 POST /c",
                "1767744008000 192.0.2.2 PUT /d",
            ],
            "{label}"
        );
    }
}
