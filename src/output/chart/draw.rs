//! The plotters drawing of a laid-out chart: title and notes, mesh and axis
//! labels, lines with their legend, histogram bins, bars with their values,
//! and dashed reference markers. Every label passes through
//! [`clean_label`] before the backend XML-escapes it.

use std::error::Error;
use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::document::{Chart, Scale};

use super::layout::{Data, Layout, legend_positions, text_width};
use super::prepare::clean_label;
use super::scale::{self, AxisPlan};
use super::{MAX_LABEL, WIDTH};

/// Colour-blind-safe series colours (Okabe–Ito, without the yellow).
static SERIES: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x56, 0xb4, 0xe9),
    RGBColor(0x33, 0x22, 0x88),
];
/// Marker colours: dark enough to stand apart from the series.
static MARKERS: [RGBColor; 3] = [
    RGBColor(0xb4, 0x23, 0x18),
    RGBColor(0x44, 0x44, 0x44),
    RGBColor(0x7a, 0x4e, 0x00),
];
const TEXT: RGBColor = RGBColor(0x1f, 0x29, 0x37);
const MUTED: RGBColor = RGBColor(0x6b, 0x72, 0x80);
const GRID: RGBColor = RGBColor(0xe5, 0xe7, 0xeb);
const AXIS: RGBColor = RGBColor(0x9c, 0xa3, 0xaf);

pub type Root<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;
pub type Drawn = Result<(), Box<dyn Error>>;

/// A plotters axis whose ticks are the ones [`AxisPlan`] chose (plotters would
/// pick its own, which on log or time axes land on meaningless values).
#[derive(Clone)]
struct Ticked {
    range: RangedCoordf64,
    ticks: Vec<f64>,
}

impl From<&AxisPlan> for Ticked {
    fn from(plan: &AxisPlan) -> Self {
        Ticked {
            range: (plan.lo..plan.hi).into(),
            ticks: plan.ticks.clone(),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.range()
    }
}

/// A text style of `px` pixels: the backend divides sizes by 1.24.
fn font(px: f64, colour: &'static RGBColor) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", px * 1.24).into_font()).color(colour)
}

/// The title's style.
fn bold(px: f64) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", px * 1.24, FontStyle::Bold).into_font()).color(&TEXT)
}

pub fn draw_title(root: &Root, chart: &Chart, notes: &[String]) -> Drawn {
    let style = bold(16.0).pos(Pos::new(HPos::Left, VPos::Top));
    root.draw(&Text::new(clean_label(&chart.title, 90), (16, 12), style))?;
    let small = font(11.0, &MUTED).pos(Pos::new(HPos::Right, VPos::Top));
    for (i, note) in notes.iter().enumerate() {
        root.draw(&Text::new(
            note.clone(),
            (WIDTH as i32 - 16, 14 + 14 * i as i32),
            small.clone(),
        ))?;
    }
    Ok(())
}

pub fn draw_empty(root: &Root, chart: &Chart, message: &str) -> Drawn {
    root.fill(&WHITE)?;
    draw_title(root, chart, &[])?;
    let centre = font(14.0, &MUTED).pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        message.to_string(),
        (WIDTH as i32 / 2, 74),
        centre,
    ))?;
    Ok(())
}

pub fn draw(root: &Root, chart: &Chart, layout: &Layout, notes: &[String]) -> Drawn {
    root.fill(&WHITE)?;
    draw_title(root, chart, notes)?;
    let top = 44
        + 18 * layout.legend_rows
        + if chart.vlines.is_empty() {
            4
        } else {
            14 * chart.vlines.len() as u32
        };
    let label_area = match &layout.data {
        Data::Bars(bars) => {
            bars.iter()
                .map(|b| text_width(&b.0))
                .max()
                .unwrap_or(0)
                .clamp(40, 280) as u32
                + 16
        }
        _ => 72,
    };
    let (x, y) = (&layout.x, &layout.y);
    let mut plot = ChartBuilder::on(root)
        .margin_top(top)
        .margin_right(28)
        .margin_left(12)
        .margin_bottom(8)
        .x_label_area_size(46)
        .y_label_area_size(label_area)
        .build_cartesian_2d(Ticked::from(x), Ticked::from(y))?;
    let bar_labels: Vec<String> = match &layout.data {
        Data::Bars(bars) => bars.iter().map(|b| b.0.clone()).collect(),
        _ => Vec::new(),
    };
    let y_label = |at: &f64| match &layout.data {
        // Bars are listed from the top: row i is centred at rows - i - 0.5.
        Data::Bars(_) => bar_labels
            .get((y.hi - at).floor() as usize)
            .cloned()
            .unwrap_or_default(),
        _ => y.label(*at),
    };
    let x_label = |at: &f64| x.label(*at);
    let mut mesh = plot.configure_mesh();
    mesh.x_desc(clean_label(&chart.x.label, 80))
        .y_desc(clean_label(&chart.y.label, 60))
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style(font(12.0, &MUTED))
        .axis_desc_style(font(12.0, &TEXT))
        .bold_line_style(GRID)
        .axis_style(AXIS);
    if matches!(layout.data, Data::Bars(_)) {
        mesh.disable_y_mesh();
    }
    mesh.draw()?;
    match &layout.data {
        Data::Lines(lines) => draw_lines(root, &mut plot, lines, layout)?,
        Data::Histogram(bins) => draw_histogram(&mut plot, bins, y)?,
        Data::Bars(bars) => draw_bars(&mut plot, bars, x)?,
    }
    draw_markers(&mut plot, chart, layout)
}

fn draw_lines(
    root: &Root,
    plot: &mut Plot,
    lines: &[(String, Vec<(f64, f64)>)],
    layout: &Layout,
) -> Drawn {
    let positions = legend_positions(lines.iter().map(|(name, _)| name.as_str()));
    for (i, ((name, points), (lx, row))) in lines.iter().zip(positions).enumerate() {
        let colour = SERIES[i % SERIES.len()];
        plot.draw_series(LineSeries::new(
            points.iter().copied(),
            colour.stroke_width(2),
        ))?;
        if layout.legend_rows > 0 {
            let ly = 46 + 18 * row;
            root.draw(&PathElement::new(
                vec![(lx, ly), (lx + 20, ly)],
                colour.stroke_width(3),
            ))?;
            let style = font(12.0, &TEXT).pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(name.clone(), (lx + 26, ly), style))?;
        }
    }
    Ok(())
}

fn draw_histogram(plot: &mut Plot, bins: &[(f64, f64, u64)], y: &AxisPlan) -> Drawn {
    let fill = SERIES[0].mix(0.85).filled();
    plot.draw_series(bins.iter().filter_map(|&(start, end, count)| {
        let top = scale::project(y.scale, count as f64)?;
        let mut bar = Rectangle::new([(start, y.lo), (end, top.max(y.lo))], fill);
        bar.set_margin(0, 0, 0, 1);
        Some(bar)
    }))?;
    Ok(())
}

fn draw_bars(plot: &mut Plot, bars: &[(String, f64)], x: &AxisPlan) -> Drawn {
    let rows = bars.len() as f64;
    let base = if x.scale == Scale::Log {
        x.lo
    } else {
        0f64.max(x.lo)
    };
    plot.draw_series(bars.iter().enumerate().map(|(i, &(_, value))| {
        let centre = rows - i as f64 - 0.5;
        Rectangle::new(
            [(base, centre - 0.32), (value, centre + 0.32)],
            SERIES[0].filled(),
        )
    }))?;
    let style = font(12.0, &TEXT).pos(Pos::new(HPos::Left, VPos::Center));
    plot.draw_series(bars.iter().enumerate().map(|(i, &(_, value))| {
        let label = match x.scale {
            Scale::Log => scale::value_label(10f64.powf(value), 10f64.powf(x.hi)),
            _ => scale::value_label(value, x.hi),
        };
        EmptyElement::at((value, rows - i as f64 - 0.5)) + Text::new(label, (6, 0), style.clone())
    }))?;
    Ok(())
}

/// Dashed reference lines: horizontal ones labelled at their right end,
/// vertical ones labelled above the plot, one label row each so they never overlap.
fn draw_markers(plot: &mut Plot, chart: &Chart, layout: &Layout) -> Drawn {
    let (x, y) = (&layout.x, &layout.y);
    for (i, marker) in chart.hlines.iter().enumerate() {
        let Some(at) = scale::project(y.scale, marker.value) else {
            continue;
        };
        let colour = &MARKERS[i % MARKERS.len()];
        plot.draw_series(DashedLineSeries::new(
            [(x.lo, at), (x.hi, at)],
            7,
            4,
            colour.stroke_width(2),
        ))?;
        let style = font(12.0, colour).pos(Pos::new(HPos::Right, VPos::Bottom));
        let label = Text::new(clean_label(&marker.label, MAX_LABEL), (-6, -4), style);
        plot.draw_series(std::iter::once(EmptyElement::at((x.hi, at)) + label))?;
    }
    let count = chart.vlines.len() as i32;
    for (i, marker) in chart.vlines.iter().enumerate() {
        let Some(at) = scale::project(x.scale, marker.value) else {
            continue;
        };
        let colour = &MARKERS[i % MARKERS.len()];
        plot.draw_series(DashedLineSeries::new(
            [(at, y.lo), (at, y.hi)],
            7,
            4,
            colour.stroke_width(2),
        ))?;
        let right_half = (at - x.lo) / (x.hi - x.lo) > 0.6;
        let (h, dx) = if right_half {
            (HPos::Right, 4)
        } else {
            (HPos::Left, -4)
        };
        let style = font(12.0, colour).pos(Pos::new(h, VPos::Bottom));
        let dy = -4 - 14 * (count - 1 - i as i32);
        let label = Text::new(clean_label(&marker.label, MAX_LABEL), (dx, dy), style);
        plot.draw_series(std::iter::once(EmptyElement::at((at, y.hi)) + label))?;
    }
    Ok(())
}
