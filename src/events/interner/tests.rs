//! The interner's tests: ids, names and lookups against a plain map and list.

use super::*;

#[test]
fn round_trips_in_first_seen_order() {
    let mut i = Interner::default();
    assert_eq!(i.intern("a"), 0);
    assert_eq!(i.intern("b"), 1);
    assert_eq!(i.intern("a"), 0);
    assert_eq!(i.intern(""), 2);
    assert_eq!(i.intern(""), 2);
    assert_eq!(i.name(1), "b");
    assert_eq!(i.name(2), "");
    assert_eq!(i.get("c"), None);
    assert_eq!(i.get("b"), Some(1));
    assert_eq!(i.names().collect::<Vec<_>>(), ["a", "b", ""]);
}

#[test]
fn many_names_survive_growth() {
    let mut i = Interner::default();
    for n in 0..10_000 {
        assert_eq!(i.intern(&format!("/api/users/{n}")), n);
    }
    for n in (0..10_000).rev() {
        assert_eq!(i.intern(&format!("/api/users/{n}")), n);
        assert_eq!(i.name(n), format!("/api/users/{n}"));
    }
    assert_eq!(i.len(), 10_000);
    // Half of them again and as many new ones, at once, into a table
    // rebuilt from released lookups.
    let mut batch = Interner::default();
    for n in 5_000..15_000 {
        batch.intern(&format!("/api/users/{n}"));
    }
    i.release_lookups();
    let want: Vec<Id> = (5_000..15_000).collect();
    assert_eq!(i.intern_all(&batch), want);
    assert_eq!(i.get("/api/users/14999"), Some(14_999));
}

#[test]
fn released_lookups_keep_names_and_come_back_on_interning() {
    let mut i = Interner::default();
    for n in 0..100 {
        i.intern(&format!("/p/{n}"));
    }
    i.release_lookups();
    assert_eq!((i.len(), i.name(42)), (100, "/p/42"));
    assert_eq!((i.get("/p/7"), i.get("/q")), (Some(7), None));
    assert_eq!(i.intern("/p/99"), 99);
    assert_eq!(i.intern("/q"), 100);
    assert_eq!((i.get("/p/7"), i.get("/q")), (Some(7), Some(100)));
    assert_eq!((i.table.len(), i.hashes.len()), (101, 101));
}

#[test]
fn ends_past_4_gib_count_their_wraps() {
    // Names 0 and 1 end below 2^32, name 2 past it, name 3 past 2^33.
    let ends = [10, u32::MAX, 5, 7];
    let wraps = [2, 3];
    let got: Vec<usize> = (0..4).map(|i| end_of(&ends, &wraps, i)).collect();
    let want = [10u64, u64::from(u32::MAX), (1 << 32) + 5, (2 << 32) + 7];
    if usize::BITS == 64 {
        assert_eq!(got.iter().map(|&e| e as u64).collect::<Vec<_>>(), want);
        let spans: Vec<(usize, usize)> = (0..4).map(|id| span(&ends, &wraps, id)).collect();
        let ends = got.clone();
        assert_eq!(
            spans,
            [
                (0, ends[0]),
                (ends[0], ends[1]),
                (ends[1], ends[2]),
                (ends[2], ends[3])
            ]
        );
        assert_eq!(span(&[3, 8], &[], 1), (3, 8));
    }
    assert_eq!(end_of(&ends, &[], 1), u32::MAX as usize);
}

proptest::proptest! {
    /// Ids, names and lookups equal those of a plain map and list,
    /// whatever the names and however often the table is rebuilt.
    #[test]
    fn interning_equals_a_map_and_a_list(
        names in proptest::collection::vec("[a-c/]{0,4}", 0..300),
        capacity in 0usize..40,
    ) {
        let mut interner = Interner::with_capacity(capacity, capacity * 3);
        let mut list: Vec<String> = Vec::new();
        let mut map = std::collections::HashMap::new();
        for name in &names {
            let want = *map.entry(name.clone()).or_insert_with(|| {
                list.push(name.clone());
                (list.len() - 1) as Id
            });
            proptest::prop_assert_eq!(interner.intern(name), want);
        }
        proptest::prop_assert_eq!(interner.names().collect::<Vec<_>>(), list.clone());
        for (id, name) in list.iter().enumerate() {
            proptest::prop_assert_eq!(interner.get(name), Some(id as Id));
        }
        proptest::prop_assert_eq!(interner.get("never interned"), None);
    }

    /// Interning another interner's names at once gives the ids that
    /// interning them one by one gives, old names and new mixed, the
    /// table growing within a block, and every name found afterwards.
    #[test]
    fn interning_all_equals_interning_one_by_one(
        before in proptest::collection::vec("[a-c/]{0,3}", 0..60),
        batch in proptest::collection::vec("[a-d/]{0,3}", 0..200),
        released: bool,
        local_released: bool,
    ) {
        let mut local = Interner::default();
        for name in &batch {
            local.intern(name);
        }
        // Its hashes are then computed again, not read.
        if local_released {
            local.release_lookups();
        }
        let (mut one, mut all) = (Interner::default(), Interner::default());
        for name in &before {
            one.intern(name);
            all.intern(name);
        }
        if released {
            all.release_lookups();
        }
        let want: Vec<Id> = local.names().map(|name| one.intern(name)).collect();
        proptest::prop_assert_eq!(all.intern_all(&local), want);
        proptest::prop_assert_eq!(all.names().collect::<Vec<_>>(), one.names().collect::<Vec<_>>());
        for (id, name) in one.names().enumerate() {
            proptest::prop_assert_eq!(all.get(name), Some(id as Id));
        }
    }

    /// Interning bytes lossily gives the ids and names that interning
    /// their `from_utf8_lossy` text gives, whatever the mix of valid and
    /// invalid UTF-8 (and of text that already holds U+FFFD).
    #[test]
    fn lossy_interning_equals_interning_the_lossy_text(
        names in proptest::collection::vec(
            proptest::sample::select(vec![
                b"a".to_vec(), b"".to_vec(), b"\xff".to_vec(), "\u{fffd}".as_bytes().to_vec(),
                b"a\xffb".to_vec(), "a\u{fffd}b".as_bytes().to_vec(), "é".as_bytes().to_vec(),
                b"\xc3".to_vec(), b"Mozilla/5.0".to_vec(),
            ]),
            0..40,
        )
    ) {
        let (mut lossy, mut text) = (Interner::default(), Interner::default());
        for name in &names {
            let want = text.intern(&String::from_utf8_lossy(name));
            proptest::prop_assert_eq!(lossy.intern_lossy(name), want);
        }
        proptest::prop_assert_eq!(lossy.names().collect::<Vec<_>>(), text.names().collect::<Vec<_>>());
    }
}

#[test]
fn prefetching_ahead_reads_within_the_names() {
    // Empty names (whose text span is empty), the first and the last id.
    let mut i = Interner::default();
    for name in ["", "a", "/some/longer/path"] {
        i.intern(name);
    }
    let n = i.len();
    for next in 0..n {
        i.prefetch_ahead(|k| Some(((next + k) % n) as Id));
    }
    i.prefetch_ahead(|_| None);
    assert_eq!(i.name(0), "");
}
