// Tile bounds: per 65x65-vertex tile, its lowest and highest height and, for every coarser
// level l = 1..6 (vertex step 2^l), the largest vertical distance between a vertex and the
// level-l mesh (cells split along the (0,0)-(1,1) diagonal, as the index lists are). One
// workgroup per tile of one page. CPU twin: render::lod::tile_bounds.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "height_format.glsl"
#define PAGE_SET 0
#include "page_fetch.glsl"

// 256 invocations a tile: a painting frame refreshes a few hundred tiles, too few workgroups of
// 64 to keep the GPU's units busy (docs/PERF.md, "Tile bounds in one sweep").
#define BOUNDS_GROUP 256u
layout(local_size_x = BOUNDS_GROUP) in;
layout(set = 1, binding = 0, std430) buffer Bounds { float bounds[]; };
layout(push_constant) uniform Push { BoundsPush pc; };

// The tile's heights; once every level's error is taken, the reduction's partial values
// (8 per invocation: lowest, highest, the six levels' errors).
shared float hs[TILE_VERTS * TILE_VERTS];

float at(int x, int y) { return hs[y * TILE_VERTS + x]; }

void main() {
    ivec2 tile = pc.first_tile + ivec2(gl_WorkGroupID.xy);
    ivec2 origin = tile * TILE_QUADS;
    if (origin.x >= pc.doc.x || origin.y >= pc.doc.y) {
        return;
    }
    uint lid = gl_LocalInvocationID.x;
    PageView v = PageView(pc.block_origin, pc.page_size, pc.present, pc.doc, pc.flat_height,
                          pc.height_min, pc.height_range);
    // b[0] lowest, b[1] highest, b[1 + l] the level-l error.
    float b[8] = float[8](3.4e38, -3.4e38, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (uint i = lid; i < TILE_VERTS * TILE_VERTS; i += BOUNDS_GROUP) {
        ivec2 p = ivec2(int(i) % TILE_VERTS, int(i) / TILE_VERTS);
        float h = pageHeight(v, origin + p);
        hs[i] = h;
        b[0] = min(b[0], h);
        b[1] = max(b[1], h);
    }
    barrier();
    // Every level in one sweep of the vertices.
    for (uint i = lid; i < TILE_VERTS * TILE_VERTS; i += BOUNDS_GROUP) {
        int x = int(i) % TILE_VERTS;
        int y = int(i) / TILE_VERTS;
        float h = hs[i];
        for (int l = 1; l <= 6; ++l) {
            int s = 1 << l;
            int cx = min(x / s * s, TILE_QUADS - s);
            int cy = min(y / s * s, TILE_QUADS - s);
            float fx = float(x - cx) / float(s);
            float fy = float(y - cy) / float(s);
            float a = at(cx, cy);
            float bb = at(cx + s, cy);
            float c = at(cx, cy + s);
            float d = at(cx + s, cy + s);
            float m = fx >= fy ? a + fx * (bb - a) + fy * (d - bb) : a + fy * (c - a) + fx * (d - c);
            b[1 + l] = max(b[1 + l], abs(h - m));
        }
    }
    barrier();
    for (uint k = 0u; k < 8u; ++k) {
        hs[k * BOUNDS_GROUP + lid] = b[k];
    }
    barrier();
    for (uint s = BOUNDS_GROUP / 2u; s > 0u; s >>= 1) {
        if (lid < s) {
            hs[lid] = min(hs[lid], hs[lid + s]);
            for (uint k = 1u; k < 8u; ++k) {
                uint j = k * BOUNDS_GROUP + lid;
                hs[j] = max(hs[j], hs[j + s]);
            }
        }
        barrier();
    }
    if (lid < 8u) {
        ivec2 local_tile = tile - pc.page_tile0;
        uint base = uint(local_tile.y * pc.tiles_per_page + local_tile.x) * 8u;
        bounds[base + lid] = hs[lid * BOUNDS_GROUP];
    }
}
