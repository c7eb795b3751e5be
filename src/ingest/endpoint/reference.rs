//! The byte readers of a path as they were before they read byte classes as
//! bits ([`super::segment`]): a byte-class `match` per byte, and separate
//! passes over a long segment for each id form. Kept as the reference the
//! property tests hold the new readers to, over arbitrary bytes.

use proptest::prelude::*;

/// What a byte is to the readers of a path ([`push_path_with_ids`] from the
/// front, [`id_tail_prefix`] from the end).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ByteClass {
    Digit,
    /// Any other byte an id may hold (base64url, `=` and `~`).
    IdChar,
    Slash,
    /// `?` or `#`: the path ends.
    End,
    /// A byte no id holds.
    Other,
}

const BYTE_CLASSES: [ByteClass; 256] = {
    let mut classes = [ByteClass::Other; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_digit() {
            classes[b] = ByteClass::Digit;
        } else if c.is_ascii_alphabetic() || matches!(c, b'-' | b'_' | b'=' | b'~') {
            classes[b] = ByteClass::IdChar;
        }
        b += 1;
    }
    classes[b'/' as usize] = ByteClass::Slash;
    classes[b'?' as usize] = ByteClass::End;
    classes[b'#' as usize] = ByteClass::End;
    classes
};

/// [`is_id_bytes`] of a segment already known to be all digits or not
/// (`digits_only`): a segment shorter than 16 bytes is an id when all
/// digits, so only longer ones are tested whole.
fn segment_is_id(segment: &[u8], digits_only: bool) -> bool {
    match segment.len() {
        0 => false,
        1..16 => digits_only,
        _ => is_id_bytes(segment),
    }
}

/// Appends the path of `target` (up to its query or fragment; `/` when
/// that is empty) with every id-like segment written `:id`. One pass over
/// the bytes: a segment shorter than 16 bytes is an id when all digits,
/// which the pass tracks as it goes; only longer segments are tested whole.
/// Text between id segments is copied in runs.
fn push_path_with_ids(target: &str, out: &mut String) {
    let bytes = target.as_bytes();
    let (mut start, mut copied) = (0, 0);
    let mut digits_only = true;
    // Ends the segment `start..end`, writing what precedes it when it is an id.
    let mut end_segment = |start: usize, end: usize, digits_only: bool, out: &mut String| {
        if segment_is_id(&bytes[start..end], digits_only) {
            out.push_str(&target[copied..start]);
            out.push_str(":id");
            copied = end;
        }
    };
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        match BYTE_CLASSES[usize::from(b)] {
            ByteClass::Digit => {}
            ByteClass::IdChar | ByteClass::Other => digits_only = false,
            ByteClass::Slash => {
                end_segment(start, i, digits_only, out);
                start = i + 1;
                digits_only = true;
            }
            ByteClass::End => {
                end = i;
                break;
            }
        }
    }
    end_segment(start, end, digits_only, out);
    if end == 0 {
        out.push('/');
    } else {
        out.push_str(&target[copied..end]);
    }
}

/// The target before its last `/` when the segment after it is an id
/// ([`is_id`]), so that the target's endpoint is the prefix's with `/:id`
/// added; `None` for a proxy-style absolute target (whose path starts after
/// its origin) and a target without `/`. Read from the end: a byte that no
/// id holds stops the search at once.
fn id_tail_prefix(target: &[u8]) -> Option<&[u8]> {
    if super::is_absolute(target) {
        return None;
    }
    let mut digits_only = true;
    let mut i = target.len();
    let slash = loop {
        let b = *target.get(i.checked_sub(1)?)?;
        i -= 1;
        match BYTE_CLASSES[usize::from(b)] {
            ByteClass::Digit => {}
            ByteClass::IdChar => digits_only = false,
            ByteClass::Slash => break i,
            ByteClass::End | ByteClass::Other => return None,
        }
    };
    segment_is_id(&target[slash + 1..], digits_only).then(|| &target[..slash])
}

/// [`is_id`] of a segment's bytes.
fn is_id_bytes(b: &[u8]) -> bool {
    if b.is_empty() {
        return false;
    }
    if b.len() < 16 {
        return b.iter().all(u8::is_ascii_digit); // the other shapes are longer
    }
    if (b.len() == 36 && is_uuid(b)) || b.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let has_digit = b.iter().any(u8::is_ascii_digit);
    if has_digit && b.iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    b.len() >= 20
        && has_digit
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'=' | b'~'))
}

fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-')
        && [&b[..8], &b[9..13], &b[14..18], &b[19..23], &b[24..]]
            .iter()
            .all(|group| group.iter().all(u8::is_ascii_hexdigit))
}

/// Bytes of every kind a path reader tells apart, in pieces that make ids of
/// each form as often as not.
fn path_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..4),
        Just(b"/".to_vec()),
        Just(b"http://".to_vec()),
        Just(b"https://h".to_vec()),
        "[/?#.]".prop_map(String::into_bytes),
        "[0-9]{0,17}".prop_map(String::into_bytes),
        "[0-9a-fA-F]{14,22}".prop_map(String::into_bytes),
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-fA-F]{4}-[0-9a-f]{4}-[0-9A-F]{12}"
            .prop_map(String::into_bytes),
        "[A-Za-z0-9_~=-]{14,24}".prop_map(String::into_bytes),
        // UUIDs but for a dash or a letter (the generator takes each range
        // of a class as often as the others).
        "/[0-9a-fA-F-]{36}|/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-g]{12}"
            .prop_map(String::into_bytes),
        "[a-zA-Z\\-]{1,20}".prop_map(String::into_bytes),
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn the_id_tail_prefix_is_the_one_it_replaces(target in path_bytes()) {
        prop_assert_eq!(super::id_tail_prefix(&target), id_tail_prefix(&target));
    }

    #[test]
    fn is_id_bytes_is_the_one_it_replaces(bytes in path_bytes()) {
        for segment in bytes.split(|&b| b == b'/').chain([&bytes[..]]) {
            prop_assert_eq!(super::is_id_bytes(segment), is_id_bytes(segment), "{:?}", segment);
        }
    }

    #[test]
    fn the_path_with_ids_is_the_one_it_replaces(target in path_bytes()) {
        let target = String::from_utf8_lossy(&target);
        let (mut new, mut old) = (String::new(), String::new());
        super::push_path_with_ids(&target, &mut new);
        push_path_with_ids(&target, &mut old);
        prop_assert_eq!(new, old);
    }
}

#[test]
fn arbitrary_bytes_make_ids_of_every_form() {
    // The strategy reaches each answer of each reader (else the comparisons
    // above would test little).
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut tails, mut long_ids, mut short) = (0, 0, 0);
    for _ in 0..4000 {
        let target = path_bytes().new_tree(&mut runner).unwrap().current();
        if let Some(prefix) = id_tail_prefix(&target) {
            tails += 1;
            long_ids += usize::from(target.len() - prefix.len() > 16);
        } else {
            short += 1;
        }
    }
    assert!(
        tails > 200 && long_ids > 50 && short > 200,
        "{tails} {long_ids} {short}"
    );
}
