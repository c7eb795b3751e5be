use super::*;

fn read(kept: &str) -> Option<String> {
    let (path, rest) = crate::ingest::endpoint::split_replayed_path(kept);
    traefik_path(path, rest).map(Cow::into_owned)
}

/// Hand-worked through Go's `net/url` and Traefik's handlers (see the module
/// documentation), step by step.
#[test]
fn paths_are_read_as_traefiks_router_reads_them() {
    for (sent, routed) in [
        ("/api/search", "/api/search"),
        // Slashes merged, dot segments resolved, a trailing slash kept.
        ("/api//search", "/api/search"),
        ("/a/./b/../c/", "/a/c/"),
        ("/a//", "/a/"),
        ("//", "/"),
        ("/..", "/"),
        ("/a/b/../../..", "/"),
        ("/a/.", "/a"),
        ("/.well-known/x", "/.well-known/x"),
        // Escapes of unreserved characters decoded before cleaning...
        ("/api/%73earch", "/api/search"),
        ("/a/%2e%2E/b", "/b"),
        ("/%7e", "/~"),
        // ...of reserved ones kept (upper-case), of the others decoded after.
        ("/a%2fb", "/a%2Fb"),
        ("/a%3a", "/a%3A"),
        ("/a%25b", "/a%25b"),
        ("/a%20b", "/a b"),
        ("/a%00", "/a\u{0}"),
        ("/caf%C3%A9", "/café"),
        ("/caf%c3%a9", "/café"),
        ("/a%ff", "/a\u{fffd}"),
        // A byte Go escapes in the path: the decoded path is escaped anew,
        // and an escaped slash becomes a slash.
        ("/a%2Fb/é", "/a/b/é"),
        ("/a%2Fb|c", "/a/b|c"),
        ("/x|y/../z", "/z"),
        ("/a|!(*)[]", "/a|%21%28%2A%29%5B%5D"),
        ("/\"b\"", "/\"b\""),
        ("/é/./", "/é/"),
        // Sub-delimiters are left as they are.
        ("/a!(b)*'[c];d", "/a!(b)*'[c];d"),
        // A query, with what Go keeps in it.
        ("/a?q=#x", "/a"),
        ("/a?q=\u{e9}", "/a"),
        ("*", "*"),
        // A scheme without `//`: a path after it, or a rootless one that Go
        // keeps opaque (its escapes, `#` and all, unread).
        ("a:/x/../y", "/y"),
        ("Ab1+.-:/a%2fb", "/a%2Fb"),
        ("a:b", "/"),
        ("a:", "/"),
        ("mailto:x%zz?q", "/"),
        ("a:b#c", "/"),
        // An absolute-form target, as an events file may hold one.
        ("http://h/a/../b", "/b"),
        ("HTTP://h", "/"),
    ] {
        assert_eq!(read(sent).as_deref(), Some(routed), "{sent:?}");
    }
}

#[test]
fn targets_go_or_traefik_refuse_are_not_routed() {
    for refused in [
        "",
        "x",
        "a/b",
        "/a%zz",
        "/a%",
        "/a%2",
        "/a b",
        "/a\u{1}",
        "/a\u{7f}",
        "/a#x",
        "/a#x?y",
        "/a?q=x y",
        "/a?q=\u{1}",
        "*?x",
        "*#x",
        // No scheme, as Go reads one, so a path not starting with `/`.
        "1a:b",
        "a_b:c",
        ":b",
        // A path after a scheme is read as any other.
        "a:/x#y",
        "a:/%zz",
    ] {
        assert_eq!(read(refused), None, "{refused:?}");
    }
}

proptest::proptest! {
    /// Any target is read or refused, never a panic, and a routed path has
    /// no dot segment or empty one.
    #[test]
    fn any_target_is_read_or_refused(target in "\\PC{0,24}|[/%.a-fA-F0-9#?]{0,24}") {
        let kept = crate::ingest::endpoint::replayed_path(&target);
        if let Some(routed) = read(kept).filter(|r| r.starts_with('/')) {
            let segments: Vec<&str> = routed[1..].split('/').collect();
            let last = segments.len() - 1;
            for (i, segment) in segments.iter().enumerate() {
                proptest::prop_assert!(*segment != "." && *segment != "..", "{routed:?}");
                proptest::prop_assert!(!segment.is_empty() || i == last, "{routed:?}");
            }
        }
    }

    /// Reading a routed path again changes nothing but its escapes of
    /// unreserved characters (none are left) and of others than reserved
    /// ones (decoded): a path Traefik logs after routing reads as it did.
    #[test]
    fn a_routed_path_without_escapes_reads_as_itself(path in "/(a|b|/|\\.|%2[fF]|%41|%2e|%3a|é|\\||;){0,12}") {
        if let Some(routed) = read(&path)
            && !routed.contains('%')
        {
            let again = read(&routed);
            proptest::prop_assert_eq!(again.as_deref(), Some(&*routed));
        }
    }

    /// A path that no product may read otherwise (see
    /// `KeptPaths::may_read_otherwise`) is read as sent: ingestion need not
    /// keep it for a Traefik replay.
    #[test]
    fn paths_not_kept_are_read_as_sent(path in "(/|a|%|2|f|\\.|#|\\||\"|é| |\u{1}|!|\\(|\\*|\\[|\\^|`|<|\\{){0,12}") {
        if !crate::ingest::KeptPaths::may_read_otherwise(path.as_bytes()) {
            let read = read(&path);
            proptest::prop_assert_eq!(read.as_deref(), Some(&*path));
        }
    }
}
