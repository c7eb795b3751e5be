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

use rayon::prelude::*;

use super::bank::Bank;
use super::spec::with_algorithm;
use super::summary::ByClient;
use super::{Algorithm, Limiter};
use crate::events::{ClientGroups, group_rows};
use crate::units::Millis;

/// Key value meaning "this rule does not apply to this request".
pub const NOT_APPLICABLE: u32 = u32::MAX;

/// The most rules the grouped path takes (one bit each per event); more take
/// the sequential path.
const MAX_GROUPED_RULES: usize = 64;

/// Events per parallel task, at least; small enough to balance, large enough to amortise.
const MIN_CHUNK_EVENTS: usize = 16_384;

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

/// What the limiters decided, per event (in the order of the input).
#[derive(Debug, Clone, PartialEq, Eq)]
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
    grouping: Option<Grouping>,
}

/// Events grouped by key (a counting sort, so each group stays in time order), with
/// their times copied into that order so that replaying a key reads memory in sequence.
#[derive(Debug)]
struct Grouping {
    /// The key per event the grouping was built from.
    keys: Vec<u32>,
    groups: ClientGroups,
    /// `ts[groups.rows[i]]` at `i`.
    ts: Vec<Millis>,
    /// Runs of groups replayed as one parallel task (see [`chunk_groups`]).
    chunks: Vec<(usize, usize)>,
    /// Keys that are replayed (`0..key_count`; the last group is left out).
    key_count: usize,
}

impl<'a> Replayer<'a> {
    /// A replayer over time-sorted events `ts`.
    pub fn new(ts: &'a [Millis]) -> Self {
        Replayer { ts, grouping: None }
    }

    /// How many events there are.
    pub fn events(&self) -> usize {
        self.ts.len()
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
        })
    }

    /// Replays the events through `rules`.
    pub fn replay(&mut self, rules: &[Rule]) -> Result<Replay, ReplayError> {
        validate(self.ts, rules)?;
        let ts = self.ts;
        let keys = (rules.len() <= MAX_GROUPED_RULES)
            .then(|| shared_keys(rules, ts.len()))
            .flatten();
        Ok(match keys {
            Some(keys) => replay_grouped(self.grouping(keys, rules), rules),
            None => replay_sequential(ts, rules),
        })
    }

    /// The grouping by `keys` ([`NOT_APPLICABLE`] into one last group, never
    /// replayed), built unless the previous replay used the same keys.
    fn grouping(&mut self, keys: Cow<[u32]>, rules: &[Rule]) -> &Grouping {
        let key_count = rules.iter().map(|r| r.key_count).max().unwrap_or(0);
        let reusable = self
            .grouping
            .as_ref()
            .is_some_and(|g| g.key_count == key_count && g.keys[..] == keys[..]);
        if !reusable {
            let pass = key_count as u32;
            let dense: Vec<u32> = keys
                .iter()
                .map(|&k| if k == NOT_APPLICABLE { pass } else { k })
                .collect();
            let groups = group_rows(&dense, key_count + 1);
            let ts = groups.rows.iter().map(|&r| self.ts[r as usize]).collect();
            let chunks = chunk_groups(&groups, key_count, self.ts.len());
            self.grouping = Some(Grouping {
                keys: keys.into_owned(),
                groups,
                ts,
                chunks,
                key_count,
            });
        }
        self.grouping.as_ref().expect("built above")
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
        let bad = r
            .keys
            .iter()
            .enumerate()
            .find(|&(_, &k)| k != NOT_APPLICABLE && k as usize >= r.key_count);
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
        for (slot, &key) in shared.iter_mut().zip(rule.keys) {
            if key == NOT_APPLICABLE {
                continue;
            }
            if *slot != NOT_APPLICABLE && *slot != key {
                return None;
            }
            *slot = key;
        }
    }
    Some(Cow::Owned(shared))
}

/// Output columns under construction.
struct Columns {
    allowed: Vec<bool>,
    rule_allowed: Vec<Vec<bool>>,
    delay_ms: Option<Vec<u64>>,
}

impl Columns {
    fn new(len: usize, rules: &[Rule]) -> Self {
        let per_rule = if rules.len() > 1 { rules.len() } else { 0 };
        let delays = rules.iter().any(|r| r.limiter.reports_delays());
        Columns {
            allowed: vec![true; len],
            rule_allowed: vec![vec![true; len]; per_rule],
            delay_ms: delays.then(|| vec![0; len]),
        }
    }

    /// With one rule its verdict is the overall decision: stored once, copied here.
    fn finish(mut self, rules: &[Rule]) -> Replay {
        if rules.len() == 1 {
            self.rule_allowed = vec![self.allowed.clone()];
        }
        Replay {
            allowed: self.allowed,
            rule_allowed: self.rule_allowed,
            delay_ms: self.delay_ms,
        }
    }
}

fn replay_grouped(grouping: &Grouping, rules: &[Rule]) -> Replay {
    let applies = (rules.len() > 1).then(|| rules_applying(grouping, rules));
    let parts: Vec<Columns> = grouping
        .chunks
        .par_iter()
        .map(|&(first, end)| replay_chunk(grouping, rules, applies.as_deref(), first, end))
        .collect();
    let out = Columns::new(grouping.ts.len(), rules);
    scatter(parts, &grouping.groups.rows, out).finish(rules)
}

/// Per event in group order, a bit per rule that applies to it (at most
/// [`MAX_GROUPED_RULES`] rules): built in event order, where the rules' key
/// columns are read in sequence, then moved into group order with one gather.
fn rules_applying(grouping: &Grouping, rules: &[Rule]) -> Vec<u64> {
    let mut mask = vec![0u64; grouping.ts.len()];
    for (r, rule) in rules.iter().enumerate() {
        mask.par_iter_mut()
            .zip(rule.keys.par_iter())
            .for_each(|(m, &key)| *m |= u64::from(key != NOT_APPLICABLE) << r);
    }
    grouping
        .groups
        .rows
        .par_iter()
        .map(|&row| mask[row as usize])
        .collect()
}

/// Replays the keys of groups `first..end`; results in the order of their rows.
/// With several rules, `applies` tells which apply to each event (group order).
fn replay_chunk(
    grouping: &Grouping,
    rules: &[Rule],
    applies: Option<&[u64]>,
    first: usize,
    end: usize,
) -> Columns {
    let offsets = &grouping.groups.offsets;
    let (base, stop) = (offsets[first], offsets[end]);
    let ts = &grouping.ts[base..stop];
    let mut out = Columns::new(stop - base, rules);
    let spans = (first..end).map(|g| offsets[g] - base..offsets[g + 1] - base);
    let (Some(applies), [_, _, ..]) = (applies, rules) else {
        with_algorithm!(&rules[0].limiter, alg => {
            for span in spans {
                replay_key(alg, &ts[span.clone()], &mut out, span.start);
            }
        });
        return out;
    };
    // Every rule that applies to an event of this key uses this key: one state each.
    let applies = &applies[base..stop];
    let mut banks: Vec<Bank> = rules.iter().map(|r| Bank::new(&r.limiter, 1)).collect();
    for span in spans {
        banks.iter_mut().for_each(Bank::reset);
        for at in span {
            let mask = applies[at];
            let slot = |r: usize| (mask >> r & 1 == 1).then_some(0);
            step(&mut banks, ts[at], slot, &mut out, at);
        }
    }
    out
}

/// Moves chunk results (in the order of `rows`) to their events' positions in
/// `out`, one column at a time (so the writes stay within one column's memory),
/// the columns side by side.
fn scatter(parts: Vec<Columns>, rows: &[u32], mut out: Columns) -> Columns {
    let rule_columns = out.rule_allowed.par_iter_mut().enumerate();
    rayon::join(
        || place(&mut out.allowed, rows, parts.iter().map(|p| &p.allowed[..])),
        || {
            rule_columns.for_each(|(r, column)| {
                place(column, rows, parts.iter().map(|p| &p.rule_allowed[r][..]));
            });
            if let Some(to) = &mut out.delay_ms {
                let from = parts.iter().filter_map(|p| p.delay_ms.as_deref());
                place(to, rows, from);
            }
        },
    );
    out
}

/// Writes the values of `pieces`, one after another, to `to[rows[i]]`.
fn place<'p, T: Copy + 'p>(to: &mut [T], rows: &[u32], pieces: impl Iterator<Item = &'p [T]>) {
    let mut rows = rows.iter();
    for piece in pieces {
        // The piece first: zip then stops without taking a row from the next piece.
        for (&value, &row) in piece.iter().zip(rows.by_ref()) {
            to[row as usize] = value;
        }
    }
}

/// Splits groups `0..key_count` into consecutive runs of at least
/// [`MIN_CHUNK_EVENTS`] events (about 64 runs for large inputs).
fn chunk_groups(groups: &ClientGroups, key_count: usize, events: usize) -> Vec<(usize, usize)> {
    let target = (events / 64).max(MIN_CHUNK_EVENTS);
    let mut chunks = Vec::new();
    let mut first = 0;
    for g in 0..key_count {
        if groups.offsets[g + 1] - groups.offsets[first] >= target {
            chunks.push((first, g + 1));
            first = g + 1;
        }
    }
    if first < key_count {
        chunks.push((first, key_count));
    }
    chunks
}

/// One key's times through one algorithm (the monomorphised hot loop); results go
/// to `out[at..at + ts.len()]`.
fn replay_key<A: Algorithm>(alg: &A, ts: &[Millis], out: &mut Columns, at: usize) {
    let mut state = A::State::default();
    for (j, &t) in ts.iter().enumerate() {
        let allowed = alg.allows(&mut state, t);
        out.allowed[at + j] = allowed;
        if allowed {
            let delay = alg.record(&mut state, t);
            if let Some(delays) = &mut out.delay_ms {
                delays[at + j] = delay;
            }
        }
    }
}

fn replay_sequential(ts: &[Millis], rules: &[Rule]) -> Replay {
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
    Ok(replay_sequential(ts, rules))
}

#[cfg(test)]
mod tests;
