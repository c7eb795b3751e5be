//! The order lines are written in, for inputs that are not time-sorted:
//! `--shuffle` (each epoch-aligned minute's lines in a seeded random order, as
//! when several workers append to one file), `--logged-at-end` (each request
//! written when it ends, stamped with when it began, as Apache's `%t` is) and
//! `--servers K` (each request served by one of K servers, chosen by a seeded
//! hash of its place in time order; the K servers' logs, each time-sorted,
//! written one after another like `cat server-*.log`). They only reorder:
//! the lines are the same.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::rng::{Rng, splitmix64};
use super::traffic::Event;
use crate::units::Millis;

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

/// A request waiting to be written: when it ends, and its place in the input
/// (requests that end together are written in time order).
struct Pending {
    end: Millis,
    place: u64,
    event: Event,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.end, self.place) == (other.end, other.place)
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.end, self.place).cmp(&(other.end, other.place))
    }
}

/// A time-ordered stream written in the order its requests end (their time
/// plus their request time). A request is written once no later one can end
/// before it: every later request begins at or after the last one read, so
/// only the requests still running are held.
pub struct LoggedAtEnd<I: Iterator<Item = Event>> {
    events: I,
    running: BinaryHeap<Reverse<Pending>>,
    /// When the last request read began (no later one begins before).
    read_to: Millis,
    read: u64,
}

impl<I: Iterator<Item = Event>> LoggedAtEnd<I> {
    /// Wraps a time-ordered stream.
    pub fn new(events: I) -> Self {
        LoggedAtEnd {
            events,
            running: BinaryHeap::new(),
            read_to: Millis::MIN,
            read: 0,
        }
    }
}

impl<I: Iterator<Item = Event>> Iterator for LoggedAtEnd<I> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(Reverse(first)) = self.running.peek()
                && first.end <= self.read_to
            {
                return self.running.pop().map(|Reverse(p)| p.event);
            }
            match self.events.next() {
                Some(event) => {
                    self.read_to = event.ts;
                    let end = event.ts + Millis::from(event.request_time_ms);
                    self.running.push(Reverse(Pending {
                        end,
                        place: self.read,
                        event,
                    }));
                    self.read += 1;
                }
                None => {
                    self.read_to = Millis::MAX;
                    return self.running.pop().map(|Reverse(p)| p.event);
                }
            }
        }
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
    fn requests_are_written_in_the_order_they_end() {
        // Begin at 0, 10, 20, 30 ms; take 50, 5, 1, 0 ms: end at 50, 15, 21, 30.
        let events: Vec<Event> = [(0, 50), (10, 5), (20, 1), (30, 0)]
            .iter()
            .enumerate()
            .map(|(i, &(ts, took))| Event {
                request_time_ms: took,
                ..event(ts, i as u32)
            })
            .collect();
        let out: Vec<u32> = LoggedAtEnd::new(events.into_iter())
            .map(|e| e.profile)
            .collect();
        assert_eq!(out, [1, 2, 3, 0]);
        // Ending together: in time order.
        let tied = vec![
            Event {
                request_time_ms: 10,
                ..event(0, 0)
            },
            Event {
                request_time_ms: 0,
                ..event(10, 1)
            },
        ];
        let out: Vec<u32> = LoggedAtEnd::new(tied.into_iter())
            .map(|e| e.profile)
            .collect();
        assert_eq!(out, [0, 1]);
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
