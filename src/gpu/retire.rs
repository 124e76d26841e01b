//! Submissions the host does not wait for ([`crate::gpu::Recorder::submit_detached`]: frames in
//! flight) and deferred release. Each such submission gets a [`Ticket`], in submission order. A
//! buffer, image or command buffer dropped while any detached submission may still run is kept
//! until every submission made before the drop has finished, then destroyed: dropping a resource
//! never pulls it from under the GPU, whoever drops it (a page-out, a grown buffer, undo, a
//! stroke's descriptor sets, a closed document's kernels). Descriptor pools, pipelines and query
//! pools are released the same way.

use super::context::Gpu;
use super::error::Result;
use ash::vk;
use gpu_allocator::vulkan::Allocation;
use std::collections::VecDeque;

/// A detached submission, to wait for or poll ([`Gpu::wait_for`], [`Gpu::finished`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(u64);

/// What a dropped resource leaves for destruction.
pub(crate) enum Garbage {
    Image {
        /// Null where the image is not ours (swapchain images).
        raw: vk::Image,
        view: vk::ImageView,
        allocation: Option<Allocation>,
    },
    Buffer {
        raw: vk::Buffer,
        allocation: Option<Allocation>,
    },
    /// A descriptor pool (and every set allocated from it).
    DescriptorPool(vk::DescriptorPool),
    /// A one-set descriptor pool made with these sizes: reset and kept for the next set of the
    /// same sizes ([`super::context::Gpu::keep_spare_pool`]).
    SparePool(vk::DescriptorPool, PoolSizes),
    /// A graphics or compute pipeline.
    Pipeline(vk::Pipeline),
    /// A timestamp query pool.
    QueryPool(vk::QueryPool),
}

/// The descriptor counts of a one-set pool, by type (sorted): which spare pools a set can take.
pub(crate) type PoolSizes = Vec<(i32, u32)>;

/// Spare descriptor pools kept per [`PoolSizes`] at most; more are destroyed.
pub(crate) const SPARE_POOLS_PER_SIZES: usize = 256;

/// Detached submissions not known to be finished, and garbage waiting for them.
#[derive(Default)]
pub(crate) struct Retirement {
    /// Serial of the newest detached submission.
    last: u64,
    /// Every detached submission up to this serial has finished.
    done: u64,
    flights: VecDeque<(u64, vk::Fence, vk::CommandBuffer)>,
    /// Each with the newest serial when it was dropped.
    garbage: VecDeque<(u64, Garbage)>,
}

impl Retirement {
    /// Notes a detached submission; its fence and command buffer are released when it finishes.
    pub(crate) fn push(&mut self, fence: vk::Fence, cmd: vk::CommandBuffer) -> Ticket {
        self.last += 1;
        self.flights.push_back((self.last, fence, cmd));
        Ticket(self.last)
    }

    /// Whether nothing detached may still run (garbage can go at once).
    fn idle(&self) -> bool {
        self.flights.is_empty()
    }

    /// Fence of the submission of `t` while it is pending.
    fn fence_of(&self, t: Ticket) -> Option<vk::Fence> {
        self.flights
            .iter()
            .find(|(s, _, _)| *s == t.0)
            .map(|&(_, f, _)| f)
    }
}

impl Gpu {
    /// Waits until the detached submission of `t` has finished (at once if it has).
    pub fn wait_for(&self, t: Ticket) -> Result<()> {
        let fence = self.retirement().fence_of(t);
        if let Some(fence) = fence {
            let _w = crate::profile::scope("gpu: frame wait");
            super::command::wait_for_fence(self.device(), fence)?;
        }
        self.collect()
    }

    /// Waits for every detached submission made so far (before destroying what the gpu layer does
    /// not release itself, such as imgui's renderer).
    pub fn wait_detached(&self) -> Result<()> {
        let fences: Vec<vk::Fence> = self.retirement().flights.iter().map(|f| f.1).collect();
        for fence in fences {
            super::command::wait_for_fence(self.device(), fence)?;
        }
        self.collect()
    }

    /// Whether the detached submission of `t` has finished.
    pub fn finished(&self, t: Ticket) -> Result<bool> {
        self.collect()?;
        Ok(self.retirement().done >= t.0)
    }

    /// Destroys `g` now when no detached submission is pending, else once the ones made so far
    /// have finished.
    pub(crate) fn release(&self, g: Garbage) {
        let mut r = self.retirement();
        if r.idle() {
            drop(r);
            self.destroy(g);
        } else {
            let last = r.last;
            r.garbage.push_back((last, g));
        }
    }

    /// Retires the detached submissions that have finished, in order, and destroys the garbage
    /// that waited only for them.
    pub(crate) fn collect(&self) -> Result<()> {
        let mut r = self.retirement();
        while let Some(&(serial, fence, cmd)) = r.flights.front() {
            // SAFETY: `fence` belongs to this device.
            if !unsafe { self.device().get_fence_status(fence)? } {
                break;
            }
            r.flights.pop_front();
            r.done = serial;
            self.return_fence(fence);
            let pool = self.command_pool();
            // SAFETY: the submission that used `cmd` has finished.
            unsafe { self.device().free_command_buffers(*pool, &[cmd]) };
        }
        let mut ready = Vec::new();
        while r.garbage.front().is_some_and(|(s, _)| *s <= r.done) {
            ready.extend(r.garbage.pop_front().map(|(_, g)| g));
        }
        drop(r);
        for g in ready {
            self.destroy(g);
        }
        Ok(())
    }

    /// Frees everything pending; only for [`Gpu`]'s drop, after the device went idle.
    pub(crate) fn retire_all_idle(&self) {
        let mut r = self.retirement();
        let flights: Vec<_> = r.flights.drain(..).collect();
        let garbage: Vec<_> = r.garbage.drain(..).map(|(_, g)| g).collect();
        drop(r);
        for (_, fence, cmd) in flights {
            self.return_fence(fence);
            let pool = self.command_pool();
            // SAFETY: the device is idle.
            unsafe { self.device().free_command_buffers(*pool, &[cmd]) };
        }
        for g in garbage {
            self.destroy(g);
        }
    }

    fn destroy(&self, g: Garbage) {
        let device = self.device();
        match g {
            Garbage::Image {
                raw,
                view,
                allocation,
            } => {
                // SAFETY: no submission that may use the view or image is pending.
                unsafe { device.destroy_image_view(view, None) };
                if let Some(a) = allocation {
                    if let Err(e) = self.allocator().free(a) {
                        eprintln!("scarp: freeing an image failed: {e}");
                    }
                }
                if raw != vk::Image::null() {
                    // SAFETY: as above.
                    unsafe { device.destroy_image(raw, None) };
                }
            }
            Garbage::Buffer { raw, allocation } => {
                if let Some(a) = allocation {
                    if let Err(e) = self.allocator().free(a) {
                        eprintln!("scarp: freeing a buffer failed: {e}");
                    }
                }
                // SAFETY: as above.
                unsafe { device.destroy_buffer(raw, None) };
            }
            Garbage::SparePool(pool, sizes) => self.keep_spare_pool(pool, sizes),
            // SAFETY (these three): no submission that may use it is pending.
            Garbage::DescriptorPool(pool) => unsafe { device.destroy_descriptor_pool(pool, None) },
            Garbage::Pipeline(p) => unsafe { device.destroy_pipeline(p, None) },
            Garbage::QueryPool(q) => unsafe { device.destroy_query_pool(q, None) },
        }
    }
}
