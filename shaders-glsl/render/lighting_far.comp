#version 460
// The lighting's far level: per texel of the heights' coarse level (a 64² block's corner, the
// vertex a coarse node draws there), the sun's visibility and the ambient occlusion of the
// surface the coarse nodes draw (the blocks' first heights, bilinear between corners), by the
// model of render/lighting.comp: a march toward the sun for the highest horizon (from
// LIGHT_FAR_STEP texels, steps of an eighth of the distance, at least LIGHT_FAR_STEP, up to
// max_dist), soft over the penumbra, and horizons in eight directions at the occlusion's taps.
// Written into the lighting field's coarse level (every channel), which the shading pass reads
// for what is drawn coarse and for pages not lit at full resolution. CPU twin:
// render::lighting::far_texel (same taps, same operations in the same order).
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "lighting_shared.glsl"

layout(local_size_x = 8, local_size_y = 8) in;
// The height's coarse level: lowest, highest, summed and first height per 64² block.
layout(set = 0, binding = 0, rgba32f) uniform readonly image2D coarse;
// The top of the coarse level's pyramid (one texel: the document's lowest, highest, ...).
layout(set = 0, binding = 1, rgba32f) uniform readonly image2D coarse_top;
// The lighting field's coarse level.
layout(set = 0, binding = 2, rgba32f) uniform writeonly image2D far_level;
// `first` and `size`: the coarse texels lit.
layout(push_constant) uniform Push { LightPush p; } pc;

// World height (x vertical scale) of the corner of coarse block c (clamped into the level).
float cornerAt(ivec2 c) {
    c = clamp(c, ivec2(0), pc.p.coarse_size - 1);
    precise float v = imageLoad(coarse, c).a * pc.p.vertical_scale;
    return v;
}

// The coarse surface at texel position q: corners interpolated between.
float surfaceAt(vec2 q) {
    precise vec2 u = q * (1.0 / float(COARSE_FACTOR));
    vec2 uf = floor(u);
    ivec2 i = ivec2(uf);
    precise vec2 f = u - uf;
    float a = cornerAt(i);
    float b = cornerAt(i + ivec2(1, 0));
    float e = cornerAt(i + ivec2(0, 1));
    float g = cornerAt(i + ivec2(1, 1));
    precise float top = a + f.x * (b - a);
    precise float bottom = e + f.x * (g - e);
    precise float v = top + f.y * (bottom - top);
    return v;
}

// Whether the march may stop at distance d with horizon tmax, leaving the result as it is.
bool exits(float tmax, int d, float b0, float top) {
    return tmax >= pc.p.tan_hi || top - b0 <= max(pc.p.tan_lo, tmax) * float(d) * (1.0 - 1e-6);
}

bool inDocument(ivec2 g) {
    return all(greaterThanEqual(g, ivec2(0))) && all(lessThan(g, pc.p.doc));
}

void main() {
    ivec2 i = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(i, pc.p.size))) {
        return;
    }
    ivec2 c = pc.p.first + i;
    ivec2 t = c * COARSE_FACTOR;
    float b0 = cornerAt(c);
    precise float top = imageLoad(coarse_top, ivec2(0)).g * pc.p.vertical_scale;
    float tmax = -1e30;
    for (int d = LIGHT_FAR_STEP; d <= pc.p.max_dist; d += max(d >> 3, LIGHT_FAR_STEP)) {
        precise vec2 q = vec2(t) + pc.p.sun_dir * float(d);
        if (q.x < 0.0 || q.y < 0.0 || q.x > float(pc.p.doc.x - 1) || q.y > float(pc.p.doc.y - 1)) {
            break;
        }
        precise float tan_here = (surfaceAt(q) - b0) / float(d);
        tmax = max(tmax, tan_here);
        if (exits(tmax, d, b0, top)) {
            break;
        }
    }
    precise float v = (pc.p.tan_hi - tmax) / (pc.p.tan_hi - pc.p.tan_lo);
    float sun = clamp(v, 0.0, 1.0);
    float occluded = 0.0;
    for (int k = 0; k < 8; k++) {
        float len = (k & 1) == 1 ? 1.41421356 : 1.0;
        float h = 0.0;
        for (int j = 0; j < AO_TAPS; j++) {
            ivec2 g = t + AO_DIRS[k] * AO_D[j];
            if (!inDocument(g)) {
                break;
            }
            precise float tan_here = (surfaceAt(vec2(g)) - b0) / (float(AO_D[j]) * len);
            h = max(h, tan_here);
        }
        precise float s = h / sqrt(1.0 + h * h);
        occluded += s;
    }
    float ao = 1.0 - occluded * 0.125;
    uint packed = uint(floor(sun * float(LIGHT_LEVELS) + 0.5))
                + 1024u * uint(floor(ao * float(LIGHT_LEVELS) + 0.5));
    imageStore(far_level, c, vec4(float(packed)));
}
