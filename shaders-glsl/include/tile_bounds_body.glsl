// Tile bounds: per 65x65-vertex tile, its lowest and highest height and, for every coarser
// level l = 1..6 (vertex step 2^l), the largest vertical distance between a vertex and the
// level-l mesh (cells split along the (0,0)-(1,1) diagonal, as the index lists are). One
// workgroup per tile of one page. CPU twin: render::lod::tile_bounds.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "height_format.glsl"
#define PAGE_SET 0
#include "page_fetch.glsl"

layout(local_size_x = 64) in;
layout(set = 1, binding = 0, std430) buffer Bounds { float bounds[]; };
layout(push_constant) uniform Push { BoundsPush pc; };

shared float hs[TILE_VERTS * TILE_VERTS];
shared float red_min[64];
shared float red_max[64];

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
    float lo = 3.4e38;
    float hi = -3.4e38;
    for (uint i = lid; i < TILE_VERTS * TILE_VERTS; i += 64u) {
        ivec2 p = ivec2(int(i) % TILE_VERTS, int(i) / TILE_VERTS);
        float h = pageHeight(v, origin + p);
        hs[i] = h;
        lo = min(lo, h);
        hi = max(hi, h);
    }
    red_min[lid] = lo;
    red_max[lid] = hi;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (lid < s) {
            red_min[lid] = min(red_min[lid], red_min[lid + s]);
            red_max[lid] = max(red_max[lid], red_max[lid + s]);
        }
        barrier();
    }
    ivec2 local_tile = tile - pc.page_tile0;
    uint base = uint(local_tile.y * pc.tiles_per_page + local_tile.x) * 8u;
    if (lid == 0u) {
        bounds[base] = red_min[0];
        bounds[base + 1u] = red_max[0];
    }
    for (int l = 1; l <= 6; ++l) {
        int s = 1 << l;
        float e = 0.0;
        for (uint i = lid; i < TILE_VERTS * TILE_VERTS; i += 64u) {
            int x = int(i) % TILE_VERTS;
            int y = int(i) / TILE_VERTS;
            int cx = min(x / s * s, TILE_QUADS - s);
            int cy = min(y / s * s, TILE_QUADS - s);
            float fx = float(x - cx) / float(s);
            float fy = float(y - cy) / float(s);
            float a = at(cx, cy);
            float b = at(cx + s, cy);
            float c = at(cx, cy + s);
            float d = at(cx + s, cy + s);
            float m = fx >= fy ? a + fx * (b - a) + fy * (d - b) : a + fy * (c - a) + fx * (d - c);
            e = max(e, abs(hs[i] - m));
        }
        barrier();
        red_max[lid] = e;
        barrier();
        for (uint k = 32u; k > 0u; k >>= 1) {
            if (lid < k) {
                red_max[lid] = max(red_max[lid], red_max[lid + k]);
            }
            barrier();
        }
        if (lid == 0u) {
            bounds[base + 1u + uint(l)] = red_max[0];
        }
    }
}
