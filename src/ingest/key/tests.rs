use super::*;

fn key(
    spec_text: &str,
    cidr4: Option<u8>,
    cidr6: Option<u8>,
    addr: &str,
    xff: &str,
    user: &str,
) -> (String, bool) {
    let spec = KeySpec::parse(spec_text, cidr4, cidr6).unwrap();
    let mut r = Record::default();
    r.clear(spec.fields.len());
    r.addr = Cow::Owned(addr.as_bytes().to_vec());
    r.xff = Cow::Owned(xff.as_bytes().to_vec());
    r.user = Cow::Owned(user.as_bytes().to_vec());
    for slot in &mut r.extra {
        *slot = Cow::Owned(b"k-123".to_vec());
    }
    let mut out = String::new();
    let ok = spec.build(&r, &mut out);
    let mut scratch = String::new();
    let direct = spec.key(&r, &mut scratch);
    assert_eq!(direct, ok.then_some(out.as_str()), "{spec_text}");
    (out, ok)
}

#[test]
fn ip_takes_the_last_logged_address() {
    assert_eq!(
        key("ip", None, None, "10.0.0.2, 10.0.0.1, 127.0.0.1", "", "").0,
        "127.0.0.1"
    );
    assert_eq!(
        key(
            "ip",
            None,
            None,
            r#""10.5.102.222, 199.96.1.1" 10.2.1.185"#,
            "",
            ""
        )
        .0,
        "10.2.1.185"
    );
}

#[test]
fn xff_takes_the_first_forwarded_address_else_the_address() {
    assert_eq!(
        key("xff", None, None, "10.0.0.1", "203.0.113.9, 10.0.0.1", "").0,
        "203.0.113.9"
    );
    assert_eq!(key("xff", None, None, "10.0.0.1", "-", "").0, "10.0.0.1");
    assert_eq!(
        key("xff", None, None, "10.0.0.2, 10.0.0.1, 127.0.0.1", "", "").0,
        "10.0.0.2"
    );
}

#[test]
fn combined_keys_and_fields() {
    assert_eq!(
        key("ip+user", None, None, "1.2.3.4", "", "alice"),
        ("1.2.3.4+alice".into(), true)
    );
    assert_eq!(
        key("user", None, None, "1.2.3.4", "", "-"),
        ("-".into(), false)
    );
    assert_eq!(key("field:api_key", None, None, "", "", "").0, "k-123");
    assert!(KeySpec::parse("ip+bogus", None, None).is_err());
    assert!(KeySpec::parse("field:", None, None).is_err());
}

#[test]
fn xff_use_is_known() {
    let mut set = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
    assert!(!set.uses_xff());
    set.add(KeySpec::parse("user+xff", None, None).unwrap());
    assert!(set.uses_xff());
}

#[test]
fn key_sets_share_fields() {
    let mut set = KeySet::new(KeySpec::parse("field:a+ip", None, None).unwrap());
    let i = set.add(KeySpec::parse("field:b+field:a", None, None).unwrap());
    assert_eq!(
        set.add(KeySpec::parse("field:b+field:a", None, None).unwrap()),
        i
    );
    assert_eq!(set.fields, ["a", "b"]);
    assert_eq!(
        set.extra[i].parts,
        vec![KeyPart::Field(1), KeyPart::Field(0)]
    );
    assert_eq!(set.primary.parts, vec![KeyPart::Field(0), KeyPart::Ip]);
}

#[test]
fn first_and_last_addresses_agree_with_the_list() {
    let fields: [&[u8]; 10] = [
        b"",
        b"-",
        b"1.2.3.4",
        b"10.0.0.2, 10.0.0.1",
        b"\"a, b\" c",
        b" - ,x",
        b"a\x0bb",
        b"a\xc2\xa0b",
        b"\xff1.2.3.4",
        b"2001:db8::1",
    ];
    for field in fields {
        let list = address_list(field);
        assert_eq!(first_address(field), list.first().copied(), "{field:?}");
        assert_eq!(last_address(field), list.last().copied(), "{field:?}");
    }
}

proptest::proptest! {
    #[test]
    fn first_and_last_addresses_agree_on_random_fields(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                &b"1.2.3.4"[..], b"-", b",", b" ", b"\"", b"\t", b"\x0b", b"\xc2\xa0",
                b"\xe2\x80\xa8", b"\xff", b"a", b"::1",
            ]),
            0..8,
        )
    ) {
        let field = parts.concat();
        let list = address_list(&field);
        proptest::prop_assert_eq!(first_address(&field), list.first().copied());
        proptest::prop_assert_eq!(last_address(&field), list.last().copied());
    }
}

#[test]
fn cidr_aggregation() {
    assert_eq!(
        key("ip", Some(24), None, "192.0.2.77", "", "").0,
        "192.0.2.0/24"
    );
    assert_eq!(
        key("ip", Some(24), Some(64), "2001:db8:1:2:aaaa::1", "", "").0,
        "2001:db8:1:2::/64"
    );
    assert_eq!(
        key("ip", None, Some(64), "192.0.2.77", "", "").0,
        "192.0.2.77"
    );
    assert_eq!(
        key("ip", Some(0), None, "192.0.2.77", "", "").0,
        "0.0.0.0/0"
    );
    assert_eq!(
        key("ip", Some(24), None, "host.example", "", "").0,
        "host.example"
    );
    assert_eq!(key("ip", None, None, "", "", ""), ("-".into(), false));
}

#[test]
fn ports_and_brackets_are_not_part_of_the_client() {
    for (logged, client) in [
        ("192.0.2.7:51234", "192.0.2.7"),
        ("[2001:db8::7]:443", "2001:db8::7"),
        ("[2001:db8::7]", "2001:db8::7"),
        ("2001:db8::7", "2001:db8::7"),
        ("::1", "::1"),
        ("::ffff:192.0.2.7", "::ffff:192.0.2.7"),
        ("crawler.example.net", "crawler.example.net"),
        ("crawler.example.net:8080", "crawler.example.net"),
        ("host:", "host:"),
        (":80", ":80"),
    ] {
        assert_eq!(key("ip", None, None, logged, "", "").0, client, "{logged}");
        assert_eq!(
            key("xff", None, None, "-", logged, "").0,
            client,
            "{logged}"
        );
    }
    assert_eq!(
        key("ip", None, Some(32), "[2001:db8:1:2::7]:443", "", "").0,
        "2001:db8::/32"
    );
    assert_eq!(
        key("ip", Some(24), None, "192.0.2.7:1", "", "").0,
        "192.0.2.0/24"
    );
}
