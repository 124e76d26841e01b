// One page of the lighting field from the heights (the page and its eight neighbours bound, and
// the height's coarse level for what lies farther): per texel, the sun's visibility (a march
// toward the sun for the highest horizon, full resolution within the neighbours, the coarse
// level's block means beyond, soft over the penumbra) and the ambient occlusion (horizons in
// eight directions over AO_RADIUS texels). CPU twin: render::lighting::light_texel (same taps,
// same operations in the same order). Needs HEIGHT_R16 defined or not first.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "height_format.glsl"
#include "lighting_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
// Height pages at (dx, dy) in -1..1 around the page: binding (dy + 1) * 3 + (dx + 1).
layout(set = 0, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s0;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s1;
layout(set = 0, binding = 2, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s2;
layout(set = 0, binding = 3, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s3;
layout(set = 0, binding = 4, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s4;
layout(set = 0, binding = 5, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s5;
layout(set = 0, binding = 6, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s6;
layout(set = 0, binding = 7, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s7;
layout(set = 0, binding = 8, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s8;
// The height's coarse level: lowest, highest, summed and first height per 64² block.
layout(set = 0, binding = 9, rgba32f) uniform readonly image2D coarse;
layout(set = 0, binding = 10, r32f) uniform writeonly image2D light_page;
layout(push_constant) uniform Push { LightPush p; } pc;

float loadSlot(int s, ivec2 q) {
    switch (s) {
    case 0: return imageLoad(s0, q).r;
    case 1: return imageLoad(s1, q).r;
    case 2: return imageLoad(s2, q).r;
    case 3: return imageLoad(s3, q).r;
    case 4: return imageLoad(s4, q).r;
    case 5: return imageLoad(s5, q).r;
    case 6: return imageLoad(s6, q).r;
    case 7: return imageLoad(s7, q).r;
    default: return imageLoad(s8, q).r;
    }
}

// Whether texel g (inside the document) lies in the page or its neighbours.
bool isNear(ivec2 g) {
    ivec2 rel = g - pc.p.origin;
    return all(greaterThanEqual(rel, ivec2(-pc.p.side))) && all(lessThan(rel, ivec2(2 * pc.p.side)));
}

// World height (x vertical scale) at texel g, inside the document and near the page.
float worldAt(ivec2 g) {
    ivec2 rel = g - pc.p.origin;
    ivec2 d = ivec2(rel.x < 0 ? -1 : (rel.x >= pc.p.side ? 1 : 0),
                    rel.y < 0 ? -1 : (rel.y >= pc.p.side ? 1 : 0));
    int slot = (d.y + 1) * 3 + (d.x + 1);
    float h = pc.p.flat_height;
    if ((pc.p.present & (1u << uint(slot))) != 0u) {
        h = decodeHeight(loadSlot(slot, rel - d * pc.p.side), pc.p.height_min, pc.p.height_range);
    }
    precise float w = h * pc.p.vertical_scale;
    return w;
}

// World mean height of coarse block c (clamped into the level).
float blockMean(ivec2 c) {
    c = clamp(c, ivec2(0), pc.p.coarse_size - 1);
    ivec2 n = min(ivec2(COARSE_FACTOR), pc.p.doc - c * COARSE_FACTOR);
    precise float m = imageLoad(coarse, c).b / float(n.x * n.y) * pc.p.vertical_scale;
    return m;
}

// Block means interpolated between block centres at texel position q.
float coarseAt(vec2 q) {
    precise vec2 c = q * (1.0 / float(COARSE_FACTOR)) - 0.5;
    vec2 cf = floor(c);
    ivec2 i = ivec2(cf);
    precise vec2 f = c - cf;
    float a = blockMean(i);
    float b = blockMean(i + ivec2(1, 0));
    float e = blockMean(i + ivec2(0, 1));
    float g = blockMean(i + ivec2(1, 1));
    precise float top = a + f.x * (b - a);
    precise float bottom = e + f.x * (g - e);
    precise float v = top + f.y * (bottom - top);
    return v;
}

// Sun visibility at texel t of world height b0.
float sunAt(ivec2 t, float b0) {
    float tmax = -1e30;
    for (int d = 1; d <= pc.p.max_dist; d += d < LIGHT_FINE ? 1 : d >> 4) {
        precise vec2 q = vec2(t) + pc.p.sun_dir * float(d);
        if (q.x < 0.0 || q.y < 0.0 || q.x > float(pc.p.doc.x - 1) || q.y > float(pc.p.doc.y - 1)) {
            break;
        }
        ivec2 g = ivec2(floor(q + 0.5));
        float h = isNear(g) ? worldAt(g) : coarseAt(q);
        precise float tan_here = (h - b0) / float(d);
        tmax = max(tmax, tan_here);
        // Nothing farther can rise above the penumbra's lower edge.
        precise float reach = (pc.p.top - b0) / float(d);
        if (reach <= pc.p.tan_lo) {
            break;
        }
    }
    precise float v = (pc.p.tan_hi - tmax) / (pc.p.tan_hi - pc.p.tan_lo);
    return clamp(v, 0.0, 1.0);
}

const ivec2 AO_DIRS[8] = ivec2[8](ivec2(1, 0), ivec2(1, 1), ivec2(0, 1), ivec2(-1, 1),
                                  ivec2(-1, 0), ivec2(-1, -1), ivec2(0, -1), ivec2(1, -1));

// Ambient occlusion at texel t of world height b0: 1 - the mean sine of the horizon's
// elevation over eight directions (the open sky seen from the texel).
float aoAt(ivec2 t, float b0) {
    float occluded = 0.0;
    for (int k = 0; k < 8; k++) {
        float len = (k & 1) == 1 ? 1.41421356 : 1.0;
        float tmax = 0.0;
        for (int d = 1; d <= AO_RADIUS; d += max(1, d >> 1)) {
            ivec2 g = t + AO_DIRS[k] * d;
            if (any(lessThan(g, ivec2(0))) || any(greaterThanEqual(g, pc.p.doc))) {
                break;
            }
            precise float tan_here = (worldAt(g) - b0) / (float(d) * len);
            tmax = max(tmax, tan_here);
        }
        precise float s = tmax / sqrt(1.0 + tmax * tmax);
        occluded += s;
    }
    return 1.0 - occluded * 0.125;
}

void main() {
    ivec2 l = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(l, pc.p.size))) {
        return;
    }
    ivec2 t = pc.p.origin + l;
    float b0 = worldAt(t);
    float sun = sunAt(t, b0);
    float ao = aoAt(t, b0);
    uint packed = uint(floor(sun * float(LIGHT_LEVELS) + 0.5))
                + 1024u * uint(floor(ao * float(LIGHT_LEVELS) + 0.5));
    imageStore(light_page, l, vec4(float(packed)));
}
