// Terrain G-buffer: what the shading pass (render/shade.comp) needs of each pixel beside its
// depth. Deferred because these GPUs shade fragments on few units: the fragment stage only
// finds the pixel's surface.
//
// Page nodes: the surface is read per pixel from the heights of the bound block, as a level-0
// mesh would carry it: the normal, Laplacian and overlay of the texels at the corners of the
// pixel's texel cell, interpolated over the cell's triangle (split along its (0,0)-(1,1)
// diagonal, like the index lists). So a node drawn with fewer vertices keeps the shading of
// the full mesh: the LOD bounds only where the surface lies. Coarse nodes keep the vertex
// stage's surface (spacing 64 and up, from the coarse level).
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "height_format.glsl"
#define PAGE_SET 1
#define PAGE_OVERLAY
#include "page_fetch.glsl"
#include "page_surface.glsl"

layout(set = 0, binding = 0, std140) uniform Frame { FrameData frame; };
layout(push_constant) uniform Push { PagePush pc; };

layout(location = 0) in vec3 in_normal;
layout(location = 1) flat in uint in_node;
layout(location = 2) in float in_overlay;
layout(location = 3) in float in_curvature;
layout(location = 4) in vec2 in_texel;

// x, z of the unit normal (y = sqrt(1 - x² - z²) > 0), curvature, overlay value.
layout(location = 0) out vec4 out_surface;
// The node: level | GBUF_COARSE.
layout(location = 1) out uint out_node;

// The surface (normal, Laplacian) and overlay value at texel g, clamped into the document.
void corner(PageView v, ivec2 g, bool overlay, out vec4 surface, out float value) {
    g = min(g, frame.doc.xy - 1);
    surface = texelSurface(v, g, frame.eye.w);
    value = overlay ? pageOverlay(v, g, frame.heights.w) : 1.0;
}

void main() {
    vec3 n = in_normal;
    float curvature = in_curvature;
    float overlay = in_overlay;
    if ((in_node & GBUF_COARSE) == 0u) {
        PageView v = PageView(pc.block_origin, frame.doc.z, pc.present, frame.doc.xy,
                              frame.heights.x, frame.heights.y, frame.heights.z);
        bool tinted = (uint(frame.doc.w) & VIEW_OVERLAY) != 0u;
        // The cell's first corner, and how far into it (0..1) the pixel lies.
        vec2 p = max(in_texel, vec2(0.0));
        ivec2 c0 = ivec2(floor(p));
        vec2 f = clamp(p - vec2(c0), 0.0, 1.0);
        // The triangle's corners: a, then m (east or south), then d; fa along a→m, fb along m→d.
        bool upper = f.x >= f.y;
        ivec2 m = c0 + (upper ? ivec2(1, 0) : ivec2(0, 1));
        float fa = upper ? f.x : f.y;
        float fb = upper ? f.y : f.x;
        vec4 sa, sm, sd;
        float oa, om, od;
        corner(v, c0, tinted, sa, oa);
        corner(v, m, tinted, sm, om);
        corner(v, c0 + ivec2(1), tinted, sd, od);
        vec4 s = sa + fa * (sm - sa) + fb * (sd - sm);
        n = s.xyz;
        curvature = s.w;
        overlay = oa + fa * (om - oa) + fb * (od - om);
    }
    n = normalize(n);
    // Snapped to 1/4096 (finer than f16 near 1): interpolating a constant 1 may give 1 - 2^-24,
    // which a conversion rounding toward zero would store as 1 - 2^-11, a faint tint where the
    // overlay shows none.
    overlay = round(overlay * 4096.0) / 4096.0;
    out_surface = vec4(n.x, n.z, curvature, overlay);
    out_node = in_node;
}
