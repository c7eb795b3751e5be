//! The grouped path of the replay: events grouped per key, each key's times
//! replayed in sequence, keys in parallel, results scattered back to input order.

use std::borrow::Cow;
use std::mem::take;

use rayon::prelude::*;

use super::{Columns, Decisions, NOT_APPLICABLE, Rule, rules_in};
use crate::events::ClientGroups;
use crate::simulate::Algorithm;
use crate::simulate::bank::Bank;
use crate::simulate::spec::with_algorithm;
use crate::units::Millis;

/// Events per parallel task, at least; small enough to balance, large enough to amortise.
const MIN_CHUNK_EVENTS: usize = 16_384;

/// Events grouped by key (a counting sort, so each group stays in time order), with
/// their times copied into that order so that replaying a key reads memory in sequence.
#[derive(Debug)]
pub(super) struct Grouping {
    /// The key per event the grouping was built from.
    pub(super) keys: Vec<u32>,
    pub(super) groups: ClientGroups,
    /// `ts[groups.rows[i]]` at `i`.
    pub(super) ts: Vec<Millis>,
    /// Per event, its position in group order (`groups.rows` inverted).
    positions: Vec<u32>,
    /// Runs of groups replayed as one parallel task (see [`chunk_groups`]).
    chunks: Vec<(usize, usize)>,
    /// Keys that are replayed (`0..key_count`; the last group is left out).
    pub(super) key_count: usize,
}

impl Grouping {
    /// Groups the events of times `ts` by `keys` (below `key_count`, or
    /// [`NOT_APPLICABLE`], which go to one last group that is never replayed).
    pub(super) fn new(ts: &[Millis], keys: Cow<[u32]>, key_count: usize) -> Self {
        let (groups, positions) = group_with_positions(&keys, key_count);
        let grouped_ts = groups.rows.par_iter().map(|&r| ts[r as usize]).collect();
        let chunks = chunk_groups(&groups, key_count, ts.len());
        Grouping {
            keys: keys.into_owned(),
            groups,
            ts: grouped_ts,
            positions,
            chunks,
            key_count,
        }
    }
}

/// [`crate::events::group_rows`] of `keys` below `key_count` (and [`NOT_APPLICABLE`] as key
/// `key_count`), with each row's position in group order, found in the same pass
/// that places it.
pub(super) fn group_with_positions(keys: &[u32], key_count: usize) -> (ClientGroups, Vec<u32>) {
    let group_of = |k: u32| {
        if k == NOT_APPLICABLE {
            key_count
        } else {
            k as usize
        }
    };
    let mut offsets = vec![0usize; key_count + 2];
    for &k in keys {
        offsets[group_of(k) + 1] += 1;
    }
    for g in 0..=key_count {
        offsets[g + 1] += offsets[g];
    }
    let mut next = offsets.clone();
    let mut rows = vec![0u32; keys.len()];
    let positions = (keys.iter().enumerate())
        .map(|(row, &k)| {
            let slot = &mut next[group_of(k)];
            let at = *slot;
            rows[at] = row as u32;
            *slot += 1;
            at as u32
        })
        .collect();
    (ClientGroups { offsets, rows }, positions)
}

/// Replays `rules` over `grouping`; `applies` is [`rules_applying`] when known.
pub(super) fn replay_grouped(
    grouping: &Grouping,
    rules: &[Rule],
    applies: Option<&[u64]>,
) -> Decisions {
    let computed = (applies.is_none() && rules.len() > 1).then(|| rules_applying(grouping, rules));
    let applies = applies.or(computed.as_deref());
    let mut parts: Vec<Columns> = grouping
        .chunks
        .par_iter()
        .map(|&(first, end)| replay_chunk(grouping, rules, applies, first, end))
        .collect();
    let multi = applies.is_some() && rules.len() > 1;
    let events = grouping.ts.len();
    // Each column in group order as the chunks made it (the last group, never
    // replayed: admitted by every rule, not delayed), then read at each
    // event's position in that order, in parallel.
    let gather = |grouped: &[bool]| -> Vec<bool> {
        (grouping.positions.par_iter())
            .map(|&at| grouped[at as usize])
            .collect()
    };
    // (Each piece is freed once copied.)
    let pieces = parts.iter_mut().map(|p| take(&mut p.allowed));
    let grouped_allowed = in_group_order(pieces, events, true);
    let per_rule = if multi || rules.len() < 2 {
        0
    } else {
        rules.len()
    };
    let rule_allowed = (0..per_rule)
        .map(|r| {
            let pieces = parts.iter_mut().map(|p| take(&mut p.rule_allowed[r]));
            gather(&in_group_order(pieces, events, true))
        })
        .collect();
    let delay_ms = rules.iter().any(|r| r.limiter.reports_delays()).then(|| {
        let pieces = parts.iter_mut().filter_map(|p| p.delay_ms.take());
        let grouped = in_group_order(pieces, events, 0);
        (grouping.positions.par_iter())
            .map(|&at| grouped[at as usize])
            .collect()
    });
    let rejections = multi.then(|| {
        let rows = &grouping.groups.rows;
        let mut all = Vec::new();
        for (part, &(first, _)) in parts.iter().zip(&grouping.chunks) {
            let base = grouping.groups.offsets[first];
            let from = part.rejections.iter().flatten();
            all.extend(from.map(|&(at, bits)| (rows[base + at as usize], bits)));
        }
        all.par_sort_unstable_by_key(|&(row, _)| row);
        all
    });
    let columns = Columns {
        allowed: gather(&grouped_allowed),
        rule_allowed,
        rejections,
        delay_ms,
    };
    let mut decisions = columns.finish(rules);
    decisions.grouped_allowed = Some(grouped_allowed);
    decisions
}

/// The `pieces` one after another, then `fill` up to `len` values.
fn in_group_order<T: Copy>(pieces: impl Iterator<Item = Vec<T>>, len: usize, fill: T) -> Vec<T> {
    let mut all = Vec::with_capacity(len);
    pieces.for_each(|piece| all.extend_from_slice(&piece));
    all.resize(len, fill);
    all
}

/// Per event in group order, a bit per rule that applies to it (at most
/// [`MAX_GROUPED_RULES`] rules): built in event order, where the rules' key
/// columns are read in sequence, then moved into group order with one gather.
pub(super) fn rules_applying(grouping: &Grouping, rules: &[Rule]) -> Vec<u64> {
    const BLOCK: usize = 4096; // a block of the mask stays in cache while every rule ORs in
    let mut mask = vec![0u64; grouping.ts.len()];
    mask.par_chunks_mut(BLOCK)
        .enumerate()
        .for_each(|(b, block)| {
            for (r, rule) in rules.iter().enumerate() {
                let keys = &rule.keys[b * BLOCK..][..block.len()];
                for (m, &key) in block.iter_mut().zip(keys) {
                    *m |= u64::from(key != NOT_APPLICABLE) << r;
                }
            }
        });
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
    let multi = applies.is_some() && rules.len() > 1;
    let mut out = match multi {
        true => Columns::with_bits(stop - base, rules),
        false => Columns::new(stop - base, rules),
    };
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
    // Rules of one algorithm (the scenarios of `--algo`): that algorithm's code
    // inlined into the loop instead of a dispatch per decision.
    let same = with_algorithm!(&rules[0].limiter, first => {
        of_one_algorithm(first, rules).map(|algs| {
            for span in spans.clone() {
                replay_key_of_rules(&algs, &ts[span.clone()], &applies[span.clone()], &mut out, span.start);
            }
        })
    });
    if same.is_some() {
        return out;
    }
    let mut banks: Vec<Bank> = rules.iter().map(|r| Bank::new(&r.limiter, 1)).collect();
    for span in spans {
        banks.iter_mut().for_each(Bank::reset);
        for at in span {
            step_applying(&mut banks, ts[at], applies[at], &mut out, at);
        }
    }
    out
}

/// [`step`](super::step) for one key: the rules whose bit is set in `mask`
/// decide (each with its one state), the others are not visited.
fn step_applying(banks: &mut [Bank], t: Millis, mask: u64, out: &mut Columns, at: usize) {
    let mut allowed = true;
    let mut rejected_by = 0u64;
    for r in rules_in(mask) {
        let verdict = banks[r].allows(0, t);
        allowed &= verdict;
        rejected_by |= u64::from(!verdict) << r;
    }
    if let Some(rejections) = out.rejections.as_mut().filter(|_| rejected_by != 0) {
        rejections.push((at as u32, rejected_by));
    }
    out.allowed[at] = allowed;
    if !allowed {
        rules_in(mask).for_each(|r| banks[r].rejected(0, t));
        return;
    }
    let delay = rules_in(mask).fold(0, |delay, r| delay.max(banks[r].record(0, t)));
    if let Some(delays) = &mut out.delay_ms {
        delays[at] = delay;
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
        } else {
            alg.rejected(&mut state, t);
        }
    }
}

/// The rules' algorithms when every one is of the type of `_first` (one of
/// them, which names the type).
fn of_one_algorithm<'r, A: Algorithm + 'static>(
    _first: &A,
    rules: &'r [Rule],
) -> Option<Vec<&'r A>> {
    (rules.iter())
        .map(|r| r.limiter.as_any().downcast_ref::<A>())
        .collect()
}

/// [`step_applying`] over one key's events (times `ts`, the rules applying to
/// each in `applies`) with rules `algs` of one algorithm, each with one state
/// from the empty one; results go to `out[at..]`.
fn replay_key_of_rules<A: Algorithm>(
    algs: &[&A],
    ts: &[Millis],
    applies: &[u64],
    out: &mut Columns,
    at: usize,
) {
    let mut states = vec![A::State::default(); algs.len()];
    for (j, (&t, &mask)) in ts.iter().zip(applies).enumerate() {
        let rest = mask & mask.wrapping_sub(1);
        // One or two rules (a policy's global rule and one endpoint's, the
        // usual case) without a loop over the bits.
        let (allowed, rejected_by, delay) = match (mask, rest) {
            (1.., 0) => one_rule(algs, &mut states, mask.trailing_zeros() as usize, t),
            (1.., 1..) if rest & (rest - 1) == 0 => {
                let pair = (mask.trailing_zeros(), rest.trailing_zeros());
                two_rules(algs, &mut states, (pair.0 as usize, pair.1 as usize), t)
            }
            _ => rules_of(algs, &mut states, mask, t),
        };
        if let Some(rejections) = out.rejections.as_mut().filter(|_| rejected_by != 0) {
            rejections.push(((at + j) as u32, rejected_by));
        }
        out.allowed[at + j] = allowed;
        if let Some(delays) = out.delay_ms.as_mut().filter(|_| allowed) {
            delays[at + j] = delay;
        }
    }
}

/// What [`replay_key_of_rules`] decides for a request at `t` to which rule
/// `r` alone applies: admitted, the rules rejecting it, the delay.
fn one_rule<A: Algorithm>(
    algs: &[&A],
    states: &mut [A::State],
    r: usize,
    t: Millis,
) -> (bool, u64, u64) {
    let (alg, state) = (algs[r], &mut states[r]);
    if alg.allows(state, t) {
        (true, 0, alg.record(state, t))
    } else {
        alg.rejected(state, t);
        (false, 1 << r, 0)
    }
}

/// [`one_rule`] for two rules `r0 < r1`.
fn two_rules<A: Algorithm>(
    algs: &[&A],
    states: &mut [A::State],
    (r0, r1): (usize, usize),
    t: Millis,
) -> (bool, u64, u64) {
    let (low, high) = states.split_at_mut(r1);
    let (s0, s1) = (&mut low[r0], &mut high[0]);
    let (a0, a1) = (algs[r0], algs[r1]);
    let (v0, v1) = (a0.allows(s0, t), a1.allows(s1, t));
    if v0 && v1 {
        let delay = a0.record(s0, t).max(a1.record(s1, t));
        return (true, 0, delay);
    }
    a0.rejected(s0, t);
    a1.rejected(s1, t);
    (false, u64::from(!v0) << r0 | u64::from(!v1) << r1, 0)
}

/// [`one_rule`] for the rules whose bit is set in `mask` (any number).
fn rules_of<A: Algorithm>(
    algs: &[&A],
    states: &mut [A::State],
    mask: u64,
    t: Millis,
) -> (bool, u64, u64) {
    let mut allowed = true;
    let mut rejected_by = 0u64;
    for r in rules_in(mask) {
        let verdict = algs[r].allows(&mut states[r], t);
        allowed &= verdict;
        rejected_by |= u64::from(!verdict) << r;
    }
    if !allowed {
        rules_in(mask).for_each(|r| algs[r].rejected(&mut states[r], t));
        return (false, rejected_by, 0);
    }
    let delay = rules_in(mask).fold(0, |delay, r| delay.max(algs[r].record(&mut states[r], t)));
    (true, 0, delay)
}
