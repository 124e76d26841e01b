//! The windowed editor: winit window, swapchain, quadtree terrain, picking and the brush
//! cursor, painting (live strokes, the same instances a journal replays), undo/redo, imgui panels
//! with a GPU profiler, presets and journal saving. `scarp edit --replay J --screenshot F --quit`
//! drives it from a journal through the same painting path (CI runs it under Xvfb).
//!
//! Two frames are in flight: each frame takes the results of the frame two back (GPU times, the
//! picked point under the cursor), pumps the stroke queue under a GPU budget, brings the renderer
//! up to date, and draws terrain and UI into the acquired image in one submission that it does
//! not wait for (a screenshot's frame is waited for).

pub mod actions;
pub mod erosion_ui;
pub mod field_map;
pub mod file_browser;
pub mod geology_ui;
pub mod layers_ui;
pub mod noise_preview;
pub mod pacing;
pub mod path_ui;
pub mod pen;
pub mod present;
pub mod remembered;
pub mod screen;
pub mod stamp_library;
pub mod stroke_input;
pub mod ui;
pub mod ui_probe;
pub mod ui_texture;
pub mod widgets;

use crate::atomic_file::{write_bytes_atomic, write_rgba_png};
use crate::brush::{BrushSettings, BrushType};
use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, GpuOptions, Recorder};
use crate::journal::{parse_brush, preset, BrushEntry, Step};
use crate::noise::{NoiseKind, NoiseSettings, NoiseTables};
use crate::pages::rects;
use crate::pages::MemoryReport;
use crate::project;
use crate::render::camera::{Camera, CameraMode, ImageWindow};
use crate::render::frame::{serve_requests, submit_frame, FrameTargets, PAGE_INS_PER_FRAME};
use crate::render::lighting::{LightSettings, Lighting, Sun};
use crate::render::saved_view::SavedView;
use crate::render::terrain::Overlay;
use crate::render::{CursorRing, RenderOptions, TerrainRenderer, ViewSettings};
use crate::session::erosion_run::{RegionRun, WATER_FIELD};
use crate::session::geology_run::GeologyLive;
use crate::session::{self, LiveStroke, Session};
use anyhow::{anyhow, bail, Context as _, Result};
use file_browser::Purpose;
use glam::{Vec2, Vec3};
use pacing::TerrainPacing;
use present::Presenter;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use remembered::Remembered;
use screen::Screen;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use stroke_input::{PendingSample, Resolved, StrokeEvent, StrokeInput};
use ui::{CloseChoice, DocInfo, UiAction, UiState};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, Event, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{KeyCode, ModifiersState, PhysicalKey};
use winit::window::{Window, WindowId};

/// The journal that makes the terrain a new user sees (4096², a few procedural strokes).
pub const DEFAULT_JOURNAL: &str = "assets/journals/default.json";
/// Where presets live.
pub const PRESET_DIR: &str = "assets/presets";
/// A stroke sample's pressure from the platform's normalized pen or touch force (None where the
/// platform gives none: full pressure) through the panel's curve, `force^gamma`, in [0, 1].
pub fn pressure_curve(force: Option<f32>, gamma: f32) -> f32 {
    match force {
        Some(f) if f.is_finite() => f.clamp(0.0, 1.0).powf(gamma.clamp(0.1, 10.0)),
        _ => 1.0,
    }
}

/// Journal samples fed per frame while replaying (a fast hand).
const REPLAY_SAMPLES_PER_FRAME: usize = 6;

/// How `scarp edit` was asked to run.
#[derive(Clone, Debug, Default)]
pub struct EditOptions {
    /// A journal to open (replayed on load); None opens the default terrain.
    pub file: Option<PathBuf>,
    /// A journal whose document is opened and whose steps are then painted through the input
    /// path, frame by frame.
    pub replay: Option<PathBuf>,
    /// Save a screenshot of the window once the replay (if any) is done and drawn.
    pub screenshot: Option<PathBuf>,
    /// Exit once the replay and screenshot are done.
    pub quit: bool,
    /// Record a trace from the start and write it here on exit.
    pub trace: Option<PathBuf>,
    /// Reopen the newest untitled session left by a crash without asking.
    pub recover: bool,
    pub table_seed: u64,
    /// Memory budgets of the document's pages.
    pub memory: crate::pages::BudgetRequest,
    /// Show a sea at this height from the start (the View panel's *sea*).
    pub sea_level: Option<f32>,
    /// Write the interface's state here, a line a frame, for a driving script ([`ui_probe`]).
    pub ui_state: Option<PathBuf>,
}

/// Finds a bundled asset: relative to the working directory, else to the source tree.
pub fn asset_path(rel: &str) -> PathBuf {
    let p = PathBuf::from(rel);
    if p.exists() {
        return p;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Opens the editor; returns when its window closes.
pub fn run(options: EditOptions) -> Result<()> {
    if cfg!(target_os = "linux")
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        bail!(
            "no display (DISPLAY and WAYLAND_DISPLAY are unset): the editor needs a window. \
             Headless: `scarp render` draws a terrain to a PNG, `scarp apply` replays a journal, \
             `scarp gallery` renders the noise kinds; or run under Xvfb (xvfb-run scarp edit)"
        );
    }
    for p in [&options.file, &options.replay].into_iter().flatten() {
        if !p.exists() {
            bail!("{}: no such file", p.display());
        }
    }
    if let Some(s) = &options.screenshot {
        crate::terrain::export::check_writable(s).map_err(anyhow::Error::msg)?;
    }
    if let Some(s) = &options.ui_state {
        ui_probe::UiProbeLog::create(s)?;
    }
    let event_loop = EventLoop::new().map_err(|e| {
        anyhow!("cannot open the display ({e}); headless commands: scarp render, scarp apply")
    })?;
    let mut app = App {
        options,
        editor: None,
        error: None,
    };
    event_loop.run_app(&mut app)?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct App {
    options: EditOptions,
    editor: Option<Editor>,
    error: Option<anyhow::Error>,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: anyhow::Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        // Tear down while the event loop still runs: the surface needs the window.
        self.editor = None;
        event_loop.exit();
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.editor.is_some() {
            return;
        }
        match Editor::new(event_loop, &self.options) {
            Ok(e) => self.editor = Some(e),
            Err(e) => self.fail(event_loop, e),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, id: WindowId, event: WindowEvent) {
        let Some(editor) = self.editor.as_mut() else {
            return;
        };
        match editor.window_event(id, event) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Exit) => {
                editor.remember();
                if let Some(path) = editor.trace_out.take() {
                    if let Err(e) = crate::trace::stop_into(&path) {
                        self.error = Some(anyhow!("{}: trace not written: {e}", path.display()));
                    }
                }
                // Validation messages fail a scripted run like a test.
                let messages = editor.gpu.validation_messages();
                self.editor = None;
                if messages > 0 {
                    self.error = Some(anyhow!("{messages} validation message(s) reported"));
                }
                event_loop.exit();
            }
            Err(e) => self.fail(event_loop, e),
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(e) = &self.editor {
            e.window.request_redraw();
        }
    }
}

enum Flow {
    Continue,
    Exit,
}

/// A journal being painted through the input path.
struct Replay {
    steps: Vec<Step>,
    step: usize,
    sample: usize,
}

/// Mouse and keyboard state.
#[derive(Default)]
struct Input {
    cursor: Option<[f64; 2]>,
    left: bool,
    right: bool,
    middle: bool,
    modifiers: ModifiersState,
    keys: HashSet<KeyCode>,
    /// Pressure from touch force, when the platform gives it.
    force: Option<f32>,
}

impl Input {
    /// Moves `camera` by the keys held (WASD, Q and E; none while Ctrl is held, which makes
    /// them shortcuts, nor while the interface has the keyboard: `ui_keys`), `dt` seconds'
    /// worth, flying or orbiting.
    fn steer(&self, camera: &mut Camera, fly: bool, ui_keys: bool, dt: f32) {
        camera.set_mode(if fly {
            CameraMode::Fly
        } else {
            CameraMode::Orbit
        });
        // A key pressed for a shortcut may go up after the browser it opened took the keyboard,
        // and Ctrl before it: Ctrl+S's S would move the camera in between.
        if self.modifiers.control_key() || ui_keys {
            return;
        }
        let speed = camera.eye().distance(camera.target).max(200.0) * 0.8 * dt;
        let k = |c: KeyCode| f32::from(u8::from(self.keys.contains(&c)));
        let mv = Vec3::new(
            k(KeyCode::KeyD) - k(KeyCode::KeyA),
            k(KeyCode::KeyE) - k(KeyCode::KeyQ),
            k(KeyCode::KeyW) - k(KeyCode::KeyS),
        );
        if mv != Vec3::ZERO {
            camera.travel(mv * speed);
        }
    }
}

struct Editor {
    // Dropped first: holds a raw device handle.
    imgui_renderer: imgui_rs_vulkan_renderer::Renderer,
    imgui: imgui::Context,
    platform: imgui_winit_support::WinitPlatform,
    renderer: TerrainRenderer,
    /// The brush panel's image of the brush's noise.
    noise_preview: noise_preview::NoisePreview,
    /// Pen pressure through XInput2 (X11), when the window is an X11 one.
    pen: Option<pen::PenReader>,
    /// The brush panel's stamps, loaded when the stamp brush is first chosen.
    stamps: Option<stamp_library::StampLibrary>,
    /// The file the document was opened from (the View panel names it).
    source: PathBuf,
    /// The memory budgets asked for: documents opened later get them too.
    memory: crate::pages::BudgetRequest,
    /// A document the user asked to open over unsaved steps, and how many there were: opening
    /// it again with no step since discards them.
    discard_armed: Option<(PathBuf, usize)>,
    /// The user's config folder: what the editor remembers between runs.
    config: Option<PathBuf>,
    /// The Help panel counts as seen: it was before, or this run is a person's (a scripted run
    /// that quits by itself does not count).
    help_seen: bool,
    /// Keeps the lighting field (shadows, occlusion) up to date: near edits at once, the
    /// strips farther away within the View panel's shadow budget.
    lighting: Lighting,
    presenter: Presenter,
    session: Session,
    shot_buffer: Option<Buffer>,
    /// RenderDoc's in-application API, when running under RenderDoc (F12, the profiler button).
    capture: crate::gpu::Capture,
    /// Where `--trace` writes the trace recorded since the start, on exit.
    trace_out: Option<PathBuf>,
    /// `--ui-state`: a line a frame for a driving script, and whether this frame's pointer was
    /// over a widget (asked of imgui while the panels are built).
    probe: Option<ui_probe::UiProbeLog>,
    over_widget: bool,
    window: Arc<Window>,
    camera: Camera,
    ui: UiState,
    /// The View panel's field map (drainage, wetness, profile or plan curvature).
    field_map: field_map::FieldMap,
    input: Input,
    stroke: Option<LiveStroke>,
    /// The painting button's samples on their way to the stroke (see [`stroke_input`]), and
    /// whether the button paints a stroke now (its motion events are samples).
    stroke_input: StrokeInput<LiveStroke>,
    stroking: bool,
    stroke_start: Instant,
    /// When frames draw the terrain again or keep the last picture.
    pacing: TerrainPacing,
    /// The terrain point a ramp stroke started at (its outline is drawn while it is dragged).
    ramp_anchor: Option<Vec3>,
    /// The erosion panel's region run under way.
    erosion: Option<RegionRun>,
    /// The geology panel's live run under way.
    geology: Option<GeologyLive>,
    /// Where a drag setting the erosion region began (document texel).
    region_drag: Option<[f32; 2]>,
    /// In the map view: the camera and fog to go back to.
    map_return: Option<(Camera, f32)>,
    /// The world height the region's outline is drawn at (where its drag began).
    region_height: Option<f32>,
    /// Close once the project the browser is choosing is saved (closing an untitled session).
    close_after_save: bool,
    /// A close was asked for and answered: the frame ends the editor.
    exit_requested: bool,
    replay: Option<Replay>,
    pick: Option<Vec3>,
    last_frame: Instant,
    /// When the editor opened: the sea's waves move with the time since.
    opened: Instant,
    frames: u64,
    /// Frame at which the queue went idle after the replay (screenshots wait a frame or two).
    idle_since: Option<u64>,
    screenshot: Option<PathBuf>,
    quit: bool,
    instances_window: (Instant, usize),
    table_seed: u64,
    gpu: Arc<Gpu>,
}

/// A renderer of `session`'s document drawing into `format`, caught up with its pages; `sea`:
/// its first frames show the sea.
fn renderer_for(
    gpu: &Arc<Gpu>,
    session: &mut Session,
    format: vk::Format,
    sea: bool,
) -> Result<TerrainRenderer> {
    let options = RenderOptions::new(format).expecting_water(&session.doc.store, sea);
    let mut renderer = TerrainRenderer::new(gpu, *session.doc.desc(), options)?;
    renderer.refresh(&mut session.doc.store)?;
    Ok(renderer)
}

fn list_presets() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(asset_path(PRESET_DIR))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    (p.extension()? == "json").then(|| p.file_stem()?.to_str().map(String::from))?
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The pen reader of an X11 window, and what the View panel says of pen pressure.
fn open_pen(window: &Window) -> (Option<pen::PenReader>, String) {
    use raw_window_handle::RawWindowHandle;
    let id = match window.window_handle().map(|h| h.as_raw()) {
        // c_ulong: 64 bits here, 32 on some targets.
        #[allow(clippy::unnecessary_cast)]
        Ok(RawWindowHandle::Xlib(h)) => h.window as u64,
        Ok(RawWindowHandle::Xcb(h)) => u64::from(h.window.get()),
        Ok(RawWindowHandle::Wayland(_)) => {
            return (None, "pen: no pressure on Wayland (winit 0.30)".into())
        }
        _ => return (None, "pen: touch force where the platform gives it".into()),
    };
    match pen::PenReader::open(None, id) {
        Ok(r) if r.devices.is_empty() => (Some(r), "pen: none found (XInput2)".into()),
        Ok(r) => {
            let names: Vec<&str> = r.devices.iter().map(|d| d.name.as_str()).collect();
            let status = format!("pen: {}", names.join(", "));
            (Some(r), status)
        }
        Err(e) => (None, format!("pen: no XInput2 ({e})")),
    }
}

/// The heights the altitude rules span for a document of `desc` as it opens: its heights then,
/// else (a document still flat, its strokes to come) its declared range. Fixed while it is open,
/// so an edit far away never recolours the rest.
fn altitude_range(desc: &crate::pages::DocumentDesc, renderer: &TerrainRenderer) -> (f32, f32) {
    let (lo, hi) = renderer.nodes().range();
    if hi > lo {
        (lo, hi)
    } else {
        (desc.height_min, desc.height_max)
    }
}

/// Where a sea turned on first stands: the low ground, the 10th percentile of the lowest
/// heights of the document's 64² blocks (`block_minima`, reordered), so it fills the lowest
/// tenth rather than flooding the land; a hair (0.2 % of their spread) below it, so a plain at
/// that height stays dry instead of meeting the water in one plane. None for no finite height.
fn low_ground(block_minima: &mut Vec<f32>) -> Option<f32> {
    block_minima.retain(|h| h.is_finite());
    block_minima.sort_by(f32::total_cmp);
    let (lo, hi) = (*block_minima.first()?, *block_minima.last()?);
    let p10 = block_minima[block_minima.len() / 10];
    Some(p10 - 0.002 * (hi - lo))
}

/// The panels' state on opening `session`'s document (rendered by `renderer` on `gpu`): the
/// default brush, a view scaled to the document, presets listed, nothing to recover.
fn first_ui(
    session: &Session,
    gpu: &Gpu,
    renderer: &TerrainRenderer,
    sea_level: Option<f32>,
) -> UiState {
    let desc = *session.doc.desc();
    let vs = desc.vertical_scale();
    let range = altitude_range(&desc, renderer);
    UiState {
        brush: default_brush(),
        field_map: None,
        view: ViewSettings {
            vertical_scale: vs,
            pixel_error: 2.0,
            max_triangles_per_pixel: crate::render::terrain::default_triangles_per_pixel(&desc),
            fog: 0.05 / desc.width.max(desc.height) as f32,
            sun: Some(Sun::default()),
            look: Some(crate::render::look::Look {
                materials: crate::render::look::Materials::default().on_document(&desc, range),
                ..Default::default()
            }),
            sea_level,
            altitude_range: Some(range),
            ..ViewSettings::default()
        },
        budget_ms: 6.0,
        light_budget_ms: crate::render::lighting::DEFAULT_BUDGET_MS as f32,
        pressure_gamma: 1.0,
        vsync: true,
        fly: false,
        map_view: false,
        preset_name: "my-brush".into(),
        presets: list_presets(),
        preset_index: 0,
        project_path: match session.project() {
            Some(p) => p.display().to_string(),
            None => String::new(),
        },
        has_project: session.project().is_some(),
        recovery: None,
        untitled_recovery: None,
        closing: None,
        damaged_save: None,
        history: (Vec::new(), 0),
        message: String::new(),
        noise_preview: None,
        actions: Vec::new(),
        profile: ui::Profiler {
            timestamps: gpu.info().timestamp_valid_bits > 0,
            ..Default::default()
        },
        doc: None,
        has_wireframe: renderer.has_wireframe(),
        layers: layers_ui::LayersUi::default(),
        erosion: erosion_ui::ErosionUi::default(),
        geology: geology_ui::GeologyUi::default(),
        path: path_ui::PathUi::default(),
        show_help: true,
        browser: None,
        export: Default::default(),
        browse_dir: PathBuf::from("."),
        stamps: Vec::new(),
        stamp_index: None,
        pen_status: String::new(),
        accordion: Default::default(),
        overflow: Vec::new(),
        pressure_now: None,
    }
}

/// The default brush a new user paints with: a Jordan mountain brush.
/// What `saved` keeps, shown by `ui` (its view settings, fly and map view); returns its camera.
fn take_saved_view(saved: &SavedView, ui: &mut UiState) -> Camera {
    saved.apply(&mut ui.view);
    let camera = saved.camera();
    ui.fly = camera.mode == CameraMode::Fly;
    ui.map_view = saved.map_view;
    camera
}

fn default_brush() -> BrushSettings {
    let mut b = BrushSettings::new(BrushType::Noise);
    // Jordan's own defaults (its warp is 0.35; fbm's settings carried Swiss's 0.15).
    b.noise = NoiseSettings::new(NoiseKind::Jordan);
    b.radius = 256.0;
    b.strength = 0.03;
    b.spacing = 0.1;
    b
}

/// imgui's renderer on `gpu`, drawing into `format` targets with the renderer's frames in flight.
pub fn imgui_renderer(
    gpu: &Gpu,
    imgui: &mut imgui::Context,
    format: vk::Format,
) -> Result<imgui_rs_vulkan_renderer::Renderer> {
    allow_large_draw_lists(imgui);
    imgui_rs_vulkan_renderer::Renderer::with_default_allocator(
        gpu.instance(),
        gpu.physical_device(),
        gpu.device().clone(),
        gpu.raw_queue(),
        gpu.raw_command_pool(),
        imgui_rs_vulkan_renderer::DynamicRendering {
            color_attachment_format: format,
            depth_attachment_format: None,
        },
        imgui,
        Some(imgui_rs_vulkan_renderer::Options {
            in_flight_frames: crate::render::SLOTS,
            ..Default::default()
        }),
    )
    .map_err(|e| anyhow!("imgui renderer: {e}"))
}

/// Tells imgui that its renderer draws each command at the command's vertex offset (as
/// imgui-rs-vulkan-renderer does), so a draw list past 65536 vertices (a long path's outline) is
/// split into commands instead of aborting on imgui's 16-bit indices.
fn allow_large_draw_lists(imgui: &mut imgui::Context) {
    imgui
        .io_mut()
        .backend_flags
        .insert(imgui::BackendFlags::RENDERER_HAS_VTX_OFFSET);
}

/// The brush an inverted stroke (right button or Shift) uses.
fn inverted(b: &BrushSettings) -> BrushSettings {
    let mut b = b.clone();
    b.brush = match b.brush {
        BrushType::Raise => BrushType::Lower,
        BrushType::Lower => BrushType::Raise,
        BrushType::Smooth => BrushType::Contrast,
        BrushType::Contrast => BrushType::Smooth,
        other => other,
    };
    // A stamp pressed in: the crater or canyon carved instead of raised.
    if b.brush == BrushType::Stamp {
        b.strength = -b.strength;
    }
    b
}

/// What the editor opens with: the session, the replay to paint, what to offer (a project's
/// recovery, an untitled leftover, the older save of a damaged project) and the source path.
struct Opening {
    session: Session,
    replay: Option<Replay>,
    recovery_offer: Option<session::RecoveryOffer>,
    leftover: Option<session::untitled::Leftover>,
    source: PathBuf,
    /// The file given, whose newest save is damaged, and what is wrong with it.
    damaged: Option<(PathBuf, String)>,
}

impl Editor {
    fn new(event_loop: &ActiveEventLoop, options: &EditOptions) -> Result<Self> {
        let config = remembered::config_dir();
        let (remembered, remembered_error) = match config.as_deref().map(Remembered::load) {
            Some(Ok(r)) => (r, None),
            Some(Err(e)) => (Remembered::default(), Some(e)),
            None => (Remembered::default(), None),
        };
        let (window, gpu, presenter) = Self::open_window(event_loop, remembered.window)?;
        // The documents' noise tables, and the noise preview's.
        let tables = NoiseTables::new(options.table_seed);
        let Opening {
            mut session,
            replay,
            recovery_offer,
            leftover,
            source,
            damaged,
        } = Self::open_session(&gpu, options, &tables)?;
        let desc = *session.doc.desc();
        let sea =
            options.sea_level.is_some() || session.view().is_some_and(|v| v.sea_level.is_some());
        let renderer = renderer_for(&gpu, &mut session, presenter.format, sea)?;
        if options.trace.is_some() {
            crate::gpu::start_trace(&gpu)?;
        }

        let layout = config.as_ref().and_then(|dir| {
            // imgui writes its layout file itself; the folder must exist.
            std::fs::create_dir_all(dir).ok()?;
            Some(dir.join(remembered::LAYOUT_FILE))
        });
        let (imgui, platform, mut imgui_renderer) =
            Self::make_imgui(&gpu, &window, presenter.format, layout)?;
        let noise_preview = noise_preview::NoisePreview::new(&gpu, &tables, &mut imgui_renderer)?;
        let vs = desc.vertical_scale();
        let mut camera = Camera::default();
        let (lo, hi) = renderer.nodes().range();
        camera.frame_all(desc.width, desc.height, lo * vs, hi * vs);
        let mut ui = first_ui(&session, &gpu, &renderer, options.sea_level);
        // The view the project or journal saved: its camera, sun, sea, look (--sea-level over
        // its sea).
        if let Some(saved) = session.view() {
            camera = take_saved_view(saved, &mut ui);
            ui.view.sea_level = options.sea_level.or(ui.view.sea_level);
        }
        ui.recovery = recovery_offer;
        ui.untitled_recovery = leftover.map(|l| (l.path, l.strokes));
        ui.damaged_save = damaged;
        let (pen, pen_status) = open_pen(&window);
        ui.pen_status = pen_status;
        if let Some(b) = current_brush(session.presets(), &source) {
            ui.brush = b;
        } else if let (Some(entry), Some(dir)) = (&remembered.brush, &config) {
            match entry.brush(dir) {
                Ok(b) => ui.brush = b,
                Err(e) => ui.message = format!("the last brush is not used: {e}"),
            }
        }
        if let Some(e) = remembered_error {
            ui.message = format!("remembered settings not used: {e}");
        }
        ui.show_help = !remembered.help_seen;
        // The file browser starts in the folder of the document opened from a file, else where
        // a file was last chosen.
        let document_dir = options.file.as_deref().and_then(Path::parent);
        if let Some(dir) = document_dir
            .map(Path::to_path_buf)
            .or(remembered.browse_dir.clone())
            .filter(|d| d.as_os_str().is_empty() || d.is_dir())
        {
            ui.browse_dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            };
        }
        Ok(Self {
            imgui_renderer,
            noise_preview,
            stamps: None,
            pen,
            source,
            memory: options.memory,
            discard_armed: None,
            config,
            help_seen: remembered.help_seen || !options.quit,
            imgui,
            platform,
            renderer,
            presenter,
            session,
            shot_buffer: None,
            capture: crate::gpu::Capture::new(),
            window,
            camera,
            ui,
            field_map: Default::default(),
            input: Input::default(),
            stroke: None,
            stroke_input: StrokeInput::default(),
            stroking: false,
            pacing: TerrainPacing::default(),
            erosion: None,
            geology: None,
            region_drag: None,
            map_return: None,
            region_height: None,
            stroke_start: Instant::now(),
            ramp_anchor: None,
            close_after_save: false,
            exit_requested: false,
            replay,
            pick: None,
            last_frame: Instant::now(),
            opened: Instant::now(),
            frames: 0,
            idle_since: None,
            lighting: Lighting::new(&gpu, desc.format)?,
            screenshot: options.screenshot.clone(),
            trace_out: options.trace.clone(),
            probe: options
                .ui_state
                .as_deref()
                .map(ui_probe::UiProbeLog::create)
                .transpose()?,
            over_widget: false,
            quit: options.quit,
            instances_window: (Instant::now(), 0),
            table_seed: options.table_seed,
            gpu,
        })
    }

    /// The window, the GPU with the window's extensions, and the presenter of its surface.
    fn open_window(
        event_loop: &ActiveEventLoop,
        size: Option<[u32; 2]>,
    ) -> Result<(Arc<Window>, Arc<Gpu>, Presenter)> {
        let [w, h] = size.unwrap_or([1440, 900]);
        let attrs = Window::default_attributes()
            .with_title("Scarp")
            .with_inner_size(winit::dpi::LogicalSize::new(w, h));
        let window = Arc::new(
            event_loop
                .create_window(attrs)
                .context("creating the window")?,
        );
        let display = window.display_handle()?.as_raw();
        let extensions = ash_window::enumerate_required_extensions(display)?
            .iter()
            // SAFETY: ash-window returns pointers to static, NUL-terminated extension names.
            .map(|&p| unsafe { std::ffi::CStr::from_ptr(p) })
            .collect();
        let gpu = Gpu::new(&GpuOptions {
            window_extensions: extensions,
            swapchain: true,
            ..GpuOptions::from_env()
        })
        .context("opening the GPU")?;
        // SAFETY: the window outlives the surface (the presenter is dropped before the window).
        let surface = unsafe {
            ash_window::create_surface(
                gpu.entry(),
                gpu.instance(),
                display,
                window.window_handle()?.as_raw(),
                None,
            )?
        };
        let size = window.inner_size();
        let presenter = Presenter::new(&gpu, surface, [size.width, size.height])?;

        Ok((window, gpu, presenter))
    }

    /// The document to edit: the newest untitled leftover with --recover, else the replayed
    /// journal, the file given or the default terrain (the file given is asked about instead
    /// when its newest save is damaged); with the replay to paint, the project's recovery
    /// offer and the untitled leftover to offer.
    fn open_session(
        gpu: &Arc<Gpu>,
        options: &EditOptions,
        tables: &NoiseTables,
    ) -> Result<Opening> {
        // The document: a replayed journal, the file given, or the default terrain.
        let mut source = options
            .replay
            .clone()
            .or_else(|| options.file.clone())
            .unwrap_or_else(|| asset_path(DEFAULT_JOURNAL));
        let mut damaged = None;
        // An untitled session that ended without saving (a crash, a kill): offered, or taken at
        // once with --recover. Not while replaying a script.
        let leftover = match (&options.replay, session::untitled::state_dir()) {
            (None, Some(dir)) => session::untitled::leftovers(&dir).into_iter().next(),
            _ => None,
        };
        let (session, replay_steps, recovery_offer, leftover) = match leftover {
            Some(l) if options.recover => {
                eprintln!("recovering the untitled session in {}", l.path.display());
                let (s, recovered) = Session::recover_untitled(gpu, &l.path, tables)?;
                if recovered.failed.is_some() {
                    eprintln!("{recovered}");
                }
                (s, Vec::new(), None, None)
            }
            other => {
                let replaying = options.replay.is_some();
                match Session::open(gpu, &source, tables, replaying) {
                    Ok((s, steps, offer)) => (s, steps, offer, other),
                    Err(e) => match e.older_save_offer() {
                        // The default terrain, and the question.
                        Some(damage) => {
                            damaged = Some((source.clone(), damage));
                            source = asset_path(DEFAULT_JOURNAL);
                            let (s, steps, offer) = Session::open(gpu, &source, tables, false)?;
                            (s, steps, offer, other)
                        }
                        None => return Err(e.into()),
                    },
                }
            }
        };
        let mut session = session;
        let budgets = options.memory.budgets(gpu, session.project());
        session.doc.set_budgets(budgets);
        let replay = options.replay.is_some().then_some(Replay {
            steps: replay_steps,
            step: 0,
            sample: 0,
        });
        Ok(Opening {
            session,
            replay,
            recovery_offer,
            leftover,
            source,
            damaged,
        })
    }

    /// imgui, its winit platform and its Vulkan renderer (dynamic rendering into `format`).
    fn make_imgui(
        gpu: &Arc<Gpu>,
        window: &Window,
        format: vk::Format,
        layout: Option<PathBuf>,
    ) -> Result<(
        imgui::Context,
        imgui_winit_support::WinitPlatform,
        imgui_rs_vulkan_renderer::Renderer,
    )> {
        let mut imgui = imgui::Context::create();
        imgui.set_ini_filename(layout);
        let mut platform = imgui_winit_support::WinitPlatform::new(&mut imgui);
        platform.attach_window(
            imgui.io_mut(),
            window,
            imgui_winit_support::HiDpiMode::Default,
        );
        // HiDPI: the panels are laid out in logical pixels; the font is rasterized at the
        // window's scale so text stays sharp, and drawn at 1/scale of that.
        let scale = platform.hidpi_factor().max(1.0) as f32;
        imgui
            .fonts()
            .add_font(&[imgui::FontSource::DefaultFontData {
                config: Some(imgui::FontConfig {
                    size_pixels: 13.0 * scale,
                    ..imgui::FontConfig::default()
                }),
            }]);
        imgui.io_mut().font_global_scale = 1.0 / scale;
        let imgui_renderer = imgui_renderer(gpu, &mut imgui, format)?;
        Ok((imgui, platform, imgui_renderer))
    }

    fn window_event(&mut self, id: WindowId, event: WindowEvent) -> Result<Flow> {
        self.platform.handle_event(
            self.imgui.io_mut(),
            &self.window,
            &Event::<()>::WindowEvent {
                window_id: id,
                event: event.clone(),
            },
        );
        let io = self.imgui.io();
        let (ui_mouse, ui_keys) = (io.want_capture_mouse, io.want_capture_keyboard);
        match event {
            WindowEvent::CloseRequested => self.close_requested(),
            WindowEvent::Resized(size) => self.recreate_presenter([size.width, size.height])?,
            WindowEvent::ModifiersChanged(m) => self.input.modifiers = m.state(),
            WindowEvent::CursorMoved { position, .. } => {
                let p = [position.x, position.y];
                if let Some(old) = self.input.cursor {
                    let d = Vec2::new((p[0] - old[0]) as f32, (p[1] - old[1]) as f32);
                    let orbit =
                        self.input.middle || (self.input.left && self.input.modifiers.alt_key());
                    if orbit && self.input.modifiers.control_key() {
                        let k = self.camera.distance.max(50.0) * 0.0015;
                        self.camera.travel(Vec3::new(-d.x * k, d.y * k, 0.0));
                    } else if orbit {
                        self.camera.rotate(d);
                    }
                }
                self.input.cursor = Some(p);
                if self.stroking {
                    self.stroke_sample();
                }
            }
            WindowEvent::CursorLeft { .. } => self.input.cursor = None,
            WindowEvent::Touch(t) => {
                self.input.force = t.force.map(|f| f.normalized() as f32);
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let down = state == ElementState::Pressed;
                if ui_mouse {
                    self.pacing.ui_input(Instant::now());
                }
                match button {
                    MouseButton::Left => self.input.left = down,
                    MouseButton::Right => self.input.right = down,
                    MouseButton::Middle => self.input.middle = down,
                    _ => {}
                }
                let paint_button = matches!(button, MouseButton::Left | MouseButton::Right);
                let picking = self.ui.erosion.picking && button == MouseButton::Left;
                if paint_button && down && !ui_mouse && !self.input.modifiers.alt_key() {
                    if picking {
                        self.region_drag = self.pick.map(|p| [p.x, p.z]);
                        self.region_height = self.pick.map(|p| p.y);
                    } else if self.ui.path.active {
                        self.path_press(button == MouseButton::Right);
                    } else {
                        let invert =
                            button == MouseButton::Right || self.input.modifiers.shift_key();
                        self.begin_stroke(invert);
                    }
                }
                if paint_button && !down {
                    self.ui.path.dragging = None;
                    if picking && self.region_drag.take().is_some() {
                        self.ui.erosion.picking = false;
                    }
                    if std::mem::take(&mut self.stroking) {
                        self.stroke_input.push(StrokeEvent::End);
                    }
                }
            }
            WindowEvent::MouseWheel { delta, .. } if !ui_mouse => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.camera.zoom_toward(self.pick, 0.85f32.powf(lines));
            }
            // A release always ends a hold, whoever had the keyboard when the key went down:
            // Ctrl+S pressed over the terrain opens the save browser, which takes the
            // keyboard, and S released then was left held, moving the camera on and on.
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Released => {
                if let PhysicalKey::Code(code) = event.physical_key {
                    self.input.keys.remove(&code);
                }
                if ui_keys {
                    self.pacing.ui_input(Instant::now());
                }
            }
            // Keys released while the window had no focus never arrive.
            WindowEvent::Focused(false) => self.input.keys.clear(),
            WindowEvent::KeyboardInput { .. } | WindowEvent::Ime(_) if ui_keys => {
                self.pacing.ui_input(Instant::now());
            }
            WindowEvent::KeyboardInput { event, .. } if !ui_keys => {
                if let PhysicalKey::Code(code) = event.physical_key {
                    // A key pressed with Ctrl is a shortcut, never a held move: Ctrl may go up
                    // before it does (X delivers the two in either order), and a frame between
                    // them would move the camera by its whole time (seen under slow frames).
                    if !self.input.modifiers.control_key() {
                        self.input.keys.insert(code);
                    }
                    // Held brackets keep resizing; other keys act once per press.
                    let resizes = matches!(code, KeyCode::BracketLeft | KeyCode::BracketRight);
                    if !event.repeat || resizes {
                        self.key_pressed(code)?;
                    }
                }
            }
            WindowEvent::RedrawRequested => return self.frame(),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn key_pressed(&mut self, code: KeyCode) -> Result<()> {
        let ctrl = self.input.modifiers.control_key();
        match code {
            KeyCode::KeyQ if ctrl => self.close_requested(),
            KeyCode::Enter | KeyCode::NumpadEnter if self.ui.closing.is_some() => {
                self.ui.actions.push(UiAction::Close(CloseChoice::Save))
            }
            KeyCode::Escape if self.ui.closing.is_some() => {
                self.close_answered(CloseChoice::Cancel)
            }
            KeyCode::Enter | KeyCode::NumpadEnter if self.ui.damaged_save.is_some() => {
                self.ui.actions.push(UiAction::OpenOlderSave)
            }
            KeyCode::Escape if self.ui.damaged_save.is_some() => self.ui.damaged_save = None,
            KeyCode::KeyZ if ctrl => self.undo()?,
            KeyCode::KeyS if ctrl && self.input.modifiers.shift_key() => {
                self.ui.browse(Purpose::SaveProject)
            }
            KeyCode::KeyS if ctrl => self.ui.save_project(),
            KeyCode::KeyO if ctrl => self.ui.browse(Purpose::Open),
            KeyCode::KeyE if ctrl => self.ui.browse(Purpose::ExportHeights),
            KeyCode::KeyP if ctrl => self.ui.browse(Purpose::Screenshot),
            KeyCode::KeyT if ctrl => self.ui.browse(Purpose::Stamp),
            KeyCode::KeyN if ctrl && self.input.modifiers.shift_key() => {
                layers_ui::add_layer(&self.ui.layers, &mut self.ui.actions)
            }
            KeyCode::KeyP => {
                self.ui.path.active = !self.ui.path.active;
                if self.ui.path.active {
                    self.ui.accordion.open("Path");
                }
                self.ui.message = if self.ui.path.active {
                    "path tool: click the terrain to place points, drag them, Enter applies".into()
                } else {
                    "path tool off".into()
                };
            }
            KeyCode::KeyY if ctrl => self.redo()?,
            KeyCode::BracketLeft => {
                let b = &mut self.ui.brush;
                b.radius = (b.radius / 1.15).max(1.0);
                b.inner_radius = b.inner_radius.min(b.radius * 0.99);
            }
            KeyCode::BracketRight => {
                self.ui.brush.radius = (self.ui.brush.radius * 1.15).min(4096.0)
            }
            KeyCode::Enter | KeyCode::NumpadEnter if self.ui.path.active => self.apply_path(),
            KeyCode::Backspace if self.ui.path.active => {
                let n = self.ui.path.spec.points.len();
                self.ui.path.remove(n.wrapping_sub(1));
            }
            KeyCode::KeyF => self.frame_all(),
            KeyCode::Tab => self.ui.fly = !self.ui.fly,
            KeyCode::KeyM => self.ui.map_view = !self.ui.map_view,
            KeyCode::KeyV => self.ui.vsync = !self.ui.vsync,
            KeyCode::KeyL => self.ui.view.lod_colours = !self.ui.view.lod_colours,
            KeyCode::F12 => self.ui.message = self.capture.trigger(),
            _ => {}
        }
        Ok(())
    }

    /// Goes into the map view when the panel or M asked for it (the camera kept to go back
    /// to), and back out when they no longer do.
    fn follow_map_view(&mut self) {
        match (self.ui.map_view, self.map_return.is_some()) {
            (true, false) => {
                self.map_return = Some((self.camera, self.ui.view.fog));
                let d = *self.session.doc.desc();
                let vs = self.ui.view.vertical_scale;
                let (lo, hi) = self.renderer.nodes().range();
                self.camera.map_view(d.width, d.height, lo * vs, hi * vs);
                self.ui.fly = false;
                // The camera stands far off: no haze between it and the map.
                self.ui.view.fog = 0.0;
            }
            (false, true) => {
                if let Some((c, fog)) = self.map_return.take() {
                    self.camera = c;
                    self.ui.fly = c.mode == CameraMode::Fly;
                    self.ui.view.fog = fog;
                }
            }
            _ => {}
        }
    }

    /// Frames the whole document.
    fn frame_all(&mut self) {
        let d = *self.session.doc.desc();
        let vs = self.ui.view.vertical_scale;
        let (lo, hi) = self.renderer.nodes().range();
        self.camera.frame_all(d.width, d.height, lo * vs, hi * vs);
        self.ui.fly = false;
    }

    fn begin_stroke(&mut self, invert: bool) {
        if self.replay.is_some() {
            return;
        }
        self.finish_edits();
        let brush = if invert {
            inverted(&self.ui.brush)
        } else {
            self.ui.brush.clone()
        };
        if let Err(e) = brush.validate().and_then(|_| brush.noise.validate()) {
            self.ui.message = format!("cannot paint: {e}");
            return;
        }
        if let Err(e) = crate::edit::stroke::check(&self.session.doc, &brush) {
            self.ui.message = format!("cannot paint: {e}");
            return;
        }
        self.stroke_input
            .push(StrokeEvent::Begin(LiveStroke::new(brush)));
        self.stroke_start = Instant::now();
        self.stroking = true;
        self.stroke_sample();
    }

    /// A sample of the stroke being painted at the cursor, now (its terrain point comes with the
    /// next frame's results).
    fn stroke_sample(&mut self) {
        let pixel = self.input.cursor.and_then(|c| self.window_pixel(c));
        if let Some(pixel) = pixel {
            let pressure = self.pressure_now();
            self.stroke_input.push(StrokeEvent::Sample(PendingSample {
                pixel,
                t: self.stroke_start.elapsed().as_secs_f32(),
                pressure,
            }));
        }
    }

    /// The swapchain and depth target made again at `size`: the last terrain picture goes with
    /// them.
    fn recreate_presenter(&mut self, size: [u32; 2]) -> Result<()> {
        self.renderer.forget_picture();
        Ok(self.presenter.recreate(size)?)
    }

    /// The window pixel under cursor position `c`, if it is inside the window.
    fn window_pixel(&self, c: [f64; 2]) -> Option<[u32; 2]> {
        let extent = self.presenter.extent;
        let (x, y) = (c[0].floor(), c[1].floor());
        (x >= 0.0 && y >= 0.0 && (x as u32) < extent.width && (y as u32) < extent.height)
            .then_some([x as u32, y as u32])
    }

    /// The pressure now: a pen touching the tablet (XInput2), else touch force, else full, through
    /// the pressure curve.
    fn pressure_now(&mut self) -> f32 {
        let force = self
            .pen
            .as_mut()
            .and_then(|p| p.poll())
            .or(self.input.force);
        let pressure = pressure_curve(force, self.ui.pressure_gamma);
        self.ui.pressure_now = force.map(|_| pressure);
        pressure
    }

    /// What a finished frame brings back: its figures for the profile, the stroke's samples it
    /// picked (applied in order: a stroke begins, takes its samples, ends) and the point under the
    /// cursor, picked after them.
    fn take_results(&mut self, done: &crate::render::FrameResults) {
        self.ui.profile.take_results(done);
        if done.drew_terrain {
            // The GPU's own time where there are timestamps (a host stall between the frame and
            // its results, a save say, is no cost of the terrain's), else the wall time.
            let gpu_ms = done.gpu_ms("terrain draw") + done.gpu_ms("shade");
            let cost = if gpu_ms > 0.0 {
                std::time::Duration::from_secs_f64(gpu_ms * 1e-3)
            } else {
                done.latency
            };
            self.pacing.drawn(cost);
            let cost = self.pacing.cost().unwrap_or_default();
            self.ui.profile.terrain_cost_ms = cost.as_secs_f64() * 1e3;
        }
        let points: Vec<Option<Vec3>> = done.picked.iter().map(|p| p.1).collect();
        let (resolved, used) = self.stroke_input.picked(done.frame, &points);
        if let Some(&cursor) = points.get(used) {
            self.pick = cursor;
        }
        for r in resolved {
            self.apply_resolved(r);
        }
    }

    /// One event of the stroke input, resolved.
    fn apply_resolved(&mut self, r: Resolved<LiveStroke>) {
        match r {
            Resolved::Begin(stroke) => {
                self.end_stroke();
                self.stroke = Some(stroke);
                self.ramp_anchor = None;
            }
            Resolved::Sample { sample, point } => {
                let Some(stroke) = self.stroke.as_mut() else {
                    return;
                };
                if stroke.samples() == 0 {
                    self.ramp_anchor = Some(point);
                }
                match stroke.add(&mut self.session.doc, &mut self.session.tools, sample) {
                    Ok(n) => self.instances_window.1 += n,
                    Err(e) => {
                        self.ui.message = format!("cannot paint: {e}");
                        self.stroke = None;
                    }
                }
            }
            Resolved::End => self.end_stroke(),
        }
    }

    /// Resolves every stroke event at once: waits for the frames in flight and takes their
    /// results, then picks what no frame has taken yet on the last picture drawn.
    fn drain_stroke_input(&mut self) -> Result<()> {
        if self.stroke_input.is_idle() {
            return Ok(());
        }
        for done in self.renderer.finish_frames()? {
            self.take_results(&done);
        }
        if self.stroke_input.has_queued() {
            let frame = self.renderer.frame_number();
            let pixels = self.stroke_input.send_now(frame);
            let points = match self.presenter.depth.as_ref() {
                Some(depth) => self.renderer.pick_now(depth, &pixels)?,
                None => vec![None; pixels.len()],
            };
            let (resolved, _) = self.stroke_input.picked(frame, &points);
            for r in resolved {
                self.apply_resolved(r);
            }
        }
        Ok(())
    }

    fn end_stroke(&mut self) {
        if let Some(s) = self.stroke.take() {
            match s.finish(&mut self.session.doc, &mut self.session.tools) {
                Ok((step, n)) => {
                    self.instances_window.1 += n;
                    if let Some(step) = step {
                        self.record(step);
                    }
                }
                Err(e) => self.ui.message = format!("cannot paint: {e}"),
            }
        }
    }

    /// Starts the erosion panel's region run (after any stroke); a refusal is shown.
    fn start_erosion(&mut self) {
        if self.replay.is_some() {
            self.ui.message = "cannot erode while a journal replays".into();
            return;
        }
        self.finish_edits();
        let d = *self.session.doc.desc();
        let e = &self.ui.erosion;
        let region = e.region_in(d.width, d.height);
        match RegionRun::start(
            &mut self.session.doc,
            &mut self.session.tools,
            region,
            e.run,
            e.per_frame as usize,
        ) {
            Ok(run) => self.erosion = Some(run),
            Err(err) => self.ui.message = format!("cannot erode: {err}"),
        }
    }

    /// Starts the geology panel's live run (after any stroke or other run); a refusal is shown.
    fn start_geology(&mut self) {
        if self.replay.is_some() {
            self.ui.message = "cannot run geology while a journal replays".into();
            return;
        }
        self.finish_edits();
        let d = *self.session.doc.desc();
        let g = &self.ui.geology;
        let region = match g.in_erosion_region {
            true => self.ui.erosion.region_in(d.width, d.height),
            false => crate::pages::geometry::Region::whole(d.width, d.height),
        };
        let s = &mut self.session;
        match GeologyLive::start(&mut s.doc, &mut s.tools, region, g.asked()) {
            Ok(run) => {
                self.ui.geology.progress = Some(run.progress());
                self.geology = Some(run);
            }
            Err(err) => self.ui.message = format!("cannot run geology: {err}"),
        }
    }

    /// Finishes the live geology run under way, if any, where it is: one undo step, journaled,
    /// and its drainage shown.
    fn end_geology(&mut self) {
        self.ui.geology.progress = None;
        let Some(run) = self.geology.take() else {
            return;
        };
        let region = run.region();
        match run.finish(&mut self.session.doc) {
            Ok(Some((step, out))) => {
                let Step::Geology { run: asked, .. } = &step else {
                    unreachable!("a geology run finishes as a geology step")
                };
                // A run stopped here says so in its text (`stop_after`).
                let line = format!(
                    "geology: {} iterations, {}",
                    out.iterations(),
                    out.text(asked)
                );
                self.ui.message = line.clone();
                self.ui.geology.last = Some(line);
                self.record(step);
                if let Err(e) = self.show_drainage(region, &out.area) {
                    self.ui.message = format!("drainage not shown: {e}");
                }
            }
            Ok(None) => {}
            Err(e) => self.ui.message = format!("geology not finished: {e}"),
        }
    }

    /// The camera's view-projection and the window's size: what places world points on screen.
    fn screen(&self) -> Screen {
        let extent = self.presenter.extent;
        Screen::of(&self.camera, [extent.width, extent.height])
    }

    /// The erosion region's border on the screen while it is being dragged, picked or run: the
    /// rectangle at the height where the drag began (or mid-range), in screen pixels; None when
    /// it is not shown or lies behind the camera.
    fn region_outline(&self) -> Option<Vec<[f32; 2]>> {
        let e = &self.ui.erosion;
        if !(e.picking || self.region_drag.is_some() || self.erosion.is_some()) {
            return None;
        }
        let d = *self.session.doc.desc();
        let r = match self.erosion.as_ref() {
            Some(run) => run.progress().region,
            None if e.region[2] > 0 && e.region[3] > 0 => e.region_in(d.width, d.height),
            None => return None,
        };
        let screen = self.screen();
        let y = self.region_height.unwrap_or_else(|| {
            let (lo, hi) = self.renderer.nodes().range();
            0.5 * (lo + hi) * self.ui.view.vertical_scale
        });
        let (x0, z0) = (r.x as f32, r.y as f32);
        let (x1, z1) = (x0 + r.width as f32, z0 + r.height as f32);
        let corners =
            [[x0, z0], [x1, z0], [x1, z1], [x0, z1], [x0, z0]].map(|[x, z]| Vec3::new(x, y, z));
        screen.polyline(&corners)
    }

    /// A ramp being dragged, on the screen: its centre line from where it started to the cursor
    /// and its edges a brush radius to either side; empty for other strokes.
    fn ramp_outline(&self, screen: &Screen) -> Vec<Vec<[f32; 2]>> {
        match (&self.stroke, self.ramp_anchor, self.pick) {
            (Some(stroke), Some(a), Some(b)) if stroke.brush().brush == BrushType::Ramp => {
                screen::ramp_outline(screen, a, b, stroke.brush().radius)
            }
            _ => Vec::new(),
        }
    }

    /// A click with the path tool: on a control point, drag it (or remove it: `remove`);
    /// elsewhere on the terrain, add one there.
    fn path_press(&mut self, remove: bool) {
        let cursor = self.input.cursor.map(|c| [c[0] as f32, c[1] as f32]);
        let near = cursor.and_then(|c| {
            let vs = self.ui.view.vertical_scale;
            self.ui
                .path
                .points_on_screen(vs, &self.screen())
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let p = (*p)?;
                    let d = (p[0] - c[0]).hypot(p[1] - c[1]);
                    (d <= 10.0).then_some((i, d))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i)
        });
        match (near, remove, self.pick) {
            (Some(i), true, _) => self.ui.path.remove(i),
            (Some(i), false, _) => self.ui.path.dragging = Some(i),
            (None, false, Some(p)) => {
                let vs = self.ui.view.vertical_scale;
                self.ui.path.push([p.x, p.z], p.y / vs);
            }
            _ => {}
        }
    }

    /// Applies the path panel's path (one undo step, journaled) and clears its points.
    fn apply_path(&mut self) {
        let spec = self.ui.path.to_apply();
        if spec.points.len() < 2 {
            self.ui.message = "a path needs two control points or more: click the terrain".into();
            return;
        }
        match self.run_path(spec) {
            Ok(true) => self.ui.path.clear(),
            Ok(false) => {}
            Err(e) => self.ui.message = format!("path not applied: {e:#}"),
        }
    }

    /// Runs `spec` on the document and journals it; a refusal is shown (false).
    fn run_path(&mut self, spec: crate::brush::path::PathSpec) -> Result<bool> {
        self.finish_edits();
        match crate::edit::path::apply(&mut self.session.doc, &mut self.session.tools.path, &spec) {
            Ok(()) => {
                self.record(Step::Path(spec));
                Ok(true)
            }
            Err(crate::brush::error::BrushError::Layer(p)) => {
                self.ui.message = p;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Runs geology over `region` of the base as one step (docs/geology.md); false, with the
    /// reason in the message line, where it is refused (a layer selected, a bad parameter).
    fn run_geology(
        &mut self,
        region: crate::pages::geometry::Region,
        run: crate::geology::params::GeologyRun,
    ) -> Result<bool> {
        self.finish_edits();
        let s = &mut self.session;
        match crate::edit::geology::region(
            &mut s.doc,
            &mut s.tools.geology,
            region,
            &run,
            true,
            |_, _, _| {},
        ) {
            Ok(out) => {
                let line = format!(
                    "geology: {} iterations, {}",
                    out.iterations(),
                    out.text(&run)
                );
                self.ui.message = line.clone();
                self.ui.geology.last = Some(line);
                self.record(Step::Geology { region, run });
                self.show_drainage(region, &out.area)?;
                Ok(true)
            }
            Err(crate::brush::error::BrushError::Layer(p)) => {
                self.ui.message = p;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the drainage areas `area` of `region` into [`geology_ui::DRAINAGE_FIELD`] for the
    /// overlay (the field made at the first run; outside the region it holds 0).
    fn show_drainage(
        &mut self,
        region: crate::pages::geometry::Region,
        area: &[f32],
    ) -> Result<()> {
        let d = *self.session.doc.desc();
        let gpu = self.session.doc.gpu().clone();
        let store = &mut self.session.doc.store;
        if store.field(geology_ui::DRAINAGE_FIELD).is_none() {
            let desc = crate::layers::composite::f32_desc(&d);
            let field = crate::pages::Field::new(&gpu, desc, 0.0)?;
            store.insert_field(geology_ui::DRAINAGE_FIELD, field)?;
        }
        let a0 = (d.texel_size() * d.texel_size()) as f32;
        let shade = crate::maps::flow::drainage_shades(area, a0);
        let field = store
            .field_mut(geology_ui::DRAINAGE_FIELD)
            .expect("made above");
        crate::pages::rects::write(field, region.rect(), &shade, false)?;
        Ok(())
    }

    /// Writes what the next run starts with (the window's size, the brush) to the config
    /// folder; says so on stderr when it cannot.
    fn remember(&self) {
        let Some(dir) = &self.config else {
            return;
        };
        let size = self
            .window
            .inner_size()
            .to_logical::<f64>(self.window.scale_factor());
        let window = [size.width.round() as u32, size.height.round() as u32];
        let r = Remembered::of(window, &self.ui.brush, &self.ui.browse_dir, self.help_seen);
        if let Err(e) = r.save(dir) {
            eprintln!("scarp: settings not remembered: {e}");
        }
    }

    /// Ends every edit under way before another step: the live stroke, the region run and the
    /// geology run, each one undo step, journaled.
    fn finish_edits(&mut self) {
        if let Err(e) = self.drain_stroke_input() {
            self.ui.message = format!("stroke samples lost: {e:#}");
        }
        self.stroking = false;
        self.end_stroke();
        self.end_erosion();
        self.end_geology();
    }

    /// Finishes the region run under way, if any: one undo step, journaled.
    fn end_erosion(&mut self) {
        if let Some(run) = self.erosion.take() {
            match run.finish(&mut self.session.doc) {
                Ok(Some(step)) => self.record(step),
                Ok(None) => {}
                Err(e) => self.ui.message = format!("erosion not finished: {e}"),
            }
        }
        self.ui.erosion.progress = None;
    }

    /// Records a step the document took; says so when it could not be journaled.
    fn record(&mut self, step: Step) {
        if let Err(e) = self.session.record(step) {
            self.ui.message = format!("recovery journal not written: {e}");
        }
    }

    /// Makes `session` the open document: its memory budgets, renderer and lighting are made
    /// before the old session is let go (with its untitled journal when `drop_untitled`); a
    /// replay and the path's points are reset, the view is scaled to the document and framed.
    fn adopt(
        &mut self,
        mut session: Session,
        drop_untitled: bool,
    ) -> Result<crate::pages::DocumentDesc> {
        let budgets = self.memory.budgets(&self.gpu, session.project());
        session.doc.set_budgets(budgets);
        let desc = *session.doc.desc();
        // The sea as the saved view sets it, else as it is now.
        let sea = session
            .view()
            .map_or(self.ui.view.sea_level.is_some(), |v| v.sea_level.is_some());
        let renderer = renderer_for(&self.gpu, &mut session, self.presenter.format, sea)?;
        let lighting = Lighting::new(&self.gpu, desc.format)?;
        self.renderer = renderer;
        self.lighting = lighting;
        // The map overlay is made again for the new document (its format, its store).
        self.field_map = Default::default();
        self.replay = None;
        self.ui.path.clear();
        if drop_untitled && self.session.untitled_with_changes() {
            self.session.discard_untitled();
        }
        let before = (*self.session.doc.desc(), self.ui.view.altitude_range);
        self.session = session;
        let side = desc.width.max(desc.height) as f32;
        self.ui.view.vertical_scale = desc.vertical_scale();
        self.ui.view.max_triangles_per_pixel =
            crate::render::terrain::default_triangles_per_pixel(&desc);
        let range = altitude_range(&desc, &self.renderer);
        self.ui.view.altitude_range = Some(range);
        // The look carries over; a preset as the last document took it is taken as this one
        // takes it (its snow line anchored anew), materials of the user's own stay as they are.
        if let (Some(look), (old_desc, Some(old_range))) = (&mut self.ui.view.look, before) {
            let preset = crate::render::look::PRESETS
                .iter()
                .find(|(_, m)| m.on_document(&old_desc, old_range) == look.materials);
            if let Some((_, m)) = preset {
                look.materials = m.on_document(&desc, range);
            }
        }
        self.ui.view.fog = 0.05 / side;
        self.ui.map_view = false;
        self.map_return = None;
        self.frame_all();
        if let Some(saved) = self.session.view() {
            self.camera = take_saved_view(saved, &mut self.ui);
        }
        Ok(desc)
    }

    /// Does what the file browser picked `path` for; returns what to tell the user.
    fn file_chosen(&mut self, purpose: Purpose, path: &Path) -> Result<String> {
        let shown = path.display();
        match purpose {
            Purpose::Stamp => {
                let stamp = Arc::new(
                    crate::brush::stamp::Stamp::load(path, None).map_err(anyhow::Error::msg)?,
                );
                self.load_stamps();
                if let Some(library) = &mut self.stamps {
                    library.add(&self.gpu, stamp.clone(), &mut self.imgui_renderer)?;
                }
                self.ui.brush.brush = BrushType::Stamp;
                self.ui.brush.stamp = Some(stamp.clone());
                // Choosing a stamp is choosing to paint: the path tool gives the clicks back.
                self.ui.path.active = false;
                Ok(format!(
                    "stamp {} ({}x{})",
                    shown, stamp.width, stamp.height
                ))
            }
            Purpose::Open => self.open_document(path),
            Purpose::ImportLayer => {
                let stem = path
                    .file_stem()
                    .map_or_else(|| "imported".into(), |s| s.to_string_lossy().into_owned());
                let stack = self.session.doc.layers();
                let name = (1..)
                    .map(|i| {
                        if i == 1 {
                            stem.clone()
                        } else {
                            format!("{stem} {i}")
                        }
                    })
                    .find(|n| stack.index_of(n).is_none() && n != crate::layers::BASE)
                    .expect("a free name");
                self.layer_op(crate::layers::LayerOp::Add {
                    name: name.clone(),
                    mode: crate::layers::Mode::Replace,
                    opacity: 1.0,
                    files: crate::layers::LayerFiles {
                        value: Some(path.display().to_string()),
                        ..Default::default()
                    },
                })?;
                Ok(format!("imported {shown} as the layer '{name}' (replace)"))
            }
            Purpose::ExportHeights => self.export_heights(path),
            Purpose::SaveProject => {
                self.save_project(&path.display().to_string())?;
                self.exit_requested |= self.close_after_save;
                Ok(self.ui.message.clone())
            }
            Purpose::SaveJournal => {
                self.finish_edits();
                self.session.save_journal_as(path)?;
                Ok(format!(
                    "saved {} steps to {shown}",
                    self.session.steps().len()
                ))
            }
            Purpose::Screenshot => {
                crate::terrain::export::check_writable(path).map_err(anyhow::Error::msg)?;
                self.screenshot = Some(path.to_path_buf());
                Ok(format!("screenshot to {shown} once the frame is drawn"))
            }
        }
    }

    /// Writes the whole document (the layers' composite) for `engine` to files named after
    /// `path` without its extension (docs/engines.md), the weight maps by the look's materials
    /// (what the viewport shows; the default materials where the look is off), and the maps the
    /// dialog ticks; read from the pages a window at a time.
    fn export_for_engine(
        &mut self,
        path: &Path,
        engine: crate::terrain::engines::Engine,
    ) -> Result<String> {
        use crate::terrain::engines::{export, Request};
        let d = *self.session.doc.desc();
        let materials = self.ui.view.look.map(|l| l.materials).unwrap_or_default();
        let req = Request {
            engine,
            fit: self.ui.export.fit,
            resolution: None,
            maps: self.ui.export.map_kinds(),
            tiles: None,
        };
        let mut kernels = crate::maps::kernels::OnGpu::new(&self.gpu)?;
        let out = path.with_extension("");
        let written = export(
            &mut self.session.doc,
            &d,
            req,
            &materials,
            &out,
            &mut kernels,
            &mut |_, _| {},
        )?;
        Ok(format!(
            "exported for {}: {} files and {} (what to enter in the engine)",
            engine.name(),
            written.files.len(),
            written.note.display()
        ))
    }

    /// Writes a glTF mesh of the export's region (the layers' composite) to `path` as `.glb`,
    /// within `bound` metres of the heights (docs/engines.md, "A mesh").
    fn export_mesh(&mut self, path: &Path, bound: f64) -> Result<String> {
        let d = *self.session.doc.desc();
        let region = ui::export_area(&self.ui.export, [d.width, d.height]);
        crate::pages::geometry::check_region(d.width, d.height, region)
            .map_err(|e| anyhow::anyhow!("region: {e}"))?;
        self.session.doc.pump(None)?;
        let (around, inner) = region.apron([d.width, d.height]);
        let values = rects::read(self.session.doc.height(), around.rect())?;
        let grid = crate::mesh::Grid {
            values: &values,
            width: around.width,
            height: around.height,
            origin: [around.x, around.y],
        };
        let m = crate::mesh::build(grid, inner, &d, bound)?;
        let path = path.with_extension("glb");
        let name = path.file_stem().unwrap_or_default().to_string_lossy();
        crate::mesh::gltf::write(&m, &name, &path)?;
        Ok(format!(
            "exported a mesh of {}x{} texels to {}: {} triangles, within {:.3} m of the heights",
            region.width,
            region.height,
            path.display(),
            m.triangles(),
            m.max_error_m
        ))
    }

    /// Writes the document's heights (the layers' composite) to `path` in the format its
    /// extension names: the region and tiles of the last export's options, a region at a time
    /// from the pages.
    fn export_heights(&mut self, path: &Path) -> Result<String> {
        use crate::terrain::formats;
        self.finish_edits();
        if let Some(engine) = self.ui.export.engine {
            return self.export_for_engine(path, engine);
        }
        if let Some(bound) = self.ui.export.mesh {
            return self.export_mesh(path, f64::from(bound));
        }
        let d = *self.session.doc.desc();
        let options = self.ui.export;
        let (area, parts) =
            ui::export_plan(path, &options, [d.width, d.height]).map_err(anyhow::Error::msg)?;
        self.session.doc.pump(None)?;
        // Integer tiles share the range of the whole area (a first pass over the parts, a
        // region at a time), so a height is one value in every tile.
        let range = match options.tiles {
            Some(_) => {
                let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                for (_, r) in &parts {
                    let (l, h) =
                        formats::min_max(&rects::read(self.session.doc.height(), r.rect())?);
                    (lo, hi) = (lo.min(l), hi.max(h));
                }
                Some(formats::default_range(&[lo, hi]))
            }
            None => None,
        };
        // A failed part removes the parts written before it.
        let height = self.session.doc.height();
        let mut written = None;
        crate::terrain::export::write_all(&parts, |p, r| -> Result<()> {
            let grid = formats::Heights {
                width: r.width,
                height: r.height,
                values: rects::read(height, r.rect())?,
            };
            let write = formats::WriteOptions {
                range,
                ..Default::default()
            };
            let report = crate::terrain::export::write_with_sidecar(
                p,
                &grid,
                &d,
                (r.x, r.y),
                &write,
                &mut |_, _| {},
            )?;
            let (lo, hi) = report
                .range
                .unwrap_or_else(|| formats::min_max(&grid.values));
            written = Some(written.map_or((lo, hi), |(l, h): (f32, f32)| (l.min(lo), h.max(hi))));
            Ok(())
        })?;
        let (lo, hi) = written.unwrap_or_default();
        Ok(format!(
            "exported {}x{} heights to {}{}, {} to {} m (sidecar .json beside)",
            area.width,
            area.height,
            path.display(),
            match options.tiles {
                Some((c, r)) => format!(" as {c}x{r} tiles"),
                None => String::new(),
            },
            d.metres(lo).round(),
            d.metres(hi).round(),
        ))
    }

    /// Replaces the open document with `path` (a project, journal or height file) and frames
    /// it. Refused once while the open one has unsaved steps (asked again: they are dropped).
    fn open_document(&mut self, path: &Path) -> Result<String> {
        self.finish_edits();
        let unsaved = self.session.unsaved_steps();
        let armed = (path.to_path_buf(), self.session.steps().len());
        if unsaved > 0 && self.discard_armed.as_ref() != Some(&armed) {
            self.discard_armed = Some(armed);
            return Ok(format!(
                "{unsaved} step(s) are not saved: save the project or journal first, or open \
                 {} again to drop them",
                path.display()
            ));
        }
        self.discard_armed = None;
        let tables = NoiseTables::new(self.table_seed);
        // Reopening the project this session holds: the new session takes its write lock.
        let same = |p: &Path| p.canonicalize().ok() == path.canonicalize().ok();
        let reopening = self.session.project().is_some_and(same);
        if reopening {
            self.session.release_lock();
        }
        let (session, _, offer) = match Session::open(&self.gpu, path, &tables, false) {
            Ok(opened) => opened,
            Err(e) => {
                if reopening {
                    self.session.relock()?;
                }
                // A damaged newest save (that refusal, not another): the user is asked whether
                // to open the older one; the unsaved steps' drop stays agreed.
                if let Some(damage) = e.older_save_offer() {
                    self.ui.damaged_save = Some((path.to_path_buf(), damage));
                    self.discard_armed = Some(armed);
                    return Ok(format!("{}: the newest save is damaged", path.display()));
                }
                return Err(e.into());
            }
        };
        // The untitled journal of the session left behind is dropped with its steps.
        let desc = self.adopt(session, true)?;
        self.source = path.to_path_buf();
        self.ui.recovery = offer;
        if let Some(p) = self.session.project() {
            self.ui.project_path = p.display().to_string();
        }
        Ok(format!(
            "opened {} ({}x{})",
            path.display(),
            desc.width,
            desc.height
        ))
    }

    /// Loads the stamp library the first time the stamp brush is chosen; takes its first stamp
    /// when the brush has none.
    fn load_stamps(&mut self) {
        if self.stamps.is_none() {
            let dir = asset_path(stamp_library::LIBRARY_DIR);
            match stamp_library::StampLibrary::load(&self.gpu, &dir, &mut self.imgui_renderer) {
                Ok((library, problems)) => {
                    if !problems.is_empty() {
                        self.ui.message = format!("stamps skipped: {}", problems.join("; "));
                    }
                    self.stamps = Some(library);
                }
                Err(e) => {
                    self.ui.message = format!("no stamp library: {e:#}");
                    self.stamps = Some(Default::default());
                }
            }
        }
        let Some(library) = &self.stamps else {
            return;
        };
        if self.ui.brush.stamp.is_none() {
            self.ui.brush.stamp = library.entries.first().map(|e| e.stamp.clone());
        }
        // The library only grows (a stamp opened from a file is added to it).
        if self.ui.stamps.len() != library.entries.len() {
            self.ui.stamps = library
                .entries
                .iter()
                .map(|e| (e.name.clone(), e.texture.id))
                .collect();
        }
        self.ui.stamp_index = self
            .ui
            .brush
            .stamp
            .as_deref()
            .and_then(|s| library.index_of(s));
    }

    fn save_project(&mut self, path: &str) -> Result<()> {
        self.finish_edits();
        let path = PathBuf::from(path);
        let current = preset(&self.ui.brush).map_err(anyhow::Error::msg)?;
        // In the map view, the 3D camera it will go back to is what is kept.
        let camera = self.map_return.map_or(self.camera, |(c, _)| c);
        let mut view = SavedView::of(&camera, &self.ui.view);
        view.map_view = self.ui.map_view;
        self.session.set_view(view);
        let r = self.session.save_project(&path, current)?;
        self.ui.message = format!(
            "saved {} ({} pages; {} written, {:.1} MiB{})",
            path.display(),
            r.pages,
            r.pages_written,
            r.bytes_written as f64 / (1u64 << 20) as f64,
            if r.incremental { ", incremental" } else { "" }
        );
        Ok(())
    }

    fn undo(&mut self) -> Result<()> {
        self.finish_edits();
        if self.session.doc.undo()? {
            self.record(Step::Undo(1));
        } else {
            self.ui.message = "nothing to undo".into();
        }
        Ok(())
    }

    /// Runs a layer step (the layers panel, a replayed journal) and records it; a step the
    /// stack refuses is shown, not run.
    fn layer_op(&mut self, op: crate::layers::LayerOp) -> Result<()> {
        self.finish_edits();
        match self.session.doc.layer_op(&op, std::path::Path::new(".")) {
            Ok(()) => self.record(Step::Layer(op)),
            Err(crate::brush::error::BrushError::Layer(problem)) => self.ui.message = problem,
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// Undoes or redoes until the History panel's entry `i` is the newest step in force (an
    /// entry past them: redone up to it). Stops, saying so, where the document cannot go on.
    fn go_to_history(&mut self, i: usize) -> Result<()> {
        let done = crate::journal::History::of(self.session.steps()).done.len();
        let (undo, redo) = if i < done {
            (done - 1 - i, 0)
        } else {
            (0, i + 1 - done)
        };
        for _ in 0..undo {
            self.undo()?;
        }
        for _ in 0..redo {
            self.redo()?;
        }
        Ok(())
    }

    fn redo(&mut self) -> Result<()> {
        self.finish_edits();
        if self.session.doc.redo()? {
            self.record(Step::Redo(1));
        } else {
            self.ui.message = "nothing to redo".into();
        }
        Ok(())
    }

    /// Feeds the journal being replayed: a few samples per frame through the painting path.
    fn feed_replay(&mut self) -> Result<()> {
        let Some(mut r) = self.replay.take() else {
            return Ok(());
        };
        let mut budget = REPLAY_SAMPLES_PER_FRAME;
        while budget > 0 && r.step < r.steps.len() {
            match &r.steps[r.step] {
                Step::Stroke { brush, samples, .. } => {
                    if r.sample == 0 {
                        self.finish_edits();
                        self.stroke = Some(LiveStroke::new(brush.clone()));
                    }
                    while budget > 0 && r.sample < samples.len() {
                        let s = samples[r.sample];
                        if let Some(stroke) = self.stroke.as_mut() {
                            self.instances_window.1 +=
                                stroke.add(&mut self.session.doc, &mut self.session.tools, s)?;
                        }
                        r.sample += 1;
                        budget -= 1;
                    }
                    if r.sample == samples.len() {
                        self.end_stroke();
                        r.step += 1;
                        r.sample = 0;
                    }
                }
                Step::Undo(n) => {
                    for _ in 0..*n {
                        self.undo()?;
                    }
                    r.step += 1;
                }
                Step::Redo(n) => {
                    for _ in 0..*n {
                        self.redo()?;
                    }
                    r.step += 1;
                }
                Step::Layer(op) => {
                    self.layer_op(op.clone())?;
                    r.step += 1;
                }
                Step::Path(spec) => {
                    // A step skipped would make the later undo and redo steps act on others.
                    if !self.run_path(spec.clone())? {
                        bail!(
                            "replay: step {} (path) refused: {}",
                            r.step,
                            self.ui.message
                        );
                    }
                    r.step += 1;
                }
                Step::Geology { region, run } => {
                    if !self.run_geology(*region, *run)? {
                        bail!(
                            "replay: step {} (geology) refused: {}",
                            r.step,
                            self.ui.message
                        );
                    }
                    r.step += 1;
                }
                Step::Erode { region, erosion } => {
                    self.finish_edits();
                    let s = &mut self.session;
                    let target = &mut crate::edit::Target::new(&mut s.doc, &mut s.tools);
                    match crate::journal::Replayer::erode(target, *region, erosion) {
                        Ok(()) => self.record(Step::Erode {
                            region: *region,
                            erosion: *erosion,
                        }),
                        Err(crate::brush::error::BrushError::Layer(p)) => self.ui.message = p,
                        Err(e) => return Err(e.into()),
                    }
                    r.step += 1;
                }
            }
        }
        if r.step < r.steps.len() {
            self.replay = Some(r);
        }
        Ok(())
    }

    fn handle_actions(&mut self) -> Result<()> {
        for action in std::mem::take(&mut self.ui.actions) {
            match action {
                UiAction::Undo => self.undo()?,
                UiAction::Layer(op) => self.layer_op(op)?,
                UiAction::Solo(on) => {
                    self.end_stroke();
                    self.session.doc.set_solo(on)?;
                }
                UiAction::Redo => self.redo()?,
                UiAction::FrameAll => self.frame_all(),
                UiAction::ErodeStart => self.start_erosion(),
                UiAction::ErodePause(paused) => {
                    if let Some(run) = &mut self.erosion {
                        run.set_paused(paused);
                    }
                }
                UiAction::ErodeFinish => self.end_erosion(),
                UiAction::GeologyPause(paused) => {
                    if let Some(run) = &mut self.geology {
                        run.set_paused(paused);
                    }
                }
                UiAction::GeologyStop => self.end_geology(),
                UiAction::GeologyCancel => {
                    if let Some(run) = self.geology.take() {
                        if let Err(e) = run.cancel(&mut self.session.doc) {
                            self.ui.message = format!("geology not cancelled: {e}");
                        }
                    }
                    self.ui.geology.progress = None;
                }
                UiAction::ToggleTrace => self.ui.message = toggle_trace(&self.gpu),
                UiAction::CaptureFrame => self.ui.message = self.capture.trigger(),
                UiAction::SavePreset(name) => {
                    self.ui.message = match save_preset(&name, &self.ui.brush) {
                        Ok(p) => format!("saved {}", p.display()),
                        Err(e) => format!("preset not saved: {e}"),
                    };
                    self.ui.presets = list_presets();
                }
                UiAction::LoadPreset(name) => {
                    let path = asset_path(PRESET_DIR).join(format!("{name}.json"));
                    let loaded = crate::atomic_file::read_regular_to_string(&path)
                        .map_err(|e| e.to_string())
                        .and_then(|t| {
                            parse_brush(&t, path.parent().unwrap_or(Path::new(".")))
                                .map_err(|e| e.to_string())
                        });
                    self.ui.message = match loaded {
                        Ok(b) => {
                            self.ui.brush = b;
                            format!("loaded {}", path.display())
                        }
                        Err(e) => format!("{}: {e}", path.display()),
                    };
                }
                UiAction::Close(choice) => self.close_answered(choice),
                UiAction::History(i) => self.go_to_history(i)?,
                UiAction::SeaAtLowGround => {
                    let level = self.session.doc.store.height_mut().coarse()?;
                    if let Some(minima) = level.map(|l| l.read()).transpose()? {
                        let mut minima: Vec<f32> = minima.iter().map(|t| t[0]).collect();
                        if let Some(h) = low_ground(&mut minima) {
                            self.ui.view.sea_level = Some(h);
                        }
                    }
                }
                UiAction::OpenOlderSave => {
                    if let Some((path, _)) = self.ui.damaged_save.take() {
                        let opened = project::with_older_accepted(|| self.open_document(&path));
                        let now_open = self.session.project().is_some_and(|p| p == path);
                        self.ui.message = match opened {
                            Ok(m) if now_open => {
                                format!("{m}: its older save (the newest was damaged)")
                            }
                            Ok(m) => m,
                            Err(e) => format!("{}: {e:#}", path.display()),
                        };
                    }
                }
                UiAction::SaveProject(path) => {
                    if let Err(e) = self.save_project(&path) {
                        self.ui.message = format!("project not saved: {e:#}");
                    }
                }
                UiAction::Recover => {
                    self.finish_edits();
                    self.ui.recovery = None;
                    self.ui.message = match self.session.recover() {
                        Ok(r) => r.to_string(),
                        Err(e) => format!("recovery failed: {e:#}"),
                    };
                }
                UiAction::DiscardRecovery => {
                    self.ui.recovery = None;
                    self.session.discard_recovery();
                }
                UiAction::RecoverUntitled => {
                    if let Some((path, _)) = self.ui.untitled_recovery.take() {
                        self.finish_edits();
                        let tables = NoiseTables::new(self.table_seed);
                        let recovered = (|| -> Result<session::Recovered> {
                            let (session, r) =
                                Session::recover_untitled(&self.gpu, &path, &tables)?;
                            self.adopt(session, false)?;
                            Ok(r)
                        })();
                        self.ui.message = match recovered {
                            Ok(r) => format!("{r} from {}", path.display()),
                            Err(e) => format!("recovery failed: {e:#}"),
                        };
                    }
                }
                UiAction::DiscardUntitled => {
                    if let Some((path, _)) = self.ui.untitled_recovery.take() {
                        let _ = std::fs::remove_file(path);
                    }
                }
                UiAction::Chosen(purpose, path) => {
                    self.ui.message = match self.file_chosen(purpose, &path) {
                        Ok(done) => done,
                        Err(e) => format!("{}: {e:#}", path.display()),
                    };
                }
                UiAction::PathApply => self.apply_path(),
                UiAction::Geology => self.start_geology(),
                UiAction::PickStamp(i) => {
                    if let Some(e) = self.stamps.as_ref().and_then(|l| l.entries.get(i)) {
                        self.ui.brush.stamp = Some(e.stamp.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// One frame: the results of the frame two back (the GPU drew it while the host went on),
    /// input, brush work under the GPU budget, the renderer catching up, panels, the drawing
    /// (tile bounds, terrain, imgui, coverage and pick in one submission, not waited for).
    fn frame(&mut self) -> Result<Flow> {
        let _frame = crate::profile::scope("frame");
        let now = Instant::now();
        if let Some(done) = self.renderer.begin_frame()? {
            self.take_results(&done);
        }
        let dt = (now - self.last_frame).as_secs_f32().min(0.1);
        self.last_frame = now;
        self.imgui
            .io_mut()
            .update_delta_time(std::time::Duration::from_secs_f32(dt.max(1e-4)));
        self.follow_map_view();
        let ui_keys = self.imgui.io().want_capture_keyboard;
        self.input.steer(&mut self.camera, self.ui.fly, ui_keys, dt);
        let report = self.paint_and_pump()?;
        let water = self.erosion.is_some() && self.ui.erosion.show_water;
        let mask = self
            .ui
            .layers
            .overlay(self.session.doc.layers(), self.ui.brush.brush);
        let drainage = self.ui.geology.show_drainage
            && self
                .session
                .doc
                .store
                .field(geology_ui::DRAINAGE_FIELD)
                .is_some();
        let uplift = self.session.doc.layers().paints_uplift()
            && self
                .session
                .doc
                .store
                .field(crate::geology::UPLIFT_FIELD)
                .is_some();
        let map = match self
            .field_map
            .update(self.ui.field_map, &mut self.session.doc, now)
        {
            Ok(m) => m,
            Err(e) => {
                self.ui.field_map = None;
                self.ui.message = e;
                None
            }
        };
        let overlay = match (water, &mask) {
            (true, _) => Some((WATER_FIELD, Overlay::Water)),
            (false, _) if map.is_some() => map,
            (false, _) if uplift => Some((crate::geology::UPLIFT_FIELD, Overlay::Uplift)),
            (false, Some(m)) => Some((m.as_str(), Overlay::Mask)),
            (false, None) if drainage => Some((geology_ui::DRAINAGE_FIELD, Overlay::Water)),
            (false, None) => None,
        };
        self.renderer.set_overlay(overlay);
        self.relight()?;
        self.update_panels(&report);
        // The panels' actions (a layer step, opening a document, a recovery) change the store:
        // the renderer catches up with them before it records (a new composite field has no
        // coarse level until then).
        self.build_ui()?;
        if self.exit_requested {
            let _ = self.imgui.render();
            return Ok(Flow::Exit);
        }
        // The browser closed without a save: closing was given up.
        self.close_after_save &= self.ui.browser.is_some();
        self.renderer.refresh(&mut self.session.doc.store)?;
        let Some((index, acquired)) = self.presenter.acquire()? else {
            let s = self.window.inner_size();
            self.recreate_presenter([s.width, s.height])?;
            let _ = self.imgui.render();
            return Ok(Flow::Continue);
        };
        let shot = self.draw(index, acquired)?;
        if !self.presenter.present(index)? {
            let s = self.window.inner_size();
            self.recreate_presenter([s.width, s.height])?;
        }
        self.frames += 1;
        // Once a frame is up (the first call only): turning the sea or rivers on later then
        // need not wait for a compile, even on a first run (docs/render.md, "Two shading
        // kernels"). A kernel that cannot start now is started by the frame that needs it.
        if let Err(e) = self.renderer.start_shading_kernels() {
            self.ui.message = format!("shading not compiled ahead (tried again when needed): {e}");
        }
        let drew = self.pacing.drew_last();
        self.ui
            .profile
            .push_frame(now.elapsed().as_secs_f32() * 1e3, drew);
        if self.probe.is_some() {
            let probe = self.probe_now(drew);
            if let Some(Err(e)) = self.probe.as_mut().map(|log| log.write(&probe)) {
                // A script's aid, not the user's work: it stops, the session goes on.
                self.ui.message = format!("{e:#}; the interface state is no longer written");
                self.probe = None;
            }
        }
        if let Some(size) = shot {
            // The screenshot's frame is waited for (and the one before it).
            for done in self.renderer.finish_frames()? {
                self.take_results(&done);
            }
            let path = self.screenshot.take().expect("a screenshot was due");
            let buffer = self.shot_buffer.take().expect("made with the frame");
            let format = self.presenter.format;
            save_screenshot(&path, &buffer, size, format, &self.ui.overflow)?;
        }
        // Pages the view wants and lacks come in between frames, a bounded amount each.
        serve_requests(
            &self.renderer,
            &mut self.session.doc.store,
            PAGE_INS_PER_FRAME,
        )?;
        let scripted_done = self.replay.is_none() && self.idle_since.is_some();
        if self.quit && self.screenshot.is_none() && scripted_done {
            return Ok(Flow::Exit);
        }
        Ok(Flow::Continue)
    }

    /// What `--ui-state` writes of the frame just presented.
    fn probe_now(&self, terrain_drawn: bool) -> ui_probe::UiProbe {
        let io = self.imgui.io();
        let ui = &self.ui;
        ui_probe::UiProbe {
            frame: self.frames,
            pointer: io.mouse_pos,
            button: io.mouse_down[0],
            over_panel: io.want_capture_mouse,
            over_widget: self.over_widget,
            terrain_drawn,
            help: ui.show_help,
            panel: ui.accordion.open_panel(),
            brush: ui.brush.brush.name(),
            path_tool: ui.path.active,
            path_points: ui.path.spec.points.len(),
            path_water: ui.path.spec.water,
            erosion_picking: ui.erosion.picking,
            erosion_region: ui.erosion.region,
            erosion_running: self.erosion.is_some(),
            browser: ui.browser.as_ref().map(|b| b.purpose.title()),
            closing: ui.closing.is_some(),
            sea: ui.view.sea_level.is_some(),
            layers: ui.layers.stack.layers.len(),
            steps: self.session.steps().len(),
            message: ui.message.clone(),
            camera_target: self.camera.target.to_array(),
        }
    }

    /// A close asked for (the window's close button, Ctrl+Q): at once when every step is saved,
    /// else the close panel asks; asked again while it shows, Scarp closes without saving.
    fn close_requested(&mut self) {
        self.finish_edits();
        let unsaved = self.session.unsaved_steps();
        match (unsaved, self.ui.closing) {
            (0, _) => self.exit_requested = true,
            (_, Some(_)) => self.close_answered(CloseChoice::Discard),
            (n, None) => self.ui.closing = Some(n),
        }
    }

    /// The close panel's answer.
    fn close_answered(&mut self, choice: CloseChoice) {
        self.ui.closing = None;
        match choice {
            CloseChoice::Cancel => {}
            CloseChoice::Discard => {
                self.session.discard_unsaved();
                self.exit_requested = true;
            }
            CloseChoice::Save if self.ui.has_project => {
                let path = self.ui.project_path.clone();
                match self.save_project(&path) {
                    Ok(()) => self.exit_requested = true,
                    Err(e) => self.ui.message = format!("not closed: project not saved: {e:#}"),
                }
            }
            CloseChoice::Save => {
                // Closes once the project chosen in the browser is saved.
                self.close_after_save = true;
                self.ui.browse(Purpose::SaveProject);
            }
        }
    }

    /// Painting: the replay's samples (live strokes take theirs from the frames' results), then
    /// the queued brush work under the GPU budget.
    fn paint_and_pump(&mut self) -> Result<crate::brush::gpu::PumpReport> {
        self.feed_replay()?;
        self.pressure_now();
        if let (Some(a), Some(p)) = (self.region_drag, self.pick) {
            self.ui.erosion.set_corners(a, [p.x, p.z]);
        }
        if let (Some(i), Some(p)) = (self.ui.path.dragging, self.pick) {
            let d = *self.session.doc.desc();
            let vs = self.ui.view.vertical_scale;
            let path = &mut self.ui.path;
            if i < path.spec.points.len() {
                path.spec.points[i] = [
                    p.x.clamp(0.0, d.width as f32),
                    p.z.clamp(0.0, d.height as f32),
                ];
                path.heights[i] = p.y / vs;
            }
        }
        // Frames are in flight: the brush work is not waited for either.
        self.session.doc.set_frames_in_flight(true);
        if let Some(run) = &mut self.erosion {
            run.set_max_per_frame(self.ui.erosion.per_frame.max(1) as usize);
            run.advance(&mut self.session.doc, f64::from(self.ui.budget_ms))?;
            self.ui.erosion.progress = Some(run.progress());
            if run.complete() {
                self.end_erosion();
            }
        }
        if let Some(run) = &mut self.geology {
            run.advance(&mut self.session.doc, f64::from(self.ui.budget_ms))?;
            self.ui.geology.progress = Some(run.progress());
            if run.complete() {
                self.end_geology();
            }
        }
        Ok(self.session.doc.pump(Some(f64::from(self.ui.budget_ms)))?)
    }

    /// The document and profiler figures the panels show.
    fn update_panels(&mut self, report: &crate::brush::gpu::PumpReport) {
        let (lo, hi) = self.renderer.nodes().range();
        let doc = &self.session.doc;
        self.ui.doc = Some(DocInfo {
            desc: *doc.desc(),
            source: self
                .source
                .file_name()
                .map_or_else(|| "document".into(), |n| n.to_string_lossy().into_owned()),
            pages: doc.height().versions().count(),
            page_bytes: doc.height().versions().bytes(),
            undo_steps: doc.undo_steps(),
            undo_bytes: doc.undo_bytes(),
            height_lo: lo,
            height_hi: hi,
            device: format!("{}", self.gpu.info()),
            cursor: self
                .pick
                .map(|p| [p.x, p.z, p.y / self.ui.view.vertical_scale]),
        });
        self.ui.has_project = self.session.project().is_some();
        if let Some(p) = self.session.project() {
            self.ui.project_path = p.display().to_string();
        }
        if self.ui.layers.stack != *doc.layers() {
            self.ui.layers.stack = doc.layers().clone();
            self.ui.geology.paints_uplift = doc.layers().paints_uplift();
        }
        if self.ui.history.1 != self.session.steps().len() {
            let steps = self.session.steps();
            let h = crate::journal::History::of(steps);
            let label = |&i: &usize| steps[i].label();
            let list = (h.done.iter().map(|i| (label(i), true)))
                .chain(h.undone.iter().map(|i| (label(i), false)))
                .collect();
            self.ui.history = (list, steps.len());
        }
        self.ui.profile.brush_gpu_ms = report.gpu_ns * 1e-6;
        self.ui.profile.copy_gpu_ms = report.copy_ns * 1e-6;
        self.ui.profile.queue_len = doc.brushes.pending_strokes();
        let (since, n) = self.instances_window;
        let secs = since.elapsed().as_secs_f64();
        let memory = doc.memory();
        if secs >= 1.0 {
            self.ui.profile.instances_per_s = n as f64 / secs;
            self.instances_window = (Instant::now(), 0);
            let before = self.ui.profile.memory.traffic;
            let now = memory.traffic;
            // Saturating: the counters start again when the height field is replaced (the
            // first layer makes it the composite).
            self.ui.profile.pages_per_s = (
                now.page_ins.saturating_sub(before.page_ins) as f64 / secs,
                now.page_outs.saturating_sub(before.page_outs) as f64 / secs,
            );
            self.ui.profile.memory = memory;
        } else {
            // Keep the traffic of the window's start for the rates; the places are current.
            let traffic = self.ui.profile.memory.traffic;
            self.ui.profile.memory = MemoryReport { traffic, ..memory };
        }
    }

    /// Builds the panels, acts on what the user asked for, applies a vsync change.
    fn build_ui(&mut self) -> Result<()> {
        self.platform
            .prepare_frame(self.imgui.io_mut(), &self.window)
            .map_err(|e| anyhow!("imgui: {e}"))?;
        let vsync_before = self.ui.vsync;
        if self.ui.brush.brush == BrushType::Stamp {
            self.load_stamps();
        }
        {
            let b = &self.ui.brush;
            self.ui.noise_preview = matches!(b.brush, BrushType::Noise | BrushType::Directional)
                .then(|| {
                    self.noise_preview
                        .texture_for(&b.noise, 2.0 * b.radius)
                        .map_err(|e| format!("{e:#}"))
                });
            let (screen, vs) = (self.screen(), self.ui.view.vertical_scale);
            let outlines: Vec<_> = self
                .region_outline()
                .into_iter()
                .chain(self.ramp_outline(&screen))
                .chain(self.ui.path.outline(vs, &screen))
                .collect();
            let path_points = self.ui.path.points_on_screen(vs, &screen);
            let frame_ui = self.imgui.new_frame();
            ui::build(frame_ui, &mut self.ui);
            self.over_widget = frame_ui.is_any_item_hovered();
            let list = frame_ui.get_background_draw_list();
            for outline in outlines {
                list.add_polyline(outline, [1.0, 0.85, 0.2, 1.0])
                    .thickness(2.0)
                    .build();
            }
            for p in path_points.into_iter().flatten() {
                list.add_circle(p, 6.0, [1.0, 0.5, 0.1, 1.0])
                    .filled(true)
                    .build();
            }
            self.platform.prepare_render(frame_ui, &self.window);
        }
        self.handle_actions()?;
        if self.ui.vsync != vsync_before {
            self.presenter.vsync = self.ui.vsync;
            let s = self.window.inner_size();
            self.recreate_presenter([s.width, s.height])?;
        }
        Ok(())
    }

    /// Draws swapchain image `index` (acquired with semaphore `acquired`): the shared frame
    /// recording (tile bounds, terrain, coverage, pick) with imgui as its overlay and the
    /// screenshot copy when one is due, submitted without waiting. Returns the screenshot's size
    /// when one was taken.
    fn draw(&mut self, index: u32, acquired: vk::Semaphore) -> Result<Option<[u32; 2]>> {
        let extent = self.presenter.extent;
        let viewport = [extent.width, extent.height];
        let mut view = self.ui.view;
        // The waves move only where there is a sea (else the picture could be kept).
        if view.sea_level.is_some() {
            view.wave_time = self.opened.elapsed().as_secs_f32();
        }
        // The path tool draws its own band, not the brush's ring.
        view.cursor = self
            .pick
            .filter(|_| !self.ui.path.active)
            .map(|p| CursorRing {
                center: [p.x, p.z],
                radius: self.ui.brush.radius,
                inner_radius: self.ui.brush.inner_radius,
            });
        self.renderer.prepare(
            &self.session.doc.store,
            &self.camera,
            ImageWindow::whole(viewport),
            &view,
        )?;
        let take_shot = self.screenshot.is_some() && self.shot_due();
        if take_shot && !self.presenter.can_copy {
            bail!("this surface's images cannot be copied: no screenshot");
        }
        if take_shot {
            self.shot_buffer = Some(Buffer::new(
                &self.gpu,
                "screenshot",
                BufferDesc::readback(u64::from(extent.width) * u64::from(extent.height) * 4),
            )?);
        }
        // A press seen before the interface knew the pointer was over it (moved onto a panel
        // and pressed within one frame) is the interface's: its stroke is dropped unsent.
        let ui_owns_mouse = self.imgui.io().want_capture_mouse;
        if ui_owns_mouse && self.stroke_input.drop_unsent_stroke() {
            self.stroking = false;
        }
        // The stroke's samples since the last frame, then the cursor.
        let frame = self.renderer.frame_number();
        let mut picks = self.stroke_input.send(frame, crate::render::MAX_PICKS - 1);
        picks.extend(self.input.cursor.and_then(|c| self.window_pixel(c)));
        // A held button the interface owns (a slider dragged) is its input too.
        if ui_owns_mouse && (self.input.left || self.input.right) {
            self.pacing.ui_input(Instant::now());
        }
        // The sea's waves move: its picture changes every frame.
        let changed = self.renderer.picture_changed() || view.sea_level.is_some();
        let draw_terrain = self.pacing.draw_now(changed, take_shot, Instant::now());
        let draw_data = self.imgui.render();
        let image = &self.presenter.images[index as usize];
        let targets = FrameTargets {
            color: image,
            depth: self.presenter.depth.as_ref().expect("depth with images"),
            picks,
            keep_terrain: !draw_terrain,
        };
        let mut rec = Recorder::new(&self.gpu)?;
        let imgui_renderer = &mut self.imgui_renderer;
        self.renderer
            .record_frame(&mut rec, &self.session.doc.store, &targets, |rec, timer| {
                let q = match timer {
                    Some(t) => Some((t, rec.timer_begin(t, "ui")?)),
                    None => None,
                };
                imgui_renderer
                    .cmd_draw(rec.raw(), draw_data)
                    .map_err(|e| crate::gpu::GpuError::Unsupported(format!("imgui: {e}")))?;
                if let Some((t, q)) = q {
                    rec.timer_end(t, q);
                }
                Ok(())
            })?;
        if let Some(b) = self.shot_buffer.as_ref().filter(|_| take_shot) {
            rec.copy_image_to_buffer(image, b);
            rec.buffer(b, Access::HostRead);
        }
        rec.image(image, Access::Present);
        let ticket = submit_frame(
            rec,
            Some((
                acquired,
                vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::TRANSFER,
            )),
            Some(self.presenter.finished(index)),
        )?;
        self.renderer.frame_submitted(ticket);
        Ok(take_shot.then_some(viewport))
    }

    /// Relights the far level where this frame's edits reach it, the texels near the edits,
    /// then the strips farther away that the view draws at page level within the shadow budget
    /// (submissions left running: frames are in flight).
    fn relight(&mut self) -> Result<()> {
        let Some(sun) = self.ui.view.sun else {
            return Ok(());
        };
        let settings =
            LightSettings::for_view(sun, self.session.doc.desc(), self.ui.view.vertical_scale);
        self.lighting.set_detached(true);
        // Only what the view draws at page level is lit at full resolution; the rest is shaded
        // from the far level.
        self.lighting.follow_view(true);
        self.lighting.want_first(&self.renderer.pages_in_use());
        self.ui.profile.light = self.lighting.update(
            &mut self.session.doc.store,
            &settings,
            Some(f64::from(self.ui.light_budget_ms)),
        )?;
        Ok(())
    }

    /// Whether this frame shows the finished replay: the queue has been idle for two frames, the
    /// lighting caught up, and the picture drawn is the one this frame would draw (so the cursor's
    /// pick, two frames later, is made on it).
    fn shot_due(&mut self) -> bool {
        let lighting = self.ui.view.sun.is_some() && self.lighting.pending() > 0;
        let painting =
            self.session.doc.brushes.pending_strokes() > 0 || !self.stroke_input.is_idle();
        let settling = self.renderer.picture_changed() || self.field_map.waiting() > 0;
        if self.replay.is_some() || painting || lighting || settling {
            self.idle_since = None;
            return false;
        }
        let since = *self.idle_since.get_or_insert(self.frames);
        self.frames >= since + 2
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        // imgui's renderer (dropped first) destroys its buffers and pipeline itself: the frames
        // and brush work still in flight finish before any field goes.
        if let Err(e) = self.gpu.wait_detached() {
            eprintln!("scarp: waiting for the GPU on exit failed: {e}");
        }
    }
}

fn save_preset(name: &str, brush: &BrushSettings) -> std::result::Result<PathBuf, String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(format!(
            "'{name}' is not a preset name (1-64 letters, digits, - or _)"
        ));
    }
    let dir = asset_path(PRESET_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    let entry = preset(brush).map_err(|e| e.to_string())?;
    let text = serde_json::to_string_pretty(&entry).map_err(|e| e.to_string())?;
    write_bytes_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// The brush a project saved as its "current" preset, if it has one.
fn current_brush(presets: &[(String, BrushEntry)], source: &Path) -> Option<BrushSettings> {
    let (_, entry) = presets.iter().find(|(n, _)| n == "current")?;
    entry.brush(source.parent().unwrap_or(Path::new("."))).ok()
}

/// Starts recording a trace, or stops and writes it to `scarp-trace-SECONDS.json` in the
/// working folder (the message says where).
fn toggle_trace(gpu: &Arc<Gpu>) -> String {
    if !crate::trace::recording() {
        return match crate::gpu::start_trace(gpu) {
            Ok(()) => "recording a trace: press stop trace to write it".into(),
            Err(e) => format!("trace not started: {e}"),
        };
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = PathBuf::from(format!("scarp-trace-{secs}.json"));
    match crate::trace::stop_into(&path) {
        Ok(n) => format!(
            "trace of {n} events -> {} (open in Perfetto)",
            path.display()
        ),
        Err(e) => format!("trace not written: {e}"),
    }
}

/// Writes the swapchain image read back into `buffer` (`size`, in `format`) as the screenshot
/// PNG `path`, and says whether the panels' text fit (`overflow`: what did not).
fn save_screenshot(
    path: &Path,
    buffer: &Buffer,
    size: [u32; 2],
    format: vk::Format,
    overflow: &[String],
) -> Result<()> {
    let n = size[0] as usize * size[1] as usize * 4;
    let mut px = buffer.mapped(n)?.to_vec();
    let bgra = matches!(
        format,
        vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB
    );
    for p in px.chunks_mut(4) {
        if bgra {
            p.swap(0, 2);
        }
        p[3] = 255;
    }
    write_rgba_png(path, size[0], size[1], px).map_err(anyhow::Error::msg)?;
    println!("screenshot -> {}", path.display());
    // What the panels drew in it: tests check that every label and line of text fits.
    if overflow.is_empty() {
        println!("panels: all text fits");
    } else {
        println!("panels: text overflow: {}", overflow.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{low_ground, pressure_curve};

    /// The sea's first level is the low ground: a tenth of the blocks lie lower, whatever the
    /// spread of the rest; nothing for no finite height.
    #[test]
    fn a_sea_turned_on_stands_at_the_low_ground() {
        let mut minima: Vec<f32> = (0..100).rev().map(|i| i as f32).collect();
        minima.push(f32::NAN);
        let at = low_ground(&mut minima).unwrap();
        assert!((at - (10.0 - 0.002 * 99.0)).abs() < 1e-5, "{at}");
        // A plain at the low ground stays dry, just.
        let mut plain = vec![5.0; 40];
        plain.extend([900.0; 10]);
        let at = low_ground(&mut plain).unwrap();
        assert!(at < 5.0 && at > 3.0, "{at}");
        assert_eq!(low_ground(&mut vec![f32::NAN]), None);
    }

    /// A path of 5,000 points drawn as the path tool draws its overlay (the curve and a circle
    /// per point) passes 65536 vertices in one draw list: imgui splits it into commands at
    /// vertex offsets (which the renderer honours) instead of aborting the editor.
    #[test]
    fn an_overlay_past_65536_vertices_is_split_not_an_abort() {
        let mut imgui = imgui::Context::create();
        imgui.set_ini_filename(None);
        super::allow_large_draw_lists(&mut imgui);
        imgui.io_mut().display_size = [1280.0, 720.0];
        imgui.fonts().build_rgba32_texture();
        let ui = imgui.new_frame();
        let points: Vec<[f32; 2]> = (0..5000)
            .map(|i| {
                let t = i as f32 * 0.01;
                [
                    640.0 + 500.0 * t.sin() * (t * 0.1).cos(),
                    360.0 + 300.0 * t.cos(),
                ]
            })
            .collect();
        {
            let list = ui.get_background_draw_list();
            list.add_polyline(points.clone(), [1.0, 0.85, 0.2, 1.0])
                .thickness(2.0)
                .build();
            for p in &points {
                list.add_circle(*p, 6.0, [1.0, 0.5, 0.1, 1.0])
                    .filled(true)
                    .build();
            }
        }
        let data = imgui.render();
        let vertices: usize = data.draw_lists().map(|l| l.vtx_buffer().len()).sum();
        assert!(vertices > 65536, "{vertices} vertices");
        let offsets: Vec<usize> = data
            .draw_lists()
            .flat_map(|l| l.commands())
            .filter_map(|c| match c {
                imgui::DrawCmd::Elements { cmd_params, .. } => Some(cmd_params.vtx_offset),
                _ => None,
            })
            .collect();
        assert!(offsets.iter().any(|&o| o > 0), "{offsets:?}");
        assert!(offsets.iter().all(|&o| o < vertices));
    }

    #[test]
    fn inverting_swaps_raise_and_lower_and_presses_a_stamp_in() {
        use super::inverted;
        use crate::brush::{BrushSettings, BrushType};
        let b = BrushSettings::new(BrushType::Raise);
        assert_eq!(inverted(&b).brush, BrushType::Lower);
        assert_eq!(inverted(&b).signed_strength(), -b.strength);
        let s = BrushSettings::new(BrushType::Stamp);
        assert_eq!(inverted(&s).brush, BrushType::Stamp);
        assert_eq!(inverted(&s).signed_strength(), -s.strength);
        assert_eq!(inverted(&inverted(&s)), s);
    }

    #[test]
    fn pressure_goes_through_the_curve_and_defaults_to_full() {
        assert_eq!(pressure_curve(None, 2.0), 1.0);
        assert_eq!(pressure_curve(Some(f32::NAN), 1.0), 1.0);
        assert_eq!(pressure_curve(Some(0.5), 1.0), 0.5);
        assert!((pressure_curve(Some(0.5), 2.0) - 0.25).abs() < 1e-6);
        assert!((pressure_curve(Some(0.25), 0.5) - 0.5).abs() < 1e-6);
        assert_eq!(pressure_curve(Some(1.7), 3.0), 1.0);
        assert_eq!(pressure_curve(Some(-0.2), 0.5), 0.0);
        // Harder curves never raise the pressure.
        for i in 0..=10 {
            let f = i as f32 / 10.0;
            assert!(pressure_curve(Some(f), 2.0) <= pressure_curve(Some(f), 1.0));
        }
    }
}
