//! Draws a [`Chart`] as a self-contained SVG string with plotters' SVG backend:
//! lines with a legend, histograms and horizontal bars, dashed reference markers,
//! log and UTC-time axes. The output is deterministic (no ids, no clock) and
//! small (large series are thinned to what the picture can show). Text reaches the SVG as
//! `<text>` elements: labels show control and hidden characters as the
//! escapes of every other output, and are XML-escaped by the backend, so log
//! content cannot inject markup or hide in a label.
//!
//! [`summary`] gives the same chart as a few lines of text for formats that
//! cannot draw.

mod draw;
mod layout;
mod prepare;
mod scale;
mod summary;

use plotters::prelude::*;

pub use summary::summary;

use super::document::Chart;
use crate::text::escape;
use draw::{draw, draw_empty};
use layout::Layout;
use prepare::cut;

/// Width of every chart, in SVG units (scaled to the page by CSS).
pub const WIDTH: u32 = 900;
/// Height of line charts and histograms.
const HEIGHT: u32 = 360;
/// Height of the picture that says there is nothing to draw.
const EMPTY_HEIGHT: u32 = 120;
/// Height of one bar in a bar chart, and the most bars drawn.
const BAR_ROW: u32 = 26;
const MAX_BARS: usize = 30;
/// The most series drawn in one chart.
const MAX_SERIES: usize = 12;
/// Longest legend entry, bar label and marker label, in characters.
const MAX_LABEL: usize = 40;

/// The chart as a standalone SVG document (`xmlns` set, `viewBox` for scaling).
/// Empty data gives a small "no data" picture; it never panics.
pub fn svg(chart: &Chart) -> String {
    let mut notes = Vec::new();
    let layout = Layout::of(chart, &mut notes);
    let height = layout.as_ref().map_or(EMPTY_HEIGHT, |l| l.height);
    let mut body = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut body, (WIDTH, height)).into_drawing_area();
        match &layout {
            Some(layout) => draw(&root, chart, layout, &notes),
            None => draw_empty(&root, chart, "no data"),
        }
        .and_then(|()| Ok(root.present()?))
    };
    if drawn.is_ok() {
        return with_header(&body, chart, height);
    }
    body.clear();
    {
        let root = SVGBackend::with_string(&mut body, (WIDTH, EMPTY_HEIGHT)).into_drawing_area();
        let _ = draw_empty(&root, chart, "this chart could not be drawn");
        let _ = root.present();
    }
    with_header(&body, chart, EMPTY_HEIGHT)
}

/// Replaces the backend's opening tag with one that names the chart for screen
/// readers, and adds a `<title>` (a tooltip in browsers).
fn with_header(body: &str, chart: &Chart, height: u32) -> String {
    let inner = body.split_once(">\n").map_or(body, |(_, rest)| rest);
    let title = escape::html(&cut(&chart.title, 200));
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{title}\">\n\
         <title>{title}</title>\n{inner}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::document::{Axis, Bar, Bin, ChartKind, Series};

    const HOSTILE: &str = "<script>alert(\"x\")</script> & \x1b[2J";

    fn lines(points: Vec<(f64, f64)>, x: Axis, y: Axis) -> Chart {
        let series = vec![Series {
            name: "all".into(),
            points,
        }];
        Chart::new("Requests", x, y, ChartKind::Lines(series))
    }

    /// Every `&` starts an entity, and no element but the writer's own appears.
    fn is_inert(svg: &str) -> bool {
        let tags = [
            "svg", "/svg", "title", "/title", "rect", "text", "/text", "line", "polyline", "path",
            "circle", "polygon",
        ];
        svg.match_indices('&').all(|(i, _)| {
            ["&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#39;"]
                .iter()
                .any(|e| svg[i..].starts_with(e))
        }) && svg.split('<').skip(1).all(|rest| {
            tags.iter()
                .any(|t| rest.starts_with(&format!("{t} ")) || rest.starts_with(&format!("{t}>")))
        }) && !svg.chars().any(|c| c.is_control() && c != '\n')
    }

    #[test]
    fn hostile_labels_are_escaped() {
        let series = vec![Series {
            name: HOSTILE.into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }];
        let charts = [
            Chart::new(
                HOSTILE,
                Axis::linear(HOSTILE),
                Axis::linear(HOSTILE),
                ChartKind::Lines(series),
            )
            .hline(HOSTILE, 1.5)
            .vline(HOSTILE, 0.5),
            Chart::new(
                HOSTILE,
                Axis::linear("n"),
                Axis::linear(HOSTILE),
                ChartKind::Bars(vec![Bar {
                    label: HOSTILE.into(),
                    value: 2.0,
                }]),
            ),
            Chart::new(
                HOSTILE,
                Axis::linear("n"),
                Axis::linear("n"),
                ChartKind::Bars(vec![]),
            ),
        ];
        for chart in &charts {
            let svg = svg(chart);
            assert!(is_inert(&svg), "{svg}");
            assert!(svg.contains("&lt;script&gt;alert(&quot;x&quot;)"));
        }
    }

    #[test]
    fn drawing_is_deterministic() {
        let chart = lines(
            (0..500).map(|i| (i as f64, (i % 17) as f64)).collect(),
            Axis::time(),
            Axis::linear("n"),
        );
        assert_eq!(svg(&chart), svg(&chart));
    }

    #[test]
    fn empty_charts_say_no_data() {
        let nan = lines(vec![(f64::NAN, 1.0)], Axis::linear("x"), Axis::linear("y"));
        let charts = [
            lines(vec![], Axis::time(), Axis::linear("y")),
            nan,
            Chart::new(
                "t",
                Axis::linear("x"),
                Axis::linear("y"),
                ChartKind::Lines(vec![]),
            ),
            Chart::new(
                "t",
                Axis::log("x"),
                Axis::linear("y"),
                ChartKind::Histogram(vec![]),
            ),
            Chart::new(
                "t",
                Axis::linear("x"),
                Axis::linear("y"),
                ChartKind::Bars(vec![]),
            )
            .vline("limit", 3.0),
        ];
        for chart in &charts {
            let svg = svg(chart);
            assert!(svg.contains("no data"), "{svg}");
            assert!(svg.contains("viewBox=\"0 0 900 120\""));
        }
    }

    #[test]
    fn log_scales_leave_out_zeros_without_panicking() {
        let zeros = lines(vec![(0.0, 0.0), (1.0, 0.0)], Axis::log("x"), Axis::log("y"));
        assert!(svg(&zeros).contains("no data"));
        let some = lines(
            vec![(0.0, 5.0), (1.0, 0.0), (10.0, 50.0), (100.0, 5.0)],
            Axis::log("x"),
            Axis::log("y"),
        )
        .hline("zero limit", 0.0);
        let drawn = svg(&some);
        assert!(drawn.contains("3 values not shown"), "{drawn}");
        assert!(drawn.contains("<polyline"));
        let bins = vec![
            Bin {
                start: 0.0,
                end: 1.0,
                count: 3,
            },
            Bin {
                start: 1.0,
                end: 10.0,
                count: 0,
            },
            Bin {
                start: 10.0,
                end: 100.0,
                count: 4,
            },
        ];
        let hist = Chart::new(
            "h",
            Axis::log("rate"),
            Axis::log("clients"),
            ChartKind::Histogram(bins),
        );
        assert!(svg(&hist).contains("1 values not shown"));
    }

    #[test]
    fn markers_are_in_view_and_time_ticks_read_as_utc_clock() {
        let start = 1_700_000_000.0;
        let chart = lines(
            (0..60).map(|i| (start + 60.0 * i as f64, 5.0)).collect(),
            Axis::time(),
            Axis::linear("req/s"),
        )
        .hline("limit 1000/s", 1000.0);
        let svg = svg(&chart);
        assert!(svg.contains("limit 1000/s"));
        assert!(svg.contains("\n1000\n"), "the y axis reaches the limit");
        assert!(svg.contains("\n22:20\n") && svg.contains("\n23:10\n"));
    }

    #[test]
    fn decimation_bounds_the_svg_size() {
        let big: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (i as f64, ((i * 7919) % 1000) as f64))
            .collect();
        let small: Vec<(f64, f64)> = big.iter().copied().step_by(100).collect();
        let big_svg = svg(&lines(big, Axis::linear("x"), Axis::linear("y")));
        let small_svg = svg(&lines(small, Axis::linear("x"), Axis::linear("y")));
        assert!(big_svg.len() < 64 * 1024, "{} bytes", big_svg.len());
        assert!(big_svg.len() < small_svg.len() * 4);
    }

    #[test]
    fn many_bars_and_series_are_capped_with_a_note() {
        let bars = (0..100)
            .map(|i| Bar {
                label: format!("/e{i}"),
                value: i as f64,
            })
            .collect();
        let svg = svg(&Chart::new(
            "b",
            Axis::linear("n"),
            Axis::linear("e"),
            ChartKind::Bars(bars),
        ));
        assert!(svg.contains("70 more bars not shown"));
        assert!(svg.contains("\n/e29\n") && !svg.contains("\n/e30\n"));
    }
}
