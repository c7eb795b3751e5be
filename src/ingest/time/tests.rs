use super::*;

fn ms(s: &str) -> Option<i64> {
    parse_any(s.as_bytes()).map(|s| s.ms)
}

#[test]
fn clf_honours_zone_offsets() {
    // 2000-10-10T20:55:36Z = 971211336
    assert_eq!(ms("10/Oct/2000:13:55:36 -0700"), Some(971_211_336_000));
    assert_eq!(ms("[10/Oct/2000:20:55:36 +0000]"), Some(971_211_336_000));
    // +0330: 03:56:14 local is 00:26:14 UTC
    assert_eq!(ms("22/Jan/2019:03:56:14 +0330"), ms("2019-01-22T00:26:14Z"));
    assert!(!parse_clf(b"10/Oct/2000:13:55:36 -0700").unwrap().subsecond);
}

#[test]
fn clf_rejects_garbage() {
    for bad in [
        "10/Foo/2000:13:55:36 -0700",
        "1/Oct/2000:13:55:36 -0700",
        "10/Oct/2000:25:55:36 +0000",
        "10/Oct/2000:13:55:36 +99",
        "",
    ] {
        assert_eq!(parse_clf(bad.as_bytes()), None, "{bad}");
    }
}

#[test]
fn iso8601_variants() {
    assert_eq!(ms("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(ms("2026-01-05T00:00:00.123Z"), Some(1_767_571_200_123));
    assert_eq!(ms("2026-01-05T03:30:00+03:30"), Some(1_767_571_200_000));
    assert_eq!(ms("2026-01-05 00:00:00.123456"), Some(1_767_571_200_123));
    assert!(parse_iso8601(b"2026-01-05T00:00:00.5Z").unwrap().subsecond);
    assert_eq!(ms("2026-13-05T00:00:00Z"), None);
    // Go's wall clock (Caddy's `time_format wall`, `wall_milli`).
    assert_eq!(ms("2026/01/05 00:00:10.500"), Some(1_767_571_210_500));
    assert_eq!(ms("2026/01/05 00:00:10"), Some(1_767_571_210_000));
    assert_eq!(ms("2026/01/05T00:00:10"), None);
    assert_eq!(ms("2026-01/05 00:00:10"), None);
}

#[test]
fn epoch_forms() {
    assert_eq!(ms("1767571200"), Some(1_767_571_200_000));
    assert_eq!(ms("1767571200.123"), Some(1_767_571_200_123));
    assert_eq!(ms("1716723772.6014807"), Some(1_716_723_772_601));
    assert_eq!(ms("1767571200123"), Some(1_767_571_200_123));
    assert_eq!(ms("1767571200123456"), Some(1_767_571_200_123));
    assert!(parse_epoch(b"1767571200.000").unwrap().subsecond);
    assert_eq!(ms("12a"), None);
    assert_eq!(parse_epoch(b"9223372036854775808"), None); // beyond i64
    assert_eq!(parse_epoch(b"-5"), None);
    assert_eq!(
        epoch_float(1716723772.6014807).unwrap().ms,
        1_716_723_772_601
    );
    assert_eq!(epoch_float(f64::NAN), None);
    // Found by review: seconds near i64::MAX / 1000 with a fraction overflowed.
    assert_eq!(ms("9223372036854775.999"), None);
}

#[test]
fn dates_that_do_not_exist_are_bad_timestamps() {
    // Found by review: these were read as days of the next month.
    for bad in [
        "31/Feb/2026:00:00:00 +0000",
        "29/Feb/2023:00:00:00 +0000",
        "29/Feb/1900:00:00:00 +0000",
        "31/Apr/2026:00:00:00 +0000",
        "31/Jun/2026:12:00:00 +0000",
        "31/Sep/2026:12:00:00 +0000",
        "31/Nov/2026:12:00:00 +0000",
    ] {
        assert_eq!(parse_clf(bad.as_bytes()), None, "{bad}");
        assert_eq!(ClfCache::default().parse(bad.as_bytes()), None, "{bad}");
    }
    assert_eq!(ms("2026-02-31T00:00:00Z"), None);
    assert_eq!(ms("2023-02-29 00:00:00"), None);
    assert_eq!(ms("29/Feb/2024:00:00:00 +0000"), ms("2024-02-29T00:00:00Z"));
    assert_eq!(ms("29/Feb/2000:00:00:00 +0000"), ms("2000-02-29T00:00:00Z"));
    assert!(ms("2000-02-29T00:00:00Z").is_some());
}

proptest::proptest! {
    /// A date is read exactly when it is a day of the calendar: the day
    /// `days_from_civil` gives comes back as the same date.
    #[test]
    fn a_date_is_read_when_the_calendar_has_it(year in 1i64..=9999, month in 1u32..=12, day in 1u32..=31) {
        let exists = crate::text::time::civil_from_days(days_from_civil(year, month, day)) == (year, month, day);
        let text = format!("{year:04}-{month:02}-{day:02}T00:00:00Z");
        proptest::prop_assert_eq!(ms(&text).is_some(), exists, "{}", text);
    }
}

#[test]
fn the_accepted_range_is_years_1_to_9999() {
    assert_eq!(ms("0001-01-01T00:00:00Z"), Some(EARLIEST_MS));
    assert_eq!(ms("9999-12-31T23:59:59.999Z"), Some(LATEST_MS));
    assert!(in_range(EARLIEST_MS) && in_range(LATEST_MS));
    assert!(!in_range(EARLIEST_MS - 1) && !in_range(LATEST_MS + 1));
    assert!(!in_range(parse_epoch(b"9000000000000000.000").unwrap().ms));
    assert!(!in_range(epoch_float(-9.2e16).unwrap().ms));
}

#[test]
fn formats_rfc3339() {
    assert_eq!(
        format_rfc3339(1_767_571_200_123),
        "2026-01-05T00:00:00.123Z"
    );
    assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999Z");
    assert_eq!(
        parse_any(format_rfc3339(971_211_336_000).as_bytes())
            .unwrap()
            .ms,
        971_211_336_000
    );
}

#[test]
fn civil_round_trip() {
    for days in [-1_000_000, -1, 0, 1, 10_957, 20_458, 2_932_896] {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, m, d), days);
    }
}

#[test]
fn cache_agrees_with_full_parse() {
    let mut cache = ClfCache::default();
    for text in [
        "10/Oct/2000:13:55:36 -0700",
        "10/Oct/2000:13:55:37 -0700",
        "11/Oct/2000:00:00:00 +0100",
        "10/Oct/2000:13:55:36 +0000",
        "10/Oct/2000:99:55:36 +0000",
        "10/Oct/2000:13:55:36 +0000",
        "10/Oct/2000:13:55:36.250 +0000",
        "10/Oct/2000:13:55:36 +0000",
        "10/Oct/2000:13:55:36 +0130",
        "10/Oct/2000:13:55:36 +01:30",
        "10/Oct/2000:13:55:36 +0130",
        "10/Oct/2000:13:55:36 +0130x",
        "10/Oct/2000:13:55:3x +0130",
        "10/Oct/2000:13:55:36",
    ] {
        assert_eq!(
            cache.parse(text.as_bytes()),
            parse_clf(text.as_bytes()),
            "{text}"
        );
    }
}

proptest::proptest! {
    /// The cache reads every stamp of a sequence as [`parse_clf`] does, whatever
    /// came before it (same minute or not, odd seconds, zones, fractions).
    #[test]
    fn the_cache_agrees_with_the_full_parse_over_sequences(
        stamps in proptest::collection::vec(
            (
                proptest::sample::select(vec!["10/Oct/2000", "11/Oct/2000", "29/Feb/2001", "10/oct/2000"]),
                proptest::sample::select(vec!["13:55", "13:56", "00:00", "23:59", "24:00", "13:60", "1x:55"]),
                proptest::sample::select(vec!["00", "07", "59", "60", "61", "99", "6x", " 1", "7"]),
                proptest::sample::select(vec![" +0000", " -0700", " +01:30", " +0130", "", " +2400", ".250 +0000", " +0000 ", "x+0000", " Z"]),
                proptest::sample::select(vec![":", ".", " "]),
            ),
            1..30,
        )
    ) {
        let mut cache = ClfCache::default();
        for (day, minute, second, zone, colon) in stamps {
            let text = format!("{day}:{minute}{colon}{second}{zone}");
            proptest::prop_assert_eq!(cache.parse(text.as_bytes()), parse_clf(text.as_bytes()), "{}", text);
        }
    }
}
