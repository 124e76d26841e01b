//! One frame's recording, the same for the editor's swapchain images, offscreen targets and the
//! frame benchmark: the terrain into colour and depth, an overlay drawn in the same rendering (the
//! editor's imgui), the covered-pixel count behind the triangle budget, and the depth under a
//! picked pixel. The caller submits, then reads back with [`TerrainRenderer::read_coverage`]
//! and [`picked_point`].

use super::camera::{unproject, Camera};
use super::terrain::TerrainRenderer;
use crate::gpu::{Access, Buffer, DescriptorSet, GpuTimer, Image, Recorder, Result};
use crate::pages::PageStore;
use glam::Vec3;

/// What one frame draws into and reads back.
pub struct FrameTargets<'a> {
    pub color: &'a Image,
    pub depth: &'a Image,
    /// The coverage-count set of `depth` ([`TerrainRenderer::coverage_set`]).
    pub coverage: &'a DescriptorSet,
    /// Times the terrain draw ("terrain draw"); the overlay may add its own queries.
    pub timer: Option<&'a GpuTimer>,
    /// A pixel whose depth is copied into the buffer (4 bytes, host-visible) for picking.
    pub pick: Option<([u32; 2], &'a Buffer)>,
}

impl TerrainRenderer {
    /// Records a prepared frame ([`Self::prepare`]) into `t`, with `overlay` drawn inside the same
    /// rendering after the terrain.
    pub fn record_frame<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
        t: &FrameTargets<'a>,
        overlay: impl FnOnce(&mut Recorder<'a>) -> Result<()>,
    ) -> Result<()> {
        self.record(
            rec,
            store,
            t.color,
            t.depth,
            t.timer.map(|timer| (timer, "terrain draw")),
        )?;
        overlay(rec)?;
        rec.end_rendering();
        self.record_coverage(rec, t.depth, t.coverage)?;
        if let Some((p, buffer)) = t.pick {
            rec.copy_image_region_to_buffer(t.depth, [p[0] as i32, p[1] as i32], [1, 1], buffer, 0);
            rec.buffer(buffer, Access::HostRead);
        }
        Ok(())
    }
}

/// The terrain point under `pixel` of a `viewport` seen by `camera`, from the depth a frame
/// copied into `pick` (None: the sky).
pub fn picked_point(
    pick: &Buffer,
    camera: &Camera,
    viewport: [u32; 2],
    pixel: [u32; 2],
) -> Result<Option<Vec3>> {
    let d = f32::from_le_bytes(pick.mapped(4)?.try_into().expect("4 bytes"));
    Ok(unproject(&camera.view_proj(viewport), viewport, pixel, d))
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
