//! The replay loop: time-sorted events through one or several rules, the only place
//! where limiter state meets events, so every algorithm sees the same clock.
//!
//! A rule is a [`Limiter`] plus a key column: for each event, the dense key whose
//! state it uses, or [`NOT_APPLICABLE`]. A request is admitted when every rule that
//! applies admits it, and only then does any rule's state change (nginx's semantics
//! for several `limit_req` in one location).
//!
//! Two paths, one result:
//! - when, for every event, all rules that apply use the same key (one rule, or
//!   up to 64 rules sharing a key column), keys are independent: events are
//!   grouped per key (a counting sort keeping time order, kept by a [`Replayer`]
//!   for the next replay over the same keys) and keys are replayed in parallel
//!   with rayon, each key's state living on the stack of its worker;
//! - otherwise events are replayed one by one in time order with a dense `Vec` of
//!   states per rule.
//!
//! Results depend neither on the number of threads nor on the run.

use std::borrow::Cow;
use std::sync::Arc;

use super::Limiter;
use super::bank::Bank;
use super::summary::ByClient;
use crate::units::Millis;
use grouped::{Grouping, replay_grouped};

/// Key value meaning "this rule does not apply to this request".
pub const NOT_APPLICABLE: u32 = u32::MAX;

/// The most rules the grouped path takes (one bit each per event); more take
/// the sequential path.
const MAX_GROUPED_RULES: usize = 64;

/// The rules whose bit is set in `mask` (a set of rules, one bit each),
/// lowest first.
pub fn rules_in(mask: u64) -> impl Iterator<Item = usize> {
    let mut bits = mask;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            r
        })
    })
}

/// One rule: a limiter and, per event, the key whose state it uses.
#[derive(Debug, Clone)]
pub struct Rule<'a> {
    /// The algorithm with its limit.
    pub limiter: Limiter,
    /// Per event: a dense key below `key_count`, or [`NOT_APPLICABLE`].
    pub keys: &'a [u32],
    /// Number of distinct keys (state is a `Vec` of this length).
    pub key_count: usize,
}

/// What the limiters decided, per event (in the order of the input). Two
/// replays are equal when their decisions are (`grouped_allowed` is only
/// another order of `allowed`, kept by the grouped path).
#[derive(Debug, Clone, Eq)]
pub struct Replay {
    /// Admitted by every rule that applies.
    pub allowed: Vec<bool>,
    /// Per rule: that rule's own verdict given its state (true where it does not
    /// apply). Every rule is asked, so a request two rules reject counts for both.
    pub rule_allowed: Vec<Vec<bool>>,
    /// Per event: how long nginx would hold the request (the largest delay over
    /// leaky-bucket rules; 0 when rejected or with `nodelay`). `None` when no rule
    /// is a leaky bucket.
    pub delay_ms: Option<Vec<u64>>,
    /// `allowed` in the order of the grouping the replay used (see
    /// [`Replayer::grouped_by`]), when it replayed key by key.
    pub grouped_allowed: Option<Vec<bool>>,
}

impl PartialEq for Replay {
    fn eq(&self, other: &Self) -> bool {
        (self.allowed == other.allowed)
            && (self.rule_allowed == other.rule_allowed)
            && (self.delay_ms == other.delay_ms)
    }
}

impl Replay {
    /// How many requests were admitted.
    pub fn allowed_count(&self) -> u64 {
        self.allowed.iter().filter(|&&a| a).count() as u64
    }
}

/// Columns that do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("rule {rule} has {keys} keys for {events} events")]
    /// A key column whose length is not the number of events.
    KeysLength {
        rule: usize,
        keys: usize,
        events: usize,
    },
    #[error("rule {rule}: event {row} has key {key}, but the rule has only {key_count} keys")]
    /// A key at or above the rule's key count.
    KeyOutOfRange {
        rule: usize,
        row: usize,
        key: u32,
        key_count: usize,
    },
    #[error("events are not sorted by time (event {row} is earlier than the one before)")]
    /// Times that decrease.
    Unsorted { row: usize },
    #[error("too many distinct keys to replay ({0})")]
    /// More keys than a `u32` key column can name.
    TooManyKeys(usize),
}

/// Replays time-sorted events `ts` through `rules`.
pub fn replay(ts: &[Millis], rules: &[Rule]) -> Result<Replay, ReplayError> {
    Replayer::new(ts).replay(rules)
}

/// Replays several rule sets over the same events. The grouping of events by key
/// (and their times in that order) is kept from one replay to the next, so the
/// scenarios of one run, which usually share their key column, group only once.
#[derive(Debug)]
pub struct Replayer<'a> {
    ts: &'a [Millis],
    grouping: Option<Arc<Grouping>>,
}

impl<'a> Replayer<'a> {
    /// A replayer over time-sorted events `ts`.
    pub fn new(ts: &'a [Millis]) -> Self {
        Replayer { ts, grouping: None }
    }

    /// The events' times.
    pub fn times(&self) -> &'a [Millis] {
        self.ts
    }

    /// The events grouped by `keys`, when the last replay grouped them by exactly
    /// these keys (a summary then reads each key's events in sequence).
    pub fn grouped_by(&self, keys: &[u32]) -> Option<ByClient<'_>> {
        let grouping = self.grouping.as_ref()?;
        (grouping.keys[..] == keys[..]).then_some(ByClient {
            groups: &grouping.groups,
            ts: &grouping.ts,
            allowed: None,
        })
    }

    /// Replays the events through `rules`.
    pub fn replay(&mut self, rules: &[Rule]) -> Result<Replay, ReplayError> {
        self.decide(rules).map(Decisions::into_replay)
    }

    /// [`Replayer::replay`], each rule's verdicts kept as the replay found
    /// them (see [`Decisions`]).
    pub fn decide(&mut self, rules: &[Rule]) -> Result<Decisions, ReplayError> {
        validate(self.ts, rules)?;
        let ts = self.ts;
        let keys = (rules.len() <= MAX_GROUPED_RULES)
            .then(|| shared_keys(rules, ts.len()))
            .flatten();
        Ok(match keys {
            Some(keys) => replay_grouped(&self.grouping(keys, rules), rules, None),
            None => replay_sequential(ts, rules),
        })
    }

    /// The grouping by `keys` ([`NOT_APPLICABLE`] into one last group, never
    /// replayed), built unless the previous replay used the same keys.
    fn grouping(&mut self, keys: Cow<[u32]>, rules: &[Rule]) -> Arc<Grouping> {
        let key_count = rules.iter().map(|r| r.key_count).max().unwrap_or(0);
        let reusable = self
            .grouping
            .as_ref()
            .is_some_and(|g| g.key_count == key_count && g.keys[..] == keys[..]);
        if !reusable {
            self.grouping = Some(Arc::new(Grouping::new(self.ts, keys, key_count)));
        }
        self.grouping.clone().expect("built above")
    }
}

fn validate(ts: &[Millis], rules: &[Rule]) -> Result<(), ReplayError> {
    if let Some(row) = ts.windows(2).position(|w| w[1] < w[0]) {
        return Err(ReplayError::Unsorted { row: row + 1 });
    }
    for (rule, r) in rules.iter().enumerate() {
        if r.keys.len() != ts.len() {
            return Err(ReplayError::KeysLength {
                rule,
                keys: r.keys.len(),
                events: ts.len(),
            });
        }
        if r.key_count >= NOT_APPLICABLE as usize {
            return Err(ReplayError::TooManyKeys(r.key_count));
        }
        // Out of range: at or above key_count and not NOT_APPLICABLE, i.e. k + 1
        // (wrapping NOT_APPLICABLE to 0) above key_count. A branch-free maximum
        // first (fast); the row is looked for only when there is one.
        let over = |k: u32| k.wrapping_add(1) as usize > r.key_count;
        let highest = r.keys.iter().fold(0u32, |m, &k| m.max(k.wrapping_add(1)));
        let bad = over(highest.wrapping_sub(1))
            .then(|| r.keys.iter().enumerate().find(|&(_, &k)| over(k)))
            .flatten();
        if let Some((row, &key)) = bad {
            return Err(ReplayError::KeyOutOfRange {
                rule,
                row,
                key,
                key_count: r.key_count,
            });
        }
    }
    Ok(())
}

/// The per-event key shared by every rule that applies, with [`NOT_APPLICABLE`]
/// where none does; `None` when two rules that apply to one event use different keys.
fn shared_keys<'r>(rules: &[Rule<'r>], events: usize) -> Option<Cow<'r, [u32]>> {
    if let [rule] = rules {
        return Some(Cow::Borrowed(rule.keys));
    }
    let mut shared = vec![NOT_APPLICABLE; events];
    for rule in rules {
        // Branch-free, so that it vectorises; a conflict is looked at per rule.
        let mut conflict = false;
        for (slot, &key) in shared.iter_mut().zip(rule.keys) {
            let applies = key != NOT_APPLICABLE;
            conflict |= applies & (*slot != NOT_APPLICABLE) & (*slot != key);
            *slot = if applies { key } else { *slot };
        }
        if conflict {
            return None;
        }
    }
    Some(Cow::Owned(shared))
}

/// Output columns under construction.
struct Columns {
    allowed: Vec<bool>,
    rule_allowed: Vec<Vec<bool>>,
    /// Instead of `rule_allowed` (at most 64 rules): the events some rule
    /// rejected, in increasing order, with a bit per rule that rejected each.
    rejections: Option<Vec<(u32, u64)>>,
    delay_ms: Option<Vec<u64>>,
}

impl Columns {
    fn new(len: usize, rules: &[Rule]) -> Self {
        let per_rule = if rules.len() > 1 { rules.len() } else { 0 };
        let delays = rules.iter().any(|r| r.limiter.reports_delays());
        Columns {
            allowed: vec![true; len],
            rule_allowed: vec![vec![true; len]; per_rule],
            rejections: None,
            delay_ms: delays.then(|| vec![0; len]),
        }
    }

    /// [`Columns::new`] with the rules' verdicts as bits (several rules, at
    /// most [`MAX_GROUPED_RULES`]).
    fn with_bits(len: usize, rules: &[Rule]) -> Self {
        let delays = rules.iter().any(|r| r.limiter.reports_delays());
        Columns {
            allowed: vec![true; len],
            rule_allowed: Vec::new(),
            rejections: Some(Vec::new()),
            delay_ms: delays.then(|| vec![0; len]),
        }
    }

    /// With one rule its verdict is the overall decision, stored once; the
    /// verdicts of several rules as they were kept.
    fn finish(self, rules: &[Rule]) -> Decisions {
        let verdicts = match (self.rejections, rules.len()) {
            (Some(rejections), 2..) => RuleVerdicts::Rejections(rejections),
            (_, 0 | 1) => RuleVerdicts::Decisions,
            (None, _) => RuleVerdicts::Columns(self.rule_allowed),
        };
        Decisions {
            allowed: self.allowed,
            verdicts,
            delay_ms: self.delay_ms,
            grouped_allowed: None,
            rules: rules.len(),
        }
    }
}

fn replay_sequential(ts: &[Millis], rules: &[Rule]) -> Decisions {
    let mut banks: Vec<Bank> = rules
        .iter()
        .map(|r| Bank::new(&r.limiter, r.key_count))
        .collect();
    let mut out = Columns::new(ts.len(), rules);
    for (row, &t) in ts.iter().enumerate() {
        let slot = |r: usize| {
            let key = rules[r].keys[row];
            (key != NOT_APPLICABLE).then_some(key as usize)
        };
        step(&mut banks, t, slot, &mut out, row);
    }
    out.finish(rules)
}

/// Decides an event at time `t` against every rule that applies to it
/// (`slot(r)`: the index of its state in rule `r`'s bank, or `None`), then
/// admits it into each of them if all allowed; results go to `out[at]`.
fn step(
    banks: &mut [Bank],
    t: Millis,
    slot: impl Fn(usize) -> Option<usize>,
    out: &mut Columns,
    at: usize,
) {
    let mut allowed = true;
    for (r, bank) in banks.iter_mut().enumerate() {
        if let Some(slot) = slot(r) {
            let verdict = bank.allows(slot, t);
            allowed &= verdict;
            if let Some(column) = out.rule_allowed.get_mut(r) {
                column[at] = verdict;
            }
        }
    }
    out.allowed[at] = allowed;
    if !allowed {
        for (r, bank) in banks.iter_mut().enumerate() {
            if let Some(slot) = slot(r) {
                bank.rejected(slot, t);
            }
        }
        return;
    }
    let mut delay = 0;
    for (r, bank) in banks.iter_mut().enumerate() {
        if let Some(slot) = slot(r) {
            delay = delay.max(bank.record(slot, t));
        }
    }
    if let Some(delays) = &mut out.delay_ms {
        delays[at] = delay;
    }
}

/// The sequential path on its own, so tests can compare both paths on any input.
#[cfg(test)]
pub(crate) fn replay_in_time_order(ts: &[Millis], rules: &[Rule]) -> Result<Replay, ReplayError> {
    validate(ts, rules)?;
    Ok(replay_sequential(ts, rules).into_replay())
}

mod decisions;
mod grouped;
mod prepared;
pub use decisions::{Decisions, RuleVerdicts};
pub use prepared::PreparedKeys;
#[cfg(test)]
mod tests;
