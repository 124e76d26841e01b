#version 460
// A procedural mask: one page of a layer's mask from the height below the layer (an r32f field,
// the page and its eight neighbours bound), by height, slope and curvature bands with soft edges.
// CPU twin: layers::rules::mask_at (same taps, same operations in the same order).
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "layers_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
// Source pages at (dx, dy) in -1..1 around the page: binding (dy + 1) * 3 + (dx + 1).
layout(set = 0, binding = 0, r32f) uniform readonly image2D s0;
layout(set = 0, binding = 1, r32f) uniform readonly image2D s1;
layout(set = 0, binding = 2, r32f) uniform readonly image2D s2;
layout(set = 0, binding = 3, r32f) uniform readonly image2D s3;
layout(set = 0, binding = 4, r32f) uniform readonly image2D s4;
layout(set = 0, binding = 5, r32f) uniform readonly image2D s5;
layout(set = 0, binding = 6, r32f) uniform readonly image2D s6;
layout(set = 0, binding = 7, r32f) uniform readonly image2D s7;
layout(set = 0, binding = 8, r32f) uniform readonly image2D s8;
layout(set = 0, binding = 9, r32f) uniform writeonly image2D mask_page;
layout(push_constant) uniform Push { RulesPush p; } pc;

float loadSlot(int s, ivec2 p) {
    switch (s) {
    case 0: return imageLoad(s0, p).r;
    case 1: return imageLoad(s1, p).r;
    case 2: return imageLoad(s2, p).r;
    case 3: return imageLoad(s3, p).r;
    case 4: return imageLoad(s4, p).r;
    case 5: return imageLoad(s5, p).r;
    case 6: return imageLoad(s6, p).r;
    case 7: return imageLoad(s7, p).r;
    default: return imageLoad(s8, p).r;
    }
}

// Height below the layer at document texel g, clamped into the document.
float heightAt(ivec2 g) {
    g = clamp(g, ivec2(0), pc.p.doc - 1);
    ivec2 rel = g - pc.p.origin;
    ivec2 d = ivec2(rel.x < 0 ? -1 : (rel.x >= pc.p.side ? 1 : 0),
                    rel.y < 0 ? -1 : (rel.y >= pc.p.side ? 1 : 0));
    int slot = (d.y + 1) * 3 + (d.x + 1);
    if ((pc.p.present & (1u << uint(slot))) == 0u) {
        return pc.p.flat_height;
    }
    return loadSlot(slot, rel - d * pc.p.side);
}

float ramp(float d, float e) {
    if (e > 0.0) {
        return clamp(d / e, 0.0, 1.0);
    }
    return d >= 0.0 ? 1.0 : 0.0;
}

// 1 inside [lo, hi] = [b.x, b.y], falling linearly to 0 over b.z below and b.w above (CPU
// twin: layers::rules::weight).
float band(vec4 b, float v) {
    precise float below = v - (b.x - b.z);
    precise float above = (b.y + b.w) - v;
    return ramp(below, b.z) * ramp(above, b.w);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.p.size))) {
        return;
    }
    ivec2 g = pc.p.origin + p;
    float c = heightAt(g);
    float l = heightAt(g + ivec2(-1, 0));
    float r = heightAt(g + ivec2(1, 0));
    float u = heightAt(g + ivec2(0, -1));
    float d = heightAt(g + ivec2(0, 1));
    precise float gx = r - l;
    precise float gy = d - u;
    precise float slope = 0.5 * sqrt(gx * gx + gy * gy);
    precise float curvature = ((l + r) + (u + d)) - 4.0 * c;
    precise float m = 1.0;
    if ((pc.p.rules & 1u) != 0u) {
        m *= band(pc.p.height_band, c);
    }
    if ((pc.p.rules & 2u) != 0u) {
        m *= band(pc.p.slope_band, slope);
    }
    if ((pc.p.rules & 4u) != 0u) {
        m *= band(pc.p.curvature_band, curvature);
    }
    imageStore(mask_page, p, vec4(m));
}
