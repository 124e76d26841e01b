//! The GPU terrain renderer. It draws the height field of a page store and follows its edits by
//! change epoch; it knows nothing about brushes.
//!
//! * **A quadtree of nodes** ([`super::quadtree`]): every node is the same 65x65 vertex grid at
//!   spacing 2^level, so the far field is a few large nodes and a frame's cost follows the
//!   screen, not the world. Selection walks only the nodes it refines.
//! * **Heights from the pages, or the coarse level.** Page nodes (spacing up to 32) bind a block
//!   of PAGE_BLOCK x PAGE_BLOCK pages and the ring of pages around it (PAGE_SLOTS storage images)
//!   and read heights with constant binding indices, so no descriptor indexing is needed
//!   (lavapipe has none). Coarse nodes (spacing 64 and up) read the field's coarse level, which
//!   stays on the GPU whatever the budget: a region whose pages are not on the GPU is drawn
//!   coarse while its pages are requested ([`TerrainRenderer::requests`]), never as a hole.
//! * **Index lists.** One per (mesh level, stitched sides) over the shared grid; nodes with the
//!   same list and block are one instanced draw. A page node wider than a block is drawn as one
//!   part per block, at a sparser mesh level of a smaller scale.
//! * **Bounds** (`terrain/bounds.rs`). Per-tile bounds (min, max, error per level) come from
//!   `tile_bounds.comp`, run only for pages an edit changed (and the neighbours whose tiles reach
//!   into them) that are on the GPU, recorded into the frame's own submission; tiles of pages
//!   elsewhere take their bounds from the coarse level. The quadtree's node bounds sit on them.
//! * **Frames in flight** (`terrain/slots.rs`): what a frame writes from the host lives in one of two
//!   slots, so the host prepares the next frame while the GPU draws this one; page sets a frame in
//!   flight binds are replaced, not rewritten.

pub mod atlas_mips;
mod blocks;
mod bounds;
mod deferred;
mod overlay;
mod page_atlas;
mod slots;

use blocks::Blocks;
use bounds::BoundsJob;
use deferred::{GBuffer, ShadeKernels};
use page_atlas::ShadedField;
use slots::FrameSlot;
pub use slots::{FrameResults, MAX_PICKS, SLOTS};

use super::camera::{Camera, ImageWindow};
use super::lod::{self, frustum_planes, IndexRange, LodView, TileGrid, LEVELS, STITCHES};
use super::placeholder;
use super::quadtree::{self, NodeBounds, SelectView, Selection};
use super::shared::{
    BoundsPush, FrameData, PagePush, TileDraw, OVERLAY_PRESENT_SHIFT, OVERLAY_SLOTS, PAGE_SLOTS,
    TILE_COARSE, TILE_LEVEL_SHIFT, TILE_QUADS, VIEW_CONTOURS, VIEW_CURSOR, VIEW_CURVATURE,
    VIEW_LIGHTING, VIEW_LOD_COLOURS, VIEW_LOOK, VIEW_MATERIALS, VIEW_OVERLAY, VIEW_OVERLAY_UPLIFT,
    VIEW_OVERLAY_WATER, VIEW_RIVERS, VIEW_SEA, VIEW_SLOPE, VIEW_WIREFRAME,
};
use crate::gpu::{
    shaders, vk, Access, BindingKind, Bound, Buffer, BufferDesc, ComputeKernel, ComputePipeline,
    Gpu, GpuError, GpuTimer, GraphicsDesc, GraphicsPipeline, Image, LayoutBinding, PipelineLayout,
    Recorder, Result, SetHandle, SetLayout, SetPool,
};
use crate::pages::geometry::{DocumentDesc, HeightFormat, PageId};
use crate::pages::{Field, PageStore};
use crate::rivers::{NO_WATER, RIVERS_FIELD};
use glam::Vec3;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// How an overlay field tints the terrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// A layer's mask: magenta where it hides (half at 0, none at 1).
    Mask,
    /// Water depth: blue by the value (none at 0, most at 1).
    Water,
    /// Two-sided around 1 (the geology uplift map; the profile and plan curvature maps, 1
    /// less the curvature over its full colour): none at 1, orange above (full at 2), teal
    /// below (full at 0).
    Uplift,
}

/// Depth format of every target the renderer draws into.
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// Sky colour behind the terrain (linear, before the shader's gamma; what clears the target).
pub const SKY: [f32; 4] = [0.62, 0.70, 0.80, 1.0];
/// Page sets per descriptor pool; more pools are made as the view reaches more pages.
const SETS_PER_POOL: u32 = 256;

/// The brush cursor ring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CursorRing {
    /// Document texel coordinates of the centre.
    pub center: [f32; 2],
    pub radius: f32,
    pub inner_radius: f32,
}

/// The triangle budget of the editor, `scarp render` and the benchmarks, per covered pixel,
/// for a document like `desc`. Where the shading pass reads the heights per pixel (r32f
/// documents: normals and curvature from the texels under each pixel, whatever the mesh), the
/// mesh needs triangles only for its positions: half a triangle a pixel, which draws in 0.65 of
/// the time of one (docs/PERF.md, "Normals per pixel"). r16 documents shade from the vertices'
/// normals and keep one: with the error seen from the eye ([`super::lod::error_factor`]) it
/// keeps a tighter bound than 2 did under the old one (docs/PERF.md, "Fewer triangles").
pub fn default_triangles_per_pixel(desc: &DocumentDesc) -> f32 {
    match desc.format {
        HeightFormat::R32f => 0.5,
        HeightFormat::R16 => 1.0,
    }
}

/// The least triangle budget of a frame, whatever the pixels it covers: eight whole nodes. A
/// small image under half a triangle a pixel (160 x 120: 9,600) would otherwise draw one node,
/// from the coarse level, where nothing is shaded per pixel; drawing this many costs nothing
/// worth counting on any device.
const MIN_TRIANGLE_BUDGET: u64 = 8 * 2 * 64 * 64;

/// How the terrain is shown.
#[derive(Clone, Copy, Debug)]
pub struct ViewSettings {
    pub wireframe: bool,
    pub lod_colours: bool,
    /// World y per height unit.
    pub vertical_scale: f32,
    /// Largest screen-space geometric error, pixels.
    pub pixel_error: f32,
    /// Triangle budget: at most this many triangles per covered pixel (of the previous frame);
    /// where the error bound would draw more, the error bound is raised until it fits. 0 = off.
    pub max_triangles_per_pixel: f32,
    /// Fog density per world unit (0 = none).
    pub fog: f32,
    pub cursor: Option<CursorRing>,
    /// Analysis: the slope heat map, walkable up to this many degrees ([`super::analysis`]).
    pub slope: Option<f32>,
    /// Analysis: height contour lines every this many height units.
    pub contours: Option<f32>,
    /// Analysis: the curvature map, full colour at this curvature (1/m: the Laplacian of the
    /// heights in metres; [`super::analysis`]).
    pub curvature: Option<f32>,
    /// Analysis: the material weights map (each material's colour by its weight, unlit), by
    /// the look's rules (the default look's where the look is off).
    pub materials_map: bool,
    /// The sun lighting the terrain; with it, the store's lighting field
    /// ([`super::lighting::FIELD`]) shadows and occludes where it exists. None: the fixed
    /// light of old, no lighting field.
    pub sun: Option<super::lighting::Sun>,
    /// Materials by rule, the analytic sky and haze, exposure and tone map (None: the plain
    /// colours and flat sky of old).
    pub look: Option<super::look::Look>,
    /// A sea at this height (height units): a translucent water plane over the document with
    /// animated waves, tinted by its depth, foam at the shore. None: no sea.
    pub sea_level: Option<f32>,
    /// The waves' time, seconds (0 for still images).
    pub wave_time: f32,
    /// The heights (height units) the altitude rules span: the plain colours' bands and the
    /// look's snow and sand lines are fractions of it. None: the document's lowest and highest
    /// heights now (a still image); the editor fixes it when a document opens, so an edit far
    /// away never recolours the rest.
    pub altitude_range: Option<(f32, f32)>,
    /// Level of tile (tx, ty) instead of the screen-space choice (tests, debugging): nodes are
    /// split while a tile inside wants finer; still restricted so neighbours differ by at most
    /// one level, and page nodes only where their pages are on the GPU.
    pub force_levels: Option<fn(u32, u32) -> u8>,
    /// The shading pass reads the heights and the lighting at the texels around each pixel at
    /// every distance, not their mip levels (tests and comparisons: far pixels then show some
    /// of the texels they span).
    pub unfiltered: bool,
}

impl Default for ViewSettings {
    fn default() -> Self {
        Self {
            wireframe: false,
            lod_colours: false,
            vertical_scale: 1.0,
            pixel_error: 1.0,
            max_triangles_per_pixel: 0.0,
            fog: 0.0,
            cursor: None,
            slope: None,
            contours: None,
            curvature: None,
            materials_map: false,
            sun: None,
            look: None,
            sea_level: None,
            wave_time: 0.0,
            altitude_range: None,
            force_levels: None,
            unfiltered: false,
        }
    }
}

/// What the last prepared frame draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Quadtree nodes drawn, and leaves outside the frustum.
    pub nodes_drawn: u32,
    pub nodes_culled: u32,
    /// Nodes whose bounds the selection looked at.
    pub nodes_visited: u32,
    /// Nodes drawn per level (index: level; vertex spacing 2^level).
    pub nodes_per_level: Vec<u32>,
    /// Instances drawn (page nodes wider than a block are one per block).
    pub instances: u32,
    pub triangles: u64,
    pub draws: u32,
    /// Pages the frame asked for that are not on the GPU (drawn coarse until they are).
    pub pages_requested: u32,
    /// Pages whose tile bounds the last refresh recomputed on the GPU, and its GPU time.
    pub bounds_pages: u32,
    pub bounds_gpu_ms: f64,
    /// Pages whose tile bounds the last refresh took from the coarse level (some of the pages
    /// their tiles reach are off the GPU).
    pub estimated_pages: u32,
    /// The error bound the selection used (above the asked one when the budget bit).
    pub pixel_error_used: f32,
    /// Covered pixels the budget was computed from (previous frame), if known.
    pub covered_pixels: Option<u64>,
    /// CPU time of `prepare` (selection, culling, grouping, uploads), ms.
    pub prepare_cpu_ms: f64,
    /// Wall-clock time of `refresh` (coarse level, sets, bounds bookkeeping), ms.
    pub refresh_ms: f64,
    /// Pages whose lighting the frame reads at full resolution (drawn at page level, and the
    /// ring their texels reach), and how many of them the light atlas had no room for (shaded
    /// from the lighting's coarse level).
    pub light_pages: u32,
    pub light_pages_coarse: u32,
}

/// Options fixed at creation.
#[derive(Clone, Copy, Debug)]
pub struct RenderOptions {
    /// Format of the colour targets (a UNORM format: the shading pass encodes).
    pub color_format: vk::Format,
    /// Most bytes of each page atlas, its mip levels included (the lighting, the rivers' water,
    /// the heights and the overlay of pages drawn at page level, for the shading pass); pages
    /// past it are shaded from their field's coarse level (the heights and the overlay: from
    /// the vertices').
    pub atlas_bytes: u64,
    /// Whether the first frames draw water (a sea level, rivers): the shading pass's pipeline
    /// with the water then compiles from the start, the one without when a frame first needs it
    /// (and the other way round).
    pub water: bool,
}

impl RenderOptions {
    /// Options for targets of `color_format`, the page atlases at their default size.
    pub fn new(color_format: vk::Format) -> Self {
        Self {
            color_format,
            atlas_bytes: page_atlas::DEFAULT_BYTES,
            water: false,
        }
    }

    /// These options for a renderer of `store`'s document whose first frames show the sea
    /// (`sea`) or not: they draw water where they show the sea or the store holds rivers.
    pub fn expecting_water(self, store: &PageStore, sea: bool) -> Self {
        Self {
            water: sea || store.field(RIVERS_FIELD).is_some(),
            ..self
        }
    }
}

/// The renderer's set layouts, pipeline layouts and pipelines.
struct Pipelines {
    frame: SetLayout,
    page: SetLayout,
    out: SetLayout,
    compose_set: SetLayout,
    draw: PipelineLayout,
    bounds: PipelineLayout,
    compose_layout: PipelineLayout,
    /// The terrain into the G-buffer (terrain/deferred.rs).
    fill: GraphicsPipeline,
    /// Where the device has fillModeNonSolid.
    wire: Option<GraphicsPipeline>,
    /// The shaded image into the frame's target (a full-screen triangle).
    compose: GraphicsPipeline,
    tile_bounds: ComputePipeline,
}

/// One block's set (its pages and the ring around them).
struct PageSet {
    set: SetHandle,
    present: [u32; 2],
    /// A page of the neighbourhood changed image: rewrite (or replace) before use.
    stale: bool,
    /// The last frame that binds it (a set a frame in flight binds is replaced, not rewritten).
    used: u64,
}

/// What instances share to be one draw: their block (None: coarse), mesh level and stitch.
type DrawKey = (Option<PageId>, u8, u8);

/// One instanced draw: nodes of block `block` (None: coarse nodes) with the same index list.
#[derive(Clone, Copy, Debug)]
struct DrawGroup {
    block: Option<PageId>,
    range: IndexRange,
    first_instance: u32,
    count: u32,
}

/// Draws the height field of a [`PageStore`]; see the module docs.
pub struct TerrainRenderer {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    blocks: Blocks,
    pipelines: Pipelines,
    /// Sets of the frames (uniforms, tile draws, coarse level), of the bounds outputs, of pages.
    frame_pool: SetPool,
    out_pool: SetPool,
    page_pool: SetPool,
    page_sets: BTreeMap<PageId, PageSet>,
    /// Page sets replaced while a frame in flight bound them, with that frame: reused after it.
    spare_sets: Vec<(u64, SetHandle)>,
    index_buffer: Buffer,
    ranges: [[IndexRange; STITCHES]; LEVELS],
    /// What each frame in flight owns; `slot` is the current frame's.
    slots: Vec<FrameSlot>,
    slot: usize,
    /// Frames begun, and the newest frame known finished.
    frame_no: u64,
    retired_through: u64,
    /// Bytes of one page's bounds in a bounds output (aligned for dynamic offsets).
    bounds_stride: u64,
    /// Pages whose GPU tile bounds are in flight: the tiles and the newest job's number.
    bounds_pending: HashMap<PageId, ([u32; 4], u64)>,
    bounds_seq: u64,
    /// Pages whose tiles hold bounds estimated from the coarse level.
    estimated: BTreeSet<PageId>,
    /// Tile bounds and the quadtree's node bounds above them.
    nodes: NodeBounds,
    coverage_kernel: ComputeKernel<()>,
    covered_pixels: Option<u64>,
    /// Error bound the last frame used (warm start of the triangle budget).
    last_tau: f32,
    initialized: bool,
    /// Change epoch of the height field this renderer has caught up with.
    seen_epoch: u64,
    dummy: Image,
    /// The field tinting the terrain, if any ([`overlay::Tint`]).
    tint: overlay::Tint,
    /// The fields the shading pass reads through page atlases: the lighting, the rivers'
    /// water, the heights (normals and curvature per pixel, r32f documents) and the overlay
    /// below; and the pages the last frame wanted in the lighting's and water's atlases (the
    /// next refresh brings them onto the GPU).
    light: ShadedField,
    rivers: ShadedField,
    heights: ShadedField,
    /// The overlay tinting the terrain (the field [`overlay::Tint`] names), per pixel.
    overlay: ShadedField,
    atlas_wanted: Vec<PageId>,
    /// The G-buffer and shaded image, the size of the last target; the shading kernels, and
    /// whether the prepared frame draws water (which of them shades it); the composition sets
    /// (one per slot).
    gbuffer: Option<GBuffer>,
    shade: ShadeKernels,
    water: bool,
    compose_pool: SetPool,
    /// A page set of placeholders, bound for coarse nodes.
    flat_set: SetHandle,
    groups: Vec<DrawGroup>,
    /// Per page (row-major), whether it can be drawn: 0 not known, 1 yes, 2 no.
    page_drawable: Vec<u8>,
    /// Page nodes (level, x, y) the last frame draws, and pages it asked for (most wanted first).
    page_nodes: Vec<(u8, u32, u32)>,
    requests: Vec<PageId>,
    wireframe: bool,
    /// The view's [`ViewSettings::unfiltered`].
    unfiltered: bool,
    /// What the prepared frame would show (a hash of its uniforms, draws and the epochs of the
    /// fields it reads), and what the last drawn frame showed (see [`Self::picture_changed`]).
    picture: u64,
    drawn: Option<DrawnPicture>,
    pub stats: FrameStats,
}

/// The picture in the G-buffer's shaded image and the depth target: what it shows, the depth
/// target it was drawn with, and the view its depths unproject with.
#[derive(Clone, Copy)]
struct DrawnPicture {
    key: u64,
    depth: vk::ImageView,
    view: (glam::Mat4, [u32; 2]),
}

impl TerrainRenderer {
    /// A renderer for documents like `desc` drawing into targets of `options.color_format`.
    pub fn new(gpu: &Arc<Gpu>, desc: DocumentDesc, options: RenderOptions) -> Result<Self> {
        // The vertex stage binds a block's pages, its overlay pages and the coarse level.
        let images = (PAGE_SLOTS + OVERLAY_SLOTS + 1) as u32;
        if gpu.info().max_per_stage_storage_images < images {
            return Err(GpuError::Unsupported(format!(
                "{} binds {} storage images per shader stage; the terrain's vertex stage needs {images}",
                gpu.info().name,
                gpu.info().max_per_stage_storage_images
            )));
        }
        if !gpu.dynamic_rendering() {
            return Err(GpuError::Unsupported(format!(
                "{} has no dynamic rendering (Vulkan 1.3): the terrain cannot be drawn",
                gpu.info().name
            )));
        }
        if !crate::pages::coarse::kept(&desc) {
            return Err(GpuError::Unsupported(format!(
                "a {}x{} document has no coarse level (past {}² texels): it cannot be drawn",
                desc.width,
                desc.height,
                crate::pages::coarse::MAX_SIDE * crate::pages::coarse::FACTOR
            )));
        }
        // Compiled on a thread of its own while everything else is made and the first frame
        // prepared: with no driver cache it is most of a first run's compile (docs/PERF.md,
        // "A first run").
        let shade = ShadeKernels::new(gpu, options.water)?;
        let pipelines = make_pipelines(gpu, desc, options.color_format)?;
        let mut frame_pool = SetPool::new(&pipelines.frame, SLOTS as u32);
        let mut out_pool = SetPool::new(&pipelines.out, SLOTS as u32);
        let mut compose_pool = SetPool::new(&pipelines.compose_set, SLOTS as u32);
        let grid = TileGrid::new(desc.width, desc.height);
        let (index_buffer, ranges) = upload_index_lists(gpu)?;
        let bounds_stride = bounds_stride(gpu, &desc);
        let table_bytes = u64::from(desc.pages_x() * desc.pages_y()) * 4;
        let slots = (0..SLOTS)
            .map(|_| {
                FrameSlot::new(
                    gpu,
                    [&mut frame_pool, &mut out_pool, &mut compose_pool],
                    bounds_stride,
                    table_bytes,
                )
            })
            .collect::<Result<_>>()?;
        let dummy = placeholder::flat_page(gpu, desc.format)?;
        let overlay_dummy = placeholder::flat_page(gpu, HeightFormat::R32f)?;
        let mut light = ShadedField::new(
            gpu,
            desc,
            options.atlas_bytes,
            super::lighting::FIELD,
            super::lighting::lit_coarse_placeholder(gpu)?,
        )?;
        // Mip levels filter the sun and occlusion where a pixel spans several texels.
        light.atlas.keep_mips(atlas_mips::Texels::PackedLight)?;
        let rivers = ShadedField::new(
            gpu,
            desc,
            options.atlas_bytes,
            RIVERS_FIELD,
            placeholder::cleared(
                gpu,
                "no water coarse placeholder",
                vk::Format::R32G32B32A32_SFLOAT,
                NO_WATER,
            )?,
        )?;
        let mut heights = ShadedField::new(
            gpu,
            desc,
            options.atlas_bytes,
            crate::pages::store::HEIGHT,
            placeholder::cleared(
                gpu,
                "heights coarse placeholder",
                vk::Format::R32G32B32A32_SFLOAT,
                0.0,
            )?,
        )?;
        // The atlas holds the pages' texels as the images store them: r32f only. Its mip
        // levels filter the normals where a pixel spans several texels.
        heights.on = desc.format == HeightFormat::R32f;
        heights.atlas.keep_mips(atlas_mips::Texels::Values)?;
        // Follows the tinting field's name (none yet).
        let mut overlay = ShadedField::new(
            gpu,
            desc,
            options.atlas_bytes,
            "overlay",
            placeholder::cleared(
                gpu,
                "overlay coarse placeholder",
                vk::Format::R32G32B32A32_SFLOAT,
                1.0,
            )?,
        )?;
        overlay.follow("");
        let coverage_kernel = ComputeKernel::new(
            gpu,
            &shaders::RENDER_COVERAGE_COMP,
            &[BindingKind::SampledImage, BindingKind::StorageBuffer],
            &[],
        )?;
        let mut r = Self {
            gpu: gpu.clone(),
            desc,
            blocks: Blocks::new(desc),
            page_pool: SetPool::new(&pipelines.page, SETS_PER_POOL),
            pipelines,
            frame_pool,
            out_pool,
            page_sets: BTreeMap::new(),
            spare_sets: Vec::new(),
            index_buffer,
            ranges,
            slots,
            slot: 0,
            frame_no: 0,
            retired_through: 0,
            bounds_stride,
            bounds_pending: HashMap::new(),
            bounds_seq: 0,
            estimated: BTreeSet::new(),
            nodes: NodeBounds::new(grid),
            coverage_kernel,
            covered_pixels: None,
            last_tau: 0.0,
            initialized: false,
            seen_epoch: 0,
            dummy,
            tint: overlay::Tint::new(overlay_dummy),
            light,
            rivers,
            heights,
            overlay,
            atlas_wanted: Vec::new(),
            gbuffer: None,
            shade,
            water: options.water,
            compose_pool,
            flat_set: SetHandle::default(),
            groups: Vec::new(),
            page_drawable: Vec::new(),
            page_nodes: Vec::new(),
            requests: Vec::new(),
            wireframe: false,
            unfiltered: false,
            picture: 0,
            drawn: None,
            stats: FrameStats::default(),
        };
        r.flat_set = r.page_pool.allocate()?;
        let flat = [&r.dummy; PAGE_SLOTS];
        r.page_pool
            .write(r.flat_set, 0, Bound::StorageImages(&flat))?;
        let overlay = [&r.tint.placeholder; OVERLAY_SLOTS];
        r.page_pool
            .write(r.flat_set, 1, Bound::StorageImages(&overlay))?;
        Ok(r)
    }

    /// Tints the terrain by field `name` of the store (r32f, values in [0, 1]), or stops
    /// tinting: a [`Overlay::Mask`] (the mask of the layer being painted: magenta, 1: no tint)
    /// or [`Overlay::Water`] (a region erosion's water: blue, 0: no tint). Page sets are
    /// rewritten as needed.
    pub fn set_overlay(&mut self, overlay: Option<(&str, Overlay)>) {
        if !self.tint.set(overlay) {
            return;
        }
        for s in self.page_sets.values_mut() {
            s.stale = true;
        }
    }

    /// The tile grid, its tile bounds as of the last [`Self::refresh`] and the quadtree's
    /// node bounds above them (the document's height range among them).
    pub fn nodes(&self) -> &NodeBounds {
        &self.nodes
    }

    /// Pages the last prepared frame asked to have on the GPU, most wanted first (with those of
    /// the same nodes already there): the regions they cover are drawn from the coarse level
    /// until they are all there. Serve them between frames ([`Field::bring_in`], keeping
    /// [`Self::pages_in_use`]).
    pub fn requests(&self) -> &[PageId] {
        &self.requests
    }

    /// Pages the last prepared frame draws from (keep them on the GPU while it is drawn).
    pub fn pages_in_use(&self) -> Vec<PageId> {
        let pages: BTreeSet<PageId> = self
            .page_nodes
            .iter()
            .flat_map(|&(l, x, y)| node_pages(&self.desc, l, x, y))
            .collect();
        pages.into_iter().collect()
    }

    /// Covered pixels of the last frame whose coverage was read.
    pub fn covered_pixels(&self) -> Option<u64> {
        self.covered_pixels
    }

    /// Starts compiling the shading kernels no frame has needed yet, each on a thread of its
    /// own, so that a frame that first shows the sea or rivers (or first shows neither) need not
    /// wait for one. Started already, a kernel is left as it is; only the first call does
    /// anything (an error is not tried again: a frame that needs the kernel starts it).
    pub fn start_shading_kernels(&mut self) -> Result<()> {
        self.shade.start_all()
    }

    /// Whether wireframe views are available (fillModeNonSolid).
    pub fn has_wireframe(&self) -> bool {
        self.pipelines.wire.is_some()
    }

    /// Views and present-bits of `block`'s set as `store` shows it now: the height field's
    /// pages around the block, and the overlay's pages of the block.
    fn neighbourhood<'s>(
        &'s self,
        store: &'s PageStore,
        block: PageId,
    ) -> (
        [&'s Image; PAGE_SLOTS],
        [&'s Image; OVERLAY_SLOTS],
        [u32; 2],
    ) {
        let terrain = store.height();
        let mut images = [&self.dummy; PAGE_SLOTS];
        let mut present = [0u32; 2];
        for (slot, page) in self.blocks.span(block) {
            if let Some(img) = page.and_then(|n| terrain.visible_image(n)) {
                images[slot] = img;
                present[slot / 32] |= 1 << (slot % 32);
            }
        }
        let mut overlay = [&self.tint.placeholder; OVERLAY_SLOTS];
        if let Some(field) = self.tint.field(store) {
            for (slot, id) in self.blocks.overlay_pages(block) {
                if let Some(img) = field.visible_image(id) {
                    overlay[slot] = img;
                    present[1] |= 1 << (OVERLAY_PRESENT_SHIFT + slot as u32);
                }
            }
        }
        (images, overlay, present)
    }

    /// Declares that this recording reads, in `access`, every image of the sets of `blocks`
    /// and the placeholder they bind for flat pages (each page once: neighbouring sets share
    /// their rings).
    fn declare_blocks<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        terrain: &'a Field,
        blocks: impl IntoIterator<Item = PageId>,
        access: Access,
    ) {
        let mut pages: Vec<PageId> = blocks
            .into_iter()
            .flat_map(|b| self.blocks.span(b).filter_map(|(_, p)| p))
            .collect();
        pages.sort_unstable();
        pages.dedup();
        for id in pages {
            if let Some(img) = terrain.visible_image(id) {
                rec.image(img, access);
            }
        }
        rec.image(&self.dummy, access);
    }

    /// Makes `block`'s set point at its pages' current images, and notes that this frame binds
    /// it. A stale set that a frame in flight binds is replaced by a spare one (rewriting a bound
    /// set is not allowed); it becomes spare once that frame has finished.
    fn update_set(&mut self, store: &PageStore, block: PageId) -> Result<()> {
        // A set goes stale when a page of its neighbourhood changes image (every change of a
        // visible image is marked: edits, moves, undo, the start of an edit).
        let frame = self.frame_no;
        if let Some(s) = self.page_sets.get_mut(&block).filter(|s| !s.stale) {
            s.used = frame;
            return Ok(());
        }
        let set = match self.page_sets.get(&block) {
            Some(s) if s.used <= self.retired_through => s.set,
            Some(s) => {
                self.spare_sets.push((s.used, s.set));
                self.spare_set()?
            }
            None => self.spare_set()?,
        };
        let (images, overlay, present) = self.neighbourhood(store, block);
        self.page_pool
            .write(set, 0, Bound::StorageImages(&images))?;
        self.page_pool
            .write(set, 1, Bound::StorageImages(&overlay))?;
        self.page_sets.insert(
            block,
            PageSet {
                set,
                present,
                stale: false,
                used: frame,
            },
        );
        Ok(())
    }

    /// A page set no frame in flight binds: a spare one, else a new one.
    fn spare_set(&mut self) -> Result<SetHandle> {
        let done = self.retired_through;
        match self.spare_sets.iter().position(|&(used, _)| used <= done) {
            Some(i) => Ok(self.spare_sets.swap_remove(i).1),
            None => self.page_pool.allocate(),
        }
    }

    /// Selects the nodes, groups them into draws and writes the frame's uniforms for the
    /// `window` of an image seen by `camera`; notes the pages the frame wanted and could not
    /// draw ([`Self::requests`]). The nodes are those of the whole image (every window of it
    /// draws the same mesh); only the pixels drawn are the window's.
    pub fn prepare(
        &mut self,
        store: &PageStore,
        camera: &Camera,
        window: ImageWindow,
        view: &ViewSettings,
    ) -> Result<()> {
        let _p = crate::profile::scope("render: prepare");
        let terrain = store.height();
        let t0 = std::time::Instant::now();
        let whole = camera.view_proj(window.full);
        let view_proj = window.crop() * whole;
        let viewport = window.size;
        let lod = LodView {
            eye: camera.eye(),
            viewport_height: window.full[1],
            fov_y: camera.fov_y,
            vertical_scale: view.vertical_scale,
            pixel_error: view.pixel_error.max(0.01),
        };
        let pixels = u64::from(viewport[0]) * u64::from(viewport[1]);
        let (sel, tau) = self.select_nodes(terrain, lod, frustum_planes(&whole), view, pixels);
        let (mut stats, draws) = self.group_draws(&sel, tau, terrain);
        let _phase = crate::profile::scope("prepare: sets and uploads");
        let blocks: BTreeSet<PageId> = self.groups.iter().filter_map(|g| g.block).collect();
        for block in blocks {
            self.update_set(store, block)?;
        }
        if !draws.is_empty() {
            self.upload_draws(&draws)?;
        }
        let overlay_flat = self.tint.field(store).map(Field::flat);
        self.wireframe = view.wireframe && self.pipelines.wire.is_some();
        self.unfiltered = view.unfiltered;
        self.light.on = view.sun.is_some() && store.field(&self.light.name).is_some();
        self.rivers.on = store.field(&self.rivers.name).is_some();
        self.overlay.follow(self.tint.name().unwrap_or(""));
        self.overlay.on = self.tint.field(store).is_some();
        self.atlas_wanted.clear();
        if self.light.on || self.rivers.on {
            // The lighting and water of the pages drawn at page level (and the ring their
            // texels reach), in the atlases the shading pass reads.
            let desc = self.desc;
            self.atlas_wanted =
                pages_of_nodes(&self.page_nodes, |l, x, y| light_pages(&desc, l, x, y));
        }
        // Normals read a texel further on each side than the lighting's bilinear taps: the
        // pages every page node reads, as its draw does.
        let shade_wanted = match self.heights.on || self.overlay.on {
            true => {
                let desc = self.desc;
                pages_of_nodes(&self.page_nodes, |l, x, y| node_pages(&desc, l, x, y))
            }
            false => Vec::new(),
        };
        if let Some(field) = self.light.field(store) {
            stats.light_pages = self.atlas_wanted.len() as u32;
            stats.light_pages_coarse =
                self.light
                    .atlas
                    .update(field, &self.atlas_wanted, self.frame_no)? as u32;
        }
        if let Some(field) = self.rivers.field(store) {
            self.rivers
                .atlas
                .update(field, &self.atlas_wanted, self.frame_no)?;
        }
        for shaded in [&mut self.heights, &mut self.overlay] {
            if let Some(field) = shaded.field(store) {
                shaded.atlas.update(field, &shade_wanted, self.frame_no)?;
            }
        }
        let shown = Shown {
            overlay: overlay_flat.map(|flat| (flat, self.tint.style)),
            wireframe: self.wireframe,
            lighting: self.light.on,
            rivers: self.rivers.on,
        };
        self.water = view_flags(view, shown) & (VIEW_RIVERS | VIEW_SEA) != 0;
        self.shade.start(self.water)?;
        let frame = frame_data(
            &self.desc,
            terrain.flat(),
            self.nodes.range(),
            camera.eye(),
            view_proj,
            view,
            shown,
        );
        let slot = &mut self.slots[self.slot];
        slot.uniforms.write(&[frame])?;
        let atlases = [
            &self.light.atlas,
            &self.rivers.atlas,
            &self.heights.atlas,
            &self.overlay.atlas,
        ];
        for (i, atlas) in atlases.into_iter().enumerate() {
            let (table, generation) = atlas.table();
            if slot.table_generations[i] != generation {
                slot.tables[i].write(table)?;
                slot.table_generations[i] = generation;
            }
        }
        slot.view = (view_proj, viewport);
        let tint = self.tint.name();
        let generations = [
            self.light.atlas.table().1,
            self.rivers.atlas.table().1,
            self.heights.atlas.table().1,
            self.overlay.atlas.table().1,
        ];
        self.picture = picture_key(
            &frame,
            &draws,
            viewport,
            store,
            (tint, self.unfiltered),
            generations,
        );
        let slot = &mut self.slots[self.slot];
        stats.prepare_cpu_ms = t0.elapsed().as_secs_f64() * 1e3;
        slot.stats = stats.clone();
        self.stats = stats;
        Ok(())
    }

    /// The quadtree nodes to draw from `lod` inside `planes`, and the error bound used: with
    /// a triangle budget, starting from last frame's bound and raised in 15% steps until the
    /// mesh fits; when it fits with room to spare, the next frame starts 5% lower (it relaxes
    /// back toward the asked bound as the view allows): one selection per frame once settled.
    fn select_nodes(
        &mut self,
        terrain: &Field,
        lod: LodView,
        planes: [glam::Vec4; 5],
        view: &ViewSettings,
        pixels: u64,
    ) -> (Selection, f32) {
        let _phase = crate::profile::scope("prepare: select");
        let desc = self.desc;
        // Whether each page can be drawn (0: not known, 1: yes, 2: no), kept across frames:
        // `refresh` forgets the pages that changed.
        let mut drawable = std::mem::take(&mut self.page_drawable);
        drawable.resize((desc.pages_x() * desc.pages_y()) as usize, 0);
        let mut ready = |level: u8, x: u32, y: u32| {
            node_pages(&desc, level, x, y).all(|id| {
                let i = (id.y * desc.pages_x() + id.x) as usize;
                if drawable[i] == 0 {
                    drawable[i] = if terrain.drawable(id) { 1 } else { 2 };
                }
                drawable[i] == 1
            })
        };
        // A frame that covered no pixel (only sky, or the terrain from below, where every
        // triangle faces away and is culled) budgets as if all `pixels` were covered: with a
        // budget of 0 the bound would climb to its cap, and take hundreds of frames to come back.
        let covered = self.covered_pixels.map(|c| if c == 0 { pixels } else { c });
        let budget = match covered {
            Some(c) if view.max_triangles_per_pixel > 0.0 && view.force_levels.is_none() => {
                let b = (f64::from(view.max_triangles_per_pixel) * c as f64) as u64;
                Some(b.max(MIN_TRIANGLE_BUDGET))
            }
            _ => None,
        };
        // Page nodes shaded per pixel (heights and overlay from the atlases) need triangles
        // only for their positions.
        let spacing_from = match self.heights.on {
            true => quadtree::COARSE_LEVEL,
            false => 0,
        };
        let asked = lod.pixel_error;
        let cap = asked * 65536.0;
        let mut tau = match budget {
            Some(_) => self.last_tau.max(asked),
            None => asked,
        };
        let (sel, next) = loop {
            let sv = SelectView {
                lod,
                planes,
                tau,
                force: view.force_levels,
                spacing_from,
            };
            let sel = quadtree::select(&self.nodes, &sv, &mut ready);
            let triangles = triangles_of(&sel);
            match budget {
                Some(b) if tau < cap && triangles > b => tau *= 1.15,
                Some(b) if (triangles as f64) < 0.85 * b as f64 => break (sel, tau / 1.05),
                _ => break (sel, tau),
            }
        };
        self.last_tau = next.max(asked);
        self.page_drawable = drawable;
        (sel, tau)
    }

    /// Groups the instances that draw `sel` into one instanced draw per (block or coarse,
    /// index list), notes the page nodes drawn and the pages wanted; the frame's figures so far
    /// (`tau`: the error bound used) and the instances, in draw order.
    fn group_draws(
        &mut self,
        sel: &Selection,
        tau: f32,
        terrain: &Field,
    ) -> (FrameStats, Vec<TileDraw>) {
        let _phase = crate::profile::scope("prepare: group");
        let mut stats = FrameStats {
            bounds_pages: self.stats.bounds_pages,
            estimated_pages: self.stats.estimated_pages,
            bounds_gpu_ms: self.stats.bounds_gpu_ms,
            refresh_ms: self.stats.refresh_ms,
            pixel_error_used: tau,
            covered_pixels: self.covered_pixels,
            nodes_drawn: sel.drawn.len() as u32,
            nodes_culled: sel.culled,
            nodes_visited: sel.visited,
            nodes_per_level: vec![0; usize::from(self.nodes.top()) + 1],
            ..FrameStats::default()
        };
        // Instances keyed by (block or coarse, index list), sorted: one instanced draw per key.
        let mut keyed: Vec<(DrawKey, TileDraw)> = Vec::new();
        self.page_nodes.clear();
        for d in &sel.drawn {
            stats.nodes_per_level[usize::from(d.level)] += 1;
            if !d.coarse {
                self.page_nodes.push((d.level, d.x, d.y));
            }
            self.instances_of(d, &mut |block, mesh, stitch, draw| {
                keyed.push(((block, mesh, stitch), draw))
            });
        }
        keyed.sort_by_key(|(k, _)| *k);
        self.groups.clear();
        let mut draws: Vec<TileDraw> = Vec::with_capacity(keyed.len());
        for (k, draw) in keyed {
            let range = self.ranges[usize::from(k.1)][usize::from(k.2)];
            match self.groups.last_mut() {
                Some(g) if g.block == k.0 && g.range == range => g.count += 1,
                _ => self.groups.push(DrawGroup {
                    block: k.0,
                    range,
                    first_instance: draws.len() as u32,
                    count: 1,
                }),
            }
            stats.triangles += u64::from(range.count / 3);
            draws.push(draw);
        }
        stats.instances = draws.len() as u32;
        stats.draws = self.groups.len() as u32;
        // Pages drawn from, and pages wanted.
        let desc = self.desc;
        self.requests = pages_of_nodes(&sel.requests, |l, x, y| node_pages(&desc, l, x, y));
        stats.pages_requested = self
            .requests
            .iter()
            .filter(|&&id| !terrain.drawable(id))
            .count() as u32;
        (stats, draws)
    }

    /// The instances that draw node `d`: (block or None for coarse, mesh level, stitch, draw).
    /// A page node wider than a block is drawn as one part per block: the block's width at
    /// the node's spacing, a sparser mesh level over a smaller scale.
    fn instances_of(
        &self,
        d: &quadtree::Drawn,
        out: &mut dyn FnMut(Option<PageId>, u8, u8, TileDraw),
    ) {
        let grid = self.nodes.grid();
        let level_bits = u32::from(d.level) << TILE_LEVEL_SHIFT;
        let side = TILE_QUADS << d.level;
        let origin = [(d.x * side) as i32, (d.y * side) as i32];
        if d.coarse {
            let draw = TileDraw {
                origin,
                scale: 1 << d.level,
                flags: u32::from(d.stitch) | level_bits | TILE_COARSE,
            };
            out(None, 0, d.stitch, draw);
            return;
        }
        let kb = self.blocks.level();
        let page_of = |o: [i32; 2]| PageId {
            x: o[0] as u32 / self.desc.page_size,
            y: o[1] as u32 / self.desc.page_size,
        };
        if d.level <= kb {
            let draw = TileDraw {
                origin,
                scale: 1 << d.level,
                flags: u32::from(d.stitch) | level_bits,
            };
            out(Some(Blocks::of(page_of(origin))), 0, d.stitch, draw);
            return;
        }
        let mesh = d.level - kb;
        let parts = 1u32 << mesh;
        let part_tiles = 1u32 << kb;
        for py in 0..parts {
            for px in 0..parts {
                let (tx, ty) = (
                    (d.x << d.level) + px * part_tiles,
                    (d.y << d.level) + py * part_tiles,
                );
                if tx >= grid.tiles_x || ty >= grid.tiles_y {
                    continue;
                }
                // Only the node's own sides stitch.
                let mut stitch = d.stitch;
                if py > 0 {
                    stitch &= !lod::NORTH;
                }
                if py + 1 < parts {
                    stitch &= !lod::SOUTH;
                }
                if px > 0 {
                    stitch &= !lod::WEST;
                }
                if px + 1 < parts {
                    stitch &= !lod::EAST;
                }
                let o = [(tx * TILE_QUADS) as i32, (ty * TILE_QUADS) as i32];
                let draw = TileDraw {
                    origin: o,
                    scale: 1 << kb,
                    flags: u32::from(stitch) | level_bits,
                };
                out(Some(Blocks::of(page_of(o))), mesh, stitch, draw);
            }
        }
    }

    /// Records the count of covered pixels of `depth` into the current slot (after the
    /// frame's drawing; the set from [`Self::bind_depth`]): the triangle budget of the frame
    /// that next uses the slot's results.
    pub(in crate::render) fn record_coverage<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        depth: &'a Image,
    ) -> Result<()> {
        let slot = &self.slots[self.slot];
        let set = match &slot.coverage_set {
            Some((view, set)) if *view == depth.view => set,
            _ => return Err(GpuError::usage("coverage of a depth target not bound")),
        };
        rec.fill_buffer(&slot.coverage, 0, 4, 0);
        let e = depth.desc.extent;
        rec.pass(&self.coverage_kernel, set)
            .read_image(depth)
            .read_write_buffer(&slot.coverage)
            .dispatch([e.width.div_ceil(16), e.height.div_ceil(16), 1])?;
        rec.buffer(&slot.coverage, Access::HostRead);
        Ok(())
    }

    /// Records the prepared frame: the terrain into the G-buffer and `depth`, the light atlas's
    /// copies, the shading pass, and the shaded image drawn into `color` in a rendering left
    /// open: the caller may draw more (imgui) and ends it.
    pub(in crate::render) fn record<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
        color: &'a Image,
        depth: &'a Image,
        timer: Option<&'a GpuTimer>,
    ) -> Result<()> {
        let terrain = store.height();
        let coarse = terrain
            .coarse_level()
            .ok_or_else(|| GpuError::usage("record before refresh: no coarse level"))?;
        let g = self
            .gbuffer
            .as_ref()
            .ok_or_else(|| GpuError::usage("record before bind_targets: no G-buffer"))?;
        self.record_atlas_copies(rec, store)?;
        let blocks: BTreeSet<PageId> = self.groups.iter().filter_map(|g| g.block).collect();
        self.tint.declare(rec, store, self.blocks, &blocks);
        self.declare_blocks(rec, terrain, blocks, Access::VertexStorageRead);
        rec.image(coarse.image(), Access::VertexStorageRead);
        rec.buffer(&self.index_buffer, Access::IndexRead);
        let query = match timer {
            Some(t) => Some((t, rec.timer_begin(t, "terrain draw")?)),
            None => None,
        };
        rec.begin_rendering_to(
            &[(&g.surface, Some([0.0; 4])), (&g.node, Some([0.0; 4]))],
            Some((depth, 0.0)),
        );
        let p = &self.pipelines;
        let pipeline = match (&p.wire, self.wireframe) {
            (Some(wire), true) => wire,
            _ => &p.fill,
        };
        rec.bind_graphics(pipeline);
        rec.bind_sets(true, &p.draw, 0, &[self.slots[self.slot].set], &[]);
        rec.bind_index_buffer_u16(&self.index_buffer);
        let mut bound: Option<Option<PageId>> = None;
        for g in &self.groups {
            if bound != Some(g.block) {
                let (set, push) = match g.block {
                    Some(b) => {
                        let s = &self.page_sets[&b];
                        let push = PagePush {
                            block_origin: self.blocks.origin(b),
                            present: s.present,
                        };
                        (s.set, push)
                    }
                    None => (self.flat_set, PagePush::default()),
                };
                rec.bind_sets(true, &p.draw, 1, &[set], &[]);
                rec.push_constants(&p.draw, &push);
                bound = Some(g.block);
            }
            rec.draw_indexed(g.range.count, g.count, g.range.first, g.first_instance);
        }
        rec.end_rendering();
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        self.record_shading(rec, store, color, depth, timer)
    }
}

impl TerrainRenderer {
    /// Records the copies into the page atlases the frame prepared.
    fn record_atlas_copies<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
    ) -> Result<()> {
        for shaded in [&self.light, &self.rivers, &self.heights, &self.overlay] {
            if let Some(field) = shaded.field(store) {
                shaded.atlas.record_copies(rec, field)?;
            }
        }
        Ok(())
    }

    /// Level `level` of page `id` in the heights' atlas (0: its texels; 1 to
    /// [`atlas_mips::LEVELS`]: its mip levels), row-major, `page_size >> level` a side (read
    /// back, waited for); None while the page is not in the atlas. For tests and tools: the
    /// levels' CPU twin is [`atlas_mips::mip_levels`].
    pub fn read_heights_level(&self, id: PageId, level: u32) -> Result<Option<Vec<f32>>> {
        self.heights.atlas.read_level(id, level)
    }

    /// Each page atlas's name and the bytes it holds on the GPU, its mip levels included (each
    /// at most [`RenderOptions::atlas_bytes`], or one slot).
    pub fn atlas_bytes(&self) -> Vec<(&str, u64)> {
        [&self.light, &self.rivers, &self.heights, &self.overlay]
            .into_iter()
            .map(|f| (f.atlas.label(), f.atlas.bytes()))
            .collect()
    }

    /// [`Self::read_heights_level`] of the lighting's atlas (packed texels,
    /// [`atlas_mips::Texels::PackedLight`]).
    pub fn read_light_level(&self, id: PageId, level: u32) -> Result<Option<Vec<f32>>> {
        self.light.atlas.read_level(id, level)
    }

    /// Forgets the picture drawn last (its depth target is gone or remade): the next frame draws.
    pub fn forget_picture(&mut self) {
        self.drawn = None;
    }

    /// Whether the frame prepared last would show something else than the picture drawn last
    /// (or none was drawn): a frame may keep the last picture only while this is false, or the
    /// picture is out of date.
    pub fn picture_changed(&self) -> bool {
        self.drawn.map(|d| d.key) != Some(self.picture)
    }

    pub(in crate::render) fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The view the last picture drawn into `depth` unprojects with.
    pub(in crate::render) fn drawn_view(&self, depth: &Image) -> Option<(glam::Mat4, [u32; 2])> {
        self.drawn.filter(|d| d.depth == depth.view).map(|d| d.view)
    }

    /// Whether the current frame keeps the last picture (asked for with `keep`, and one was
    /// drawn into `depth` at this size); notes what it shows: a kept picture's depths unproject
    /// with the view it was drawn with, a drawn one becomes the last picture.
    pub(in crate::render) fn note_picture(&mut self, depth: &Image, keep: bool) -> bool {
        let slot = self.slot;
        let view = self.slots[slot].view;
        let keep = keep
            && self
                .drawn
                .is_some_and(|d| d.depth == depth.view && d.view.1 == view.1);
        match self.drawn {
            Some(d) if keep => self.slots[slot].view = d.view,
            _ => {
                self.drawn = Some(DrawnPicture {
                    key: self.picture,
                    depth: depth.view,
                    view,
                })
            }
        }
        keep
    }

    /// A frame that keeps the last picture: the light atlas's copies the frame prepared (its
    /// bookkeeping expects them), then the shaded image composed into `color` as
    /// [`Self::record`] ends.
    pub(in crate::render) fn record_kept<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
        color: &'a Image,
    ) -> Result<()> {
        self.record_atlas_copies(rec, store)?;
        self.record_compose(rec, color);
        Ok(())
    }
}

/// What a frame would show, as a hash: its uniforms (camera, view, cursor; not the waves' time:
/// an animated sea is the caller's to redraw), its tile draws, the viewport, the tinting field,
/// the page atlases' generations and the change epochs of every field of `store` (heights,
/// lighting, rivers, overlays). Two frames with the same key draw the same picture, but for the waves.
fn picture_key(
    frame: &FrameData,
    draws: &[TileDraw],
    viewport: [u32; 2],
    store: &PageStore,
    (tint, unfiltered): (Option<&str>, bool),
    atlas_generations: [u64; 4],
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut still = *frame;
    still.analysis[2] = 0.0;
    bytemuck::bytes_of(&still).hash(&mut h);
    tint.hash(&mut h);
    unfiltered.hash(&mut h);
    bytemuck::cast_slice::<_, u8>(draws).hash(&mut h);
    viewport.hash(&mut h);
    atlas_generations.hash(&mut h);
    for name in store.names() {
        name.hash(&mut h);
        store.field(name).map(|f| f.changes().epoch()).hash(&mut h);
    }
    h.finish()
}

impl Drop for TerrainRenderer {
    fn drop(&mut self) {
        // Its pipelines, layouts and descriptor pools go now: no frame may still use them.
        if let Err(e) = self.finish_frames() {
            eprintln!("scarp: waiting for the renderer's frames failed: {e}");
        }
    }
}

/// Pages that page node (level, x, y) reads: those under its texels and under the one-texel ring
/// around them (edges and normals).
fn node_pages(desc: &DocumentDesc, level: u8, x: u32, y: u32) -> impl Iterator<Item = PageId> {
    let side = TILE_QUADS << level;
    let ps = desc.page_size;
    let span = |v: u32, n: u32| {
        let first = (v * side).saturating_sub(1).min(n - 1) / ps;
        let last = (v * side + side + 1).min(n - 1) / ps;
        first..=last
    };
    let (xs, ys) = (span(x, desc.width), span(y, desc.height));
    ys.flat_map(move |py| xs.clone().map(move |px| PageId { x: px, y: py }))
}

/// Pages whose lighting page node (level, x, y) shows: those under its texels and, for the
/// bilinear taps one texel on, the next page east and south.
fn light_pages(desc: &DocumentDesc, level: u8, x: u32, y: u32) -> impl Iterator<Item = PageId> {
    let side = TILE_QUADS << level;
    let ps = desc.page_size;
    let span = |v: u32, n: u32| {
        let first = (v * side).min(n - 1) / ps;
        let last = (v * side + side + 1).min(n - 1) / ps;
        first..=last
    };
    let (xs, ys) = (span(x, desc.width), span(y, desc.height));
    ys.flat_map(move |py| xs.clone().map(move |px| PageId { x: px, y: py }))
}

/// The clear colour, gamma-encoded like the shader's output.
pub fn sky_encoded() -> [f32; 4] {
    let g = |c: f32| c.powf(1.0 / 2.2);
    [g(SKY[0]), g(SKY[1]), g(SKY[2]), 1.0]
}

/// The set layouts, pipeline layouts and pipelines: drawing (fill, and wireframe where the
/// device has it) and the tile-bounds kernel.
fn make_pipelines(
    gpu: &Arc<Gpu>,
    desc: DocumentDesc,
    color_format: vk::Format,
) -> Result<Pipelines> {
    use crate::gpu::DescriptorKind as K;
    let vertex = vk::ShaderStageFlags::VERTEX;
    let fragment = vk::ShaderStageFlags::FRAGMENT;
    let frame = SetLayout::new(
        gpu,
        &[
            LayoutBinding::new(K::UniformBuffer, vertex),
            LayoutBinding::new(K::StorageBuffer, vertex),
            LayoutBinding::new(K::StorageImage, vertex),
        ],
    )?;
    let page = SetLayout::new(
        gpu,
        &[
            LayoutBinding::new(K::StorageImage, vertex | vk::ShaderStageFlags::COMPUTE)
                .array(PAGE_SLOTS as u32),
            LayoutBinding::new(K::StorageImage, vertex).array(OVERLAY_SLOTS as u32),
        ],
    )?;
    let out = SetLayout::new(
        gpu,
        &[LayoutBinding::new(
            K::StorageBufferDynamic,
            vk::ShaderStageFlags::COMPUTE,
        )],
    )?;
    let compose_set = SetLayout::new(gpu, &[LayoutBinding::new(K::SampledImage, fragment)])?;
    let draw = PipelineLayout::new(
        gpu,
        &[&frame, &page],
        vertex,
        std::mem::size_of::<PagePush>() as u32,
    )?;
    let bounds = PipelineLayout::new(
        gpu,
        &[&page, &out],
        vk::ShaderStageFlags::COMPUTE,
        std::mem::size_of::<BoundsPush>() as u32,
    )?;
    let compose_layout = PipelineLayout::new(gpu, &[&compose_set], fragment, 0)?;
    let (vert_shader, bounds_shader) = match desc.format {
        HeightFormat::R32f => (
            &shaders::RENDER_TERRAIN_VERT,
            &shaders::RENDER_TILE_BOUNDS_COMP,
        ),
        HeightFormat::R16 => (
            &shaders::RENDER_TERRAIN_R16_VERT,
            &shaders::RENDER_TILE_BOUNDS_R16_COMP,
        ),
    };
    let gbuffer = [deferred::SURFACE_FORMAT, deferred::NODE_FORMAT];
    let graphics = |name, polygon_mode| {
        GraphicsPipeline::new(
            gpu,
            &draw,
            &GraphicsDesc {
                name,
                vertex: vert_shader,
                fragment: &shaders::RENDER_TERRAIN_FRAG,
                color_formats: &gbuffer,
                // Reverse-Z: nearer is larger.
                depth: Some((DEPTH_FORMAT, vk::CompareOp::GREATER_OR_EQUAL)),
                polygon_mode,
                // A heightfield seen from above shows only the side of each triangle that
                // faces the eye: wound clockwise on screen here (the grid's order seen through
                // the view's flip). The others lie behind it; culling them before the
                // rasterizer saves these GPUs' few raster units 7 % of the draw (docs/PERF.md,
                // "The draw: what its time is"). From below, the terrain is not drawn.
                cull: Some(vk::FrontFace::CLOCKWISE),
            },
        )
    };
    let fill = graphics("terrain draw", vk::PolygonMode::FILL)?;
    let wire = match gpu.fill_mode_non_solid() {
        true => Some(graphics("terrain wireframe", vk::PolygonMode::LINE)?),
        false => None,
    };
    let compose = GraphicsPipeline::new(
        gpu,
        &compose_layout,
        &GraphicsDesc {
            name: "compose",
            vertex: &shaders::RENDER_FULLSCREEN_VERT,
            fragment: &shaders::RENDER_COMPOSE_FRAG,
            color_formats: &[color_format],
            depth: None,
            polygon_mode: vk::PolygonMode::FILL,
            cull: None,
        },
    )?;
    let tile_bounds = ComputePipeline::new(gpu, "tile bounds", &bounds, bounds_shader)?;
    Ok(Pipelines {
        frame,
        page,
        out,
        compose_set,
        draw,
        bounds,
        compose_layout,
        fill,
        wire,
        compose,
        tile_bounds,
    })
}

/// Every (level, stitch) index list in one device-local index buffer.
fn upload_index_lists(gpu: &Arc<Gpu>) -> Result<(Buffer, [[IndexRange; STITCHES]; LEVELS])> {
    let (indices, ranges) = lod::index_lists();
    let index_bytes = std::mem::size_of_val(indices.as_slice()) as u64;
    let index_buffer = Buffer::new(
        gpu,
        "tile indices",
        BufferDesc::new(index_bytes)
            .usage(vk::BufferUsageFlags::INDEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST),
    )?;
    {
        let mut staging = Buffer::new(gpu, "tile indices upload", BufferDesc::upload(index_bytes))?;
        staging.write(&indices)?;
        let mut rec = Recorder::new(gpu)?;
        rec.buffer(&staging, Access::HostWrite);
        rec.copy_buffer(&staging, 0, &index_buffer, 0, index_bytes);
        rec.submit_and_wait()?;
    }
    Ok((index_buffer, ranges))
}

/// Bytes of one page's range of tile bounds (aligned for dynamic offsets).
fn bounds_stride(gpu: &Arc<Gpu>, desc: &DocumentDesc) -> u64 {
    let tiles_per_page = u64::from(desc.page_size / TILE_QUADS);
    let align = gpu.info().min_storage_buffer_offset_alignment.max(1);
    (tiles_per_page * tiles_per_page * 32).div_ceil(align) * align
}

/// Triangles the nodes of `sel` draw (stitching ignored: an upper bound).
fn triangles_of(sel: &Selection) -> u64 {
    sel.drawn.len() as u64 * lod::triangles_at(0)
}

/// The pages `pages_of` names for each of `nodes` (level, x, y), each once, in the order
/// first named.
fn pages_of_nodes<I: Iterator<Item = PageId>>(
    nodes: &[(u8, u32, u32)],
    pages_of: impl Fn(u8, u32, u32) -> I,
) -> Vec<PageId> {
    let mut seen = BTreeSet::new();
    nodes
        .iter()
        .flat_map(|&(l, x, y)| pages_of(l, x, y))
        .filter(|&id| seen.insert(id))
        .collect()
}

/// What a frame shows beyond the view settings: the overlay's flat value and style, whether
/// the wireframe and the lighting are drawn.
#[derive(Clone, Copy, Debug)]
struct Shown {
    overlay: Option<(f32, Overlay)>,
    wireframe: bool,
    lighting: bool,
    rivers: bool,
}

/// The shaders' view flags for `view` and what is `shown`.
fn view_flags(view: &ViewSettings, shown: Shown) -> u32 {
    let mut flags = 0;
    let mut set = |on: bool, flag: u32| {
        if on {
            flags |= flag;
        }
    };
    set(view.lod_colours, VIEW_LOD_COLOURS);
    set(view.cursor.is_some(), VIEW_CURSOR);
    set(view.slope.is_some(), VIEW_SLOPE);
    set(view.contours.is_some(), VIEW_CONTOURS);
    set(view.curvature.is_some(), VIEW_CURVATURE);
    set(view.materials_map, VIEW_MATERIALS);
    set(shown.overlay.is_some(), VIEW_OVERLAY);
    set(
        matches!(shown.overlay, Some((_, Overlay::Water))),
        VIEW_OVERLAY_WATER,
    );
    set(
        matches!(shown.overlay, Some((_, Overlay::Uplift))),
        VIEW_OVERLAY_UPLIFT,
    );
    set(shown.wireframe, VIEW_WIREFRAME);
    set(shown.lighting, VIEW_LIGHTING);
    set(shown.rivers, VIEW_RIVERS);
    set(view.look.is_some(), VIEW_LOOK);
    set(view.sea_level.is_some(), VIEW_SEA);
    flags
}

/// The vertical exaggeration of `vertical_scale` over `desc`'s true scale, by which drawn slopes
/// are steeper than the ground's: 1 for a document without a known height unit (its slopes are
/// the drawn ones, as they always were).
fn exaggeration(desc: &DocumentDesc, vertical_scale: f32) -> f32 {
    match desc.units.height_unit {
        Some(_) => vertical_scale / desc.vertical_scale(),
        None => 1.0,
    }
}

/// The frame's uniforms: a document of `desc` whose flat pages read `flat`, heights drawn
/// within `(height_lo, height_hi)`, seen from `eye` through `view_proj` with `view`'s
/// settings and what is `shown`.
fn frame_data(
    desc: &DocumentDesc,
    flat: f32,
    (height_lo, height_hi): (f32, f32),
    eye: Vec3,
    view_proj: glam::Mat4,
    view: &ViewSettings,
    shown: Shown,
) -> FrameData {
    let (light, ambient) = match view.sun {
        Some(sun) => (Vec3::from(sun.world()), 0.35),
        None => (Vec3::new(-0.4, 0.8, -0.45).normalize(), 0.28),
    };
    let cursor = view.cursor.map_or([0.0; 4], |c| {
        [c.center[0], c.center[1], c.radius, c.inner_radius]
    });
    let mut frame = FrameData {
        view_proj: view_proj.to_cols_array_2d(),
        eye: [eye.x, eye.y, eye.z, view.vertical_scale],
        light: [light.x, light.y, light.z, ambient],
        cursor,
        shade: [
            view.fog,
            view.altitude_range.map_or(height_lo, |r| r.0),
            view.altitude_range.map_or(height_hi, |r| r.1),
            view.sea_level.unwrap_or(0.0),
        ],
        doc: [
            desc.width as i32,
            desc.height as i32,
            desc.page_size as i32,
            view_flags(view, shown) as i32,
        ],
        heights: [
            flat,
            desc.height_min,
            desc.height_range(),
            shown.overlay.map_or(1.0, |(flat, _)| flat),
        ],
        analysis: [
            view.slope.unwrap_or(0.0),
            view.contours.unwrap_or(1.0),
            view.wave_time,
            exaggeration(desc, view.vertical_scale),
        ],
        inv_view_proj: view_proj.inverse().to_cols_array_2d(),
        ..bytemuck::Zeroable::zeroed()
    };
    match (&view.look, view.materials_map) {
        (Some(look), _) => look.apply(&mut frame),
        // The weights map needs rules even where the look is off.
        (None, true) => super::look::Look::default().apply(&mut frame),
        (None, false) => {}
    }
    // Drawn curvature (world units per texel²) is the metres' Laplacian times exaggeration ×
    // texel size: scaled so that ±`curvature` 1/m is ±1.
    if let Some(c) = view.curvature {
        let drawn_per_m = exaggeration(desc, view.vertical_scale) * desc.texel_size() as f32;
        frame.look[3] = 1.0 / (c.max(1e-12) * drawn_per_m);
    }
    frame
}
