//! The order lines are written in, for inputs that are not time-sorted:
//! `--shuffle` (each epoch-aligned minute's lines in a seeded random order, as
//! when several workers append to one file) and `--servers K` (each request
//! served by one of K servers, chosen by a seeded hash of its place in time
//! order; the K servers' logs, each time-sorted, written one after another
//! like `cat server-*.log`). Both only reorder: the lines are the same.

use super::rng::{Rng, splitmix64};
use super::traffic::Event;

/// The server (of `servers`) that answered the `index`-th request in time order.
pub fn server_of(seed: u64, index: u64, servers: u32) -> u32 {
    if servers <= 1 {
        return 0;
    }
    let mut state = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x7365_7276_6572_7321;
    ((u128::from(splitmix64(&mut state)) * u128::from(servers)) >> 64) as u32
}

/// Shuffles each epoch-aligned minute of a time-ordered stream; `salt` tells
/// streams apart (one per server) so that their shuffles differ.
pub struct ShuffleMinutes<I: Iterator<Item = Event>> {
    events: std::iter::Peekable<I>,
    seed: u64,
    salt: u64,
    minute: Vec<Event>,
}

impl<I: Iterator<Item = Event>> ShuffleMinutes<I> {
    /// Wraps a time-ordered stream.
    pub fn new(events: I, seed: u64, salt: u64) -> Self {
        ShuffleMinutes {
            events: events.peekable(),
            seed,
            salt,
            minute: Vec::new(),
        }
    }

    /// Loads and shuffles the next minute (reversed, so `pop` yields it in order).
    fn refill(&mut self) {
        let Some(first) = self.events.next() else {
            return;
        };
        let minute = first.ts.div_euclid(60_000);
        self.minute.push(first);
        while let Some(e) = self.events.next_if(|e| e.ts.div_euclid(60_000) == minute) {
            self.minute.push(e);
        }
        let mut rng = Rng::derive(
            self.seed ^ 0x7368_7566_666C_6521,
            minute as u64 ^ self.salt << 40,
        );
        for i in (1..self.minute.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            self.minute.swap(i, j);
        }
        self.minute.reverse();
    }
}

impl<I: Iterator<Item = Event>> Iterator for ShuffleMinutes<I> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        if self.minute.is_empty() {
            self.refill();
        }
        self.minute.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::routes::Route;

    fn event(ts: i64, profile: u32) -> Event {
        Event {
            ts,
            profile,
            route: Route::Home,
            status: 200,
            body_bytes: 1,
            request_time_ms: 1,
            referer: None,
        }
    }

    #[test]
    fn shuffling_keeps_each_minute_together_and_every_event() {
        let events: Vec<Event> = (0..600).map(|i| event(i * 500, i as u32)).collect();
        let out: Vec<Event> = ShuffleMinutes::new(events.clone().into_iter(), 7, 0).collect();
        assert_eq!(out.len(), events.len());
        let minutes: Vec<i64> = out.iter().map(|e| e.ts / 60_000).collect();
        assert!(
            minutes.windows(2).all(|w| w[0] <= w[1]),
            "minutes stay in order"
        );
        assert!(out.windows(2).any(|w| w[0].ts > w[1].ts), "not time-sorted");
        let mut sorted = out.clone();
        sorted.sort_by_key(|e| e.profile);
        assert_eq!(sorted, events);
        let again: Vec<Event> = ShuffleMinutes::new(events.clone().into_iter(), 7, 0).collect();
        assert_eq!(again, out);
        let other: Vec<Event> = ShuffleMinutes::new(events.into_iter(), 7, 1).collect();
        assert_ne!(other, out);
    }

    #[test]
    fn servers_share_the_requests_about_evenly() {
        let mut per = [0u32; 10];
        for i in 0..100_000 {
            per[server_of(1, i, 10) as usize] += 1;
        }
        assert!(per.iter().all(|&n| (9_000..11_000).contains(&n)), "{per:?}");
        assert!((0..1000).all(|i| server_of(5, i, 1) == 0));
    }
}
