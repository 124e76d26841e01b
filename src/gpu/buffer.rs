//! Buffers built from a [`BufferDesc`], each with a debug name, its allocation and its barrier
//! state. Dropping a buffer frees it at once: every submission waits for its fence before
//! returning (see `command.rs`), so no buffer can be dropped while the GPU still uses it.

use super::barrier::ResourceState;
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::retire::Garbage;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::cell::Cell;
use std::sync::Arc;

/// What a buffer is: size, usage and where it lives.
#[derive(Clone, Copy, Debug)]
pub struct BufferDesc {
    pub size: u64,
    pub usage: vk::BufferUsageFlags,
    pub location: MemoryLocation,
}

impl BufferDesc {
    /// A device-local storage buffer of `size` bytes.
    pub fn new(size: u64) -> Self {
        Self {
            size,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location: MemoryLocation::GpuOnly,
        }
    }

    pub fn usage(mut self, usage: vk::BufferUsageFlags) -> Self {
        self.usage = usage;
        self
    }

    pub fn location(mut self, location: MemoryLocation) -> Self {
        self.location = location;
        self
    }

    /// A device-local storage buffer that copies and fills also reach (a kernel's state
    /// loaded, cleared and read back).
    pub fn storage_copyable(size: u64) -> Self {
        Self::new(size).usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_DST
                | vk::BufferUsageFlags::TRANSFER_SRC,
        )
    }

    /// Host-visible buffer the GPU copies into and the CPU reads.
    pub fn readback(size: u64) -> Self {
        Self::new(size)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .location(MemoryLocation::GpuToCpu)
    }

    /// Host-visible buffer the CPU fills and the GPU copies from.
    pub fn upload(size: u64) -> Self {
        Self::new(size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC)
            .location(MemoryLocation::CpuToGpu)
    }
}

/// A buffer and its memory.
pub struct Buffer {
    gpu: Arc<Gpu>,
    pub raw: vk::Buffer,
    pub desc: BufferDesc,
    allocation: Option<Allocation>,
    name: String,
    pub(crate) state: Cell<ResourceState>,
}

impl Buffer {
    pub fn new(gpu: &Arc<Gpu>, name: &str, desc: BufferDesc) -> Result<Self> {
        if desc.size == 0 {
            return Err(GpuError::usage(format!("buffer '{name}' has size 0")));
        }
        let device = gpu.device();
        let info = vk::BufferCreateInfo::default()
            .size(desc.size)
            .usage(desc.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let raw = unsafe { device.create_buffer(&info, None)? };
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { device.get_buffer_memory_requirements(raw) };
        let allocation = gpu.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: desc.location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unbound and unused.
                unsafe { device.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: memory and offset come from an allocation made for these requirements.
        if let Err(e) =
            unsafe { device.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) }
        {
            let _ = gpu.allocator().free(allocation);
            // SAFETY: unused buffer.
            unsafe { device.destroy_buffer(raw, None) };
            return Err(e.into());
        }
        gpu.set_name(raw, name);
        Ok(Self {
            gpu: gpu.clone(),
            raw,
            desc,
            allocation: Some(allocation),
            name: name.to_owned(),
            state: Cell::new(ResourceState::default()),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Copies `data` into a host-visible buffer.
    pub fn write<T: bytemuck::Pod>(&mut self, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let name = self.name.clone();
        let dst = self
            .allocation
            .as_mut()
            .and_then(|a| a.mapped_slice_mut())
            .ok_or_else(|| GpuError::usage(format!("buffer '{name}' is not host-visible")))?;
        if bytes.len() > dst.len() {
            return Err(GpuError::usage(format!(
                "{} bytes do not fit buffer '{name}' ({})",
                bytes.len(),
                dst.len()
            )));
        }
        dst[..bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// The whole of a host-visible buffer, to write into in place (before a submission reads it).
    pub fn mapped_mut(&mut self) -> Result<&mut [u8]> {
        let name = self.name.clone();
        self.allocation
            .as_mut()
            .and_then(|a| a.mapped_slice_mut())
            .ok_or_else(|| GpuError::usage(format!("buffer '{name}' is not host-visible")))
    }

    /// The first `len` bytes of a host-visible buffer (after the GPU's writes were made visible
    /// to the host and the submission's fence was waited on).
    pub fn mapped(&self, len: usize) -> Result<&[u8]> {
        let src = self
            .allocation
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .ok_or_else(|| {
                GpuError::usage(format!("buffer '{}' is not host-visible", self.name))
            })?;
        src.get(..len).ok_or_else(|| {
            GpuError::usage(format!(
                "buffer '{}' holds fewer than {len} bytes",
                self.name
            ))
        })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // Destroyed once no detached submission that may use it is pending.
        self.gpu.release(Garbage::Buffer {
            raw: self.raw,
            allocation: self.allocation.take(),
        });
    }
}
