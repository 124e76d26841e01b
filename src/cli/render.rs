//! `scarp render`: a terrain drawn offscreen with the editor's pipeline; with `--frames`, timed
//! frames while a brush paints.

use super::args::{
    is_project, parse_camera, parse_image_size, MemoryArgs, ProjectPart, ReadArgs,
    WHOLE_IMAGE_BYTES,
};
use super::{check_validation, open_gpu, read_input};
use crate::atomic_file::{write_rgba_png, write_rgba_png_in_bands};
use crate::document::Document;
use crate::gpu::Gpu;
use crate::noise::{NoiseKind, NoiseTables, DEFAULT_TABLE_SEED};
use crate::render::frames::{
    default_view, framing_camera, mean_p99, run_frames, FrameLog, WithLighting,
};
use crate::render::lighting::{LightSettings, Lighting};
use crate::render::look::{Look, Materials};
use crate::render::offscreen::{offscreen_options, Offscreen, OffscreenFrame};
use crate::render::{Camera, TerrainRenderer, ViewSettings};
use crate::session::{PaintLoad, PaintLoop};
use crate::terrain::export::check_writable;
use anyhow::{bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most frames `scarp render` draws while the pages its view wants come onto the GPU (64 MiB of
/// page-ins each: 16 GiB at most; it stops sooner once nothing more comes).
const SETTLE_ROUNDS: usize = 256;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["journal", "heights"])))]
pub struct RenderArgs {
    /// Stroke journal to replay (docs/journal.md).
    #[arg(long)]
    journal: Option<PathBuf>,
    /// A height file (.png, .r16/.raw, .r32, .exr, .tif; README, Height files) or a .scarp
    /// project (a layered project: its composite, as the editor shows it; see --base and
    /// --layer).
    #[arg(long)]
    heights: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    part: ProjectPart,
    #[command(flatten)]
    memory: MemoryArgs,
    /// Image size, WxH (at most 16384x16384). An image over 64 MiB of pixels (4096x4096) is
    /// drawn and written in strips, so memory stays bounded.
    #[arg(long, default_value = "1280x720", value_parser = parse_image_size)]
    image: (u32, u32),
    /// Draw and write the image in strips of this many rows (default: whole when it fits
    /// 64 MiB of pixels, else as many rows as fit). --frames, --capture and
    /// --max-triangles-per-pixel draw it whole.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    strip_rows: Option<u32>,
    /// Camera eye and target in world units: ex,ey,ez,tx,ty,tz (x = texel column, z = texel row,
    /// y = height x vertical scale). Default: frames the whole terrain.
    #[arg(long, value_parser = parse_camera, allow_hyphen_values = true)]
    camera: Option<[f32; 6]>,
    /// Draw triangle edges only.
    #[arg(long)]
    wireframe: bool,
    /// Colour tiles by level of detail.
    #[arg(long)]
    lod_colours: bool,
    /// An analysis overlay (repeatable): `slope[:WALKABLE_DEGREES]` (a heat map of the slope as
    /// drawn, walkable up to 35 degrees by default), `contours:INTERVAL` (lines every INTERVAL
    /// height units), `curvature[:PER_METRE]` (blue hollows, orange crests, full at 0.01/m by
    /// default), `materials` (each material's colour by its weight, as the exported maps),
    /// `drainage` (blue by log D8 drainage area), `wetness` (blue from the median topographic
    /// wetness to the largest), `profile` or `plan` (profile or plan curvature: teal where
    /// concave or converging, orange where convex or diverging, full at 0.01/m), `erosion` (a
    /// project's erosion wear and deposits, net: orange where more was worn, teal where more was
    /// laid down, full at the largest).
    #[arg(long, value_name = "OVERLAY")]
    overlay: Vec<crate::render::analysis::Overlay>,
    /// Where the sun is: azimuth (degrees clockwise from north, north being the first rows) and
    /// elevation (1..90 degrees). Shadows and ambient occlusion are computed from the heights
    /// (docs/render.md, Lighting).
    #[arg(
        long,
        value_name = "AZ,EL",
        default_value = "225,30",
        allow_hyphen_values = true
    )]
    sun: crate::render::lighting::Sun,
    /// No shadows or ambient occlusion: the flat fixed light of old (faster; for comparisons).
    #[arg(long)]
    no_lighting: bool,
    /// Materials by rule: a preset (alpine, desert, temperate) or a JSON file of rules and
    /// colours (docs/render.md, The look).
    #[arg(long, value_name = "PRESET|FILE.json", default_value = "alpine")]
    materials: String,
    /// Exposure before the filmic tone map (1: as lit).
    #[arg(long, default_value_t = 1.0)]
    exposure: f32,
    /// The plain look of old: height and slope colours, a flat sky, no tone map.
    #[arg(long)]
    plain: bool,
    /// World y (texels) per height unit, over --exaggeration. Default: true scale from the
    /// document's units (a quarter of its larger side where they are not known).
    #[arg(long, conflicts_with = "exaggeration")]
    vertical_scale: Option<f32>,
    /// Vertical exaggeration of the true scale (1: heights as tall as the document's units
    /// say).
    #[arg(long, default_value_t = 1.0)]
    exaggeration: f32,
    /// Largest screen-space geometric error of the LOD selection, pixels.
    #[arg(long, default_value_t = 2.0)]
    pixel_error: f32,
    /// Triangle budget per covered pixel (of the previous frame); 0 turns it off. Default for
    /// an image drawn whole: 0.5 for r32f documents (shaded per pixel from the heights), 1 for
    /// r16; off for one drawn in strips (a strip does not see the whole image's pixels).
    #[arg(long)]
    max_triangles_per_pixel: Option<f32>,
    /// A sea at this height (height units): a translucent water plane over the document, waves
    /// from noise, tinted by its depth, foam at the shore (docs/render.md, The sea).
    #[arg(long, allow_hyphen_values = true)]
    sea_level: Option<f32>,
    /// Output PNG.
    #[arg(long)]
    out: PathBuf,
    /// Time this many frames (after 10 warm-up frames) before the final image (at most
    /// 100000).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    frames: u32,
    /// While timing, paint a circle with a noise brush of this kind.
    #[arg(long, value_enum)]
    paint: Option<NoiseKind>,
    /// Radius of the painting brush, texels.
    #[arg(long, default_value_t = 512.0)]
    paint_radius: f32,
    /// Brush instances added per frame.
    #[arg(long, default_value_t = 4)]
    paint_rate: usize,
    /// Strength of the painting brush.
    #[arg(long, default_value_t = 0.005)]
    paint_strength: f32,
    /// GPU budget for brush work per frame, ms (default: apply everything each frame).
    #[arg(long)]
    budget_ms: Option<f64>,
    /// GPU time per timed frame for relighting the strips far from the frame's edits, ms (the
    /// texels near them are relit at once).
    #[arg(long, default_value_t = crate::render::lighting::DEFAULT_BUDGET_MS)]
    light_budget_ms: f64,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
    /// Write a timeline trace of the timed frames (Chrome trace-event JSON: CPU phases per
    /// thread, GPU passes on the queue's track, a "frame" span per frame; opens in Perfetto).
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
    /// Capture the final frame in RenderDoc (when running under it; otherwise says so).
    #[arg(long)]
    capture: bool,
}

pub fn run(a: &RenderArgs) -> Result<()> {
    check_flags(a)?;
    let materials =
        Materials::load(&a.materials).map_err(|e| anyhow::anyhow!("--materials: {e}"))?;
    let gpu = open_gpu()?;
    println!("device: {}", gpu.info());
    let mut scene = Scene::new(a, &gpu, materials)?;
    if a.frames > 0 {
        scene.time_frames(a, &gpu)?;
    }
    let size = scene.size;
    let rows = strip_rows(a);
    if rows >= size[1] {
        let f = scene.final_frame(a)?;
        let pixels = f.pixels.expect("read back");
        print_final_frame(&scene.renderer, f.draw_gpu_ms);
        write_rgba_png(&a.out, size[0], size[1], pixels).map_err(anyhow::Error::msg)?;
    } else {
        // Each strip is a window of the whole view: the same nodes, drawn into its rows.
        let (mut strips, mut draw_gpu_ms) = (0, 0.0);
        write_rgba_png_in_bands(&a.out, size[0], size[1], rows, |y| {
            scene.target.set_window(size, [0, y]);
            let f = scene.final_frame(a)?;
            strips += 1;
            draw_gpu_ms += f.draw_gpu_ms;
            Ok::<_, anyhow::Error>(f.pixels.expect("read back"))
        })?;
        println!(
            "final image: {strips} strips of {rows} rows, {} nodes drawn in each, draw GPU {draw_gpu_ms:.3} ms in all",
            scene.renderer.stats.nodes_drawn
        );
    }
    check_validation(&gpu)?;
    // With --frames the frames' report has taken the totals; a still render reports here.
    let report = crate::profile::report();
    if a.frames == 0 && !report.is_empty() {
        eprintln!("CPU profile (the whole command):\n{report}");
    }
    println!("-> {}", a.out.display());
    Ok(())
}

/// What `scarp render` draws and draws with. (Fields drop in this order: lighting, target,
/// renderer, terrain.)
struct Scene {
    light: LightSettings,
    lighting: Lighting,
    /// Image size, pixels.
    size: [u32; 2],
    target: Offscreen,
    view: ViewSettings,
    camera: Camera,
    renderer: TerrainRenderer,
    terrain: Document,
}

impl Scene {
    /// Loads the terrain of the flags and makes its renderer, camera, view, offscreen target
    /// and lighting.
    fn new(a: &RenderArgs, gpu: &Arc<Gpu>, materials: Materials) -> Result<Self> {
        let tables = NoiseTables::new(a.table_seed);
        let mut terrain = load_terrain(
            gpu,
            a.journal.as_deref(),
            a.heights.as_deref().map(|p| (p, &a.read)),
            &a.part,
            &a.memory,
            &tables,
        )?;
        let desc = *terrain.desc();
        let options = offscreen_options().expecting_water(&terrain.store, a.sea_level.is_some());
        let mut renderer = TerrainRenderer::new(gpu, desc, options)?;
        if a.wireframe && !renderer.has_wireframe() {
            bail!(
                "{} cannot draw wireframes (no fillModeNonSolid)",
                gpu.info().name
            );
        }
        field_overlay(a, &mut terrain, &mut renderer)?;
        renderer.refresh(&mut terrain.store)?;
        let (camera, mut view) = camera_and_view(a, &renderer, &terrain);
        view.look = (!a.plain).then_some(Look {
            // A preset takes the physical snow line; a file of the user's is drawn as it says.
            materials: match crate::render::look::PRESETS
                .iter()
                .any(|(name, _)| *name == a.materials)
            {
                true => materials.on_document(&desc, renderer.nodes().range()),
                false => materials,
            },
            exposure: a.exposure,
            ..Look::default()
        });
        let size = [a.image.0, a.image.1];
        let most = gpu.info().max_image_dimension_2d;
        if size[0] > most {
            bail!(
                "--image {}x{}: {} draws images at most {most} pixels wide",
                size[0],
                size[1],
                gpu.info().name
            );
        }
        let target = Offscreen::new(gpu, [size[0], strip_rows(a)])?;
        let mut lighting = Lighting::new(gpu, desc.format)?;
        // Full resolution where the final frame draws at page level; the far level elsewhere.
        lighting.follow_view(true);
        let light = LightSettings::for_view(a.sun, &desc, view.vertical_scale);
        Ok(Self {
            light,
            lighting,
            size,
            target,
            view,
            camera,
            renderer,
            terrain,
        })
    }

    /// One frame waited for, read back with `read_pixels`.
    fn draw(&mut self, read_pixels: bool) -> Result<OffscreenFrame> {
        let (renderer, store) = (&mut self.renderer, &mut self.terrain.store);
        Ok(self
            .target
            .render(renderer, store, &self.camera, &self.view, read_pixels, None)?)
    }

    /// Lights what the last frame drew: the far level (once, and where edits reach it) and
    /// the pages it drew at page level; prints what it took when it lit anything. Returns
    /// whether it did (the frame is drawn again).
    fn light_view(&mut self, a: &RenderArgs) -> Result<bool> {
        let t0 = std::time::Instant::now();
        let in_view = self.renderer.pages_in_use();
        self.lighting.want_first(&in_view);
        let s = self
            .lighting
            .update(&mut self.terrain.store, &self.light, None)?;
        if s.pages == 0 && s.near_texels == 0 && s.far_texels == 0 {
            return Ok(false);
        }
        println!(
            "lighting: {} pages of the {} drawn at page level, {} far-level texels, in {:.1} ms, GPU {:.2} ms (sun {}, {})",
            s.pages,
            in_view.len(),
            s.far_texels,
            t0.elapsed().as_secs_f64() * 1e3,
            s.gpu_ms,
            a.sun.azimuth,
            a.sun.elevation
        );
        Ok(true)
    }

    /// `--frames`: times the frames (painting with `--paint`, tracing with `--trace`) and
    /// prints them; then the lighting catches up for the final image.
    fn time_frames(&mut self, a: &RenderArgs, gpu: &Arc<Gpu>) -> Result<()> {
        let paint = a.paint.map(|kind| PaintLoad {
            budget_ms: a.budget_ms,
            ..PaintLoad::noise(kind, a.paint_radius, a.paint_strength, a.paint_rate)
        });
        if a.trace.is_some() {
            crate::gpu::start_trace(gpu)?;
        }
        // Frames are in flight: the lighting's submissions are not waited for either.
        self.lighting.set_detached(true);
        let mut work = WithLighting {
            work: PaintLoop::new(&mut self.terrain, paint.as_ref()),
            lighting: (!a.no_lighting).then_some((&mut self.lighting, self.light)),
            budget_ms: Some(a.light_budget_ms),
            log: Vec::new(),
        };
        let log = run_frames(
            &mut work,
            &mut self.renderer,
            &mut self.target,
            &self.camera,
            &self.view,
            10,
            a.frames as usize,
        )?;
        let light_log = std::mem::take(&mut work.log);
        drop(work);
        if let Some(t) = &a.trace {
            super::write_trace(t)?;
        }
        print_frames(a, &self.terrain, self.size, &log);
        if !a.no_lighting {
            print_lighting(&light_log, a.frames as usize);
            // The final image shows the lighting caught up.
            self.lighting.set_detached(false);
            self.lighting
                .update(&mut self.terrain.store, &self.light, None)?;
        }
        Ok(())
    }

    /// The final frame, read back: drawn until the pages the view wants are on the GPU (after
    /// a frame that counts covered pixels, when nothing was timed and the triangle budget is
    /// on); with `--capture`, drawn once more inside a RenderDoc capture.
    fn final_frame(&mut self, a: &RenderArgs) -> Result<OffscreenFrame> {
        if a.frames == 0 && self.view.max_triangles_per_pixel > 0.0 {
            // The triangle budget needs a covered-pixel count: one frame measures it.
            self.draw(false)?;
        }
        // Frames until every page the view wants is on the GPU (or the budget holds no more).
        let (renderer, store) = (&mut self.renderer, &mut self.terrain.store);
        let mut f = self.target.render_settled(
            renderer,
            store,
            &self.camera,
            &self.view,
            true,
            None,
            SETTLE_ROUNDS,
        )?;
        // Then lit as far as it is drawn at page level, and drawn lit.
        if !a.no_lighting && self.light_view(a)? {
            f = self.draw(true)?;
        }
        if a.capture {
            // The final frame again, inside a RenderDoc capture.
            let mut capture = crate::gpu::Capture::new();
            capture.start();
            f = self.draw(true)?;
            println!("{}", capture.end());
        }
        Ok(f)
    }
}

/// The final frame's summary line: what the renderer drew, and the draw's GPU time.
fn print_final_frame(renderer: &TerrainRenderer, draw_gpu_ms: f64) {
    let covered = renderer.covered_pixels().unwrap_or(0);
    let s = &renderer.stats;
    println!(
        "final frame: {} nodes drawn ({} culled, {} visited) as {} instances in {} draws, per level {:?}, {} pages still wanted, {} triangles, {:.2} triangles per covered pixel ({covered} pixels), error bound {:.2} px, draw GPU {:.3} ms",
        s.nodes_drawn,
        s.nodes_culled,
        s.nodes_visited,
        s.instances,
        s.draws,
        s.nodes_per_level,
        s.pages_requested,
        s.triangles,
        s.triangles as f64 / covered.max(1) as f64,
        s.pixel_error_used,
        draw_gpu_ms
    );
}

/// Rows drawn at once: `--strip-rows`; else the whole image when a flag needs it whole or
/// it fits [`WHOLE_IMAGE_BYTES`]; else as many rows as fit.
fn strip_rows(a: &RenderArgs) -> u32 {
    let (w, h) = a.image;
    let fit = (WHOLE_IMAGE_BYTES / (u64::from(w) * 4)).clamp(1, u64::from(h)) as u32;
    match a.strip_rows {
        Some(n) => n.min(h),
        None if whole_only(a).is_some() => h,
        None => fit,
    }
}

/// The flag that needs the image drawn whole (timing, capturing, or a triangle budget, which
/// counts the pixels the whole image covers), if any.
fn whole_only(a: &RenderArgs) -> Option<&'static str> {
    if a.frames > 0 {
        Some("--frames")
    } else if a.capture {
        Some("--capture")
    } else if a.max_triangles_per_pixel.is_some_and(|t| t > 0.0) {
        Some("--max-triangles-per-pixel")
    } else {
        None
    }
}

/// Largest side of an image drawn whole (its targets, readback and PNG near 1.5 GB).
const MAX_WHOLE_SIDE: u32 = 8192;

/// Every flag checked before any work.
fn check_flags(a: &RenderArgs) -> Result<()> {
    let erosion = a
        .overlay
        .contains(&crate::render::analysis::Overlay::Erosion);
    if erosion
        && a.heights
            .as_deref()
            .is_some_and(|h| !super::args::is_project(h))
    {
        bail!("--overlay erosion: a height file holds no erosion wear or deposits (a .scarp project or a journal does)");
    }
    if let Some(flag) = whole_only(a) {
        if a.strip_rows.is_some() {
            bail!("--strip-rows cannot be used with {flag}, which draws the image whole");
        }
        let (w, h) = a.image;
        if w > MAX_WHOLE_SIDE || h > MAX_WHOLE_SIDE {
            bail!("{flag} draws the image whole: at most {MAX_WHOLE_SIDE}x{MAX_WHOLE_SIDE}, got --image {w}x{h}");
        }
    }
    if !(a.pixel_error.is_finite() && a.pixel_error > 0.0) {
        bail!(
            "--pixel-error must be a positive number, got {}",
            a.pixel_error
        );
    }
    if let Some(t) = a.max_triangles_per_pixel {
        if !(t.is_finite() && t >= 0.0) {
            bail!("--max-triangles-per-pixel must be 0 (off) or positive, got {t}");
        }
    }
    if let Some(v) = a.vertical_scale {
        if !(v.is_finite() && v > 0.0) {
            bail!("--vertical-scale must be a positive number, got {v}");
        }
    }
    if !(a.exaggeration.is_finite() && (1e-3..=1e3).contains(&a.exaggeration)) {
        bail!(
            "--exaggeration must be between 0.001 and 1000, got {}",
            a.exaggeration
        );
    }
    if let Some(h) = a.sea_level {
        if !h.is_finite() {
            bail!("--sea-level must be a finite height, got {h}");
        }
    }
    if a.paint.is_some() && a.frames == 0 {
        bail!("--paint needs --frames N (it paints while timing frames)");
    }
    if let Some(source) = a.heights.as_deref().or(a.journal.as_deref()) {
        a.part.check(source).map_err(anyhow::Error::msg)?;
    }
    if let Some(t) = &a.trace {
        if a.frames == 0 {
            bail!("--trace needs --frames N (it records the timed frames)");
        }
        super::check_trace_path(t)?;
    }
    if !(0.5..=65536.0).contains(&a.paint_radius) {
        bail!(
            "--paint-radius must be between 0.5 and 65536, got {}",
            a.paint_radius
        );
    }
    if a.overlay.iter().filter(|o| o.is_field()).count() > 1 {
        bail!(
            "--overlay: drainage, wetness, profile and plan tint the terrain one at a time: \
             give one"
        );
    }
    if !(1..=4096).contains(&a.paint_rate) {
        bail!(
            "--paint-rate must be between 1 and 4096, got {}",
            a.paint_rate
        );
    }
    if !(a.paint_strength.is_finite() && (0.0..=100.0).contains(&a.paint_strength)) {
        bail!(
            "--paint-strength must be between 0 and 100, got {}",
            a.paint_strength
        );
    }
    if !(a.exposure.is_finite() && a.exposure > 0.0) {
        bail!("--exposure must be a positive number, got {}", a.exposure);
    }
    if a.budget_ms.is_some_and(|b| !(b.is_finite() && b > 0.0)) {
        bail!("--budget-ms must be a positive number");
    }
    if a.out.extension().and_then(|e| e.to_str()) != Some("png") {
        bail!("{}: --out must be a .png file", a.out.display());
    }
    check_writable(&a.out).map_err(anyhow::Error::msg)?;
    Ok(())
}

/// The camera (`--camera`, else framing the terrain) and the view settings of the flags.
fn camera_and_view(
    a: &RenderArgs,
    renderer: &TerrainRenderer,
    terrain: &Document,
) -> (Camera, ViewSettings) {
    let desc = *terrain.desc();
    let vs = a
        .vertical_scale
        .unwrap_or_else(|| desc.vertical_scale() * a.exaggeration);
    let camera = match a.camera {
        Some(c) => Camera::look_at(
            glam::Vec3::from_slice(&c[..3]),
            glam::Vec3::from_slice(&c[3..]),
        ),
        None => framing_camera(renderer, &desc, vs),
    };
    let mut view = default_view(&desc, vs);
    view.wireframe = a.wireframe;
    view.lod_colours = a.lod_colours;
    for o in &a.overlay {
        o.apply(&mut view);
    }
    view.pixel_error = a.pixel_error;
    view.max_triangles_per_pixel = match a.max_triangles_per_pixel {
        Some(t) => t,
        None if strip_rows(a) < a.image.1 => 0.0,
        None => crate::render::terrain::default_triangles_per_pixel(&desc),
    };
    view.sun = (!a.no_lighting).then_some(a.sun);
    view.sea_level = a.sea_level;
    (camera, view)
}

/// The `--frames` summary line.
fn print_frames(a: &RenderArgs, terrain: &Document, size: [u32; 2], log: &FrameLog) {
    let desc = terrain.desc();
    let (fm, fp) = mean_p99(&log.frame_ms);
    let (bm, bp) = mean_p99(&log.brush_gpu_ms);
    let (lm, _) = mean_p99(&log.bounds_gpu_ms);
    let (dm, dp) = mean_p99(&log.draw_gpu_ms);
    let (sm, _) = mean_p99(&log.shade_gpu_ms);
    let (pm, _) = mean_p99(&log.prepare_cpu_ms);
    let (tm, _) = mean_p99(&log.triangles_per_pixel);
    let (pump, _) = mean_p99(&log.pump_ms);
    let (refresh, _) = mean_p99(&log.refresh_ms);
    println!(
        "{} frames of {}x{} at {}x{}: frame {fm:.3} ms mean, {fp:.3} ms p99 ({:.0} fps); GPU per frame: brush {bm:.3} ms (p99 {bp:.3}), tile bounds {lm:.3} ms, draw {dm:.3} ms (p99 {dp:.3}), shading {sm:.3} ms; CPU LOD selection and draw preparation {pm:.3} ms; wall: brush pump {pump:.3} ms, tile-bounds refresh {refresh:.3} ms; {tm:.2} triangles per covered pixel; {} instances painted",
        a.frames,
        desc.width,
        desc.height,
        size[0],
        size[1],
        1e3 / fm,
        log.instances_applied
    );
}

/// The `--frames` lighting line: per timed frame (the last `frames` updates), the lighting's
/// GPU time, the texels relit near edits and the strip pages relit, and what still waited.
fn print_lighting(log: &[crate::render::lighting::LightStats], frames: usize) {
    let l = crate::render::frames::LightPerFrame::of(log, frames);
    println!(
        "lighting per frame: GPU {:.3} ms, {:.2} Mtexels near edits, {:.2} strip pages; pages waiting: at most {}, {} after the last frame ({} of them drawn at page level)",
        l.gpu_ms,
        l.near_texels * 1e-6,
        l.strip_pages,
        l.most_waiting,
        l.last_waiting,
        l.last_waiting_in_view
    );
}

/// The tint field of a `--overlay drainage`, `wetness`, `profile`, `plan` or `erosion`
/// (docs/maps.md), which the renderer tints with: profile and plan curvature computed on the
/// GPU page by page ([`crate::maps::field::SurfaceField`]), the others on the CPU from the
/// document's heights (or its erosion's wear and deposits).
fn field_overlay(
    a: &RenderArgs,
    terrain: &mut Document,
    renderer: &mut TerrainRenderer,
) -> Result<()> {
    // One at most (check_flags).
    let Some(&kind) = a.overlay.iter().find(|o| o.is_field()) else {
        return Ok(());
    };
    const FIELD: &str = "map overlay";
    if let Some(map) = crate::maps::overlay::surface_map(kind) {
        let desc = *terrain.desc();
        let mut field = crate::maps::field::SurfaceField::new(terrain.gpu(), desc.format, FIELD)?;
        field.update(&mut terrain.store, map, None)?;
        renderer.set_overlay(Some((FIELD, crate::render::terrain::Overlay::Uplift)));
        return Ok(());
    }
    let d = *terrain.desc();
    if u64::from(d.width) * u64::from(d.height) > crate::maps::overlay::MOST_TEXELS {
        bail!(
            "--overlay {}: a {}x{} document is past the {} texels a global map is made over at \
             once: render a region of it (`scarp convert --region`), or export the map at an \
             engine's size (`scarp export --maps`)",
            crate::maps::overlay::name(kind),
            d.width,
            d.height,
            crate::maps::overlay::MOST_TEXELS
        );
    }
    // Its pages on the GPU before the first frame (the renderer brings in the pages a frame
    // drew, for the next one: a single still would show none).
    let tint = terrain
        .write_field_map(kind, FIELD)?
        .expect("a field map (is_field)");
    renderer.set_overlay(Some((FIELD, tint)));
    Ok(())
}

/// The document to draw: a replayed journal, a project or a height file.
fn load_terrain(
    gpu: &Arc<Gpu>,
    journal: Option<&Path>,
    heights: Option<(&Path, &ReadArgs)>,
    part: &ProjectPart,
    memory: &MemoryArgs,
    tables: &NoiseTables,
) -> Result<Document> {
    if let Some(path) = journal {
        let (journal, mut doc) = crate::session::open_journal(gpu, path, tables)?;
        doc.set_budgets(memory.budgets(gpu, None));
        let mut tools = crate::edit::Tools::default();
        journal.replay(
            &mut crate::edit::Target::new(&mut doc, &mut tools),
            |_, _| {},
        )?;
        return Ok(doc);
    }
    let (path, read) = heights.expect("clap requires a source");
    if is_project(path) && part.composite() {
        let (mut doc, _, _) = crate::session::open_project_file(gpu, path, tables)?;
        doc.set_budgets(memory.budgets(gpu, Some(path)));
        return Ok(doc);
    }
    let (grid, units) = match is_project(path) {
        true => super::project_input::heights(path, part)?,
        false => read_input(path, read)?,
    };
    let desc = crate::pages::geometry::DocumentDesc {
        units,
        ..crate::pages::geometry::DocumentDesc::for_heights(grid.width, grid.height)
    };
    let budgets = memory.budgets(gpu, None);
    Ok(Document::from_heights_within(
        gpu,
        desc,
        &grid.values,
        budgets,
        tables,
    )?)
}
