use super::canonical::{canonical_names, names_with_colon};
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
    // A prefix length needs an address part to group.
    let no_address = KeySpec::parse("user+field:x", Some(24), None).unwrap_err();
    assert!(
        no_address
            .to_string()
            .contains("--key user+field:x has none")
    );
    assert!(KeySpec::parse("user", None, Some(64)).is_err());
    assert!(KeySpec::parse("xff+user", Some(24), None).is_ok());
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
fn ipv4_mapped_addresses_aggregate_as_the_ipv4_clients_they_are() {
    // Found by review: under --cidr6 every `::ffff:a.b.c.d` client was one
    // key, `::/64`, and --cidr4 did not apply to them.
    for (addr, cidr4, cidr6, client) in [
        ("::ffff:192.0.2.77", Some(24), Some(64), "192.0.2.0/24"),
        ("[::ffff:192.0.2.77]:443", Some(24), None, "192.0.2.0/24"),
        ("::FFFF:198.51.100.9", Some(16), Some(48), "198.51.0.0/16"),
        ("::ffff:192.0.2.77", None, Some(64), "192.0.2.77"),
        ("::ffff:192.0.2.77", None, None, "192.0.2.77"),
        ("::ffff:c000:24d", Some(24), Some(64), "192.0.2.0/24"),
        // Not mapped: IPv6 prefixes as before.
        ("::192.0.2.77", Some(24), Some(64), "::/64"),
        ("64:ff9b::c000:24d", Some(24), Some(96), "64:ff9b::/96"),
    ] {
        assert_eq!(key("ip", cidr4, cidr6, addr, "", "").0, client, "{addr}");
    }
    assert_ne!(
        key("ip", Some(24), Some(64), "::ffff:192.0.2.77", "", "").0,
        key("ip", Some(24), Some(64), "::ffff:8.8.8.8", "", "").0
    );
}

/// Ports and brackets are not part of the client, and an IPv6 client is one
/// client however its address is written (RFC 5952; IPv4-mapped as IPv4).
#[test]
fn an_address_is_one_client_however_it_is_written() {
    for (logged, client) in [
        ("192.0.2.7:51234", "192.0.2.7"),
        ("[2001:db8::7]:443", "2001:db8::7"),
        ("[2001:db8::7]", "2001:db8::7"),
        ("2001:db8::7", "2001:db8::7"),
        ("::1", "::1"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("crawler.example.net", "crawler.example.net"),
        ("crawler.example.net:8080", "crawler.example.net"),
        ("host:", "host:"),
        (":80", ":80"),
        ("2001:DB8::1", "2001:db8::1"),
        ("2001:db8:0:0:0:0:0:1", "2001:db8::1"),
        ("2001:0db8::0001", "2001:db8::1"),
        ("[2001:DB8:0::1]:443", "2001:db8::1"),
        // The longest run of zeros is the one written `::` (RFC 5952 4.2.3).
        ("2001:db8:0:0:1::1", "2001:db8::1:0:0:1"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("0:0:0:0:0:ffff:c000:207", "192.0.2.7"),
        // Not an IPv6 address: as logged.
        ("fe80::1%eth0", "fe80::1%eth0"),
        ("unknown", "unknown"),
    ] {
        assert_eq!(key("ip", None, None, logged, "", "").0, client, "{logged}");
        assert_eq!(
            key("xff", None, None, "-", logged, "").0,
            client,
            "{logged}"
        );
        assert_eq!(
            key("ip+user", None, None, logged, "", "u").0,
            format!("{client}+u"),
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

proptest::proptest! {
    /// A key interned from [`KeySpec::key_value`] (logged bytes where it can,
    /// put in canonical form per chunk by [`canonical_names`]) names what its
    /// text from [`KeySpec::key`] names: the same ids and names, no key for
    /// both, and the same U+FFFD flag.
    #[test]
    fn key_values_intern_as_the_key_text(
        fields in proptest::collection::vec(
            proptest::collection::vec(
                proptest::sample::select(vec![
                    &b"alice"[..], b"-", b" ", b"\t", b"\xff", "\u{fffd}".as_bytes(), b"Mozilla/5.0",
                    "é".as_bytes(), b"", b"1.2.3.4", b":8080", b"[2001:db8::1]", b"::1", b",", b"\"",
                    b"192.168.100.200", b"10.0.0.1", b"[", b"+", b"\x7f", b"\x80",
                    b"2001:DB8:0::1", b"::ffff:1.2.3.4", b"0:0::1",
                ]),
                0..5,
            ),
            1..20,
        ),
        which in 0usize..7,
    ) {
        use crate::events::Interner;
        let spec = match which {
            0 => KeySpec::parse("user", None, None).unwrap(),
            1 => KeySpec::user_agent(),
            2 => KeySpec::parse("field:k", None, None).unwrap(),
            3 => KeySpec::parse("ip", None, None).unwrap(),
            4 => KeySpec::parse("ip", Some(24), Some(64)).unwrap(),
            5 => KeySpec::parse("xff", None, None).unwrap(),
            _ => KeySpec::parse("ip+user", None, None).unwrap(),
        };
        let (mut by_text, mut by_value) = (Interner::default(), Interner::default());
        let (mut want, mut got_ids) = (Vec::new(), Vec::new());
        for parts in fields {
            let value = parts.concat();
            let mut r = Record::default();
            r.clear(spec.fields.len());
            for field in [&mut r.addr, &mut r.xff, &mut r.user, &mut r.user_agent] {
                *field = Cow::Owned(value.clone());
            }
            for slot in &mut r.extra {
                *slot = Cow::Owned(value.clone());
            }
            let (mut a, mut b) = (String::new(), String::new());
            let text = spec.key(&r, &mut a);
            let got = spec.key_value(&r, &mut b);
            want.push(text.map(|k| by_text.intern(k)));
            got_ids.push(got.map(|k| k.intern(&mut by_value)));
        }
        if spec.is_one_address()
            && let Some((names, ids)) = canonical_names(&by_value, &names_with_colon(&by_value))
        {
            by_value = names;
            for id in got_ids.iter_mut().flatten() {
                *id = ids[*id as usize];
            }
        }
        proptest::prop_assert_eq!(got_ids, want);
        proptest::prop_assert_eq!(by_value.names().collect::<Vec<_>>(), by_text.names().collect::<Vec<_>>());
    }
}

#[test]
fn addresses_are_read_as_logged_bytes_only_when_single_and_not_aggregated() {
    let mut r = Record {
        addr: Cow::Borrowed(b"192.0.2.7:51234"),
        ..Record::default()
    };
    let mut scratch = String::new();
    let ip = KeySpec::parse("ip", None, None).unwrap();
    assert_eq!(
        ip.key_value(&r, &mut scratch),
        Some(KeyValue::Bytes(b"192.0.2.7"))
    );
    let cidr = KeySpec::parse("ip", Some(24), None).unwrap();
    assert_eq!(
        cidr.key_value(&r, &mut scratch),
        Some(KeyValue::Text("192.0.2.0/24"))
    );
    r.addr = Cow::Borrowed(b"10.0.0.2, 192.0.2.7");
    assert_eq!(
        ip.key_value(&r, &mut scratch),
        Some(KeyValue::Text("192.0.2.7"))
    );
}

proptest::proptest! {
    /// An address field taken whole without reading it byte by byte is one
    /// that the byte-wise reading leaves whole.
    #[test]
    fn bare_addresses_are_what_the_bytewise_reading_leaves_whole(
        field in proptest::collection::vec(
            // Mostly bytes of addresses, so that whole fields of them come up.
            proptest::prop_oneof![
                12 => proptest::sample::select(vec![b'0', b'9', b'.', b'a', b'-', b']', b'/', b'\x7f', b'\\']),
                1 => proptest::sample::select(vec![
                    b':', b'[', b',', b'"', b' ', b'\t', b'\x0b', b'\x0c', b'\r', b'+', 0x80, 0xff, 0, b'-' - 1,
                ]),
            ],
            0..20,
        )
    ) {
        if bare_address(&field) {
            proptest::prop_assert_eq!(single_address_bytes(&field), Some(&field[..]));
            proptest::prop_assert_eq!(host_span(&field), 0..field.len());
            proptest::prop_assert!(field != b"-");
        }
        let all_plain = field.iter().all(|&b| (0x2d..0x80).contains(&b) && b != b':');
        let expected = (8..=16).contains(&field.len()) && all_plain && field[0] != b'[';
        proptest::prop_assert_eq!(bare_address(&field), expected);
    }
}

#[test]
fn a_value_given_by_hand_is_keyed_as_ingestion_keys() {
    let ip = KeySpec::parse("ip", None, None).unwrap();
    assert_eq!(ip.as_keyed("2001:DB8:0::1"), "2001:db8::1");
    assert_eq!(ip.as_keyed("::ffff:10.0.0.7"), "10.0.0.7");
    // Found by review: a prefix of --cidr6, written in upper case.
    assert_eq!(ip.as_keyed("2001:DB8::/64"), "2001:db8::/64");
    assert_eq!(ip.as_keyed("192.0.2.0/24"), "192.0.2.0/24");
    let ip_user = KeySpec::parse("ip+user", None, None).unwrap();
    assert_eq!(ip_user.as_keyed("2001:DB8::1+Bob"), "2001:db8::1+Bob");
    // A user part is left as it is, and so is a value of the wrong shape.
    assert_eq!(ip_user.as_keyed("2001:DB8::1"), "2001:DB8::1");
    let user = KeySpec::parse("user", None, None).unwrap();
    assert_eq!(user.as_keyed("::FFFF:1.2.3.4"), "::FFFF:1.2.3.4");
}
