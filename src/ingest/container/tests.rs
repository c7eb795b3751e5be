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
