//! Frames in flight: what one frame owns while the GPU may still draw it (its uniforms, tile
//! draws, frame set, tile-bounds output, covered-pixel count, picked depth and timer), in
//! [`SLOTS`] copies used in turn. A slot is written by the host only after the frame that last
//! used it has finished ([`TerrainRenderer::begin_frame`] waits for it and takes its results), so
//! the host prepares frame N+1 while the GPU draws frame N.

use super::{BoundsJob, FrameStats, TerrainRenderer};
use crate::gpu::{
    vk, Bound, Buffer, BufferDesc, DescriptorSet, Gpu, GpuTimer, Image, MemoryLocation, PassTime,
    Resource, Result, SetHandle, SetPool, Ticket,
};
use crate::pages::geometry::Rect;
use crate::render::shared::{FrameData, TileDraw};
use glam::{Mat4, Vec3};
use std::sync::Arc;

/// Frames the host may run ahead of the GPU by: two frames in flight.
pub const SLOTS: usize = 2;
/// Most pixels one frame picks (the editor's cursor and a stroke's motion events since the last
/// frame).
pub const MAX_PICKS: usize = 256;

/// What a finished frame measured and read back.
#[derive(Clone, Debug, Default)]
pub struct FrameResults {
    /// What the frame drew (as prepared), with the tile-bounds GPU time it recorded.
    pub stats: FrameStats,
    /// Pixels the terrain covered.
    pub covered_pixels: u64,
    /// GPU times of its timed passes ("tile bounds", "terrain draw", and the overlay's).
    pub times: Vec<PassTime>,
    /// The pixels the frame picked, in the order asked, and the terrain point under each (None:
    /// the sky).
    pub picked: Vec<([u32; 2], Option<Vec3>)>,
    /// The frame's number ([`TerrainRenderer::frame_number`] while it was recorded).
    pub frame: u64,
    /// Whether the frame drew the terrain (else it showed the last frame's picture again).
    pub drew_terrain: bool,
    /// From the frame's submission to its results: what the frame cost the host's loop, at
    /// least (frames in flight overlap, so it may include the next frame's host work).
    pub latency: std::time::Duration,
}

impl FrameResults {
    /// GPU time of the passes labelled `label`, ms (0 without timestamps).
    pub fn gpu_ms(&self, label: &str) -> f64 {
        pass_ms(&self.times, label)
    }
}

/// GPU time of the passes of `times` labelled `label`, ms.
fn pass_ms(times: &[PassTime], label: &str) -> f64 {
    times
        .iter()
        .filter(|p| p.label == label)
        .map(|p| p.gpu_ns)
        .sum::<f64>()
        * 1e-6
}

/// One frame's resources; see the module docs.
pub(crate) struct FrameSlot {
    /// The submission of the frame that last used the slot, until taken.
    pub ticket: Option<Ticket>,
    /// Number of that frame ([`TerrainRenderer::begin_frame`] counts them).
    pub frame: u64,
    pub uniforms: Buffer,
    pub tiles: Buffer,
    /// Uniforms, tile draws, coarse level.
    pub set: SetHandle,
    pub coarse_view: vk::ImageView,
    /// The page atlases' tables (the lighting's, the rivers', the heights', the overlay's) as this frame
    /// shades with them, and the generations they hold.
    pub tables: [Buffer; 4],
    pub table_generations: [u64; 4],
    /// The shading pass's set and the composition's (the shaded image into the target).
    pub shade_set: super::deferred::ShadeSet,
    pub compose_set: SetHandle,
    /// Tile bounds the frame computes: one page range (`bounds_stride`) per job, in order.
    pub bounds: Buffer,
    pub bounds_set: SetHandle,
    pub(super) bounds_jobs: Vec<BoundsJob>,
    /// Tiles the frame's refresh estimated from the coarse level, and the coarse texels they lie
    /// in, copied into `estimates` by the frame (taken when it is retired).
    pub(super) estimate_jobs: Vec<BoundsJob>,
    pub(super) estimate_rect: Rect,
    pub(super) estimates: Option<Buffer>,
    pub coverage: Buffer,
    /// The coverage kernel's set for the depth target of that view.
    pub coverage_set: Option<(vk::ImageView, DescriptorSet)>,
    /// Depths under the picked pixels, [`MAX_PICKS`] of them at most.
    pub pick: Buffer,
    /// The pixels the frame picks.
    pub pick_at: Vec<[u32; 2]>,
    /// Whether the frame draws the terrain, and when it was submitted.
    pub drew_terrain: bool,
    pub submitted: Option<std::time::Instant>,
    /// The frame's view-projection and viewport.
    pub view: (Mat4, [u32; 2]),
    pub timer: Option<GpuTimer>,
    /// What the frame drew.
    pub stats: FrameStats,
}

impl FrameSlot {
    /// A slot with sets from `[frame, bounds output, composition]` pools, `table_bytes` of each
    /// atlas table.
    pub fn new(
        gpu: &Arc<Gpu>,
        [frame_pool, out_pool, compose_pool]: [&mut SetPool; 3],
        bounds_stride: u64,
        table_bytes: u64,
    ) -> Result<Self> {
        let uniforms = Buffer::new(
            gpu,
            "frame uniforms",
            BufferDesc::new(std::mem::size_of::<FrameData>() as u64)
                .usage(vk::BufferUsageFlags::UNIFORM_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::CpuToGpu),
        )?;
        let table = |name| {
            Buffer::new(
                gpu,
                name,
                BufferDesc::new(table_bytes.max(4))
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .location(MemoryLocation::CpuToGpu),
            )
        };
        let tables = [
            table("light table")?,
            table("rivers table")?,
            table("heights table")?,
            table("overlay table")?,
        ];
        let tiles = tile_buffer(gpu, 4096)?;
        let bounds = bounds_buffer(gpu, bounds_stride, 64)?;
        let set = frame_pool.allocate()?;
        frame_pool.write(set, 0, Bound::Buffer(&uniforms, None))?;
        frame_pool.write(set, 1, Bound::Buffer(&tiles, None))?;
        let bounds_set = out_pool.allocate()?;
        out_pool.write(bounds_set, 0, Bound::Buffer(&bounds, Some(bounds_stride)))?;
        Ok(Self {
            ticket: None,
            frame: 0,
            uniforms,
            tiles,
            set,
            coarse_view: vk::ImageView::null(),
            tables,
            table_generations: [0; 4],
            shade_set: None,
            compose_set: compose_pool.allocate()?,
            bounds,
            bounds_set,
            bounds_jobs: Vec::new(),
            estimate_jobs: Vec::new(),
            estimate_rect: Rect::EMPTY,
            estimates: None,
            coverage: Buffer::new(
                gpu,
                "covered pixels",
                BufferDesc::new(4)
                    .usage(
                        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
                    )
                    .location(MemoryLocation::GpuToCpu),
            )?,
            coverage_set: None,
            pick: Buffer::new(
                gpu,
                "pick readback",
                BufferDesc::readback(4 * MAX_PICKS as u64),
            )?,
            pick_at: Vec::new(),
            drew_terrain: false,
            submitted: None,
            view: (Mat4::IDENTITY, [0, 0]),
            timer: GpuTimer::new(gpu, 8)?,
            stats: FrameStats::default(),
        })
    }
}

/// A host-visible buffer for `instances` tile draws.
fn tile_buffer(gpu: &Arc<Gpu>, instances: usize) -> Result<Buffer> {
    Buffer::new(
        gpu,
        "tile draws",
        BufferDesc::new((instances * std::mem::size_of::<TileDraw>()) as u64)
            .location(MemoryLocation::CpuToGpu),
    )
}

/// A host-readable buffer for the tile bounds of `pages` pages.
fn bounds_buffer(gpu: &Arc<Gpu>, stride: u64, pages: usize) -> Result<Buffer> {
    Buffer::new(
        gpu,
        "tile bounds",
        BufferDesc::new(stride * pages as u64).location(MemoryLocation::GpuToCpu),
    )
}

impl TerrainRenderer {
    /// Starts a frame: takes the next slot, waiting for the frame that last used it and taking
    /// its results (its tile bounds go into the quadtree's bounds; its covered pixels set the
    /// next triangle budget). Call before [`Self::refresh`] and [`Self::prepare`].
    pub fn begin_frame(&mut self) -> Result<Option<FrameResults>> {
        self.slot = (self.slot + 1) % SLOTS;
        self.frame_no += 1;
        let results = self.retire(self.slot)?;
        self.slots[self.slot].frame = self.frame_no;
        Ok(results)
    }

    /// The number of the frame begun last (counted from 1).
    pub fn frame_number(&self) -> u64 {
        self.frame_no
    }

    /// Notes the submission of the frame recorded by [`Self::record_frame`].
    pub fn frame_submitted(&mut self, ticket: Ticket) {
        let slot = &mut self.slots[self.slot];
        slot.ticket = Some(ticket);
        slot.submitted = Some(std::time::Instant::now());
    }

    /// Waits for every frame in flight, oldest first, and returns their results.
    pub fn finish_frames(&mut self) -> Result<Vec<FrameResults>> {
        let mut out = Vec::new();
        for k in 1..=SLOTS {
            let i = (self.slot + k) % SLOTS;
            out.extend(self.retire(i)?);
        }
        Ok(out)
    }

    /// Whether a frame submitted earlier may still run.
    pub fn frames_in_flight(&self) -> bool {
        self.slots.iter().any(|s| s.ticket.is_some())
    }

    /// Waits for slot `i`'s frame (if one was submitted) and takes its results.
    fn retire(&mut self, i: usize) -> Result<Option<FrameResults>> {
        let Some(ticket) = self.slots[i].ticket.take() else {
            return Ok(None);
        };
        self.gpu.wait_for(ticket)?;
        self.retired_through = self.retired_through.max(self.slots[i].frame);
        let slot = &mut self.slots[i];
        let covered = u64::from(u32::from_le_bytes(
            slot.coverage.mapped(4)?.try_into().expect("4 bytes"),
        ));
        let times = match &slot.timer {
            Some(t) => t.results()?,
            None => Vec::new(),
        };
        let pixels = std::mem::take(&mut slot.pick_at);
        let points = crate::render::picks::picked_points(&slot.pick, &pixels, slot.view)?;
        let picked = pixels.into_iter().zip(points).collect();
        let latency = slot
            .submitted
            .take()
            .map_or_else(Default::default, |t| t.elapsed());
        let mut stats = std::mem::take(&mut slot.stats);
        // Bounds computed in the frame, beside any computed at once by its refresh.
        stats.bounds_gpu_ms += pass_ms(&times, "tile bounds");
        let jobs = std::mem::take(&mut slot.bounds_jobs);
        let estimates = std::mem::take(&mut slot.estimate_jobs);
        self.covered_pixels = Some(covered);
        self.apply_bounds(i, &jobs)?;
        self.apply_estimates(i, &estimates)?;
        Ok(Some(FrameResults {
            stats,
            covered_pixels: covered,
            times,
            picked,
            frame: self.slots[i].frame,
            drew_terrain: self.slots[i].drew_terrain,
            latency,
        }))
    }

    pub(in crate::render) fn current_slot(&self) -> &FrameSlot {
        &self.slots[self.slot]
    }

    pub(in crate::render) fn current_slot_mut(&mut self) -> &mut FrameSlot {
        &mut self.slots[self.slot]
    }

    /// The current frame's timer (none without timestamps).
    pub(in crate::render) fn frame_timer(&self) -> Option<&GpuTimer> {
        self.slots[self.slot].timer.as_ref()
    }

    /// The current frame's pick readback.
    pub(in crate::render) fn pick_buffer(&self) -> &Buffer {
        &self.slots[self.slot].pick
    }

    /// Makes the current slot's frame set point at `coarse` (when it does not already).
    pub(super) fn bind_coarse(&mut self, coarse: &Image) -> Result<()> {
        let slot = &mut self.slots[self.slot];
        if slot.coarse_view != coarse.view {
            self.frame_pool
                .write(slot.set, 2, Bound::StorageImages(&[coarse]))?;
            slot.coarse_view = coarse.view;
        }
        Ok(())
    }

    /// Writes `draws` into the current slot's tile buffer (grown as needed).
    pub(super) fn upload_draws(&mut self, draws: &[TileDraw]) -> Result<()> {
        let slot = &mut self.slots[self.slot];
        if slot.tiles.desc.size < std::mem::size_of_val(draws) as u64 {
            // The slot's last frame has finished: the old buffer can go.
            slot.tiles = tile_buffer(&self.gpu, draws.len().next_power_of_two())?;
            self.frame_pool
                .write(slot.set, 1, Bound::Buffer(&slot.tiles, None))?;
        }
        slot.tiles.write(draws)
    }

    /// Makes the current slot's bounds output hold `pages` page ranges.
    pub(super) fn reserve_bounds(&mut self, pages: usize) -> Result<()> {
        let stride = self.bounds_stride;
        let slot = &mut self.slots[self.slot];
        if slot.bounds.desc.size < stride * pages as u64 {
            slot.bounds = bounds_buffer(&self.gpu, stride, pages.next_power_of_two())?;
            self.out_pool.write(
                slot.bounds_set,
                0,
                Bound::Buffer(&slot.bounds, Some(stride)),
            )?;
        }
        Ok(())
    }

    /// Makes the current slot's coverage set read `depth`.
    pub(in crate::render) fn bind_depth(&mut self, depth: &Image) -> Result<()> {
        let slot = &self.slots[self.slot];
        if slot
            .coverage_set
            .as_ref()
            .is_some_and(|c| c.0 == depth.view)
        {
            return Ok(());
        }
        let set = self.coverage_kernel.bind(&[
            Resource::SampledImage(depth),
            Resource::StorageBuffer(&slot.coverage),
        ])?;
        self.slots[self.slot].coverage_set = Some((depth.view, set));
        Ok(())
    }
}
