//! The report's plot: brush throughput against radius, one line per brush at the reference
//! configuration, with the same-run ceilings drawn in: GB/s moved against the copy ceilings
//! (left) and GFLOP/s against the FMA ceiling (right), both axes logarithmic.

use super::{BrushResult, Report};
use plotters::prelude::*;

const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const SIZE: (u32, u32) = (1800, 800);

/// Distinct line colours (one per brush type).
const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is compiled in: failing to parse it is a build defect.
        if plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            panic!("the bundled DejaVu Sans font does not parse");
        }
    });
}

type Series = Vec<(String, Vec<(f64, f64)>)>;

/// The plot as PNG bytes. Needs the brush section.
pub fn png(report: &Report) -> Result<Vec<u8>, String> {
    let b = report
        .brushes
        .as_ref()
        .filter(|b| !b.results.is_empty())
        .ok_or("the plot needs brush results (none were selected)")?;
    register_font();
    let (batch, page, format) = super::reference_config(&b.results);
    let mut brushes: Vec<&str> = Vec::new();
    for r in &b.results {
        if !brushes.contains(&r.brush.as_str()) {
            brushes.push(&r.brush);
        }
    }
    let series = |f: fn(&BrushResult) -> f64| -> Series {
        brushes
            .iter()
            .map(|name| {
                let mut pts: Vec<(f64, f64)> = b
                    .results
                    .iter()
                    .filter(|r| {
                        r.brush == *name
                            && r.batch == batch
                            && r.page_size == page
                            && r.format == format
                            && r.path == "ping-pong"
                            && r.tile_culling
                    })
                    .map(|r| (f64::from(r.radius).log2(), f(r)))
                    .filter(|p| p.1 > 0.0)
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (name.to_string(), pts)
            })
            .collect()
    };
    let bandwidth = series(|r| r.gb_s);
    let flops = series(|r| r.gflop_s);
    let c = &report.ceilings;

    let mut pixels = vec![255u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| format!("{e:?}"))?;
        let title = format!(
            "scarp bench — {} — batch {batch}, page {page}, {format} (commit {})",
            report.system.device, report.system.commit
        );
        let root = root
            .titled(&title, ("sans-serif", 26))
            .map_err(|e| format!("{e:?}"))?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        panel(
            &left,
            "Bytes moved by brush passes",
            "GB/s (read + written)",
            &bandwidth,
            &[
                ("copy ceiling, R32F images", c.copy_image.gb_s),
                ("copy, storage buffers", c.copy_buffer.gb_s),
            ],
        )?;
        panel(
            &right,
            "Arithmetic of brush passes (cost model)",
            "GFLOP/s",
            &flops,
            &[("FMA ceiling", c.fma.gflop_s)],
        )?;
        root.present().map_err(|e| format!("{e:?}"))?;
    }
    let img = image::RgbImage::from_raw(SIZE.0, SIZE.1, pixels).ok_or("plot buffer size")?;
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| format!("encoding the plot: {e}"))?;
    Ok(bytes)
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    series: &Series,
    ceilings: &[(&str, f64)],
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("{e:?}");
    let xs = series.iter().flat_map(|s| s.1.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0 <= x1 {
        (x0 - 0.5, x1 + 0.5)
    } else {
        (3.0, 11.0)
    };

    let ys = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .chain(ceilings.iter().map(|c| c.1))
        .filter(|y| *y > 0.0 && y.is_finite());
    let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    // Room above the highest ceiling for the legend.
    let (y0, y1) = if y0 <= y1 {
        (y0 / 2.0, y1 * 12.0)
    } else {
        (1e-3, 1.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("brush radius (texels, log scale)")
        .x_labels(((x1 - x0).round() as usize).max(2))
        .x_label_formatter(&|v| format!("{:.0}", 2f64.powf(*v)))
        .y_desc(y_desc)
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(err)?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(err)?;
    }
    for (i, (name, v)) in ceilings.iter().enumerate() {
        let style = if i == 0 {
            BLACK.stroke_width(3)
        } else {
            RGBColor(120, 120, 120).stroke_width(2)
        };
        chart
            .draw_series(LineSeries::new([(x0, *v), (x1, *v)], style))
            .map_err(err)?
            .label(format!("{name}: {}", super::report::num(*v)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)?;
    Ok(())
}
