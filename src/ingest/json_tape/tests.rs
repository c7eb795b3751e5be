use super::*;

fn accepts(text: &str) -> bool {
    Tape::default().parse(text.as_bytes()).is_ok()
}

#[test]
fn reads_members_and_spans() {
    let text = br#" {"a":"x","b":[1,{"c":null}],"d":-0.5,"e":true} "#;
    let mut tape = Tape::default();
    tape.parse(text).unwrap();
    let root = tape.root();
    assert_eq!(root.kind, Kind::Object);
    let members: Vec<(&[u8], Kind, &[u8])> = tape
        .children(root)
        .map(|(_, n)| {
            (
                &text[n.key_start as usize..n.key_end as usize],
                n.kind,
                &text[n.start as usize..n.end as usize],
            )
        })
        .collect();
    assert_eq!(
        members,
        vec![
            (&b"a"[..], Kind::String, &b"x"[..]),
            (b"b", Kind::Array, br#"[1,{"c":null}]"#),
            (b"d", Kind::Number, b"-0.5"),
            (b"e", Kind::Bool, b"true"),
        ]
    );
}

#[test]
fn the_subset_and_its_limits() {
    for ok in ["{}", "[]", r#"{"a":{"b":[]}}"#, "0", "-12.50", r#""é""#] {
        assert!(accepts(ok), "{ok}");
    }
    for unsupported in [
        r#"{"a":"x\"y"}"#,
        "1e5",
        "1234567890123456789",
        "01",
        "1.",
        ".5",
        "+1",
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        "{} x",
        "tru",
        "\"\u{1}\"",
        "[1 2]",
    ] {
        assert!(!accepts(unsupported), "{unsupported}");
    }
    assert!(Tape::default().parse(b"\"\xff\"").is_err());
    let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
    assert!(!accepts(&deep));
    let shallow = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
    assert!(accepts(&shallow));
}

/// JSON texts built from random values, some of them damaged by one edit.
fn json_text() -> impl proptest::strategy::Strategy<Value = (String, bool)> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(|n| n.into()),
        (0u32..100_000, 1u32..1000)
            .prop_map(|(a, b)| { serde_json::from_str(&format!("{a}.{b}")).expect("a decimal") }),
        "[a-z é/\"\\\t]{0,6}".prop_map(serde_json::Value::String),
    ];
    let value = leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::vec(("[a-c]{1,2}", inner), 0..4)
                .prop_map(|members| serde_json::Value::Object(members.into_iter().collect())),
        ]
    });
    let edit = proptest::option::of((
        0usize..64,
        proptest::sample::select(vec![
            "", "\"", "{", "}", ",", ":", "1", "e", " ", "\u{1}", "tr",
        ]),
    ));
    (value, edit).prop_map(|(value, edit)| {
        let mut text = value.to_string();
        let edited = edit.is_some();
        if let Some((at, insert)) = edit {
            let at = (0..=at.min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            text.insert_str(at, insert);
            if at < text.len() && insert.is_empty() {
                text.remove(at);
            }
        }
        (text, edited)
    })
}

proptest::proptest! {
    /// Whatever the tape accepts, serde_json accepts; valid JSON inside the
    /// subset is accepted.
    #[test]
    fn the_tape_accepts_exactly_the_subset_of_json((text, edited) in json_text()) {
        let json = serde_json::from_str::<serde_json::Value>(&text).is_ok();
        if accepts(&text) {
            proptest::prop_assert!(json, "accepted but not JSON: {}", text);
        }
        if !edited && !text.contains('\\') {
            // Unedited values without escapes are inside the subset.
            proptest::prop_assert!(accepts(&text), "refused: {}", text);
        }
    }
}
