//! A rule's capacity and span bounds, computed from its [`AlgorithmSpec`]
//! exactly as `export::Shape` computes them from the policy rule, so that each
//! model converts a rule to the numbers `rlctl export` writes (the tests of
//! each model compare them with the exported text). Kept here so the simulation
//! layer never imports the exporters.

use crate::simulate::spec::{AlgorithmKind, AlgorithmSpec};

/// How the rule's family bounds a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Bucket,
    SlidingLog,
    AlignedWindow,
}

fn family_and_capacity(spec: &AlgorithmSpec) -> (Family, u64) {
    let l = spec.limit.requests;
    match spec.kind {
        AlgorithmKind::TokenBucket | AlgorithmKind::Gcra => {
            (Family::Bucket, spec.burst.unwrap_or(l))
        }
        AlgorithmKind::LeakyBucket => (Family::Bucket, spec.burst.unwrap_or(0).saturating_add(1)),
        AlgorithmKind::SlidingLog => (Family::SlidingLog, l),
        AlgorithmKind::FixedWindow | AlgorithmKind::SlidingCounter => {
            (Family::AlignedWindow, l.saturating_mul(2))
        }
    }
}

/// C: how many requests the rule admits at once from an idle client.
pub(crate) fn capacity(spec: &AlgorithmSpec) -> u64 {
    family_and_capacity(spec).1
}

/// ⌈a·b/c⌉ without overflow (saturating).
pub(crate) fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    let q = (u128::from(a) * u128::from(b)).div_ceil(u128::from(c.max(1)));
    u64::try_from(q).unwrap_or(u64::MAX)
}

/// The most the rule admits from one client in any span of `secs` seconds.
pub(crate) fn most_in_span(spec: &AlgorithmSpec, secs: u64) -> u64 {
    let (family, c) = family_and_capacity(spec);
    let (l, w) = (spec.limit.requests, u64::from(spec.limit.window.secs()));
    let bucket = c.saturating_add(mul_div_ceil(l, secs, w)).saturating_sub(1);
    let windows = secs.div_ceil(w);
    match family {
        Family::Bucket => bucket,
        Family::SlidingLog => bucket.min(l.saturating_mul(windows)),
        Family::AlignedWindow => bucket.min(l.saturating_mul(windows + 1)),
    }
}

/// The most the rule admits from one client in one epoch-aligned window of
/// `secs` seconds.
pub(crate) fn most_in_aligned_window(spec: &AlgorithmSpec, secs: u64) -> u64 {
    let (family, _) = family_and_capacity(spec);
    let (l, w) = (spec.limit.requests, u64::from(spec.limit.window.secs()));
    let span = most_in_span(spec, secs);
    if family == Family::Bucket {
        span
    } else if secs.is_multiple_of(w) {
        span.min(l.saturating_mul(secs / w))
    } else if w % secs == 0 {
        span.min(l)
    } else {
        span
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Shape;
    use crate::policy::Policy;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bounds_equal_the_exporters(
            kind in 0usize..6,
            l in 1u64..5000,
            w in prop::sample::select(vec![1u32, 7, 60, 90, 3600, 86_400]),
            burst in prop::option::of(1u64..400),
            span in 1u64..100_000,
        ) {
            let kind = AlgorithmKind::ALL[kind];
            let burst = burst.filter(|_| kind.has_burst());
            let text = format!(
                "[[rule]]\nname='r'\nlimit='{l}/{w}s'\nalgorithm='{kind}'\n{}",
                burst.map(|b| format!("burst={b}")).unwrap_or_default()
            );
            let rules = Policy::parse(&text, "p");
            // Rates nginx cannot express are refused by the policy check.
            prop_assume!(rules.is_ok());
            let rule = &rules.unwrap()[0];
            let shape = Shape::of(rule).unwrap();
            prop_assert_eq!(capacity(&rule.spec), shape.capacity);
            prop_assert_eq!(most_in_span(&rule.spec, span), shape.most_in_span(span));
            prop_assert_eq!(
                most_in_aligned_window(&rule.spec, span),
                shape.most_in_aligned_window(span)
            );
        }
    }
}
