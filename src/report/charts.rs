//! The report's charts, built from the analysis and the simulations.

use super::ReportRun;
use crate::output::document::{Axis, Bar, Bin, Chart, ChartKind, Series};
use crate::stats::timeline;

fn secs(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// Requests per second over time (all traffic, and the busiest client's peak
/// second in each minute), with each rule's average rate and instant capacity.
pub fn traffic_over_time(run: &ReportRun) -> Chart {
    let points = timeline::per_minute(&run.analysis.ingested.table);
    let all = Series {
        // A log axis has no zero: minutes without requests are no points.
        name: "all clients, req/s (average of each minute with requests)".into(),
        points: points
            .iter()
            .map(|p| (secs(p.minute), p.requests as f64 / 60.0))
            .collect(),
    };
    let busiest = Series {
        name: "busiest client, req in its peak second".into(),
        points: points
            .iter()
            .map(|p| (secs(p.minute), p.busiest_client_second as f64))
            .collect(),
    };
    let mut chart = Chart::new(
        "Requests per second over time",
        Axis::time(),
        Axis::log("requests per second"),
        ChartKind::Lines(vec![all, busiest]),
    );
    let global = run
        .rules
        .iter()
        .zip(&run.policy.rules)
        .filter(|(rule, _)| rule.route.is_none() && rule.method.is_none());
    for (rule, result) in global {
        let limit = rule.spec.limit;
        let at_once = result.summary.instant_capacity;
        chart = chart
            .hline(
                format!(
                    "{} average {:.2}/s ({limit})",
                    rule.name,
                    limit.per_second()
                ),
                limit.per_second(),
            )
            .hline(format!("{} at once {at_once}", rule.name), at_once as f64);
    }
    chart
}

/// The distribution of per-client requests per window, with p99, p99.9 and the limit.
pub fn per_client_distribution(run: &ReportRun) -> Chart {
    let overall = &run.analysis.analysis.overall;
    let bins: Vec<Bin> = overall
        .distributions
        .per_window
        .rows()
        .into_iter()
        .map(|(count, samples)| Bin {
            start: count as f64,
            end: count as f64 + 1.0,
            count: samples,
        })
        .collect();
    let window = run.analysis.analysis.window;
    let mut chart = Chart::new(
        format!("Requests per client per {window}"),
        Axis::log(format!("requests in one {window} window")),
        Axis::log("client-windows"),
        ChartKind::Histogram(bins),
    )
    .vline(
        format!("p99 {}", overall.per_window.p99),
        overall.per_window.p99 as f64,
    )
    .vline(
        format!("p99.9 {}", overall.per_window.p999),
        overall.per_window.p999 as f64,
    );
    if let Some(r) = &run.analysis.recommendation {
        chart = chart.vline(format!("limit {}", r.rate), r.limit as f64);
    }
    chart
}

/// The most points of a rejects series: a log spanning more minutes (months of
/// traffic, or one hostile far-future timestamp) is drawn in buckets of several
/// minutes, each at its average rejects per minute, so memory and the chart's
/// size stay bounded whatever the timestamps.
const MAX_REJECT_POINTS: i64 = 10_000;

/// Rejected requests per minute under each algorithm, at the policy's limits
/// (minutes without rejects drawn at 0).
pub fn rejects_over_time(run: &ReportRun) -> Chart {
    let (first, last) = run.analysis.ingested.table.span().unwrap_or_default();
    let first_minute = first.div_euclid(60_000);
    let minutes = (last.div_euclid(60_000) - first_minute + 1).max(1);
    let bucket = (minutes + MAX_REJECT_POINTS - 1) / MAX_REJECT_POINTS;
    let buckets = ((minutes + bucket - 1) / bucket) as usize;
    let series = run
        .side_by_side
        .iter()
        .map(|s| {
            let mut rejected = vec![0u64; buckets];
            for m in &s.totals.rejects_per_minute {
                let at = (m.minute.div_euclid(60_000) - first_minute).div_euclid(bucket);
                if let Some(n) = usize::try_from(at).ok().and_then(|i| rejected.get_mut(i)) {
                    *n += m.rejected;
                }
            }
            let points = rejected
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let minute = (first_minute + i as i64 * bucket) * 60_000;
                    (secs(minute), n as f64 / bucket as f64)
                })
                .collect();
            Series {
                name: s.scenario.clone(),
                points,
            }
        })
        .collect();
    Chart::new(
        "Rejected requests per minute, by algorithm",
        Axis::time(),
        Axis::linear("rejected per minute"),
        ChartKind::Lines(series),
    )
}

/// Per-endpoint p99.9 of requests per client per window, against the global limit.
pub fn endpoints(run: &ReportRun, top: usize) -> Chart {
    let bars = run
        .analysis
        .analysis
        .endpoints
        .iter()
        .take(top)
        .map(|e| Bar {
            label: e.endpoint.clone(),
            value: e.stats.per_window.p999 as f64,
        })
        .collect();
    let mut chart = Chart::new(
        "Per-endpoint p99.9 of requests per client per window",
        Axis::linear("requests per client per window (p99.9)"),
        Axis::linear("endpoint"),
        ChartKind::Bars(bars),
    );
    if let Some(r) = &run.analysis.recommendation {
        chart = chart.vline(format!("global limit {}", r.rate), r.limit as f64);
    }
    chart
}
