//! Rules' key columns checked and combined once for several replays over the
//! same columns with other limiters (the scenarios of a policy, one per
//! algorithm): the validation, the key each event is replayed under and which
//! rules apply to each event are not worked out again for each replay, and the
//! columns themselves need not be kept.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;

use super::grouped::{Grouping, replay_grouped, rules_applying};
use super::{
    Decisions, MAX_GROUPED_RULES, NOT_APPLICABLE, ReplayError, Replayer, Rule, replay_sequential,
    rules_in,
};
use super::{shared_keys, validate};
use crate::simulate::Limiter;

/// What a replay works out from its rules' key columns alone, for
/// [`Replayer::replay_prepared`].
#[derive(Debug)]
pub struct PreparedKeys {
    /// Each rule's number of keys.
    key_counts: Vec<usize>,
    path: Path,
}

#[derive(Debug)]
enum Path {
    /// The events grouped by their shared key and, with several rules, which
    /// rules apply to each event in that order.
    Grouped {
        grouping: Arc<Grouping>,
        applies: Option<Vec<u64>>,
    },
    /// The key columns, for the sequential path.
    Sequential(Vec<Vec<u32>>),
}

impl Replayer<'_> {
    /// Checks and combines the key columns of `rules` (their limiters do not
    /// matter) for replays of rules with the same key columns.
    pub fn prepare(&mut self, rules: &[Rule]) -> Result<PreparedKeys, ReplayError> {
        validate(self.ts, rules)?;
        let keys = (rules.len() <= MAX_GROUPED_RULES)
            .then(|| shared_keys(rules, self.ts.len()))
            .flatten();
        let path = match keys {
            Some(keys) => {
                let grouping = self.grouping(keys, rules);
                let applies = (rules.len() > 1).then(|| rules_applying(&grouping, rules));
                Path::Grouped { grouping, applies }
            }
            None => Path::Sequential(rules.iter().map(|r| r.keys.to_vec()).collect()),
        };
        Ok(PreparedKeys {
            key_counts: rules.iter().map(|r| r.key_count).collect(),
            path,
        })
    }

    /// [`Replayer::prepare`] of rules (their numbers of keys `key_counts`, at
    /// most [`MAX_GROUPED_RULES`]) whose key columns are not kept: rule `r`'s
    /// column is `keys` where bit `r` of `applying` is set, [`NOT_APPLICABLE`]
    /// elsewhere (so every rule that applies to an event shares its key).
    /// `None` where `prepare` of those columns would fail (the times unsorted,
    /// a key out of range): `prepare` of the columns then tells why.
    pub fn prepare_shared(
        &mut self,
        keys: Vec<u32>,
        applying: &[u64],
        key_counts: Vec<usize>,
    ) -> Option<PreparedKeys> {
        let events = self.ts.len();
        // A key below every rule's count is in range whichever rules apply.
        let in_every_range = key_counts.iter().copied().min().unwrap_or(0);
        let fits = key_counts.len() <= MAX_GROUPED_RULES
            && !key_counts.is_empty()
            && keys.len() == events
            && applying.len() == events
            && key_counts.iter().all(|&n| n < NOT_APPLICABLE as usize)
            && self.ts.is_sorted()
            && (keys.par_iter().zip(applying)).all(|(&key, &bits)| {
                if (key as usize) < in_every_range {
                    return true;
                }
                // Every rule that applies has the key in its range.
                rules_in(bits).all(|r| (key as usize) < key_counts[r])
            });
        if !fits {
            return None;
        }
        let key_count = key_counts.iter().copied().max().unwrap_or(0);
        let reusable = (self.grouping.as_ref())
            .is_some_and(|g| g.key_count == key_count && g.keys[..] == keys[..]);
        if !reusable {
            let grouping = Grouping::new(self.ts, Cow::Owned(keys), key_count);
            self.grouping = Some(Arc::new(grouping));
        }
        let grouping = self.grouping.clone().expect("built above");
        let applies = (key_counts.len() > 1).then(|| {
            (grouping.groups.rows.par_iter())
                .map(|&row| applying[row as usize])
                .collect()
        });
        Some(PreparedKeys {
            key_counts,
            path: Path::Grouped { grouping, applies },
        })
    }

    /// Replays the rules `prepared` was prepared from, with `limiters` (one per
    /// rule, in their order) instead of theirs: the decisions of what
    /// [`Replayer::replay`] of those rules with these limiters returns.
    ///
    /// # Panics
    /// When `limiters` has not one limiter per prepared rule.
    pub fn replay_prepared(&mut self, limiters: &[Limiter], prepared: &PreparedKeys) -> Decisions {
        assert_eq!(
            limiters.len(),
            prepared.key_counts.len(),
            "one limiter per rule"
        );
        let no_keys: &[u32] = &[];
        let rule = |(r, limiter): (usize, &Limiter)| Rule {
            limiter: limiter.clone(),
            keys: match &prepared.path {
                Path::Sequential(columns) => &columns[r],
                // The grouped path reads no key column once it knows which rules apply.
                Path::Grouped { .. } => no_keys,
            },
            key_count: prepared.key_counts[r],
        };
        let rules: Vec<Rule> = limiters.iter().enumerate().map(rule).collect();
        match &prepared.path {
            Path::Grouped { grouping, applies } => {
                // The next summary reads the events grouped as replayed.
                self.grouping = Some(grouping.clone());
                replay_grouped(grouping, &rules, applies.as_deref())
            }
            Path::Sequential(_) => replay_sequential(self.ts, &rules),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{NOT_APPLICABLE, replay};
    use super::*;
    use crate::simulate::{AlgorithmKind, AlgorithmSpec, Limiter};
    use crate::units::{Limit, Millis, Window};

    fn limiter(kind: usize, requests: u64, secs: u32) -> Limiter {
        let window = Window::from_secs(secs).unwrap();
        let kind = AlgorithmKind::ALL[kind];
        let mut spec = AlgorithmSpec::new(kind, Limit { requests, window });
        if kind.has_burst() {
            spec.burst = Some(requests);
        }
        spec.limiter().unwrap()
    }

    /// Rule `r` keys by client (by endpoint when `by_endpoint[r]`, so that two
    /// rules may use different keys for one event) and skips events whose
    /// client is below `r`.
    fn columns(events: &[(u32, u32, u32)], by_endpoint: &[bool]) -> Vec<Vec<u32>> {
        (0..by_endpoint.len())
            .map(|r| {
                let key = |e: &(u32, u32, u32)| if by_endpoint[r] { e.2 } else { e.1 };
                let applies = |e: &(u32, u32, u32)| e.1 as usize >= r;
                events
                    .iter()
                    .map(|e| if applies(e) { key(e) } else { NOT_APPLICABLE })
                    .collect()
            })
            .collect()
    }

    fn rule_set<'k>(columns: &'k [Vec<u32>], kinds: &[usize], requests: u64) -> Vec<Rule<'k>> {
        (columns.iter().zip(kinds))
            .map(|(keys, &kind)| Rule {
                limiter: limiter(kind, requests, 2),
                keys,
                key_count: 5,
            })
            .collect()
    }

    proptest! {
        #[test]
        fn a_prepared_replay_is_the_plain_replay_for_any_limiters(
            shape in prop::collection::vec((0usize..6, 0usize..6, any::<bool>()), 1..5),
            requests in 1u64..6,
            events in prop::collection::vec((0u32..900, 0u32..5, 0u32..5), 1..300),
        ) {
            let mut t = 1_000_000;
            let ts: Vec<Millis> = events.iter().map(|e| { t += i64::from(e.0); t }).collect();
            let by_endpoint: Vec<bool> = shape.iter().map(|s| s.2).collect();
            let columns = columns(&events, &by_endpoint);
            let first: Vec<usize> = shape.iter().map(|s| s.0).collect();
            let second: Vec<usize> = shape.iter().map(|s| s.1).collect();
            let mut replayer = Replayer::new(&ts);
            let prepared = replayer.prepare(&rule_set(&columns, &first, requests)).unwrap();
            let limiters = |kinds: &[usize]| {
                rule_set(&columns, kinds, requests).into_iter().map(|r| r.limiter).collect::<Vec<_>>()
            };
            for kinds in [&first, &second, &first] {
                let got = replayer.replay_prepared(&limiters(kinds), &prepared).into_replay();
                prop_assert_eq!(got, replay(&ts, &rule_set(&columns, kinds, requests)).unwrap());
            }
            // Another grouping in between: the prepared one is used again.
            let endpoints: Vec<u32> = events.iter().map(|e| e.2).collect();
            let other = [Rule { limiter: limiter(0, 1, 1), keys: &endpoints, key_count: 5 }];
            replayer.replay(&other).unwrap();
            let got = replayer.replay_prepared(&limiters(&second), &prepared).into_replay();
            prop_assert_eq!(got, replay(&ts, &rule_set(&columns, &second, requests)).unwrap());
        }
    }

    /// The key every rule that applies shares and which rules apply, per
    /// event; `None` when two rules that apply use different keys.
    fn shared(columns: &[Vec<u32>]) -> Option<(Vec<u32>, Vec<u64>)> {
        let events = columns.first().map_or(0, Vec::len);
        let (mut keys, mut applying) = (vec![NOT_APPLICABLE; events], vec![0u64; events]);
        for (r, column) in columns.iter().enumerate() {
            for (i, &key) in column.iter().enumerate() {
                if key == NOT_APPLICABLE {
                    continue;
                }
                if keys[i] != NOT_APPLICABLE && keys[i] != key {
                    return None;
                }
                keys[i] = key;
                applying[i] |= 1 << r;
            }
        }
        Some((keys, applying))
    }

    proptest! {
        #[test]
        fn keys_prepared_without_their_columns_replay_as_the_columns(
            shape in prop::collection::vec((0usize..6, any::<bool>()), 1..5),
            requests in 1u64..6,
            events in prop::collection::vec((0u32..900, 0u32..5, 0u32..5), 1..300),
        ) {
            let mut t = 1_000_000;
            let ts: Vec<Millis> = events.iter().map(|e| { t += i64::from(e.0); t }).collect();
            let by_endpoint: Vec<bool> = shape.iter().map(|s| s.1).collect();
            let columns = columns(&events, &by_endpoint);
            let kinds: Vec<usize> = shape.iter().map(|s| s.0).collect();
            let rules = rule_set(&columns, &kinds, requests);
            let Some((keys, applying)) = shared(&columns) else { return Ok(()) };
            let mut replayer = Replayer::new(&ts);
            let prepared = replayer.prepare_shared(keys, &applying, vec![5; rules.len()]).unwrap();
            let limiters: Vec<Limiter> = rules.iter().map(|r| r.limiter.clone()).collect();
            let got = replayer.replay_prepared(&limiters, &prepared).into_replay();
            prop_assert_eq!(got, replay(&ts, &rules).unwrap());
            // Where preparing the columns fails, so does this.
            let (keys, applying) = shared(&columns).unwrap();
            let narrow: Vec<Rule> = rule_set(&columns, &kinds, requests)
                .into_iter()
                .map(|r| Rule { key_count: 2, ..r })
                .collect();
            let without = replayer.prepare_shared(keys, &applying, vec![2; rules.len()]).is_some();
            prop_assert_eq!(without, replayer.prepare(&narrow).is_ok());
        }
    }

    #[test]
    fn preparing_checks_the_columns() {
        let ts = [0, 1, 2];
        let keys = [0, 7, NOT_APPLICABLE];
        let rules = [Rule {
            limiter: limiter(0, 1, 1),
            keys: &keys,
            key_count: 2,
        }];
        assert!(matches!(
            Replayer::new(&ts).prepare(&rules),
            Err(ReplayError::KeyOutOfRange { row: 1, key: 7, .. })
        ));
        let unsorted = [2, 1, 3];
        assert!(matches!(
            Replayer::new(&unsorted).prepare(&rules),
            Err(ReplayError::Unsorted { row: 1 })
        ));
    }
}
