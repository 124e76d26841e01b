//! Timed frame loops: offscreen frames of a page store's height field while some work edits it
//! between frames (a brush painting, as the editor does: pump the stroke queue under a GPU budget,
//! catch the renderer up, draw). The work is a [`FrameWork`]; `session::PaintLoop` paints. Used by
//! `scarp render --frames` and the benchmarks.

use super::camera::Camera;
use super::frame::{serve_requests, PAGE_INS_PER_FRAME};
use super::offscreen::Offscreen;
use super::terrain::{default_triangles_per_pixel, FrameResults, TerrainRenderer, ViewSettings};
use crate::gpu::GpuError;
use crate::pages::geometry::{DocumentDesc, PageId};
use crate::pages::{PageError, PageStore};
use std::time::Instant;

/// What changes the document between frames.
pub trait FrameWork {
    /// The work's errors; drawing and paging errors convert into them.
    type Error: From<GpuError> + From<PageError>;
    /// The pages drawn.
    fn store(&mut self) -> &mut PageStore;
    /// Runs frame `frame`'s work; returns its GPU time in ms.
    fn before_frame(&mut self, frame: usize) -> Result<f64, Self::Error>;
    /// After a frame was prepared and drawn: the pages it draws at page level.
    fn drawn(&mut self, _pages_in_use: &[PageId]) {}
    /// Finishes any work still queued once the frames are done.
    fn finish(&mut self) -> Result<(), Self::Error>;
    /// Units of work done (instances painted).
    fn done(&self) -> usize;
}

/// Frame work followed, when `lighting` is given, by a lighting update each frame (the texels
/// near the frame's edits, then the strips farther away within `budget_ms` of GPU time: the
/// editor's order of work), so timed frames pay for keeping shadows and occlusion live. `log`
/// gets each update's figures.
pub struct WithLighting<'l, W> {
    pub work: W,
    pub lighting: Option<(
        &'l mut super::lighting::Lighting,
        super::lighting::LightSettings,
    )>,
    pub budget_ms: Option<f64>,
    pub log: Vec<super::lighting::LightStats>,
}

impl<W: FrameWork> FrameWork for WithLighting<'_, W> {
    type Error = W::Error;

    fn store(&mut self) -> &mut PageStore {
        self.work.store()
    }

    fn before_frame(&mut self, frame: usize) -> Result<f64, Self::Error> {
        let ms = self.work.before_frame(frame)?;
        if let Some((lighting, settings)) = &mut self.lighting {
            let stats = lighting.update(self.work.store(), settings, self.budget_ms)?;
            self.log.push(stats);
        }
        Ok(ms)
    }

    fn drawn(&mut self, pages_in_use: &[PageId]) {
        self.work.drawn(pages_in_use);
        if let Some((lighting, _)) = &mut self.lighting {
            lighting.want_first(pages_in_use);
        }
    }

    fn finish(&mut self) -> Result<(), Self::Error> {
        self.work.finish()
    }

    fn done(&self) -> usize {
        self.work.done()
    }
}

/// What the lighting did per timed frame of a frame loop (the last `frames` updates of a
/// [`WithLighting`] log): GPU ms, texels lit near edits and strip pages lit, and the most pages
/// waiting and those left after the last frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LightPerFrame {
    pub gpu_ms: f64,
    pub near_texels: f64,
    pub strip_pages: f64,
    pub most_waiting: usize,
    pub last_waiting: usize,
    /// Of those after the last frame, pages the renderer draws at page level.
    pub last_waiting_in_view: usize,
}

impl LightPerFrame {
    pub fn of(log: &[super::lighting::LightStats], frames: usize) -> Self {
        let timed = &log[log.len().saturating_sub(frames)..];
        let n = timed.len().max(1) as f64;
        let mean =
            |f: &dyn Fn(&super::lighting::LightStats) -> f64| timed.iter().map(f).sum::<f64>() / n;
        Self {
            gpu_ms: mean(&|s| s.gpu_ms),
            near_texels: mean(&|s| s.near_texels as f64),
            strip_pages: mean(&|s| s.pages as f64),
            most_waiting: timed.iter().map(|s| s.pending).max().unwrap_or(0),
            last_waiting: timed.last().map_or(0, |s| s.pending),
            last_waiting_in_view: timed.last().map_or(0, |s| s.pending_in_view),
        }
    }
}

/// Per-frame measurements.
#[derive(Clone, Debug, Default)]
pub struct FrameLog {
    /// Wall-clock time of each whole frame on the host (pump, refresh, preparation, recording
    /// and submission, the wait for the frame two back), ms.
    pub frame_ms: Vec<f64>,
    pub brush_gpu_ms: Vec<f64>,
    pub bounds_gpu_ms: Vec<f64>,
    pub draw_gpu_ms: Vec<f64>,
    /// The shading pass (deferred: every pixel from the G-buffer), ms.
    pub shade_gpu_ms: Vec<f64>,
    pub triangles: Vec<u64>,
    /// Triangles per covered pixel (covered pixels counted on the GPU each frame).
    pub triangles_per_pixel: Vec<f64>,
    /// The screen-space error bound the LOD selection used (raised by the triangle budget), px.
    pub error_bound_px: Vec<f64>,
    /// CPU time of LOD selection and draw preparation, ms.
    pub prepare_cpu_ms: Vec<f64>,
    /// Wall-clock time of queueing and pumping the brush work (its submissions waited for), ms.
    pub pump_ms: Vec<f64>,
    /// Wall-clock time of catching the renderer up with the edits (coarse level, bounds), ms.
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

/// View settings of `scarp render` and the benchmarks for `desc`: fog scaled to its size.
pub fn default_view(desc: &DocumentDesc, vertical_scale: f32) -> ViewSettings {
    ViewSettings {
        vertical_scale,
        pixel_error: 2.0,
        max_triangles_per_pixel: default_triangles_per_pixel(desc),
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
    let (lo, hi) = renderer.nodes().range();
    let mut cam = Camera::default();
    cam.frame_all(
        desc.width,
        desc.height,
        lo * vertical_scale,
        hi * vertical_scale,
    );
    cam
}

/// Draws `frames` frames (after `warmup` untimed ones), running `work` before each, two frames
/// in flight as in the editor: a frame's wall time is the host's loop (it waits only for the frame
/// two back), its GPU figures arrive when it is retired.
pub fn run_frames<W: FrameWork>(
    work: &mut W,
    renderer: &mut TerrainRenderer,
    target: &mut Offscreen,
    camera: &Camera,
    view: &ViewSettings,
    warmup: usize,
    frames: usize,
) -> Result<FrameLog, W::Error> {
    let mut log = FrameLog::default();
    let mut retired = 0;
    let mut take = |log: &mut FrameLog, done: FrameResults| {
        if retired >= warmup {
            log.bounds_gpu_ms.push(done.stats.bounds_gpu_ms);
            log.draw_gpu_ms.push(done.gpu_ms("terrain draw"));
            log.shade_gpu_ms.push(done.gpu_ms("shade"));
            log.triangles.push(done.stats.triangles);
            log.triangles_per_pixel
                .push(done.stats.triangles as f64 / done.covered_pixels.max(1) as f64);
            log.error_bound_px
                .push(f64::from(done.stats.pixel_error_used));
        }
        retired += 1;
    };
    for frame in 0..warmup + frames {
        if frame == warmup {
            crate::profile::take(); // profile the timed frames only
        }
        let _frame = crate::profile::scope("frame");
        let t0 = Instant::now();
        let brush_ms = {
            let _s = crate::profile::scope("frame: enqueue and pump");
            work.before_frame(frame)?
        };
        let pump_ms = t0.elapsed().as_secs_f64() * 1e3;
        let done = target.draw(renderer, work.store(), camera, view)?;
        work.drawn(&renderer.pages_in_use());
        serve_requests(renderer, work.store(), PAGE_INS_PER_FRAME)?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        if frame >= warmup {
            log.frame_ms.push(ms);
            log.brush_gpu_ms.push(brush_ms);
            log.pump_ms.push(pump_ms);
            log.refresh_ms.push(renderer.stats.refresh_ms);
            log.prepare_cpu_ms.push(renderer.stats.prepare_cpu_ms);
        }
        if let Some(done) = done {
            take(&mut log, done);
        }
    }
    for done in renderer.finish_frames()? {
        take(&mut log, done);
    }
    let report = crate::profile::report();
    if !report.is_empty() {
        eprintln!("CPU profile ({frames} frames):\n{report}");
    }
    // Finish the work so the document is consistent afterwards.
    work.finish()?;
    log.instances_applied = work.done();
    Ok(log)
}
