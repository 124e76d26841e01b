//! Drawing without a window: a colour and a depth target, read back to the host.

use super::camera::Camera;
use super::frame::{picked_point, serve_requests, FrameTargets, PAGE_INS_PER_FRAME};
use super::terrain::{RenderOptions, TerrainRenderer, ViewSettings, DEPTH_FORMAT};
use crate::gpu::{
    vk, Access, Buffer, BufferDesc, DescriptorSet, Gpu, GpuTimer, Image, ImageDesc, Recorder,
    Result,
};
use crate::pages::{PageError, PageStore};
use glam::Vec3;
use std::sync::Arc;

/// Colour format of offscreen targets.
pub const OFFSCREEN_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Options for [`TerrainRenderer::new`] that match offscreen targets.
pub fn offscreen_options() -> RenderOptions {
    RenderOptions {
        color_format: OFFSCREEN_FORMAT,
    }
}

/// What one offscreen frame produced.
#[derive(Clone, Debug, Default)]
pub struct OffscreenFrame {
    /// RGBA8 rows, top first (when read back).
    pub pixels: Option<Vec<u8>>,
    /// The terrain point under the picked pixel (None: sky, or nothing picked).
    pub picked: Option<Vec3>,
    /// GPU time of the terrain draw (timestamps; 0 without them).
    pub draw_gpu_ms: f64,
}

/// Colour and depth targets of one size.
pub struct Offscreen {
    gpu: Arc<Gpu>,
    pub size: [u32; 2],
    color: Image,
    depth: Image,
    readback: Buffer,
    pick: Buffer,
    timer: Option<GpuTimer>,
    coverage: Option<DescriptorSet>,
}

impl Offscreen {
    pub fn new(gpu: &Arc<Gpu>, size: [u32; 2]) -> Result<Self> {
        let color = Image::new(
            gpu,
            "offscreen colour",
            ImageDesc::new_2d(OFFSCREEN_FORMAT, size)
                .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC),
        )?;
        let depth = Image::new(
            gpu,
            "offscreen depth",
            ImageDesc::new_2d(DEPTH_FORMAT, size).usage(
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::SAMPLED,
            ),
        )?;
        let readback = Buffer::new(
            gpu,
            "offscreen readback",
            BufferDesc::readback(u64::from(size[0]) * u64::from(size[1]) * 4),
        )?;
        let pick = Buffer::new(gpu, "pick readback", BufferDesc::readback(4))?;
        Ok(Self {
            gpu: gpu.clone(),
            size,
            color,
            depth,
            readback,
            pick,
            timer: GpuTimer::new(gpu, 2)?,
            coverage: None,
        })
    }

    /// Draws until a frame needs no page it lacks, or no more of them fit the budget (at most
    /// `rounds` frames, serving the renderer's page requests between them,
    /// [`PAGE_INS_PER_FRAME`] each); returns the last frame. What `scarp render` writes.
    #[allow(clippy::too_many_arguments)]
    pub fn render_settled(
        &mut self,
        renderer: &mut TerrainRenderer,
        store: &mut PageStore,
        camera: &Camera,
        view: &ViewSettings,
        read_pixels: bool,
        pick: Option<[u32; 2]>,
        rounds: usize,
    ) -> Result<OffscreenFrame, PageError> {
        for _ in 1..rounds.max(1) {
            let f = self.render(renderer, store, camera, view, read_pixels, pick)?;
            if serve_requests(renderer, store, PAGE_INS_PER_FRAME)? == 0 {
                return Ok(f);
            }
        }
        self.render(renderer, store, camera, view, read_pixels, pick)
    }

    /// Brings `renderer` up to date with `store`'s height field, draws it from `camera` and, as
    /// asked, reads the image back and picks the terrain point under pixel `pick`. Regions whose
    /// pages are not on the GPU are drawn coarse; their pages are in
    /// [`TerrainRenderer::requests`].
    pub fn render(
        &mut self,
        renderer: &mut TerrainRenderer,
        store: &mut PageStore,
        camera: &Camera,
        view: &ViewSettings,
        read_pixels: bool,
        pick: Option<[u32; 2]>,
    ) -> Result<OffscreenFrame, PageError> {
        renderer.refresh(store)?;
        let store = &*store;
        renderer.prepare(store, camera, self.size, view)?;
        let _p = crate::profile::scope("render: record and submit");
        if self.coverage.is_none() {
            self.coverage = Some(renderer.coverage_set(&self.depth)?);
        }
        let coverage = self.coverage.as_ref().expect("made above");
        let renderer_mut = renderer;
        let renderer = &*renderer_mut;
        let mut rec = Recorder::new(&self.gpu)?;
        if let Some(t) = &self.timer {
            rec.reset_timer(t);
        }
        let targets = FrameTargets {
            color: &self.color,
            depth: &self.depth,
            coverage,
            timer: self.timer.as_ref(),
            pick: pick.map(|p| (p, &self.pick)),
        };
        renderer.record_frame(&mut rec, store, &targets, |_| Ok(()))?;
        if read_pixels {
            rec.copy_image_to_buffer(&self.color, &self.readback);
            rec.buffer(&self.readback, Access::HostRead);
        }
        rec.submit_and_wait()?;
        renderer_mut.read_coverage()?;
        let mut frame = OffscreenFrame::default();
        if let Some(t) = &self.timer {
            frame.draw_gpu_ms = t.results()?.iter().map(|p| p.gpu_ns).sum::<f64>() * 1e-6;
        }
        if read_pixels {
            let n = self.size[0] as usize * self.size[1] as usize * 4;
            frame.pixels = Some(self.readback.mapped(n)?.to_vec());
        }
        if let Some(p) = pick {
            frame.picked = picked_point(&self.pick, camera, self.size, p)?;
        }
        Ok(frame)
    }
}
