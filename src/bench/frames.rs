//! Editor frames: offscreen frames of a replayed terrain while a Jordan noise brush paints
//! (`render::frames::run_frames`, the editor's pump / refresh / draw sequence), per-pass split.

use super::ceilings::{Heater, HEAT_LONG_MS};
use super::{BenchOptions, FrameResult};
use crate::document::Document;
use crate::gpu::Gpu;
use crate::noise::{NoiseKind, NoiseTables};
use crate::render::frames::{
    default_view, framing_camera, mean_p99, run_frames, FrameLog, FrameWork, WithLighting,
};
use crate::render::lighting::{LightSettings, LightStats, Lighting, Sun};
use crate::render::look::Look;
use crate::render::offscreen::{offscreen_options, Offscreen};
use crate::render::TerrainRenderer;
use crate::session::{PaintLoad, PaintLoop};
use anyhow::{anyhow, Result};
use std::sync::Arc;

struct FrameCase {
    name: &'static str,
    /// Under `assets/`.
    journal: &'static str,
    run: Painting,
}

const FULL: &[FrameCase] = &[
    FrameCase {
        name: "frame/4096",
        journal: "journals/default.json",
        run: FULL_RUN,
    },
    FrameCase {
        name: "frame/8192",
        journal: "journals/bench/default-8192.json",
        run: FULL_RUN,
    },
    FrameCase {
        name: "frame/16384",
        journal: "journals/bench/lvp-world-16384.json",
        run: FULL_RUN,
    },
    FrameCase {
        name: "frame/65536",
        journal: "journals/bench/world-65536.json",
        run: FULL_RUN,
    },
];

const QUICK: &[FrameCase] = &[FrameCase {
    name: "frame/1024",
    journal: "journals/demo.json",
    run: QUICK_RUN,
}];

/// Warm-up frames before the timed ones.
const WARMUP_FRAMES: usize = 10;

/// Every frame measurement of a run.
pub(super) fn names(quick: bool) -> Vec<String> {
    (if quick { QUICK } else { FULL })
        .iter()
        .map(|c| c.name.to_string())
        .collect()
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    tables: &NoiseTables,
    heater: &Heater,
) -> Result<Option<Vec<FrameResult>>> {
    let cases: Vec<&FrameCase> = (if o.quick { QUICK } else { FULL })
        .iter()
        .filter(|c| o.wants(c.name))
        .collect();
    if cases.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for c in cases {
        let path = o.assets.join(c.journal);
        let mut terrain = crate::session::replay_journal(gpu, &path, tables).map_err(|e| {
            anyhow!("{e:#} (the frame benchmark replays the repository's journals: run from its root, or leave frames out with --filter)")
        })?;
        let desc = *terrain.desc();
        let log = paint_frames(gpu, &mut terrain, &c.run, heater)?;
        let mean = |v: &[f64]| mean_p99(v).0;
        let (mean_ms, p99_ms) = mean_p99(&log.frame_ms);
        let triangles: Vec<f64> = log.triangles.iter().map(|&t| t as f64).collect();
        let r = FrameResult {
            name: c.name.to_string(),
            journal: c.journal.to_string(),
            terrain: [desc.width, desc.height],
            image: c.run.image,
            frames: c.run.frames as u32,
            brush: "noise jordan".to_string(),
            brush_radius: c.run.radius,
            instances_per_frame: c.run.rate as u32,
            mean_ms,
            mean_spread: mean_uncertainty(&log.frame_ms),
            p99_ms,
            fps: super::ratio(1e3, mean_ms),
            gpu_brush_ms: mean(&log.brush_gpu_ms),
            gpu_tile_bounds_ms: mean(&log.bounds_gpu_ms),
            gpu_draw_ms: mean(&log.draw_gpu_ms),
            gpu_shade_ms: mean(&log.shade_gpu_ms),
            cpu_prepare_ms: mean(&log.prepare_cpu_ms),
            pump_wall_ms: mean(&log.pump_ms),
            refresh_wall_ms: mean(&log.refresh_ms),
            triangles: mean(&triangles),
            triangles_per_pixel: if log.triangles_per_pixel.is_empty() {
                0.0
            } else {
                mean(&log.triangles_per_pixel)
            },
            error_bound_px: if log.error_bound_px.is_empty() {
                0.0
            } else {
                mean(&log.error_bound_px)
            },
        };
        eprintln!(
            "{}: {}x{} at {}x{}, r{} Jordan painting: {:.2} ms mean, {:.2} p99 ({:.0} fps); GPU draw {:.2}, shading {:.2}, tile bounds {:.2}, brush {:.2}; CPU prepare {:.2}",
            r.name, desc.width, desc.height, c.run.image[0], c.run.image[1], c.run.radius, r.mean_ms, r.p99_ms, r.fps,
            r.gpu_draw_ms, r.gpu_shade_ms, r.gpu_tile_bounds_ms, r.gpu_brush_ms, r.cpu_prepare_ms
        );
        out.push(r);
    }
    Ok(Some(out))
}

/// A frame run: offscreen frames at `image` pixels, the terrain framed whole, while a Jordan
/// noise brush of `radius` paints `rate` instances per frame around its centre; 10 warm-up
/// frames, then `frames` timed ones (the editor's pump / refresh / draw sequence, two frames
/// in flight).
#[derive(Clone, Copy, Debug)]
pub(super) struct Painting {
    pub image: [u32; 2],
    pub radius: f32,
    pub rate: usize,
    pub frames: usize,
}

/// The full benchmark's frame runs (frames, layers, lighting): 1080p, a radius-512 brush, 4
/// instances a frame, 300 frames.
pub(super) const FULL_RUN: Painting = Painting {
    image: [1920, 1080],
    radius: 512.0,
    rate: 4,
    frames: 300,
};

/// `--quick`'s frame runs: 640×360, radius 64, 2 instances a frame, 5 frames.
pub(super) const QUICK_RUN: Painting = Painting {
    image: [640, 360],
    radius: 64.0,
    rate: 2,
    frames: 5,
};

/// The frames of `run` over `terrain`.
pub(super) fn paint_frames(
    gpu: &Arc<Gpu>,
    terrain: &mut Document,
    run: &Painting,
    heater: &Heater,
) -> Result<FrameLog> {
    let (log, _) = paint_frames_lit(gpu, terrain, run, heater, None)?;
    Ok(log)
}

/// Shadows and occlusion kept live through a frame run, under `budget_ms` of GPU time a frame,
/// and drawn with the look.
pub(super) struct Lit<'a> {
    pub lighting: &'a mut Lighting,
    pub sun: Sun,
    pub budget_ms: f64,
    /// Light as the editor does, following the view (else every page the heights can shadow,
    /// as a document lit whole before the frames keeps it).
    pub follow: bool,
}

/// [`paint_frames`], with `lit` the lighting caught up first and then updated every frame as
/// the editor does (its per-update figures returned beside the frames').
pub(super) fn paint_frames_lit(
    gpu: &Arc<Gpu>,
    terrain: &mut Document,
    run: &Painting,
    heater: &Heater,
    lit: Option<Lit>,
) -> Result<(FrameLog, Vec<LightStats>)> {
    let desc = *terrain.desc();
    let mut renderer = TerrainRenderer::new(gpu, desc, offscreen_options())?;
    renderer.refresh(&mut terrain.store)?;
    let vs = desc.vertical_scale();
    let camera = framing_camera(&renderer, &desc, vs);
    let mut view = default_view(&desc, vs);
    let mut target = Offscreen::new(gpu, run.image)?;
    let paint = PaintLoad::noise(NoiseKind::Jordan, run.radius, 0.005, run.rate);
    let mut work = WithLighting {
        work: PaintLoop::new(terrain, Some(&paint)),
        lighting: None,
        budget_ms: None,
        log: Vec::new(),
    };
    if let Some(l) = lit {
        let settings = LightSettings {
            sun: l.sun,
            vertical_scale: vs,
        };
        view.sun = Some(l.sun);
        view.look = Some(Look::default());
        // Caught up before the frames: following the view (as in the editor), the far level
        // and the pages a first frame draws at page level; else every page.
        l.lighting.follow_view(l.follow);
        l.lighting.set_detached(false);
        if l.follow {
            target.render(&mut renderer, work.store(), &camera, &view, false, None)?;
            l.lighting.want_first(&renderer.pages_in_use());
        }
        l.lighting.update(work.store(), &settings, None)?;
        // Frames are in flight: the lighting's submissions are not waited for either.
        l.lighting.set_detached(true);
        work.lighting = Some((l.lighting, settings));
        work.budget_ms = Some(l.budget_ms);
    }
    // The frame loop keeps the GPU busy enough to hold its clocks once they are up.
    heater.heat(HEAT_LONG_MS)?;
    let log = run_frames(
        &mut work,
        &mut renderer,
        &mut target,
        &camera,
        &view,
        WARMUP_FRAMES,
        run.frames,
    )?;
    if let Some((lighting, _)) = &mut work.lighting {
        lighting.set_detached(false);
    }
    Ok((log, work.log))
}

/// Three standard errors of the mean of `v`, over the mean (0 for fewer than two values).
fn mean_uncertainty(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    super::ratio(3.0 * (var / n).sqrt(), mean)
}
