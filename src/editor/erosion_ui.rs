//! The erosion panel: the region tool (a rectangle dragged on the terrain or the whole
//! document, the model, its steps and parameters, presets), its run's progress with pause,
//! continue and finish; and the parameter sliders the brush panel's erode brush shares.

use super::actions::UiAction;
use super::widgets::{log_slider, measure_fit, tip};
use crate::erosion::{ErosionBrush, ErosionParams, Model, PRESETS};
use crate::pages::geometry::Region;
use crate::session::erosion_run::{Progress, MAX_STEPS_PER_FRAME};
use imgui::Ui;

/// What the erosion panel edits and shows.
pub struct ErosionUi {
    /// The run's model, parameters and steps (the total).
    pub run: ErosionBrush,
    /// x, y, width, height; an empty rectangle means the whole document.
    pub region: [i32; 4],
    /// The next left drag on the terrain sets the region instead of painting.
    pub picking: bool,
    /// Steps a frame may run at most (fewer when they take longer than the brush budget).
    pub per_frame: i32,
    pub show_water: bool,
    pub preset: usize,
    /// The run under way, if any.
    pub progress: Option<Progress>,
}

impl Default for ErosionUi {
    fn default() -> Self {
        Self {
            run: ErosionBrush {
                steps: 1000,
                ..ErosionBrush::default()
            },
            region: [0; 4],
            picking: false,
            per_frame: 16,
            show_water: true,
            preset: 0,
            progress: None,
        }
    }
}

impl ErosionUi {
    /// The region to erode in a `width` x `height` document: the rectangle clipped to it, or
    /// the whole document when none is set.
    pub fn region_in(&self, width: u32, height: u32) -> Region {
        let [x, y, w, h] = self.region;
        if w <= 0 || h <= 0 {
            return Region {
                x: 0,
                y: 0,
                width,
                height,
            };
        }
        let x0 = x.clamp(0, width as i32 - 1) as u32;
        let y0 = y.clamp(0, height as i32 - 1) as u32;
        let x1 = (x + w).clamp(x0 as i32 + 1, width as i32) as u32;
        let y1 = (y + h).clamp(y0 as i32 + 1, height as i32) as u32;
        Region {
            x: x0,
            y: y0,
            width: x1 - x0,
            height: y1 - y0,
        }
    }

    /// Sets the region to the rectangle spanned by two texels (inclusive).
    pub fn set_corners(&mut self, a: [f32; 2], b: [f32; 2]) {
        let (x0, x1) = (a[0].min(b[0]).floor(), a[0].max(b[0]).floor());
        let (y0, y1) = (a[1].min(b[1]).floor(), a[1].max(b[1]).floor());
        self.region = [
            x0 as i32,
            y0 as i32,
            (x1 - x0) as i32 + 1,
            (y1 - y0) as i32 + 1,
        ];
    }
}

/// The model combo and the parameter sliders (shared by the erode brush and the region tool).
pub fn model_and_params(ui: &Ui, model: &mut Model, p: &mut ErosionParams) {
    let models: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
    let mut mi = Model::ALL.iter().position(|m| m == model).unwrap_or(0);
    if ui.combo_simple_string("model", &mut mi, &models) {
        *model = Model::ALL[mi];
    }
    tip(ui, "hydraulic (water carves and deposits), thermal (steep slopes crumble to the talus angle) or both");
    log_slider(ui, "rain", 0.001, 1.0, &mut p.rain);
    tip(ui, "Water added per step");
    log_slider(ui, "capacity", 0.005, 4.0, &mut p.capacity);
    tip(ui, "How much sediment flowing water can carry");
    ui.slider("dissolve", 0.0, 1.0 / p.dt, &mut p.dissolve);
    tip(ui, "How fast water picks up sediment below its capacity");
    ui.slider("deposit", 0.0, 1.0 / p.dt, &mut p.deposit);
    tip(ui, "How fast water drops sediment above its capacity");
    ui.slider("evaporation", 0.0, 0.5, &mut p.evaporation);
    tip(ui, "Fraction of the water that evaporates each step");
    ui.slider("talus angle", 5.0, 85.0, &mut p.talus_angle);
    tip(ui, "Slopes steeper than this crumble (thermal erosion)");
    ui.slider("thermal rate", 0.0, 1.0, &mut p.thermal_rate);
    tip(ui, "How fast steep slopes crumble");
}

/// The erosion panel over `e`, for a document `doc` (width, height) when one is open; its
/// requests go to `actions`, what does not fit to `overflow`.
pub fn erosion_panel(
    ui: &Ui,
    e: &mut ErosionUi,
    accordion: &mut super::widgets::Accordion,
    doc: Option<(u32, u32)>,
    actions: &mut Vec<UiAction>,
    overflow: &mut Vec<String>,
) {
    accordion.build(ui, "Erosion", || {
        let _labels = ui.push_item_width(-super::widgets::LABEL_WIDTH);
        let running = e.progress.is_some();
        let disabled = ui.begin_disabled(running);
        ui.text("region (x, y, width, height; empty: all)");
        ui.input_int4("##region", &mut e.region).build();
        if ui.button("whole document") {
            e.region = [0; 4];
            e.picking = false;
        }
        ui.same_line();
        let label = if e.picking {
            "drag on the terrain..."
        } else {
            "drag a rectangle"
        };
        if ui.button(label) {
            e.picking = !e.picking;
        }
        if let Some((w, h)) = doc {
            let r = e.region_in(w, h);
            ui.text(format!(
                "erodes {}x{} at ({}, {})",
                r.width, r.height, r.x, r.y
            ));
        }
        let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        if ui.combo_simple_string("preset", &mut e.preset, &names) {
            let (_, model, params) = PRESETS[e.preset];
            e.run.model = model;
            e.run.params = params;
        }
        tip(ui, "A set of erosion parameters");
        model_and_params(ui, &mut e.run.model, &mut e.run.params);
        let mut steps = e.run.steps as i32;
        let max = crate::erosion::params::MAX_BRUSH_STEPS as i32;
        if ui
            .slider_config("steps", 1, max)
            .flags(imgui::SliderFlags::LOGARITHMIC)
            .build(&mut steps)
        {
            e.run.steps = steps.clamp(1, max) as u32;
        }
        tip(ui, "How many simulation steps the run takes");
        disabled.end();
        ui.slider(
            "steps per frame (most)",
            1,
            MAX_STEPS_PER_FRAME as i32,
            &mut e.per_frame,
        );
        tip(
            ui,
            "Most steps run per frame (fewer when they take longer than the brush budget)",
        );
        ui.checkbox("show water", &mut e.show_water);
        tip(ui, "Tint the water as it runs");
        match e.progress {
            None => {
                if ui.button("run") {
                    actions.push(UiAction::ErodeStart);
                }
            }
            Some(p) => {
                let frac = p.done as f32 / p.steps.max(1) as f32;
                imgui::ProgressBar::new(frac)
                    .overlay_text(format!(
                        "{} / {} steps ({} a frame)",
                        p.done, p.steps, p.per_frame
                    ))
                    .build(ui);
                let label = if p.paused { "continue" } else { "pause" };
                if ui.button(label) {
                    actions.push(UiAction::ErodePause(!p.paused));
                }
                ui.same_line();
                if ui.button("finish now") {
                    actions.push(UiAction::ErodeFinish);
                }
                ui.text_wrapped(
                    "finishing settles the sediment: one undo step, journaled with the steps run",
                );
            }
        }
        measure_fit(ui, "Erosion", overflow);
    });
}
