//! Hand-written SVG charts: horizontal grouped bars with error bars, and lines with interval
//! whiskers. Plain elements with explicit sizes, so they draw the same in any browser and
//! need nothing outside the page.

use std::fmt::Write as _;

use crate::doc::{Chart, ChartKind, Point};
use crate::figures::figure;

/// Colour-blind-safe (Okabe-Ito); an impl keeps its colour across charts by its index.
pub const PALETTE: &[&str] = &[
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    // A ninth, grey, for the floor chart's nine parts.
    "#999999",
];

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round axis ticks covering 0..max.
fn ticks(max: f64) -> Vec<f64> {
    if max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

fn max_value(chart: &Chart) -> f64 {
    chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().flatten())
        .map(|p| p.high.max(p.median))
        .fold(0.0, f64::max)
}

/// The chart as one `<svg class="chart">` element; `index_of` gives a series' colour index.
pub fn render(chart: &Chart, index_of: &dyn Fn(&str) -> usize) -> String {
    match chart.kind {
        ChartKind::Bars => bars(chart, index_of),
        ChartKind::Lines => lines(chart, index_of),
        ChartKind::Stacked => stacked(chart),
    }
}

/// The `<svg>` start tag and the chart's title.
fn open(chart: &Chart, width: f64, height: f64) -> String {
    format!(
        r#"<svg class="chart" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}"><text x="4" y="16" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(&chart.title)
    )
}

/// Legend entries laid out left to right from `x`, wrapping before `right`: each entry's
/// (x, line), and the number of lines. Text width is estimated (7.5 px a character at 12 px
/// is wide for the fonts browsers pick), so an entry never runs past `right`.
fn legend_layout(chart: &Chart, x: f64, right: f64) -> (Vec<(f64, usize)>, usize) {
    let mut at = Vec::new();
    let (mut cx, mut line) = (x, 0);
    for s in &chart.series {
        let w = 16.0 + 7.5 * s.name.chars().count() as f64 + 18.0;
        if cx > x && cx + w > right {
            cx = x;
            line += 1;
        }
        at.push((cx, line));
        cx += w;
    }
    (at, line + 1)
}

/// Height of one legend line.
const LEGEND_LINE: f64 = 17.0;

/// Draws the legend with its first line's baseline at `y`.
fn legend(
    out: &mut String,
    chart: &Chart,
    index_of: &dyn Fn(&str) -> usize,
    at: &[(f64, usize)],
    y: f64,
) {
    for (s, &(cx, line)) in chart.series.iter().zip(at) {
        let colour = PALETTE[index_of(&s.name) % PALETTE.len()];
        let ly = y + line as f64 * LEGEND_LINE;
        let _ = write!(
            out,
            r#"<g class="legend-entry"><rect class="legend" x="{cx:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{ly:.1}" font-size="12">{}</text></g>"#,
            ly - 10.0,
            cx + 16.0,
            escape(&s.name)
        );
    }
}

/// The grid lines and figures of a horizontal value axis between `rows.0` and `rows.1`, and
/// its unit centred at `centre` below.
fn value_axis(
    out: &mut String,
    ticks: &[f64],
    x_of: &dyn Fn(f64) -> f64,
    (top, axis_y): (f64, f64),
    centre: f64,
    unit: &str,
) {
    for t in ticks {
        let x = x_of(*t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{axis_y:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
            axis_y + 14.0,
            figure(*t)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{centre:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
        axis_y + 29.0,
        escape(unit)
    );
}

/// The start of a chart with horizontal bars: the title, the legend and the value axis up to
/// `max`; gives the SVG so far, the axis's top value and its baseline's y.
fn horizontal_frame(
    chart: &Chart,
    index_of: &dyn Fn(&str) -> usize,
    legend_at: &[(f64, usize)],
    (width, height, top): (f64, f64, f64),
    (label_w, plot_w): (f64, f64),
    max: f64,
) -> (String, f64, f64) {
    let ticks = ticks(max);
    let scale_max = *ticks.last().unwrap_or(&1.0);
    let x_of = |v: f64| label_w + v / scale_max * plot_w;
    let mut out = open(chart, width, height);
    legend(&mut out, chart, index_of, legend_at, 34.0);
    let axis_y = height - 34.0;
    value_axis(
        &mut out,
        &ticks,
        &x_of,
        (top, axis_y),
        label_w + plot_w / 2.0,
        &chart.unit,
    );
    (out, scale_max, axis_y)
}

fn bars(chart: &Chart, index_of: &dyn Fn(&str) -> usize) -> String {
    let label_w = 8.0 + 6.6 * chart.categories.iter().map(|c| c.len()).max().unwrap_or(4) as f64;
    let plot_w = 520.0;
    let bar_h = 14.0;
    let group_gap = 10.0;
    let width = label_w + plot_w + 90.0;
    let (legend_at, legend_lines) = legend_layout(chart, 4.0, width - 4.0);
    let top = 44.0 + (legend_lines - 1) as f64 * LEGEND_LINE;
    let n = chart.series.len().max(1) as f64;
    let group_h = n * bar_h + group_gap;
    let height = top + group_h * chart.categories.len() as f64 + 40.0;
    let (mut out, scale_max, axis_y) = horizontal_frame(
        chart,
        index_of,
        &legend_at,
        (width, height, top),
        (label_w, plot_w),
        max_value(chart),
    );
    let x_of = |v: f64| label_w + v / scale_max * plot_w;
    for (ci, cat) in chart.categories.iter().enumerate() {
        let gy = top + ci as f64 * group_h;
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"#,
            label_w - 6.0,
            gy + n * bar_h / 2.0 + 4.0,
            escape(cat)
        );
        for (si, s) in chart.series.iter().enumerate() {
            let Some(Some(p)) = s.points.get(ci) else {
                continue;
            };
            let y = gy + si as f64 * bar_h;
            let colour = PALETTE[index_of(&s.name) % PALETTE.len()];
            let w = (x_of(p.median) - label_w).max(0.5);
            let _ = write!(
                out,
                r#"<rect class="bar" x="{label_w:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{colour}"><title>{}: {} (95% CI {} to {})</title></rect>"#,
                y + 1.0,
                bar_h - 2.0,
                escape(&format!("{} {}", s.name, cat)),
                figure(p.median),
                figure(p.low),
                figure(p.high)
            );
            error_bar(&mut out, x_of(p.low), x_of(p.high), y + bar_h / 2.0, true);
        }
    }
    let _ = write!(
        out,
        r##"<line x1="{label_w:.1}" y1="{top:.1}" x2="{label_w:.1}" y2="{axis_y:.1}" stroke="#333"/></svg>"##
    );
    out
}

/// How far a value axis reaches for `totals`: the largest, unless a few stand more than three
/// times the median above the rest, when it reaches a little past the largest of the rest and
/// those few are cut at its end (a 3 ms bar beside 100 µs ones would leave the others unread).
fn axis_reach(totals: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = totals.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let Some(&max) = sorted.last() else {
        return 1.0;
    };
    let cap = 3.0 * sorted[sorted.len() / 2];
    let rest = sorted
        .iter()
        .copied()
        .filter(|&v| v <= cap)
        .fold(0.0, f64::max);
    if rest > 0.0 && max > 1.5 * rest {
        rest * 1.15
    } else {
        max
    }
}

/// A bar per category with the series' parts laid end to end. The parts are not impls, so
/// each takes its colour from its place among the series.
fn stacked(chart: &Chart) -> String {
    let index_of = |name: &str| {
        chart
            .series
            .iter()
            .position(|s| s.name == name)
            .unwrap_or(0)
    };
    let index_of = &index_of;
    let label_w = 8.0 + 6.6 * chart.categories.iter().map(|c| c.len()).max().unwrap_or(4) as f64;
    let plot_w = 520.0;
    let bar_h = 16.0;
    let width = label_w + plot_w + 90.0;
    let (legend_at, legend_lines) = legend_layout(chart, 4.0, width - 4.0);
    let top = 44.0 + (legend_lines - 1) as f64 * LEGEND_LINE;
    let whole = |ci: usize| -> f64 {
        chart
            .series
            .iter()
            .filter_map(|s| s.points.get(ci).and_then(|p| p.as_ref()))
            .map(|p| p.median.max(0.0))
            .sum()
    };
    let totals: Vec<f64> = (0..chart.categories.len()).map(whole).collect();
    let reach = axis_reach(&totals);
    let cut = totals.iter().any(|&t| t > reach);
    // A line more below the axis for the note on cut bars.
    let height =
        top + (bar_h + 4.0) * chart.categories.len() as f64 + if cut { 54.0 } else { 40.0 };
    let (mut out, scale_max, axis_y) = horizontal_frame(
        chart,
        index_of,
        &legend_at,
        (width, height, top),
        (label_w, plot_w),
        reach,
    );
    // A bar beyond the axis is cut at its end and marked, its whole figure still written.
    let x_of = |v: f64| label_w + v.min(scale_max) / scale_max * plot_w;
    for (ci, cat) in chart.categories.iter().enumerate() {
        let y = top + ci as f64 * (bar_h + 4.0);
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"#,
            label_w - 6.0,
            y + bar_h / 2.0 + 4.0,
            escape(cat)
        );
        let mut at = 0.0;
        for s in &chart.series {
            let Some(Some(p)) = s.points.get(ci) else {
                continue;
            };
            let v = p.median.max(0.0);
            let colour = PALETTE[index_of(&s.name) % PALETTE.len()];
            let _ = write!(
                out,
                r#"<rect class="bar" x="{:.1}" y="{y:.1}" width="{:.1}" height="{bar_h:.1}" fill="{colour}"><title>{}: {} (95% CI {} to {})</title></rect>"#,
                x_of(at),
                (x_of(at + v) - x_of(at)).max(0.0),
                escape(&format!("{cat}, {}", s.name)),
                figure(p.median),
                figure(p.low),
                figure(p.high)
            );
            at += v;
        }
        if at > scale_max {
            let x = label_w + plot_w - 10.0;
            let _ = write!(
                out,
                r##"<path d="M{:.1} {:.1} l6 {bar_h:.1} M{:.1} {:.1} l6 {bar_h:.1}" stroke="#fff" stroke-width="2.5"/>"##,
                x - 3.0,
                y,
                x + 2.0,
                y
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            x_of(at) + 4.0,
            y + bar_h / 2.0 + 4.0,
            figure(whole(ci))
        );
    }
    if cut {
        let _ = write!(
            out,
            r##"<text x="{label_w:.1}" y="{:.1}" font-size="10" fill="#555">A bar cut by two white strokes runs past the axis; its whole figure is written beside it.</text>"##,
            axis_y + 43.0
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{label_w:.1}" y1="{top:.1}" x2="{label_w:.1}" y2="{axis_y:.1}" stroke="#333"/></svg>"##
    );
    out
}

/// A whisker from `a` to `b` across the bar (horizontal) or the point (vertical).
fn error_bar(out: &mut String, a: f64, b: f64, at: f64, horizontal: bool) {
    let cap = 4.0;
    if horizontal {
        let _ = write!(
            out,
            r##"<path class="errorbar" d="M{a:.1} {:.1}V{:.1}M{a:.1} {at:.1}H{b:.1}M{b:.1} {:.1}V{:.1}" stroke="#222" fill="none"/>"##,
            at - cap,
            at + cap,
            at - cap,
            at + cap
        );
    } else {
        let _ = write!(
            out,
            r##"<path class="errorbar" d="M{:.1} {a:.1}H{:.1}M{at:.1} {a:.1}V{b:.1}M{:.1} {b:.1}H{:.1}" stroke-width="1" fill="none" stroke="#222"/>"##,
            at - cap,
            at + cap,
            at - cap,
            at + cap
        );
    }
}

fn lines(chart: &Chart, index_of: &dyn Fn(&str) -> usize) -> String {
    let (left, plot_w, plot_h) = (100.0, 560.0, 220.0);
    let width = left + plot_w + 40.0;
    let (legend_at, legend_lines) = legend_layout(chart, 4.0, width - 4.0);
    let top = 44.0 + (legend_lines - 1) as f64 * LEGEND_LINE;
    let height = top + plot_h + 80.0;
    let ticks = ticks(max_value(chart));
    let scale_max = *ticks.last().unwrap_or(&1.0);
    let ncat = chart.categories.len().max(2) as f64;
    let x_of = |i: usize| left + plot_w * i as f64 / (ncat - 1.0);
    let y_of = |v: f64| top + plot_h - v / scale_max * plot_h;

    let mut out = open(chart, width, height);
    legend(&mut out, chart, index_of, &legend_at, 34.0);
    for t in &ticks {
        let y = y_of(*t);
        let _ = write!(
            out,
            r##"<line x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 6.0,
            y + 4.0,
            figure(*t)
        );
    }
    for (i, cat) in chart.categories.iter().enumerate() {
        let x = x_of(i);
        let _ = write!(
            out,
            r#"<text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="end" transform="rotate(-30 {x:.1} {:.1})">{}</text>"#,
            top + plot_h + 14.0,
            top + plot_h + 14.0,
            escape(cat)
        );
    }
    let _ = write!(
        out,
        r#"<text x="12" y="{:.1}" font-size="11" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text>"#,
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        escape(&chart.unit)
    );
    for s in &chart.series {
        let colour = PALETTE[index_of(&s.name) % PALETTE.len()];
        let pts: Vec<(usize, &Point)> = s
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_ref().map(|p| (i, p)))
            .collect();
        let d: String = pts
            .iter()
            .enumerate()
            .map(|(k, (i, p))| {
                format!(
                    "{}{:.1} {:.1}",
                    if k == 0 { "M" } else { "L" },
                    x_of(*i),
                    y_of(p.median)
                )
            })
            .collect();
        let _ = write!(
            out,
            r#"<path class="line" d="{d}" stroke="{colour}" stroke-width="2" fill="none"/>"#
        );
        for (i, p) in pts {
            let x = x_of(i);
            error_bar(&mut out, y_of(p.low), y_of(p.high), x, false);
            let _ = write!(
                out,
                r#"<circle class="point" cx="{x:.1}" cy="{:.1}" r="3.5" fill="{colour}"><title>{}: {} (95% CI {} to {})</title></circle>"#,
                y_of(p.median),
                escape(&s.name),
                figure(p.median),
                figure(p.low),
                figure(p.high)
            );
        }
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outlying_bar_is_cut_and_the_axis_kept_for_the_rest() {
        // Mbed TLS's 3 ms handshake beside 100-500 µs ones.
        let totals = [196.0, 82.0, 556.0, 224.0, 3183.0, 1513.0, 300.0, 141.0];
        let reach = axis_reach(&totals);
        assert!((556.0..700.0).contains(&reach), "{reach}");
        // Nothing stands out: the axis reaches the largest.
        assert_eq!(axis_reach(&[100.0, 120.0, 180.0]), 180.0);
        assert_eq!(axis_reach(&[]), 1.0);
    }
    use crate::doc::Series;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(4_321.0);
        assert!(*t.last().unwrap() >= 4_321.0 && t.len() <= 7, "{t:?}");
    }

    #[test]
    fn legends_wrap_inside_the_chart_for_any_number_of_series() {
        let point = || {
            Some(Point {
                median: 1.0,
                low: 1.0,
                high: 1.0,
            })
        };
        for kind in [ChartKind::Bars, ChartKind::Lines, ChartKind::Stacked] {
            let chart = Chart {
                kind,
                title: "t".into(),
                unit: "u".into(),
                categories: vec!["s".into(), "s2".into()],
                series: (0..12)
                    .map(|i| Series {
                        name: format!("impl-with-a-long-name-{i}"),
                        points: vec![point(), point()],
                    })
                    .collect(),
            };
            let width = match chart.kind {
                ChartKind::Bars | ChartKind::Stacked => 8.0 + 6.6 * 2.0 + 520.0 + 90.0,
                ChartKind::Lines => 700.0,
            };
            let (at, lines) = legend_layout(&chart, 4.0, width - 4.0);
            assert!(lines > 1, "twelve long names need more than one line");
            for (s, (x, _)) in chart.series.iter().zip(&at) {
                let right = x + 16.0 + 7.5 * s.name.len() as f64;
                assert!(right <= width, "{} ends at {right} past {width}", s.name);
            }
            let svg = render(&chart, &|_| 0);
            assert_eq!(svg.matches("class=\"legend-entry\"").count(), 12);
        }
    }

    #[test]
    fn a_bar_chart_draws_a_bar_and_whisker_per_point_and_escapes_text() {
        let chart = Chart {
            kind: ChartKind::Bars,
            title: "a <b>".into(),
            unit: "u".into(),
            categories: vec!["s1".into(), "s2".into()],
            series: vec![Series {
                name: "x".into(),
                points: vec![
                    Some(Point {
                        median: 10.0,
                        low: 9.0,
                        high: 11.0,
                    }),
                    None,
                ],
            }],
        };
        let svg = render(&chart, &|_| 0);
        assert_eq!(svg.matches("class=\"bar\"").count(), 1);
        assert_eq!(svg.matches("class=\"errorbar\"").count(), 1);
        assert!(svg.contains("a &lt;b&gt;") && !svg.contains("<b>"));
    }
}
