//! HAProxy as `rlctl export --target haproxy` configures it: a stick table per
//! key and window storing `gpc_rate(n, W)`, `http-request deny if {
//! sc_gpc_rate(i,sc) gt T }` with T = C + L − 1, and `sc-inc-gpc(i,sc)` after
//! every deny, so only requests that pass every rule are counted (the exported
//! config increments a counter itself rather than using `http_req_rate`, which
//! the tracking would feed before the deny).
//!
//! HAProxy's `freq_ctr` (HAProxy 2.6, `include/haproxy/freq_ctr.h`:
//! `update_freq_ctr_period`, `read_freq_ctr_period`; `src/freq_ctr.c`:
//! `freq_ctr_total`), in millisecond ticks:
//! - increment at `now`: when `now − curr_tick < period`, `curr += 1`; else
//!   rotate: `prev = curr`, `curr = 1`, `curr_tick += period`, and when
//!   `now − curr_tick ≥ period` still (two periods missed) `prev = 0` and
//!   `curr_tick = now`; the tick is stored with its lowest bit cleared
//!   (`curr_tick & ~1`: that bit is the rotation's lock), so such a period
//!   starts on the even millisecond at or before `now`. A new entry (all zero)
//!   therefore starts its first period at its first counted request, or the
//!   millisecond before it when that is odd: periods are relative to the
//!   entry, not the epoch (HAProxy 2.6's tick is the date in ms, cut to 32
//!   bits, so its parity is the logged time's);
//! - read at `now`: `remain = curr_tick + period − now`; when `remain < 0`,
//!   `remain += period`, `past = curr` if `remain ≥ 0` else 0, `curr = 0`
//!   (else `past = prev`); when `curr = 0` and `past ≤ 1` the rate is `past`
//!   (flapping correction); else `⌊(past·remain + curr·period) / period⌋`.
//!
//! [`FreqCtr::tracked`] models the other common configuration, the one issue 15
//! describes: `store http_req_rate(W)` and `deny if { sc_http_req_rate(0) gt T
//! }`. There the `track-sc` action itself counts the request
//! (`http_action_track_sc` in `src/http_act.c` updates `http_req_rate` when it
//! tracks), before the deny is evaluated: the rate read includes the request,
//! and denied requests count. Gateway `haproxy-req-rate`, same threshold T.
//!
//! Not reproduced: HAProxy's 32-bit tick wraps (an entry idle for 24.8 days
//! has expired anyway: the table expires entries after 2W), and the gap between
//! the clock read for the decision and the accept date a log shows (both in
//! whole ms from the same poll loop; requests within a millisecond of a period
//! boundary or of a change of the rate's integer part can fall either way).

/// The bytes of a text key the exported tables keep (`type string len 128`).
pub const STRING_KEY_BYTES: usize = 128;

use super::bounds::capacity;
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// One rule's counter: `gpc_rate(_, W)` and its deny threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqCtr {
    /// W in ms.
    period: i64,
    /// Deny when the rate read is above this.
    threshold: u64,
    /// `http_req_rate` tracking: every request counted before the deny.
    counts_every_request: bool,
}

/// HAProxy's `struct freq_ctr` for one entry; `seen` is false while all zero.
#[derive(Debug, Clone, Default)]
pub struct State {
    curr_tick: Millis,
    curr: u64,
    prev: u64,
    seen: bool,
}

impl FreqCtr {
    /// The exported counter of `spec`: period W, threshold C + L − 1.
    pub fn of(spec: &AlgorithmSpec) -> FreqCtr {
        FreqCtr {
            period: spec.limit.window.millis(),
            threshold: capacity(spec)
                .saturating_add(spec.limit.requests)
                .saturating_sub(1),
            counts_every_request: false,
        }
    }

    /// The same threshold on `http_req_rate(W)`, which `track-sc` feeds with
    /// every request before the deny runs.
    pub fn tracked(spec: &AlgorithmSpec) -> FreqCtr {
        FreqCtr {
            counts_every_request: true,
            ..FreqCtr::of(spec)
        }
    }

    /// The deny threshold T (`gt T`).
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// `read_freq_ctr_period` at `now`.
    pub fn read(&self, state: &State, now: Millis) -> u64 {
        if !state.seen {
            return 0;
        }
        let period = self.period;
        let mut remain = state.curr_tick + period - now;
        let (mut past, mut curr) = (state.prev, state.curr);
        if remain < 0 {
            remain += period;
            past = if remain >= 0 { curr } else { 0 };
            curr = 0;
        }
        if curr == 0 && past <= 1 {
            return past;
        }
        // remain ≤ period here (times do not decrease), so this is at most
        // (past + curr)·period: computed in 128 bits to stay exact.
        let total = u128::from(past) * remain as u128 + u128::from(curr) * period as u128;
        u64::try_from(total / period as u128).unwrap_or(u64::MAX)
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        if self.counts_every_request {
            format!(
                "stick-table http_req_rate period {}s, deny if sc_http_req_rate gt {}; every request counted when tracked",
                self.period / 1000,
                self.threshold
            )
        } else {
            format!(
                "stick-table gpc_rate period {}s, deny if sc_gpc_rate gt {}; only passed requests counted",
                self.period / 1000,
                self.threshold
            )
        }
    }

    /// `update_freq_ctr_period(ctr, period, 1)` at `t`.
    fn increment(&self, state: &mut State, t: Millis) {
        if !state.seen {
            *state = State {
                curr_tick: t & !1,
                curr: 1,
                prev: 0,
                seen: true,
            };
        } else if t - state.curr_tick < self.period {
            state.curr += 1;
        } else {
            state.prev = state.curr;
            state.curr = 1;
            state.curr_tick += self.period;
            if t - state.curr_tick >= self.period {
                state.prev = 0;
                state.curr_tick = t & !1;
            }
        }
    }
}

impl Algorithm for FreqCtr {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        if self.counts_every_request {
            let mut tracked = state.clone();
            self.increment(&mut tracked, t);
            self.read(&tracked, t) <= self.threshold
        } else {
            self.read(state, t) <= self.threshold
        }
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        self.increment(state, t);
        0
    }

    fn rejected(&self, state: &mut State, t: Millis) {
        if self.counts_every_request {
            self.increment(state, t);
        }
    }

    /// More than two periods after `curr_tick` the counter reads 0 and the
    /// next increment restarts it at `{t, 1, 0}`, as from all zero (at exactly
    /// two periods the flapping correction may still read `curr`).
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        !state.seen || t - state.curr_tick > 2 * self.period
    }

    fn instant_capacity(&self) -> u64 {
        if self.counts_every_request {
            self.threshold
        } else {
            self.threshold.saturating_add(1)
        }
    }

    fn burst_convention(&self) -> String {
        format!(
            "HAProxy {} over {}s, deny above {}: admits {} at once, periods start at the entry's first counted request",
            if self.counts_every_request {
                "http_req_rate (every request counted)"
            } else {
                "gpc_rate"
            },
            self.period / 1000,
            self.threshold,
            self.instant_capacity()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportOptions, Exporter, haproxy::Haproxy};
    use crate::policy::Policy;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect};

    fn ctr(period_s: i64, threshold: u64) -> FreqCtr {
        FreqCtr {
            period: period_s * 1000,
            threshold,
            counts_every_request: false,
        }
    }

    #[test]
    fn threshold_and_period_match_the_exported_text() {
        let rules = Policy::parse(
            "[[rule]]\nname='g'\nlimit='40/1m'\nburst=7\n[[rule]]\nname='w'\nlimit='100/1m'\nalgorithm='fixed-window'",
            "p",
        )
        .unwrap();
        let out = Haproxy.render(&rules, &ExportOptions::default()).unwrap();
        for (i, rule) in rules.iter().enumerate() {
            let c = FreqCtr::of(&rule.spec);
            assert!(
                out.contains(&format!("sc_gpc_rate({i},0) gt {} }}", c.threshold())),
                "{out}"
            );
        }
        assert!(out.contains("gpc_rate(2,60s)"));
        assert_eq!(FreqCtr::of(&rules[0].spec).threshold(), 46);
        assert_eq!(FreqCtr::of(&rules[1].spec).threshold(), 299);
        assert_eq!(rules[0].spec.kind, AlgorithmKind::TokenBucket);
    }

    #[test]
    fn periods_start_at_the_first_counted_request_not_the_epoch() {
        // Period 10 s, deny above 2 (3 per period at once). First request at
        // t=7000: the period is [7000, 17000), not [0, 10000).
        //   7000, 7001, 7002          reads 0, 1, 2: admitted (curr 3)
        //   9999 (epoch window 0)     reads 3 > 2: denied
        //   10500 (epoch window 1)    same entry period: 3: denied (an epoch
        //                             window would have restarted)
        //   17000  rotate on read: remain = 7000+10000−17000 = 0 → past 3, curr 0,
        //          ⌊3·0/10000⌋ … remain < 0? no (0): past = prev = 0, curr 3:
        //          rate ⌊(0 + 3·10000)/10000⌋ = 3: denied
        //   17001  remain −1 → +10000 = 9999, past = 3, curr 0: ⌊3·9999/10000⌋ = 2: admitted
        //          (rotates: prev 3, curr 1, tick 17000)
        //   17002  remain 9998: ⌊(3·9998 + 1·10000)/10000⌋ = 3: denied
        let alg = ctr(10, 2);
        let times = [7000, 7001, 7002, 9999, 10_500, 17_000, 17_001, 17_002];
        assert_eq!(decisions(&alg, &times), expect("yyy n n n y n"));
    }

    #[test]
    fn a_period_starts_on_the_even_millisecond_at_or_before_the_first_request() {
        // Found by review against HAProxy 2.6.12: the tick is stored as
        // `curr_tick & ~1`. Period 1 s, deny above 3, four requests at 1 ms:
        // the period starts at 0, so at 1001 it has rotated (remain 999:
        // ⌊4·999/1000⌋ = 3, admitted), and at 1002 the rate is
        // ⌊(4·998 + 1·1000)/1000⌋ = 4: denied. Started at 1, 1001 would read
        // 4 (denied) and 1002 admit.
        let alg = ctr(1, 3);
        assert_eq!(
            decisions(&alg, &[1, 1, 1, 1, 1001, 1002]),
            expect("yyyy y n")
        );
        // From an even start the period is the request's own.
        assert_eq!(
            decisions(&alg, &[2, 2, 2, 2, 1002, 1003]),
            expect("yyyy n y")
        );
    }

    #[test]
    fn denied_requests_are_not_counted_in_the_exported_config() {
        // Deny above 0. Denied requests do not count, yet the flapping correction
        // (curr 0 and past ≤ 1 reads as past) holds the rate at 1 for a whole
        // period after the one with the admitted request:
        //   0        admitted (tick 0, curr 1)
        //   1..9000  remain > 0, past 0, curr 1 → 1: denied
        //   10000    remain 0 → past prev 0, curr 1 → 1: denied
        //   10001    remain −1 → 9999, past = curr = 1, curr 0 → flapping: 1: denied
        //   20001    remain −10001 → −1 < 0 → past 0: rate 0: admitted
        let alg = ctr(10, 0);
        let times = [0, 1, 5000, 9000, 10_000, 10_001, 20_001];
        assert_eq!(decisions(&alg, &times), expect("y nnn n n y"));
    }

    #[test]
    fn an_entry_is_idle_only_after_two_whole_periods() {
        // One request at 0 (curr_tick 0, curr 1), period 10 s. At exactly
        // 20 s the read still gives 1 (remain = 0: past = curr, flapping
        // correction), where a new entry reads 0; from 20.001 s it reads 0
        // and the next increment restarts the entry as a new one.
        let alg = ctr(10, 5);
        let mut state = State::default();
        assert!(alg.is_idle(&state, 0));
        alg.decide(&mut state, 0);
        assert_eq!(alg.read(&state, 20_000), 1);
        assert!(!alg.is_idle(&state, 20_000));
        assert!(alg.is_idle(&state, 20_001));
        let times = [0, 0, 5, 20_000, 20_000, 40_001, 40_002, 90_000];
        assert!(check_idle_drops(&alg, &times) >= 3);
        let tracked = FreqCtr {
            counts_every_request: true,
            ..ctr(1, 1)
        };
        assert!(check_idle_drops(&tracked, &[0, 0, 0, 1_000, 2_000, 2_001, 9_000]) >= 2);
    }

    #[test]
    fn two_missed_periods_reset_the_previous_count() {
        // Deny above 3. t=0..3 (4 counted). t=25000: read: remain −15000 → −5000
        // < 0: past 0 → rate 0: admitted; update: rotate, tick 10000, still
        // 15000 ≥ period → prev 0, tick 25000. Then 3 more admitted, the 5th denied.
        let alg = ctr(10, 3);
        let times = [0, 1, 2, 3, 4, 25_000, 25_001, 25_002, 25_003, 25_004];
        assert_eq!(decisions(&alg, &times), expect("yyyy n yyyy n"));
    }

    #[test]
    fn the_rate_weights_the_previous_period_by_what_remains() {
        // Deny above 9; 10 counted in [0, 1000) (period 1 s).
        // t=1500: remain −500 → 500, past 10, curr 0: ⌊10·500/1000⌋ = 5: admitted;
        // rotate: prev 10, curr 1, tick 1000. t=1500 ×4 more: ⌊(10·500 + c·1000)/1000⌋
        // = 5 + c ≤ 9 for c ≤ 4: admitted up to curr 5; the next (5+5=10) is denied.
        let alg = ctr(1, 9);
        let mut times = vec![0; 10];
        times.extend([1500; 6]);
        assert_eq!(decisions(&alg, &times), expect("yyyyyyyyyy yyyyy n"));
    }

    #[test]
    fn tracked_http_req_rate_counts_denied_requests() {
        // http_req_rate(10s), deny above 2: the rate read includes the request.
        //   0, 1       counted → 1, 2: admitted
        //   2          counted → 3 > 2: denied (still counted)
        //   5000..     3, 4, … : denied, each counted
        //   10 001     rotate: prev = 5 (0, 1, 2, 5000, 9000), curr 1, remain 9999:
        //              ⌊(5·9999 + 10000)/10000⌋ = 5: denied (gpc_rate, which
        //              counted only 3, reads ⌊3·9999/10000⌋ = 2 and admits)
        //   20 002     prev 1 (10 001), curr 1, remain 9998:
        //              ⌊(9998 + 10000)/10000⌋ = 1: admitted
        let tracked = FreqCtr {
            counts_every_request: true,
            ..ctr(10, 2)
        };
        let times = [0, 1, 2, 5000, 9000, 10_001, 20_002];
        assert_eq!(decisions(&tracked, &times), expect("yy nnn n y"));
        assert_eq!(decisions(&ctr(10, 2), &times), expect("yyy nn y y"));
    }
}
