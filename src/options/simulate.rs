//! Settings of `rlctl simulate`: where the limits come from (`--limit`,
//! `--policy`, or the recommendation), which algorithms, and the deployment.

use std::path::PathBuf;

use super::{OptionsError, Sink, ingest_settings, output_format, routes_settings, use_colour};
use crate::analysis::{AnalysisSettings, RecommendOptions};
use crate::cli::SimulateArgs;
use crate::discover::{DiscoverChoice, TemplateSet};
use crate::ingest::key::KeySet;
use crate::ingest::{self, KeptPaths};
use crate::output;
use crate::policy::exempt::add_key_columns;
use crate::policy::{CheckedPolicy, CheckedRule, Exemption, Policy};
use crate::scenario::{AlgoChoice, AlgoOptions};
use crate::simulate::gateway::Gateway;
use crate::simulate::{AlgorithmKind, Delay, Deployment};
use crate::stats::StatsSettings;
use crate::units::Limit;

/// Where the limits come from.
#[derive(Debug, Clone)]
pub enum LimitSource {
    /// `--limit L/W [--burst B]`, keyed by `--key`.
    Single { limit: Limit },
    /// `--policy FILE`.
    Policy {
        origin: String,
        rules: Vec<CheckedRule>,
        /// Its exempt rules: the requests they match are never limited.
        exemptions: Vec<Exemption>,
    },
    /// The policy `rlctl analyze` recommends for the same log.
    Recommended(Box<AnalysisSettings>),
}

/// Validated settings of `rlctl simulate`.
#[derive(Debug, Clone)]
pub struct SimulateSettings {
    pub ingest: ingest::Settings,
    /// `--routes`: the templates endpoints are named by (with the
    /// recommendation, the analysis applies them; else the replay does).
    pub routes: Option<TemplateSet>,
    /// `--discover`: without routes, name endpoints by discovered templates.
    pub discover: DiscoverChoice,
    pub source: LimitSource,
    pub algos: AlgoOptions,
    /// `--gateway`: the gateways to replay the rules as (empty: none); with
    /// `all`, the policy's own scenario comes first.
    pub gateways: Vec<Gateway>,
    pub deployment: Deployment,
    pub scale: Option<f64>,
    pub decisions: Option<PathBuf>,
    pub compare_logged: bool,
    pub top: usize,
    /// `--events FILE`: replay an event table instead of reading logs.
    pub events: Option<PathBuf>,
    /// `--key-sample-rate`: the share of client keys the events hold.
    pub key_sample_rate: Option<f64>,
    pub format: output::Format,
    pub output: Option<PathBuf>,
    pub colour: bool,
    pub quiet: bool,
}

/// Checks the flags of `rlctl simulate`.
pub fn simulate_settings(args: &SimulateArgs) -> Result<SimulateSettings, OptionsError> {
    let usage = OptionsError::Usage;
    let mut ingest = ingest_settings(&args.ingest)?;
    let mut routes = routes_settings(&args.routes)?;
    let mut algo = args.algo.unwrap_or(AlgoChoice::Default);
    let gateways = args.gateway.map(|g| g.gateways()).unwrap_or_default();
    // A policy's bursts are its rules' own: one --burst for all of them
    // would replay another policy under the policy file's name.
    if let (Some(burst), Some(path)) = (args.burst, &args.policy) {
        return Err(usage(format!(
            "--burst {burst} with --policy would replace the burst of every rule of {}; give each rule its burst in the policy file (burst = {burst}), or replay one limit with --limit",
            path.display()
        )));
    }
    // Burst 0 is only leaky-bucket's: refused where every algorithm runs, or
    // the token bucket a single limit or the recommended policy replays as.
    if args.burst == Some(0) && matches!(algo, AlgoChoice::All | AlgoChoice::Default) {
        return Err(usage(
            "--burst 0 applies only to leaky-bucket (nginx's burst=0): token-bucket and gcra need a burst of at least 1; give --algo leaky-bucket with --burst 0, or a burst of 1 or more".into(),
        ));
    }
    if !gateways.is_empty() {
        match algo {
            AlgoChoice::All => {
                return Err(usage(
                    "--gateway replays one policy: give --algo one algorithm (or none, for the policy's own) with it, not all".into(),
                ));
            }
            // A single --limit replays as the policy default, a token bucket.
            AlgoChoice::Default if args.limit.is_some() => {
                algo = AlgoChoice::One(AlgorithmKind::TokenBucket);
            }
            _ => {}
        }
    }
    // Rules count by their keys as each gateway reads them.
    let readings: Vec<_> = gateways.iter().map(|g| g.key_reading()).collect();
    ingest.keys.add_policy_keys([], &readings);
    // A gateway that answers some requests itself by their method or path
    // (nginx: a path it cannot read as `$uri`) needs the paths it might
    // read otherwise, where no route needs them all.
    let answered = (gateways.iter()).any(|g| g.name_reading().answers_some_itself());
    let source = if let Some(limit) = args.limit {
        // A single limit has no route to match.
        ingest.paths = KeptPaths::for_replay(false, answered);
        LimitSource::Single { limit }
    } else if let Some(path) = &args.policy {
        let CheckedPolicy {
            rules,
            exemptions,
            routes: policy_routes,
        } = Policy::load_policy(path)?;
        // The policy's routes file names endpoints unless --routes names another.
        if routes.is_none() {
            routes = policy_routes;
        }
        let routed =
            rules.iter().any(|r| r.route.is_some()) || exemptions.iter().any(|e| e.route.is_some());
        ingest.paths = KeptPaths::for_replay(routed, answered);
        add_key_columns(&mut ingest.keys, &rules, &exemptions, &readings);
        LimitSource::Policy {
            origin: path.display().to_string(),
            rules,
            exemptions,
        }
    } else {
        LimitSource::Recommended(Box::new(AnalysisSettings {
            ingest: ingest.clone(),
            stats: StatsSettings {
                window: args.window.window,
                top: args.top.top,
                exclude: Vec::new(),
                keep_counts: false,
            },
            multiplier: args.multiplier.multiplier,
            endpoints: crate::cli::REPORTED_ENDPOINTS,
            algorithm: match algo {
                AlgoChoice::One(kind) => kind,
                _ => AlgorithmKind::TokenBucket,
            },
            recommend: RecommendOptions {
                routes: routes.clone(),
                discover: args.discover.discover,
                ..Default::default()
            },
        }))
    };
    let delay = match (args.delay, args.nodelay) {
        (Some(n), _) => Some(Delay::After(n)),
        (None, true) => Some(Delay::NoDelay),
        (None, false) => None,
    };
    if let Some(x) = args.what_if_scale
        && !(x.is_finite() && x > 0.0)
    {
        return Err(usage(format!(
            "--what-if-scale {x}: must be a number above 0 (2 = twice the traffic)"
        )));
    }
    let key_sample_rate = match &args.key_sample_rate {
        None => None,
        Some(text) => match super::parse_share("--key-sample-rate", text)? {
            rate if rate > 0.0 => Some(rate),
            _ => {
                return Err(usage(format!(
                    "--key-sample-rate {text}: must be above 0 (the share of client keys sampled)"
                )));
            }
        },
    };
    check_events(args, &source, key_sample_rate, &ingest.keys)?;
    super::check_outputs(
        args.ingest.files.iter().chain(&args.events),
        &[
            (
                "--output",
                Some(Sink::report(args.output.output.as_deref())),
            ),
            // The decisions go to a file, one named `-` too.
            ("--decisions", args.decisions.as_deref().map(Sink::File)),
        ],
    )?;
    let algos = AlgoOptions {
        algo,
        burst: args.burst,
        delay,
    };
    // A limit the algorithms asked for cannot take (leaky-bucket alone below
    // nginx's 1r/m, a burst it has none of) is told before the logs are read.
    if let LimitSource::Single { limit } = &source {
        crate::scenario::plan::single(&algos, &ingest.keys.primary.text, *limit)
            .map_err(|e| OptionsError::Usage(e.to_string()))?;
    }
    Ok(SimulateSettings {
        ingest,
        routes,
        discover: args.discover.discover,
        source,
        algos,
        gateways,
        deployment: Deployment::new(args.instances, args.balance, args.seed)?,
        scale: args.what_if_scale,
        decisions: args.decisions.clone(),
        compare_logged: args.compare_logged,
        top: args.top.top,
        events: args.events.clone(),
        key_sample_rate,
        format: output_format(&args.output),
        output: args.output.output.clone(),
        colour: use_colour(&args.output),
        quiet: args.ingest.quiet,
    })
}

/// An event table has one client key (its `client` column, named by `--key`),
/// so every rule, exemption and gateway replay must read that one (`keys`:
/// the columns they read); and a key sample cannot recommend limits (a p99.9
/// over a sample of clients is not the p99.9 over all of them).
fn check_events(
    args: &SimulateArgs,
    source: &LimitSource,
    key_sample_rate: Option<f64>,
    keys: &KeySet,
) -> Result<(), OptionsError> {
    if args.events.is_none() {
        return Ok(());
    }
    let one_key = || {
        format!(
            "the event table holds one client key ({}, as --key says)",
            args.ingest.key
        )
    };
    match source {
        LimitSource::Recommended(_) if key_sample_rate.is_some_and(|r| r < 1.0) => {
            return Err(OptionsError::Usage(
                "--key-sample-rate: give --limit or --policy (e.g. the policy `rlctl analyze --from-sql-result DIR --write-policy FILE` writes); a sample of clients cannot recommend limits for all of them".into(),
            ));
        }
        LimitSource::Policy { rules, .. } => {
            if let Some(rule) = rules.iter().find(|r| r.key.text != args.ingest.key) {
                return Err(OptionsError::Usage(format!(
                    "--events: rule `{}` is keyed by {}, but {}",
                    rule.name,
                    rule.key.text,
                    one_key()
                )));
            }
        }
        _ => {}
    }
    match keys.extra.first() {
        Some(other) => Err(OptionsError::Usage(format!(
            "--events: the replay reads the client key as {} (an exemption keyed otherwise, an exempt address under --cidr4/6, or a --gateway reading the key its own way), but {}; replay the logs instead",
            other.text,
            one_key()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::Balance;
    use clap::Parser;

    /// The settings, or the error of clap (a value of the wrong type) or of
    /// the options layer.
    fn settings(extra: &[&str]) -> Result<SimulateSettings, OptionsError> {
        let mut argv = vec!["rlctl", "simulate", "x.log"];
        argv.extend(extra);
        let cli = crate::cli::Cli::try_parse_from(argv)
            .map_err(|e| OptionsError::Usage(e.to_string()))?;
        match cli.command {
            crate::cli::Command::Simulate(a) => simulate_settings(&a),
            _ => unreachable!(),
        }
    }

    #[test]
    fn limits_algorithms_and_deployments() {
        let s = settings(&[
            "--algo",
            "gcra",
            "--limit",
            "10r/s",
            "--instances",
            "3",
            "--balance",
            "round-robin",
        ])
        .unwrap();
        assert_eq!(s.algos.algo, AlgoChoice::One(AlgorithmKind::Gcra));
        assert!(matches!(s.source, LimitSource::Single { limit } if limit.requests == 10));
        assert_eq!(
            (s.deployment.instances(), s.deployment.balance()),
            (3, Balance::RoundRobin)
        );
        assert!(matches!(
            settings(&[]).unwrap().source,
            LimitSource::Recommended(_)
        ));
        assert_eq!(
            settings(&["--nodelay"]).unwrap().algos.delay,
            Some(Delay::NoDelay)
        );
    }

    #[test]
    fn bad_flags_say_what_to_type() {
        let err = |args: &[&str]| settings(args).unwrap_err().to_string();
        assert!(err(&["--algo", "magic"]).contains("unknown algorithm"));
        assert!(err(&["--limit", "fast"]).contains("invalid limit"));
        assert!(err(&["--balance", "sticky"]).contains("round-robin"));
        assert!(err(&["--instances", "0"]).contains("at least one instance"));
        assert!(err(&["--what-if-scale", "0"]).contains("above 0"));
        assert!(err(&["--policy", "/nonexistent.toml"]).contains("cannot read policy"));
        assert!(err(&["--gateway", "apache"]).contains("haproxy-req-rate"));
        assert!(err(&["--gateway", "kong", "--algo", "all"]).contains("not all"));
        // Found by users: the output said "policy p.toml" over other bursts.
        for burst in ["0", "5"] {
            let refused = err(&["--policy", "p.toml", "--burst", burst]);
            assert!(
                refused.contains(&format!(
                    "--burst {burst} with --policy would replace the burst of every rule of p.toml"
                )),
                "{refused}"
            );
        }
        let zero = ["--burst", "0"];
        for other in [
            &["--limit", "10/s"][..],
            &["--algo", "all", "--limit", "10/s"],
            &["--gateway", "nginx", "--limit", "10/s"],
            &[],
        ] {
            let args = [other, &zero].concat();
            assert!(
                err(&args).contains("--algo leaky-bucket with --burst 0"),
                "{args:?}"
            );
        }
        for ok in [
            &["--algo", "leaky-bucket", "--limit", "10/s"][..],
            &[
                "--gateway",
                "nginx",
                "--algo",
                "leaky-bucket",
                "--limit",
                "10/s",
            ],
        ] {
            assert!(settings(&[ok, &zero].concat()).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn gateways_take_one_algorithm() {
        let s = settings(&["--gateway", "all", "--limit", "10/s"]).unwrap();
        assert_eq!(s.gateways, Gateway::ALL.to_vec());
        assert_eq!(s.algos.algo, AlgoChoice::One(AlgorithmKind::TokenBucket));
        let s = settings(&["--gateway", "haproxy", "--algo", "gcra", "--limit", "10/s"]).unwrap();
        assert_eq!(s.gateways, vec![Gateway::Haproxy]);
        assert_eq!(s.algos.algo, AlgoChoice::One(AlgorithmKind::Gcra));
        assert!(settings(&[]).unwrap().gateways.is_empty());
    }
}
