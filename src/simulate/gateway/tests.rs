//! Gateway names, fidelity labels and every gateway's model of every algorithm.

use super::*;
use crate::simulate::{Algorithm, AlgorithmKind};

#[test]
fn names_round_trip_and_models_are_labelled() {
    for g in Gateway::ALL {
        assert_eq!(g.to_string().parse::<Gateway>(), Ok(g));
    }
    assert!("envoy_ratelimit".parse::<Gateway>().is_err());
    assert_eq!(Gateway::AwsWaf.fidelity(), Fidelity::Model);
    assert_eq!(Gateway::Cloudflare.fidelity(), Fidelity::Model);
    assert_eq!(Gateway::Haproxy.fidelity(), Fidelity::Exact);
    let spec = AlgorithmSpec::new(AlgorithmKind::TokenBucket, "10/1m".parse().unwrap());
    let model = Gateway::AwsWaf.model(&spec).unwrap();
    assert!(model.burst_convention().contains("model, not exact"));
}

#[test]
fn every_gateway_models_every_algorithm() {
    for kind in AlgorithmKind::ALL {
        for limit in ["1/1s", "40/1m", "600/1m", "5000/1h", "3/7s"] {
            let spec = AlgorithmSpec::new(kind, limit.parse().unwrap());
            for g in Gateway::ALL {
                let model = g.model(&spec).unwrap();
                assert_eq!(model.kind(), kind);
                assert!(!model.parameters().is_empty());
                assert!(model.instant_capacity() >= 1, "{g} {kind} {limit}");
            }
        }
    }
}

#[test]
fn a_rule_too_large_for_a_gateway_names_its_burst() {
    // Found by review: a burst too large was reported as the limit alone.
    let mut spec = AlgorithmSpec::new(AlgorithmKind::TokenBucket, "1/1s".parse().unwrap());
    spec.burst = Some(1 << 40);
    let message = Gateway::Envoy.model(&spec).err().unwrap().to_string();
    assert_eq!(
        message,
        "envoy: limit 1/1s with burst 1099511627776 is too large for the gateway's counters"
    );
    let huge = AlgorithmSpec::new(
        AlgorithmKind::SlidingLog,
        "18446744073709551615/1s".parse().unwrap(),
    );
    let message = Gateway::Nginx.model(&huge).err().unwrap().to_string();
    assert!(
        message.starts_with("nginx: limit 18446744073709551615/1s is too large"),
        "{message}"
    );
}

#[test]
fn a_fresh_state_takes_its_engine_state_on_first_use() {
    let spec = AlgorithmSpec::new(AlgorithmKind::FixedWindow, "2/1s".parse().unwrap());
    let model = Gateway::Haproxy.model(&spec).unwrap();
    let mut state = State::default();
    assert!(model.decide(&mut state, 1000));
    assert!(matches!(state, State::Haproxy(_)));
}
