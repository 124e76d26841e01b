//! A page atlas's mip levels, so that the shading pass filters what it reads per pixel (the
//! heights' normals, the lighting): where a pixel spans 2^k texels it reads level k, each texel
//! of which is the mean of the 2^k x 2^k texels under it, rather than some of the texels it
//! spans (a grain, or moiré rings, that move with the camera). Levels 1 to [`LEVELS`] of every
//! slot lie side by side in one image, in a
//! `page_size x page_size/2` area a slot (level k at x = `page_size - 2 * (page_size >> k)`, its
//! side `page_size >> k`), kept with the atlas: a slot's levels are made again whenever its page
//! is copied in. Kernel `render/atlas_mips.comp`; its CPU twin [`mip_level`].

use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu, Image,
    ImageDesc, Recorder, Resource, Result,
};
use crate::render::shared::{MipsPush, MIPS_SLOTS_PER_PASS};
use std::sync::Arc;

/// Mip levels above the atlas's texels: 32 texels a pixel at the most filtered (pages of 128
/// keep 4 x 4 texels at level 5).
pub const LEVELS: u32 = 5;

/// What an atlas's texels are, so how they are meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Texels {
    /// Values (the heights): their mean.
    Values = 0,
    /// The lighting's packed pairs (sun visibility and occlusion, integer levels: sun + 1024 x
    /// occlusion): each of the two meant alone, rounded to its level (`floor(mean + 0.5)`), and
    /// packed again.
    PackedLight = 1,
}

/// The mean of a 2x2 block a, b (upper pair), c, d (lower) as `texels` are meant.
fn mean(a: f32, b: f32, c: f32, d: f32, texels: Texels) -> f32 {
    match texels {
        Texels::Values => ((a + b) + (c + d)) * 0.25,
        Texels::PackedLight => {
            let u = [a, b, c, d].map(|v| v as u32);
            let lo = u.map(|v| (v & 1023) as f32);
            let hi = u.map(|v| (v >> 10) as f32);
            let sun = (((lo[0] + lo[1]) + (lo[2] + lo[3])) * 0.25 + 0.5).floor();
            let ao = (((hi[0] + hi[1]) + (hi[2] + hi[3])) * 0.25 + 0.5).floor();
            (sun as u32 + 1024 * ao as u32) as f32
        }
    }
}

/// Level `k + 1` of a square level `k` of side `side` (even), row-major: each texel the mean
/// of its 2x2 block, `((a + b) + (c + d)) * 0.25` with a, b the block's upper pair and c, d
/// its lower, as `texels` are meant (the CPU twin of `render/atlas_mips.comp`).
pub fn mip_level(below: &[f32], side: usize, texels: Texels) -> Vec<f32> {
    let half = side / 2;
    let mut out = Vec::with_capacity(half * half);
    for y in 0..half {
        let (top, bottom) = (&below[2 * y * side..], &below[(2 * y + 1) * side..]);
        for x in 0..half {
            let (a, b) = (top[2 * x], top[2 * x + 1]);
            let (c, d) = (bottom[2 * x], bottom[2 * x + 1]);
            out.push(mean(a, b, c, d, texels));
        }
    }
    out
}

/// Levels 1 to [`LEVELS`] of a page of side `page_size` (row-major texels).
pub fn mip_levels(page: &[f32], page_size: usize, texels: Texels) -> Vec<Vec<f32>> {
    let mut levels: Vec<Vec<f32>> = Vec::new();
    for k in 1..=LEVELS as usize {
        let below = levels.last().map_or(page, |l| l);
        levels.push(mip_level(below, page_size >> (k - 1), texels));
    }
    levels
}

/// The mips image of an atlas and the kernel that fills it.
pub(crate) struct AtlasMips {
    gpu: Arc<Gpu>,
    /// The mips image's name: the atlas's, with " mips".
    label: String,
    page_size: u32,
    kernel: ComputeKernel<MipsPush>,
    image: Image,
    /// The set binding the atlas (`atlas_view`) and the mips image.
    set: DescriptorSet,
    atlas_view: vk::ImageView,
}

impl AtlasMips {
    /// Mip levels of `texels` for an atlas `atlas` (named `atlas_label`) of `cols x rows` slots
    /// of `page_size`.
    pub fn new(
        gpu: &Arc<Gpu>,
        atlas_label: &str,
        page_size: u32,
        texels: Texels,
        atlas: &Image,
        cols: u32,
        rows: u32,
    ) -> Result<Self> {
        let kernel = ComputeKernel::new(
            gpu,
            &shaders::RENDER_ATLAS_MIPS_COMP,
            &[BindingKind::StorageImage, BindingKind::StorageImage],
            &[texels as i32],
        )?;
        let label = format!("{atlas_label} mips");
        let image = mips_image(gpu, &label, page_size, cols, rows)?;
        let set = kernel.bind(&[
            Resource::StorageImage(atlas),
            Resource::StorageImage(&image),
        ])?;
        Ok(Self {
            gpu: gpu.clone(),
            label,
            page_size,
            kernel,
            image,
            set,
            atlas_view: atlas.view,
        })
    }

    /// Follows the atlas into `atlas`, now `cols x rows` slots (a grown atlas: every level is
    /// made again with the slots copied into it).
    pub fn resize(&mut self, atlas: &Image, cols: u32, rows: u32) -> Result<()> {
        self.image = mips_image(&self.gpu, &self.label, self.page_size, cols, rows)?;
        self.set = self.kernel.bind(&[
            Resource::StorageImage(atlas),
            Resource::StorageImage(&self.image),
        ])?;
        self.atlas_view = atlas.view;
        Ok(())
    }

    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Bytes of one slot's levels, for pages of `page_size` (r32f, `page_size x page_size / 2`).
    pub fn slot_bytes(page_size: u64) -> u64 {
        page_size * (page_size / 2) * 4
    }

    /// Records levels 1 to [`LEVELS`] of `slots` of `atlas` (`cols` slots a row), after their
    /// copies.
    pub fn record<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        atlas: &'a Image,
        cols: u32,
        slots: &[usize],
    ) -> Result<()> {
        debug_assert_eq!(atlas.view, self.atlas_view, "the mips follow their atlas");
        for level in 1..=LEVELS {
            let side = self.page_size >> level;
            for chunk in slots.chunks(MIPS_SLOTS_PER_PASS) {
                let mut push = MipsPush {
                    level: level as i32,
                    page_size: self.page_size as i32,
                    cols: cols as i32,
                    count: chunk.len() as i32,
                    slots: [0; MIPS_SLOTS_PER_PASS],
                };
                for (to, &slot) in push.slots.iter_mut().zip(chunk) {
                    *to = slot as i32;
                }
                rec.image(&self.image, Access::ComputeStorageReadWrite);
                rec.pass(&self.kernel, &self.set)
                    .read_storage_image(atlas)
                    .push(&push)
                    .dispatch([side.div_ceil(16), side.div_ceil(16), chunk.len() as u32])?;
            }
        }
        Ok(())
    }

    /// Level `level` (1 to [`LEVELS`]) of slot `slot` (`cols` slots a row), row-major (read
    /// back, waited for; for tests and tools).
    pub fn read(&self, slot: usize, cols: u32, level: u32) -> Result<Vec<f32>> {
        let (ps, side) = (self.page_size, self.page_size >> level);
        let at = [
            (slot as u32 % cols) * ps + ps - 2 * side,
            (slot as u32 / cols) * (ps / 2),
        ];
        read_region(&self.gpu, &self.image, at, side)
    }
}

/// The `side x side` r32f texels of `image` from `at`, row-major (read back, waited for).
pub(super) fn read_region(
    gpu: &Arc<Gpu>,
    image: &Image,
    at: [u32; 2],
    side: u32,
) -> Result<Vec<f32>> {
    let bytes = u64::from(side * side) * 4;
    let readback = Buffer::new(gpu, "atlas readback", BufferDesc::readback(bytes))?;
    let mut rec = Recorder::new(gpu)?;
    rec.copy_image_region_to_buffer(
        image,
        [at[0] as i32, at[1] as i32],
        [side, side],
        &readback,
        0,
    );
    rec.buffer(&readback, Access::HostRead);
    rec.submit_and_wait()?;
    Ok(bytemuck::cast_slice(readback.mapped(bytes as usize)?).to_vec())
}

/// An r32f image named `label` for the levels of `cols x rows` slots of `page_size`.
fn mips_image(gpu: &Arc<Gpu>, label: &str, page_size: u32, cols: u32, rows: u32) -> Result<Image> {
    Image::new(
        gpu,
        label,
        ImageDesc::new_2d(
            vk::Format::R32_SFLOAT,
            [cols * page_size, rows * (page_size / 2)],
        )
        .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_is_the_mean_of_the_blocks_below() {
        // A ramp in x and a step in y: the means are exact in binary.
        let side = 8;
        let page: Vec<f32> = (0..side * side)
            .map(|i| (i % side) as f32 + if i / side >= 4 { 16.0 } else { 0.0 })
            .collect();
        let one = mip_level(&page, side, Texels::Values);
        assert_eq!(one.len(), 16);
        assert_eq!(&one[..4], &[0.5, 2.5, 4.5, 6.5]);
        assert_eq!(&one[8..12], &[16.5, 18.5, 20.5, 22.5]);
        let levels = mip_levels(&vec![1.0; 128 * 128], 128, Texels::Values);
        assert_eq!(levels.len(), LEVELS as usize);
        assert_eq!(levels[4].len(), 16);
        assert!(levels.iter().flatten().all(|&v| v == 1.0));
    }

    #[test]
    fn packed_light_is_meant_pair_by_pair_to_the_nearest_level() {
        let pack = |sun: u32, ao: u32| (sun + 1024 * ao) as f32;
        // Sun 0, 1, 1, 1 (mean 0.75: 1) and occlusion 1023, 1023, 0, 1 (511.75: 512).
        let below = [pack(0, 1023), pack(1, 1023), pack(1, 0), pack(1, 1)];
        assert_eq!(mip_level(&below, 2, Texels::PackedLight), [pack(1, 512)]);
        // Halves round up: 0, 0, 1, 1 is 0.5, so 1.
        let below = [pack(0, 0), pack(0, 0), pack(1, 0), pack(1, 0)];
        assert_eq!(mip_level(&below, 2, Texels::PackedLight), [pack(1, 0)]);
        // Meaning the packed values instead would carry the sun into the occlusion.
        let mixed = [pack(1023, 0), pack(1023, 0), pack(1023, 0), pack(0, 1)];
        assert_ne!(
            mip_level(&mixed, 2, Texels::Values),
            mip_level(&mixed, 2, Texels::PackedLight)
        );
    }
}
