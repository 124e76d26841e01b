// Structures shared by the terrain renderer's shaders; mirrored in src/render/shared.rs.
#ifndef SCARP_RENDER_SHARED_GLSL
#define SCARP_RENDER_SHARED_GLSL

// TILE_QUADS, TILE_VERTS, VIEW_* flags.
#include "constants.glsl"

// Per frame (uniform buffer, std140).
struct FrameData {
    mat4 view_proj;
    vec4 eye;        // xyz: camera position (world); w: vertical scale (world y per height unit)
    vec4 light;      // xyz: direction towards the light; w: ambient
    vec4 cursor;     // x, z (world), outer radius, inner radius (texels)
    vec4 shade;      // fog density, lowest height, highest height, sea level (VIEW_SEA; height
                     // units)
    ivec4 doc;       // width, height, page size, view flags
    vec4 heights;    // flat height, r16 height_min, r16 height_range, unused
    vec4 analysis;   // walkable slope (degrees, VIEW_SLOPE), contour interval (height units,
                     // VIEW_CONTOURS), the waves' time (VIEW_SEA; seconds), the vertical
                     // exaggeration over true scale (1 where the document has no height unit)
    // With VIEW_LOOK (render::look): the sky, haze and tone map, and the materials (their rules
    // also with VIEW_MATERIALS).
    mat4 inv_view_proj; // clip to world (the sky's view rays)
    vec4 look;       // exposure, sun intensity, detail-normal strength, the curvature map's
                     // scale (VIEW_CURVATURE: drawn curvature to -1..1)
    vec4 rules0;     // grass up to this slope (deg), rock from this slope (deg), snow line and
                     // sand line (altitude, 0..1 of the document's range)
    vec4 rules1;     // snow up to this slope (deg), softness (deg), noise breakup (0..1),
                     // curvature (world units per texel²) above which steep ground is scree
    vec4 rock;       // material colours (linear RGB; w unused)
    vec4 grass;
    vec4 scree;
    vec4 sand;
    vec4 snow;
};

// One drawn node, or part of one (storage buffer, std430): 16 bytes.
struct TileDraw {
    ivec2 origin;    // document texel of grid vertex (0, 0)
    uint scale;      // texels per grid step (the index list may use every 2^l-th vertex)
    uint flags;      // bits 0-3: stitched sides (N, E, S, W); TILE_LEVEL_SHIFT: the node's
                     // level (vertex spacing 2^level); TILE_COARSE: heights from the coarse level
};

// Per draw (push constants): which block's set is bound.
struct PagePush {
    ivec2 block_origin;
    uvec2 present;
};

// Shading kernel (push constants; render/shade.comp).
struct ShadePush {
    ivec2 size;      // the target's pixels
    int pages_x;     // pages per row of the document: the light table's rows
    int light_cols;  // light atlas slots per row
    int rivers_cols; // rivers atlas slots per row
    int heights_cols; // heights atlas slots per row; 0: none (the G-buffer's normals)
    int overlay_cols; // overlay atlas slots per row; 0: none (the G-buffer's overlay)
    int mip_levels;  // mip levels of the heights' and lighting's atlases to read (0: none)
};

// A page atlas's mip levels (push constants; render/atlas_mips.comp): level `level` of
// `count` slots, `slots[i]` of them (MIPS_SLOTS_PER_PASS at most).
struct MipsPush {
    int level;      // 1 and up: what the pass writes (the mean of level - 1's 2x2 blocks)
    int page_size;  // the document's page size: a slot's side at level 0
    int cols;       // atlas slots per row
    int count;      // slots this pass reduces
    int slots[28];
};

// Tile bounds kernel (push constants). Bounds are stored page by page: the bound range of the
// output buffer (a dynamic offset) is the page's, tile (lx, ly) of the page at ly * per_page + lx.
struct BoundsPush {
    ivec2 block_origin;  // first texel of the bound block
    uvec2 present;
    int tiles_per_page;  // tiles per page side
    int page_size;
    ivec2 doc;
    float flat_height;
    float height_min;
    float height_range;
    int unused;
    ivec2 first_tile;    // tile coordinates of the dispatch's first workgroup
    ivec2 page_tile0;    // tile coordinates of the page's first tile
};

#endif
