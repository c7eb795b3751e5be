use super::*;
use crate::export::{ExportOptions, Exporter, envoy::Envoy, envoy::duration};
use crate::policy::Policy;
use crate::simulate::test_util::{check_idle_drops, decisions, expect};

fn params(max: u64, per_fill: u64, interval: u64) -> Params {
    Params {
        max_tokens: max,
        tokens_per_fill: per_fill,
        fill_interval_ms: interval,
    }
}

#[test]
fn token_fill_matches_the_exported_text() {
    for (limit, burst) in [("40/1m", Some(7)), ("600/1s", None), ("7/90s", None)] {
        let text = format!(
            "[[rule]]\nname='g'\nlimit='{limit}'\n{}",
            burst.map(|b| format!("burst={b}")).unwrap_or_default()
        );
        let rules = Policy::parse(&text, "p").unwrap();
        let out = Envoy.render(&rules, &ExportOptions::default()).unwrap();
        let p = Params::of(&rules[0].spec).unwrap();
        let line = format!(
            "token_bucket: {{max_tokens: {}, tokens_per_fill: {}, fill_interval: {}}}",
            p.max_tokens,
            p.tokens_per_fill,
            duration(p.fill_interval_ms)
        );
        assert!(out.contains(&line), "{line}\n{out}");
    }
    // 600/1s: 30 tokens per 50 ms, 29 extra tokens of capacity.
    let rules = Policy::parse("[[rule]]\nname='g'\nlimit='600/1s'", "p").unwrap();
    assert_eq!(Params::of(&rules[0].spec), Some(params(629, 30, 50)));
}

#[test]
fn continuous_refill_on_access_from_a_full_bucket() {
    // 2 tokens, 1 per 1000 ms (rate 1.0/s). Starts full.
    //   t=0, 0        2 → 1 → 0: admitted twice
    //   t=0           0 tokens: rejected
    //   t=500         0.5: rejected (nothing stored)
    //   t=999         0.999: rejected
    //   t=1000        1.0: admitted, time = 1.0 − 0 = 1.0
    //   t=1500        0.5: rejected
    //   t=3500        min(2, 2.5) = 2: admitted (time = 3.5 − 1 = 2.5)
    //   t=3500        1: admitted
    //   t=3500        0: rejected
    let alg = Continuous::new(params(2, 1, 1000));
    let times = [0, 0, 0, 500, 999, 1000, 1500, 3500, 3500, 3500];
    assert_eq!(decisions(&alg, &times), expect("yy nnn y n yy n"));
}

#[test]
fn continuous_fill_is_in_doubles() {
    // 1 token, 1 per 300 ms: fill_rate = 1 / (300 / 1000.0) = 3.3333333333333335.
    // Admitted at 0 from full (time becomes 0.0); at 299 ms the bucket holds
    // 0.299·3.3333333333333335 = 0.9966…: rejected; at 300 ms
    // 0.3·3.3333333333333335 rounds to exactly 1.0: admitted.
    let alg = Continuous::new(params(1, 1, 300));
    assert_eq!(decisions(&alg, &[0, 299, 300]), expect("y n y"));
    let fill = params(1, 1, 300).fill_rate();
    assert_eq!(fill, 1.0 / 0.3);
    assert!((0.3 - 0.0) * fill >= 1.0);
}

#[test]
fn a_new_bucket_is_full_at_epoch_times() {
    // 1 token per 300 ms. Setting the time max_tokens/fill_rate back and
    // subtracting again rounds on the grid of an epoch-sized `now`: here
    // below one token, which would reject the first request.
    let p = params(1, 1, 300);
    let now = 1_764_500_000.123_f64;
    let fill = p.fill_rate();
    assert!((now - (now - 1.0 / fill)) * fill < 1.0);
    let alg = Continuous::new(p);
    let t = 1_764_500_000_123;
    assert_eq!(
        decisions(&alg, &[t, t, t + 299, t + 300]),
        expect("y n n y")
    );
}

#[test]
fn a_bucket_is_idle_once_full_again() {
    // 2 tokens, 1 per second: after two requests at t it is full at t + 2 s.
    let cont = Continuous::new(params(2, 1, 1000));
    let timer = Timer::new(params(2, 1, 1000));
    let t = 1_764_500_000_000;
    let (mut c, mut s) = (ContinuousState::default(), TimerState::default());
    assert!(cont.is_idle(&c, t) && timer.is_idle(&s, t));
    for _ in 0..2 {
        cont.decide(&mut c, t);
        timer.decide(&mut s, t);
    }
    assert!(!cont.is_idle(&c, t + 1999) && cont.is_idle(&c, t + 2000));
    // The timer adds a token at each whole second.
    assert!(!timer.is_idle(&s, t + 1999) && timer.is_idle(&s, t + 2000));
    assert!(check_idle_drops(&cont, &[t, t, t + 500, t + 2600, t + 9000]) >= 2);
    assert!(check_idle_drops(&timer, &[t, t, t + 500, t + 2600, t + 9000]) >= 2);
}

#[test]
fn timer_fill_adds_tokens_on_ticks() {
    // 2 tokens, +1 every 1000 ms tick (epoch-aligned). Full at first request.
    //   t=900, 900  2 → 0: admitted twice
    //   t=999       no tick yet: rejected
    //   t=1000      tick 1: 1 token: admitted
    //   t=1999      rejected
    //   t=5000      ticks 2..5: +4, capped at 2: admitted twice, then rejected
    let alg = Timer::new(params(2, 1, 1000));
    let times = [900, 900, 999, 1000, 1999, 5000, 5000, 5000];
    assert_eq!(decisions(&alg, &times), expect("yy n y n yy n"));
}

#[test]
fn timer_and_continuous_differ_on_a_tick_boundary() {
    // The bucket emptied at t=900: the timer refills at t=1000 (100 ms
    // later), the continuous bucket only a full second later, at t=1900
    // (0 + (1900 − 900)/1000.0 · 1.0 = 1.0 token: whole, admitted).
    let cont = Continuous::new(params(1, 1, 1000));
    let timer = Timer::new(params(1, 1, 1000));
    assert_eq!(
        decisions(&cont, &[900, 1000, 1899, 1900, 1901]),
        expect("y n n y n")
    );
    assert_eq!(
        decisions(&timer, &[900, 1000, 1899, 1900, 1901]),
        expect("y y n n n")
    );
}

#[test]
fn a_bucket_full_again_admits_max_tokens_at_one_instant() {
    // 3/1s burst 2 as exported: 2 tokens, 1 per 300 ms. At epoch times:
    //   t0        new bucket, 2 tokens → 1 left: admitted
    //   t0 + 10 s 1 + 10·3.33… = 34.3, capped at 2 → 1 left: admitted
    //   t0 + 10 s 1 token (same instant, nothing added): admitted
    //   t0 + 10 s 0 tokens: rejected
    let rules = Policy::parse(
        "[[rule]]\nname='global'\nkey='ip'\nlimit='3/1s'\nburst=2\nalgorithm='token-bucket'",
        "p",
    )
    .unwrap();
    let p = Params::of(&rules[0].spec).unwrap();
    assert_eq!(p, params(2, 1, 300));
    let t0 = 1_767_571_200_000;
    let alg = Continuous::new(p);
    assert_eq!(
        decisions(&alg, &[t0, t0 + 10_000, t0 + 10_000, t0 + 10_000]),
        expect("y yy n")
    );
    // Envoy's `time` in epoch seconds, as the replay once kept it, rounds
    // on a grid of 2⁻²² s there: the second request would find 0.99999985
    // tokens.
    let (now, fill) = (1_767_571_210.0_f64, p.fill_rate());
    let time = now - (2.0 - 1.0) / fill;
    assert!((now - time) * fill < 1.0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// At any epoch-sized time, whatever went before, a bucket idle for
    /// `max_tokens / fill_rate` seconds admits exactly `max_tokens`
    /// requests in one instant, and no more.
    #[test]
    fn an_idle_bucket_admits_max_tokens_at_once(
        requests in 1u64..2_000,
        secs in proptest::sample::select(vec![1u32, 2, 7, 60, 90, 3_600]),
        burst in proptest::option::of(1u64..200),
        // 2024-01-01 to 2028-01-01, in ms.
        start in 1_704_067_200_000i64..1_830_297_600_000,
        before in proptest::collection::vec(0i64..400, 0..20),
    ) {
        let text = format!(
            "[[rule]]\nname='g'\nlimit='{requests}/{secs}s'\nalgorithm='token-bucket'\n{}",
            burst.map(|b| format!("burst={b}")).unwrap_or_default()
        );
        let rules = Policy::parse(&text, "p").unwrap();
        let p = Params::of(&rules[0].spec).unwrap();
        let alg = Continuous::new(p);
        let mut state = ContinuousState::default();
        let mut t = start;
        for gap in before {
            t += gap;
            alg.decide(&mut state, t);
        }
        // Idle long enough to refill from empty, plus a millisecond.
        let refill = (p.max_tokens * p.fill_interval_ms).div_ceil(p.tokens_per_fill);
        let at = t + refill as i64 + 1;
        proptest::prop_assert!(alg.is_idle(&state, at));
        for n in 0..p.max_tokens {
            proptest::prop_assert!(alg.decide(&mut state, at), "request {} of {:?} at {}", n + 1, p, at);
        }
        proptest::prop_assert!(!alg.decide(&mut state, at));
    }
}
