#version 460
// A rectangle of one page of the lighting field from the heights (the world heights of the page
// and its eight neighbours that the rectangle's taps reach, gathered by
// render/light_gather.comp, and the height's coarse level for what lies farther): per texel,
// the sun's visibility (a march toward the sun for the highest horizon, full resolution within
// the neighbours, the coarse level's block means beyond, soft over the penumbra) and the
// ambient occlusion (horizons in eight directions over AO_RADIUS texels). CPU twin:
// render::lighting::light_texel (same taps, same operations in the same order; the march's
// exits leave its result as it is).
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "lighting_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
// World heights gathered around the rectangle (render/light_gather.comp).
layout(set = 0, binding = 0, r32f) uniform readonly image2D gathered;
// The height's coarse level: lowest, highest, summed and first height per 64² block.
layout(set = 0, binding = 1, rgba32f) uniform readonly image2D coarse;
layout(set = 0, binding = 2, r32f) uniform writeonly image2D light_page;
// The top of the coarse level's pyramid (one texel: the document's lowest, highest, ...).
layout(set = 0, binding = 3, rgba32f) uniform readonly image2D coarse_top;
layout(push_constant) uniform Push { LightPush p; } pc;

// Whether texel g (inside the document) lies in the page or its neighbours.
bool isNear(ivec2 g) {
    ivec2 rel = g - pc.p.origin;
    return all(greaterThanEqual(rel, ivec2(-pc.p.side))) && all(lessThan(rel, ivec2(2 * pc.p.side)));
}

// World height (x vertical scale) at texel g, inside the document and near the page (and so
// gathered).
float worldAt(ivec2 g) {
    return imageLoad(gathered, g - pc.p.gather_first).r;
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

// The gathered world height nearest texel g, clamped into the gathered rectangle: taps are
// loaded ahead of the tests that decide whether they are used, and one past the document's
// edge or the page's neighbours is never used.
float loadAhead(ivec2 g) {
    return imageLoad(gathered, clamp(g - pc.p.gather_first, ivec2(0), pc.p.gather_size - 1)).r;
}

// Taps of the march loaded before the first of them is used: each tap's exits depend on the
// taps before it, so without this every tap waits for its own load.
#define AHEAD 8

// Whether the march stops at tap distance d (position q) before reading it: past the longest
// shadow or the document's edge.
bool pastEnd(int d, vec2 q) {
    return d > pc.p.max_dist
        || q.x < 0.0 || q.y < 0.0 || q.x > float(pc.p.doc.x - 1) || q.y > float(pc.p.doc.y - 1);
}

// Whether the march may stop at distance d with horizon tmax, leaving the result as it is: the
// sun has set; or nothing farther can rise above the penumbra's lower edge or the horizon
// found (reached with room for the product's rounding).
bool exits(float tmax, int d, float b0, float top) {
    return tmax >= pc.p.tan_hi || top - b0 <= max(pc.p.tan_lo, tmax) * float(d) * (1.0 - 1e-6);
}

// One tap of height h at distance d: the highest tangent so far, and whether the march stops.
bool tap(inout float tmax, float h, int d, float b0, float top) {
    precise float tan_here = (h - b0) / float(d);
    tmax = max(tmax, tan_here);
    return exits(tmax, d, b0, top);
}

// The fine march's taps: texel offsets nearest the sun's direction x d, for d below
// LIGHT_FINE (the same for every texel: made once per workgroup).
shared ivec2 fineOffset[LIGHT_FINE];

void makeFineOffsets() {
    uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y;
    for (uint d = gl_LocalInvocationIndex; d < uint(LIGHT_FINE); d += n) {
        precise vec2 q = pc.p.sun_dir * float(d);
        fineOffset[d] = ivec2(floor(q + 0.5));
    }
}

bool inDocument(ivec2 g) {
    return all(greaterThanEqual(g, ivec2(0))) && all(lessThan(g, pc.p.doc));
}

// Sun visibility at texel t of world height b0, `top` the document's highest world height.
float sunAt(ivec2 t, float b0, float top) {
    float tmax = -1e30;
    bool done = false;
    // The texel nearest the sun's direction at every distance below LIGHT_FINE (all in the
    // page's neighbours: pages are at least that wide), AHEAD taps loaded at a time and their
    // exits tested after the last of them (the exits leave the result as it is, so a later
    // test is as good). The offsets grow with d on both axes, so the first and the last tap
    // tell whether every tap is in the document, and so gathered (no clamping then).
    bool inside = inDocument(t + fineOffset[1]) && inDocument(t + fineOffset[LIGHT_FINE - 1]);
    for (int d0 = 1; d0 < LIGHT_FINE && !done; d0 += AHEAD) {
        float h[AHEAD];
        for (int j = 0; j < AHEAD; j++) {
            ivec2 g = t + fineOffset[min(d0 + j, LIGHT_FINE - 1)];
            h[j] = inside ? worldAt(g) : loadAhead(g);
        }
        for (int j = 0; j < AHEAD; j++) {
            int d = d0 + j;
            if (d >= LIGHT_FINE) {
                break;
            }
            if (!inside && !inDocument(t + fineOffset[d])) {
                done = true;
                break;
            }
            precise float tan_here = (h[j] - b0) / float(d);
            tmax = max(tmax, tan_here);
        }
        done = done || exits(tmax, min(d0 + AHEAD, LIGHT_FINE) - 1, b0, top);
    }
    // Then steps of a sixteenth of the distance: full resolution within the neighbours, the
    // coarse level beyond. (Loading these ahead too, both kinds, measured slower: most
    // marches stop within a few of them.)
    for (int d = LIGHT_FINE; !done; d += d >> 4) {
        precise vec2 q = vec2(t) + pc.p.sun_dir * float(d);
        if (pastEnd(d, q)) {
            break;
        }
        ivec2 g = ivec2(floor(q + 0.5));
        float h = isNear(g) ? worldAt(g) : coarseAt(q);
        done = tap(tmax, h, d, b0, top);
    }
    precise float v = (pc.p.tan_hi - tmax) / (pc.p.tan_hi - pc.p.tan_lo);
    return clamp(v, 0.0, 1.0);
}


// Ambient occlusion at texel t of world height b0: 1 - the mean sine of the horizon's
// elevation over eight directions (the open sky seen from the texel). A direction's taps are
// all loaded before the first is used.
float aoAt(ivec2 t, float b0) {
    // At least AO_RADIUS inside the document, every tap is in it and gathered.
    bool interior = all(greaterThanEqual(t, ivec2(AO_RADIUS)))
        && all(lessThan(t, pc.p.doc - AO_RADIUS));
    float occluded = 0.0;
    for (int k = 0; k < 8; k++) {
        float len = (k & 1) == 1 ? 1.41421356 : 1.0;
        float h[AO_TAPS];
        for (int j = 0; j < AO_TAPS; j++) {
            ivec2 g = t + AO_DIRS[k] * AO_D[j];
            h[j] = interior ? worldAt(g) : loadAhead(g);
        }
        float tmax = 0.0;
        for (int j = 0; j < AO_TAPS; j++) {
            if (!interior && !inDocument(t + AO_DIRS[k] * AO_D[j])) {
                break;
            }
            precise float tan_here = (h[j] - b0) / (float(AO_D[j]) * len);
            tmax = max(tmax, tan_here);
        }
        precise float s = tmax / sqrt(1.0 + tmax * tmax);
        occluded += s;
    }
    return 1.0 - occluded * 0.125;
}

void main() {
    makeFineOffsets();
    barrier();
    ivec2 i = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(i, pc.p.size))) {
        return;
    }
    ivec2 l = pc.p.first + i;
    ivec2 t = pc.p.origin + l;
    float b0 = worldAt(t);
    precise float top = imageLoad(coarse_top, ivec2(0)).g * pc.p.vertical_scale;
    float sun = sunAt(t, b0, top);
    float ao = aoAt(t, b0);
    uint packed = uint(floor(sun * float(LIGHT_LEVELS) + 0.5))
                + 1024u * uint(floor(ao * float(LIGHT_LEVELS) + 0.5));
    imageStore(light_page, l, vec4(float(packed)));
}
