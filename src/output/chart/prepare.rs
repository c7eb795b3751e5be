//! Turns a chart's data into what is drawn: values projected onto their axes'
//! scales, points that cannot be placed counted and left out, and large inputs
//! thinned to what the picture can show, so a 100k-point series does not make a
//! megabyte of SVG. Labels are cleaned here too, before they reach the SVG writer.

use crate::output::document::{Bin, Scale, Series};
use crate::text::escape;

use super::scale::project;

/// Horizontal resolution of the thinning: about the plot's width in pixels.
pub const COLUMNS: usize = 800;
/// Histograms with more bins than this have neighbouring bins merged.
pub const MAX_BINS: usize = 200;

/// A series projected onto the axes, and how many of its points could not be placed.
pub fn project_series(series: &Series, x: Scale, y: Scale) -> (Vec<(f64, f64)>, usize) {
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .filter_map(|&(px, py)| Some((project(x, px)?, project(y, py)?)))
        .collect();
    let dropped = series.points.len() - points.len();
    (points, dropped)
}

/// Thins `points` to at most four per column of `lo..hi` (split into `columns`
/// columns): in each run of points falling in one column it keeps the first,
/// the lowest, the highest and the last, in their order, so spikes and dips stay
/// visible. Points out of x order are sorted first.
pub fn decimate(mut points: Vec<(f64, f64)>, lo: f64, hi: f64, columns: usize) -> Vec<(f64, f64)> {
    if points.len() <= 4 * columns {
        return points;
    }
    if !points.is_sorted_by(|a, b| a.0 <= b.0) {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let width = (hi - lo).max(f64::MIN_POSITIVE);
    let column = |x: f64| (((x - lo) / width * columns as f64) as usize).min(columns - 1);
    let mut kept = Vec::with_capacity(4 * columns);
    let mut start = 0;
    while start < points.len() {
        let col = column(points[start].0);
        let end = start
            + points[start..]
                .iter()
                .position(|p| column(p.0) != col)
                .unwrap_or(points.len() - start);
        let run = &points[start..end];
        let lowest = (0..run.len())
            .min_by(|&a, &b| run[a].1.total_cmp(&run[b].1))
            .unwrap_or(0);
        let highest = (0..run.len())
            .max_by(|&a, &b| run[a].1.total_cmp(&run[b].1))
            .unwrap_or(0);
        let mut picks = [0, lowest, highest, run.len() - 1];
        picks.sort_unstable();
        let mut last = None;
        for i in picks {
            if last != Some(i) {
                kept.push(run[i]);
                last = Some(i);
            }
        }
        start = end;
    }
    kept
}

/// Histogram bins projected onto the x scale, sorted, without bins that cannot
/// be placed (counted), and merged in equal groups when there are more than
/// [`MAX_BINS`]. Each bin is `(start, end, count)` in projected x units.
pub fn project_bins(bins: &[Bin], x: Scale) -> (Vec<(f64, f64, u64)>, usize) {
    let mut placed: Vec<(f64, f64, u64)> = bins
        .iter()
        .filter_map(|b| {
            let (start, end) = (project(x, b.start)?, project(x, b.end)?);
            (end > start).then_some((start, end, b.count))
        })
        .collect();
    let dropped = bins.len() - placed.len();
    placed.sort_by(|a, b| a.0.total_cmp(&b.0));
    if placed.len() > MAX_BINS {
        let group = placed.len().div_ceil(MAX_BINS);
        placed = placed
            .chunks(group)
            .map(|c| (c[0].0, c[c.len() - 1].1, c.iter().map(|b| b.2).sum()))
            .collect();
    }
    (placed, dropped)
}

/// A label safe to hand to the SVG writer (which escapes `<`, `&` and quotes
/// but passes every other character through): control and hidden characters
/// (bidirectional controls, zero-width and other default-ignorable ones) are
/// written as the escapes every other output shows ([`escape::terminal`]), so
/// that two labels that differ only in one stay two; the result is [`cut`].
pub fn clean_label(text: &str, max_chars: usize) -> String {
    cut(&escape::terminal(text), max_chars)
}

/// `text`, cut with `…` when longer than `max_chars` characters.
pub fn cut(text: &str, max_chars: usize) -> String {
    let mut out: String = text.chars().take(max_chars).collect();
    if text.chars().nth(max_chars).is_some() {
        out.pop();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_extremes_and_bounds_the_count() {
        let mut points: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, 1.0)).collect();
        points[54_321].1 = 900.0;
        points[77_777].1 = -5.0;
        let kept = decimate(points, 0.0, 99_999.0, COLUMNS);
        assert!(kept.len() <= 4 * COLUMNS, "{}", kept.len());
        assert!(kept.contains(&(54_321.0, 900.0)));
        assert!(kept.contains(&(77_777.0, -5.0)));
        assert_eq!(kept.first(), Some(&(0.0, 1.0)));
        assert_eq!(kept.last(), Some(&(99_999.0, 1.0)));
        assert!(kept.is_sorted_by(|a, b| a.0 <= b.0));
    }

    #[test]
    fn small_inputs_are_kept_whole() {
        let points = vec![(2.0, 1.0), (1.0, 2.0)];
        assert_eq!(decimate(points.clone(), 0.0, 2.0, COLUMNS), points);
    }

    #[test]
    fn log_axes_drop_what_they_cannot_place() {
        let series = Series {
            name: "s".into(),
            points: vec![(1.0, 0.0), (10.0, 5.0), (0.0, 3.0), (f64::NAN, 1.0)],
        };
        let (points, dropped) = project_series(&series, Scale::Log, Scale::Log);
        assert_eq!(points, vec![(1.0, 5f64.log10())]);
        assert_eq!(dropped, 3);
    }

    #[test]
    fn many_bins_are_merged_keeping_the_total() {
        let bins: Vec<Bin> = (0..1000)
            .map(|i| Bin {
                start: i as f64,
                end: i as f64 + 1.0,
                count: 2,
            })
            .collect();
        let (merged, dropped) = project_bins(&bins, Scale::Linear);
        assert!(merged.len() <= MAX_BINS);
        assert_eq!(dropped, 0);
        assert_eq!(merged.iter().map(|b| b.2).sum::<u64>(), 2000);
        assert_eq!((merged[0].0, merged[merged.len() - 1].1), (0.0, 1000.0));
    }

    #[test]
    fn labels_show_control_and_hidden_characters_and_lose_excess_length() {
        assert_eq!(clean_label("a\x1b[2Jb\u{202e}", 40), r"a\x1b[2Jb\u{202e}");
        // Found by review: these reached the SVG as they were (and U+202E and
        // U+2066 as one U+FFFD, so two endpoints read as one).
        assert_eq!(
            clean_label("/a\u{ad}b\u{61c}c\u{200b}d\u{2028}e\u{2066}", 80),
            r"/a\u{ad}b\u{61c}c\u{200b}d\u{2028}e\u{2066}"
        );
        assert_eq!(clean_label("abcdef", 4), "abc…");
        assert_eq!(clean_label("abcd", 4), "abcd");
    }
}
