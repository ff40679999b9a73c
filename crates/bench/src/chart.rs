//! `quince bench-chart SPEC.json OUT.svg`: the SVG charts of the benchmark scripts.
//!
//! What it is: a small renderer (plotters, SVG backend only) of a JSON chart description: a
//! title and panels stacked vertically, each either a line chart (series of `[x, y]` points,
//! optionally with a base-2 logarithmic x axis, as concurrency 1, 2, 4, … 64) or a
//! horizontal bar chart (one bar per series in each category, missing values allowed).
//!
//! What it is not: a measurement; the scripts under `benches/` measure and write the JSON.
//!
//! Invariants: at most [`PANELS_MAX`] panels, [`SERIES_MAX`] series and [`POINTS_MAX`] points per
//! series; a bad description is an error message and exit status 2, never a panic.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use plotters::prelude::*;
use serde::Deserialize;

/// The most panels one chart may have.
pub const PANELS_MAX: usize = 12;
/// The most series one panel may have.
pub const SERIES_MAX: usize = 32;
/// The most points or categories one series may have.
pub const POINTS_MAX: usize = 10_000;

/// A chart description.
#[derive(Debug, Deserialize)]
pub struct ChartSpec {
    /// The title above all panels.
    pub title: String,
    /// Width in pixels.
    #[serde(default = "default_width")]
    pub width: u32,
    /// Height of one panel in pixels.
    #[serde(default = "default_panel_height")]
    pub panel_height: u32,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
}

fn default_width() -> u32 {
    960
}

fn default_panel_height() -> u32 {
    420
}

/// One panel.
#[derive(Debug, Deserialize)]
pub struct Panel {
    /// Caption of the panel.
    pub title: String,
    /// `line` or `bar`.
    pub kind: String,
    /// Axis label.
    #[serde(default)]
    pub x_label: String,
    /// Axis label.
    #[serde(default)]
    pub y_label: String,
    /// Base-2 logarithmic x axis (line charts).
    #[serde(default)]
    pub log2_x: bool,
    /// Category names (bar charts).
    #[serde(default)]
    pub categories: Vec<String>,
    /// The data.
    pub series: Vec<Series>,
}

/// One series.
#[derive(Debug, Deserialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Line charts: `[x, y]` points.
    #[serde(default)]
    pub points: Vec<(f64, f64)>,
    /// Bar charts: one value per category (null when missing).
    #[serde(default)]
    pub values: Vec<Option<f64>>,
}

/// Runs `quince bench-chart` with these arguments.
pub fn chart_main(args: &[OsString]) -> ExitCode {
    let [spec, out] = args else {
        eprintln!("usage: quince bench-chart SPEC.json OUT.svg");
        return ExitCode::from(2);
    };
    let result = std::fs::read(spec)
        .map_err(|e| format!("cannot read {}: {e}", Path::new(spec).display()))
        .and_then(|bytes| {
            serde_json::from_slice::<ChartSpec>(&bytes)
                .map_err(|e| format!("bad chart description: {e}"))
        })
        .and_then(|chart| render(&chart, Path::new(out)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn check(chart: &ChartSpec) -> Result<(), String> {
    if chart.panels.is_empty() || chart.panels.len() > PANELS_MAX {
        return Err(format!("a chart has 1 to {PANELS_MAX} panels"));
    }
    if !(200..=4000).contains(&chart.width) || !(100..=2000).contains(&chart.panel_height) {
        return Err("width must be 200..4000 and panel_height 100..2000 pixels".into());
    }
    for panel in &chart.panels {
        if panel.series.is_empty() || panel.series.len() > SERIES_MAX {
            return Err(format!("panel '{}': 1 to {SERIES_MAX} series", panel.title));
        }
        for s in &panel.series {
            if s.points.len() > POINTS_MAX || s.values.len() > POINTS_MAX {
                return Err(format!(
                    "series '{}': more than {POINTS_MAX} values",
                    s.name
                ));
            }
            let finite = s.points.iter().all(|(x, y)| x.is_finite() && y.is_finite())
                && s.values.iter().flatten().all(|v| v.is_finite());
            if !finite {
                return Err(format!(
                    "series '{}': values must be finite numbers",
                    s.name
                ));
            }
        }
        match panel.kind.as_str() {
            "line"
                if panel.log2_x
                    && panel
                        .series
                        .iter()
                        .flat_map(|s| &s.points)
                        .any(|(x, _)| *x <= 0.0) =>
            {
                return Err(format!(
                    "panel '{}': a logarithmic axis needs x > 0",
                    panel.title
                ));
            }
            "line" => {}
            "bar" if panel.categories.is_empty() || panel.categories.len() > POINTS_MAX => {
                return Err(format!(
                    "panel '{}': a bar chart needs categories",
                    panel.title
                ));
            }
            "bar" => {}
            other => {
                return Err(format!(
                    "panel '{}': unknown kind '{other}' (line or bar)",
                    panel.title
                ))
            }
        }
    }
    Ok(())
}

/// Renders the chart to an SVG file.
pub fn render(chart: &ChartSpec, out: &Path) -> Result<(), String> {
    check(chart)?;
    let height = 60 + chart.panel_height * chart.panels.len() as u32;
    let root = SVGBackend::new(out, (chart.width, height)).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", out.display());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let root = root
        .titled(&chart.title, ("sans-serif", 24))
        .map_err(|e| fail(&e))?;
    let areas = root.split_evenly((chart.panels.len(), 1));
    for (panel, area) in chart.panels.iter().zip(areas.iter()) {
        match panel.kind.as_str() {
            "line" => draw_lines(panel, area),
            _ => draw_bars(panel, area),
        }
        .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw_lines(panel: &Panel, area: &Area<'_>) -> DrawResult {
    let x_of = |x: f64| if panel.log2_x { x.log2() } else { x };
    let points = panel.series.iter().flat_map(|s| &s.points);
    let (mut x_min, mut x_max, mut y_max) = (f64::MAX, f64::MIN, 0.0f64);
    for (x, y) in points {
        x_min = x_min.min(x_of(*x));
        x_max = x_max.max(x_of(*x));
        y_max = y_max.max(*y);
    }
    if x_min > x_max {
        (x_min, x_max) = (0.0, 1.0);
    }
    if x_min == x_max {
        x_max = x_min + 1.0;
    }
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)?;
    let log2 = panel.log2_x;
    let x_format = move |v: &f64| {
        if log2 {
            format!("{}", 2f64.powf(*v).round())
        } else {
            format!("{v}")
        }
    };
    chart
        .configure_mesh()
        .x_desc(panel.x_label.as_str())
        .y_desc(panel.y_label.as_str())
        .x_labels(if log2 {
            (x_max - x_min) as usize + 1
        } else {
            10
        })
        .x_label_formatter(&x_format)
        .draw()?;
    for (i, series) in panel.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let data: Vec<(f64, f64)> = series.points.iter().map(|(x, y)| (x_of(*x), *y)).collect();
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))?
            .label(series.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(data.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

fn draw_bars(panel: &Panel, area: &Area<'_>) -> DrawResult {
    let categories = panel.categories.len();
    let value_max = panel
        .series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |m, v| m.max(*v));
    let value_max = if value_max > 0.0 {
        value_max * 1.15
    } else {
        1.0
    };
    let longest = panel.categories.iter().map(|c| c.len()).max().unwrap_or(0) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size((longest * 7 + 20).clamp(60, 420))
        .build_cartesian_2d(0.0..value_max, 0.0..categories as f64)?;
    let names = panel.categories.clone();
    let y_format = move |v: &f64| {
        let index = (categories as f64 - *v - 0.5).round();
        if (v.fract() - 0.5).abs() < 1e-6 && index >= 0.0 && (index as usize) < names.len() {
            names[index as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(panel.x_label.as_str())
        .y_desc(panel.y_label.as_str())
        .y_labels(categories * 2 + 1)
        .y_label_formatter(&y_format)
        .draw()?;
    let bars = panel.series.len() as f64;
    for (i, series) in panel.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        // Category 0 is drawn at the top; each series takes a slice of the category's band.
        let rects = series.values.iter().enumerate().filter_map(|(c, value)| {
            let value = (*value)?;
            let top = categories as f64 - c as f64 - 0.1 - 0.8 * i as f64 / bars;
            let bottom = top - 0.8 / bars;
            Some(Rectangle::new(
                [(0.0, bottom), (value, top)],
                color.filled(),
            ))
        });
        chart
            .draw_series(rects)?
            .label(series.name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_line_and_bar_panels() {
        let spec: ChartSpec = serde_json::from_value(serde_json::json!({
            "title": "t",
            "panels": [
                {"title": "lines", "kind": "line", "log2_x": true, "x_label": "concurrency",
                 "series": [{"name": "a", "points": [[1, 2.0], [2, 3.0], [64, 1.0]]}]},
                {"title": "bars", "kind": "bar", "categories": ["serial", "batch 2"],
                 "series": [{"name": "seed", "values": [8337.0, null]}, {"name": "quince", "values": [1.0, 2.0]}]}
            ]
        }))
        .unwrap();
        let dir = std::env::temp_dir().join(format!("quince-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("c.svg");
        render(&spec, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in ["lines", "bars", "serial", "batch 2", "quince", "64"] {
            assert!(svg.contains(text), "{text} missing");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_descriptions_are_refused() {
        let spec: ChartSpec = serde_json::from_value(serde_json::json!({
            "title": "t",
            "panels": [{"title": "p", "kind": "pie", "series": [{"name": "a"}]}]
        }))
        .unwrap();
        assert!(check(&spec).unwrap_err().contains("pie"));
        let spec: ChartSpec = serde_json::from_value(serde_json::json!({
            "title": "t",
            "panels": [{"title": "p", "kind": "line", "log2_x": true, "series": [{"name": "a", "points": [[0, 1]]}]}]
        }))
        .unwrap();
        assert!(check(&spec).is_err());
    }
}
