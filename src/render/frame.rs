//! One frame's recording, the same for the editor's swapchain images, offscreen targets and the
//! frame benchmark: the tile bounds of edited pages, the terrain into the G-buffer and depth, the
//! shading pass, the shaded image drawn into the target with an overlay in the same rendering
//! (the editor's imgui), the covered-pixel count behind the
//! triangle budget, and the depth under a picked pixel. [`submit_frame`] submits it without
//! waiting (two frames in flight); its results come back from
//! [`TerrainRenderer::begin_frame`] when the slot comes round again, or
//! [`TerrainRenderer::finish_frames`].

use super::picks::{picked_points, record_picks};
use super::terrain::TerrainRenderer;
use crate::gpu::{vk, Buffer, GpuTimer, Image, Recorder, Result, Ticket};
use crate::pages::PageStore;

/// What one frame draws into.
pub struct FrameTargets<'a> {
    pub color: &'a Image,
    pub depth: &'a Image,
    /// Pixels whose terrain points the frame's results report, in this order
    /// ([`super::FrameResults::picked`]); [`super::terrain::MAX_PICKS`] at most.
    pub picks: Vec<[u32; 2]>,
    /// Show the last drawn picture again instead of drawing the terrain (the overlay is still
    /// drawn over it, and picks read its depths): for a frame whose terrain would cost more than
    /// the frame may take. Ignored, and the terrain drawn, when there is no picture in `depth`.
    pub keep_terrain: bool,
}

impl TerrainRenderer {
    /// Records the frame begun by [`Self::begin_frame`], caught up by [`Self::refresh`] and
    /// prepared by [`Self::prepare`] into `t`, with `overlay` (given the frame's timer) drawn
    /// inside the same rendering after the terrain. Submit it with [`submit_frame`].
    pub fn record_frame<'a>(
        &'a mut self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
        t: &FrameTargets<'a>,
        overlay: impl FnOnce(&mut Recorder<'a>, Option<&'a GpuTimer>) -> Result<()>,
    ) -> Result<()> {
        self.bind_targets(store, t.color, t.depth)?;
        let keep = self.note_picture(t.depth, t.keep_terrain);
        let slot = self.current_slot_mut();
        slot.pick_at = t
            .picks
            .iter()
            .take(super::terrain::MAX_PICKS)
            .copied()
            .collect();
        slot.drew_terrain = !keep;
        let this = &*self;
        let timer = this.frame_timer();
        if let Some(timer) = timer {
            rec.reset_timer(timer);
        }
        // Tile bounds of pages edited since the last frame (results taken when it is retired).
        this.record_frame_bounds(rec, store.height(), timer)?;
        if keep {
            this.record_kept(rec, store, t.color)?;
        } else {
            this.record(rec, store, t.color, t.depth, timer)?;
        }
        overlay(rec, timer)?;
        rec.end_rendering();
        this.record_coverage(rec, t.depth)?;
        record_picks(
            rec,
            t.depth,
            &this.current_slot().pick_at,
            this.pick_buffer(),
        );
        Ok(())
    }
}

impl TerrainRenderer {
    /// The terrain points under `pixels` of the last picture drawn into `depth`, picked at once
    /// (the recording is waited for): for pixels no frame picked, once every frame in flight has
    /// finished ([`Self::finish_frames`]). None for a pixel over the sky, or for every pixel
    /// while no picture was drawn into `depth`.
    pub fn pick_now(&self, depth: &Image, pixels: &[[u32; 2]]) -> Result<Vec<Option<glam::Vec3>>> {
        let Some(view) = self.drawn_view(depth) else {
            return Ok(vec![None; pixels.len()]);
        };
        if pixels.is_empty() {
            return Ok(Vec::new());
        }
        let buffer = Buffer::new(
            self.gpu(),
            "pick now",
            crate::gpu::BufferDesc::readback(4 * pixels.len() as u64),
        )?;
        let mut rec = Recorder::new(self.gpu())?;
        record_picks(&mut rec, depth, pixels, &buffer);
        rec.submit_and_wait()?;
        picked_points(&buffer, pixels, view)
    }
}

/// Submits a frame recorded by [`TerrainRenderer::record_frame`] without waiting for it
/// (waiting for `wait` before executing and signalling `signal` when done, for a swapchain
/// image). Hand the ticket to [`TerrainRenderer::frame_submitted`] before the next frame.
#[must_use = "the renderer needs the ticket to know when the frame has finished"]
pub fn submit_frame(
    rec: Recorder<'_>,
    wait: Option<(vk::Semaphore, vk::PipelineStageFlags)>,
    signal: Option<vk::Semaphore>,
) -> Result<Ticket> {
    let _p = crate::profile::scope("render: submit frame");
    // SAFETY: what the host writes or reads of a frame (uniforms, tile draws, bounds, coverage,
    // pick, timer, frame and page sets) lives in the renderer's slot for this frame, which it
    // touches again only after waiting for this ticket (`begin_frame`, `finish_frames`); what is
    // dropped meanwhile is released after the frame (gpu::retire).
    unsafe { rec.submit_detached(wait, signal) }
}

/// Most bytes of page-ins served between two frames ([`serve_requests`]): about 2 ms of bus time
/// on a desktop GPU, so a frame never stalls long on pages it could draw coarse.
pub const PAGE_INS_PER_FRAME: u64 = 64 << 20;

/// Brings the pages the last prepared frame asked for onto the GPU (most wanted first, at most
/// `max_bytes`), keeping the pages it drew from; returns how many came. Call between frames,
/// after the frame's submission completed.
pub fn serve_requests(
    renderer: &TerrainRenderer,
    store: &mut PageStore,
    max_bytes: u64,
) -> std::result::Result<usize, crate::pages::PageError> {
    if renderer.stats.pages_requested == 0 {
        return Ok(0);
    }
    let _p = crate::profile::scope("render: page-ins");
    store
        .height_mut()
        .bring_in(renderer.requests(), &renderer.pages_in_use(), max_bytes)
}
