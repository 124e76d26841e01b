//! The geology panel (docs/geology.md): stream-power erosion with uplift over the document or
//! the erosion panel's region, its parameters in metres and years, the run to the end as one
//! undo step, and the drainage of the last run shown over the terrain.

use super::actions::UiAction;
use super::widgets::{log_slider, measure_fit, tip};
use crate::geology::params::{GeologyRun, MAX_COARSE_LEVELS, MAX_ITERATIONS};
use imgui::Ui;

/// The field the drainage of the last run is drawn from (0: a texel of its own, toward 1: the
/// largest river), for the viewport's overlay.
pub const DRAINAGE_FIELD: &str = "geology drainage";

/// What the geology panel edits and shows.
pub struct GeologyUi {
    pub run: GeologyRun,
    /// Over the erosion panel's region instead of the whole document.
    pub in_erosion_region: bool,
    /// The base level (m) as the panel holds it while unticked.
    pub base_level: f32,
    pub use_base_level: bool,
    pub show_drainage: bool,
    /// How the last run ended ([`crate::geology::run::RunOutput::text`]).
    pub last: Option<String>,
    /// Whether strokes paint the uplift map (the document's selection, as of this frame).
    pub paints_uplift: bool,
    /// The live run under way.
    pub progress: Option<crate::session::geology_run::LiveProgress>,
}

impl Default for GeologyUi {
    fn default() -> Self {
        Self {
            run: GeologyRun::default(),
            in_erosion_region: false,
            base_level: 0.0,
            use_base_level: false,
            show_drainage: true,
            last: None,
            paints_uplift: false,
            progress: None,
        }
    }
}

impl GeologyUi {
    /// The run the panel asks for.
    pub fn asked(&self) -> GeologyRun {
        let mut run = self.run;
        run.params.base_level = self.use_base_level.then_some(self.base_level);
        run
    }
}

/// The geology panel over `g`; its requests go to `actions`, what does not fit to `overflow`.
pub fn geology_panel(
    ui: &Ui,
    g: &mut GeologyUi,
    accordion: &mut super::widgets::Accordion,
    actions: &mut Vec<UiAction>,
    overflow: &mut Vec<String>,
) {
    accordion.build(ui, "Geology", || {
            let _labels = ui.push_item_width(-super::widgets::LABEL_WIDTH);
            ui.text_wrapped("Rivers cut into rising rock: drainage networks at the scale of the range.");
            let mut paint = g.paints_uplift;
            if ui.checkbox("paint the uplift map", &mut paint) {
                let name = if paint { crate::layers::UPLIFT } else { crate::layers::BASE };
                actions.push(UiAction::Layer(crate::layers::LayerOp::Select {
                    name: name.to_string(),
                }));
            }
            tip(ui, "Brushes paint how fast the rock rises (times the uplift rate): raise it where a range should grow, level it to 0 where the ground should stay; orange above 1, teal below");
            let disabled = ui.begin_disabled(g.progress.is_some());
            let p = &mut g.run.params;
            let mut mm = p.uplift_rate * 1000.0;
            if log_slider(ui, "uplift (mm/yr)", 0.01, 20.0, &mut mm) {
                p.uplift_rate = mm / 1000.0;
            }
            tip(ui, "How fast the rock rises: 0.1 to 10 mm a year in active ranges");
            log_slider(ui, "erodibility K", 1e-7, 1e-3, &mut p.erodibility);
            tip(ui, "How easily rivers cut rock, per year (times m^(1-2m)): e = K·A^m·S^n (larger: lower, gentler relief)");
            ui.slider("m (area exponent)", 0.1, 1.5, &mut p.area_exponent);
            ui.slider("n (slope exponent)", 0.5, 2.5, &mut p.slope_exponent);
            tip(ui, "m/n near 0.5 is what real channels show");
            log_slider(ui, "diffusion (m²/yr)", 1e-5, 1.0, &mut p.diffusion);
            tip(ui, "Soil creep rounding the hillslopes");
            log_slider(ui, "time step (yr)", 1.0, 1e5, &mut p.time_step);
            tip(ui, "Years per iteration: smaller is closer to the model, larger reaches steady state sooner");
            ui.checkbox("base level (sea)", &mut g.use_base_level);
            if g.use_base_level {
                ui.input_float("base level (m)", &mut g.base_level).build();
            }
            tip(ui, "Ground at or below this elevation drains out, like the border");
            let p = &mut g.run.params;
            let mut fill = p.fill_depressions.is_some();
            if ui.checkbox("fill depressions first", &mut fill) {
                p.fill_depressions = fill.then_some(1e-3);
            }
            if let Some(eps) = &mut p.fill_depressions {
                log_slider(ui, "fill slope (m/m)", 1e-6, 0.1, eps);
            }
            tip(ui, "Before the first iteration, pits and lakes are filled to their spill height, each filled texel this slope above the next one down, so every texel drains to an outlet");
            let mut multi = p.multi_flow.is_some();
            if ui.checkbox("multi-flow area", &mut multi) {
                p.multi_flow = multi.then_some(1.1);
            }
            if let Some(e) = &mut p.multi_flow {
                ui.slider("flow exponent", 0.5, 4.0, e);
            }
            tip(ui, "Drainage area shared among every lower neighbour by slope to this power, not all sent down the steepest: smoother valley floors");
            let mut critical = p.critical_slope.is_some();
            if ui.checkbox("critical slope", &mut critical) {
                p.critical_slope = critical.then_some(35.0);
            }
            if let Some(deg) = &mut p.critical_slope {
                ui.slider_config("critical slope (°)", 5.0, 60.0)
                    .flags(imgui::SliderFlags::ALWAYS_CLAMP)
                    .build(deg);
            }
            tip(ui, "Threshold hillslope: no ground stands steeper than this angle above a neighbour, as rock sheds past its talus angle. Ridges stay as steep as rock stands at any resolution, and the relief stays bounded. Off: the stream-power model alone");
            let mut it = g.run.iterations as i32;
            if ui
                .slider_config("iterations", 1, MAX_ITERATIONS as i32)
                .flags(imgui::SliderFlags::LOGARITHMIC)
                .build(&mut it)
            {
                g.run.iterations = it.clamp(1, MAX_ITERATIONS as i32) as u32;
            }
            let mut steady = g.run.until_steady.is_some();
            if ui.checkbox("until steady (at most the iterations)", &mut steady) {
                g.run.until_steady = steady.then_some(0.01);
            }
            tip(ui, "Stop once no texel moves by more than 1 % of a step's uplift");
            if g.run.until_steady.is_some() && g.run.params.slope_exponent == 1.0 {
                ui.checkbox("solve for the steady state", &mut g.run.solve_steady);
                tip(ui, "Between measured iterations, set each texel to the height that balances uplift, erosion and creep instead of stepping time: the model's steady state in far fewer iterations where it settles (4 m texels and coarser on the default terrain; 1 m keeps moving), with no years between (slope exponent 1)");
            } else {
                g.run.solve_steady = false;
            }
            let mut coarse = g.run.coarse as i32;
            if ui.slider("coarse levels", 0, MAX_COARSE_LEVELS as i32, &mut coarse) {
                g.run.coarse = coarse.clamp(0, MAX_COARSE_LEVELS as i32) as u32;
            }
            tip(ui, "Levels of half the size iterated first: large regions settle in seconds");
            ui.checkbox("in the erosion panel's region", &mut g.in_erosion_region);
            disabled.end();
            run_controls(ui, g.progress, actions);
            ui.checkbox("show drainage", &mut g.show_drainage);
            tip(ui, "The last run's rivers in blue, by drainage area");
            if let Some(last) = &g.last {
                ui.text_wrapped(last);
            }
            measure_fit(ui, "Geology", overflow);
        });
}

/// The run button, or the live run's progress with pause, stop and cancel.
fn run_controls(
    ui: &Ui,
    progress: Option<crate::session::geology_run::LiveProgress>,
    actions: &mut Vec<UiAction>,
) {
    let Some(p) = progress else {
        if ui.button("run geology") {
            actions.push(UiAction::Geology);
        }
        tip(
            ui,
            "Runs live, coarse to fine: the terrain changes as it runs; one undo step",
        );
        return;
    };
    let r = p.run;
    let measure = match r.measure.is_finite() {
        true => format!(", measure {:.3}", r.measure),
        false => String::new(),
    };
    ui.text(format!(
        "level {} of {}: {} iterations{measure}",
        r.level + 1,
        r.levels,
        r.done
    ));
    ui.text(crate::geology::params::progress_text(p.solved, p.years));
    let label = if p.paused { "continue" } else { "pause" };
    if ui.button(label) {
        actions.push(UiAction::GeologyPause(!p.paused));
    }
    ui.same_line();
    if ui.button("stop here") {
        actions.push(UiAction::GeologyStop);
    }
    tip(
        ui,
        "Keeps the terrain as it is now: one undo step, journaled with where it stopped",
    );
    ui.same_line();
    if ui.button("cancel") {
        actions.push(UiAction::GeologyCancel);
    }
    tip(ui, "Puts the region back as it was before the run");
}
