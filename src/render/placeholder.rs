//! 1x1 images bound where a shader's binding has nothing to read: pages that hold no memory, a
//! field that does not exist yet. Cleared to a value and left as compute reads expect them.

use crate::gpu::{vk, Access, Gpu, Image, ImageDesc, Recorder, Result};
use crate::pages::geometry::HeightFormat;
use std::sync::Arc;

/// A 1x1 storage image of `format` holding `value` in every channel, ready for compute reads.
pub(crate) fn cleared(gpu: &Arc<Gpu>, name: &str, format: vk::Format, value: f32) -> Result<Image> {
    let image = Image::new(
        gpu,
        name,
        ImageDesc::new_2d(format, [1, 1])
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_DST),
    )?;
    let mut rec = Recorder::new(gpu)?;
    rec.clear_image(&image, value);
    rec.image(&image, Access::ComputeStorageRead);
    rec.submit_and_wait()?;
    Ok(image)
}

/// A flat page of `format` (height 0), bound in place of pages that hold no memory.
pub(crate) fn flat_page(gpu: &Arc<Gpu>, format: HeightFormat) -> Result<Image> {
    let format = match format {
        HeightFormat::R32f => vk::Format::R32_SFLOAT,
        HeightFormat::R16 => vk::Format::R16_UNORM,
    };
    cleared(gpu, "flat page placeholder", format, 0.0)
}
