//! The imgui panels: brush, view, document, presets/journal, and the profiler (the layers panel
//! is `layers_ui.rs`).

pub use super::actions::{CloseChoice, UiAction};
use super::file_browser::{FileBrowser, Outcome, Purpose};
use super::widgets::{in_metres, log_slider, measure_fit, metres_text, panel, tip, LABEL_WIDTH};
use crate::brush::{BrushSettings, BrushType, Falloff};
use crate::noise::{NoiseKind, NoiseSettings};
use crate::pages::geometry::DocumentDesc;
use crate::pages::MemoryReport;
use crate::render::{FrameStats, ViewSettings};
use imgui::{Condition, SliderFlags, TreeNodeFlags, Ui};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

/// Frames kept in the frame-time plot.
pub const HISTORY: usize = 240;

/// Brushes the panel offers: every brush, the layer brushes (mask, erase) and erosion.
fn panel_brushes() -> Vec<BrushType> {
    BrushType::ALL
        .into_iter()
        .chain(BrushType::LAYER_ONLY)
        .chain(BrushType::SIMULATED)
        .collect()
}

/// Measurements the profiler panel shows.
#[derive(Clone, Debug, Default)]
pub struct Profiler {
    pub frame_ms: VecDeque<f32>,
    /// Of the frames `frame_ms` covers, which drew the terrain (the others kept its picture).
    pub drew_terrain: VecDeque<bool>,
    /// What a terrain frame costs now (smoothed; `pacing::TerrainPacing::cost`), ms.
    pub terrain_cost_ms: f64,
    pub brush_gpu_ms: f64,
    pub copy_gpu_ms: f64,
    pub bounds_gpu_ms: f64,
    pub draw_gpu_ms: f64,
    pub shade_gpu_ms: f64,
    /// The last lighting update (its GPU time: submissions that finished since the one before).
    pub light: crate::render::lighting::LightStats,
    pub ui_gpu_ms: f64,
    pub instances_per_s: f64,
    pub queue_len: usize,
    pub stats: FrameStats,
    pub timestamps: bool,
    /// Where the pages are, the budgets and the traffic so far.
    pub memory: MemoryReport,
    /// Page-ins and page-outs per second over the last second or so.
    pub pages_per_s: (f64, f64),
}

impl Profiler {
    /// Takes what a finished frame measured (GPU times, renderer figures); the terrain's times
    /// only from a frame that drew it.
    pub fn take_results(&mut self, done: &crate::render::FrameResults) {
        if done.drew_terrain {
            self.draw_gpu_ms = done.gpu_ms("terrain draw");
            self.shade_gpu_ms = done.gpu_ms("shade");
        }
        self.ui_gpu_ms = done.gpu_ms("ui");
        self.bounds_gpu_ms = done.stats.bounds_gpu_ms;
        self.stats = done.stats.clone();
    }

    /// A frame took `ms` on the host; `drew_terrain`: it drew the terrain (else kept it).
    pub fn push_frame(&mut self, ms: f32, drew_terrain: bool) {
        if self.frame_ms.len() == HISTORY {
            self.frame_ms.pop_front();
        }
        self.frame_ms.push_back(ms);
        if self.drew_terrain.len() == HISTORY {
            self.drew_terrain.pop_front();
        }
        self.drew_terrain.push_back(drew_terrain);
    }
}

/// Facts of the open document.
#[derive(Clone, Debug)]
pub struct DocInfo {
    pub desc: DocumentDesc,
    pub source: String,
    pub pages: usize,
    pub page_bytes: u64,
    pub undo_steps: usize,
    pub undo_bytes: u64,
    pub height_lo: f32,
    pub height_hi: f32,
    pub device: String,
    /// The point under the cursor: texel x, texel y (world z) and height (height units).
    pub cursor: Option<[f32; 3]>,
}

/// Everything the panels edit or show.
pub struct UiState {
    pub brush: BrushSettings,
    pub view: ViewSettings,
    /// The field map the terrain is tinted with (drainage, wetness, profile or plan
    /// curvature, erosion's wear and deposits; [`super::field_map`]), if any.
    pub field_map: Option<crate::render::analysis::Overlay>,
    pub budget_ms: f32,
    /// GPU time per frame for relighting the strips far from an edit (the texels near one are
    /// relit at once), ms.
    pub light_budget_ms: f32,
    /// Pen pressure curve: pressure = force^gamma (1: linear; above 1: softer at light touch).
    pub pressure_gamma: f32,
    pub vsync: bool,
    pub fly: bool,
    /// The map view: straight down over the whole document (M).
    pub map_view: bool,
    pub preset_name: String,
    pub presets: Vec<String>,
    pub preset_index: usize,
    /// The project Ctrl+S saves to (empty for an untitled session: Ctrl+S asks where).
    pub project_path: String,
    /// Whether the session belongs to a project (else Ctrl+S asks where).
    pub has_project: bool,
    /// A recovery journal found on opening: (steps, problem) — offered until recovered or
    /// discarded.
    pub recovery: Option<(usize, Option<String>)>,
    /// An untitled session's journal left by a crash or kill: (file, strokes) — offered until
    /// recovered or discarded.
    pub untitled_recovery: Option<(std::path::PathBuf, usize)>,
    /// Unsaved steps when closing was asked for: the close panel shows until answered.
    pub closing: Option<usize>,
    /// The History panel's list: each step's label and whether it is in force (those in force
    /// first, oldest first, then the undone ones, next to redo first); and the step count it
    /// was made from.
    pub history: (Vec<(String, bool)>, usize),
    /// A project whose newest save is damaged: (file, what is wrong and the older save that
    /// is intact). Asked until the older save is opened or the question is dismissed.
    pub damaged_save: Option<(std::path::PathBuf, String)>,
    pub message: String,
    /// The brush's noise as an image (noise and directional brushes), or why there is none.
    pub noise_preview: Option<Result<imgui::TextureId, String>>,
    pub actions: Vec<UiAction>,
    pub profile: Profiler,
    pub doc: Option<DocInfo>,
    pub has_wireframe: bool,
    /// The layers panel's state.
    pub layers: super::layers_ui::LayersUi,
    /// The erosion panel's state.
    pub erosion: super::erosion_ui::ErosionUi,
    /// The path panel's state.
    pub path: super::path_ui::PathUi,
    /// The geology panel's state.
    pub geology: super::geology_ui::GeologyUi,
    pub show_help: bool,
    /// The file browser, while it is open.
    pub browser: Option<FileBrowser>,
    /// The last export's region and tiles (the next export starts from them).
    pub export: super::file_browser::ExportOptions,
    /// The folder the file browser opens in: the last one a file (not a stamp) was chosen in.
    pub browse_dir: PathBuf,
    /// The stamps the brush panel offers (name, thumbnail), the library's first.
    pub stamps: Vec<(String, imgui::TextureId)>,
    /// Which of them the stamp brush has (None: a stamp not among them, or none).
    pub stamp_index: Option<usize>,
    /// What the editor knows of pens (found, none, not on this platform).
    pub pen_status: String,
    /// Which of the right column's tool panels is open.
    pub accordion: super::widgets::Accordion,
    /// Panels whose text does not fit this frame (see [`measure_fit`]); empty when all fits.
    pub overflow: Vec<String>,
    /// The pressure a stroke sample would take now, after the curve (None: no pen or touch
    /// force: full pressure).
    pub pressure_now: Option<f32>,
}

impl UiState {
    /// Opens the file browser for `purpose`: stamps in the library's folder, the rest in the
    /// last folder a file was chosen in.
    pub fn browse(&mut self, purpose: Purpose) {
        let dir = match purpose {
            Purpose::Stamp => super::asset_path(super::stamp_library::LIBRARY_DIR),
            _ => self.browse_dir.clone(),
        };
        let mut browser = FileBrowser::new(purpose, &dir);
        browser.export = self.export;
        self.browser = Some(browser);
    }

    /// Saves the project it belongs to, or asks where (an untitled session).
    pub fn save_project(&mut self) {
        if self.has_project {
            self.actions
                .push(UiAction::SaveProject(self.project_path.clone()));
        } else {
            self.browse(Purpose::SaveProject);
        }
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Builds every panel for this frame.
pub fn build(ui: &Ui, s: &mut UiState) {
    s.overflow.clear();
    menu_bar(ui, s);
    brush_panel(ui, s);
    super::layers_ui::layers_panel(ui, &mut s.layers, &mut s.actions, &mut s.overflow);
    let doc = s.doc.as_ref().map(|d| (d.desc.width, d.desc.height));
    // The right column's tool panels open one at a time.
    let mut accordion = std::mem::take(&mut s.accordion);
    let (actions, overflow) = (&mut s.actions, &mut s.overflow);
    super::erosion_ui::erosion_panel(ui, &mut s.erosion, &mut accordion, doc, actions, overflow);
    let desc = s.doc.as_ref().map(|d| d.desc);
    super::path_ui::path_panel(ui, &mut s.path, &mut accordion, desc, actions, overflow);
    super::geology_ui::geology_panel(ui, &mut s.geology, &mut accordion, actions, overflow);
    history_panel(ui, s, &mut accordion);
    accordion.end_frame();
    s.accordion = accordion;
    view_panel(ui, s);
    profiler_panel(ui, s);
    if s.show_help {
        help_panel(ui, s);
    }
    if let Some(browser) = &mut s.browser {
        match browser.build(ui) {
            Outcome::Open => {}
            Outcome::Cancelled => s.browser = None,
            Outcome::Chosen(path) => {
                let size = s.doc.as_ref().map(|d| [d.desc.width, d.desc.height]);
                let refused = match (browser.purpose, size) {
                    (Purpose::ExportHeights, Some(size)) => {
                        export_problem(&path, &browser.export, size)
                    }
                    _ => None,
                };
                if let Some(problem) = refused {
                    browser.refuse(problem);
                } else {
                    // Stamps keep to their library: other files open where the last one was.
                    if browser.purpose != Purpose::Stamp {
                        s.browse_dir = browser.dir.clone();
                    }
                    s.export = browser.export;
                    s.actions.push(UiAction::Chosen(browser.purpose, path));
                    s.browser = None;
                }
            }
        }
    }
    if s.closing.is_some() {
        close_panel(ui, s);
    } else if s.damaged_save.is_some() {
        damaged_save_panel(ui, s);
    } else if s.recovery.is_some() {
        recovery_panel(ui, s);
    } else if s.untitled_recovery.is_some() {
        untitled_recovery_panel(ui, s);
    }
}

/// Why exporting a `size` document to `path` with `options` cannot work, if it cannot (checked
/// before the browser closes): a region outside the document, tiles that do not divide it, a
/// file past the size limit, a folder that cannot be written.
pub fn export_problem(
    path: &std::path::Path,
    options: &super::file_browser::ExportOptions,
    size: [u32; 2],
) -> Option<String> {
    if let Some(engine) = options.engine {
        // The spacing does not decide whether a plan can be made.
        return crate::terrain::engines::Plan::new(engine, options.fit, None, size, 1.0).err();
    }
    if options.mesh.is_some() {
        let area = export_area(options, size);
        return crate::pages::geometry::check_region(size[0], size[1], area)
            .map_err(|e| format!("region: {e}"))
            .and_then(|_| match area.width < 2 || area.height < 2 {
                true => Err(crate::mesh::MeshError::TooSmall(area.width, area.height).to_string()),
                false => Ok(()),
            })
            .and_then(|_| crate::atomic_file::check_folder(path).map_err(|e| e.to_string()))
            .err();
    }
    export_plan(path, options, size).err()
}

/// The area an export of a `[w, h]` document to `path` with `options` writes and its files
/// with the region of each, or why it cannot be done (one line).
pub fn export_plan(
    path: &std::path::Path,
    options: &super::file_browser::ExportOptions,
    [w, h]: [u32; 2],
) -> Result<ExportPlan, String> {
    use crate::terrain::export;
    let area = export_area(options, [w, h]);
    crate::pages::geometry::check_region(w, h, area).map_err(|e| format!("region: {e}"))?;
    let parts = export::parts(path, area, options.tiles)?;
    // Every part goes to the same folder in the same format: the first one tells.
    if let Some((p, _)) = parts.first() {
        export::check_writable(p).map_err(|e| e.to_string())?;
    }
    Ok((area, parts))
}

/// What an export writes: the area, and each file with its region.
pub type ExportPlan = (
    crate::pages::geometry::Region,
    Vec<(std::path::PathBuf, crate::pages::geometry::Region)>,
);

/// The part of a `size` document an export with `options` writes.
pub fn export_area(
    options: &super::file_browser::ExportOptions,
    [w, h]: [u32; 2],
) -> crate::pages::geometry::Region {
    let [x, y, width, height] = options.region.unwrap_or([0, 0, w, h]);
    crate::pages::geometry::Region {
        x,
        y,
        width,
        height,
    }
}

/// The File menu: every command that picks a file, through the file browser; the latest
/// message beside it (all of it on hover).
fn menu_bar(ui: &Ui, s: &mut UiState) {
    ui.main_menu_bar(|| {
        ui.menu("File", || {
            let items = [
                ("Open...", "Ctrl+O", Purpose::Open),
                ("Import heights as a layer...", "", Purpose::ImportLayer),
                ("Export heights...", "Ctrl+E", Purpose::ExportHeights),
                ("Save project as...", "Ctrl+Shift+S", Purpose::SaveProject),
                ("Save journal as...", "", Purpose::SaveJournal),
                ("Open a stamp...", "Ctrl+T", Purpose::Stamp),
                ("Screenshot...", "Ctrl+P", Purpose::Screenshot),
            ];
            for (label, keys, purpose) in items {
                if ui.menu_item_config(label).shortcut(keys).build() {
                    s.browse(purpose);
                }
            }
        });
        if !s.message.is_empty() {
            ui.separator();
            ui.text_disabled(&s.message);
            tip(ui, &s.message);
        }
    });
}

fn untitled_recovery_panel(ui: &Ui, s: &mut UiState) {
    let [w, h] = ui.io().display_size;
    ui.window("Recover an untitled session?")
        .position([w * 0.5 - 200.0, h * 0.5 - 60.0], Condition::Always)
        .size([400.0, 140.0], Condition::Always)
        .build(|| {
            let Some((path, strokes)) = s.untitled_recovery.clone() else {
                return;
            };
            ui.text_wrapped(format!(
                "An untitled session ended without saving ({strokes} stroke(s) in {}). \
                 Recovering replaces the open document with it.",
                path.display()
            ));
            if ui.button("recover") {
                s.actions.push(UiAction::RecoverUntitled);
            }
            ui.same_line();
            if ui.button("discard") {
                s.actions.push(UiAction::DiscardUntitled);
            }
        });
}

/// The undo history: the steps in force, the newest highlighted, then the undone ones greyed; a
/// click undoes or redoes to that step.
fn history_panel(ui: &Ui, s: &mut UiState, accordion: &mut super::widgets::Accordion) {
    accordion.build(ui, "History", || {
        let list = &s.history.0;
        if list.is_empty() {
            ui.text_disabled("no steps yet: every stroke, layer step and run is one");
        }
        let current = list.iter().rposition(|(_, done)| *done);
        for (i, (label, done)) in list.iter().enumerate() {
            let _grey = (!done)
                .then(|| ui.push_style_color(imgui::StyleColor::Text, [0.55, 0.55, 0.55, 1.0]));
            if ui
                .selectable_config(format!("{}. {label}##history{i}", i + 1))
                .selected(Some(i) == current)
                .build()
            {
                s.actions.push(UiAction::History(i));
            }
        }
        tip(ui, "Click a step to undo or redo back to it");
        measure_fit(ui, "History", &mut s.overflow);
    });
}

/// Asks what to do with unsaved steps before closing.
fn close_panel(ui: &Ui, s: &mut UiState) {
    let [w, h] = ui.io().display_size;
    ui.window("Close Scarp?")
        .position([w * 0.5 - 200.0, h * 0.5 - 60.0], Condition::Always)
        .size([400.0, 120.0], Condition::Always)
        .build(|| {
            let Some(steps) = s.closing else {
                return;
            };
            ui.text_wrapped(format!(
                "{steps} step(s) are not saved. Save them first? (Ctrl+Q again closes \
                 without saving.)"
            ));
            let choices = [
                ("save (Enter)", CloseChoice::Save),
                ("discard", CloseChoice::Discard),
                ("cancel (Esc)", CloseChoice::Cancel),
            ];
            for (i, (label, choice)) in choices.into_iter().enumerate() {
                if i > 0 {
                    ui.same_line();
                }
                if ui.button(label) {
                    s.actions.push(UiAction::Close(choice));
                }
            }
        });
}

/// Asks whether to open the older save of a project whose newest save is damaged.
fn damaged_save_panel(ui: &Ui, s: &mut UiState) {
    let [w, h] = ui.io().display_size;
    ui.window("Open the older save?")
        .position([w * 0.5 - 220.0, h * 0.5 - 70.0], Condition::Always)
        .size([440.0, 140.0], Condition::Always)
        .build(|| {
            let Some((path, damage)) = s.damaged_save.clone() else {
                return;
            };
            ui.text_wrapped(format!(
                "{}: {damage}. Open the older save? What the damaged save added is lost; the \
                 file changes only when you save.",
                path.display()
            ));
            if ui.button("open the older save (Enter)") {
                s.actions.push(UiAction::OpenOlderSave);
            }
            ui.same_line();
            if ui.button("cancel (Esc)") {
                s.damaged_save = None;
            }
        });
}

fn recovery_panel(ui: &Ui, s: &mut UiState) {
    let [w, h] = ui.io().display_size;
    ui.window("Recover unsaved work?")
        .position([w * 0.5 - 200.0, h * 0.5 - 60.0], Condition::Always)
        .size([400.0, 120.0], Condition::Always)
        .build(|| {
            let Some((steps, problem)) = s.recovery.clone() else {
                return;
            };
            match problem {
                None => {
                    ui.text_wrapped(format!(
                        "The last session of this project ended without saving: {steps} \
                         step(s) can be replayed onto its last save."
                    ));
                    if ui.button("recover") {
                        s.actions.push(UiAction::Recover);
                    }
                    ui.same_line();
                }
                Some(p) => ui.text_wrapped(format!("A recovery file was found but: {p}")),
            }
            if ui.button("discard") {
                s.actions.push(UiAction::DiscardRecovery);
            }
        });
}

fn brush_panel(ui: &Ui, s: &mut UiState) {
    let chosen = |s: &UiState| (s.brush.brush, s.brush.stamp.as_ref().map(Arc::as_ptr));
    let before = chosen(s);
    panel(ui, "Brush").build(|| {
        let _labels = ui.push_item_width(-LABEL_WIDTH);
        brush_shape(ui, &mut s.brush, s.doc.as_ref().map(|d| d.desc));
        kind_controls(ui, s);
        let preview = s.noise_preview.clone();
        let b = &mut s.brush;
        if matches!(b.brush, BrushType::Noise | BrushType::Directional)
            && ui.collapsing_header("noise", TreeNodeFlags::DEFAULT_OPEN)
        {
            noise_controls(ui, &mut b.noise, preview);
        }
        presets_and_files(ui, s);
        measure_fit(ui, "Brush", &mut s.overflow);
    });
    // Choosing a brush or a stamp is choosing to paint: the path tool gives the clicks back.
    if chosen(s) != before {
        s.path.active = false;
    }
}

/// The brush's type and the shape every brush has: radius, inner radius, strength, spacing
/// and falloff.
fn brush_shape(ui: &Ui, b: &mut BrushSettings, desc: Option<DocumentDesc>) {
    let brushes = panel_brushes();
    let names: Vec<&str> = brushes.iter().map(|t| t.name()).collect();
    let mut i = brushes.iter().position(|t| *t == b.brush).unwrap_or(0);
    if ui.combo_simple_string("type", &mut i, &names) {
        b.brush = brushes[i];
    }
    tip(ui, "The brush: raise/lower add height, noise adds procedural noise, level/flatten/ramp pull toward a height or plane, terrace steps, smooth/contrast blur/sharpen, stamp adds an image, mask/erase paint a layer, erode simulates erosion");
    log_slider(ui, "radius", 1.0, 4096.0, &mut b.radius);
    tip(
        ui,
        "How far the brush reaches, in texels ([ and ] change it)",
    );
    let mut inner = b.inner_radius;
    if ui.slider("inner radius", 0.0, (b.radius - 0.5).max(0.0), &mut inner) {
        b.inner_radius = inner;
    }
    tip(
        ui,
        "Full strength inside this radius; the falloff runs from here to the radius",
    );
    b.inner_radius = b.inner_radius.min((b.radius - 0.5).max(0.0));
    log_slider(ui, "strength", 0.0005, 2.0, &mut b.strength);
    tip(
        ui,
        "How much each brush instance changes the heights (height units for raise, lower, noise)",
    );
    in_metres(ui, desc, |d| {
        format!(
            "radius {}, strength {}",
            metres_text(f64::from(b.radius) * d.texel_size()),
            metres_text(f64::from(b.strength) * d.height_unit())
        )
    });
    log_slider(ui, "spacing", 0.02, 2.0, &mut b.spacing);
    tip(
        ui,
        "Distance between brush instances along the stroke, as a fraction of the radius",
    );
    let falloffs: Vec<&str> = Falloff::ALL.iter().map(|f| f.name()).collect();
    let mut fi = Falloff::ALL
        .iter()
        .position(|f| *f == b.falloff)
        .unwrap_or(0);
    if ui.combo_simple_string("falloff", &mut fi, &falloffs) {
        b.falloff = Falloff::ALL[fi];
    }
    tip(ui, "How strength fades from the inner radius to the radius: parabolic 1 - t^2, smooth, linear or power");
    if b.falloff == Falloff::Power {
        log_slider(ui, "falloff power", 0.1, 32.0, &mut b.falloff_power);
        tip(
            ui,
            "p of the power falloff 1 - t^p: above 2 a flatter top and sharper edge",
        );
    }
}

/// What the chosen kind of brush adds: the mask's value and rules, erosion's model, the
/// stamp, terrace steps, flatten's tilt, the ramp's hint, the directional axis.
fn kind_controls(ui: &Ui, s: &mut UiState) {
    let b = &mut s.brush;
    if b.brush == BrushType::Mask {
        ui.slider("mask value", 0.0, 1.0, &mut b.value);
        tip(
            ui,
            "The value the mask brush paints toward (0: the layer hidden, 1: shown)",
        );
        ui.checkbox(
            "procedural (the layers panel's rules)",
            &mut s.layers.brush_rules,
        );
    }
    b.rules = (b.brush == BrushType::Mask && s.layers.brush_rules).then(|| s.layers.mask_rules());
    if b.brush == BrushType::Erode && ui.collapsing_header("erosion", TreeNodeFlags::DEFAULT_OPEN) {
        let e = &mut b.erosion;
        super::erosion_ui::model_and_params(ui, &mut e.model, &mut e.params);
        let mut steps = e.steps as i32;
        if ui.slider("steps per instance", 1, 500, &mut steps) {
            e.steps = steps.max(1) as u32;
        }
        tip(ui, "Erosion steps each brush instance runs under it");
    }
    if b.brush == BrushType::Stamp {
        stamp_controls(ui, b, &s.stamps, s.stamp_index, &mut s.actions);
        if ui.button("open a stamp file... (Ctrl+T)") {
            s.browse(Purpose::Stamp);
        }
    }
    let b = &mut s.brush;
    if b.brush == BrushType::Terrace {
        log_slider(ui, "step height", 0.001, 1.0, &mut b.terrace_height);
        tip(ui, "Height between terrace steps (height units)");
        ui.slider("sharpness", 0.0, 1.0, &mut b.terrace_sharpness);
        tip(ui, "1: hard steps; 0: no steps at all");
    }
    if b.brush == BrushType::Flatten {
        ui.slider("tilt", -50.0, 50.0, &mut b.flatten_tilt);
        tip(
            ui,
            "How far the plane rises per 1000 texels along the stroke's first \
                 direction (0: level at the height where the stroke starts)",
        );
    }
    if b.brush == BrushType::Ramp {
        ui.text_wrapped(
            "Drag from the ramp's foot to its top: a straight slope between the \
             heights there, as wide as the brush",
        );
    }
    if b.brush == BrushType::Directional {
        ui.slider("angle (deg)", -180.0, 180.0, &mut b.dir_angle_deg);
        tip(
            ui,
            "Directional brush: the compression axis relative to the stroke (90: across it)",
        );
        log_slider(ui, "ratio", 0.1, 16.0, &mut b.dir_ratio);
        tip(ui, "Directional brush: how much the noise is compressed along the axis (above 1 stretches features)");
    }
}

/// The noise preview (or why there is none) and the noise's parameters.
fn noise_controls(
    ui: &Ui,
    n: &mut NoiseSettings,
    preview: Option<Result<imgui::TextureId, String>>,
) {
    match preview {
        Some(Ok(texture)) => {
            let side = super::noise_preview::SIZE as f32;
            imgui::Image::new(texture, [side, side]).build(ui);
            tip(
                ui,
                "The noise across the brush's width (black: its lowest, white: \
                     its highest), redrawn as the parameters change",
            );
        }
        Some(Err(e)) => ui.text_wrapped(format!("no preview: {e}")),
        None => {}
    }
    let kinds: Vec<&str> = NoiseKind::ALL.iter().map(|k| k.name()).collect();
    let mut ki = NoiseKind::ALL
        .iter()
        .position(|k| *k == n.kind)
        .unwrap_or(0);
    if ui.combo_simple_string("kind", &mut ki, &kinds) {
        n.kind = NoiseKind::ALL[ki];
    }
    tip(
        ui,
        "The noise: perlin, fbm, billowy, ridged, iq, swiss, jordan, erosive (README, Noise)",
    );
    log_slider(ui, "scale", 1e-4, 0.1, &mut n.scale);
    tip(ui, "Noise units per texel: smaller makes larger features");
    ui.input_int("seed", &mut n.seed).build();
    tip(ui, "Integer seed of the noise; octave i uses seed + i");
    ui.slider("octaves", 1, 16, &mut n.octaves);
    tip(ui, "How many octaves of detail are summed");
    ui.slider("lacunarity", 1.1, 4.0, &mut n.lacunarity);
    tip(ui, "Frequency ratio between octaves");
    ui.slider("gain", 0.0, 1.0, &mut n.gain);
    tip(ui, "Amplitude ratio between octaves: higher is rougher");
    ui.slider("warp", 0.0, 1.0, &mut n.warp);
    tip(
        ui,
        "Swiss: warp along the gradient; Jordan: warp by finer octaves",
    );
    if n.kind == NoiseKind::Jordan {
        ui.slider("gain1", 0.0, 1.5, &mut n.gain1);
        tip(ui, "Jordan: amplitude of the second octave");
        ui.slider("warp0", 0.0, 1.0, &mut n.warp0);
        tip(ui, "Jordan: warp by the coarsest octave");
        ui.slider("damp0", 0.0, 2.0, &mut n.damp0);
        tip(ui, "Jordan: damping by the coarsest octave");
        ui.slider("damp", 0.0, 2.0, &mut n.damp);
        tip(ui, "Jordan: damping by finer octaves");
        ui.slider("damp scale", 0.0, 2.0, &mut n.damp_scale);
        tip(ui, "Jordan: how far damping lowers amplitudes");
    }
    if matches!(n.kind, NoiseKind::Swiss | NoiseKind::Erosive) {
        ui.slider("alpha", 0.0, 0.5, &mut n.alpha);
        tip(
            ui,
            "Swiss and erosive: displacement along the ridge gradient",
        );
        ui.slider("beta", 0.0, 2.0, &mut n.beta);
        tip(ui, "Swiss and erosive: roughness near valleys");
    }
    ui.slider("pre-warp amount", 0.0, 2.0, &mut n.prewarp_amount);
    tip(
        ui,
        "Domain warp before the noise (paper eq. 8 alpha): 0 is off",
    );
    log_slider(ui, "pre-warp scale", 0.01, 8.0, &mut n.prewarp_scale);
    tip(ui, "Frequency of the pre-warp (eq. 8 beta)");
    ui.slider("pre-warp octaves", 1, 8, &mut n.prewarp_octaves);
    tip(ui, "Octaves of the pre-warp fBm");
    ui.slider("power", 0.25, 4.0, &mut n.power);
    tip(
        ui,
        "T_post (eq. 5): heights raised to this power, sign kept; 1 is off",
    );
    ui.slider_config("offset", -1000.0, 1000.0)
        .build_array(&mut n.offset);
    tip(ui, "Noise position of texel (0, 0): moves the pattern");
}

/// What is wrong with the brush, the presets, saving and undo, and the last message.
fn presets_and_files(ui: &Ui, s: &mut UiState) {
    let b = &s.brush;
    if let Err(e) = b.validate().and_then(|_| b.noise.validate()) {
        ui.text_colored([1.0, 0.4, 0.3, 1.0], format!("invalid: {e}"));
    }
    ui.separator();
    ui.text("presets (assets/presets)");
    ui.input_text("name", &mut s.preset_name).build();
    tip(ui, "Name of the preset to save (a file in assets/presets)");
    if ui.button("save preset") {
        s.actions.push(UiAction::SavePreset(s.preset_name.clone()));
    }
    if !s.presets.is_empty() {
        ui.combo_simple_string("preset", &mut s.preset_index, &s.presets);
        tip(ui, "A saved brush to load");
        ui.same_line();
        if ui.button("load") {
            if let Some(p) = s.presets.get(s.preset_index) {
                s.actions.push(UiAction::LoadPreset(p.clone()));
            }
        }
    }
    ui.separator();
    if ui.button("save project (Ctrl+S)") {
        s.save_project();
    }
    ui.same_line();
    if ui.button("save journal...") {
        s.browse(Purpose::SaveJournal);
    }
    if ui.button("undo") {
        s.actions.push(UiAction::Undo);
    }
    ui.same_line();
    if ui.button("redo") {
        s.actions.push(UiAction::Redo);
    }
    if !s.message.is_empty() {
        ui.text_wrapped(&s.message);
    }
}

/// Sun shadows and ambient occlusion (on/off) and where the sun is.
/// `desc` where its height unit is known: rules are then set in metres.
fn physical(desc: Option<DocumentDesc>) -> Option<DocumentDesc> {
    desc.filter(|d| d.units.height_unit.is_some())
}

fn sun_controls(ui: &Ui, v: &mut ViewSettings, desc: Option<DocumentDesc>) {
    let mut on = v.sun.is_some();
    if ui.checkbox("sun shadows and occlusion", &mut on) {
        v.sun = on.then(crate::render::lighting::Sun::default);
    }
    tip(
        ui,
        "Shadows from the heights themselves and ambient occlusion in valleys",
    );
    if let Some(sun) = &mut v.sun {
        ui.slider("sun azimuth (deg)", 0.0, 360.0, &mut sun.azimuth);
        tip(
            ui,
            "Where the sun is, clockwise from north (the first rows)",
        );
        ui.slider("sun elevation (deg)", 1.0, 90.0, &mut sun.elevation);
        tip(ui, "How high the sun stands: low suns cast long shadows");
    }
    // A preset as this document takes it (the snow line no lower than the physical one).
    let range = v.altitude_range;
    let anchored = |m: crate::render::look::Materials| match (desc, range) {
        (Some(d), Some(r)) => m.on_document(&d, r),
        _ => m,
    };
    let mut look = v.look.is_some();
    if ui.checkbox("materials, sky and tone map", &mut look) {
        v.look = look.then(|| crate::render::look::Look {
            materials: anchored(Default::default()),
            ..Default::default()
        });
    }
    tip(ui, "Rock, grass, scree, sand and snow by slope and altitude, an analytic sky, haze and a filmic tone map");
    if let Some(l) = &mut v.look {
        use crate::render::look::PRESETS;
        let mut i = PRESETS
            .iter()
            .position(|(_, m)| anchored(*m) == l.materials)
            .unwrap_or(0);
        let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
        if ui.combo_simple_string("materials", &mut i, &names) {
            l.materials = anchored(PRESETS[i].1);
        }
        tip(ui, "A set of material rules: alpine, desert or temperate");
        ui.slider("exposure", 0.1, 4.0, &mut l.exposure);
        tip(ui, "Brightness before the tone map");
        let (lo, hi) = v.altitude_range.unwrap_or((0.0, 1.0));
        match physical(desc) {
            // Set in metres: the rule keeps its fraction of the range the document opened with.
            Some(d) => {
                let at = |f: f32| d.metres(lo + f * (hi - lo)) as f32;
                let mut m = at(l.materials.snow_line);
                if ui.slider("snow line (m)", at(0.0), at(1.2), &mut m) {
                    let h = ((f64::from(m) - d.metres(0.0)) / d.height_unit()) as f32;
                    l.materials.snow_line = (h - lo) / (hi - lo).max(f32::EPSILON);
                }
                tip(ui, "Altitude above which snow lies");
                let mut m = at(l.materials.sand_line);
                if ui.slider("sand line (m)", at(-0.2), at(1.0), &mut m) {
                    let h = ((f64::from(m) - d.metres(0.0)) / d.height_unit()) as f32;
                    l.materials.sand_line = (h - lo) / (hi - lo).max(f32::EPSILON);
                }
                tip(ui, "Altitude below which sand lies (beaches)");
            }
            None => {
                ui.slider("snow line", 0.0, 1.2, &mut l.materials.snow_line);
                tip(
                    ui,
                    "Altitude (fraction of the height range the document opened with) above which snow lies",
                );
            }
        }
        ui.slider("rock slope (deg)", 0.0, 90.0, &mut l.materials.rock_slope);
        tip(ui, "Slopes steeper than this show rock");
        ui.slider("grass slope (deg)", 0.0, 90.0, &mut l.materials.grass_slope);
        tip(ui, "Slopes gentler than this hold grass");
    }
}

/// The analysis overlays: the slope heat map (walkable angle), the curvature and material
/// weights maps, and contour lines (interval).
fn analysis_controls(ui: &Ui, v: &mut ViewSettings, desc: Option<DocumentDesc>) {
    let mut slope = v.slope.is_some();
    if ui.checkbox("slope map", &mut slope) {
        v.slope = slope.then_some(crate::render::analysis::DEFAULT_WALKABLE);
    }
    tip(
        ui,
        "Colours the terrain by slope in degrees: green walkable, red too steep",
    );
    if let Some(w) = &mut v.slope {
        ui.same_line();
        ui.set_next_item_width(120.0);
        ui.slider("walkable (deg)", 1.0, 89.0, w);
        tip(ui, "The steepest slope a character can walk");
    }
    let mut curvature = v.curvature.is_some();
    if ui.checkbox("curvature map", &mut curvature) {
        v.curvature = curvature.then_some(crate::render::analysis::DEFAULT_CURVATURE);
    }
    tip(
        ui,
        "Colours the terrain by curvature (the Laplacian of the heights in metres): blue in \
         hollows and valleys, orange on ridges and crests",
    );
    if let Some(c) = &mut v.curvature {
        ui.same_line();
        ui.set_next_item_width(120.0);
        log_slider(ui, "full at (1/m)", 1e-5, 1.0, c);
        tip(ui, "The curvature at which the colours are full");
    }
    ui.checkbox("material weights", &mut v.materials_map);
    tip(
        ui,
        "Each material's colour by its weight, unlit: what the exported weight and splat maps \
         hold (docs/maps.md)",
    );
    let mut contours = v.contours.is_some();
    if ui.checkbox("contours", &mut contours) {
        v.contours = contours.then_some(0.02);
    }
    tip(ui, "Height contour lines");
    if let Some(i) = &mut v.contours {
        ui.same_line();
        ui.set_next_item_width(120.0);
        match physical(desc) {
            // Set in metres where the document's height unit is known.
            Some(d) => {
                let unit = d.height_unit() as f32;
                let mut m = *i * unit;
                if log_slider(ui, "interval (m)", 1e-4 * unit, unit, &mut m) {
                    *i = m / unit;
                }
                tip(ui, "Height between contour lines");
            }
            None => {
                log_slider(ui, "interval", 1e-4, 1.0, i);
                tip(ui, "Height between contour lines");
                let every = f64::from(*i);
                in_metres(ui, desc, |d| {
                    format!("contours every {}", metres_text(every * d.height_unit()))
                });
            }
        }
    }
}

/// The field map: none, or drainage, wetness, profile or plan curvature, erosion's wear and
/// deposits (computed on the CPU from the whole document; docs/maps.md).
fn field_map_controls(ui: &Ui, map: &mut Option<crate::render::analysis::Overlay>) {
    use crate::maps::overlay::{name, FIELD_MAPS};
    let names: Vec<&str> = std::iter::once("none")
        .chain(FIELD_MAPS.iter().map(|&k| name(k)))
        .collect();
    let mut i = map
        .and_then(|m| FIELD_MAPS.iter().position(|&k| k == m))
        .map_or(0, |i| i + 1);
    if ui.combo_simple_string("map overlay", &mut i, &names) {
        *map = i.checked_sub(1).map(|i| FIELD_MAPS[i]);
    }
    tip(
        ui,
        "Tints the terrain by a map of the whole document, as exported (docs/maps.md): D8 \
         drainage area and wetness in blue; profile and plan curvature teal where concave or \
         converging, orange where convex or diverging; erosion orange where runs wore more \
         metres than they laid down, teal where they laid down more. Follows edits once the \
         heights are still for half a second",
    );
}

/// The sea: on/off (on: at the low ground) and its level, over the document's height range
/// (and a little below it).
fn sea_controls(
    ui: &Ui,
    v: &mut ViewSettings,
    (lo, hi): (f32, f32),
    desc: DocumentDesc,
    actions: &mut Vec<UiAction>,
) {
    let span = (hi - lo).max(1e-3);
    let mut on = v.sea_level.is_some();
    if ui.checkbox("sea", &mut on) {
        // At the low ground: the editor puts it there from the heights.
        v.sea_level = on.then_some(lo + 0.1 * span);
        if on {
            actions.push(UiAction::SeaAtLowGround);
        }
    }
    tip(
        ui,
        "A water plane over the terrain: waves, depth tint, foam at the shore",
    );
    if let Some(level) = &mut v.sea_level {
        ui.same_line();
        ui.set_next_item_width(120.0);
        match physical(Some(desc)) {
            // Set in metres of elevation where the document's height unit is known.
            Some(d) => {
                let m_of = |h: f32| d.metres(h) as f32;
                let mut m = m_of(*level);
                if ui.slider("sea level (m)", m_of(lo - 0.05 * span), m_of(hi), &mut m) {
                    *level = ((f64::from(m) - d.metres(0.0)) / d.height_unit()) as f32;
                }
                tip(ui, "The water's elevation");
            }
            None => {
                ui.slider("sea level", lo - 0.05 * span, hi, level);
                tip(ui, "The water's height");
                let at = *level;
                in_metres(ui, Some(desc), |d| {
                    format!("sea at {}", metres_text(d.metres(at)))
                });
            }
        }
    }
}

fn view_panel(ui: &Ui, s: &mut UiState) {
    panel(ui, "View & document")
        .build(|| {
            let _labels = ui.push_item_width(-LABEL_WIDTH);
            let v = &mut s.view;
            if s.has_wireframe {
                ui.checkbox("wireframe", &mut v.wireframe);
                tip(ui, "Draw triangle edges only");
                ui.same_line();
            }
            ui.checkbox("LOD colours", &mut v.lod_colours);
            tip(ui, "Colour the terrain by level of detail (L)");
            ui.checkbox("vsync", &mut s.vsync);
            tip(ui, "Wait for the display's refresh (V); off shows the real frame rate");
            ui.same_line();
            ui.checkbox("fly camera (Tab)", &mut s.fly);
            tip(ui, "Fly with W A S D Q E instead of orbiting");
            ui.same_line();
            ui.checkbox("map (M)", &mut s.map_view);
            tip(ui, "Straight down over the whole document, north up, as a map; brushes paint as in 3D. M again goes back");
            if let Some(d) = &s.doc {
                ui.text(d.desc.extent_line(d.height_lo, d.height_hi));
                tip(ui, "The world's size and height range, from the document's units");
                if let Some([x, y, h]) = d.cursor {
                    let texel = d.desc.texel_size();
                    ui.text(format!(
                        "cursor {} E, {} S, {}",
                        metres_text(f64::from(x) * texel),
                        metres_text(f64::from(y) * texel),
                        metres_text(d.desc.metres(h))
                    ));
                    tip(ui, "The point under the cursor: metres east and south of the document's north-west corner, and its height");
                }
                let true_scale = d.desc.vertical_scale();
                ui.text(format!("exaggeration {:.2}x", v.vertical_scale / true_scale));
                tip(ui, "The relief drawn over the true scale the document's units give");
            }
            log_slider(ui, "vertical scale", 1e-4, 100_000.0, &mut v.vertical_scale);
            tip(ui, "World height of one height unit, in texels: exaggerates or flattens the relief (the heights are not changed)");
            log_slider(ui, "pixel error", 0.25, 16.0, &mut v.pixel_error);
            tip(ui, "Largest screen error of the level of detail, in pixels: lower is finer and slower");
            ui.slider(
                "max triangles/pixel",
                0.0,
                8.0,
                &mut v.max_triangles_per_pixel,
            );
            tip(ui, "Triangle budget per covered pixel: caps detail where the terrain is tiny on screen");
            ui.slider_config("fog", 1e-6, 1e-2)
                .flags(SliderFlags::LOGARITHMIC)
                .display_format("%.2e")
                .build(&mut v.fog);
            tip(ui, "Density of the distance haze");
            if let Some(d) = &s.doc {
                // The haze takes 1 − exp(−fog · distance), distance in texels.
                let half = std::f64::consts::LN_2 / f64::from(v.fog) * d.desc.texel_size();
                ui.text(match v.fog > 0.0 {
                    true => format!("haze: half at {}", metres_text(half)),
                    false => "haze: none".to_string(),
                });
                tip(ui, "How far off the haze hides half of the ground's colour, from the document's units");
            }
            log_slider(ui, "brush budget (ms)", 0.25, 50.0, &mut s.budget_ms);
            tip(ui, "GPU time per frame for painting: strokes beyond it queue and finish later");
            log_slider(ui, "shadow budget (ms)", 0.1, 20.0, &mut s.light_budget_ms);
            tip(ui, "GPU time per frame for relighting far from an edit (near the edit it is at once)");
            log_slider(
                ui,
                "pressure curve (gamma)",
                0.2,
                5.0,
                &mut s.pressure_gamma,
            );
            tip(ui, "Pressure = pen force ^ gamma: 1 is linear, above 1 softer at a light touch, \
                     below 1 firmer",);
            match s.pressure_now {
                Some(p) => {
                    imgui::ProgressBar::new(p)
                        .size([-LABEL_WIDTH, 0.0])
                        .overlay_text(format!("{p:.2}"))
                        .build(ui);
                    ui.same_line();
                    ui.text("pressure now");
                }
                None => ui.text_disabled(format!("{} (painting at 1.0)", s.pen_status)),
            }
            let desc = s.doc.as_ref().map(|d| d.desc);
            sun_controls(ui, v, desc);
            analysis_controls(ui, v, desc);
            field_map_controls(ui, &mut s.field_map);
            if let Some(d) = &s.doc {
                sea_controls(ui, v, (d.height_lo, d.height_hi), d.desc, &mut s.actions);
            }
            if ui.button("frame all (F)") {
                s.actions.push(UiAction::FrameAll);
            }
            ui.same_line();
            ui.checkbox("help", &mut s.show_help);
            tip(ui, "Show the keys and mouse controls");
            if let Some(d) = &s.doc {
                ui.separator();
                ui.text_wrapped(format!(
                    "{}: {}x{} {:?}, pages {}",
                    d.source, d.desc.width, d.desc.height, d.desc.format, d.desc.page_size
                ));
                ui.text_wrapped(format!(
                    "range {:.3}..{:.3} (r16 {}..{})",
                    d.height_lo, d.height_hi, d.desc.height_min, d.desc.height_max
                ));
                ui.text_wrapped(format!(
                    "{} pages in memory ({:.1} MiB), undo {} steps ({:.1} MiB)",
                    d.pages,
                    mib(d.page_bytes),
                    d.undo_steps,
                    mib(d.undo_bytes)
                ));
                ui.text_wrapped(&d.device);
            }
            measure_fit(ui, "View & document", &mut s.overflow);
        });
}

/// `text` as it fits `width` pixels: whole, or cut with an ellipsis.
fn label_within(ui: &Ui, text: &str, width: f32) -> String {
    if ui.calc_text_size(text)[0] <= width {
        return text.to_string();
    }
    let mut cut: String = text.to_string();
    while !cut.is_empty() && ui.calc_text_size(format!("{cut}..."))[0] > width {
        cut.pop();
    }
    format!("{cut}...")
}

/// The stamp brush's stamp (thumbnails to click, each named), rotation, scale and whether it
/// turns with the stroke.
fn stamp_controls(
    ui: &Ui,
    b: &mut BrushSettings,
    stamps: &[(String, imgui::TextureId)],
    selected: Option<usize>,
    actions: &mut Vec<UiAction>,
) {
    let side = super::stamp_library::THUMBNAIL as f32;
    let per_row = ((ui.content_region_avail()[0] / (side + 12.0)).floor() as usize).max(1);
    for (i, (name, texture)) in stamps.iter().enumerate() {
        if i % per_row != 0 {
            ui.same_line();
        }
        let tint = if Some(i) == selected {
            [1.0, 1.0, 1.0, 1.0]
        } else {
            [0.6, 0.6, 0.6, 1.0]
        };
        let bg = if Some(i) == selected {
            [1.0, 0.85, 0.2, 1.0]
        } else {
            [0.0, 0.0, 0.0, 0.0]
        };
        // Each thumbnail with its name under it (cut to the thumbnail's width).
        ui.group(|| {
            if ui
                .image_button_config(format!("##stamp{i}"), *texture, [side, side])
                .tint_col(tint)
                .background_col(bg)
                .build()
            {
                actions.push(UiAction::PickStamp(i));
            }
            tip(ui, name);
            ui.text(label_within(ui, name, side + 8.0));
        });
    }
    let current = match (&b.stamp, selected) {
        (_, Some(i)) => stamps.get(i).map_or("", |(n, _)| n.as_str()).to_string(),
        (Some(s), None) => s
            .source
            .as_ref()
            .map_or("(made in memory)".into(), |p| p.display().to_string()),
        (None, None) => "none: pick one".into(),
    };
    ui.text_wrapped(format!("stamp: {current}"));
    ui.slider("rotation (deg)", -180.0, 180.0, &mut b.dir_angle_deg);
    tip(
        ui,
        "The stamp's turn, relative to the stroke if it follows it",
    );
    log_slider(ui, "stamp scale", 0.05, 4.0, &mut b.stamp_scale);
    tip(ui, "The stamp's side as a fraction of the brush's diameter");
    ui.checkbox("turn with the stroke", &mut b.stamp_follow);
    tip(
        ui,
        "Rotate the stamp with the stroke's direction (off: it keeps its turn)",
    );
}

fn profiler_panel(ui: &Ui, s: &mut UiState) {
    panel(ui, "Profiler").build(|| {
        let p = &s.profile;
        let frames: Vec<f32> = p.frame_ms.iter().copied().collect();
        let last = frames.last().copied().unwrap_or(0.0);
        let mean = frames.iter().sum::<f32>() / frames.len().max(1) as f32;
        let worst = frames.iter().copied().fold(0.0f32, f32::max);
        ui.text_wrapped(format!(
            "frame {last:.2} ms (mean {mean:.2}, worst {worst:.2}), {:.0} fps",
            1000.0 / mean.max(1e-3)
        ));
        let drawn = p.drew_terrain.iter().filter(|&&d| d).count();
        ui.text_wrapped(format!(
            "terrain drawn in {drawn} of {} frames, {:.1} ms each",
            p.drew_terrain.len(),
            p.terrain_cost_ms
        ));
        if ui.is_item_hovered() {
            ui.tooltip_text(
                "A frame whose terrain would look the same keeps the last picture; a terrain \
                 dearer than 100 ms is drawn only while the panels are quiet, half the time at \
                 most (docs/editor.md, \"Responsiveness\").",
            );
        }
        ui.plot_lines("##frames", &frames)
            .graph_size([ui.content_region_avail()[0], 60.0])
            .scale_min(0.0)
            .scale_max(worst.max(1.0) * 1.1)
            .build();
        let recording = crate::trace::recording();
        if ui.button(if recording {
            "stop trace"
        } else {
            "record trace"
        }) {
            s.actions.push(UiAction::ToggleTrace);
        }
        tip(
            ui,
            "Record a timeline of every frame (CPU phases, GPU passes) and write it as \
                     scarp-trace-*.json when stopped: open it in Perfetto or chrome://tracing",
        );
        ui.same_line();
        if ui.button("capture frame (F12)") {
            s.actions.push(UiAction::CaptureFrame);
        }
        tip(
            ui,
            "Capture the next frame, brush passes included, in RenderDoc (when Scarp \
                     runs under RenderDoc)",
        );
        if p.timestamps {
            ui.text("GPU ms per pass (timestamps):");
            ui.text(format!("  brush batches    {:8.3}", p.brush_gpu_ms));
            ui.text(format!("  page copies      {:8.3}", p.copy_gpu_ms));
            ui.text(format!("  LOD reduction    {:8.3}", p.bounds_gpu_ms));
            ui.text(format!("  terrain draw     {:8.3}", p.draw_gpu_ms));
            ui.text(format!("  shading          {:8.3}", p.shade_gpu_ms));
            ui.text(format!("  shadows          {:8.3}", p.light.gpu_ms));
            ui.text(format!("  UI               {:8.3}", p.ui_gpu_ms));
        } else {
            ui.text("this queue has no timestamps");
        }
        ui.text_wrapped(format!(
            "instances/s {:.0}, queue {} stroke part(s), budget {:.2} ms",
            p.instances_per_s, p.queue_len, s.budget_ms
        ));
        let st = &p.stats;
        ui.text_wrapped(format!(
            "nodes {} drawn, {} culled, {} draws, {} triangles",
            st.nodes_drawn, st.nodes_culled, st.draws, st.triangles
        ));
        let mut per = String::from("per level:");
        for n in &st.nodes_per_level {
            per.push_str(&format!(" {n}"));
        }
        ui.text_wrapped(per);
        if st.pages_requested > 0 {
            ui.text_wrapped(format!(
                "{} page(s) coming in (drawn coarse)",
                st.pages_requested
            ));
        }
        ui.text_wrapped(format!(
            "bounds recomputed for {} page(s); error bound used {:.2} px",
            st.bounds_pages, st.pixel_error_used
        ));
        if let Some(c) = st.covered_pixels {
            ui.text_wrapped(format!(
                "{:.2} triangles per covered pixel ({c} pixels); prepare {:.2} ms CPU",
                st.triangles as f64 / c.max(1) as f64,
                st.prepare_cpu_ms
            ));
        }
        let m = &p.memory;
        let budget =
            |b: Option<u64>| b.map_or("unlimited".to_string(), |b| format!("{:.0} MiB", mib(b)));
        ui.separator();
        ui.text_wrapped(format!(
            "pages: GPU {} ({:.1} of {})",
            m.gpu_pages,
            mib(m.gpu_bytes),
            budget(m.budgets.gpu)
        ));
        ui.text_wrapped(format!(
            "  host {} ({:.1} of {}), disk {} ({:.1} MiB)",
            m.host_pages,
            mib(m.host_bytes),
            budget(m.budgets.host),
            m.disk_pages,
            mib(m.spill_bytes)
        ));
        ui.text_wrapped(format!(
            "  page-ins {:.0}/s, page-outs {:.0}/s",
            p.pages_per_s.0, p.pages_per_s.1
        ));
        measure_fit(ui, "Profiler", &mut s.overflow);
    });
}

fn help_panel(ui: &Ui, s: &mut UiState) {
    panel(ui, "Help").opened(&mut s.show_help).build(|| {
        for line in [
            "left drag: paint; right drag or Shift: inverted",
            "  (raise <-> lower, smooth <-> contrast,",
            "  a stamp carved instead of raised)",
            "[ ]: radius; Ctrl+Z / Ctrl+Y: undo / redo",
            "middle drag (or Alt+left): orbit / look",
            "Ctrl+middle drag: pan; wheel: zoom to cursor",
            "W A S D Q E: move; Tab: orbit <-> fly",
            "F: frame all; V: vsync; L: LOD colours",
            "Erosion panel: a region run, live, with water",
            "Geology panel: rivers cut into rising rock",
            "Ctrl+O open, Ctrl+S save, Ctrl+E export heights",
            "Ctrl+T open a stamp, Ctrl+P screenshot",
            "Ctrl+Shift+N: new layer (Layers panel's mode)",
            "P: path tool (click points, Enter applies)",
            "Ctrl+Q: close (asks first if steps are unsaved)",
        ] {
            ui.text(line);
        }
        measure_fit(ui, "Help", &mut s.overflow);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::file_browser::ExportOptions;

    #[test]
    fn an_export_the_document_cannot_take_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("h.png");
        let whole = ExportOptions::default();
        assert_eq!(export_problem(&out, &whole, [512, 512]), None);
        let tiles = |c, r| ExportOptions {
            tiles: Some((c, r)),
            ..whole
        };
        // 511 = 7 x 73: 7x7 edge-sharing tiles divide 512 texels, 2x2 do not.
        assert_eq!(export_problem(&out, &tiles(7, 7), [512, 512]), None);
        let e = export_problem(&out, &tiles(2, 2), [512, 512]).unwrap();
        assert!(e.starts_with("tiles:"), "{e}");
        let outside = ExportOptions {
            region: Some([400, 0, 200, 100]),
            ..whole
        };
        let e = export_problem(&out, &outside, [512, 512]).unwrap();
        assert!(e.starts_with("region:"), "{e}");
        let e = export_problem(&dir.path().join("no/h.png"), &whole, [512, 512]).unwrap();
        assert!(e.contains("no"), "{e}");
        // Past 2^28 texels in one file: tiles, or a region.
        let e = export_problem(&out, &whole, [32768, 32768]).unwrap();
        assert!(e.contains("too large"), "{e}");
        assert_eq!(
            export_area(&outside, [512, 512]),
            crate::pages::geometry::Region {
                x: 400,
                y: 0,
                width: 200,
                height: 100
            }
        );
        // A mesh: any name (it becomes NAME.glb) and size, a region inside the document.
        let mesh = ExportOptions {
            mesh: Some(0.5),
            ..whole
        };
        assert_eq!(export_problem(&out, &mesh, [32768, 32768]), None);
        let e = export_problem(
            &out,
            &ExportOptions {
                mesh: Some(0.5),
                ..outside
            },
            [512, 512],
        );
        assert!(e.unwrap().starts_with("region:"));
        let e = export_problem(&dir.path().join("no/h.png"), &mesh, [512, 512]).unwrap();
        assert!(e.contains("no"), "{e}");
        let thin = ExportOptions {
            mesh: Some(0.5),
            region: Some([0, 0, 1, 100]),
            ..whole
        };
        let e = export_problem(&out, &thin, [512, 512]).unwrap();
        assert!(e.contains("at least 2x2"), "{e}");
    }
}
