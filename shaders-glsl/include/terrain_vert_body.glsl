// Terrain vertex shader: one shared 65x65 grid (the vertex index is the grid position), per-node
// instance data (render/quadtree.rs). Page nodes read heights from the page images of the bound
// block; coarse nodes (spacing 64 and up) from the coarse level's first heights, which are the
// page texels at block corners, so both kinds meet exactly.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "height_format.glsl"
#define PAGE_SET 1
#define PAGE_OVERLAY
#include "page_fetch.glsl"

layout(set = 0, binding = 0, std140) uniform Frame { FrameData frame; };
layout(set = 0, binding = 1, std430) readonly buffer Tiles { TileDraw tiles[]; };
// The field's coarse level: lowest, highest, summed and first height per 64² block.
layout(set = 0, binding = 2, rgba32f) uniform readonly image2D coarse;
layout(push_constant) uniform Push { PagePush pc; };

layout(location = 0) out vec3 out_normal;
// The node's level (vertex spacing 2^level), plus GBUF_COARSE for coarse nodes.
layout(location = 1) flat out uint out_node;
// The overlay's value (1: no tint), with VIEW_OVERLAY.
layout(location = 2) out float out_overlay;
// The Laplacian of the world heights (world units per texel²; positive: concave, a gully).
layout(location = 3) out float out_curvature;

// First height of the coarse block at texel g (g clamped into the document).
float coarseHeight(ivec2 g) {
    ivec2 c = clamp(g, ivec2(0), frame.doc.xy - 1) / COARSE_FACTOR;
    return imageLoad(coarse, c).a;
}

// Height at texel g of the spacing-64 mesh through the coarse blocks' first heights, each cell
// split along its (0,0)-(1,1) diagonal like the index lists: the first height itself at block
// corners; elsewhere (level-5 stand-ins at spacing 32) the coarse node's own surface.
float coarseMesh(ivec2 g) {
    g = clamp(g, ivec2(0), frame.doc.xy - 1);
    const int s = COARSE_FACTOR;
    ivec2 c0 = g / s * s;
    vec2 f = vec2(g - c0) / float(s);
    float a = coarseHeight(c0);
    if (f.x == 0.0 && f.y == 0.0) {
        return a;
    }
    float b = coarseHeight(c0 + ivec2(s, 0));
    float c = coarseHeight(c0 + ivec2(0, s));
    float d = coarseHeight(c0 + ivec2(s, s));
    return f.x >= f.y ? a + f.x * (b - a) + f.y * (d - b) : a + f.y * (c - a) + f.x * (d - c);
}

void main() {
    TileDraw t = tiles[gl_InstanceIndex];
    ivec2 local = ivec2(gl_VertexIndex % TILE_VERTS, gl_VertexIndex / TILE_VERTS);
    ivec2 g = min(t.origin + local * int(t.scale), frame.doc.xy - 1);
    float vs = frame.eye.w;
    float h;
    float hx;
    float hz;
    bool overlay = (uint(frame.doc.w) & VIEW_OVERLAY) != 0u;
    // Coarse nodes (far away) show the overlay's flat value.
    out_overlay = overlay ? frame.heights.w : 1.0;
    if ((t.flags & TILE_COARSE) != 0u) {
        h = coarseMesh(g);
        // Central differences over the coarse grid (spacing COARSE_FACTOR).
        const int s = COARSE_FACTOR;
        float e = coarseMesh(g + ivec2(s, 0)), w = coarseMesh(g - ivec2(s, 0));
        float n = coarseMesh(g - ivec2(0, s)), so = coarseMesh(g + ivec2(0, s));
        hx = (e - w) / float(s);
        hz = (so - n) / float(s);
        out_curvature = (e + w + n + so - 4.0 * h) * vs / float(s * s);
    } else {
        PageView v = PageView(pc.block_origin, frame.doc.z, pc.present, frame.doc.xy,
                              frame.heights.x, frame.heights.y, frame.heights.z);
        h = pageHeight(v, g);
        if (overlay) {
            out_overlay = pageOverlay(v, g, frame.heights.w);
        }
        // Normal from central differences (one-sided at the document's edges, where clamping
        // repeats the edge texel), the same at every level so shading does not pop.
        float e = pageHeight(v, g + ivec2(1, 0)), w = pageHeight(v, g - ivec2(1, 0));
        float n = pageHeight(v, g - ivec2(0, 1)), so = pageHeight(v, g + ivec2(0, 1));
        hx = e - w;
        hz = so - n;
        out_curvature = (e + w + n + so - 4.0 * h) * vs;
    }
    out_normal = normalize(vec3(-0.5 * hx * vs, 1.0, -0.5 * hz * vs));
    out_node = ((t.flags >> TILE_LEVEL_SHIFT) & 31u)
             | ((t.flags & TILE_COARSE) != 0u ? GBUF_COARSE : 0u);
    gl_Position = frame.view_proj * vec4(float(g.x), h * vs, float(g.y), 1.0);
}
