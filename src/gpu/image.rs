//! 2D images built from an [`ImageDesc`], each with one view, a debug name, its allocation and its
//! barrier state (layout included). Like buffers, dropping one frees it at once, which is safe
//! because every submission has completed by the time recording APIs hand control back.

use super::barrier::ResourceState;
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::retire::Garbage;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::cell::Cell;
use std::sync::Arc;

/// What an image is.
#[derive(Clone, Copy, Debug)]
pub struct ImageDesc {
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    pub usage: vk::ImageUsageFlags,
}

impl ImageDesc {
    /// A 2D image of `format` and `[width, height]`; usage defaults to sampled + transfer dst.
    pub fn new_2d(format: vk::Format, extent: [u32; 2]) -> Self {
        Self {
            format,
            extent: vk::Extent2D {
                width: extent[0],
                height: extent[1],
            },
            usage: vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
        }
    }

    pub fn usage(mut self, usage: vk::ImageUsageFlags) -> Self {
        self.usage = usage;
        self
    }
}

/// An image, its view and its memory.
pub struct Image {
    gpu: Arc<Gpu>,
    pub raw: vk::Image,
    pub view: vk::ImageView,
    pub desc: ImageDesc,
    allocation: Option<Allocation>,
    name: String,
    /// False for swapchain images: the swapchain owns them, we own only the view.
    owned: bool,
    pub(crate) state: Cell<ResourceState>,
}

/// Aspect of a format: depth formats are DEPTH, everything else COLOR.
pub fn aspect_of(format: vk::Format) -> vk::ImageAspectFlags {
    match format {
        vk::Format::D32_SFLOAT | vk::Format::D16_UNORM | vk::Format::X8_D24_UNORM_PACK32 => {
            vk::ImageAspectFlags::DEPTH
        }
        _ => vk::ImageAspectFlags::COLOR,
    }
}

/// The one mip level and layer of a color image, for copies.
pub(crate) const COLOR_LAYERS: vk::ImageSubresourceLayers = vk::ImageSubresourceLayers {
    aspect_mask: vk::ImageAspectFlags::COLOR,
    mip_level: 0,
    base_array_layer: 0,
    layer_count: 1,
};

/// The one mip level and layer of a color image, for barriers and clears.
pub(crate) const COLOR_RANGE: vk::ImageSubresourceRange = vk::ImageSubresourceRange {
    aspect_mask: vk::ImageAspectFlags::COLOR,
    base_mip_level: 0,
    level_count: 1,
    base_array_layer: 0,
    layer_count: 1,
};

fn range_of(format: vk::Format) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect_of(format),
        ..COLOR_RANGE
    }
}

/// A 2D view of the whole of `raw` (a live image of `format`, bound to memory).
fn create_view(gpu: &Gpu, raw: vk::Image, format: vk::Format) -> Result<vk::ImageView> {
    let info = vk::ImageViewCreateInfo::default()
        .image(raw)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(format)
        .subresource_range(range_of(format));
    // SAFETY: the callers pass a live image of `format`, bound to memory.
    Ok(unsafe { gpu.device().create_image_view(&info, None)? })
}

impl Image {
    pub fn new(gpu: &Arc<Gpu>, name: &str, desc: ImageDesc) -> Result<Self> {
        if desc.extent.width == 0 || desc.extent.height == 0 {
            return Err(GpuError::usage(format!(
                "image '{name}' has an empty extent"
            )));
        }
        let device = gpu.device();
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(desc.format)
            .extent(vk::Extent3D {
                width: desc.extent.width,
                height: desc.extent.height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(desc.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid device and create info.
        let raw = unsafe { device.create_image(&info, None)? };
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { device.get_image_memory_requirements(raw) };
        let allocation = gpu.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unbound, unused image.
                unsafe { device.destroy_image(raw, None) };
                return Err(e.into());
            }
        };
        let cleanup = |allocation: Allocation| {
            let _ = gpu.allocator().free(allocation);
            // SAFETY: unused image.
            unsafe { device.destroy_image(raw, None) };
        };
        // SAFETY: memory and offset come from an allocation made for these requirements.
        if let Err(e) =
            unsafe { device.bind_image_memory(raw, allocation.memory(), allocation.offset()) }
        {
            cleanup(allocation);
            return Err(e.into());
        }
        let view = match create_view(gpu, raw, desc.format) {
            Ok(v) => v,
            Err(e) => {
                cleanup(allocation);
                return Err(e);
            }
        };
        gpu.set_name(raw, name);
        gpu.set_name(view, name);
        Ok(Self {
            gpu: gpu.clone(),
            raw,
            view,
            desc,
            allocation: Some(allocation),
            name: name.to_owned(),
            owned: true,
            state: Cell::new(ResourceState::default()),
        })
    }

    /// Wraps an image someone else owns (a swapchain image): we make and own only its view.
    /// Its state starts undefined, as after every acquire.
    pub fn borrowed(gpu: &Arc<Gpu>, name: &str, raw: vk::Image, desc: ImageDesc) -> Result<Self> {
        let view = create_view(gpu, raw, desc.format)?;
        gpu.set_name(view, name);
        Ok(Self {
            gpu: gpu.clone(),
            raw,
            view,
            desc,
            allocation: None,
            name: name.to_owned(),
            owned: false,
            state: Cell::new(ResourceState::default()),
        })
    }

    /// Forgets what the barrier tracker knew: the contents are undefined again (a swapchain image
    /// after acquire).
    pub fn reset_state(&self) {
        self.state.set(ResourceState::default());
    }

    /// The one mip level and layer of this image, for barriers.
    pub fn range(&self) -> vk::ImageSubresourceRange {
        range_of(self.desc.format)
    }

    /// The one mip level and layer of this image, for copies.
    pub fn layers(&self) -> vk::ImageSubresourceLayers {
        vk::ImageSubresourceLayers {
            aspect_mask: aspect_of(self.desc.format),
            ..COLOR_LAYERS
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // Destroyed once no detached submission that may use it is pending.
        self.gpu.release(Garbage::Image {
            raw: if self.owned {
                self.raw
            } else {
                vk::Image::null()
            },
            view: self.view,
            allocation: self.allocation.take(),
        });
    }
}
