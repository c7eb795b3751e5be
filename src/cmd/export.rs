//! `rlctl export`: reads a policy, renders it for the chosen gateway product
//! ([`crate::export`]) and writes the configuration to stdout or a file; with
//! `--check LOG`, replays the logs with the policy and as the product enforces
//! that configuration ([`crate::scenario::gateway::check`]) and lists where
//! they differ instead. Exempt requests are admitted and never counted in both
//! replays, as in `rlctl simulate`.

use std::fmt::Write as _;

use anyhow::Context;

use crate::Outcome;
use crate::cli::ExportArgs;
use crate::events::EventTable;
use crate::ingest;
use crate::options;
use crate::output;
use crate::output::document::Table;
use crate::policy::exempt::add_key_columns;
use crate::policy::{CheckedRule, Policy};
use crate::scenario::gateway::{ExportCheck, check, label};
use crate::scenario::kong;
use crate::scenario::{AlgoChoice, AlgoOptions, ExemptMasks, plan};
use crate::text::counted;
use crate::text::time::format_rfc3339;

/// Runs `rlctl export`.
pub fn run(args: ExportArgs) -> anyhow::Result<Outcome> {
    let settings = options::export_settings(&args)?;
    let policy = Policy::load_policy(&settings.policy)?;
    let exporter = settings.target.exporter();
    let text = exporter
        .render_policy(&policy, &settings.options)
        .with_context(|| {
            format!(
                "cannot export {} for {}",
                settings.policy.display(),
                exporter.target()
            )
        })?;
    let rules = &policy.rules;
    // The rules Kong's configuration cannot enforce where they apply (the
    // rules it merges are said in its comments).
    let kong = options::gateway_of(settings.target).runs_one_plugin();
    if let Some(note) = kong.then(|| kong::note(rules, false)).flatten() {
        eprintln!("rlctl: note: {}", crate::text::escape::terminal(&note));
    }
    let text = match settings.check {
        None => text,
        Some(mut ingest_settings) => {
            // Every rule's and exemption's key and route must be read from
            // the log, and the paths the gateway might answer itself.
            let gateway = options::gateway_of(settings.target);
            let routed = rules.iter().any(|r| r.route.is_some())
                || policy.exemptions.iter().any(|e| e.route.is_some());
            let answered = gateway.name_reading().answers_some_itself();
            ingest_settings.paths = ingest::KeptPaths::for_replay(routed, answered);
            add_key_columns(
                &mut ingest_settings.keys,
                rules,
                &policy.exemptions,
                &[gateway.key_reading()],
            );
            let ingested = ingest::ingest(&ingest_settings)?;
            anyhow::ensure!(
                !ingested.table.is_empty(),
                "--check: {}",
                ingested.report.nothing_parsed()
            );
            let base = plan::policy(
                &AlgoOptions {
                    algo: AlgoChoice::Default,
                    burst: None,
                    delay: None,
                },
                &ingest_settings.keys,
                rules,
            )?
            .scenarios
            .remove(0);
            // Exempt requests are admitted and never counted, by the policy and
            // by the gateway alike (the export exempts the same requests).
            let exempt = ExemptMasks::new(
                &ingested.table,
                &policy.exemptions,
                &ingest_settings.keys,
                &[(gateway.key_reading(), gateway.name_reading())],
            );
            let found = check(
                &ingested.table,
                &base,
                gateway,
                &ingest_settings.keys,
                exempt,
            )?;
            report(&found, &ingested.table, rules)
        }
    };
    output::write_output(settings.output.as_deref(), text.as_bytes()).with_context(|| {
        match &settings.output {
            Some(path) => format!("cannot write {}", path.display()),
            None => "cannot write to stdout".to_string(),
        }
    })?;
    Ok(Outcome::Success)
}

/// The check as text: totals, counts per reason, then one line per request
/// decided differently.
fn report(found: &ExportCheck, table: &EventTable, rules: &[CheckedRule]) -> String {
    let name = label(found.gateway);
    let mut out = format!(
        "rlctl export --check: {}, {}, replayed with the policy and as {name} enforces the exported configuration\n",
        counted(found.requests, "request"),
        counted(rules.len(), "rule")
    );
    let _ = writeln!(
        out,
        "  policy rejects {}, {name} rejects {}; they differ on {} requests",
        found.policy_rejected,
        found.gateway_rejected,
        found.differences.len()
    );
    let mut reasons = std::collections::BTreeMap::new();
    for d in &found.differences {
        *reasons.entry(d.reason.to_string()).or_insert(0usize) += 1;
    }
    for (reason, n) in &reasons {
        let _ = writeln!(out, "  {reason}: {n}");
    }
    if found.gateway.fidelity() == crate::simulate::gateway::Fidelity::Model {
        out.push_str("  (a model of the vendor's documented behaviour, not an exact replay)\n");
    }
    if found.differences.is_empty() {
        return out;
    }
    // The gateway's own reading of the key, where it differs, beside the client.
    let client_to = format!("client to {name}");
    let mut columns = vec!["time", "client"];
    if found.reads_key_otherwise() {
        columns.push(&client_to);
    }
    columns.extend(["endpoint", "policy", "gateway", "reason"]);
    let mut listing = Table::new(&columns);
    let verdict = |allowed: bool| if allowed { "allowed" } else { "rejected" };
    for d in &found.differences {
        let (client, gateways) = found.client(table, d.row);
        let mut row = vec![format_rfc3339(table.ts[d.row]), client];
        if found.reads_key_otherwise() {
            row.push(gateways.unwrap_or_default());
        }
        row.extend([
            table.endpoints.name(table.endpoint[d.row]).to_string(),
            verdict(d.policy_allowed).to_string(),
            verdict(d.gateway_allowed).to_string(),
            d.reason.to_string(),
        ]);
        listing.row(row);
    }
    out.push('\n');
    out.push_str(&crate::output::table::whole_table_text(&listing));
    out
}
