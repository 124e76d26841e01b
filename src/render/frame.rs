//! One frame's recording, the same for the editor's swapchain images, offscreen targets and the
//! frame benchmark: the tile bounds of edited pages, the terrain into the G-buffer and depth, the
//! shading pass, the shaded image drawn into the target with an overlay in the same rendering
//! (the editor's imgui), the covered-pixel count behind the
//! triangle budget, and the depth under a picked pixel. [`submit_frame`] submits it without
//! waiting (two frames in flight); its results come back from
//! [`TerrainRenderer::begin_frame`] when the slot comes round again, or
//! [`TerrainRenderer::finish_frames`].

use super::terrain::TerrainRenderer;
use crate::gpu::{vk, Access, GpuTimer, Image, Recorder, Result, Ticket};
use crate::pages::PageStore;

/// What one frame draws into.
pub struct FrameTargets<'a> {
    pub color: &'a Image,
    pub depth: &'a Image,
    /// A pixel whose terrain point the frame's results report ([`super::FrameResults::picked`]).
    pub pick: Option<[u32; 2]>,
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
        self.current_slot_mut().pick_at = t.pick;
        let this = &*self;
        let timer = this.frame_timer();
        if let Some(timer) = timer {
            rec.reset_timer(timer);
        }
        // Tile bounds of pages edited since the last frame (results taken when it is retired).
        this.record_frame_bounds(rec, store.height(), timer)?;
        this.record(rec, store, t.color, t.depth, timer)?;
        overlay(rec, timer)?;
        rec.end_rendering();
        this.record_coverage(rec, t.depth)?;
        if let Some(p) = t.pick {
            let pick = this.pick_buffer();
            rec.copy_image_region_to_buffer(t.depth, [p[0] as i32, p[1] as i32], [1, 1], pick, 0);
            rec.buffer(pick, Access::HostRead);
        }
        Ok(())
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
