//! The window's surface and swapchain: format and present-mode choice (vsync on: FIFO; off:
//! MAILBOX, else IMMEDIATE), re-creation on resize or when out of date, a depth buffer of the
//! same size, one acquire semaphore per frame in flight (used in turn: the frame that waited on
//! one has finished before it comes round again) and one render-finished semaphore per swapchain
//! image (the presentation engine may still hold the previous one).

use crate::gpu::{vk, Gpu, GpuError, Image, ImageDesc, Result};
use crate::render::terrain::DEPTH_FORMAT;
use std::sync::Arc;

pub struct Presenter {
    gpu: Arc<Gpu>,
    surface_fn: ash::khr::surface::Instance,
    swapchain_fn: ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    swapchain: vk::SwapchainKHR,
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    pub images: Vec<Image>,
    pub depth: Option<Image>,
    acquire: Vec<vk::Semaphore>,
    next_acquire: usize,
    finished: Vec<vk::Semaphore>,
    pub vsync: bool,
    /// The swapchain images can be copied from (screenshots).
    pub can_copy: bool,
}

impl Presenter {
    /// Takes ownership of `surface` (destroyed with the presenter).
    pub fn new(gpu: &Arc<Gpu>, surface: vk::SurfaceKHR, size: [u32; 2]) -> Result<Self> {
        let surface_fn = ash::khr::surface::Instance::new(gpu.entry(), gpu.instance());
        let swapchain_fn = ash::khr::swapchain::Device::new(gpu.instance(), gpu.device());
        // SAFETY: valid physical device, family and surface.
        let supported = unsafe {
            surface_fn.get_physical_device_surface_support(
                gpu.physical_device(),
                gpu.queue_family(),
                surface,
            )
        };
        if !matches!(supported, Ok(true)) {
            // SAFETY: unused surface.
            unsafe { surface_fn.destroy_surface(surface, None) };
            return Err(GpuError::Unsupported(format!(
                "{} cannot present to this window",
                gpu.info().name
            )));
        }
        let acquire = (0..crate::render::SLOTS)
            .map(|_| {
                // SAFETY: valid device.
                unsafe {
                    gpu.device()
                        .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        // SAFETY: as above.
        let formats = unsafe {
            surface_fn.get_physical_device_surface_formats(gpu.physical_device(), surface)?
        };
        // UNORM: the shaders gamma-encode themselves (imgui's colours are already sRGB).
        let format = [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM]
            .into_iter()
            .find(|f| formats.iter().any(|s| s.format == *f))
            .or_else(|| formats.first().map(|s| s.format))
            .ok_or_else(|| GpuError::Unsupported("the surface offers no formats".into()))?;
        let mut p = Self {
            gpu: gpu.clone(),
            surface_fn,
            swapchain_fn,
            surface,
            swapchain: vk::SwapchainKHR::null(),
            format,
            extent: vk::Extent2D::default(),
            images: Vec::new(),
            depth: None,
            acquire,
            next_acquire: 0,
            finished: Vec::new(),
            vsync: true,
            can_copy: false,
        };
        p.recreate(size)?;
        Ok(p)
    }

    /// (Re)creates the swapchain for a window of `size` pixels; a zero size (minimised) leaves
    /// no images, and [`Self::acquire`] then returns None.
    pub fn recreate(&mut self, size: [u32; 2]) -> Result<()> {
        let device = self.gpu.device();
        // SAFETY: valid device; frames are waited for, this only covers presentation.
        unsafe { device.device_wait_idle()? };
        self.images.clear();
        self.depth = None;
        // SAFETY: valid physical device and surface.
        let caps = unsafe {
            self.surface_fn.get_physical_device_surface_capabilities(
                self.gpu.physical_device(),
                self.surface,
            )?
        };
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: size[0].clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: size[1].clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        if extent.width == 0 || extent.height == 0 {
            self.extent = extent;
            return Ok(());
        }
        // SAFETY: as above.
        let modes = unsafe {
            self.surface_fn.get_physical_device_surface_present_modes(
                self.gpu.physical_device(),
                self.surface,
            )?
        };
        let mode = if self.vsync {
            vk::PresentModeKHR::FIFO
        } else {
            [vk::PresentModeKHR::MAILBOX, vk::PresentModeKHR::IMMEDIATE]
                .into_iter()
                .find(|m| modes.contains(m))
                .unwrap_or(vk::PresentModeKHR::FIFO)
        };
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        self.can_copy = caps
            .supported_usage_flags
            .contains(vk::ImageUsageFlags::TRANSFER_SRC);
        let mut usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
        if self.can_copy {
            usage |= vk::ImageUsageFlags::TRANSFER_SRC;
        }
        let old = self.swapchain;
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface)
            .min_image_count(count)
            .image_format(self.format)
            .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(old);
        // SAFETY: valid surface; the old swapchain is retired by this call.
        self.swapchain = unsafe { self.swapchain_fn.create_swapchain(&info, None)? };
        if old != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle; no image of the old swapchain is in use.
            unsafe { self.swapchain_fn.destroy_swapchain(old, None) };
        }
        self.extent = extent;
        // SAFETY: the swapchain was just created.
        let raw = unsafe { self.swapchain_fn.get_swapchain_images(self.swapchain)? };
        let desc = ImageDesc::new_2d(self.format, [extent.width, extent.height]).usage(usage);
        self.images = raw
            .iter()
            .enumerate()
            .map(|(i, &img)| Image::borrowed(&self.gpu, &format!("swapchain {i}"), img, desc))
            .collect::<Result<_>>()?;
        self.depth = Some(Image::new(
            &self.gpu,
            "window depth",
            ImageDesc::new_2d(DEPTH_FORMAT, [extent.width, extent.height]).usage(
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::SAMPLED,
            ),
        )?);
        while self.finished.len() < self.images.len() {
            // SAFETY: valid device.
            self.finished.push(unsafe {
                device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None)?
            });
        }
        Ok(())
    }

    /// The next image to draw into (its state reset to undefined) and the semaphore its
    /// acquisition signals (the frame's submission waits on it), or None when the swapchain is
    /// out of date or the window minimised: recreate and try next frame.
    pub fn acquire(&mut self) -> Result<Option<(u32, vk::Semaphore)>> {
        if self.images.is_empty() {
            return Ok(None);
        }
        let semaphore = self.acquire[self.next_acquire];
        // SAFETY: valid swapchain and semaphore; the semaphore is unsignalled with no pending
        // wait: the frame that waited on it was submitted SLOTS acquisitions ago, and the
        // renderer waited for that frame before beginning this one.
        let r = unsafe {
            self.swapchain_fn.acquire_next_image(
                self.swapchain,
                u64::MAX,
                semaphore,
                vk::Fence::null(),
            )
        };
        match r {
            Ok((i, _suboptimal)) => {
                self.next_acquire = (self.next_acquire + 1) % self.acquire.len();
                self.images[i as usize].reset_state();
                Ok(Some((i, semaphore)))
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Semaphore the frame drawn into image `index` signals, and presentation waits on.
    pub fn finished(&self, index: u32) -> vk::Semaphore {
        self.finished[index as usize]
    }

    /// Presents image `index`; false when the swapchain should be recreated.
    pub fn present(&mut self, index: u32) -> Result<bool> {
        let swapchains = [self.swapchain];
        let indices = [index];
        let wait = [self.finished(index)];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&wait)
            .swapchains(&swapchains)
            .image_indices(&indices);
        // SAFETY: the queue is the context's (locked for the call).
        let r = unsafe { self.swapchain_fn.queue_present(self.gpu.raw_queue(), &info) };
        match r {
            Ok(false) => Ok(true),
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for Presenter {
    fn drop(&mut self) {
        let device = self.gpu.device();
        // SAFETY: idle device; nothing uses the swapchain, semaphores or surface any more.
        unsafe {
            let _ = device.device_wait_idle();
            self.images.clear();
            self.depth = None;
            for &s in &self.finished {
                device.destroy_semaphore(s, None);
            }
            for &s in &self.acquire {
                device.destroy_semaphore(s, None);
            }
            self.swapchain_fn.destroy_swapchain(self.swapchain, None);
            self.surface_fn.destroy_surface(self.surface, None);
        }
    }
}
