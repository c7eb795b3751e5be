//! `rlctl report`: analyze and simulate in one pass ([`crate::report`]) and
//! render one report, with CI gates on the policy's simulation (exit 1 when one
//! fails).

pub mod view;

use anyhow::Context;

use crate::Outcome;
use crate::analysis::notes::{keyless_lines, notes, unmatched_exemptions};
use crate::cli::{ReportArgs, ReportFormat};
use crate::options::{self, ReportSettings};
use crate::output;
use crate::report::{self, ReportRun};
use crate::scenario::gateway::{policy_notes, prefix_note};
use crate::scenario::unmatched;
use crate::text::escape;

/// Runs `rlctl report`.
pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let settings = options::report_settings(&args)?;
    let run = report::compute(&settings.plan)?;
    if !args.ingest.quiet {
        if let Some(note) = &settings.replaced {
            eprintln!("rlctl: note: {note}");
        }
        let ingested = &run.analysis.ingested.report;
        for line in notes(ingested, Some(&run.analysis.analysis)) {
            eprintln!("{line}");
        }
        let rule_keys = run.rules.iter().map(|r| r.key.text.as_str());
        let key = &settings.plan.analysis.ingest.keys.primary.text;
        if let Some(note) = keyless_lines(ingested, key, rule_keys) {
            eprintln!("{note}");
        }
        let keys = &settings.plan.analysis.ingest.keys;
        let rule_keys = run.rules.iter().map(|r| r.key.text.as_str());
        if let Some(note) = prefix_note(&keys.primary, rule_keys, &settings.plan.gateways) {
            eprintln!("rlctl: note: {note}");
        }
        for note in policy_notes(
            &run.rules,
            &settings.plan.exemptions,
            &settings.plan.gateways,
        ) {
            eprintln!("rlctl: note: {}", crate::text::escape::terminal(&note));
        }
        let table = &run.analysis.ingested.table;
        let missed = unmatched(
            table,
            &settings.plan.exemptions,
            keys,
            &settings.plan.gateways,
        );
        for line in unmatched_exemptions(&missed) {
            eprintln!("{line}");
        }
        for rule in (run.policy.rules.iter()).filter(|r| r.summary.totals.requests == 0) {
            eprintln!(
                "rlctl: note: rule {} applied to no request, so its gates pass with nothing to judge; check its method, route and key",
                escape::terminal(&rule.rule)
            );
        }
    }
    let stamp = settings.stamp.then(view::now_rfc3339);
    let doc = view::document(&run, &settings, stamp.as_deref());
    for (format, path) in &settings.outputs {
        let bytes = render(*format, &run, &settings, &doc, stamp.as_deref())?;
        match output::write_output(path.as_deref(), &bytes) {
            // A reader that stopped early (`| head`) takes no more; the other
            // outputs are still written and the gates still decide the exit.
            Err(e) if path.is_none() && e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written.with_context(|| {
                format!(
                    "cannot write the report to {}",
                    path.as_ref()
                        .map_or("stdout".into(), |p| p.display().to_string())
                )
            })?,
        }
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        use std::io::Write;
        let markdown = output::markdown::render(&doc);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .and_then(|mut file| file.write_all(markdown.as_bytes()))
            .with_context(|| {
                format!(
                    "cannot append to $GITHUB_STEP_SUMMARY ({})",
                    summary.to_string_lossy()
                )
            })?;
    }
    // Said once every report is written, so that a CI log never shows a
    // verdict followed by the error that made the run fail.
    eprintln!("rlctl report: {}", escape::terminal(&run.verdict));
    Ok(if run.passed() {
        Outcome::Success
    } else {
        Outcome::GateFailed
    })
}

fn render(
    format: ReportFormat,
    run: &ReportRun,
    settings: &ReportSettings,
    doc: &output::document::Document,
    stamp: Option<&str>,
) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        ReportFormat::Markdown => output::markdown::render(doc).into_bytes(),
        ReportFormat::Html => output::html::render(doc).into_bytes(),
        ReportFormat::Json => output::json(&view::json(run, settings, stamp))?,
        ReportFormat::Junit => view::junit(run).into_bytes(),
    })
}
