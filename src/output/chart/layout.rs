//! Decides a chart before it is drawn: its data projected onto the axes and
//! thinned, the axes' ranges and ticks (wide enough for every marker), the
//! legend's rows and the picture's height; and notes what had to be left out.
//! `None` means there is nothing to draw.

use crate::output::document::{Chart, ChartKind, Marker, Scale};

use super::prepare::{self, COLUMNS, clean_label};
use super::scale::{self, AxisPlan};
use super::{BAR_ROW, HEIGHT, MAX_BARS, MAX_LABEL, MAX_SERIES, WIDTH};

/// Everything decided before drawing: axes, the data in projected units, height.
pub struct Layout {
    pub x: AxisPlan,
    pub y: AxisPlan,
    pub data: Data,
    pub height: u32,
    pub legend_rows: u32,
}

/// The data in projected units: named lines, `(start, end, count)` bins, or
/// labelled bar lengths.
pub enum Data {
    Lines(Vec<(String, Vec<(f64, f64)>)>),
    Histogram(Vec<(f64, f64, u64)>),
    Bars(Vec<(String, f64)>),
}

impl Layout {
    /// `None` when nothing can be drawn. Pushes what had to be left out to `notes`.
    pub fn of(chart: &Chart, notes: &mut Vec<String>) -> Option<Layout> {
        let (xs, ys) = (chart.x.scale, y_scale(chart));
        let markers = |list: &[Marker], s: Scale| -> Vec<f64> {
            list.iter()
                .filter_map(|m| scale::project(s, m.value))
                .collect()
        };
        let (hmarks, vmarks) = (markers(&chart.hlines, ys), markers(&chart.vlines, xs));
        let unplaced = chart.hlines.len() + chart.vlines.len() - hmarks.len() - vmarks.len();
        let mut dropped = 0;
        let layout = match &chart.kind {
            ChartKind::Lines(series) => {
                if series.len() > MAX_SERIES {
                    notes.push(format!(
                        "{} more series not shown",
                        series.len() - MAX_SERIES
                    ));
                }
                let mut lines = Vec::new();
                for s in series.iter().take(MAX_SERIES) {
                    let (points, lost) = prepare::project_series(s, xs, ys);
                    dropped += lost;
                    lines.push((clean_label(&s.name, MAX_LABEL), points));
                }
                if lines.iter().all(|(_, p)| p.is_empty()) {
                    return None;
                }
                let all = || lines.iter().flat_map(|(_, p)| p.iter());
                let x = AxisPlan::new(xs, all().map(|p| p.0).chain(vmarks), false, false)?;
                let y = AxisPlan::new(ys, all().map(|p| p.1).chain(hmarks), true, true)?;
                for (_, points) in &mut lines {
                    *points = prepare::decimate(std::mem::take(points), x.lo, x.hi, COLUMNS);
                }
                let legend_rows = legend_rows(lines.iter().map(|(name, _)| name.as_str()));
                Layout {
                    x,
                    y,
                    legend_rows,
                    height: HEIGHT + 18 * legend_rows,
                    data: Data::Lines(lines),
                }
            }
            ChartKind::Histogram(bins) => {
                let (bins, lost) = prepare::project_bins(bins, xs);
                dropped += lost;
                if bins
                    .iter()
                    .all(|b| scale::project(ys, b.2 as f64).is_none())
                {
                    return None;
                }
                let x = AxisPlan::new(
                    xs,
                    bins.iter().flat_map(|b| [b.0, b.1]).chain(vmarks),
                    false,
                    false,
                )?;
                let counts: Vec<f64> = bins
                    .iter()
                    .filter_map(|b| scale::project(ys, b.2 as f64))
                    .collect();
                // On a log axis the bars stand on a base below the smallest
                // count, so a bin of one is a bar and not a line.
                let floor = match ys {
                    Scale::Log => counts.iter().copied().reduce(f64::min).map(|low| low - 0.3),
                    _ => None,
                };
                let y = AxisPlan::new(
                    ys,
                    counts.into_iter().chain(floor).chain(hmarks),
                    true,
                    true,
                )?;
                Layout {
                    x,
                    y,
                    legend_rows: 0,
                    height: HEIGHT,
                    data: Data::Histogram(bins),
                }
            }
            ChartKind::Bars(bars) => {
                if bars.len() > MAX_BARS {
                    notes.push(format!("{} more bars not shown", bars.len() - MAX_BARS));
                }
                let shown: Vec<(String, f64)> = bars
                    .iter()
                    .take(MAX_BARS)
                    .filter_map(|b| {
                        Some((
                            clean_label(&b.label, MAX_LABEL),
                            scale::project(xs, b.value)?,
                        ))
                    })
                    .collect();
                dropped += bars.len().min(MAX_BARS) - shown.len();
                if shown.is_empty() {
                    return None;
                }
                // Room right of the longest bar for its value label.
                let longest = shown.iter().map(|b| b.1).fold(f64::NEG_INFINITY, f64::max);
                let room = if xs == Scale::Log {
                    longest + 0.2
                } else {
                    longest * 1.1
                };
                let values = shown.iter().map(|b| b.1).chain([room]);
                let x = AxisPlan::new(xs, values.chain(vmarks), true, true)?;
                let y = AxisPlan::rows(shown.len());
                let height = 110 + BAR_ROW * shown.len() as u32;
                Layout {
                    x,
                    y,
                    legend_rows: 0,
                    height,
                    data: Data::Bars(shown),
                }
            }
        };
        if dropped + unplaced > 0 {
            notes.push(format!(
                "{} values not shown (not finite, or not positive on a log scale)",
                dropped + unplaced
            ));
        }
        Some(layout)
    }
}

/// A y axis cannot be a time axis: such a chart gets a linear one.
pub fn y_scale(chart: &Chart) -> Scale {
    match chart.y.scale {
        Scale::Time => Scale::Linear,
        s => s,
    }
}

/// Rough width of `text` at 12 px, for laying out the legend.
pub fn text_width(text: &str) -> i32 {
    (text.chars().count() as f64 * 6.8).ceil() as i32
}

/// Legend entries are laid left to right, wrapping at the chart's width.
pub fn legend_positions<'n>(names: impl Iterator<Item = &'n str>) -> Vec<(i32, i32)> {
    let (mut x, mut row) = (16, 0);
    names
        .map(|name| {
            let width = 28 + text_width(name) + 20;
            if x > 16 && x + width > WIDTH as i32 - 16 {
                (x, row) = (16, row + 1);
            }
            let at = (x, row);
            x += width;
            at
        })
        .collect()
}

fn legend_rows<'n>(names: impl Iterator<Item = &'n str>) -> u32 {
    legend_positions(names)
        .last()
        .map_or(0, |&(_, row)| row as u32 + 1)
}
