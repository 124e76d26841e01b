#version 460
// A path over a rect of heights (src/brush/path.rs): each texel takes its nearest segment among
// those its tile lists, and moves toward the cross-section there. CPU twin: path::texel, the
// same arithmetic in the same order (`precise`: no fused multiply-adds).
#extension GL_GOOGLE_include_directive : require

#include "path_shared.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Push { PathPush pc; };
layout(set = 0, binding = 0, std430) buffer Heights { float heights[]; };
layout(set = 0, binding = 1, std430) readonly buffer Segments { PathSegment segments[]; };
layout(set = 0, binding = 2, std430) readonly buffer TileStart { uint tile_start[]; };
layout(set = 0, binding = 3, std430) readonly buffer TileSegments { uint tile_segments[]; };

void main() {
    uvec2 l = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(l, pc.rect_size))) {
        return;
    }
    uint index = l.y * pc.rect_size.x + l.x;
    float h = heights[index];
    vec2 p = vec2(pc.rect_origin + ivec2(l));
    uint t = (l.y / PATH_TILE) * pc.tiles_x + l.x / PATH_TILE;
    float best = 1.0 / 0.0;
    precise float base = 0.0;
    for (uint k = tile_start[t]; k < tile_start[t + 1u]; k++) {
        PathSegment g = segments[tile_segments[k]];
        precise vec2 ab = g.b - g.a;
        precise vec2 ap = p - g.a;
        precise float l2 = ab.x * ab.x + ab.y * ab.y;
        precise float u = l2 > 0.0 ? clamp((ap.x * ab.x + ap.y * ab.y) / l2, 0.0, 1.0) : 0.0;
        precise vec2 d = vec2(ap.x - ab.x * u, ap.y - ab.y * u);
        precise float d2 = d.x * d.x + d.y * d.y;
        if (d2 < best) {
            best = d2;
            base = g.base_a + (g.base_b - g.base_a) * u;
        }
    }
    precise float d = sqrt(best);
    float half_width = pc.half_width;
    if (isnan(d) || d >= half_width + pc.falloff) {
        return;
    }
    // Beyond the band the cross-section keeps its edge value, fading out over the falloff.
    precise float u = min(d / half_width, 1.0);
    precise float profile = pc.profile == PATH_PROFILE_U ? sqrt((1.0 - u) * (1.0 + u))
        : pc.profile == PATH_PROFILE_V ? 1.0 - u : 1.0;
    precise float target = base + pc.signed_depth * profile;
    precise float w = 1.0;
    if (d > half_width) {
        precise float s = (d - half_width) / pc.falloff;
        w = 1.0 - s * s * (3.0 - 2.0 * s);
    }
    precise float goal = pc.mode == PATH_CARVE ? min(h, target) : pc.mode == PATH_RAISE ? max(h, target) : target;
    heights[index] = h + (goal - h) * w;
}
