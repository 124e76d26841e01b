//! Structures shared with the renderer's shaders (`shaders-glsl/include/render_shared.glsl`);
//! tests/shared_layout.rs checks every field's offset on the GPU.

use bytemuck::{Pod, Zeroable};

use crate::shared_constants as k;

/// Vertices per tile side minus one.
pub const TILE_QUADS: u32 = k::TILE_QUADS as u32;
/// Vertices per tile side.
pub const TILE_VERTS: u32 = k::TILE_VERTS as u32;
const _: () = assert!(TILE_VERTS == TILE_QUADS + 1);

pub use k::{
    TILE_COARSE, TILE_LEVEL_SHIFT, VIEW_CONTOURS, VIEW_CURSOR, VIEW_CURVATURE, VIEW_LIGHTING,
    VIEW_LOD_COLOURS, VIEW_LOOK, VIEW_MATERIALS, VIEW_OVERLAY, VIEW_OVERLAY_UPLIFT,
    VIEW_OVERLAY_WATER, VIEW_RIVERS, VIEW_SEA, VIEW_SLOPE, VIEW_WIREFRAME,
};

/// Per-frame uniforms (std140).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct FrameData {
    pub view_proj: [[f32; 4]; 4],
    /// xyz: eye (world); w: vertical scale.
    pub eye: [f32; 4],
    /// xyz: towards the light; w: ambient.
    pub light: [f32; 4],
    /// x, z, outer radius, inner radius.
    pub cursor: [f32; 4],
    /// fog density, lowest height, highest height, sea level.
    pub shade: [f32; 4],
    /// width, height, page size, view flags.
    pub doc: [i32; 4],
    /// flat height, r16 height_min, r16 height_range, the overlay's flat value.
    pub heights: [f32; 4],
    /// Walkable slope (degrees), contour interval (height units), unused, unused.
    pub analysis: [f32; 4],
    /// Clip to world (the sky's view rays).
    pub inv_view_proj: [[f32; 4]; 4],
    /// Exposure, sun intensity, detail-normal strength, the curvature map's scale (drawn
    /// curvature to -1..1).
    pub look: [f32; 4],
    /// Grass slope, rock slope (degrees), snow line, sand line (altitude 0..1).
    pub rules0: [f32; 4],
    /// Snow slope, softness (degrees), noise breakup, scree curvature.
    pub rules1: [f32; 4],
    /// Material colours, linear RGB.
    pub rock: [f32; 4],
    pub grass: [f32; 4],
    pub scree: [f32; 4],
    pub sand: [f32; 4],
    pub snow: [f32; 4],
}

/// One drawn node, or part of one (std430).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct TileDraw {
    /// Document texel of grid vertex (0, 0).
    pub origin: [i32; 2],
    /// Texels per grid step.
    pub scale: u32,
    /// Stitched sides (bits 0-3), the node's level at [`TILE_LEVEL_SHIFT`], [`TILE_COARSE`].
    pub flags: u32,
}

/// Pages per block side: one descriptor set binds a block and the ring of pages around it.
pub const PAGE_BLOCK: u32 = k::PAGE_BLOCK as u32;
/// Pages per side of a block's set (the block and its ring).
pub const PAGE_SPAN: u32 = k::PAGE_SPAN as u32;
/// Images in a block's set.
pub const PAGE_SLOTS: usize = k::PAGE_SLOTS as usize;
const _: () =
    assert!(PAGE_SPAN == PAGE_BLOCK + 2 && PAGE_SLOTS == (PAGE_SPAN * PAGE_SPAN) as usize);
/// Overlay pages per side of a block's set: the block's own and the next row and column.
pub const OVERLAY_SPAN: u32 = k::OVERLAY_SPAN as u32;
/// Overlay images in a block's set.
pub const OVERLAY_SLOTS: usize = k::OVERLAY_SLOTS as usize;
/// Where the overlay's present bits start in `PagePush::present[1]`.
pub const OVERLAY_PRESENT_SHIFT: u32 = k::OVERLAY_PRESENT_SHIFT;
const _: () = assert!(
    OVERLAY_SPAN == PAGE_BLOCK + 1
        && OVERLAY_SLOTS == (OVERLAY_SPAN * OVERLAY_SPAN) as usize
        && PAGE_SLOTS - 32 <= OVERLAY_PRESENT_SHIFT as usize
        && OVERLAY_PRESENT_SHIFT as usize + OVERLAY_SLOTS <= 32
);

/// Per-draw push constants: the block whose set is bound.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct PagePush {
    pub block_origin: [i32; 2],
    pub present: [u32; 2],
}

/// Push constants of the shading kernel (`render/shade.comp`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct ShadePush {
    /// The target's pixels.
    pub size: [i32; 2],
    /// Pages per row of the document: the light table's rows.
    pub pages_x: i32,
    /// Light atlas slots per row.
    pub light_cols: i32,
    /// Rivers atlas slots per row.
    pub rivers_cols: i32,
    /// Heights atlas slots per row; 0: no heights atlas (normals from the G-buffer).
    pub heights_cols: i32,
    /// Overlay atlas slots per row; 0: no overlay atlas (the overlay from the G-buffer).
    pub overlay_cols: i32,
    /// Mip levels of the heights' and the lighting's atlases the pass may read; 0: level 0
    /// only.
    pub mip_levels: i32,
}

/// Slots one pass making a page atlas's mip levels reduces.
pub const MIPS_SLOTS_PER_PASS: usize = 28;

/// Push constants of a page atlas's mip levels (`render/atlas_mips.comp`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct MipsPush {
    /// The level the pass writes (1 and up), the mean of the level below's 2x2 blocks.
    pub level: i32,
    /// The document's page size: a slot's side at level 0.
    pub page_size: i32,
    /// Atlas slots per row.
    pub cols: i32,
    /// Slots this pass reduces: `slots[..count]`.
    pub count: i32,
    pub slots: [i32; MIPS_SLOTS_PER_PASS],
}

/// Push constants of the tile-bounds kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct BoundsPush {
    pub block_origin: [i32; 2],
    pub present: [u32; 2],
    pub tiles_per_page: i32,
    pub page_size: i32,
    pub doc: [i32; 2],
    pub flat_height: f32,
    pub height_min: f32,
    pub height_range: f32,
    pub unused: i32,
    pub first_tile: [i32; 2],
    pub page_tile0: [i32; 2],
}

const _: () = assert!(std::mem::size_of::<FrameData>() == 368);
const _: () = assert!(std::mem::size_of::<TileDraw>() == 16);
const _: () = assert!(std::mem::size_of::<PagePush>() == 16);
const _: () = assert!(std::mem::size_of::<ShadePush>() == 32);
const _: () = assert!(std::mem::size_of::<MipsPush>() == 128);
const _: () = assert!(std::mem::size_of::<BoundsPush>() == 64);
const _: () = assert!(std::mem::offset_of!(BoundsPush, doc) == 24);
const _: () = assert!(std::mem::offset_of!(BoundsPush, first_tile) == 48);
