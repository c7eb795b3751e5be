//! Settings of `rlctl watch`: the policy, the files and how to follow them,
//! where metrics are served, what stdout gets, and the verdict.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::time::Duration;

use super::{OptionsError, ingest_settings, parse_share};
use crate::cli::{WatchArgs, WatchFormat};
use crate::policy::{CheckedPolicy, Policy};
use crate::watch::follow::DEFAULT_LINGER;
use crate::watch::session::SessionSettings;
use crate::watch::shadow::keys_for_policy;
use crate::watch::verdict::Verdict;
use crate::watch::watcher::WatchSettings;

/// How often the files are looked at when nothing was waiting.
const POLL: Duration = Duration::from_millis(200);
/// How often the metrics and the view are refreshed.
const REFRESH: Duration = Duration::from_secs(1);

/// What stdout gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchOutput {
    /// The live terminal view.
    View,
    /// One JSON summary per interval.
    Jsonl,
    /// Nothing.
    None,
}

/// Validated settings of `rlctl watch`.
#[derive(Debug, Clone)]
pub struct WatchRun {
    pub watch: WatchSettings,
    pub session: SessionSettings,
    /// Where `/metrics` is served (`None`: `--no-listen`).
    pub listen: Option<SocketAddr>,
    pub output: WatchOutput,
    pub quiet: bool,
}

/// Checks the flags of `rlctl watch`.
pub fn watch_settings(args: &WatchArgs) -> Result<WatchRun, OptionsError> {
    let usage = OptionsError::Usage;
    if args.ingest.strict {
        return Err(usage(
            "--strict does not apply to watch: bad lines are skipped and counted by reason".into(),
        ));
    }
    if args.ingest.files.iter().any(|f| f.as_os_str() == "-") {
        return Err(usage(
            "watch follows files; `-` (stdin) cannot be followed".into(),
        ));
    }
    let mut ingest = ingest_settings(&args.ingest)?;
    ingest.progress = None;
    // Template rules are compiled to route regexes; watch names no endpoints.
    let CheckedPolicy {
        rules, exemptions, ..
    } = Policy::load_policy(&args.policy)?;
    ingest.keys = keys_for_policy(&rules, &exemptions, args.gateway, ingest.keys);
    let (max_delay, interval) = (args.max_delay, args.interval);
    let verdict = match &args.until_clients_hit {
        Some(share) => Some(Verdict::new(
            parse_share("--until-clients-hit", share)?,
            args.hold.millis(),
        )),
        None => None,
    };
    let listen = (!args.no_listen).then_some(args.listen);
    let output = match args.format {
        Some(WatchFormat::View) => WatchOutput::View,
        Some(WatchFormat::Jsonl) => WatchOutput::Jsonl,
        Some(WatchFormat::None) => WatchOutput::None,
        None if std::io::stdout().is_terminal() => WatchOutput::View,
        None => WatchOutput::Jsonl,
    };
    Ok(WatchRun {
        watch: WatchSettings {
            files: args.ingest.files.clone(),
            from_start: args.from_start,
            max_delay_ms: max_delay.millis(),
            max_lateness_ms: args.max_lateness.millis(),
            linger: DEFAULT_LINGER,
            ingest,
            rules,
            exemptions,
            gateway: args.gateway,
            verdict,
        },
        session: SessionSettings {
            poll: POLL,
            refresh: REFRESH,
            interval: (output == WatchOutput::Jsonl)
                .then(|| Duration::from_secs(u64::from(interval.secs()))),
        },
        listen,
        output,
        quiet: args.ingest.quiet,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(extra: &[&str], policy: &std::path::Path) -> Result<crate::cli::Cli, clap::Error> {
        let mut argv = vec![
            "rlctl",
            "watch",
            "a.log",
            "--policy",
            policy.to_str().unwrap(),
        ];
        argv.extend(extra);
        crate::cli::Cli::try_parse_from(argv)
    }

    fn settings(extra: &[&str]) -> Result<WatchRun, OptionsError> {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("p.toml");
        std::fs::write(&policy, "[[rule]]\nname='g'\nkey='user'\nlimit='10/1m'\n").unwrap();
        let mut argv = vec![
            "rlctl",
            "watch",
            "a.log",
            "--policy",
            policy.to_str().unwrap(),
        ];
        argv.extend(extra);
        let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
        match cli.command {
            crate::cli::Command::Watch(a) => watch_settings(&a),
            _ => unreachable!(),
        }
    }

    #[test]
    fn flags_become_settings() {
        let run = settings(&[
            "--max-delay",
            "2s",
            "--max-lateness",
            "1h",
            "--format",
            "jsonl",
            "--interval",
            "10s",
        ])
        .unwrap();
        assert_eq!(run.watch.max_delay_ms, 2000);
        assert_eq!(run.watch.max_lateness_ms, 3_600_000);
        assert_eq!(run.session.interval, Some(Duration::from_secs(10)));
        assert_eq!(run.listen, Some("127.0.0.1:9464".parse().unwrap()));
        // The rule's key is extracted beside --key.
        assert_eq!(run.watch.ingest.keys.extra[0].text, "user");
        let run = settings(&["--until-clients-hit", "1%", "--for", "1h", "--no-listen"]).unwrap();
        let verdict = run.watch.verdict.unwrap();
        assert_eq!((verdict.threshold, verdict.hold_ms), (0.01, 3_600_000));
        assert_eq!(run.listen, None);
    }

    #[test]
    fn a_gateway_and_exemptions_reach_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("p.toml");
        std::fs::write(
            &policy,
            "[[rule]]\nname='g'\nlimit='10/1m'\n\n[[rule]]\nname='bot'\nkey='user'\nclient='monitor'\nexempt=true\n",
        )
        .unwrap();
        let cli = crate::cli::Cli::try_parse_from([
            "rlctl",
            "watch",
            "a.log",
            "--policy",
            policy.to_str().unwrap(),
            "--gateway",
            "kong-redis",
        ])
        .unwrap();
        let crate::cli::Command::Watch(args) = cli.command else {
            unreachable!()
        };
        let run = watch_settings(&args).unwrap();
        assert_eq!(
            run.watch.gateway,
            Some(crate::simulate::gateway::Gateway::KongRedis)
        );
        assert_eq!(run.watch.rules.len(), 1);
        assert_eq!(run.watch.exemptions[0].name, "bot");
        // The exemption's key is extracted beside --key.
        assert_eq!(run.watch.ingest.keys.extra[0].text, "user");
        let typed = parse(&["--gateway", "apache"], &policy)
            .unwrap_err()
            .to_string();
        assert!(typed.contains("haproxy-req-rate"), "{typed}");
    }

    #[test]
    fn bad_flags_say_what_to_type() {
        let err = |extra: &[&str]| settings(extra).unwrap_err().to_string();
        let typed = |extra: &[&str]| {
            parse(extra, std::path::Path::new("p.toml"))
                .unwrap_err()
                .to_string()
        };
        assert!(typed(&["--max-delay", "soon"]).contains("--max-delay"));
        assert!(typed(&["--listen", "nowhere"]).contains("--listen"));
        assert!(err(&["--until-clients-hit", "150%"]).contains("--until-clients-hit"));
        assert!(err(&["--strict"]).contains("--strict"));
    }
}
