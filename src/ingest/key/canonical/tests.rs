use super::*;

#[test]
fn chunk_names_of_one_address_keys_become_canonical_and_merge() {
    let mut names = Interner::default();
    for name in [
        "192.0.2.7",
        "2001:DB8::1",
        "2001:db8::1",
        "::ffff:192.0.2.7",
    ] {
        names.intern(name);
    }
    let (canonical, ids) =
        canonical_names(&names, &names_with_colon(&names)).expect("two names are not canonical");
    assert_eq!(
        canonical.names().collect::<Vec<_>>(),
        ["192.0.2.7", "2001:db8::1"]
    );
    assert_eq!(ids, [0, 1, 1, 0]);
    let mut plain = Interner::default();
    plain.intern("192.0.2.7");
    plain.intern("2001:db8::1");
    assert!(canonical_names(&plain, &names_with_colon(&plain)).is_none());
}
