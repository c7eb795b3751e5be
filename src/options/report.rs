//! Settings of `rlctl report`: the analysis, the policy to judge, the CI gates and
//! where each output format goes.

use std::path::PathBuf;

use super::{OptionsError, Sink, excluded_clients, ingest_settings, routes_settings};
use crate::analysis::{AnalysisSettings, RecommendOptions};
use crate::cli::{ReportArgs, ReportFormat};
use crate::ingest::KeptPaths;
use crate::policy::Policy;
use crate::policy::exempt::add_key_columns;
use crate::profile::ProfileColumns;
use crate::report::{Gates, ReportPlan};
use crate::simulate::AlgorithmKind;
use crate::stats::StatsSettings;

/// Validated settings of `rlctl report`.
#[derive(Debug, Clone)]
pub struct ReportSettings {
    /// What the report judges, and how.
    pub plan: ReportPlan,
    /// Each output: its format and file (`None` = stdout).
    pub outputs: Vec<(ReportFormat, Option<PathBuf>)>,
    /// Why the report itself is not written, when an export took stdout in
    /// its place.
    pub replaced: Option<String>,
    pub stamp: bool,
}

/// A share given as `1%`, `0.5%` or `0.01`. A bare `1` is refused: it reads
/// as 1% as easily as the 100% it would be (a CI gate at 100% never fails).
pub fn parse_share(flag: &str, text: &str) -> Result<f64, OptionsError> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        // The decimal written, a hundredth of it, rounded once: `0.7%` is the
        // number nearest 0.007, as `0.007` is (0.7 / 100 is the one below
        // it, and a gate at exactly 7 in 1000 failed).
        Some(p) => {
            let p = p.trim();
            p.parse::<f64>().and_then(|v| match p.contains(['e', 'E']) {
                false => format!("{p}e-2").parse::<f64>(),
                true => format!("{v}e-2").parse::<f64>(),
            })
        }
        None => t.parse::<f64>(),
    };
    // `-0` is 0, not a threshold written `-0%`.
    let value = value.map(|v| if v == 0.0 { 0.0 } else { v });
    if t.strip_suffix('%').is_none() && value == Ok(1.0) {
        return Err(OptionsError::Usage(format!(
            "{flag} {text}: write 100% for all, or 1% (0.01) for one in a hundred"
        )));
    }
    match value {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(OptionsError::Usage(format!(
            "{flag} {text}: expected a share such as 1% or 0.01, from 0 to 100%"
        ))),
    }
}

/// Checks the flags of `rlctl report`.
pub fn report_settings(args: &ReportArgs) -> Result<ReportSettings, OptionsError> {
    let mut ingest = ingest_settings(&args.ingest)?;
    let mut exemptions = Vec::new();
    let mut routes = routes_settings(&args.routes)?;
    let gateways = args.gateway.map(|g| g.gateways()).unwrap_or_default();
    // Rules count by their keys as each gateway reads them.
    let readings: Vec<_> = gateways.iter().map(|g| g.key_reading()).collect();
    ingest.keys.add_policy_keys([], &readings);
    let policy = match &args.policy {
        Some(path) => {
            let checked = Policy::load_policy(path)?;
            add_key_columns(
                &mut ingest.keys,
                &checked.rules,
                &checked.exemptions,
                &readings,
            );
            if checked.exemptions.iter().any(|e| e.route.is_some()) {
                ingest.paths = KeptPaths::All;
            }
            exemptions = checked.exemptions;
            // The policy's routes file names endpoints unless --routes names another.
            if routes.is_none() {
                routes = checked.routes;
            }
            Some((path.display().to_string(), checked.rules))
        }
        None => None,
    };
    // Client profiles read the user agent and the user of each request, as in
    // `rlctl analyze`, so the report lists the same profiles.
    let profile_columns = ProfileColumns::request(&mut ingest.keys);
    let gates = Gates {
        max_reject_rate: args
            .max_reject_rate
            .as_deref()
            .map(|t| parse_share("--max-reject-rate", t))
            .transpose()?,
        max_clients_rejected: args
            .max_clients_rejected
            .as_deref()
            .map(|t| parse_share("--max-clients-rejected", t))
            .transpose()?,
        fail_on_flagged: args.fail_on_flagged,
    };
    let exports = [
        (
            "--export-markdown",
            ReportFormat::Markdown,
            &args.export_markdown,
        ),
        ("--export-html", ReportFormat::Html, &args.export_html),
        ("--export-json", ReportFormat::Json, &args.export_json),
        ("--export-junit", ReportFormat::Junit, &args.export_junit),
    ];
    // The report goes to stdout without -o; an `--export-X -` asks for
    // stdout itself, and takes it in the report's place (said on stderr).
    let to_stdout = (exports.iter())
        .find(|(_, _, path)| path.as_deref().is_some_and(|p| p.as_os_str() == "-"))
        .map(|(flag, _, _)| *flag);
    let replaced = match (&args.output, to_stdout) {
        (None, Some(flag)) => Some(format!(
            "the report itself is not written: {flag} - takes stdout; give -o FILE to keep it"
        )),
        _ => None,
    };
    let mut sinks = Vec::new();
    if replaced.is_none() {
        let report = match args.output {
            Some(_) => "--output",
            None => "the report (stdout without -o FILE)",
        };
        sinks.push((report, Some(Sink::report(args.output.as_deref()))));
    }
    sinks.extend(
        (exports.iter()).map(|(flag, _, path)| (*flag, path.as_deref().map(Sink::dash_is_stdout))),
    );
    super::check_outputs(&args.ingest.files, &sinks)?;
    // `-o -` is stdout, as `--export-X -` is.
    let main_output = args.output.clone().filter(|p| p.as_os_str() != "-");
    let mut outputs = Vec::new();
    if replaced.is_none() {
        outputs.push((args.format, main_output));
    }
    for (_, format, path) in exports {
        if let Some(path) = path {
            let to_stdout = path.as_os_str() == "-";
            outputs.push((format, (!to_stdout).then(|| path.clone())));
        }
    }
    let exclude = excluded_clients(&args.exclude, &ingest.keys.primary);
    Ok(ReportSettings {
        plan: ReportPlan {
            analysis: AnalysisSettings {
                ingest,
                stats: StatsSettings {
                    window: args.window.window,
                    top: args.top.top,
                    exclude,
                    keep_counts: false,
                },
                multiplier: args.multiplier.multiplier,
                endpoints: crate::cli::REPORTED_ENDPOINTS,
                algorithm: AlgorithmKind::TokenBucket,
                recommend: RecommendOptions {
                    profile_columns,
                    routes,
                    discover: args.discover.discover,
                    ..Default::default()
                },
            },
            policy,
            exemptions,
            gates,
            top: args.top.top,
            gateways,
        },
        outputs,
        replaced,
        stamp: args.stamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares() {
        assert_eq!(parse_share("--x", "1%").unwrap(), 0.01);
        assert_eq!(parse_share("--x", "0.05").unwrap(), 0.05);
        assert_eq!(parse_share("--x", " 2.5 % ").unwrap(), 0.025);
        // Rounded once (found by review: 87.29903090519519 rounded first
        // read as 87.2990309051952, and the share next to the one written).
        assert_eq!(
            parse_share("--x", "87.29903090519519%").unwrap(),
            "0.8729903090519519".parse::<f64>().unwrap()
        );
        assert_eq!(parse_share("--x", "1e-5%").unwrap(), 1e-7);
        assert!(parse_share("--x", "-0").unwrap().is_sign_positive());
        assert!(parse_share("--x", "150%").is_err());
        // Found by review: 0.7 / 100 is not the number 0.007 reads as.
        for (percent, share) in [
            ("0.7%", 0.007),
            ("1.4%", 0.014),
            ("2.9%", 0.029),
            ("7e-1%", 0.007),
        ] {
            assert_eq!(parse_share("--x", percent).unwrap(), share, "{percent}");
        }
        assert_eq!(parse_share("--x", "0.7%").unwrap(), 7.0 / 1000.0);
        assert!(parse_share("--x", "-1%").is_err());
        assert!(parse_share("--x", "lots").is_err());
        // Found by review: a bare 1 was 100%, so `--max-reject-rate 1` passed
        // a rule rejecting 96% of requests.
        assert!(parse_share("--x", "1").is_err());
        assert!(parse_share("--x", "1.0").is_err());
        assert_eq!(parse_share("--x", "100%").unwrap(), 1.0);
        assert_eq!(parse_share("--x", "0").unwrap(), 0.0);
    }
}
