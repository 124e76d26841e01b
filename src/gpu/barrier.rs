//! Barriers described by access type (vk-sync style), not raw masks.
//!
//! Every image and buffer carries a [`ResourceState`]: its current layout, the last write and the
//! read stages since that write. Declaring the next [`Access`] yields a synchronization2 barrier
//! only when one is needed:
//! * read after read in the same layout, already visible to that stage: none;
//! * read after write: the write's stage/access made visible to the reading stage;
//! * write after anything, or any layout change: wait for the last write and every read since.

use ash::vk;

/// How a pass touches a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Not used yet, contents undefined.
    Nothing,
    TransferRead,
    TransferWrite,
    /// Sampled (texelFetch/texture) in a compute shader.
    ComputeSampledRead,
    ComputeStorageRead,
    ComputeStorageWrite,
    ComputeStorageReadWrite,
    /// Read by the host after the submission's fence.
    HostRead,
    /// Written by the host before the submission.
    HostWrite,
    /// Storage image or buffer read (imageLoad, SSBO) in a vertex shader.
    VertexStorageRead,
    /// Storage image or buffer read in a fragment shader.
    FragmentStorageRead,
    /// Sampled (texelFetch/texture) in a fragment shader.
    FragmentSampledRead,
    /// Index buffer read by indexed draws.
    IndexRead,
    /// Color attachment of a draw (load/store included).
    ColorAttachment,
    /// Depth attachment of a draw, tested and written.
    DepthAttachment,
    /// Handed to the presentation engine.
    Present,
}

impl Access {
    pub fn stage(self) -> vk::PipelineStageFlags2 {
        match self {
            Access::Nothing => vk::PipelineStageFlags2::NONE,
            // Copies and clears alike: clears are their own stage in synchronization2.
            Access::TransferRead | Access::TransferWrite => vk::PipelineStageFlags2::ALL_TRANSFER,
            Access::ComputeSampledRead
            | Access::ComputeStorageRead
            | Access::ComputeStorageWrite
            | Access::ComputeStorageReadWrite => vk::PipelineStageFlags2::COMPUTE_SHADER,
            Access::HostRead | Access::HostWrite => vk::PipelineStageFlags2::HOST,
            Access::VertexStorageRead => vk::PipelineStageFlags2::VERTEX_SHADER,
            Access::FragmentStorageRead | Access::FragmentSampledRead => {
                vk::PipelineStageFlags2::FRAGMENT_SHADER
            }
            Access::IndexRead => vk::PipelineStageFlags2::INDEX_INPUT,
            Access::ColorAttachment => vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
            Access::DepthAttachment => {
                vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS
                    | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS
            }
            // Presentation waits on a semaphore; the layout change is all the barrier does.
            Access::Present => vk::PipelineStageFlags2::NONE,
        }
    }

    pub fn access(self) -> vk::AccessFlags2 {
        match self {
            Access::Nothing => vk::AccessFlags2::NONE,
            Access::TransferRead => vk::AccessFlags2::TRANSFER_READ,
            Access::TransferWrite => vk::AccessFlags2::TRANSFER_WRITE,
            Access::ComputeSampledRead | Access::FragmentSampledRead => {
                vk::AccessFlags2::SHADER_SAMPLED_READ
            }
            Access::ComputeStorageRead => vk::AccessFlags2::SHADER_STORAGE_READ,
            Access::ComputeStorageWrite => vk::AccessFlags2::SHADER_STORAGE_WRITE,
            Access::ComputeStorageReadWrite => {
                vk::AccessFlags2::SHADER_STORAGE_READ | vk::AccessFlags2::SHADER_STORAGE_WRITE
            }
            Access::HostRead => vk::AccessFlags2::HOST_READ,
            Access::HostWrite => vk::AccessFlags2::HOST_WRITE,
            Access::VertexStorageRead | Access::FragmentStorageRead => {
                vk::AccessFlags2::SHADER_STORAGE_READ
            }
            Access::IndexRead => vk::AccessFlags2::INDEX_READ,
            Access::ColorAttachment => {
                vk::AccessFlags2::COLOR_ATTACHMENT_READ | vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
            }
            Access::DepthAttachment => {
                vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ
                    | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE
            }
            Access::Present => vk::AccessFlags2::NONE,
        }
    }

    /// Image layout this access needs.
    pub fn layout(self) -> vk::ImageLayout {
        match self {
            Access::Nothing => vk::ImageLayout::UNDEFINED,
            Access::TransferRead => vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            Access::TransferWrite => vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            Access::ComputeSampledRead | Access::FragmentSampledRead => {
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL
            }
            Access::ColorAttachment => vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            Access::DepthAttachment => vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
            Access::Present => vk::ImageLayout::PRESENT_SRC_KHR,
            _ => vk::ImageLayout::GENERAL,
        }
    }

    pub fn is_write(self) -> bool {
        matches!(
            self,
            Access::TransferWrite
                | Access::ComputeStorageWrite
                | Access::ComputeStorageReadWrite
                | Access::HostWrite
                | Access::ColorAttachment
                | Access::DepthAttachment
        )
    }
}

/// What the barrier tracker knows of one resource.
#[derive(Clone, Copy, Debug)]
pub struct ResourceState {
    pub layout: vk::ImageLayout,
    write_stage: vk::PipelineStageFlags2,
    write_access: vk::AccessFlags2,
    read_stages: vk::PipelineStageFlags2,
}

impl Default for ResourceState {
    fn default() -> Self {
        Self {
            layout: vk::ImageLayout::UNDEFINED,
            write_stage: vk::PipelineStageFlags2::NONE,
            write_access: vk::AccessFlags2::NONE,
            read_stages: vk::PipelineStageFlags2::NONE,
        }
    }
}

/// Source and destination halves of one barrier, plus the layouts (images only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    pub src_stage: vk::PipelineStageFlags2,
    pub src_access: vk::AccessFlags2,
    pub dst_stage: vk::PipelineStageFlags2,
    pub dst_access: vk::AccessFlags2,
    pub old_layout: vk::ImageLayout,
    pub new_layout: vk::ImageLayout,
}

impl ResourceState {
    /// Records `next` and returns the barrier it needs, if any. `is_image` decides whether layouts
    /// matter.
    pub fn advance(&mut self, next: Access, is_image: bool) -> Option<Transition> {
        let new_layout = if is_image {
            next.layout()
        } else {
            vk::ImageLayout::UNDEFINED
        };
        let layout_change = is_image && new_layout != self.layout;
        let stage = next.stage();
        if !next.is_write() && !layout_change {
            if self.read_stages.contains(stage) {
                return None;
            }
            self.read_stages |= stage;
            if self.write_stage == vk::PipelineStageFlags2::NONE {
                return None;
            }
            return Some(Transition {
                src_stage: self.write_stage,
                src_access: self.write_access,
                dst_stage: stage,
                dst_access: next.access(),
                old_layout: self.layout,
                new_layout: self.layout,
            });
        }
        let t = Transition {
            src_stage: self.write_stage | self.read_stages,
            src_access: self.write_access,
            dst_stage: stage,
            dst_access: next.access(),
            old_layout: self.layout,
            new_layout,
        };
        if next.is_write() {
            self.write_stage = stage;
            self.write_access = next.access();
            self.read_stages = vk::PipelineStageFlags2::NONE;
        } else {
            // A layout transition is itself a write: later reads see it through this stage.
            self.write_stage = stage;
            self.write_access = vk::AccessFlags2::NONE;
            self.read_stages = stage;
        }
        self.layout = new_layout;
        let needs_barrier = is_image || t.src_stage != vk::PipelineStageFlags2::NONE;
        needs_barrier.then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_after_read_needs_no_barrier() {
        let mut s = ResourceState::default();
        assert!(
            s.advance(Access::TransferWrite, false).is_none(),
            "first write to a fresh buffer"
        );
        let t = s
            .advance(Access::ComputeStorageRead, false)
            .expect("read after write");
        assert_eq!(t.src_access, vk::AccessFlags2::TRANSFER_WRITE);
        assert!(s.advance(Access::ComputeStorageRead, false).is_none());
    }

    #[test]
    fn write_after_reads_waits_for_every_reader() {
        let mut s = ResourceState::default();
        s.advance(Access::ComputeStorageWrite, false);
        s.advance(Access::ComputeStorageRead, false);
        s.advance(Access::TransferRead, false);
        let t = s
            .advance(Access::ComputeStorageWrite, false)
            .expect("write after read");
        assert!(t
            .src_stage
            .contains(vk::PipelineStageFlags2::COMPUTE_SHADER));
        assert!(t.src_stage.contains(vk::PipelineStageFlags2::ALL_TRANSFER));
    }

    #[test]
    fn image_layout_changes_always_barrier() {
        let mut s = ResourceState::default();
        let t = s
            .advance(Access::TransferWrite, true)
            .expect("undefined -> transfer dst");
        assert_eq!(t.old_layout, vk::ImageLayout::UNDEFINED);
        assert_eq!(t.new_layout, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
        let t = s
            .advance(Access::ComputeSampledRead, true)
            .expect("transfer dst -> sampled");
        assert_eq!(t.src_access, vk::AccessFlags2::TRANSFER_WRITE);
        assert!(s.advance(Access::ComputeSampledRead, true).is_none());
    }
}
