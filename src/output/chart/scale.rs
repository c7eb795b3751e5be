//! Axis arithmetic for charts: where values sit on an axis, which ticks it shows
//! and how their labels read. Log axes are drawn on log10 of the values (so the
//! drawing itself is always linear); time axes label epoch seconds in UTC.
//! Nothing here draws.

use crate::output::document::Scale;
use crate::text::time::civil_from_days;

/// How many ticks an axis aims for.
const TARGET_TICKS: f64 = 6.0;

/// Seconds per day.
const DAY: i64 = 86_400;

/// Time-axis tick steps, in seconds, from the finest.
const TIME_STEPS: [i64; 19] = [
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10_800,
    21_600,
    43_200,
    DAY,
    7 * DAY,
];

/// Where a value sits on an axis of `scale`: itself, or its log10 on a log axis.
/// `None` for values that cannot be placed (non-finite, or not positive on a log axis).
pub fn project(scale: Scale, value: f64) -> Option<f64> {
    match scale {
        Scale::Log if value > 0.0 && value.is_finite() => Some(value.log10()),
        Scale::Log => None,
        _ if value.is_finite() => Some(value),
        _ => None,
    }
}

/// One axis laid out: its range and ticks, in projected units.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisPlan {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
    /// Linear axes: the tick step, which sets how many decimals labels show.
    step: f64,
}

impl AxisPlan {
    /// Lays out an axis over projected `values`. `snap` widens the range to whole
    /// ticks (a value axis); without it the range is the data's own (an x axis, so
    /// lines reach both edges). `from_zero` makes a linear range start at zero
    /// when the data are not negative. `None` when there are no values.
    pub fn new(
        scale: Scale,
        values: impl IntoIterator<Item = f64>,
        snap: bool,
        from_zero: bool,
    ) -> Option<AxisPlan> {
        let (mut lo, mut hi) =
            values
                .into_iter()
                .fold(None, |acc: Option<(f64, f64)>, v| match acc {
                    None => Some((v, v)),
                    Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
                })?;
        if from_zero && scale != Scale::Log && lo >= 0.0 {
            lo = 0.0;
        }
        if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
            let pad = match scale {
                Scale::Log => 0.5,
                Scale::Time => 60.0,
                Scale::Linear if lo == 0.0 => 1.0,
                Scale::Linear => lo.abs() * 0.5,
            };
            (lo, hi) = if from_zero && lo == 0.0 {
                (0.0, pad)
            } else {
                (lo - pad, hi + pad)
            };
        }
        Some(match scale {
            Scale::Log => log_plan(lo, hi, snap),
            Scale::Time => time_plan(lo, hi),
            Scale::Linear => linear_plan(lo, hi, snap),
        })
    }

    /// The category axis of a bar chart: `rows` rows of height 1, a tick at each
    /// row's centre.
    pub fn rows(rows: usize) -> AxisPlan {
        AxisPlan {
            scale: Scale::Linear,
            lo: 0.0,
            hi: rows as f64,
            ticks: (0..rows).map(|i| i as f64 + 0.5).collect(),
            step: 1.0,
        }
    }

    /// The label of a tick at projected position `at`.
    pub fn label(&self, at: f64) -> String {
        match self.scale {
            Scale::Log => compact(10f64.powf(at), None),
            Scale::Time => time_label(at, self.step, self.hi - self.lo),
            Scale::Linear => compact(at, Some((self.step, self.lo.abs().max(self.hi.abs())))),
        }
    }
}

/// A snapped axis ends a little above its largest value, so a line or a marker
/// at the maximum does not run along the plot's top edge.
const HEADROOM: f64 = 0.04;

fn linear_plan(lo: f64, hi: f64, snap: bool) -> AxisPlan {
    let hi = if snap { hi + (hi - lo) * HEADROOM } else { hi };
    let step = nice_step((hi - lo) / TARGET_TICKS);
    let (lo, hi) = if snap {
        ((lo / step).floor() * step, (hi / step).ceil() * step)
    } else {
        (lo, hi)
    };
    AxisPlan {
        scale: Scale::Linear,
        lo,
        hi,
        ticks: multiples(lo, hi, step),
        step,
    }
}

fn log_plan(lo: f64, hi: f64, snap: bool) -> AxisPlan {
    let (lo, hi) = if snap {
        (lo.floor(), (hi + (hi - lo) * HEADROOM).ceil())
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    };
    let decades: Vec<f64> = multiples(lo, hi, 1.0);
    let ticks = if decades.len() >= 3 {
        let every = decades.len().div_ceil(TARGET_TICKS as usize + 2);
        decades.into_iter().step_by(every).collect()
    } else {
        let first = lo.floor() as i32;
        let last = hi.ceil() as i32;
        (first..=last)
            .flat_map(|d| [1.0, 2.0, 5.0].map(|m| d as f64 + f64::log10(m)))
            .filter(|t| (lo..=hi).contains(t))
            .collect()
    };
    AxisPlan {
        scale: Scale::Log,
        lo,
        hi,
        ticks,
        step: 1.0,
    }
}

fn time_plan(lo: f64, hi: f64) -> AxisPlan {
    let span = hi - lo;
    let step = TIME_STEPS
        .iter()
        .copied()
        .find(|&s| span / s as f64 <= TARGET_TICKS + 2.0)
        .unwrap_or(((span / TARGET_TICKS / DAY as f64).ceil() as i64).max(1) * DAY);
    let step = step as f64;
    AxisPlan {
        scale: Scale::Time,
        lo,
        hi,
        ticks: multiples(lo, hi, step),
        step,
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// The multiples of `step` in `lo..=hi`, computed from integers so they do not drift.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A number in few characters: `1.5k`, `2M`, `0.25`. With `linear = Some((step,
/// largest))` the unit follows the axis's largest value and the decimals its
/// step, so neighbouring ticks never read alike; without, three significant digits.
pub fn compact(value: f64, linear: Option<(f64, f64)>) -> String {
    let magnitude = linear.map_or(value.abs(), |(_, largest)| largest);
    let (unit, suffix) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        // On a linear axis thousands stay whole up to 10k: 500, 1000, 1500.
        .find(|(u, suffix)| {
            magnitude
                >= *u
                    * if linear.is_some() && *suffix == "k" {
                        10.0
                    } else {
                        1.0
                    }
        })
        .unwrap_or((1.0, ""));
    if value == 0.0 {
        return "0".to_string();
    }
    let scaled = value / unit;
    let decimals = match linear {
        Some((step, _)) => (-(step / unit).log10()).ceil().max(0.0) as usize,
        None => (2.0 - scaled.abs().log10().floor()).clamp(0.0, 6.0) as usize,
    };
    let mut text = format!("{scaled:.decimals$}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if text == "-0" {
        text = "0".to_string();
    }
    text + suffix
}

/// A value written beside a bar: whole when its axis is labelled without a
/// unit (below 10k), else three significant digits with `k`, `M`, `G`.
pub fn value_label(value: f64, largest: f64) -> String {
    if largest < 1e4 && value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        compact(value, None)
    }
}

/// An epoch-seconds tick label in UTC: `HH:MM`, `HH:MM:SS` for sub-minute steps,
/// `MM-DD HH:MM` when the axis spans more than a day.
pub fn time_label(epoch_seconds: f64, step: f64, span: f64) -> String {
    let secs = epoch_seconds.round() as i64;
    let (day, of_day) = (secs.div_euclid(DAY), secs.rem_euclid(DAY));
    let (h, m, s) = (of_day / 3600, of_day / 60 % 60, of_day % 60);
    if span > DAY as f64 {
        let (_, month, date) = civil_from_days(day);
        format!("{month:02}-{date:02} {h:02}:{m:02}")
    } else if step < 60.0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_value_axis_starts_at_zero_and_ends_on_a_tick() {
        let plan = AxisPlan::new(Scale::Linear, [3.0, 87.0], true, true).unwrap();
        assert_eq!((plan.lo, plan.hi), (0.0, 100.0));
        assert_eq!(plan.ticks, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(plan.label(40.0), "40");
    }

    #[test]
    fn linear_labels_keep_neighbouring_ticks_apart() {
        let plan = AxisPlan::new(Scale::Linear, [0.0, 1.1e6], true, true).unwrap();
        let labels: Vec<String> = plan.ticks.iter().map(|t| plan.label(*t)).collect();
        assert_eq!(labels, ["0", "0.2M", "0.4M", "0.6M", "0.8M", "1M", "1.2M"]);
        let fine = AxisPlan::new(Scale::Linear, [0.0, 0.25], true, true).unwrap();
        assert_eq!(fine.label(0.05), "0.05");
    }

    #[test]
    fn log_axis_uses_decades_or_1_2_5() {
        let wide = AxisPlan::new(Scale::Log, [-1.0, 3.0], true, false).unwrap();
        assert_eq!((wide.lo, wide.hi), (-1.0, 4.0));
        let labels: Vec<String> = wide.ticks.iter().map(|t| wide.label(*t)).collect();
        assert_eq!(labels, ["0.1", "1", "10", "100", "1k", "10k"]);
        let narrow = AxisPlan::new(Scale::Log, [0.5, 0.9], true, false).unwrap();
        let labels: Vec<String> = narrow.ticks.iter().map(|t| narrow.label(*t)).collect();
        assert_eq!(labels, ["1", "2", "5", "10"]);
    }

    #[test]
    fn log_projection_refuses_what_it_cannot_place() {
        assert_eq!(project(Scale::Log, 100.0), Some(2.0));
        assert_eq!(project(Scale::Log, 0.0), None);
        assert_eq!(project(Scale::Log, -3.0), None);
        assert_eq!(project(Scale::Linear, f64::NAN), None);
        assert_eq!(project(Scale::Linear, -3.0), Some(-3.0));
    }

    #[test]
    fn time_axis_ticks_on_round_utc_minutes() {
        // 2023-11-14 22:13:20 UTC to 23:13:20: ticks every 10 minutes.
        let plan = AxisPlan::new(
            Scale::Time,
            [1_700_000_000.0, 1_700_003_600.0],
            false,
            false,
        )
        .unwrap();
        let labels: Vec<String> = plan.ticks.iter().map(|t| plan.label(*t)).collect();
        assert_eq!(
            labels,
            ["22:20", "22:30", "22:40", "22:50", "23:00", "23:10"]
        );
        assert_eq!(time_label(1_700_000_000.0, 1.0, 30.0), "22:13:20");
        assert_eq!(time_label(1_700_000_000.0, DAY as f64, 3e5), "11-14 22:13");
        assert_eq!(time_label(-1.0, 60.0, 600.0), "23:59");
    }

    #[test]
    fn a_single_value_still_gets_a_range() {
        let plan = AxisPlan::new(Scale::Linear, [0.0], true, true).unwrap();
        assert!(plan.lo == 0.0 && plan.hi >= 1.0, "{plan:?}");
        let plan = AxisPlan::new(Scale::Log, [2.0], true, false).unwrap();
        assert!(plan.lo < 2.0 && plan.hi > 2.0);
        assert!(AxisPlan::new(Scale::Linear, [], true, true).is_none());
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact(1500.0, None), "1.5k");
        assert_eq!(compact(0.00123, None), "0.00123");
        assert_eq!(compact(999.0, None), "999");
        assert_eq!(compact(2e6, None), "2M");
        assert_eq!(compact(0.0, None), "0");
        assert_eq!(value_label(1200.0, 1500.0), "1200");
        assert_eq!(value_label(4120.0, 250_000.0), "4.12k");
    }
}
