//! Constants that Rust and GLSL share, spelled once. `build.rs` turns every
//! `pub const NAME: TYPE = VALUE;` line of this file into `#define NAME VALUE` in the generated
//! header `constants.glsl` (shaders `#include "constants.glsl"`), so a kind index or a workgroup
//! size cannot drift between the two languages. Keep each constant on one line with a literal
//! value: build.rs reads this file as text, it does not evaluate Rust.

// Noise kinds (`NoiseKind::index`, the `kind` field of `NoiseParams`).
pub const NOISE_PERLIN: i32 = 0;
pub const NOISE_FBM: i32 = 1;
pub const NOISE_BILLOWY: i32 = 2;
pub const NOISE_RIDGED: i32 = 3;
pub const NOISE_IQ: i32 = 4;
pub const NOISE_SWISS: i32 = 5;
pub const NOISE_JORDAN: i32 = 6;
pub const NOISE_EROSIVE: i32 = 7;

// Pointwise brush kernels (specialization constant BRUSH_TYPE of brush/pointwise.comp); lower is
// raise with a negative strength, smooth and contrast have their own kernel.
pub const BRUSH_RAISE: i32 = 0;
pub const BRUSH_NOISE: i32 = 1;
pub const BRUSH_LEVEL: i32 = 2;
pub const BRUSH_DIRECTIONAL: i32 = 3;
pub const BRUSH_STAMP: i32 = 4;
pub const BRUSH_TERRACE: i32 = 5;
/// Flatten and ramp: toward a plane (level_target + dot(p, instance axis)).
pub const BRUSH_PLANE: i32 = 6;

// Falloff ramps of t = clamp((d - inner) / (radius - inner), 0, 1) (`Falloff::index`).
pub const FALLOFF_PARABOLIC: i32 = 0;
pub const FALLOFF_SMOOTH: i32 = 1;
pub const FALLOFF_LINEAR: i32 = 2;
pub const FALLOFF_POWER: i32 = 3;

// Layer blend modes (include/fold_body.glsl; layers::Mode::index).
pub const LAYER_ADD: i32 = 0;
pub const LAYER_MAX: i32 = 1;
pub const LAYER_MIN: i32 = 2;
pub const LAYER_REPLACE: i32 = 3;
// Steps of include/fold_body.glsl (layers/load.comp, store.comp).
pub const FOLD_LOAD: i32 = 0;
pub const FOLD_STORE: i32 = 2;

// Workgroup sizes.
/// Brush kernels (pointwise and smooth): a 16x16 tile of texels per workgroup.
pub const BRUSH_GROUP_X: u32 = 16;
pub const BRUSH_GROUP_Y: u32 = 16;
/// Texels an invocation of the wide stamp kernels paints, one below the other (brush/pointwise_rows*.comp).
pub const BRUSH_STAMP_ROWS: i32 = 4;
/// Noise generation: 64x4 texels per workgroup.
pub const NOISE_GROUP_X: u32 = 64;
pub const NOISE_GROUP_Y: u32 = 4;

// Page store.
/// Texels per side of one texel of a field's coarse level (`pages::coarse`).
pub const COARSE_FACTOR: i32 = 64;

// Terrain renderer.
/// Quads per tile side (vertices per side minus one).
pub const TILE_QUADS: i32 = 64;
/// Vertices per tile side.
pub const TILE_VERTS: i32 = 65;
pub const VIEW_LOD_COLOURS: u32 = 1;
pub const VIEW_CURSOR: u32 = 2;
pub const VIEW_WIREFRAME: u32 = 4;
/// Tint by an overlay field (a layer's mask): 1 - value, over page nodes.
pub const VIEW_OVERLAY: u32 = 8;
/// With VIEW_OVERLAY: the overlay is water (a region erosion's depth, 0..1 of its scale): a blue
/// tint of that strength.
pub const VIEW_OVERLAY_WATER: u32 = 16;
/// With VIEW_OVERLAY: the overlay is the geology uplift map (1: no tint; above 1 an orange tint,
/// full at 2; below 1 a teal one, full at 0).
pub const VIEW_OVERLAY_UPLIFT: u32 = 1024;
/// Analysis: slope in degrees as a heat map (walkable up to `FrameData.analysis.x`), unlit.
pub const VIEW_SLOPE: u32 = 32;
/// Analysis: height contour lines every `FrameData.analysis.y` height units.
pub const VIEW_CONTOURS: u32 = 64;
/// Analysis: curvature (the Laplacian of the heights in metres, 1/m) as a diverging colour
/// ramp, unlit: blue where concave, orange where convex, drawn curvature times `FrameData.look.w`
/// full at ±1.
pub const VIEW_CURVATURE: u32 = 2048;
/// Analysis: the material weights by the look's rules, each material's colour times its weight
/// (what an exported weight or splat map recoloured gives), unlit.
pub const VIEW_MATERIALS: u32 = 4096;
/// `TileDraw.flags`: the node's level sits at this bit (5 bits).
pub const TILE_LEVEL_SHIFT: u32 = 4;
/// `TileDraw.flags`: heights from the coarse level, not the pages.
pub const TILE_COARSE: u32 = 512;
/// Pages per side of a block: one descriptor set binds a block and the ring of pages around it.
pub const PAGE_BLOCK: i32 = 4;
/// Pages per side of a block's set (the block and its ring): PAGE_BLOCK + 2.
pub const PAGE_SPAN: i32 = 6;
/// Images in a block's set: PAGE_SPAN².
pub const PAGE_SLOTS: i32 = 36;
/// Overlay pages per side of a block's set: the block's own and the next row and column (the
/// vertices on a block's far edge read the next block's first texel, as the next block's own
/// vertices there do): PAGE_BLOCK + 1.
pub const OVERLAY_SPAN: i32 = 5;
/// Overlay images in a block's set (binding 1): OVERLAY_SPAN².
pub const OVERLAY_SLOTS: i32 = 25;
/// `PagePush.present[1]`: the overlay slots' bits start here (slots 32..35 of the heights below).
pub const OVERLAY_PRESENT_SHIFT: u32 = 4;
/// The G-buffer's node word (render/terrain/deferred.rs): the level in the low 5 bits, this bit
/// for coarse nodes.
pub const GBUF_COARSE: u32 = 32;
/// Shading workgroups: 8x8 pixels.
pub const SHADE_GROUP: u32 = 8;
/// A page atlas's table (render/terrain/page_atlas.rs): a page at the field's flat value (the
/// lighting: fully lit; the rivers: no water).
pub const ATLAS_FLAT: i32 = -2;
/// A page atlas's table: a page whose values are not in the atlas (read from the coarse level).
pub const ATLAS_COARSE: i32 = -1;

// Lighting (render::lighting): sun visibility and ambient occlusion from the heights.
/// Shade by the lighting field (sun visibility, ambient occlusion).
pub const VIEW_LIGHTING: u32 = 128;
/// The artist's look (render::look): materials by rule, the analytic sky and haze, exposure and
/// a filmic tone map to sRGB.
pub const VIEW_LOOK: u32 = 256;
/// A sea: a water plane at FrameData.shade.w over the document, its waves at time
/// FrameData.analysis.z (render/shade.comp, `seaOver`).
pub const VIEW_SEA: u32 = 512;
/// The rivers' water (rivers::RIVERS_FIELD, through its page atlas) drawn where it stands
/// above the ground (render/shade.comp, `riverOver`).
pub const VIEW_RIVERS: u32 = 8192;
/// Longest shadow the sun march follows, texels.
pub const LIGHT_MAX_DIST: i32 = 4096;
/// The sun march steps one texel at a time this far, then a sixteenth of the distance.
pub const LIGHT_FINE: i32 = 128;
/// Reach of the ambient-occlusion horizons, texels (within a page's neighbours: pages are at
/// least 128 texels).
pub const AO_RADIUS: i32 = 48;
/// The far level's sun march (render/lighting_far.comp) starts this far, texels, and steps an
/// eighth of the distance, at least this much.
pub const LIGHT_FAR_STEP: i32 = 16;
/// Levels per quantity in the lighting field's packing (sun + 1024 x occlusion).
pub const LIGHT_LEVELS: u32 = 1023;

// Geology's workgroup (both stream-power kernels): a warp spans one row of 32 texels, so its
// receivers, a byte each, are written as one whole 32-byte sector.
pub const GEOLOGY_GROUP_X: i32 = 32;
pub const GEOLOGY_GROUP_Y: i32 = 8;

// Smooth and contrast: most instances one pass applies (brush/smooth*.comp), each workgroup
// reading its tile with this many texels of halo into shared memory (the 3x3 taps of each
// instance reach one texel further).
pub const SMOOTH_MAX_BATCH: i32 = 8;
