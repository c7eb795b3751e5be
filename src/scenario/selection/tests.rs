//! A subset's summary is the summary of its rows copied out, whatever the
//! verdicts; a selection that applies everywhere has no subset.

use proptest::prelude::*;

use super::*;
use crate::events::{EventTable, Interner};
use crate::simulate::gateway::Gateway;
use crate::simulate::{AlgorithmKind, AlgorithmSpec, summarize};
use crate::units::{Limit, Window};

fn names(prefix: &str, n: u32) -> Interner {
    let mut names = Interner::default();
    for i in 0..n {
        names.intern(&format!("{prefix}{i}"));
    }
    names
}

/// Time-sorted events: (time, client, endpoint, applies, allowed, delay).
fn events() -> impl Strategy<Value = Vec<(Millis, u32, u32, bool, bool, u64)>> {
    let event = (
        0i64..5000,
        0u32..7,
        0u32..4,
        any::<bool>(),
        any::<bool>(),
        0u64..900,
    );
    prop::collection::vec(event, 0..300).prop_map(|raw| {
        let mut t = 1_767_571_200_000;
        raw.into_iter()
            .map(|(gap, c, e, applies, ok, delay)| {
                t += if gap % 11 == 0 { gap * 40 } else { gap % 200 };
                (t, c, e, applies, ok, delay)
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn a_subset_summarises_like_its_copied_rows(
        kind in 0usize..6,
        requests in 1u64..6,
        secs in prop_oneof![Just(1u32), Just(60), 1u32..20],
        events in events(),
    ) {
        let spec = AlgorithmSpec::new(
            AlgorithmKind::ALL[kind],
            Limit { requests, window: Window::from_secs(secs).unwrap() },
        );
        let Ok(limiter) = spec.limiter() else { return Ok(()) };
        let ts: Vec<Millis> = events.iter().map(|e| e.0).collect();
        let client: Vec<u32> = events.iter().map(|e| e.1).collect();
        let endpoint: Vec<u32> = events.iter().map(|e| e.2).collect();
        let keys: Vec<u32> = events
            .iter()
            .map(|e| if e.3 { e.1 } else { NOT_APPLICABLE })
            .collect();
        let allowed: Vec<bool> = events.iter().map(|e| e.4).collect();
        let delays: Vec<u64> = events.iter().map(|e| e.5).collect();
        let (client_names, endpoint_names) = (names("c", 7), names("/e", 4));
        let all = Traffic {
            ts: &ts,
            client: &client,
            endpoint: &endpoint,
            client_names: &client_names,
            endpoint_names: &endpoint_names,
            by_client: None,
            census: None,
        };
        let Some(subset) = Subset::of(&keys, &ts, &client, &endpoint) else {
            prop_assert!(keys.iter().all(|&k| k != NOT_APPLICABLE));
            return Ok(());
        };
        // The rows copied out by hand, summarised in time order.
        let rows: Vec<usize> = (0..keys.len()).filter(|&i| keys[i] != NOT_APPLICABLE).collect();
        let copy = |col: &[u32]| rows.iter().map(|&i| col[i]).collect::<Vec<_>>();
        let (sub_ts, sub_client, sub_endpoint) =
            (rows.iter().map(|&i| ts[i]).collect::<Vec<_>>(), copy(&client), copy(&endpoint));
        let sub_allowed: Vec<bool> = rows.iter().map(|&i| allowed[i]).collect();
        let sub_delays: Vec<u64> = rows.iter().map(|&i| delays[i]).collect();
        let copied = Traffic { ts: &sub_ts, client: &sub_client, endpoint: &sub_endpoint, ..all };
        let want = summarize(&spec, &limiter, &copied, &sub_allowed, Some(&sub_delays), usize::MAX);
        prop_assert_eq!(subset.pick(&allowed), sub_allowed);
        // The key column the subset was taken from follows from it.
        prop_assert_eq!(subset.key_column(&client), keys);
        let got = summarize(
            &spec,
            &limiter,
            &subset.traffic(&all),
            &subset.pick(&allowed),
            Some(&subset.pick(&delays)),
            usize::MAX,
        );
        prop_assert_eq!(got, want);
    }
}

#[test]
fn a_subset_keeps_the_applicable_rows_in_time_order() {
    let keys = [NOT_APPLICABLE, 1, 0, NOT_APPLICABLE, 1];
    let ts = [10, 20, 30, 40, 50];
    let (client, endpoint) = ([5, 1, 0, 5, 1], [0, 1, 2, 3, 4]);
    let subset = Subset::of(&keys, &ts, &client, &endpoint).unwrap();
    assert_eq!(subset.pick(&[0u8, 1, 2, 3, 4]), vec![1, 2, 4]);
    assert_eq!(subset.ts, vec![20, 30, 50]);
    assert_eq!(subset.client, vec![1, 0, 1]);
    assert_eq!(subset.endpoint, vec![1, 2, 4]);
    // Grouped by client: client 0 (position 1), then client 1 (positions 0, 2).
    assert_eq!(subset.groups.rows, vec![1, 0, 2]);
    assert_eq!(subset.grouped_ts, vec![30, 20, 50]);
    assert!(Subset::of(&[0, 1], &[1, 2], &[0, 1], &[0, 0]).is_none());
}

/// A rule keyed by `key` with `method` and `route` (the algorithm does not
/// matter to what it selects).
fn planned(key: KeyRef, method: Option<&str>, route: Option<&str>) -> PlannedRule {
    let limit = Limit {
        requests: 5,
        window: Window::from_secs(60).unwrap(),
    };
    let spec = AlgorithmSpec::new(AlgorithmKind::FixedWindow, limit);
    PlannedRule {
        name: "r".into(),
        limiter: spec.limiter().unwrap(),
        spec,
        key_text: "ip".into(),
        key,
        key_read: None,
        method: method.map(str::to_owned),
        route: route.map(|r| regex::Regex::new(r).unwrap()),
        unless: Vec::new(),
    }
}

proptest! {
    /// Selections worked out together (a bit per rule and event) are each
    /// rule's own: the same rows, hence the same key column, with exemptions,
    /// keys without a value, methods and routes (and the method and route
    /// pairs a rule does not apply under), read as the policy, HAProxy or
    /// nginx reads them.
    #[test]
    fn selections_made_together_are_each_rules_own(
        events in prop::collection::vec((0u32..5, 0usize..9, 0usize..3, 0u32..4, any::<bool>()), 0..200),
        shapes in prop::collection::vec(
            (0usize..4, 0usize..7, any::<bool>(), prop::collection::vec((0usize..4, 0usize..7), 0..3)),
            1..70,
        ),
        exempting in any::<bool>(),
        block in 1usize..40,
        reading in prop::sample::select(vec![
            NameReading::default(),
            Gateway::Haproxy.name_reading(),
            Gateway::Nginx.name_reading(),
            Gateway::Traefik.name_reading(),
        ]),
    ) {
        const PATHS: [&str; 9] =
            ["/a", "/a/1", "/b", "/api/x", "/API/x", "/a/b/c", "/a//1", "/%61", "/a%zz"];
        let names = reading;
        const METHODS: [&str; 3] = ["GET", "post", "PUT"];
        const ROUTES: [&str; 6] = ["^/a", "^/a/[^/]+$", "x$", "(?i)^/api/", "/b", "^$"];
        let mut table = EventTable::default();
        let mut user = crate::events::KeyColumn::default();
        for (i, &(client, path, method, u, _)) in events.iter().enumerate() {
            let event = crate::events::Event {
                ts: i as Millis,
                client: table.clients.intern(&format!("c{client}")),
                endpoint: 0,
                path: table.paths.intern(PATHS[path]),
                method: table.methods.intern(METHODS[method]),
                ..Default::default()
            };
            table.push(event);
            // User 3 stands for no user (a key without a value).
            user.ids.push(if u == 3 { crate::events::NO_KEY } else { user.names.intern(&format!("u{u}")) });
        }
        table.extra_keys.push(user);
        table.endpoints.intern("/");
        let rules: Vec<PlannedRule> = (shapes.iter())
            .map(|(method, route, by_user, unless)| {
                let key = if *by_user { KeyRef::Extra(0) } else { KeyRef::Primary };
                let method_of = |m: usize| ["GET", "POST", "DELETE"].get(m).copied();
                let unless = (unless.iter())
                    .map(|&(m, r)| {
                        let route = ROUTES.get(r).map(|r| regex::Regex::new(r).unwrap());
                        (method_of(m).map(str::to_owned), route)
                    })
                    .collect();
                PlannedRule {
                    unless,
                    ..planned(key, method_of(*method), ROUTES.get(*route).copied())
                }
            })
            .collect();
        let exempt: Vec<bool> = events.iter().map(|e| e.4).collect();
        let exempt = exempting.then_some(&exempt[..]);
        let refs: Vec<&PlannedRule> = rules.iter().collect();
        let together = Selection::many(&table, &table.ts, (&refs, names), exempt);
        prop_assert_eq!(together.len(), rules.len());
        for (rule, got) in rules.iter().zip(&together) {
            let want = Selection::new(&table, &table.ts, (rule, names), exempt);
            let rows = |s: &Selection| s.subset().map(|s| s.rows.clone());
            prop_assert_eq!(rows(got), rows(&want));
            prop_assert_eq!(got.keys(&table, rule.key), want.keys(&table, rule.key));
        }
        // The rows of the first 64 rules, worked out in runs of any size.
        let in_runs = rows_applying(&table, (&refs[..refs.len().min(64)], names), exempt, block);
        for (rule, got) in rules.iter().zip(&in_runs) {
            let want = Selection::new(&table, &table.ts, (rule, names), exempt);
            let all: Vec<u32> = (0..table.len() as u32).collect();
            prop_assert_eq!(got, &want.subset().map_or(all, |s| s.rows.clone()));
        }
        // The shared keys and applying rules are read off the key columns.
        let first: Vec<&Selection> = together.iter().take(64).collect();
        let keys: Vec<KeyRef> = rules.iter().take(64).map(|r| r.key).collect();
        let columns: Vec<_> = (keys.iter().zip(&first)).map(|(&k, s)| s.keys(&table, k)).collect();
        let mut want = Some((vec![NOT_APPLICABLE; table.len()], vec![0u64; table.len()]));
        for (r, column) in columns.iter().enumerate() {
            for (i, &key) in column.iter().enumerate() {
                let Some((shared, applying)) = want.as_mut() else { break };
                if key == NOT_APPLICABLE {
                    continue;
                }
                if shared[i] != NOT_APPLICABLE && shared[i] != key {
                    want = None;
                    break;
                }
                shared[i] = key;
                applying[i] |= 1 << r;
            }
        }
        prop_assert_eq!(shared_keys(&table, &keys, &first), want.clone());
        // Worked out in blocks of any size, the same.
        prop_assert_eq!(shared_keys_in_blocks(&table, &keys, &first, block), want);
    }
}
