//! The (method, route) pairs a rule does not apply under
//! ([`PlannedRule::unless`]: the routes Kong takes before a rule's own),
//! worked out for the rules of one pass over the events.

use regex::Regex;

use super::super::names::NameBits;
use super::super::plan::PlannedRule;
use crate::events::{EventTable, Id, Protocol};
use crate::simulate::gateway::NameReading;

/// The (method, route) pairs rules do not apply under
/// ([`PlannedRule::unless`]), each worked out once per distinct name: the
/// distinct pairs in groups of 64 with a bit each, and per rule with pairs its
/// bit and the bits of its pairs in each group.
pub(super) struct Unless {
    groups: Vec<NameBits>,
    rules: Vec<(u64, Vec<u64>)>,
}

impl Unless {
    pub(super) fn new(table: &EventTable, rules: &[&PlannedRule], reading: NameReading) -> Self {
        let mut pairs: Vec<(Option<&str>, Option<&Regex>)> = Vec::new();
        let mut of_rules = Vec::new();
        for (r, rule) in rules.iter().enumerate() {
            let mut bits: Vec<u64> = Vec::new();
            for (method, route) in &rule.unless {
                let pair = (method.as_deref(), route.as_ref());
                let same = |p: &(Option<&str>, Option<&Regex>)| {
                    p.0 == pair.0 && p.1.map(Regex::as_str) == pair.1.map(Regex::as_str)
                };
                let i = pairs.iter().position(same).unwrap_or_else(|| {
                    pairs.push(pair);
                    pairs.len() - 1
                });
                bits.resize(bits.len().max(i / 64 + 1), 0);
                bits[i / 64] |= 1u64 << (i % 64);
            }
            if !bits.is_empty() {
                of_rules.push((1u64 << r, bits));
            }
        }
        let groups = (pairs.chunks(64))
            .map(|group| NameBits::new(&table.methods, &table.paths, group, reading))
            .collect();
        Unless {
            groups,
            rules: of_rules,
        }
    }

    /// The bits of the rules that do not apply to a request with this
    /// method, path and HTTP version, because one of their pairs picks it.
    pub(super) fn rules_not_applying(&self, method: Id, path: Id, protocol: Protocol) -> u64 {
        let picks = |(g, bits): (usize, &u64)| {
            *bits != 0 && self.groups[g].picks(method, path, protocol) & bits != 0
        };
        (self.rules.iter())
            .filter(|(_, bits)| bits.iter().enumerate().any(picks))
            .fold(0, |out, (bit, _)| out | bit)
    }
}
