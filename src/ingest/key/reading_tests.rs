//! Keys as each product reads them ([`KeyReading`]): X-Forwarded-For, keys
//! of several parts, and address prefixes.

use super::*;
use crate::events::Interner;

/// The key of a record (`addr`, `xff`, `user`) as a product reading
/// X-Forwarded-For `forwarded`'s way derives `spec_text`.
fn read(
    spec_text: &str,
    forwarded: ForwardedReading,
    addr: &str,
    xff: &str,
    user: &str,
) -> Option<String> {
    let spec = KeySpec::parse(spec_text, None, None).unwrap();
    read_spec(&spec, KeyReading::addresses(forwarded), addr, xff, user)
}

/// The key of a record as `reading` derives `spec`.
fn read_spec(
    spec: &KeySpec,
    reading: KeyReading,
    addr: &str,
    xff: &str,
    user: &str,
) -> Option<String> {
    let spec = spec.read_as(reading).unwrap_or_else(|| spec.clone());
    let mut r = Record::default();
    r.clear(0);
    r.addr = Cow::Owned(addr.as_bytes().to_vec());
    r.xff = Cow::Owned(xff.as_bytes().to_vec());
    r.user = Cow::Owned(user.as_bytes().to_vec());
    let mut scratch = String::new();
    spec.key(&r, &mut scratch).map(str::to_string)
}

#[test]
fn gateways_read_xff_their_own_way() {
    use ForwardedReading::*;
    let key = |reading, addr, xff| read("xff", reading, addr, xff, "");
    for xff in [
        "unknown",
        "unknown, 198.51.100.1",
        "-",
        "",
        ", 192.0.2.9",
        "_hidden",
    ] {
        assert_eq!(
            key(AddressElseConnection, "10.0.0.1", xff).as_deref(),
            Some("10.0.0.1"),
            "{xff}"
        );
        assert_eq!(key(AddressOrUncounted, "10.0.0.1", xff), None, "{xff}");
    }
    assert_eq!(
        key(AsLogged, "10.0.0.1", "unknown").as_deref(),
        Some("unknown")
    );
    assert_eq!(
        key(AsLogged, "10.0.0.1", ", 192.0.2.9").as_deref(),
        Some("192.0.2.9")
    );
    for xff in ["192.0.2.9:443", " 192.0.2.9 , 10.0.0.2", "192.000.002.009"] {
        assert_eq!(
            key(AddressElseConnection, "10.0.0.1", xff).as_deref(),
            Some("192.0.2.9"),
            "{xff}"
        );
    }
    assert_eq!(key(AddressOrUncounted, "10.0.0.1", "192.0.2.9:443"), None);
    assert_eq!(
        key(AddressOrUncounted, "10.0.0.1", "192.0.2.9, 10.0.0.2").as_deref(),
        Some("192.0.2.9")
    );
    // nginx's map keys on the text, port left out.
    for (xff, keyed) in [
        ("2001:DB8:0::9", "2001:DB8:0::9"),
        ("::ffff:192.0.2.7", "::ffff:192.0.2.7"),
        ("[2001:db8::9]:443", "2001:db8::9"),
        ("192.0.2.9:443, 10.0.0.2", "192.0.2.9"),
        ("unknown", "unknown"),
        ("-", "10.0.0.1"),
    ] {
        assert_eq!(
            key(TokenAsWritten, "10.0.0.1", xff).as_deref(),
            Some(keyed),
            "{xff}"
        );
    }
    // Canonical IPv6, as every other reading writes addresses.
    for reading in [AsLogged, AddressElseConnection, AddressOrUncounted] {
        assert_eq!(
            key(reading, "10.0.0.1", "2001:DB8:0::9").as_deref(),
            Some("2001:db8::9")
        );
    }
    // AWS WAF's custom keys count a request only with every part.
    assert_eq!(
        read("ip+user", AddressOrUncounted, "10.0.0.1", "", "").as_deref(),
        None
    );
    assert_eq!(
        read("ip+user", AsLogged, "10.0.0.1", "", "").as_deref(),
        Some("10.0.0.1+-")
    );
    assert_eq!(
        read("ip+user", AddressOrUncounted, "10.0.0.1", "", "bob").as_deref(),
        Some("10.0.0.1+bob")
    );
    // A reading that cannot change a key gives none of its own.
    let ip = KeySpec::parse("ip", None, None).unwrap();
    assert_eq!(
        ip.read_as(KeyReading::addresses(AddressElseConnection)),
        None
    );
    assert_eq!(ip.read_as(KeyReading::addresses(AddressOrUncounted)), None);
    assert!(
        KeySpec::parse("xff", None, None)
            .unwrap()
            .read_as(KeyReading::addresses(AsLogged))
            .is_none()
    );
}

#[test]
fn gateways_key_on_whole_addresses_where_the_policy_keys_on_prefixes() {
    use ForwardedReading::*;
    let ip = KeySpec::parse("ip", Some(24), Some(64)).unwrap();
    let xff = KeySpec::parse("xff+user", Some(24), None).unwrap();
    let prefixes = KeyReading::default();
    assert_eq!(
        read_spec(&ip, prefixes, "192.0.2.7", "", "").as_deref(),
        Some("192.0.2.0/24")
    );
    assert_eq!(ip.read_as(prefixes), None);
    for forwarded in [
        AsLogged,
        TokenAsWritten,
        AddressElseConnection,
        AddressOrUncounted,
    ] {
        let reading = KeyReading::addresses(forwarded);
        assert_eq!(
            read_spec(&ip, reading, "192.0.2.7", "", "").as_deref(),
            Some("192.0.2.7")
        );
        assert_eq!(
            read_spec(&ip, reading, "2001:db8::7", "", "").as_deref(),
            Some("2001:db8::7")
        );
        // Every product's reading of a key without `xff` is the same key,
        // so that their replays share one column.
        assert_eq!(ip.read_as(reading).unwrap().text, "ip (each address)");
        assert_eq!(
            read_spec(&xff, reading, "10.0.0.1", "192.0.2.7", "bob").as_deref(),
            Some("192.0.2.7+bob"),
            "{forwarded:?}"
        );
    }
    // A Redis script keyed as the policy reads X-Forwarded-For keeps its prefixes.
    assert_eq!(
        read_spec(&xff, prefixes, "10.0.0.1", "192.0.2.7", "bob").as_deref(),
        Some("192.0.2.0/24+bob")
    );
    let haproxy = xff.read_as(KeyReading::addresses(AddressElseConnection));
    assert_eq!(
        haproxy.map(|k| k.text).as_deref(),
        Some("xff+user (address else connection, each address)")
    );
    // Keys without an address part have no prefix to drop.
    let user = KeySpec::parse("user", None, None).unwrap();
    assert_eq!(user.read_as(KeyReading::addresses(TokenAsWritten)), None);
}

#[test]
fn keys_read_a_products_way_are_not_read_again() {
    use ForwardedReading::*;
    let readings = [
        TokenAsWritten,
        AddressElseConnection,
        AddressOrUncounted,
        AsLogged,
    ]
    .map(KeyReading::addresses);
    let mut keys = KeySet::new(KeySpec::parse("xff", Some(24), None).unwrap());
    // As simulate adds them: the command's key, then the policy's.
    keys.add_policy_keys([], &readings);
    let policy = KeySpec::parse("xff+user", None, None).unwrap();
    keys.add_policy_keys([&policy], &readings);
    let texts: Vec<&str> = keys.extra.iter().map(|k| k.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "xff (token as written, each address)",
            "xff (address else connection, each address)",
            "xff (address or uncounted, each address)",
            "xff (each address)",
            "xff+user",
            "xff+user (token as written)",
            "xff+user (address else connection)",
            "xff+user (address or uncounted)",
        ]
    );
}

#[test]
fn a_product_keeping_the_first_bytes_of_text_keys_cuts_them_there() {
    // HAProxy's `type string len 128`, here 4 bytes.
    let reading = KeyReading {
        text_bytes: Some(4),
        ..KeyReading::addresses(ForwardedReading::AddressElseConnection)
    };
    let value = |text: &str, user: &str| {
        let mut r = Record::default();
        r.clear(0);
        r.addr = Cow::Owned(b"10.0.0.1".to_vec());
        r.user = Cow::Owned(user.as_bytes().to_vec());
        let spec = KeySpec::parse(text, None, None).unwrap().read_as(reading);
        let mut scratch = String::new();
        let mut names = Interner::default();
        spec.map(|s| {
            let id = s.key_value(&r, &mut scratch).unwrap().intern(&mut names);
            (s.text.clone(), names.name(id).to_string())
        })
    };
    assert_eq!(
        value("user", "abcdefg"),
        Some(("user (first 4 bytes)".into(), "abcd".into()))
    );
    // Several parts are text too.
    assert_eq!(value("ip+user", "u").unwrap().1, "10.0");
    // One address is no text: read as the policy does.
    assert_eq!(value("ip", "u"), None);
    // Bytes are cut as HAProxy stores them: a character split at the cut
    // leaves its first bytes, which tell `é` (C3 A9) from `ĉ` (C4 89).
    assert_eq!(value("user", "abc\u{e9}").unwrap().1, "abc\\xC3");
    assert_eq!(value("user", "abc\u{109}").unwrap().1, "abc\\xC4");
    assert_eq!(value("user+ip", "abc\u{e9}").unwrap().1, "abc\\xC3");
    assert_eq!(value("user", "ab\u{e9}z").unwrap().1, "ab\u{e9}");
}

#[test]
fn a_product_keying_requests_without_a_value_by_address_does_so() {
    // Kong's `limit_by: header` (or `consumer`) limits a request without the
    // header by its address; a key of addresses, or of several parts, reads
    // as before.
    let reading = KeyReading {
        missing_as_address: true,
        ..KeyReading::addresses(ForwardedReading::AsLogged)
    };
    let key = |text: &str, user: &str, addr: &str| {
        let mut r = Record::default();
        r.clear(0);
        r.addr = Cow::Owned(addr.as_bytes().to_vec());
        r.user = Cow::Owned(user.as_bytes().to_vec());
        let spec = KeySpec::parse(text, None, None).unwrap();
        let spec = spec.read_as(reading).unwrap_or(spec);
        let (mut scratch, mut other) = (String::new(), String::new());
        let via_value = (spec.key_value(&r, &mut scratch))
            .map(|v| v.intern(&mut Interner::default()))
            .is_some();
        let key = spec.key(&r, &mut other).map(str::to_string);
        assert_eq!(via_value, key.is_some(), "{text} {user:?} {addr}");
        (spec.text.clone(), key)
    };
    assert_eq!(
        key("user", "bob", "10.0.0.1"),
        ("user (else address)".into(), Some("bob".into()))
    );
    assert_eq!(
        key("user", "-", "10.0.0.1"),
        ("user (else address)".into(), Some("10.0.0.1".into()))
    );
    assert_eq!(
        key("user", "", "2001:DB8::1"),
        ("user (else address)".into(), Some("2001:db8::1".into()))
    );
    assert_eq!(
        key("ip", "", "10.0.0.1"),
        ("ip".into(), Some("10.0.0.1".into()))
    );
    assert_eq!(key("ip+user", "", "10.0.0.1").0, "ip+user");
}

#[test]
fn a_key_field_that_is_not_utf8_is_told_from_a_missing_one() {
    let spec = KeySpec::parse("ip", None, None).unwrap();
    let why = |addr: &[u8]| {
        let mut r = Record::default();
        r.clear(0);
        r.addr = Cow::Owned(addr.to_vec());
        let mut scratch = String::new();
        assert!(spec.key_value(&r, &mut scratch).is_none());
        spec.why_no_key(&r)
    };
    assert_eq!(
        why(b"10.0.0.\xff"),
        crate::ingest::record::SkipReason::ClientNotText
    );
    assert_eq!(why(b"-"), crate::ingest::record::SkipReason::NoClient);
    assert_eq!(why(b""), crate::ingest::record::SkipReason::NoClient);
}

#[test]
fn keys_differing_only_in_bytes_that_are_no_text_stay_apart() {
    // Found by users: API keys `k\xFF` and `k\xFE` were both `k\u{FFFD}`,
    // one client where nginx, keying on the bytes, counts two.
    let mut names = Interner::default();
    let mut key_of = |text: &str, user: &[u8]| {
        let spec = KeySpec::parse(text, None, None).unwrap();
        let mut r = Record::default();
        r.clear(0);
        r.addr = Cow::Owned(b"10.0.0.1".to_vec());
        r.user = Cow::Owned(user.to_vec());
        let mut scratch = String::new();
        let id = spec.key_value(&r, &mut scratch).unwrap().intern(&mut names);
        let mut built = String::new();
        assert!(spec.build(&r, &mut built));
        assert_eq!(names.name(id), built, "key_value and build agree");
        (names.name(id).to_string(), spec.writes_bytes_not_text(&r))
    };
    assert_eq!(key_of("user", b"k\xff"), ("k\\xFF".into(), true));
    assert_eq!(key_of("user", b"k\xfe"), ("k\\xFE".into(), true));
    assert_eq!(key_of("user", b"caf\xc3\xa9"), ("caf\u{e9}".into(), false));
    assert_eq!(
        key_of("ip+user", b"k\xff"),
        ("10.0.0.1+k\\xFF".into(), true)
    );
    assert_eq!(key_of("ip", b"k\xff"), ("10.0.0.1".into(), false));
}
