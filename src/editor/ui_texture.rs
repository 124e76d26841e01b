//! An RGBA8 image the panels draw (imgui texture): written from the host, read back for tests.
//! The noise preview and the stamp thumbnails are ones.

use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, Image, ImageDesc, Recorder};
use anyhow::{anyhow, bail, Result};
use imgui_rs_vulkan_renderer::vulkan as imgui_vk;
use std::sync::Arc;

/// An image imgui can draw, with the staging buffer that fills it.
pub struct UiTexture {
    gpu: Arc<Gpu>,
    image: Image,
    staging: Buffer,
    size: [u32; 2],
    layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    pub id: imgui::TextureId,
}

impl UiTexture {
    /// A `size` RGBA8 texture registered with `renderer` (its contents undefined until
    /// [`Self::write`]).
    pub fn new(
        gpu: &Arc<Gpu>,
        name: &str,
        size: [u32; 2],
        renderer: &mut imgui_rs_vulkan_renderer::Renderer,
    ) -> Result<Self> {
        let image = Image::new(
            gpu,
            name,
            ImageDesc::new_2d(vk::Format::R8G8B8A8_UNORM, size).usage(
                vk::ImageUsageFlags::SAMPLED
                    | vk::ImageUsageFlags::TRANSFER_DST
                    | vk::ImageUsageFlags::TRANSFER_SRC,
            ),
        )?;
        let staging = Buffer::new(gpu, name, BufferDesc::upload(Self::bytes_of(size)))?;
        let device = gpu.device();
        let err = |e| anyhow!("{name}: {e}");
        let layout = imgui_vk::create_vulkan_descriptor_set_layout(device).map_err(err)?;
        let pool = imgui_vk::create_vulkan_descriptor_pool(device, 1).map_err(err)?;
        let set = imgui_vk::create_vulkan_descriptor_set(
            device,
            layout,
            pool,
            image.view,
            gpu.nearest_sampler(),
        )
        .map_err(err)?;
        let id = renderer.textures().insert(set);
        Ok(Self {
            gpu: gpu.clone(),
            image,
            staging,
            size,
            layout,
            pool,
            id,
        })
    }

    fn bytes_of(size: [u32; 2]) -> u64 {
        u64::from(size[0]) * u64::from(size[1]) * 4
    }

    /// Replaces the image with `rgba` (row by row), waiting for the copy.
    pub fn write(&mut self, rgba: &[u8]) -> Result<()> {
        if rgba.len() as u64 != Self::bytes_of(self.size) {
            bail!(
                "{} bytes do not make a {}x{} RGBA8 image",
                rgba.len(),
                self.size[0],
                self.size[1]
            );
        }
        self.staging.write(rgba)?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.buffer(&self.staging, Access::HostWrite);
        rec.image(&self.image, Access::TransferWrite);
        rec.copy_buffer_to_image(&self.staging, &self.image);
        rec.image(&self.image, Access::FragmentSampledRead);
        rec.flush_barriers();
        rec.submit_and_wait()?;
        Ok(())
    }

    /// The image's pixels (RGBA8, row by row), read back from the GPU.
    pub fn pixels(&self) -> Result<Vec<u8>> {
        let bytes = Self::bytes_of(self.size);
        let readback = Buffer::new(
            &self.gpu,
            "ui texture readback",
            BufferDesc::readback(bytes),
        )?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.image(&self.image, Access::TransferRead);
        rec.copy_image_to_buffer(&self.image, &readback);
        rec.buffer(&readback, Access::HostRead);
        rec.image(&self.image, Access::FragmentSampledRead);
        rec.flush_barriers();
        rec.submit_and_wait()?;
        Ok(readback.mapped(bytes as usize)?.to_vec())
    }
}

impl Drop for UiTexture {
    fn drop(&mut self) {
        // The editor waits for the device before it drops its parts.
        unsafe {
            self.gpu.device().destroy_descriptor_pool(self.pool, None);
            self.gpu
                .device()
                .destroy_descriptor_set_layout(self.layout, None);
        }
    }
}
