//! A chart in a few lines of plain text, for the formats that cannot draw:
//! each series' peak, mean and low, a histogram's total and busiest bin, the
//! largest bars, and the marked reference values. The text is not escaped here:
//! each renderer escapes it for its medium, as it does any other text.

use crate::output::document::{Bar, Bin, Chart, ChartKind, Scale, Series};

use super::scale::{compact, time_label};

/// Bars listed by name in a summary; the rest are counted.
const LISTED_BARS: usize = 10;
/// Names longer than this are cut (the report's tables keep them whole).
const MAX_NAME: usize = 60;

/// The chart's key figures, one statement per line, starting with its title.
pub fn summary(chart: &Chart) -> Vec<String> {
    let mut lines = vec![chart.title.clone()];
    match &chart.kind {
        ChartKind::Lines(series) => {
            lines.extend(series.iter().map(|s| series_line(s, chart)));
        }
        ChartKind::Histogram(bins) => lines.push(histogram_line(bins, chart)),
        ChartKind::Bars(bars) => lines.extend(bar_lines(bars, chart)),
    }
    let markers = chart
        .hlines
        .iter()
        .map(|m| format!("{} (at y = {})", cut(&m.label), figure(m.value)))
        .chain(
            chart
                .vlines
                .iter()
                .map(|m| format!("{} (at x = {})", cut(&m.label), x_figure(m.value, chart))),
        )
        .collect::<Vec<_>>();
    if !markers.is_empty() {
        lines.push(format!("marked: {}", markers.join("; ")));
    }
    if lines.len() == 1 {
        lines.push("no data".to_string());
    }
    lines
}

fn series_line(series: &Series, chart: &Chart) -> String {
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let Some(&(peak_x, peak)) = points.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return format!("{}: no data", cut(&series.name));
    };
    let low = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let first = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let last = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    format!(
        "{}: {} peak {} at {}, mean {}, low {} ({} points, {} {} to {})",
        cut(&series.name),
        chart.y.label,
        figure(peak),
        x_figure(peak_x, chart),
        figure(mean),
        figure(low),
        points.len(),
        chart.x.label,
        x_figure(first, chart),
        x_figure(last, chart),
    )
}

fn histogram_line(bins: &[Bin], chart: &Chart) -> String {
    let total: u64 = bins.iter().map(|b| b.count).sum();
    let Some(busiest) = bins.iter().max_by_key(|b| b.count) else {
        return "no data".to_string();
    };
    let lo = bins.iter().map(|b| b.start).fold(f64::INFINITY, f64::min);
    let hi = bins.iter().map(|b| b.end).fold(f64::NEG_INFINITY, f64::max);
    format!(
        "{total} counted in {} bins of {} from {} to {}; most ({}) in {} to {}",
        bins.len(),
        chart.x.label,
        figure(lo),
        figure(hi),
        busiest.count,
        figure(busiest.start),
        figure(busiest.end),
    )
}

fn bar_lines(bars: &[Bar], chart: &Chart) -> Vec<String> {
    let mut lines: Vec<String> = bars
        .iter()
        .take(LISTED_BARS)
        .map(|b| format!("{}: {} {}", cut(&b.label), figure(b.value), chart.x.label))
        .collect();
    if bars.len() > LISTED_BARS {
        lines.push(format!("… and {} more", bars.len() - LISTED_BARS));
    }
    lines
}

/// A name of at most [`MAX_NAME`] characters, cut with `…`.
fn cut(name: &str) -> String {
    match name.char_indices().nth(MAX_NAME) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_string(),
    }
}

/// An x value as read on the x axis: a UTC time of day on a time axis, with
/// its date when the chart spans more than a day.
fn x_figure(value: f64, chart: &Chart) -> String {
    match chart.x.scale {
        Scale::Time if value.is_finite() => time_label(value, 1.0, x_span(chart)),
        _ => figure(value),
    }
}

/// How far the chart's lines reach along x (0 for other charts).
fn x_span(chart: &Chart) -> f64 {
    let ChartKind::Lines(series) = &chart.kind else {
        return 0.0;
    };
    let xs = || {
        series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| p.0)
            .filter(|x| x.is_finite())
    };
    let (lo, hi) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    if hi >= lo { hi - lo } else { 0.0 }
}

/// A value with the precision a reader needs: whole above 100, else three
/// significant digits.
fn figure(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        compact(value, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::document::Axis;

    #[test]
    fn lines_summary_gives_peak_mean_and_markers() {
        let chart = Chart::new(
            "Requests per second",
            Axis::time(),
            Axis::linear("req/s"),
            ChartKind::Lines(vec![Series {
                name: "all".into(),
                points: vec![(0.0, 2.0), (60.0, 12.0), (120.0, 4.0)],
            }]),
        )
        .hline("limit 10/s", 10.0);
        assert_eq!(
            summary(&chart),
            [
                "Requests per second",
                "all: req/s peak 12 at 00:01:00, mean 6, low 2 (3 points, time (UTC) 00:00:00 to 00:02:00)",
                "marked: limit 10/s (at y = 10)",
            ]
        );
    }

    #[test]
    fn a_summary_over_days_dates_its_times() {
        let chart = Chart::new(
            "Requests",
            Axis::time(),
            Axis::linear("req/s"),
            ChartKind::Lines(vec![Series {
                name: "all".into(),
                points: vec![(0.0, 2.0), (2.0 * 86_400.0 + 300.0, 5.0)],
            }]),
        );
        assert_eq!(
            summary(&chart)[1],
            "all: req/s peak 5 at 01-03 00:05, mean 3.5, low 2 (2 points, time (UTC) 01-01 00:00 to 01-03 00:05)"
        );
    }

    #[test]
    fn bars_summary_lists_the_first_and_counts_the_rest() {
        let bars = (0..12)
            .map(|i| Bar {
                label: format!("/e{i}"),
                value: 1234.4,
            })
            .collect();
        let chart = Chart::new(
            "Per endpoint",
            Axis::linear("requests"),
            Axis::linear("endpoint"),
            ChartKind::Bars(bars),
        );
        let lines = summary(&chart);
        assert_eq!(lines[1], "/e0: 1234 requests");
        assert_eq!(cut(&"é".repeat(70)), format!("{}…", "é".repeat(60)));
        assert_eq!(lines.last().unwrap(), "… and 2 more");
    }

    #[test]
    fn empty_chart_says_so() {
        let chart = Chart::new(
            "Nothing",
            Axis::linear("x"),
            Axis::linear("y"),
            ChartKind::Bars(vec![]),
        );
        assert_eq!(summary(&chart), ["Nothing", "no data"]);
    }
}
