//! Deferred shading. The terrain's draws write only a G-buffer beside the depth
//! (`render/terrain.frag`: normal, curvature, overlay value, node); one compute pass shades every
//! pixel from it (`render/shade.comp`: colours or the look, the lighting field, the rivers'
//! water and the heights (normals per pixel) through their [`super::page_atlas::PageAtlas`]es,
//! overlays, cursor, sky) into an encoded colour image; a
//! full-screen draw copies that into the frame's target, in the rendering that the editor's
//! interface is drawn in. Why: the NVIDIA data-centre GPUs we measure on run vertex and
//! fragment shaders on a few units (an H100 has two graphics-capable TPCs) and compute on all
//! of them, so per-pixel arithmetic belongs in compute (docs/render.md, "Deferred shading").

use super::atlas_mips;
use super::page_atlas::ShadedField;
use super::TerrainRenderer;
use crate::gpu::{
    shaders, vk, Access, BindingKind, Bound, ComputeKernel, DescriptorSet, Gpu, GpuTimer, Image,
    ImageDesc, Recorder, Resource, Result,
};
use crate::pages::PageStore;
use crate::render::shared::ShadePush;
use crate::shared_constants::SHADE_GROUP;
use std::sync::Arc;

/// The G-buffer's surface target: x, z of the normal, curvature, overlay value.
pub const SURFACE_FORMAT: vk::Format = vk::Format::R16G16B16A16_SFLOAT;
/// The G-buffer's node target: level | GBUF_COARSE.
pub const NODE_FORMAT: vk::Format = vk::Format::R8_UINT;
/// What the shading pass writes (encoded: sRGB for the look, gamma 2.2 for plain colours).
pub const SHADED_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// The renderer's per-size images: the G-buffer and the shaded colour.
pub(crate) struct GBuffer {
    pub size: [u32; 2],
    pub surface: Image,
    pub node: Image,
    pub shaded: Image,
}

impl GBuffer {
    pub fn new(gpu: &Arc<Gpu>, size: [u32; 2]) -> Result<Self> {
        let target = |name, format, usage| {
            Image::new(gpu, name, ImageDesc::new_2d(format, size).usage(usage))
        };
        let attachment = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
        Ok(Self {
            size,
            surface: target("g-buffer surface", SURFACE_FORMAT, attachment)?,
            node: target("g-buffer node", NODE_FORMAT, attachment)?,
            shaded: target(
                "shaded colour",
                SHADED_FORMAT,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
            )?,
        })
    }
}

/// The shading pass's bindings (`render/shade.comp`), in order.
const SHADE_BINDINGS: [BindingKind; 17] = [
    BindingKind::StorageBuffer,
    BindingKind::SampledImage,
    BindingKind::SampledImage,
    BindingKind::SampledImage,
    BindingKind::StorageImage,
    BindingKind::StorageBuffer,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageBuffer,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageBuffer,
    BindingKind::StorageImage,
    BindingKind::StorageBuffer,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
];

/// The shading kernel as two pipelines, specialized by whether the water (the rivers, the sea)
/// is drawn. Without it the pipeline compiles in less than half the time (0.43-0.66 s against
/// 1.08-1.67 s on an H200 with no driver cache, docs/PERF.md, "A first run"), and most frames
/// show no water. Each compiles on a thread of its own: the one the renderer's options expect
/// at once, the other when a frame first needs it (or [`Self::start_all`] asks). A set made by
/// either binds with both.
pub(crate) struct ShadeKernels {
    gpu: Arc<Gpu>,
    /// Without the water, with it.
    kernels: [Option<ComputeKernel<ShadePush>>; 2],
    /// Whether [`Self::start_all`] was called.
    all_asked: bool,
}

impl ShadeKernels {
    /// Starts the compile of the kernel for frames with (or without) `water`.
    pub fn new(gpu: &Arc<Gpu>, water: bool) -> Result<Self> {
        let mut kernels = Self {
            gpu: gpu.clone(),
            kernels: [None, None],
            all_asked: false,
        };
        kernels.start(water)?;
        Ok(kernels)
    }

    /// Starts the compile of the kernel for frames with (or without) `water`, unless started.
    pub fn start(&mut self, water: bool) -> Result<()> {
        let kernel = &mut self.kernels[usize::from(water)];
        if kernel.is_none() {
            *kernel = Some(ComputeKernel::compiling(
                &self.gpu,
                &shaders::RENDER_SHADE_COMP,
                &SHADE_BINDINGS,
                &[i32::from(water)],
            )?);
        }
        Ok(())
    }

    /// Starts the compile of both kernels, the first time it is called: a kernel that failed to
    /// start is not tried again until a frame needs it.
    pub fn start_all(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.all_asked, true) {
            return Ok(());
        }
        self.start(false)?;
        self.start(true)
    }

    /// The kernel for frames with (or without) `water`; [`Self::start`] started it.
    fn kernel(&self, water: bool) -> &ComputeKernel<ShadePush> {
        self.kernels[usize::from(water)]
            .as_ref()
            .expect("prepare started the frame's shading kernel")
    }

    /// A kernel to make sets with: either binds them the same.
    fn any(&self) -> &ComputeKernel<ShadePush> {
        self.kernels
            .iter()
            .flatten()
            .next()
            .expect("new started one")
    }
}

/// What a slot's shading set points at: when any view differs, the set is made again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShadeKey {
    depth: vk::ImageView,
    surface: vk::ImageView,
    atlases: [vk::ImageView; 6],
    coarse: [vk::ImageView; 2],
    tables: [vk::Buffer; 4],
}

/// An atlas's mip levels (the heights' and the lighting's keep them from the renderer's start).
fn mips(shaded: &ShadedField) -> &Image {
    shaded
        .atlas
        .mips()
        .expect("the atlas keeps mip levels")
        .image()
}

impl TerrainRenderer {
    /// The atlases' mip levels the shading pass reads: [`atlas_mips::LEVELS`], fewer where
    /// the document is narrower than a level's texel (its first texel would reach past the
    /// edge).
    fn mip_levels(&self) -> u32 {
        let narrow = self.desc.width.min(self.desc.height).max(1).ilog2();
        atlas_mips::LEVELS.min(narrow)
    }

    /// Makes the G-buffer the size of `color` and points the current slot's shading and
    /// composition sets at it, `depth`, the page atlases and their fields' coarse levels.
    pub(in crate::render) fn bind_targets(
        &mut self,
        store: &PageStore,
        color: &Image,
        depth: &Image,
    ) -> Result<()> {
        self.bind_depth(depth)?;
        let size = [color.desc.extent.width, color.desc.extent.height];
        if !self.gbuffer.as_ref().is_some_and(|g| g.size == size) {
            // Frames in flight that drew into the old one keep it until they finish (retire).
            self.gbuffer = Some(GBuffer::new(&self.gpu, size)?);
        }
        let g = self.gbuffer.as_ref().expect("made above");
        let (light, rivers) = (&self.light, &self.rivers);
        let (heights, overlay) = (&self.heights, &self.overlay);
        let slot = &mut self.slots[self.slot];
        let key = ShadeKey {
            depth: depth.view,
            surface: g.surface.view,
            atlases: [
                light.atlas.image().view,
                rivers.atlas.image().view,
                heights.atlas.image().view,
                overlay.atlas.image().view,
                mips(heights).view,
                mips(light).view,
            ],
            coarse: [light.coarse(store).view, rivers.coarse(store).view],
            tables: [
                slot.tables[0].raw,
                slot.tables[1].raw,
                slot.tables[2].raw,
                slot.tables[3].raw,
            ],
        };
        if !slot.shade_set.as_ref().is_some_and(|(k, _)| *k == key) {
            let set = self.shade.any().bind(&[
                Resource::StorageBuffer(&slot.uniforms),
                Resource::SampledImage(depth),
                Resource::SampledImage(&g.surface),
                Resource::SampledImage(&g.node),
                Resource::StorageImage(light.atlas.image()),
                Resource::StorageBuffer(&slot.tables[0]),
                Resource::StorageImage(light.coarse(store)),
                Resource::StorageImage(&g.shaded),
                Resource::StorageImage(rivers.atlas.image()),
                Resource::StorageBuffer(&slot.tables[1]),
                Resource::StorageImage(rivers.coarse(store)),
                Resource::StorageImage(heights.atlas.image()),
                Resource::StorageBuffer(&slot.tables[2]),
                Resource::StorageImage(overlay.atlas.image()),
                Resource::StorageBuffer(&slot.tables[3]),
                Resource::StorageImage(mips(heights)),
                Resource::StorageImage(mips(light)),
            ])?;
            slot.shade_set = Some((key, set));
            self.compose_pool
                .write(slot.compose_set, 0, Bound::SampledImage(&g.shaded))?;
        }
        Ok(())
    }

    /// Records the shading pass over the G-buffer and depth drawn by [`Self::record`], then
    /// [`Self::record_compose`].
    pub(in crate::render) fn record_shading<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
        color: &'a Image,
        depth: &'a Image,
        timer: Option<&'a GpuTimer>,
    ) -> Result<()> {
        let g = self.gbuffer.as_ref().expect("bind_targets made it");
        let slot = &self.slots[self.slot];
        let (_, set) = slot.shade_set.as_ref().expect("bind_targets made it");
        for (shaded, table) in [&self.light, &self.rivers].into_iter().zip(&slot.tables) {
            rec.image(shaded.coarse(store), Access::ComputeStorageRead);
            rec.image(shaded.atlas.image(), Access::ComputeStorageRead);
            rec.buffer(table, Access::ComputeStorageRead);
        }
        for (shaded, table) in [&self.heights, &self.overlay]
            .into_iter()
            .zip(&slot.tables[2..])
        {
            rec.image(shaded.atlas.image(), Access::ComputeStorageRead);
            rec.buffer(table, Access::ComputeStorageRead);
        }
        rec.image(mips(&self.heights), Access::ComputeStorageRead);
        rec.image(mips(&self.light), Access::ComputeStorageRead);
        rec.buffer(&slot.uniforms, Access::ComputeStorageRead);
        let push = ShadePush {
            size: [g.size[0] as i32, g.size[1] as i32],
            pages_x: self.desc.pages_x() as i32,
            light_cols: self.light.atlas.cols() as i32,
            rivers_cols: self.rivers.atlas.cols() as i32,
            // 0: no heights atlas, the G-buffer's normals everywhere.
            heights_cols: match self.heights.on {
                true => self.heights.atlas.cols() as i32,
                false => 0,
            },
            overlay_cols: match self.overlay.on {
                true => self.overlay.atlas.cols() as i32,
                false => 0,
            },
            mip_levels: match self.unfiltered {
                true => 0,
                false => self.mip_levels() as i32,
            },
        };
        rec.pass(self.shade.kernel(self.water), set)
            .read_image(depth)
            .read_image(&g.surface)
            .read_image(&g.node)
            .write_image(&g.shaded)
            .push(&push)
            .timed(timer, "shade")
            .dispatch([
                g.size[0].div_ceil(SHADE_GROUP),
                g.size[1].div_ceil(SHADE_GROUP),
                1,
            ])?;
        self.record_compose(rec, color);
        Ok(())
    }

    /// Begins the rendering into `color` and draws the shaded image (as the last shading pass
    /// left it) into it. The caller may draw more and ends the rendering.
    pub(in crate::render) fn record_compose<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        color: &'a Image,
    ) {
        let g = self.gbuffer.as_ref().expect("bind_targets made it");
        let slot = &self.slots[self.slot];
        rec.image(&g.shaded, Access::FragmentSampledRead);
        rec.begin_rendering(color, None, None);
        let p = &self.pipelines;
        rec.bind_graphics(&p.compose);
        rec.bind_sets(true, &p.compose_layout, 0, &[slot.compose_set], &[]);
        rec.draw(3);
    }
}

/// A slot's shading set, made by [`TerrainRenderer::bind_targets`].
pub(crate) type ShadeSet = Option<(ShadeKey, DescriptorSet)>;
