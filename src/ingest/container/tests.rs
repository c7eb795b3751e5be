use super::*;
use crate::ingest::combined::CombinedParser;

const LINE: &str =
    r#"192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "curl/8""#;

#[test]
fn cri_lines() {
    let full = format!("2026-01-05T00:00:00.123456789Z stdout F {LINE}");
    assert_eq!(
        unwrap(Wrapper::Cri, full.as_bytes()),
        Unwrapped::Line(LINE.as_bytes())
    );
    let tagged = format!("2026-01-05T00:00:00.123456789+01:00 stderr F:x {LINE}");
    assert_eq!(
        unwrap(Wrapper::Cri, tagged.as_bytes()),
        Unwrapped::Line(LINE.as_bytes())
    );
    assert_eq!(
        unwrap(
            Wrapper::Cri,
            b"2026-01-05T00:00:00.1Z stdout P 192.0.2.1 - - [05/Jan"
        ),
        Unwrapped::Partial
    );
    assert_eq!(
        unwrap(Wrapper::Cri, b"2026-01-05T00:00:00.1Z stdout F "),
        Unwrapped::Line(b"")
    );
    assert_eq!(
        unwrap(Wrapper::Cri, b"2026-01-05T00:00:00.1Z stdout F"),
        Unwrapped::Line(b"")
    );
    for not in [
        LINE.as_bytes(),
        b"2026-01-05T00:00:00.1Z stdin F x",
        b"",
        b"a b c d",
    ] {
        assert_eq!(unwrap(Wrapper::Cri, not), Unwrapped::NotWrapped);
    }
}

#[test]
fn docker_json_file_lines() {
    let plain = r#"{"log":"192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] GET\n","stream":"stdout","time":"2026-01-05T00:00:00.5Z"}"#;
    assert_eq!(
        unwrap(Wrapper::DockerJson, plain.as_bytes()),
        Unwrapped::Line(b"192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] GET")
    );
    let escaped =
        r#"{"log":"{\"status\":0}\r\n","stream":"stderr","time":"2026-01-05T00:00:00.5Z"}"#;
    assert_eq!(
        unwrap(Wrapper::DockerJson, escaped.as_bytes()),
        Unwrapped::Owned(br#"{"status":0}"#.to_vec())
    );
    let partial =
        r#"{"log":"192.0.2.1 - - [05/Jan","stream":"stdout","time":"2026-01-05T00:00:00.5Z"}"#;
    assert_eq!(
        unwrap(Wrapper::DockerJson, partial.as_bytes()),
        Unwrapped::Partial
    );
    for not in [
        &br#"{"log":"x\n"}"#[..],
        br#"{"msg":"x"}"#,
        b"{\"log\":",
        LINE.as_bytes(),
    ] {
        assert_eq!(unwrap(Wrapper::DockerJson, not), Unwrapped::NotWrapped);
    }
}

#[test]
fn detection_needs_half_the_lines() {
    let cri = format!("2026-01-05T00:00:00Z stdout F {LINE}");
    assert_eq!(
        detect(&[cri.as_bytes(), LINE.as_bytes()]),
        Some(Wrapper::Cri)
    );
    assert_eq!(
        detect(&[cri.as_bytes(), LINE.as_bytes(), LINE.as_bytes()]),
        None
    );
    assert_eq!(detect::<&[u8]>(&[]), None);
}

#[test]
fn the_parser_reads_the_inner_line_and_says_why_it_skips() {
    let mut parser = ContainerParser::new(
        Wrapper::DockerJson,
        Box::new(CombinedParser::new(&["http_user_agent".into()]).unwrap()),
    );
    let escaped = r#"{"log":"192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /a HTTP/1.1\" 0 5 \"-\" \"curl/8\"\n","stream":"stdout","time":"2026-01-05T00:00:00.5Z"}"#;
    let mut r = Record::default();
    r.clear(1);
    parser.parse(escaped.as_bytes(), &mut r).unwrap();
    assert_eq!(
        (&*r.addr, &*r.path, r.status),
        (&b"192.0.2.1"[..], &b"/a"[..], None)
    );
    assert_eq!(&*r.extra[0], b"curl/8");
    let partial = r#"{"log":"192.0.2.1 - -","stream":"stdout","time":"2026-01-05T00:00:00.5Z"}"#;
    assert!(matches!(
        parser.parse(partial.as_bytes(), &mut r),
        Err(SkipReason::Malformed(why)) if why.starts_with("partial")
    ));
    assert!(matches!(
        parser.fork().parse(LINE.as_bytes(), &mut r),
        Err(SkipReason::Malformed(why)) if why.contains("Docker")
    ));
}

#[test]
fn heads_are_unwrapped_for_detection() {
    let head = format!(
        "2026-01-05T00:00:00Z stdout F {LINE}\r\n2026-01-05T00:00:00Z stdout P 192.0\nnoise\n"
    );
    assert_eq!(
        unwrap_head(Wrapper::Cri, head.as_bytes()),
        format!("{LINE}\n").into_bytes()
    );
}

#[test]
fn escaped_lengths_follow_json_escapes() {
    let escaped = br#"a\"b\u00e9\u20ac\ud83d\ude00\\c"#;
    // a " b é(2) €(3) 😀(4) \ c
    let plain = "a\"bé€😀\\c";
    let ends = [
        (0, 0),
        (1, 1),
        (2, 3),
        (3, 4),
        (5, 10),
        (8, 16),
        (12, 28),
        (13, 30),
        (14, 31),
    ];
    for (n, raw) in ends {
        assert_eq!(escaped_len(escaped, n), raw, "{n}");
    }
    assert_eq!(escaped_len(escaped, plain.len()), escaped.len());
    assert_eq!(escaped_len(escaped, 100), escaped.len());
}

/// `inner` as Docker's json-file driver writes it (Go's escaping: `<`, `>`,
/// `&` as `\u00XX`), with every other character past ASCII escaped too
/// when `ascii` (as other JSON writers do).
fn docker_line(inner: &str, ascii: bool) -> String {
    let mut log = String::new();
    for c in format!("{inner}\n").chars() {
        match c {
            '"' => log.push_str("\\\""),
            '\\' => log.push_str("\\\\"),
            '\n' => log.push_str("\\n"),
            '<' | '>' | '&' => log.push_str(&format!("\\u{:04x}", c as u32)),
            c if ascii && !c.is_ascii() => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    log.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => log.push(c),
        }
    }
    format!(r#"{{"log":"{log}","stream":"stdout","time":"2026-01-05T00:00:00.5Z"}}"#)
}

/// `inner` as a CRI runtime writes it.
fn cri_line(inner: &str) -> String {
    format!("2026-01-05T00:00:00.123456789Z stdout F {inner}")
}

mod glued {
    use proptest::prelude::*;

    use super::*;
    use crate::ingest::chunk::ChunkResult;
    use crate::ingest::json::JsonParser;
    use crate::ingest::proptests::{
        events_of, glueable_line, json_line, keys, parse_and_reconcile,
    };

    /// Wraps a line: CRI, Docker, or Docker with every character past ASCII escaped.
    fn wrap(kind: u8, inner: &str) -> String {
        match kind {
            0 => cri_line(inner),
            1 => docker_line(inner, false),
            _ => docker_line(inner, true),
        }
    }

    fn parse(kind: u8, json: bool, lines: &[String]) -> ChunkResult {
        let inner: Box<dyn LineParser> = match json {
            true => Box::new(JsonParser::new(&[], &[]).unwrap()),
            false => Box::new(CombinedParser::new(&[]).unwrap()),
        };
        let wrapper = if kind == 0 {
            Wrapper::Cri
        } else {
            Wrapper::DockerJson
        };
        let data: String = lines
            .iter()
            .map(|l| format!("{}\n", wrap(kind, l)))
            .collect();
        parse_and_reconcile(
            data.as_bytes(),
            &mut ContainerParser::new(wrapper, inner),
            &keys(),
        )
    }

    proptest! {
        /// Two combined entries glued inside a container line are read as
        /// the two lines they should have been, as without the wrapper.
        #[test]
        fn combined_entries_glued_inside_a_wrapper_are_read_as_two(
            (first, cut_first) in glueable_line(),
            (second, _) in glueable_line(),
            kind in 0u8..3,
        ) {
            let apart = parse(kind, false, &[first.clone(), second.clone()]);
            prop_assert_eq!(apart.parsed, 2);
            let glued = parse(kind, false, &[format!("{first}{second}")]);
            prop_assert_eq!((glued.lines, glued.glued), (1, 1));
            prop_assert_eq!(events_of(&glued), events_of(&apart));

            let last = cut_first.as_bytes()[cut_first.len() - 1];
            if !(last.is_ascii_hexdigit() || last == b'.' || last == b':') {
                let cut = parse(kind, false, &[format!("{cut_first}{second}")]);
                prop_assert_eq!((cut.lines, cut.glued), (1, 1));
                let (cut, apart) = (events_of(&cut), events_of(&apart));
                prop_assert_eq!(cut.last(), apart.last());
            }
        }

        /// The same for JSON entries, with three of them on one line.
        #[test]
        fn json_entries_glued_inside_a_wrapper_are_read_apart(
            (first, _) in json_line(),
            (second, _) in json_line(),
            (third, _) in json_line(),
            kind in 0u8..3,
        ) {
            let apart = parse(kind, true, &[first.clone(), second.clone(), third.clone()]);
            let glued = parse(kind, true, &[format!("{first}{second}{third}")]);
            prop_assert_eq!((glued.lines, glued.glued), (1, 2));
            prop_assert_eq!(events_of(&glued), events_of(&apart));
            prop_assert_eq!(&glued.skipped, &apart.skipped);
        }
    }
}

#[test]
fn a_wrapper_with_nothing_inside_is_skipped() {
    for (wrapper, line) in [
        (Wrapper::Cri, &b"2026-01-05T00:00:00.1Z stdout F"[..]),
        (Wrapper::Cri, b"2026-01-05T00:00:00.1Z stdout F "),
        (Wrapper::DockerJson, br#"{"log":"\n","stream":"stdout"}"#),
    ] {
        let inner = Box::new(CombinedParser::new(&[]).unwrap());
        let mut r = Record::default();
        r.clear(0);
        let parsed = ContainerParser::new(wrapper, inner).parse(line, &mut r);
        assert!(
            matches!(parsed, Err(SkipReason::Malformed(_))),
            "{parsed:?}"
        );
    }
}
