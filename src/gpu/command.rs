//! Command recording and submission.
//!
//! A [`Recorder`] records one command buffer. Every resource it touches is borrowed for the
//! recorder's lifetime `'a`, and [`Recorder::submit_and_wait`] consumes it and returns only after
//! the submission's fence has signalled ([`Recorder::submit`] returns an [`InFlight`] that holds
//! the borrows until waited for): so no resource can be dropped, or changed by the host, while
//! the GPU may still use it. Accesses are declared per resource ([`Access`]); the recorder
//! turns them into batched synchronization2 barriers, flushed right before the next command.
//! Compute work goes through [`Pass`]: declare what it reads and writes, push its parameters,
//! dispatch.

use super::barrier::{Access, Transition};
use super::buffer::Buffer;
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::graphics::{ComputePipeline, GraphicsPipeline, PipelineLayout, SetHandle};
use super::image::{Image, COLOR_LAYERS, COLOR_RANGE};
use super::pipeline::{ComputeKernel, DescriptorSet};
use super::retire::Ticket;
use super::timestamps::GpuTimer;
use ash::vk;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// How long a submission may run before we report the GPU as hung.
const SUBMIT_TIMEOUT: Duration = Duration::from_secs(600);

/// Records one command buffer; see the module docs.
pub struct Recorder<'a> {
    gpu: &'a Arc<Gpu>,
    cmd: vk::CommandBuffer,
    image_barriers: Vec<vk::ImageMemoryBarrier2<'static>>,
    buffer_barriers: Vec<vk::BufferMemoryBarrier2<'static>>,
    _resources: PhantomData<&'a ()>,
}

impl<'a> Recorder<'a> {
    pub fn new(gpu: &'a Arc<Gpu>) -> Result<Self> {
        let device = gpu.device();
        let cmd = {
            let pool = gpu.command_pool();
            let info = vk::CommandBufferAllocateInfo::default()
                .command_pool(*pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            // SAFETY: valid pool, externally synchronized by the mutex guard.
            unsafe { device.allocate_command_buffers(&info)?[0] }
        };
        let rec = Self {
            gpu,
            cmd,
            image_barriers: Vec::new(),
            buffer_barriers: Vec::new(),
            _resources: PhantomData,
        };
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: freshly allocated command buffer.
        unsafe { device.begin_command_buffer(cmd, &begin)? };
        Ok(rec)
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        self.gpu
    }

    /// Declares the next access to `image`; a barrier is queued if one is needed.
    pub fn image(&mut self, image: &'a Image, access: Access) {
        let mut state = image.state.get();
        if let Some(t) = state.advance(access, true) {
            self.image_barriers
                .push(image_barrier(image.raw, image.range(), t));
        }
        image.state.set(state);
    }

    /// Declares the next access to `buffer`; a barrier is queued if one is needed.
    pub fn buffer(&mut self, buffer: &'a Buffer, access: Access) {
        let mut state = buffer.state.get();
        if let Some(t) = state.advance(access, false) {
            self.buffer_barriers.push(
                vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(t.src_stage)
                    .src_access_mask(t.src_access)
                    .dst_stage_mask(t.dst_stage)
                    .dst_access_mask(t.dst_access)
                    .buffer(buffer.raw)
                    .offset(0)
                    .size(vk::WHOLE_SIZE),
            );
        }
        buffer.state.set(state);
    }

    /// Records all queued barriers as one `vkCmdPipelineBarrier2`.
    pub fn flush_barriers(&mut self) {
        if self.image_barriers.is_empty() && self.buffer_barriers.is_empty() {
            return;
        }
        let dep = vk::DependencyInfo::default()
            .image_memory_barriers(&self.image_barriers)
            .buffer_memory_barriers(&self.buffer_barriers);
        self.gpu.cmd_pipeline_barrier2(self.cmd, &dep);
        self.image_barriers.clear();
        self.buffer_barriers.clear();
    }

    /// Copies `size` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
    pub fn copy_buffer(
        &mut self,
        src: &'a Buffer,
        src_offset: u64,
        dst: &'a Buffer,
        dst_offset: u64,
        size: u64,
    ) {
        self.buffer(src, Access::TransferRead);
        self.buffer(dst, Access::TransferWrite);
        self.flush_barriers();
        let region = vk::BufferCopy {
            src_offset,
            dst_offset,
            size,
        };
        // SAFETY: both buffers are live for 'a and the barriers above order the copy.
        unsafe {
            self.gpu
                .device()
                .cmd_copy_buffer(self.cmd, src.raw, dst.raw, &[region])
        };
    }

    /// Fills `size` bytes of `dst` from `offset` with the 32-bit word `value`.
    pub fn fill_buffer(&mut self, dst: &'a Buffer, offset: u64, size: u64, value: u32) {
        self.buffer(dst, Access::TransferWrite);
        self.flush_barriers();
        // SAFETY: live buffer, ordered by the barrier above; the caller keeps the range inside.
        unsafe {
            self.gpu
                .device()
                .cmd_fill_buffer(self.cmd, dst.raw, offset, size, value)
        };
    }

    /// Copies tightly packed texels from `src` into the whole of `dst`.
    pub fn copy_buffer_to_image(&mut self, src: &'a Buffer, dst: &'a Image) {
        self.copy_buffer_to_image_at(src, 0, dst);
    }

    /// Copies tightly packed texels from `src`, starting at byte `offset`, into the whole of
    /// `dst`.
    pub fn copy_buffer_to_image_at(&mut self, src: &'a Buffer, offset: u64, dst: &'a Image) {
        let size = [dst.desc.extent.width, dst.desc.extent.height];
        self.copy_buffer_to_image_region(src, offset, dst, [0, 0], size);
    }

    /// Copies tightly packed texels from `src` at byte `offset` into the `size` texels of `dst`
    /// from `origin`.
    pub fn copy_buffer_to_image_region(
        &mut self,
        src: &'a Buffer,
        offset: u64,
        dst: &'a Image,
        origin: [i32; 2],
        size: [u32; 2],
    ) {
        self.copy_buffer_rows_to_image(src, offset, 0, dst, origin, size);
    }

    /// [`Self::copy_buffer_to_image_region`] from rows of `row_texels` texels in `src` (0:
    /// tightly packed): a rectangle out of a larger row-major grid.
    pub fn copy_buffer_rows_to_image(
        &mut self,
        src: &'a Buffer,
        offset: u64,
        row_texels: u32,
        dst: &'a Image,
        origin: [i32; 2],
        size: [u32; 2],
    ) {
        self.buffer(src, Access::TransferRead);
        self.image(dst, Access::TransferWrite);
        self.flush_barriers();
        let region = vk::BufferImageCopy::default()
            .buffer_offset(offset)
            .buffer_row_length(row_texels)
            .image_subresource(COLOR_LAYERS)
            .image_offset(vk::Offset3D {
                x: origin[0],
                y: origin[1],
                z: 0,
            })
            .image_extent(vk::Extent3D {
                width: size[0],
                height: size[1],
                depth: 1,
            });
        // SAFETY: live resources, layout set by the barrier above; the caller keeps the region
        // inside the image.
        unsafe {
            self.gpu.device().cmd_copy_buffer_to_image(
                self.cmd,
                src.raw,
                dst.raw,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            )
        };
    }

    /// Fills the whole of `image` (a float color format) with `value`.
    pub fn clear_image(&mut self, image: &'a Image, value: f32) {
        self.image(image, Access::TransferWrite);
        self.flush_barriers();
        let color = vk::ClearColorValue {
            float32: [value; 4],
        };
        // SAFETY: live image in TRANSFER_DST_OPTIMAL after the barrier above.
        unsafe {
            self.gpu.device().cmd_clear_color_image(
                self.cmd,
                image.raw,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &color,
                &[COLOR_RANGE],
            )
        };
    }

    /// Copies the whole of `src` into `dst` (same format and extent).
    pub fn copy_image(&mut self, src: &'a Image, dst: &'a Image) {
        let e = src.desc.extent;
        self.copy_image_regions(src, dst, &[([0, 0], [0, 0], [e.width, e.height])]);
    }

    /// Copies rectangles of `src` into `dst` (formats of one size per texel): each region is
    /// (origin in `src`, origin in `dst`, size), inside both images.
    pub fn copy_image_regions(
        &mut self,
        src: &'a Image,
        dst: &'a Image,
        regions: &[([i32; 2], [i32; 2], [u32; 2])],
    ) {
        if regions.is_empty() {
            return;
        }
        self.image(src, Access::TransferRead);
        self.image(dst, Access::TransferWrite);
        self.flush_barriers();
        let offset = |o: [i32; 2]| vk::Offset3D {
            x: o[0],
            y: o[1],
            z: 0,
        };
        let regions: Vec<vk::ImageCopy> = regions
            .iter()
            .map(|&(from, to, size)| {
                vk::ImageCopy::default()
                    .src_subresource(src.layers())
                    .src_offset(offset(from))
                    .dst_subresource(dst.layers())
                    .dst_offset(offset(to))
                    .extent(vk::Extent3D {
                        width: size[0],
                        height: size[1],
                        depth: 1,
                    })
            })
            .collect();
        // SAFETY: live images in the layouts set by the barriers above.
        unsafe {
            self.gpu.device().cmd_copy_image(
                self.cmd,
                src.raw,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                dst.raw,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &regions,
            )
        };
    }

    /// Copies the whole of `src` into `dst` as tightly packed texels.
    pub fn copy_image_to_buffer(&mut self, src: &'a Image, dst: &'a Buffer) {
        self.copy_image_to_buffer_at(src, dst, 0);
    }

    /// Copies the whole of `src` into `dst` from byte `offset`, as tightly packed texels.
    pub fn copy_image_to_buffer_at(&mut self, src: &'a Image, dst: &'a Buffer, offset: u64) {
        let extent = [src.desc.extent.width, src.desc.extent.height];
        self.copy_image_region_to_buffer(src, [0, 0], extent, dst, offset);
    }

    /// Copies the `size` texels of `src` from `origin` into `dst` at byte `offset`, tightly packed.
    pub fn copy_image_region_to_buffer(
        &mut self,
        src: &'a Image,
        origin: [i32; 2],
        size: [u32; 2],
        dst: &'a Buffer,
        offset: u64,
    ) {
        self.copy_image_region_to_buffer_rows(src, origin, size, dst, offset, 0);
    }

    /// [`Self::copy_image_region_to_buffer`] into rows of `row_texels` texels in `dst` (0:
    /// tightly packed): a rectangle of a larger row-major grid.
    pub fn copy_image_region_to_buffer_rows(
        &mut self,
        src: &'a Image,
        origin: [i32; 2],
        size: [u32; 2],
        dst: &'a Buffer,
        offset: u64,
        row_texels: u32,
    ) {
        self.image(src, Access::TransferRead);
        self.buffer(dst, Access::TransferWrite);
        self.flush_barriers();
        let region = vk::BufferImageCopy::default()
            .buffer_offset(offset)
            .buffer_row_length(row_texels)
            .image_subresource(src.layers())
            .image_offset(vk::Offset3D {
                x: origin[0],
                y: origin[1],
                z: 0,
            })
            .image_extent(vk::Extent3D {
                width: size[0],
                height: size[1],
                depth: 1,
            });
        // SAFETY: live resources, layout set by the barrier above; the caller keeps the region
        // inside the image.
        unsafe {
            self.gpu.device().cmd_copy_image_to_buffer(
                self.cmd,
                src.raw,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                dst.raw,
                &[region],
            )
        };
    }

    /// Resets `timer`'s queries; do it before the first timed pass of this recording.
    pub fn reset_timer(&mut self, timer: &'a GpuTimer) {
        timer.reset(self.cmd);
    }

    /// Starts timing everything recorded until [`Self::timer_end`] under `label` (barriers
    /// recorded before this call are not included).
    pub fn timer_begin(&mut self, timer: &'a GpuTimer, label: &str) -> Result<u32> {
        self.flush_barriers();
        timer.begin(self.cmd, label)
    }

    /// Ends the timing started by [`Self::timer_begin`].
    pub fn timer_end(&mut self, timer: &'a GpuTimer, query: u32) {
        timer.end(self.cmd, query);
    }

    /// Starts a compute pass of `kernel` with descriptor set `set` (its only set).
    pub fn pass<P: bytemuck::Pod>(
        &mut self,
        kernel: &'a ComputeKernel<P>,
        set: &'a DescriptorSet,
    ) -> Pass<'_, 'a, P> {
        self.pass_sets(kernel, &[set])
    }

    /// Starts a compute pass of `kernel` with descriptor sets `sets` (set i = `sets[i]`).
    pub fn pass_sets<P: bytemuck::Pod>(
        &mut self,
        kernel: &'a ComputeKernel<P>,
        sets: &[&'a DescriptorSet],
    ) -> Pass<'_, 'a, P> {
        Pass {
            rec: self,
            kernel,
            sets: sets.iter().map(|s| s.raw).collect(),
            params: None,
            timer: None,
        }
    }

    /// The command buffer being recorded, for commands the recorder does not wrap (imgui's
    /// renderer). The caller declares every access first and calls [`Self::flush_barriers`].
    pub fn raw(&self) -> vk::CommandBuffer {
        self.cmd
    }

    /// Binds a graphics pipeline for the draws that follow.
    pub fn bind_graphics(&mut self, pipeline: &'a GraphicsPipeline) {
        // SAFETY: the pipeline is borrowed for 'a.
        unsafe {
            self.gpu.device().cmd_bind_pipeline(
                self.cmd,
                vk::PipelineBindPoint::GRAPHICS,
                pipeline.raw,
            )
        };
    }

    /// Binds a compute pipeline for the dispatches that follow (waiting for its compile, where
    /// it runs on a thread of its own); flushes the queued barriers.
    pub fn bind_compute(&mut self, pipeline: &'a ComputePipeline) -> Result<()> {
        let raw = pipeline.raw()?;
        self.flush_barriers();
        // SAFETY: the pipeline is borrowed for 'a.
        unsafe {
            self.gpu
                .device()
                .cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, raw)
        };
        Ok(())
    }

    /// Binds `sets` at set numbers `first`.. of `layout` for graphics (`graphics`) or compute,
    /// with the offsets of their dynamic bindings in order.
    pub fn bind_sets(
        &mut self,
        graphics: bool,
        layout: &'a PipelineLayout,
        first: u32,
        sets: &[SetHandle],
        dynamic_offsets: &[u32],
    ) {
        let point = if graphics {
            vk::PipelineBindPoint::GRAPHICS
        } else {
            vk::PipelineBindPoint::COMPUTE
        };
        let raw: Vec<vk::DescriptorSet> = sets.iter().map(|s| s.0).collect();
        // SAFETY: the layout is borrowed for 'a; the sets' pools outlive the submission (released
        // after it, gpu::retire).
        unsafe {
            self.gpu.device().cmd_bind_descriptor_sets(
                self.cmd,
                point,
                layout.raw,
                first,
                &raw,
                dynamic_offsets,
            )
        };
    }

    /// Pushes `params` at offset 0 for the stages of `layout`'s push-constant range.
    pub fn push_constants<P: bytemuck::Pod>(&mut self, layout: &'a PipelineLayout, params: &P) {
        // SAFETY: the layout is borrowed for 'a.
        unsafe {
            self.gpu.device().cmd_push_constants(
                self.cmd,
                layout.raw,
                layout.push_stages,
                0,
                bytemuck::bytes_of(params),
            )
        };
    }

    /// Binds `buffer` as the index buffer (16-bit indices).
    pub fn bind_index_buffer_u16(&mut self, buffer: &'a Buffer) {
        // SAFETY: the buffer is borrowed for 'a.
        unsafe {
            self.gpu
                .device()
                .cmd_bind_index_buffer(self.cmd, buffer.raw, 0, vk::IndexType::UINT16)
        };
    }

    /// Draws `count` vertices without an index or vertex buffer (the vertex shader makes its
    /// positions from gl_VertexIndex; inside a rendering, with a graphics pipeline bound).
    pub fn draw(&mut self, count: u32) {
        // SAFETY: what the draw reads was declared and bound by the caller for 'a.
        unsafe { self.gpu.device().cmd_draw(self.cmd, count, 1, 0, 0) };
    }

    /// Draws `instances` instances of `count` indices from `first_index`, instance ids from
    /// `first_instance` (inside a rendering, with a graphics pipeline bound).
    pub fn draw_indexed(
        &mut self,
        count: u32,
        instances: u32,
        first_index: u32,
        first_instance: u32,
    ) {
        // SAFETY: what the draw reads was declared and bound by the caller for 'a.
        unsafe {
            self.gpu.device().cmd_draw_indexed(
                self.cmd,
                count,
                instances,
                first_index,
                0,
                first_instance,
            )
        };
    }

    /// Dispatches `groups` workgroups with the bound compute pipeline and sets.
    pub fn dispatch(&mut self, groups: [u32; 3]) {
        // SAFETY: as for `draw_indexed`.
        unsafe {
            self.gpu
                .device()
                .cmd_dispatch(self.cmd, groups[0], groups[1], groups[2])
        };
    }

    /// Begins dynamic rendering into `color` (cleared to `clear`, else loaded) and `depth`
    /// (cleared to the value given), over the whole of `color`, with viewport and scissor set.
    pub fn begin_rendering(
        &mut self,
        color: &'a Image,
        clear: Option<[f32; 4]>,
        depth: Option<(&'a Image, f32)>,
    ) {
        self.begin_rendering_to(&[(color, clear)], depth);
    }

    /// Begins dynamic rendering into several colour targets (each cleared to its value, else
    /// loaded; all of the first one's size) and `depth` (cleared to the value given), with
    /// viewport and scissor over the whole of the first target.
    pub fn begin_rendering_to(
        &mut self,
        colors: &[(&'a Image, Option<[f32; 4]>)],
        depth: Option<(&'a Image, f32)>,
    ) {
        for (c, _) in colors {
            self.image(c, Access::ColorAttachment);
        }
        if let Some((d, _)) = depth {
            self.image(d, Access::DepthAttachment);
        }
        self.flush_barriers();
        let color_att: Vec<_> = colors
            .iter()
            .map(|(c, clear)| {
                vk::RenderingAttachmentInfo::default()
                    .image_view(c.view)
                    .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                    .load_op(if clear.is_some() {
                        vk::AttachmentLoadOp::CLEAR
                    } else {
                        vk::AttachmentLoadOp::LOAD
                    })
                    .store_op(vk::AttachmentStoreOp::STORE)
                    .clear_value(vk::ClearValue {
                        color: vk::ClearColorValue {
                            float32: clear.unwrap_or_default(),
                        },
                    })
            })
            .collect();
        let depth_att = depth.map(|(d, value)| {
            vk::RenderingAttachmentInfo::default()
                .image_view(d.view)
                .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .clear_value(vk::ClearValue {
                    depth_stencil: vk::ClearDepthStencilValue {
                        depth: value,
                        stencil: 0,
                    },
                })
        });
        let extent = colors[0].0.desc.extent;
        let mut info = vk::RenderingInfo::default()
            .render_area(vk::Rect2D {
                offset: vk::Offset2D::default(),
                extent,
            })
            .layer_count(1)
            .color_attachments(&color_att);
        if let Some(d) = depth_att.as_ref() {
            info = info.depth_attachment(d);
        }
        let viewport = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: extent.width as f32,
            height: extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissor = [vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent,
        }];
        let device = self.gpu.device();
        // SAFETY: attachments are live for 'a and in the layouts the barriers above set.
        unsafe {
            device.cmd_begin_rendering(self.cmd, &info);
            device.cmd_set_viewport(self.cmd, 0, &viewport);
            device.cmd_set_scissor(self.cmd, 0, &scissor);
        }
    }

    /// Ends the rendering begun by [`Self::begin_rendering`].
    pub fn end_rendering(&mut self) {
        // SAFETY: rendering was begun on this command buffer.
        unsafe { self.gpu.device().cmd_end_rendering(self.cmd) };
    }

    /// Ends recording, submits, and waits for completion.
    pub fn submit_and_wait(self) -> Result<()> {
        self.submit_and_wait_with(None, None)
    }

    /// Like [`Self::submit_and_wait`], waiting for `wait` (a semaphore and the stage that waits
    /// for it) before executing and signalling `signal` when done: a frame drawn into a swapchain
    /// image.
    pub fn submit_and_wait_with(
        self,
        wait: Option<(vk::Semaphore, vk::PipelineStageFlags)>,
        signal: Option<vk::Semaphore>,
    ) -> Result<()> {
        let _p = crate::profile::scope("gpu: submit and wait");
        self.submit_with(wait, signal)?.wait()
    }

    /// Ends recording and submits without waiting: the returned [`InFlight`] keeps every
    /// resource borrowed until it is waited for (dropping it waits too), so the host can prepare
    /// the next submission while this one runs.
    ///
    /// # Safety
    /// The [`InFlight`] must be waited for or dropped, never leaked (`mem::forget`, a cycle of
    /// `Rc`s): leaking it ends the borrows while the GPU may still use the resources.
    pub unsafe fn submit(self) -> Result<InFlight<'a>> {
        self.submit_with(None, None)
    }

    /// Ends recording and submits without waiting or borrowing: a frame in flight. Returns the
    /// submission's [`Ticket`] ([`Gpu::wait_for`]). Resources dropped while it may run are
    /// released only after it ([`super::retire`]).
    ///
    /// # Safety
    /// Until the ticket is waited for (or seen [`Gpu::finished`]), the host must not write or read
    /// the mapped memory of a buffer this submission uses, nor rewrite a descriptor set it binds.
    pub unsafe fn submit_detached(
        self,
        wait: Option<(vk::Semaphore, vk::PipelineStageFlags)>,
        signal: Option<vk::Semaphore>,
    ) -> Result<Ticket> {
        let gpu = self.gpu;
        // Retire what finished meanwhile (nobody may wait for every ticket).
        gpu.collect()?;
        let mut flight = self.submit_with(wait, signal)?;
        flight.waited = true;
        let cmd = std::mem::replace(&mut flight.rec.cmd, vk::CommandBuffer::null());
        let ticket = gpu.retirement().push(flight.fence, cmd);
        Ok(ticket)
    }

    fn submit_with(
        mut self,
        wait: Option<(vk::Semaphore, vk::PipelineStageFlags)>,
        signal: Option<vk::Semaphore>,
    ) -> Result<InFlight<'a>> {
        self.flush_barriers();
        let device = self.gpu.device();
        {
            let _e = crate::profile::scope("gpu: end command buffer");
            // SAFETY: the command buffer is recording.
            unsafe { device.end_command_buffer(self.cmd)? };
        }
        let fence = self.gpu.take_fence()?;
        let cmds = [self.cmd];
        let wait_sems: Vec<_> = wait.iter().map(|w| w.0).collect();
        let wait_stages: Vec<_> = wait.iter().map(|w| w.1).collect();
        let signal_sems: Vec<_> = signal.into_iter().collect();
        let submit = vk::SubmitInfo::default()
            .command_buffers(&cmds)
            .wait_semaphores(&wait_sems)
            .wait_dst_stage_mask(&wait_stages)
            .signal_semaphores(&signal_sems);
        let submitted = {
            let _s = crate::profile::scope("gpu: queue submit");
            let queue = self.gpu.queue();
            // SAFETY: the queue is externally synchronized by its mutex; the command buffer is
            // executable and every resource it references is borrowed for 'a.
            unsafe { device.queue_submit(*queue, &[submit], fence) }
        };
        if let Err(e) = submitted {
            // Never submitted: the fence is unused.
            self.gpu.return_fence(fence);
            return Err(e.into());
        }
        Ok(InFlight {
            rec: self,
            fence,
            waited: false,
        })
    }
}

/// A submission not waited for yet (see [`Recorder::submit`]).
pub struct InFlight<'a> {
    rec: Recorder<'a>,
    fence: vk::Fence,
    waited: bool,
}

impl InFlight<'_> {
    /// Waits until the GPU has finished the submission.
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.waited, true) {
            return Ok(());
        }
        let _w = crate::profile::scope("gpu: fence wait");
        let (gpu, fence) = (self.rec.gpu, self.fence);
        let device = gpu.device();
        let result = wait_briefly_then_block(device, fence);
        // SAFETY: signalled, so no longer in use... unless the wait timed out, in which case we
        // wait for idle before reusing the fence or freeing the command buffer.
        unsafe {
            if result == Err(vk::Result::TIMEOUT) {
                let _ = device.device_wait_idle();
            }
        }
        gpu.return_fence(fence);
        result.map_err(|e| match e {
            vk::Result::TIMEOUT => GpuError::Timeout {
                seconds: SUBMIT_TIMEOUT.as_secs(),
            },
            e => GpuError::from(e),
        })
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        // The recorder (its command buffer and borrows) goes only after the GPU is done.
        let _ = self.finish();
    }
}

/// Waits for the fence of a submission, mapping a wait past [`SUBMIT_TIMEOUT`] to
/// [`GpuError::Timeout`].
pub(crate) fn wait_for_fence(device: &ash::Device, fence: vk::Fence) -> Result<()> {
    wait_briefly_then_block(device, fence).map_err(|e| match e {
        vk::Result::TIMEOUT => GpuError::Timeout {
            seconds: SUBMIT_TIMEOUT.as_secs(),
        },
        e => GpuError::from(e),
    })
}

/// How long a submission's fence is polled (yielding the core) before the thread blocks: short
/// submissions (a frame's brush pass, its tile bounds) come back faster than a blocking wait
/// wakes up on some drivers.
const POLL_BEFORE_BLOCKING: Duration = Duration::from_micros(1500);

/// Waits for `fence`: polls it for [`POLL_BEFORE_BLOCKING`], then blocks.
fn wait_briefly_then_block(device: &ash::Device, fence: vk::Fence) -> ash::prelude::VkResult<()> {
    let start = std::time::Instant::now();
    while start.elapsed() < POLL_BEFORE_BLOCKING {
        // SAFETY: `fence` belongs to this device.
        if unsafe { device.get_fence_status(fence)? } {
            return Ok(());
        }
        std::thread::yield_now();
    }
    // SAFETY: as above.
    unsafe { device.wait_for_fences(&[fence], true, SUBMIT_TIMEOUT.as_nanos() as u64) }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        if self.cmd == vk::CommandBuffer::null() {
            return; // detached: released when its submission finishes
        }
        let pool = self.gpu.command_pool();
        // SAFETY: either never submitted or its submission has completed (submit_and_wait waits).
        unsafe { self.gpu.device().free_command_buffers(*pool, &[self.cmd]) };
    }
}

fn image_barrier(
    image: vk::Image,
    range: vk::ImageSubresourceRange,
    t: Transition,
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(t.src_stage)
        .src_access_mask(t.src_access)
        .dst_stage_mask(t.dst_stage)
        .dst_access_mask(t.dst_access)
        .old_layout(t.old_layout)
        .new_layout(t.new_layout)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range)
}

/// One compute dispatch: `rec.pass(&kernel, &set).read_image(&a).write_buffer(&b).push(&p).dispatch(n)`.
pub struct Pass<'r, 'a, P> {
    rec: &'r mut Recorder<'a>,
    kernel: &'a ComputeKernel<P>,
    sets: Vec<vk::DescriptorSet>,
    params: Option<P>,
    timer: Option<(&'a GpuTimer, String)>,
}

impl<'a, P: bytemuck::Pod> Pass<'_, 'a, P> {
    pub fn read_image(self, image: &'a Image) -> Self {
        self.rec.image(image, Access::ComputeSampledRead);
        self
    }

    pub fn read_storage_image(self, image: &'a Image) -> Self {
        self.rec.image(image, Access::ComputeStorageRead);
        self
    }

    pub fn write_image(self, image: &'a Image) -> Self {
        self.rec.image(image, Access::ComputeStorageWrite);
        self
    }

    pub fn read_buffer(self, buffer: &'a Buffer) -> Self {
        self.rec.buffer(buffer, Access::ComputeStorageRead);
        self
    }

    /// A buffer the kernel reads and writes (atomics, accumulation).
    pub fn read_write_buffer(self, buffer: &'a Buffer) -> Self {
        self.rec.buffer(buffer, Access::ComputeStorageReadWrite);
        self
    }

    pub fn write_buffer(self, buffer: &'a Buffer) -> Self {
        self.rec.buffer(buffer, Access::ComputeStorageWrite);
        self
    }

    pub fn push(mut self, params: &P) -> Self {
        self.params = Some(*params);
        self
    }

    /// Times the dispatch with `timer` under `label`.
    pub fn timed(mut self, timer: Option<&'a GpuTimer>, label: &str) -> Self {
        self.timer = timer.map(|t| (t, label.to_owned()));
        self
    }

    /// Flushes the barriers, binds, pushes and dispatches `groups` workgroups (waiting for the
    /// kernel's compile where it runs on a thread of its own).
    pub fn dispatch(self, groups: [u32; 3]) -> Result<()> {
        let Pass {
            rec,
            kernel,
            sets,
            params,
            timer,
        } = self;
        if sets.len() != kernel.set_count() {
            return Err(GpuError::usage(format!(
                "{}: {} descriptor sets given, {} needed",
                kernel.name(),
                sets.len(),
                kernel.set_count()
            )));
        }
        let pipeline = kernel.pipeline.raw()?;
        rec.flush_barriers();
        let device = rec.gpu.device();
        let cmd = rec.cmd;
        // SAFETY: kernel, set and the resources they reference are borrowed for 'a; the barriers
        // above order this dispatch after earlier accesses.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            device.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                kernel.layout.raw,
                0,
                &sets,
                &[],
            );
            if let Some(p) = params.as_ref() {
                device.cmd_push_constants(
                    cmd,
                    kernel.layout.raw,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    bytemuck::bytes_of(p),
                );
            }
        }
        let query = match &timer {
            Some((t, label)) => Some((t, t.begin(cmd, label)?)),
            None => None,
        };
        // SAFETY: as above.
        unsafe { device.cmd_dispatch(cmd, groups[0], groups[1], groups[2]) };
        if let Some((t, q)) = query {
            t.end(cmd, q);
        }
        Ok(())
    }
}
