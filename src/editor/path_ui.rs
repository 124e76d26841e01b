//! The path panel: the path tool's control points (clicked on the terrain, dragged, removed),
//! its width, falloff, cross-section, mode, depth and steepest grade, and applying it as one
//! undo step (src/brush/path.rs).

use super::actions::UiAction;
use super::screen::Screen;
use super::widgets::{log_slider, measure_fit, tip};
use crate::brush::path::{PathMode, PathSpec, Profile};
use glam::Vec3;
use imgui::Ui;

/// What the path panel edits.
#[derive(Default)]
pub struct PathUi {
    /// Left clicks on the terrain place and drag control points instead of painting.
    pub active: bool,
    /// The path being laid out: its points in document texels and its settings.
    pub spec: PathSpec,
    /// The height under each control point when placed (height units), for drawing the curve.
    pub heights: Vec<f32>,
    /// The control point being dragged.
    pub dragging: Option<usize>,
}

impl PathUi {
    /// The path to apply: as set, but holding water only where it carves (the water slider
    /// keeps its value while another mode is chosen).
    pub fn to_apply(&self) -> PathSpec {
        let mut spec = self.spec.clone();
        if spec.mode != PathMode::Carve {
            spec.water = 0.0;
        }
        spec
    }

    /// Adds a control point at texel `p` with height `h` under it.
    pub fn push(&mut self, p: [f32; 2], h: f32) {
        self.spec.points.push(p);
        self.heights.push(h);
    }

    pub fn remove(&mut self, i: usize) {
        if i < self.spec.points.len() {
            self.spec.points.remove(i);
            self.heights.remove(i);
        }
        self.dragging = None;
    }

    pub fn clear(&mut self) {
        self.spec.points.clear();
        self.heights.clear();
        self.dragging = None;
    }

    /// The curve and the edges of its band on `screen`, heights drawn `vs` times (empty when
    /// the tool is off).
    pub fn outline(&self, vs: f32, screen: &Screen) -> Vec<Vec<[f32; 2]>> {
        if !self.active || self.spec.points.len() < 2 {
            return Vec::new();
        }
        let control: Vec<[f32; 3]> = self
            .spec
            .points
            .iter()
            .zip(&self.heights)
            .map(|(p, h)| [p[0], p[1], h * vs])
            .collect();
        let curve = crate::brush::path::catmull_rom(&control);
        let half = 0.5 * self.spec.width;
        [0.0, half, -half]
            .iter()
            .filter_map(|&off| {
                let line: Vec<Vec3> = (0..curve.len())
                    .map(|i| {
                        let (a, b) = (
                            curve[i.saturating_sub(1)],
                            curve[(i + 1).min(curve.len() - 1)],
                        );
                        let side =
                            glam::Vec2::new(a[1] - b[1], b[0] - a[0]).normalize_or_zero() * off;
                        let c = curve[i];
                        Vec3::new(c[0] + side.x, c[2], c[1] + side.y)
                    })
                    .collect();
                screen.polyline(&line)
            })
            .collect()
    }

    /// Where the control points are on `screen` (None: behind the camera).
    pub fn points_on_screen(&self, vs: f32, screen: &Screen) -> Vec<Option<[f32; 2]>> {
        if !self.active {
            return Vec::new();
        }
        self.spec
            .points
            .iter()
            .zip(&self.heights)
            .map(|(p, h)| screen.point(Vec3::new(p[0], h * vs, p[1])))
            .collect()
    }
}

/// The path panel over `p`; its requests go to `actions`, what does not fit to `overflow`.
pub fn path_panel(
    ui: &Ui,
    p: &mut PathUi,
    accordion: &mut super::widgets::Accordion,
    desc: Option<crate::pages::DocumentDesc>,
    actions: &mut Vec<UiAction>,
    overflow: &mut Vec<String>,
) {
    accordion.build(ui, "Path", || {
        let _labels = ui.push_item_width(-super::widgets::LABEL_WIDTH);
        ui.checkbox("lay out a path (P)", &mut p.active);
        tip(
            ui,
            "Left click the terrain to add a control point, drag one to move it, right \
                 click one to remove it; Enter applies, Backspace removes the last point",
        );
        let spec = &mut p.spec;
        log_slider(ui, "width", 1.0, 2048.0, &mut spec.width);
        tip(ui, "Full width of the band at full effect (texels)");
        log_slider(ui, "falloff width", 0.5, 2048.0, &mut spec.falloff);
        tip(
            ui,
            "How far beyond each side the band blends into the terrain (texels)",
        );
        let modes: Vec<&str> = PathMode::ALL.iter().map(|m| m.name()).collect();
        let mut mi = PathMode::ALL
            .iter()
            .position(|m| *m == spec.mode)
            .unwrap_or(0);
        if ui.combo_simple_string("mode", &mut mi, &modes) {
            spec.mode = PathMode::ALL[mi];
        }
        tip(
            ui,
            "carve: dig to the depth below the ground along the curve (rivers); raise: build \
                 up an embankment; grade: set to the smoothed height along the curve, no steeper \
                 than the max grade, cutting and filling (roads)",
        );
        let profiles: Vec<&str> = Profile::ALL.iter().map(|m| m.name()).collect();
        let mut pi = Profile::ALL
            .iter()
            .position(|m| *m == spec.profile)
            .unwrap_or(0);
        if ui.combo_simple_string("cross-section", &mut pi, &profiles) {
            spec.profile = Profile::ALL[pi];
        }
        tip(
            ui,
            "flat: level across the width; u: rounded (a river bed); v: straight sides (a \
                 ditch)",
        );
        log_slider(ui, "depth", 1e-4, 1.0, &mut spec.depth);
        tip(
            ui,
            "Height units below the base (carve, grade) or above it (raise) at the centre",
        );
        if spec.mode == PathMode::Carve {
            ui.slider("water", 0.0, spec.depth, &mut spec.water);
            tip(
                ui,
                "Water standing in the carved channel, height units over its bed at the \
                     centre (0: dry; at most the depth), drawn like the sea and saved with the \
                     document",
            );
        }
        // Never deeper than the channel (a raise or a grade holds none: see `PathUi::to_apply`).
        spec.water = spec.water.clamp(0.0, spec.depth);
        super::widgets::in_metres(ui, desc, |d| {
            let m = super::widgets::metres_text;
            format!(
                "width {}, depth {}, water {}",
                m(f64::from(spec.width) * d.texel_size()),
                m(f64::from(spec.depth) * d.height_unit()),
                m(f64::from(spec.water) * d.height_unit())
            )
        });
        if spec.mode == PathMode::Grade {
            ui.slider("max grade", 0.0, 200.0, &mut spec.max_grade);
            tip(
                ui,
                "The most the road rises or falls per 1000 texels along its curve",
            );
        }
        let n = spec.points.len();
        if ui.button("apply (Enter)") {
            actions.push(UiAction::PathApply);
        }
        tip(
            ui,
            "Run the path on the base: one undo step and one journal step",
        );
        ui.same_line();
        if ui.button("clear") {
            p.clear();
        }
        ui.same_line();
        ui.text(format!("{n} point(s)"));
        measure_fit(ui, "Path", overflow);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_their_heights_stay_together() {
        let mut p = PathUi::default();
        p.push([1.0, 2.0], 0.1);
        p.push([3.0, 4.0], 0.2);
        p.push([5.0, 6.0], 0.3);
        p.dragging = Some(2);
        p.remove(1);
        assert_eq!(p.spec.points, [[1.0, 2.0], [5.0, 6.0]]);
        assert_eq!(p.heights, [0.1, 0.3]);
        assert_eq!(p.dragging, None);
        // Water is applied with a carve only, and kept through another mode.
        p.spec.water = 0.01;
        p.spec.mode = PathMode::Raise;
        assert_eq!(p.to_apply().water, 0.0);
        p.spec.mode = PathMode::Carve;
        assert_eq!(p.to_apply().water, 0.01);
        p.remove(7);
        assert_eq!(p.spec.points.len(), 2);
        p.clear();
        assert!(p.spec.points.is_empty() && p.heights.is_empty());
    }
}
