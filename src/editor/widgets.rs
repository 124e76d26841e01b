//! The imgui helpers every panel shares: where a panel first opens, the panel window, the
//! tooltip, the logarithmic slider and the fit check. They know no panel's state.

use imgui::{Condition, SliderFlags, Ui};

/// Room kept right of the widgets for their labels (pixels at scale 1): the longest label
/// ("pressure curve (gamma)", "steps per frame (most)") fits without clipping.
pub const LABEL_WIDTH: f32 = 170.0;

/// Where a panel first opens in a `w` x `h` window (logical pixels), and its size, docked at the
/// window's edges so the viewport's middle stays clear: a left column (Brush over View), a right
/// column (Profiler; the panels Erosion, Geology, Path and History, collapsed title bars until opened;
/// Layers), and Help at the top between them (shown on the first run only). Fits 1280x720 and
/// up. Moved or resized panels keep their place (remembered::LAYOUT_FILE).
pub fn place(panel: &str, [w, h]: [f32; 2]) -> ([f32; 2], [f32; 2]) {
    let top = 30.0;
    let brush_h = ((h - top - 20.0) * 0.62).floor();
    let view_y = top + brush_h + 10.0;
    let right = w - 410.0;
    let profiler_h = ((h - top) * 0.32).floor().min(300.0);
    // The tool panels' title bars, one under another below the profiler.
    let tool_y = |i: f32| top + profiler_h + 10.0 + i * TITLE_STEP;
    let layers_y = tool_y(4.0) + 5.0;
    let tool = |i: f32| {
        let y = tool_y(i);
        ([right, y], [400.0, 460.0f32.min(h - y - 10.0)])
    };
    match panel {
        "Brush" => ([10.0, top], [360.0, brush_h]),
        "View & document" => ([10.0, view_y], [360.0, h - view_y - 10.0]),
        "Help" => ([380.0, top], [(right - 390.0).min(360.0), 320.0]),
        "Profiler" => ([right + 30.0, top], [370.0, profiler_h]),
        "Erosion" => tool(0.0),
        "Geology" => tool(1.0),
        "Path" => tool(2.0),
        "History" => tool(3.0),
        _ => ([right, layers_y], [400.0, h - layers_y - 10.0]),
    }
}

/// Vertical room for one collapsed panel's title bar.
const TITLE_STEP: f32 = 24.0;

/// The panel window `title`, first opened where [`place`] puts it.
pub fn panel<'ui>(ui: &'ui Ui, title: &'static str) -> imgui::Window<'ui, 'ui, &'static str> {
    let (pos, size) = place(title, ui.io().display_size);
    ui.window(title)
        .position(pos, Condition::FirstUseEver)
        .size(size, Condition::FirstUseEver)
}

/// The right column's tool panels (Erosion, Geology, Path, History), whose titles are stacked:
/// one is open at a time, and while it is open the others are not shown, so nothing draws over
/// it or it over their titles. Collapsing it brings their titles back; a tool's key opens its
/// panel ([`Accordion::open`]).
#[derive(Default)]
pub struct Accordion {
    open: Option<&'static str>,
    /// The panel to open in the next frame, the others collapsed.
    wanted: Option<&'static str>,
}

impl Accordion {
    /// Builds panel `title` (collapsed at first) with `f` as its contents, unless another tool
    /// panel is open; returns what `f` returned when it is open.
    pub fn build<R>(&mut self, ui: &Ui, title: &'static str, f: impl FnOnce() -> R) -> Option<R> {
        let window = panel(ui, title);
        let window = match self.wanted {
            Some(w) => window.collapsed(w != title, Condition::Always),
            None if !self.shows(title) => return None,
            None => window.collapsed(true, Condition::FirstUseEver),
        };
        let r = window.build(f);
        self.seen(title, r.is_some());
        r
    }

    /// Opens panel `title` in the next frame and collapses the others (a tool's key: P opens
    /// the Path panel).
    pub fn open(&mut self, title: &'static str) {
        self.wanted = Some(title);
    }

    /// The open panel, if any.
    pub fn open_panel(&self) -> Option<&'static str> {
        self.open
    }

    /// Ends a frame's panels: a panel asked for is open now.
    pub fn end_frame(&mut self) {
        self.wanted = None;
    }

    /// Whether panel `title` is shown this frame.
    fn shows(&self, title: &str) -> bool {
        self.open.map_or(true, |o| o == title)
    }

    /// Notes whether shown panel `title` is open this frame.
    fn seen(&mut self, title: &'static str, open: bool) {
        if open {
            self.open = Some(title);
        } else if self.open == Some(title) {
            self.open = None;
        }
    }
}

/// Records in `out` how the current panel spills: items wider than it (imgui's horizontal
/// scroll range: a label or a line of text cut at its right edge) or the panel past the window.
pub fn measure_fit(ui: &Ui, panel: &str, out: &mut Vec<String>) {
    let spill = ui.scroll_max_x();
    if spill > 0.5 {
        out.push(format!("{panel}: {spill:.0} px past its right edge"));
    }
    let ([x, y], [w, h]) = (ui.window_pos(), ui.window_size());
    let [dw, dh] = ui.io().display_size;
    if x < -0.5 || y < -0.5 || x + w > dw + 0.5 || y + h > dh + 0.5 {
        out.push(format!("{panel}: past the {dw}x{dh} window"));
    }
}

/// What the last widget does, shown when it is hovered.
pub fn tip(ui: &Ui, text: &str) {
    if ui.is_item_hovered() {
        ui.tooltip_text(text);
    }
}

pub fn log_slider(ui: &Ui, label: &str, min: f32, max: f32, v: &mut f32) -> bool {
    // Three significant digits whatever the decade (5e-05 would show as 0.000 in "%.3f").
    let format = if min < 0.01 { "%.3g" } else { "%.3f" };
    ui.slider_config(label, min, max)
        .flags(SliderFlags::LOGARITHMIC)
        .display_format(format)
        .build(v)
}

/// A line of lengths in metres (`line` of the document) where the document knows its units;
/// nothing otherwise.
pub fn in_metres(
    ui: &Ui,
    desc: Option<crate::pages::DocumentDesc>,
    line: impl FnOnce(&crate::pages::DocumentDesc) -> String,
) {
    if let Some(d) = desc.filter(|d| !d.units.is_unknown()) {
        ui.text_disabled(line(&d));
    }
}

/// `m` metres as a short length: "7.68 km", "120 m", "0.35 m".
pub fn metres_text(m: f64) -> String {
    if m.abs() >= 1000.0 {
        format!("{:.2} km", m / 1000.0)
    } else if m.abs() >= 10.0 {
        format!("{m:.0} m")
    } else {
        format!("{m:.2} m")
    }
}

#[cfg(test)]
mod place_tests {
    use super::Accordion;

    #[test]
    fn while_a_tool_panel_is_open_the_others_are_not_shown() {
        let mut a = Accordion::default();
        assert!(a.shows("Erosion") && a.shows("Geology"));
        a.seen("Erosion", true);
        assert!(a.shows("Erosion"));
        assert!(!a.shows("Geology") && !a.shows("History"));
        // Collapsed: every title again.
        a.seen("Erosion", false);
        assert!(a.shows("Geology") && a.shows("History"));
        a.seen("History", true);
        assert!(!a.shows("Erosion"));
    }

    use super::place;

    /// Every panel first opens at a place of its own (a panel without one fell on the Layers
    /// panel's place and hid its title), inside the window, at both the smallest and a large size.
    #[test]
    fn every_panel_opens_at_a_place_of_its_own() {
        let panels = [
            "Brush",
            "View & document",
            "Help",
            "Erosion",
            "Geology",
            "Path",
            "History",
            "Profiler",
            "Layers",
        ];
        for size in [[1280.0f32, 720.0], [1920.0, 1080.0]] {
            let places: Vec<[f32; 2]> = panels.iter().map(|p| place(p, size).0).collect();
            for (i, a) in places.iter().enumerate() {
                for (j, b) in places.iter().enumerate().skip(i + 1) {
                    assert!(a != b, "{} and {} open at {a:?}", panels[i], panels[j]);
                }
                assert!(a[0] >= 0.0 && a[1] >= 0.0 && a[0] < size[0] && a[1] < size[1]);
            }
            // Docked at the edges: no panel but the first run's Help covers the viewport's
            // middle third, opened or collapsed, and each fits the window.
            let middle = [size[0] / 3.0, size[0] * 2.0 / 3.0];
            for p in panels.iter().filter(|p| **p != "Help") {
                let ([x, y], [pw, ph]) = place(p, size);
                assert!(
                    x + pw <= middle[0] || x >= middle[1],
                    "{p} at {x}..{} covers the middle of {size:?}",
                    x + pw
                );
                assert!(
                    x + pw <= size[0] && y + ph <= size[1],
                    "{p} past the window"
                );
            }
        }
    }
}
