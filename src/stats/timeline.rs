//! Traffic over time, per epoch-aligned minute: all requests, and the busiest
//! client's largest count in one second (what a per-client limit meets).

use rustc_hash::FxHashMap;

use crate::events::{EventTable, Id};
use crate::units::Millis;

/// One minute of traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinutePoint {
    /// Start of the minute, ms since the epoch.
    pub minute: Millis,
    pub requests: u64,
    /// The largest number of requests any one client made in one second of it.
    pub busiest_client_second: u64,
}

/// The per-minute series of a time-ordered table.
pub fn per_minute(table: &EventTable) -> Vec<MinutePoint> {
    let mut points: Vec<MinutePoint> = Vec::new();
    let mut second = i64::MIN;
    let mut in_second: FxHashMap<Id, u64> = FxHashMap::default();
    for (&t, &client) in table.ts.iter().zip(&table.client) {
        let minute = t.div_euclid(60_000) * 60_000;
        if points.last().is_none_or(|p| p.minute != minute) {
            points.push(MinutePoint {
                minute,
                requests: 0,
                busiest_client_second: 0,
            });
        }
        let s = t.div_euclid(1000);
        if s != second {
            second = s;
            in_second.clear();
        }
        let count = in_second.entry(client).or_default();
        *count += 1;
        let point = points.last_mut().expect("pushed above");
        point.requests += 1;
        point.busiest_client_second = point.busiest_client_second.max(*count);
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;

    #[test]
    fn minutes_by_hand() {
        let mut t = EventTable::default();
        let (a, b) = (t.clients.intern("a"), t.clients.intern("b"));
        for (ts, client) in [
            (0, a),
            (100, a),
            (200, b),
            (999, a),
            (1_000, a),
            (61_000, b),
        ] {
            t.push(Event {
                ts,
                client,
                ..Event::default()
            });
        }
        let points = per_minute(&t);
        assert_eq!(
            points,
            vec![
                MinutePoint {
                    minute: 0,
                    requests: 5,
                    busiest_client_second: 3
                },
                MinutePoint {
                    minute: 60_000,
                    requests: 1,
                    busiest_client_second: 1
                },
            ]
        );
    }
}
