// Body of brush/smooth*.comp (see there).
#ifndef SCARP_SMOOTH_BODY_GLSL
#define SCARP_SMOOTH_BODY_GLSL
// Smooth (positive strength) and contrast (negative) brushes: one instance per pass, over one
// page. Each texel moves toward (or away from) the 3x3 binomial average of its neighbourhood:
//   h' = h + clamp(strength x falloff, -1, 1) x (avg - h).
// Taps beyond the page come from the neighbouring pages' front images (bindings 0..8, row-major
// around this page, 4 = this page), so there are no seams; a neighbour that holds no memory reads
// as the document's flat height, and taps beyond the document repeat its edge.

#include "brush.glsl"
#include "height_format.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y, local_size_z = 1) in;

layout(set = 0, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN0;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN1;
layout(set = 0, binding = 2, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN2;
layout(set = 0, binding = 3, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN3;
layout(set = 0, binding = 4, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN4;
layout(set = 0, binding = 5, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN5;
layout(set = 0, binding = 6, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN6;
layout(set = 0, binding = 7, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN7;
layout(set = 0, binding = 8, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uN8;
layout(set = 0, binding = 9, HEIGHT_IMAGE_FORMAT) uniform writeonly image2D uBack;

layout(push_constant) uniform Push { SmoothPass pass; } pc;

float neighbourLoad(int n, ivec2 c) {
    switch (n) {
    case 0: return imageLoad(uN0, c).r;
    case 1: return imageLoad(uN1, c).r;
    case 2: return imageLoad(uN2, c).r;
    case 3: return imageLoad(uN3, c).r;
    case 4: return imageLoad(uN4, c).r;
    case 5: return imageLoad(uN5, c).r;
    case 6: return imageLoad(uN6, c).r;
    case 7: return imageLoad(uN7, c).r;
    default: return imageLoad(uN8, c).r;
    }
}

// Height at document texel g (clamped into the document), from whichever page holds it.
float heightAt(ivec2 g) {
    g = clamp(g, ivec2(0), pc.pass.doc_size - 1);
    ivec2 l = g - pc.pass.page_origin;
    ivec2 d = ivec2(l.x < 0 ? -1 : (l.x >= pc.pass.self_size.x ? 1 : 0),
                    l.y < 0 ? -1 : (l.y >= pc.pass.self_size.y ? 1 : 0));
    int n = (d.y + 1) * 3 + (d.x + 1);
    if ((pc.pass.present_mask & (1u << uint(n))) == 0u) {
        return pc.pass.flat_height;
    }
    // Left/top neighbours are whole pages; right/bottom ones start where this page ends.
    ivec2 c = ivec2(d.x < 0 ? l.x + pc.pass.page_size : (d.x > 0 ? l.x - pc.pass.self_size.x : l.x),
                    d.y < 0 ? l.y + pc.pass.page_size : (d.y > 0 ? l.y - pc.pass.self_size.y : l.y));
    return decodeHeight(neighbourLoad(n, c), pc.pass.height_min, pc.pass.height_range);
}

void main() {
    ivec2 g = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(g, pc.pass.rect_size))) {
        return;
    }
    ivec2 local = pc.pass.rect_min + g;
    ivec2 doc = pc.pass.page_origin + local;
    float stored = imageLoad(uN4, local).r;
    float h = decodeHeight(stored, pc.pass.height_min, pc.pass.height_range);
    BrushInstance b = pc.pass.instance;
    float d = length(vec2(doc) - b.center);
    if (d < b.radius) {
        float sum = 0.0;
        for (int y = -1; y <= 1; y++) {
            for (int x = -1; x <= 1; x++) {
                float w = float((2 - abs(x)) * (2 - abs(y)));
                sum += w * heightAt(doc + ivec2(x, y));
            }
        }
        float k = clamp(b.strength * brushFalloff(d, b.radius, b.inner_radius, pc.pass.falloff, pc.pass.falloff_power), -1.0, 1.0);
        h += k * (sum * (1.0 / 16.0) - h);
        h = quantizeHeight(h, pc.pass.height_min, pc.pass.height_range);
        // Never a non-finite height (CPU twin: brush/cpu.rs, the same rule).
        if (!(isnan(h) || isinf(h))) {
            stored = encodeHeight(h, pc.pass.height_min, pc.pass.height_range);
        }
    }
    imageStore(uBack, local, vec4(stored));
}

#endif
