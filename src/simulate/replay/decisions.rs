//! What a replay decided, with each rule's own verdicts kept the way the
//! replay found them cheapest: none of their own with one rule (its verdicts
//! are the decisions), a column per rule from the time-ordered path, and from
//! the grouped path with several rules only the events some rule rejected,
//! with a bit per rule that rejected each (rejections are few: a column per
//! rule would be written and read for every event).
//!
//! [`Decisions::into_replay`] gives the [`Replay`] with a column per rule,
//! whichever way they were kept.

use std::borrow::Cow;

use super::Replay;

/// Each rule's own verdicts (true where it admits or does not apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdicts {
    /// One rule: its verdicts are the decisions.
    Decisions,
    /// A column of verdicts per rule, one per event.
    Columns(Vec<Vec<bool>>),
    /// The events some rule rejected, in increasing order, with a bit per
    /// rule (at most 64) that rejected each; every other verdict admits.
    Rejections(Vec<(u32, u64)>),
}

/// The decisions of a replay, with each rule's verdicts.
#[derive(Debug, Clone)]
pub struct Decisions {
    /// Admitted by every rule that applies, per event.
    pub allowed: Vec<bool>,
    /// Each rule's own verdicts.
    pub verdicts: RuleVerdicts,
    /// Per event, how long nginx would hold the request (see [`Replay::delay_ms`]).
    pub delay_ms: Option<Vec<u64>>,
    /// `allowed` in the order of the grouping the replay used (see
    /// [`Replay::grouped_allowed`]).
    pub grouped_allowed: Option<Vec<bool>>,
    /// The number of rules.
    pub rules: usize,
}

impl Decisions {
    /// Rule `r`'s verdict for every event.
    ///
    /// # Panics
    /// When there is no rule `r`.
    pub fn rule_allowed(&self, r: usize) -> Cow<'_, [bool]> {
        assert!(r < self.rules, "no rule {r}");
        match &self.verdicts {
            RuleVerdicts::Decisions => Cow::Borrowed(&self.allowed),
            RuleVerdicts::Columns(columns) => Cow::Borrowed(&columns[r]),
            RuleVerdicts::Rejections(_) => Cow::Owned(self.rule_allowed_at(r, None)),
        }
    }

    /// Rule `r`'s verdicts at the events `rows` (increasing), or at every
    /// event without `rows`. A rejection outside `rows` (where the rule does
    /// not apply, so never) is left out.
    ///
    /// # Panics
    /// When there is no rule `r`, or a row is not an event.
    pub fn rule_allowed_at(&self, r: usize, rows: Option<&[u32]>) -> Vec<bool> {
        assert!(r < self.rules, "no rule {r}");
        let pick = |column: &[bool]| match rows {
            None => column.to_vec(),
            Some(rows) => rows.iter().map(|&i| column[i as usize]).collect(),
        };
        match &self.verdicts {
            RuleVerdicts::Decisions => pick(&self.allowed),
            RuleVerdicts::Columns(columns) => pick(&columns[r]),
            RuleVerdicts::Rejections(rejections) => {
                let len = rows.map_or(self.allowed.len(), <[u32]>::len);
                let mut verdicts = vec![true; len];
                let rejected = rejections.iter().filter(|(_, bits)| bits >> r & 1 == 1);
                // Both in increasing order: each row is looked for from where
                // the last one was found.
                let mut from = 0;
                for &(row, _) in rejected {
                    let at = match rows {
                        None => Some(row as usize),
                        Some(rows) => {
                            from += first_at_least(&rows[from..], row);
                            (rows.get(from) == Some(&row)).then_some(from)
                        }
                    };
                    if let Some(at) = at {
                        verdicts[at] = false;
                    }
                }
                verdicts
            }
        }
    }

    /// The same decisions with a column of verdicts per rule.
    pub fn into_replay(self) -> Replay {
        let rule_allowed = match &self.verdicts {
            RuleVerdicts::Columns(_) => Vec::new(),
            _ => (0..self.rules)
                .map(|r| self.rule_allowed_at(r, None))
                .collect(),
        };
        let rule_allowed = match self.verdicts {
            RuleVerdicts::Columns(columns) => columns,
            _ => rule_allowed,
        };
        Replay {
            allowed: self.allowed,
            rule_allowed,
            delay_ms: self.delay_ms,
            grouped_allowed: self.grouped_allowed,
        }
    }
}

/// The position of the first value of `sorted` not below `value` (its
/// length if none), searched from the front in steps that double, so that
/// a value near the front is found in few steps.
fn first_at_least(sorted: &[u32], value: u32) -> usize {
    let mut bound = 1;
    while bound < sorted.len() && sorted[bound] < value {
        bound *= 2;
    }
    let start = bound / 2;
    let end = (bound + 1).min(sorted.len());
    start + sorted[start..end].partition_point(|&x| x < value)
}

impl From<Replay> for Decisions {
    /// A replay's decisions, its verdicts a column per rule.
    fn from(replay: Replay) -> Self {
        Decisions {
            rules: replay.rule_allowed.len(),
            allowed: replay.allowed,
            verdicts: RuleVerdicts::Columns(replay.rule_allowed),
            delay_ms: replay.delay_ms,
            grouped_allowed: replay.grouped_allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Decisions over `columns` (a column of verdicts per rule, each as long)
    /// kept as rejections.
    fn as_rejections(columns: &[Vec<bool>]) -> Decisions {
        let events = columns[0].len();
        let rejections = (0..events)
            .map(|i| {
                let bits = (columns.iter().enumerate())
                    .fold(0u64, |bits, (r, c)| bits | u64::from(!c[i]) << r);
                (i as u32, bits)
            })
            .filter(|&(_, bits)| bits != 0)
            .collect();
        Decisions {
            allowed: (0..events).map(|i| columns.iter().all(|c| c[i])).collect(),
            verdicts: RuleVerdicts::Rejections(rejections),
            delay_ms: None,
            grouped_allowed: None,
            rules: columns.len(),
        }
    }

    proptest! {
        #[test]
        fn rejections_give_each_rules_column_and_its_picks(
            columns in (1usize..6, 1usize..80).prop_flat_map(|(rules, events)| {
                prop::collection::vec(prop::collection::vec(any::<bool>(), events), rules)
            }),
            keep in prop::collection::vec(any::<bool>(), 80),
        ) {
            let decisions = as_rejections(&columns);
            let rows: Vec<u32> = (0..columns[0].len() as u32).filter(|&i| keep[i as usize]).collect();
            for (r, column) in columns.iter().enumerate() {
                prop_assert_eq!(&decisions.rule_allowed(r)[..], &column[..]);
                let picked: Vec<bool> = rows.iter().map(|&i| column[i as usize]).collect();
                prop_assert_eq!(decisions.rule_allowed_at(r, Some(&rows)), picked);
            }
            let replay = decisions.into_replay();
            prop_assert_eq!(replay.rule_allowed, columns);
        }
    }

    proptest! {
        #[test]
        fn the_first_value_not_below_is_found_as_by_a_plain_search(
            values in prop::collection::vec(0u32..200, 0..100),
            value in 0u32..210,
        ) {
            let mut sorted = values;
            sorted.sort_unstable();
            prop_assert_eq!(first_at_least(&sorted, value), sorted.partition_point(|&x| x < value));
        }
    }

    #[test]
    fn one_rules_verdicts_are_the_decisions() {
        let decisions = Decisions {
            allowed: vec![true, false, true],
            verdicts: RuleVerdicts::Decisions,
            delay_ms: None,
            grouped_allowed: None,
            rules: 1,
        };
        assert_eq!(decisions.rule_allowed_at(0, Some(&[1, 2])), [false, true]);
        let replay = decisions.into_replay();
        assert_eq!(replay.rule_allowed, vec![vec![true, false, true]]);
    }
}
