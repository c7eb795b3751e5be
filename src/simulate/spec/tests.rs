use super::*;

fn spec(kind: &str, limit: &str, burst: Option<u64>) -> AlgorithmSpec {
    AlgorithmSpec {
        burst,
        ..AlgorithmSpec::new(kind.parse().unwrap(), limit.parse().unwrap())
    }
}

#[test]
fn names_round_trip() {
    for kind in AlgorithmKind::ALL {
        assert_eq!(kind.to_string().parse::<AlgorithmKind>(), Ok(kind));
    }
    assert_eq!(AlgorithmKind::ALL.len(), 6);
    assert!("token_bucket".parse::<AlgorithmKind>().is_err());
    let json = serde_json::to_string(&AlgorithmKind::SlidingCounter).unwrap();
    assert_eq!(json, "\"sliding-counter\"");
}

#[test]
fn burst_is_rejected_where_it_does_not_apply() {
    for kind in ["fixed-window", "sliding-log", "sliding-counter"] {
        let err = spec(kind, "10/s", Some(5)).limiter().unwrap_err();
        assert!(
            matches!(err, SpecError::BurstNotApplicable { .. }),
            "{kind}"
        );
        assert!(err.to_string().contains("no burst"));
        assert!(spec(kind, "10/s", None).limiter().is_ok());
    }
    for kind in ["token-bucket", "gcra", "leaky-bucket"] {
        assert!(spec(kind, "10/s", Some(5)).limiter().is_ok(), "{kind}");
    }
}

#[test]
fn delay_only_for_the_leaky_bucket() {
    let mut s = spec("token-bucket", "10/s", None);
    s.delay = Some(Delay::NoDelay);
    assert_eq!(
        s.limiter().unwrap_err(),
        SpecError::DelayNotApplicable {
            kind: AlgorithmKind::TokenBucket
        }
    );
    s.kind = AlgorithmKind::LeakyBucket;
    assert!(s.limiter().is_ok());
}

#[test]
fn defaults_and_invalid_bursts() {
    assert_eq!(
        spec("token-bucket", "600/1m", None).effective_burst(),
        Some(600)
    );
    assert_eq!(spec("gcra", "600/1m", None).effective_burst(), Some(600));
    assert_eq!(
        spec("leaky-bucket", "600/1m", None).effective_burst(),
        Some(0)
    );
    assert_eq!(spec("fixed-window", "600/1m", None).effective_burst(), None);
    for kind in ["token-bucket", "gcra"] {
        let err = spec(kind, "10/s", Some(0)).limiter().unwrap_err();
        assert!(matches!(err, SpecError::ZeroBurst { .. }), "{kind}");
        // Says where a burst of 0 belongs (`--algo all --burst 0` fails here).
        assert!(err.to_string().contains("only leaky-bucket"), "{err}");
    }
    assert!(spec("leaky-bucket", "10/s", Some(0)).limiter().is_ok());
    let huge = spec("token-bucket", "10/1h", Some(u64::MAX / 2));
    assert!(matches!(huge.limiter(), Err(SpecError::TooLarge { .. })));
}

#[test]
fn leaky_rate_must_be_expressible_in_nginx() {
    // 1/1h: 1·1000/3600 = 0 milli-requests per second.
    let err = spec("leaky-bucket", "1/1h", None).limiter().unwrap_err();
    assert!(err.to_string().contains("1r/m"), "{err}");
    // 1r/m: 1000/60 = 16, the slowest rate nginx can be configured with.
    assert!(spec("leaky-bucket", "1/1m", None).limiter().is_ok());
}

#[test]
fn instant_capacity_follows_each_convention() {
    let cap = |kind: &str, burst| {
        spec(kind, "10/s", burst)
            .limiter()
            .unwrap()
            .instant_capacity()
    };
    assert_eq!(cap("fixed-window", None), 10);
    assert_eq!(cap("sliding-log", None), 10);
    assert_eq!(cap("sliding-counter", None), 10);
    assert_eq!(cap("token-bucket", Some(4)), 4);
    assert_eq!(cap("gcra", Some(4)), 4);
    assert_eq!(cap("leaky-bucket", Some(4)), 5);
    assert_eq!(cap("leaky-bucket", None), 1);
}
