//! Drawing without a window: a colour and a depth target, read back to the host.

use super::camera::{Camera, ImageWindow};
use super::frame::{serve_requests, submit_frame, FrameTargets, PAGE_INS_PER_FRAME};
use super::terrain::{FrameResults, RenderOptions, TerrainRenderer, ViewSettings, DEPTH_FORMAT};
use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, Image, ImageDesc, Recorder, Result};
use crate::pages::{PageError, PageStore};
use glam::Vec3;
use std::sync::Arc;

/// Colour format of offscreen targets.
pub const OFFSCREEN_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Options for [`TerrainRenderer::new`] that match offscreen targets.
pub fn offscreen_options() -> RenderOptions {
    RenderOptions::new(OFFSCREEN_FORMAT)
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
    /// The part of the whole image this target draws (the whole of it unless set).
    window: ImageWindow,
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
        Ok(Self {
            gpu: gpu.clone(),
            size,
            color,
            depth,
            readback,
            window: ImageWindow::whole(size),
        })
    }

    /// Draws the target-sized window of a `full`-sized image whose top-left pixel is `origin`
    /// (a window past the image's edge draws the view continued there);
    /// [`ImageWindow::whole`] of the target unless set.
    pub fn set_window(&mut self, full: [u32; 2], origin: [u32; 2]) {
        self.window = ImageWindow {
            full,
            origin,
            size: self.size,
        };
    }

    /// Draws until a frame needs no page it lacks, or no more of them fit the budget (at most
    /// `rounds` frames, each waited for, serving the renderer's page requests between them,
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
        let mut f = self.render(renderer, store, camera, view, read_pixels, pick)?;
        for _ in 1..rounds.max(1) {
            if serve_requests(renderer, store, PAGE_INS_PER_FRAME)? == 0 {
                break;
            }
            f = self.render(renderer, store, camera, view, read_pixels, pick)?;
        }
        Ok(f)
    }

    /// One frame in flight: begins a frame, brings `renderer` up to date with `store`'s height
    /// field, draws it from `camera` and submits without waiting. Returns the results of the
    /// frame that finished to make room (two frames earlier). Regions whose pages are not on the
    /// GPU are drawn coarse; their pages are in [`TerrainRenderer::requests`].
    pub fn draw(
        &mut self,
        renderer: &mut TerrainRenderer,
        store: &mut PageStore,
        camera: &Camera,
        view: &ViewSettings,
    ) -> Result<Option<FrameResults>, PageError> {
        self.submit(renderer, store, camera, view, false, None, false)
    }

    /// One frame waited for: [`Self::draw`], then the wait for every frame in flight; reads the
    /// image back and picks the terrain point under pixel `pick` as asked.
    pub fn render(
        &mut self,
        renderer: &mut TerrainRenderer,
        store: &mut PageStore,
        camera: &Camera,
        view: &ViewSettings,
        read_pixels: bool,
        pick: Option<[u32; 2]>,
    ) -> Result<OffscreenFrame, PageError> {
        self.submit(renderer, store, camera, view, read_pixels, pick, false)?;
        self.finished(renderer, read_pixels)
    }

    /// [`Self::render`] of a frame that keeps the last picture (as the editor does while the
    /// terrain would cost more than its frame budget): the terrain is not drawn again, and
    /// `pick` reads the kept picture's depths.
    pub fn render_kept(
        &mut self,
        renderer: &mut TerrainRenderer,
        store: &mut PageStore,
        camera: &Camera,
        view: &ViewSettings,
        pick: Option<[u32; 2]>,
    ) -> Result<OffscreenFrame, PageError> {
        self.submit(renderer, store, camera, view, true, pick, true)?;
        self.finished(renderer, true)
    }

    /// The frames in flight waited for; the last one's results and pixels.
    fn finished(
        &mut self,
        renderer: &mut TerrainRenderer,
        read_pixels: bool,
    ) -> Result<OffscreenFrame, PageError> {
        let done = renderer.finish_frames()?;
        let last = done.last().cloned().unwrap_or_default();
        let mut frame = OffscreenFrame {
            picked: last.picked.first().and_then(|p| p.1),
            draw_gpu_ms: last.gpu_ms("terrain draw"),
            ..OffscreenFrame::default()
        };
        if read_pixels {
            let n = self.size[0] as usize * self.size[1] as usize * 4;
            frame.pixels = Some(self.readback.mapped(n)?.to_vec());
        }
        Ok(frame)
    }

    /// One frame submitted (keeping the last picture with `keep_terrain`); the results of the
    /// frame that finished to make room.
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        renderer: &mut TerrainRenderer,
        store: &mut PageStore,
        camera: &Camera,
        view: &ViewSettings,
        read_pixels: bool,
        pick: Option<[u32; 2]>,
        keep_terrain: bool,
    ) -> Result<Option<FrameResults>, PageError> {
        let finished = renderer.begin_frame()?;
        renderer.refresh(store)?;
        let store = &*store;
        renderer.prepare(store, camera, self.window, view)?;
        let _p = crate::profile::scope("render: record and submit");
        let mut rec = Recorder::new(&self.gpu)?;
        let targets = FrameTargets {
            color: &self.color,
            depth: &self.depth,
            picks: pick.into_iter().collect(),
            keep_terrain,
        };
        renderer.record_frame(&mut rec, store, &targets, |_, _| Ok(()))?;
        if read_pixels {
            rec.copy_image_to_buffer(&self.color, &self.readback);
            rec.buffer(&self.readback, Access::HostRead);
        }
        let ticket = submit_frame(rec, None, None)?;
        renderer.frame_submitted(ticket);
        Ok(finished)
    }
}
