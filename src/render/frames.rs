//! Timed frame loops: offscreen frames of a terrain while a brush paints it, as the editor runs
//! them (pump the stroke queue under a GPU budget, catch the renderer up, draw). Used by
//! `scarp render --frames` and the benchmarks.

use super::camera::Camera;
use super::offscreen::Offscreen;
use super::terrain::{TerrainRenderer, ViewSettings};
use crate::brush::gpu::GpuTerrain;
use crate::brush::BrushSettings;
use crate::gpu::shared::BrushInstance;
use crate::gpu::Result;
use crate::terrain::document::DocumentDesc;
use std::time::Instant;

/// A brush painting a circle around the document's centre while frames are drawn.
#[derive(Clone, Debug)]
pub struct PaintLoad {
    pub brush: BrushSettings,
    /// Instances added to the stroke each frame.
    pub instances_per_frame: usize,
    /// GPU budget for brush work per frame (ms); None drains the queue every frame.
    pub budget_ms: Option<f64>,
}

/// Per-frame measurements.
#[derive(Clone, Debug, Default)]
pub struct FrameLog {
    /// Wall-clock time of each whole frame (pump + refresh + draw + wait), ms.
    pub frame_ms: Vec<f64>,
    pub brush_gpu_ms: Vec<f64>,
    pub bounds_gpu_ms: Vec<f64>,
    pub draw_gpu_ms: Vec<f64>,
    pub triangles: Vec<u64>,
    /// Triangles per covered pixel (covered pixels counted on the GPU each frame).
    pub triangles_per_pixel: Vec<f64>,
    /// CPU time of LOD selection and draw preparation, ms.
    pub prepare_cpu_ms: Vec<f64>,
    /// Wall-clock time of queueing and pumping the brush work (its submissions waited for), ms.
    pub pump_ms: Vec<f64>,
    /// Wall-clock time of bringing the tile bounds up to date (its submission waited for), ms.
    pub refresh_ms: Vec<f64>,
    pub instances_applied: usize,
}

/// Mean and 99th percentile of `v`.
pub fn mean_p99(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let i = ((s.len() as f64 * 0.99).ceil() as usize).clamp(1, s.len()) - 1;
    (mean, s[i])
}

impl PaintLoad {
    /// A noise brush of `kind` painting the benchmark circle: `rate` instances per frame, spacing
    /// a tenth of the radius (so the ring laps and grows spiky), the whole queue each frame.
    pub fn noise(kind: crate::noise::NoiseKind, radius: f32, strength: f32, rate: usize) -> Self {
        let mut brush = BrushSettings::new(crate::brush::BrushType::Noise);
        brush.noise.kind = kind;
        brush.radius = radius;
        brush.strength = strength;
        brush.spacing = 0.1;
        Self {
            brush,
            instances_per_frame: rate,
            budget_ms: None,
        }
    }
}

/// Default world y per height unit: a quarter of the document's larger side.
pub fn default_vertical_scale(desc: &DocumentDesc) -> f32 {
    0.25 * desc.width.max(desc.height) as f32
}

/// View settings of `scarp render` and the benchmarks for `desc`: fog scaled to its size.
pub fn default_view(desc: &DocumentDesc, vertical_scale: f32) -> ViewSettings {
    ViewSettings {
        vertical_scale,
        pixel_error: 2.0,
        max_triangles_per_pixel: 2.0,
        fog: 0.05 / desc.width.max(desc.height) as f32,
        ..ViewSettings::default()
    }
}

/// An orbit camera that frames the whole terrain (heights from the renderer's tile bounds).
pub fn framing_camera(
    renderer: &TerrainRenderer,
    desc: &DocumentDesc,
    vertical_scale: f32,
) -> Camera {
    let (lo, hi) = renderer.height_range();
    let mut cam = Camera::default();
    cam.frame_all(
        desc.width,
        desc.height,
        lo * vertical_scale,
        hi * vertical_scale,
    );
    cam
}

/// Instances `first..first + count` of a circle of radius `r` around `c`, spaced by the brush.
pub fn circle_instances(
    brush: &BrushSettings,
    c: [f32; 2],
    r: f32,
    first: usize,
    count: usize,
) -> Vec<BrushInstance> {
    let step = (brush.spacing * brush.radius / r.max(1.0)).max(1e-4);
    (first..first + count)
        .map(|k| {
            let a = k as f32 * step;
            let dir = a + std::f32::consts::FRAC_PI_2;
            let axis_angle = dir + brush.dir_angle_deg.to_radians();
            BrushInstance {
                center: [c[0] + r * a.cos(), c[1] + r * a.sin()],
                radius: brush.radius,
                inner_radius: brush.inner_radius,
                strength: brush.signed_strength(),
                direction: dir,
                axis: [axis_angle.cos(), axis_angle.sin()],
            }
        })
        .collect()
}

/// Draws `frames` frames (after `warmup` untimed ones), painting with `paint` if given.
#[allow(clippy::too_many_arguments)]
pub fn run_frames(
    terrain: &mut GpuTerrain,
    renderer: &mut TerrainRenderer,
    target: &mut Offscreen,
    camera: &Camera,
    view: &ViewSettings,
    warmup: usize,
    frames: usize,
    paint: Option<&PaintLoad>,
) -> Result<FrameLog> {
    let mut log = FrameLog::default();
    let d = *terrain.desc();
    let centre = [d.width as f32 * 0.5, d.height as f32 * 0.5];
    let ring = d.width.min(d.height) as f32 * 0.3;
    let mut next = 0;
    for frame in 0..warmup + frames {
        if frame == warmup {
            crate::profile::take(); // profile the timed frames only
        }
        let t0 = Instant::now();
        let mut brush_ms = 0.0;
        if let Some(p) = paint {
            let inst = circle_instances(&p.brush, centre, ring, next, p.instances_per_frame);
            next += inst.len();
            terrain.enqueue_stroke_part(&p.brush, &inst, frame > 0);
            let _s = crate::profile::scope("frame: enqueue and pump");
            let report = terrain.pump(p.budget_ms)?;
            brush_ms = report.gpu_ns * 1e-6;
        }
        let pump_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        renderer.refresh(terrain)?;
        let refresh_ms = t1.elapsed().as_secs_f64() * 1e3;
        let bounds_gpu_ms = renderer.stats.bounds_gpu_ms;
        let f = target.render(renderer, terrain, camera, view, false, None)?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        if frame >= warmup {
            log.frame_ms.push(ms);
            log.brush_gpu_ms.push(brush_ms);
            log.pump_ms.push(pump_ms);
            log.refresh_ms.push(refresh_ms);
            log.bounds_gpu_ms.push(bounds_gpu_ms);
            log.draw_gpu_ms.push(f.draw_gpu_ms);
            let st = &renderer.stats;
            log.triangles.push(st.triangles);
            log.prepare_cpu_ms.push(st.prepare_cpu_ms);
            if let Some(c) = renderer.covered_pixels() {
                log.triangles_per_pixel
                    .push(st.triangles as f64 / c.max(1) as f64);
            }
        }
    }
    let report = crate::profile::report();
    if !report.is_empty() {
        eprintln!("CPU profile ({frames} frames):\n{report}");
    }
    // Finish the stroke so the document is consistent afterwards.
    terrain.pump(None)?;
    log.instances_applied = next;
    Ok(log)
}
