#version 460
// A procedural mask: one page of a layer's mask from the height below the layer (an r32f field,
// the page and its eight neighbours bound), by height, slope and curvature bands with soft edges.
// CPU twin: layers::rules::mask_at (same taps, same operations in the same order).
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "layers_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
// The source pages around the page (r32f: no HEIGHT_R16), bindings 0..8; binding 9 the mask.
#include "height_format.glsl"
#include "nine_pages.glsl"
layout(set = 0, binding = 9, r32f) uniform writeonly image2D mask_page;
layout(push_constant) uniform Push { RulesPush p; } pc;

// Height below the layer at document texel g, clamped into the document.
float heightAt(ivec2 g) {
    g = clamp(g, ivec2(0), pc.p.doc - 1);
    return nineHeight(g - pc.p.origin, pc.p.side, pc.p.present, pc.p.flat_height, 0.0, 1.0);
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
