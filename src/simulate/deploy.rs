//! What-if scenarios around the replay: several limiter instances behind a load
//! balancer, and traffic compressed in time.
//!
//! N instances each keep their own local state. The balancer assigns every request,
//! in time order, to one instance: round-robin over all requests, random (seeded,
//! deterministic), or by a hash of the client id. Each (instance, key) pair then
//! gets a fresh dense key, and the ordinary [`replay`] does the rest.
//!
//! Randomness comes from a tiny splitmix64, so results are identical everywhere.

use std::fmt;
use std::str::FromStr;

use super::replay::{Decisions, Replay, ReplayError, Replayer, Rule};
use crate::units::{EARLIEST_MS, LATEST_MS, Millis};

/// How the balancer picks an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Balance {
    /// Request i (in time order, over all clients) goes to instance i mod N.
    RoundRobin,
    /// Uniformly random per request, from a seeded generator.
    Random,
    /// A hash of the client id: each client sticks to one instance.
    #[default]
    Hash,
}

impl Balance {
    /// Every strategy with its command-line name.
    pub const ALL: [(Balance, &'static str); 3] = [
        (Balance::RoundRobin, "round-robin"),
        (Balance::Random, "random"),
        (Balance::Hash, "hash"),
    ];
}

impl fmt::Display for Balance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Balance::ALL
            .iter()
            .find(|(b, _)| b == self)
            .map(|(_, n)| *n);
        f.write_str(name.unwrap_or_default())
    }
}

/// An unknown balance strategy or an impossible deployment.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeployError {
    #[error("unknown balance `{0}`: expected round-robin, random or hash")]
    /// Not round-robin, random or hash.
    UnknownBalance(String),
    #[error("a deployment needs at least one instance")]
    /// Zero instances.
    NoInstances,
    #[error(
        "invalid scale {0}: expected a finite number above 0 (2 = twice the traffic in the same time)"
    )]
    /// A time scale that is not a finite number above 0.
    Scale(f64),
    #[error(
        "scale {0:?} stretches the log beyond the years 1 to 9999 that rlctl handles; use a scale closer to 1"
    )]
    /// A scale so small that stretched times leave the accepted range.
    ScaleOutOfRange(f64),
}

impl FromStr for Balance {
    type Err = DeployError;

    fn from_str(text: &str) -> Result<Self, DeployError> {
        Balance::ALL
            .iter()
            .find(|(_, name)| *name == text.trim())
            .map(|(b, _)| *b)
            .ok_or_else(|| DeployError::UnknownBalance(text.to_string()))
    }
}

/// N limiter instances behind a balancer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deployment {
    instances: u32,
    balance: Balance,
    seed: u64,
}

impl Deployment {
    /// `instances` limiters balanced by `balance`; `seed` drives [`Balance::Random`].
    pub fn new(instances: u32, balance: Balance, seed: u64) -> Result<Self, DeployError> {
        if instances == 0 {
            return Err(DeployError::NoInstances);
        }
        Ok(Deployment {
            instances,
            balance,
            seed,
        })
    }

    /// One instance: the plain replay.
    pub fn single() -> Self {
        Deployment {
            instances: 1,
            balance: Balance::Hash,
            seed: 0,
        }
    }

    /// Number of instances.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// The balance strategy.
    pub fn balance(&self) -> Balance {
        self.balance
    }

    /// The instance each request goes to, given each request's client id in time order.
    pub fn assign(&self, client: &[u32]) -> Vec<u32> {
        let n = self.instances;
        match self.balance {
            Balance::RoundRobin => (0..client.len())
                .map(|i| (i as u64 % u64::from(n)) as u32)
                .collect(),
            Balance::Random => {
                let mut rng = SplitMix64(self.seed);
                client.iter().map(|_| pick(rng.next(), n)).collect()
            }
            Balance::Hash => client.iter().map(|&c| pick(mix(u64::from(c)), n)).collect(),
        }
    }
}

/// Replays `rules` as `deployment` would run them: one local state per instance.
/// `client` is each request's client id (used by [`Balance::Hash`]).
pub fn replay_deployed(
    replayer: &mut Replayer,
    rules: &[Rule],
    client: &[u32],
    deployment: &Deployment,
) -> Result<Replay, ReplayError> {
    decide_deployed(replayer, rules, client, deployment).map(Decisions::into_replay)
}

/// [`replay_deployed`], each rule's verdicts kept as the replay found them
/// (see [`Decisions`]).
pub fn decide_deployed(
    replayer: &mut Replayer,
    rules: &[Rule],
    client: &[u32],
    deployment: &Deployment,
) -> Result<Decisions, ReplayError> {
    if deployment.instances == 1 {
        return replayer.decide(rules);
    }
    let events = replayer.times().len();
    if client.len() != events {
        return Err(ReplayError::KeysLength {
            rule: 0,
            keys: client.len(),
            events,
        });
    }
    let instance = deployment.assign(client);
    // One stride for every rule keeps keys that several rules share equal.
    let stride = rules.iter().map(|r| r.key_count).max().unwrap_or(0);
    let key_count = stride * deployment.instances as usize;
    if key_count >= super::NOT_APPLICABLE as usize {
        return Err(ReplayError::TooManyKeys(key_count));
    }
    let columns: Vec<Vec<u32>> = rules
        .iter()
        .map(|rule| per_instance_keys(rule.keys, &instance, stride))
        .collect();
    let split: Vec<Rule> = rules
        .iter()
        .zip(&columns)
        .map(|(rule, keys)| Rule {
            limiter: rule.limiter.clone(),
            keys,
            key_count,
        })
        .collect();
    replayer.decide(&split)
}

/// Key `k` on instance `i` becomes `i · stride + k`; not-applicable stays so.
/// Keys at or above `stride` are left as they are for [`replay`] to report.
fn per_instance_keys(keys: &[u32], instance: &[u32], stride: usize) -> Vec<u32> {
    keys.iter()
        .zip(instance)
        .map(|(&k, &i)| {
            if k == super::NOT_APPLICABLE || k as usize >= stride {
                k
            } else {
                (i as usize * stride + k as usize) as u32
            }
        })
        .collect()
}

/// Traffic `scale` times as dense: t' = t0 + floor((t − t0) / scale), t0 the first
/// timestamp. Order is kept. Times must be in the range ingestion accepts
/// (years 1 to 9999), and so must the stretched ones.
pub fn compress_time(ts: &[Millis], scale: f64) -> Result<Vec<Millis>, DeployError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(DeployError::Scale(scale));
    }
    let Some(&t0) = ts.first() else {
        return Ok(Vec::new());
    };
    let (earliest, latest) = (EARLIEST_MS as f64, LATEST_MS as f64);
    ts.iter()
        .map(|&t| {
            let stretched = t0 as f64 + ((t - t0) as f64 / scale).floor();
            if (earliest..=latest).contains(&stretched) {
                Ok(stretched as i64)
            } else {
                Err(DeployError::ScaleOutOfRange(scale))
            }
        })
        .collect()
}

/// The splitmix64 generator (Steele, Lea, Flood 2014).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
}

/// splitmix64's output function, a good 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps a 64-bit hash to 0..n without modulo bias worth mentioning.
fn pick(hash: u64, n: u32) -> u32 {
    ((u128::from(hash) * u128::from(n)) >> 64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::{AlgorithmSpec, Limiter};

    fn limiter(kind: &str, limit: &str) -> Limiter {
        AlgorithmSpec::new(kind.parse().unwrap(), limit.parse().unwrap())
            .limiter()
            .unwrap()
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // Reference values for seed 1234567 from the published C implementation.
        let mut rng = SplitMix64(1_234_567);
        let got: Vec<u64> = (0..3).map(|_| rng.next()).collect();
        assert_eq!(
            got,
            vec![
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn balancing_strategies() {
        let clients = [7, 7, 3, 7, 3, 9];
        let rr = Deployment::new(2, Balance::RoundRobin, 0).unwrap();
        assert_eq!(rr.assign(&clients), vec![0, 1, 0, 1, 0, 1]);
        let hash = Deployment::new(3, Balance::Hash, 0)
            .unwrap()
            .assign(&clients);
        assert_eq!(hash[0], hash[1]);
        assert_eq!(hash[0], hash[3]);
        assert_eq!(hash[2], hash[4]);
        let random = Deployment::new(4, Balance::Random, 42).unwrap();
        assert_eq!(random.assign(&clients), random.assign(&clients));
        assert!(random.assign(&clients).iter().all(|&i| i < 4));
        let other_seed = Deployment::new(4, Balance::Random, 43).unwrap();
        let many = vec![0; 64];
        assert_ne!(random.assign(&many), other_seed.assign(&many));
        assert_eq!(
            Deployment::new(0, Balance::Hash, 0),
            Err(DeployError::NoInstances)
        );
        assert_eq!("round-robin".parse::<Balance>(), Ok(Balance::RoundRobin));
        assert_eq!(Balance::Random.to_string(), "random");
        assert!("sticky".parse::<Balance>().is_err());
    }

    #[test]
    fn two_round_robin_instances_admit_twice_the_limit() {
        // fixed-window 3/1s, one client, 10 requests in the same second. One
        // instance admits 3; two round-robin instances see 5 each and admit 3 each.
        let ts: Vec<Millis> = (0..10).collect();
        let keys = vec![0u32; 10];
        let rules = [Rule {
            limiter: limiter("fixed-window", "3/1s"),
            keys: &keys,
            key_count: 1,
        }];
        let one = replay_deployed(
            &mut Replayer::new(&ts),
            &rules,
            &keys,
            &Deployment::single(),
        )
        .unwrap();
        assert_eq!(one.allowed_count(), 3);
        let rr = Deployment::new(2, Balance::RoundRobin, 0).unwrap();
        let two = replay_deployed(&mut Replayer::new(&ts), &rules, &keys, &rr).unwrap();
        assert_eq!(two.allowed_count(), 6);
        // Instance 0 gets requests 0, 2, 4, ...: the first three of each admitted.
        let admitted: Vec<usize> = (0..10).filter(|&i| two.allowed[i]).collect();
        assert_eq!(admitted, vec![0, 1, 2, 3, 4, 5]);
        // Hashing sends the single client to one instance: back to 3.
        let hash = Deployment::new(2, Balance::Hash, 0).unwrap();
        assert_eq!(
            replay_deployed(&mut Replayer::new(&ts), &rules, &keys, &hash)
                .unwrap()
                .allowed_count(),
            3
        );
    }

    #[test]
    fn time_compression() {
        // Scale 2: gaps halve, floored to the ms; the first timestamp stays.
        let ts = [1000, 1001, 1003, 2000, 4001];
        assert_eq!(
            compress_time(&ts, 2.0).unwrap(),
            vec![1000, 1000, 1001, 1500, 2500]
        );
        assert_eq!(
            compress_time(&ts, 0.5).unwrap(),
            vec![1000, 1002, 1006, 3000, 7002]
        );
        assert_eq!(compress_time(&ts, 1.0).unwrap(), ts.to_vec());
        assert!(compress_time(&ts, 0.0).is_err());
        assert!(compress_time(&ts, f64::NAN).is_err());
        assert!(compress_time(&[], 3.0).unwrap().is_empty());
        // Found by review: a tiny scale overflowed (a panic in debug builds,
        // times out of order in release).
        let far = [1_767_571_200_000, 1_767_571_201_000];
        assert_eq!(
            compress_time(&far, 1e-300),
            Err(DeployError::ScaleOutOfRange(1e-300))
        );
        assert!(compress_time(&far, 1e-12).is_err());
        assert_eq!(
            compress_time(&far, 1e-6).unwrap()[1],
            1_767_571_200_000 + 1_000_000_000
        );
    }
}
