//! The clients a rule would reject most, in fixed memory: the Space-Saving
//! algorithm (Metwally, Agrawal, El Abbadi 2005) with a few dozen counters.
//! A client's count is an upper bound, exact while the table never filled, and
//! any client with more than N/capacity would-rejects is in it.

use std::collections::HashMap;

/// One tracked client.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopClient {
    pub client: String,
    /// Would-rejects counted (an upper bound).
    pub would_reject: u64,
    /// How much of the count may belong to clients evicted before it.
    pub error: u64,
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
    pub fn add(&mut self, client: &str) {
        if let Some((count, _)) = self.counts.get_mut(client) {
            *count += 1;
            return;
        }
        if self.counts.len() < self.capacity {
            self.counts.insert(client.into(), (1, 0));
            return;
        }
        let smallest = self
            .counts
            .iter()
            .min_by(|a, b| a.1.0.cmp(&b.1.0).then_with(|| b.0.cmp(a.0)))
            .map(|(k, &(count, _))| (k.clone(), count));
        if let Some((evicted, min)) = smallest {
            self.counts.remove(&evicted);
            self.counts.insert(client.into(), (min + 1, min));
        }
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
}
