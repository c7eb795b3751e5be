//! What an analysis shows, in `rlctl analyze` and in the traffic part of
//! `rlctl report`: the JSON contract ([`json`]) and the document the text
//! formats render ([`document`]). Built from library types only.

use serde::Serialize;

use super::findings::{
    baseline_fact, endpoint_separated_blocks, profile_blocks, separated_blocks, template_blocks,
};
use crate::analysis::{AnalysisSettings, AnalyzeRun, EndpointRecommendation};
use crate::discover::TemplateUse;
use crate::ingest::IngestReport;
use crate::output::document::{Document, Table};
use crate::profile::ClientProfile;
use crate::recommend::Recommendation;
use crate::stats::quantiles::Quantiles;
use crate::stats::{EndpointStats, ScopeStats, StatusSummary, top_clients};
use crate::text::counted;
use crate::text::time::format_rfc3339;

/// The JSON contract of `rlctl analyze` (documented in the README).
#[derive(Debug, Serialize)]
pub struct AnalyzeJson<'a> {
    pub input: InputJson<'a>,
    pub key: &'a str,
    pub window_s: u32,
    pub overall: &'a ScopeStats,
    pub endpoints: Vec<EndpointJson<'a>>,
    pub top_clients: Vec<TopClient<'a>>,
    pub status_codes: &'a StatusSummary,
    pub recommendation: Option<&'a Recommendation>,
    pub endpoint_recommendations: &'a [EndpointRecommendation],
    pub excluded: &'a [String],
    /// Separated, flagged and notable clients with what they look like.
    pub profiles: &'a [ClientProfile],
    /// Endpoint templates that collapsed more than one path.
    pub templates: &'a [TemplateUse],
}

/// `input` of the JSON contract.
#[derive(Debug, Serialize)]
pub struct InputJson<'a> {
    #[serde(flatten)]
    pub report: &'a IngestReport,
    pub first_ts: Option<String>,
    pub last_ts: Option<String>,
}

/// One endpoint in the JSON contract.
#[derive(Debug, Serialize)]
pub struct EndpointJson<'a> {
    #[serde(flatten)]
    pub stats: &'a EndpointStats,
    /// True when p99.9 rests on fewer than 1000 samples.
    pub low_confidence: bool,
}

/// One of the top clients.
#[derive(Debug, Serialize)]
pub struct TopClient<'a> {
    pub client: &'a str,
    pub requests: u64,
    /// Share of all requests, 0 to 1.
    pub share: f64,
    pub peak_window: u64,
    pub peak_second: u64,
    /// Peak window above the recommended limit.
    pub flagged: bool,
}

fn tops<'a>(run: &'a AnalyzeRun, settings: &AnalysisSettings) -> Vec<TopClient<'a>> {
    let total = run.analysis.overall.requests.max(1) as f64;
    let limit = run.recommendation.as_ref().map_or(u64::MAX, |r| r.limit);
    top_clients(
        &run.ingested.table,
        &run.analysis.overall,
        settings.stats.top,
    )
    .into_iter()
    .map(|(client, p)| TopClient {
        client,
        requests: p.requests,
        share: p.requests as f64 / total,
        peak_window: p.peak_window,
        peak_second: p.peak_second,
        flagged: p.peak_window > limit,
    })
    .collect()
}

/// The JSON form.
pub fn json<'a>(run: &'a AnalyzeRun, settings: &'a AnalysisSettings) -> AnalyzeJson<'a> {
    let span = run.span;
    AnalyzeJson {
        input: InputJson {
            report: &run.ingested.report,
            first_ts: span.map(|(a, _)| format_rfc3339(a)),
            last_ts: span.map(|(_, b)| format_rfc3339(b)),
        },
        key: &settings.ingest.keys.primary.text,
        window_s: settings.stats.window.secs(),
        overall: &run.analysis.overall,
        endpoints: run
            .analysis
            .endpoints
            .iter()
            .take(settings.endpoints)
            .map(|e| EndpointJson {
                stats: e,
                low_confidence: e.stats.per_window.p999_is_thin(),
            })
            .collect(),
        top_clients: tops(run, settings),
        status_codes: &run.analysis.status,
        recommendation: run.recommendation.as_ref(),
        endpoint_recommendations: &run.endpoint_recommendations,
        excluded: &run.analysis.excluded,
        profiles: &run.profiles,
        templates: &run.template_uses,
    }
}

fn quantile_cells(q: &Quantiles) -> Vec<String> {
    [q.samples, q.p50, q.p90, q.p95, q.p99, q.p999, q.max]
        .iter()
        .map(u64::to_string)
        .collect()
}

fn metrics(s: &ScopeStats) -> [(&'static str, &Quantiles); 3] {
    [
        ("per_window", &s.per_window),
        ("per_second", &s.per_second),
        ("client_peak_second", &s.client_peak_second),
    ]
}

const QUANTILE_COLUMNS: [&str; 7] = ["samples>", "p50>", "p90>", "p95>", "p99>", "p99.9>", "max>"];

/// The document the text formats render.
pub fn document(run: &AnalyzeRun, settings: &AnalysisSettings) -> Document {
    let a = &run.analysis;
    let report = &run.ingested.report;
    let span = run
        .span
        .map(|(x, y)| format!("{} .. {}", format_rfc3339(x), format_rfc3339(y)))
        .unwrap_or_default();
    let mut doc = Document::new(format!(
        "rlctl analyze: {} from {}",
        counted(a.overall.requests, "request"),
        counted(a.overall.clients, "client")
    ));
    let mut facts = vec![
        ("period", span),
        ("lines", report.reconciled()),
        ("client key", settings.ingest.keys.primary.text.clone()),
        ("window", settings.stats.window.to_string()),
    ];
    if !a.excluded.is_empty() {
        facts.push((
            "excluded (--exclude)",
            format!(
                "{}, left out of the traffic figures and the recommendation: {}",
                counted(a.excluded.len() as u64, "client"),
                a.excluded.join(", ")
            ),
        ));
    }
    doc.facts(facts);
    for (reason, n) in &report.skipped_by_reason {
        doc.paragraph(format!("skipped {n}: {reason}"));
    }

    doc.heading(format!(
        "Requests per client (window {})",
        settings.stats.window
    ));
    let columns: Vec<&str> = ["metric"].into_iter().chain(QUANTILE_COLUMNS).collect();
    let mut shown = Table::new(&columns);
    for (metric, q) in metrics(&a.overall) {
        shown.row(
            std::iter::once(metric.replace('_', " "))
                .chain(quantile_cells(q))
                .collect(),
        );
    }
    doc.table(shown);
    let columns: Vec<&str> = ["scope", "metric"]
        .into_iter()
        .chain(QUANTILE_COLUMNS)
        .collect();
    let mut csv = Table::new(&columns).csv_only();
    let scopes = std::iter::once(("(all)", &a.overall)).chain(
        a.endpoints
            .iter()
            .take(settings.endpoints)
            .map(|e| (e.endpoint.as_str(), &e.stats)),
    );
    for (scope, stats) in scopes {
        for (metric, q) in metrics(stats) {
            csv.row(
                [scope.to_string(), metric.to_string()]
                    .into_iter()
                    .chain(quantile_cells(q))
                    .collect(),
            );
        }
    }
    doc.table(csv);

    recommendation_blocks(&mut doc, run);
    profile_blocks(&mut doc, run, settings.stats.top);
    top_client_blocks(&mut doc, run, settings);
    endpoint_blocks(&mut doc, run, settings);
    endpoint_separated_blocks(&mut doc, run);
    template_blocks(&mut doc, run);
    status_blocks(&mut doc, &a.status);
    doc
}

fn recommendation_blocks(doc: &mut Document, run: &AnalyzeRun) {
    doc.heading("Recommendation");
    let Some(r) = &run.recommendation else {
        doc.paragraph("no recommendation: no traffic");
        return;
    };
    doc.facts(vec![
        (
            "limit",
            format!(
                "{} ({} x per-window p99.9 of {})",
                r.rate, r.multiplier, r.basis_p999
            ),
        ),
        (
            "burst",
            match r.normal_peak_second {
                // Every client is over the limit: none sets a normal peak.
                0 => format!(
                    "{} (no client stays under the limit to set a normal peak second; at least 10 s of the average rate = {})",
                    r.burst, r.burst_floor
                ),
                peak => format!(
                    "{} (covers the normal peak second of {peak}; at least 10 s of the average rate = {})",
                    r.burst, r.burst_floor
                ),
            },
        ),
        ("flagged clients", r.flagged_count.to_string()),
    ]);
    baseline_fact(doc, r);
    let mut alts = Table::new(&["multiplier>", "limit", "clients over>"]);
    for alt in &r.alternatives {
        alts.row(vec![
            format!("{}x", alt.multiplier),
            format!("{}/{}", alt.limit, run.analysis.window),
            alt.clients_over.to_string(),
        ]);
    }
    doc.table(alts);
    for w in &r.warnings {
        doc.warning(w.clone());
    }
    // After the recommendation's own tables: it opens a section of its own.
    separated_blocks(doc, r);
    if !r.flagged.is_empty() {
        doc.heading("Flagged clients (peak window above the limit): review before enforcing");
        let mut t = Table::new(&["client", "requests>", "peak window>", "peak second>"]);
        for f in &r.flagged {
            t.row(vec![
                f.client.clone(),
                f.requests.to_string(),
                f.peak_window.to_string(),
                f.peak_second.to_string(),
            ]);
        }
        doc.table(t);
        if r.flagged_count > r.flagged.len() as u64 {
            doc.paragraph(format!(
                "... and {} more",
                r.flagged_count - r.flagged.len() as u64
            ));
        }
        doc.paragraph("Exclude a runaway client with --exclude CLIENT to recompute without it.");
    }
}

/// The busiest clients, titled by how many are listed (fewer than `--top`
/// when the log has fewer clients); no section at all with `--top 0`.
fn top_client_blocks(doc: &mut Document, run: &AnalyzeRun, settings: &AnalysisSettings) {
    let tops = tops(run, settings);
    if tops.is_empty() {
        return;
    }
    doc.heading(match tops.len() {
        1 => "Top client".to_string(),
        n => format!("Top {n} clients"),
    });
    let mut t = Table::new(&[
        "client",
        "requests>",
        "share>",
        "peak window>",
        "peak second>",
        "flagged",
    ]);
    for c in tops {
        t.row(vec![
            c.client.to_string(),
            c.requests.to_string(),
            format!("{:.1}%", c.share * 100.0),
            c.peak_window.to_string(),
            c.peak_second.to_string(),
            if c.flagged {
                "yes".into()
            } else {
                String::new()
            },
        ]);
    }
    doc.table(t);
}

/// The busiest endpoints; no section at all with `--endpoints 0`.
fn endpoint_blocks(doc: &mut Document, run: &AnalyzeRun, settings: &AnalysisSettings) {
    if settings.endpoints == 0 {
        return;
    }
    doc.heading("Endpoints");
    let shown = &run.analysis.endpoints[..run.analysis.endpoints.len().min(settings.endpoints)];
    let mut t = Table::new(&[
        "endpoint",
        "requests>",
        "clients>",
        "p99>",
        "p99.9>",
        "max>",
        "peak second>",
        "limit",
    ]);
    for e in shown {
        let s = &e.stats;
        let limit = run
            .endpoint_recommendations
            .iter()
            .find(|r| r.endpoint == e.endpoint)
            .map(|r| format!("{} burst {}", r.recommendation.rate, r.recommendation.burst));
        t.row(vec![
            e.endpoint.clone(),
            s.requests.to_string(),
            s.clients.to_string(),
            s.per_window.p99.to_string(),
            format!(
                "{}{}",
                s.per_window.p999,
                if s.per_window.p999_is_thin() { "*" } else { "" }
            ),
            s.per_window.max.to_string(),
            s.client_peak_second.max.to_string(),
            limit.unwrap_or_else(|| "-".into()),
        ]);
    }
    doc.table(t);
    if run.analysis.endpoint_count > settings.endpoints {
        doc.paragraph(format!(
            "... {} endpoints in all (rlctl analyze --endpoints N shows more)",
            run.analysis.endpoint_count
        ));
    }
    if shown.iter().any(|e| e.stats.per_window.p999_is_thin()) {
        doc.paragraph("* p99.9 from fewer than 1000 samples: too few for a limit of its own.");
    }
}

fn status_blocks(doc: &mut Document, status: &StatusSummary) {
    doc.heading("Limiter answers already in the log");
    doc.facts(vec![
        ("status 429", status.status_429.to_string()),
        ("status 503", status.status_503.to_string()),
    ]);
    if !status.clients.is_empty() {
        let mut t = Table::new(&["client", "429>", "503>"]);
        for c in status.clients.iter().take(10) {
            t.row(vec![
                c.client.clone(),
                c.status_429.to_string(),
                c.status_503.to_string(),
            ]);
        }
        doc.table(t);
    }
}
