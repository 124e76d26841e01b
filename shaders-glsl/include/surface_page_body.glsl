// One page of a surface map (docs/maps.md): at every texel of the page, the slope, curvature,
// profile or plan curvature from the heights around it (the neighbourhood clamped into the
// document, as a region's maps clamp into the region), read from the nine height pages around
// the page; written as the map's value or as its two-sided tint. CPU twin:
// maps::cpu::maps_region over the whole document (maps::field::twin). Needs HEIGHT_R16 defined
// or not first.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "height_format.glsl"
#include "maps_shared.glsl"
#include "surface_maps.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
#include "nine_pages.glsl"
// Binding 9: the map's page.
layout(set = 0, binding = 9, r32f) uniform writeonly image2D target;
layout(push_constant) uniform Push { SurfacePagePush p; } pc;

float at(ivec2 local) {
    ivec2 g = clamp(pc.p.origin + local, ivec2(0), pc.p.doc - 1);
    return nineHeight(g - pc.p.origin, pc.p.side, pc.p.present, pc.p.flat_height,
                      pc.p.height_min, pc.p.height_range);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.p.size))) {
        return;
    }
    float c = at(p);
    float e = at(p + ivec2(1, 0));
    float wv = at(p - ivec2(1, 0));
    float s = at(p + ivec2(0, 1));
    float n = at(p - ivec2(0, 1));
    float v;
    if (pc.p.map == 0) {
        v = slopeDegrees(e, wv, s, n, pc.p.tau, pc.p.unit);
    } else if (pc.p.map == 1) {
        v = curvaturePerMetre(c, e, wv, s, n, pc.p.tau, pc.p.unit);
    } else {
        vec4 corners = vec4(at(p + ivec2(1, 1)), at(p + ivec2(-1, 1)), at(p + ivec2(1, -1)),
                            at(p + ivec2(-1, -1)));
        vec2 pp = profilePlan(c, e, wv, s, n, corners, pc.p.tau, pc.p.unit);
        v = pc.p.map == 2 ? pp.x : pp.y;
    }
    if (pc.p.full > 0.0) {
        v = 1.0 - clamp(v / pc.p.full, -1.0, 1.0);
    }
    imageStore(target, p, vec4(v));
}
