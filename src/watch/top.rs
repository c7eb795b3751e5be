//! The clients a rule would reject most, in fixed memory: the Space-Saving
//! algorithm (Metwally, Agrawal, El Abbadi 2005) with a few dozen counters.
//! A client's count is an upper bound, exact while the table never filled, and
//! any client with more than N/capacity would-rejects is in it. [`TopClients::add`]
//! says when a client enters the table and which one it pushed out, so that
//! what is kept about tracked clients ([`super::tracked`]) leaves with them.

use std::collections::HashMap;

/// One tracked client.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopClient {
    pub client: String,
    /// Would-rejects counted (an upper bound).
    pub would_reject: u64,
    /// How much of the count may belong to clients evicted before it.
    pub error: u64,
    /// What it was recognised as (see [`super::tracked`]); none: no kind matched.
    pub profile: Vec<crate::profile::Finding>,
    /// Its busiest window of the last hour while tracked (requests).
    pub peak_window: u64,
}

/// What [`TopClients::add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// The client was in the table: its count went up.
    Counted,
    /// The client entered the table, pushing out the client named, if any.
    Entered(Option<Box<str>>),
}

/// A Space-Saving table of `capacity` counters.
#[derive(Debug, Clone)]
pub struct TopClients {
    capacity: usize,
    counts: HashMap<Box<str>, (u64, u64)>,
}

impl TopClients {
    /// A table of `capacity` counters (at least 1).
    pub fn new(capacity: usize) -> Self {
        TopClients {
            capacity: capacity.max(1),
            counts: HashMap::new(),
        }
    }

    /// Counts one would-reject of `client`.
    pub fn add(&mut self, client: &str) -> Added {
        if let Some((count, _)) = self.counts.get_mut(client) {
            *count += 1;
            return Added::Counted;
        }
        if self.counts.len() < self.capacity {
            self.counts.insert(client.into(), (1, 0));
            return Added::Entered(None);
        }
        let smallest = self
            .counts
            .iter()
            .min_by(|a, b| a.1.0.cmp(&b.1.0).then_with(|| b.0.cmp(a.0)))
            .map(|(k, &(count, _))| (k.clone(), count));
        let Some((evicted, min)) = smallest else {
            self.counts.insert(client.into(), (1, 0));
            return Added::Entered(None);
        };
        self.counts.remove(&evicted);
        self.counts.insert(client.into(), (min + 1, min));
        Added::Entered(Some(evicted))
    }

    /// Whether `client` is in the table.
    pub fn contains(&self, client: &str) -> bool {
        self.counts.contains_key(client)
    }

    /// How many clients the table holds.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The `n` largest, largest first (ties by name).
    pub fn top(&self, n: usize) -> Vec<TopClient> {
        let mut all: Vec<TopClient> = self
            .counts
            .iter()
            .map(|(k, &(count, error))| TopClient {
                client: k.to_string(),
                would_reject: count,
                error,
                profile: Vec::new(),
                peak_window: 0,
            })
            .collect();
        all.sort_by(|a, b| {
            b.would_reject
                .cmp(&a.would_reject)
                .then_with(|| a.client.cmp(&b.client))
        });
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_until_full_then_heavy_hitters_stay() {
        let mut t = TopClients::new(3);
        for c in ["a", "a", "a", "b", "b", "c"] {
            t.add(c);
        }
        let names = |t: &TopClients| {
            t.top(3)
                .into_iter()
                .map(|c| (c.client, c.would_reject))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&t),
            [("a".into(), 3), ("b".into(), 2), ("c".into(), 1)]
        );
        // A stream of one-off clients never pushes out the heavy hitter.
        for i in 0..100 {
            t.add(&format!("once{i}"));
            t.add("a");
        }
        assert_eq!(t.top(1)[0].client, "a");
        assert_eq!(t.top(1)[0].would_reject, 103);
        assert_eq!(t.top(10).len(), 3);
    }

    #[test]
    fn add_says_who_entered_and_who_was_pushed_out() {
        let mut t = TopClients::new(2);
        assert_eq!(t.add("a"), Added::Entered(None));
        assert_eq!(t.add("a"), Added::Counted);
        assert_eq!(t.add("b"), Added::Entered(None));
        // Full: c takes the place of the smallest, b (count 1 < a's 2).
        assert_eq!(t.add("c"), Added::Entered(Some("b".into())));
        assert!(t.contains("c") && !t.contains("b"));
        assert_eq!(t.len(), 2);
    }
}
