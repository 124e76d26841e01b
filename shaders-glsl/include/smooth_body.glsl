// Body of brush/smooth*.comp (see there).
#ifndef SCARP_SMOOTH_BODY_GLSL
#define SCARP_SMOOTH_BODY_GLSL
// Smooth (positive strength) and contrast (negative) brushes over one page: one instance a
// pass, or (SMOOTH_TILED) up to SMOOTH_MAX_BATCH instances a pass, in order. Each texel moves
// toward (or away from) the 3x3 binomial average of its neighbourhood:
//   h' = h + clamp(strength x falloff, -1, 1) x (avg - h).
// Taps beyond the page come from the neighbouring pages' front images (bindings 0..8, row-major
// around this page, 4 = this page), so there are no seams; a neighbour that holds no memory reads
// as the document's flat height, and taps beyond the document repeat its edge.
// Several instances in one pass (SMOOTH_TILED, temporal blocking): each workgroup, an invocation
// a texel of its tile, reads its 16x16 texels and `count` texels around them into shared memory,
// then applies the instances one after another there, instance s over the texels within
// count-1-s of its own (what the later ones still read), with the same arithmetic as one
// instance a pass. So a pass of n instances gives, bit for bit, what n passes of one give; every
// page a batch reaches runs all of its instances (one that misses the page may still move texels
// of the halo that a later one reads).

#include "brush.glsl"
#include "height_format.glsl"

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
layout(set = 0, binding = 10, std430) readonly buffer Instances { BrushInstance instances[]; };

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

// The binomial weight of tap (x, y) of the 3x3 neighbourhood (the nine sum to 16).
float tapWeight(int x, int y) {
    return float((2 - abs(x)) * (2 - abs(y)));
}

// The height instance b gives a texel at distance d from its centre, of height h, whose taps'
// weighted sum is `sum`, quantized as the pages hold it (both kernels).
float smoothed(BrushInstance b, float d, float h, float sum) {
    float k = clamp(b.strength * brushFalloff(d, b.radius, b.inner_radius, pc.pass.falloff, pc.pass.falloff_power), -1.0, 1.0);
    return quantizeHeight(h + k * (sum * (1.0 / 16.0) - h), pc.pass.height_min, pc.pass.height_range);
}

#ifdef SMOOTH_TILED
const int GX = int(BRUSH_GROUP_X);
const int GY = int(BRUSH_GROUP_Y);
const int HALO = SMOOTH_MAX_BATCH;
// The tile: the group's own GX x GY texels and HALO around them, one invocation a texel.
const int TX = GX + 2 * HALO;
const int TY = GY + 2 * HALO;
layout(local_size_x = TX, local_size_y = TY, local_size_z = 1) in;

// The tile's heights (world units), ping-ponged from one instance to the next.
shared float tileHeights[2][TX * TY];
// The pass's instances, read once (a read per instance would wait on memory between steps).
shared BrushInstance passInstances[SMOOTH_MAX_BATCH];

// Document texel of tile cell (0, 0).
ivec2 tileFirst;

// Cell t of the tile is within `r` texels of the group's own texels.
bool within(ivec2 t, int r) {
    return all(greaterThanEqual(t, ivec2(HALO - r))) && all(lessThan(t, ivec2(GX + HALO + r, GY + HALO + r)));
}

bool inDocument(ivec2 g) {
    return all(greaterThanEqual(g, ivec2(0))) && all(lessThan(g, pc.pass.doc_size));
}

// Height at document texel g (clamped into the document, as heightAt) from tile level `src`.
float tileTap(int src, ivec2 g) {
    ivec2 t = clamp(g, ivec2(0), pc.pass.doc_size - 1) - tileFirst;
    return tileHeights[src][t.y * TX + t.x];
}

void main() {
    ivec2 t = ivec2(gl_LocalInvocationID.xy);
    int cell = t.y * TX + t.x;
    ivec2 groupFirst = pc.pass.rect_min + ivec2(gl_WorkGroupID.xy) * ivec2(GX, GY);
    tileFirst = pc.pass.page_origin + groupFirst - HALO;
    ivec2 doc = tileFirst + t;
    int count = int(pc.pass.instance_count);
    // This invocation's texel is one the pass writes.
    ivec2 own = t - HALO;
    ivec2 local = groupFirst + own;
    bool mine = all(greaterThanEqual(own, ivec2(0))) && all(lessThan(own, ivec2(GX, GY)))
        && all(lessThan(local - pc.pass.rect_min, pc.pass.rect_size));
    float stored = 0.0;
    if (mine) {
        stored = imageLoad(uN4, local).r;
    }
    if (cell < count) {
        passInstances[cell] = instances[pc.pass.first_instance + uint(cell)];
    }
    bool inside = inDocument(doc);
    if (inside && within(t, count)) {
        tileHeights[0][cell] = heightAt(doc);
    }
    barrier();
    for (int s = 0; s < count; s++) {
        int src = s & 1;
        if (inside && within(t, count - 1 - s)) {
            BrushInstance b = passInstances[s];
            float h = tileHeights[src][cell];
            float d = length(vec2(doc) - b.center);
            if (d < b.radius) {
                float sum = 0.0;
                for (int y = -1; y <= 1; y++) {
                    for (int x = -1; x <= 1; x++) {
                        sum += tapWeight(x, y) * tileTap(src, doc + ivec2(x, y));
                    }
                }
                float hn = smoothed(b, d, h, sum);
                // Never a non-finite height (CPU twin: brush/cpu.rs, the same rule).
                if (!(isnan(hn) || isinf(hn))) {
                    float st = encodeHeight(hn, pc.pass.height_min, pc.pass.height_range);
                    // What the next instance would read back from the page.
                    h = decodeHeight(st, pc.pass.height_min, pc.pass.height_range);
                    if (mine) {
                        stored = st;
                    }
                }
            }
            tileHeights[1 - src][cell] = h;
        }
        barrier();
    }
    if (mine) {
        imageStore(uBack, local, vec4(stored));
    }
}

#else
layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y, local_size_z = 1) in;

// One instance a pass (instances whose squares are large: the tiles' extra work would cost
// more than the waves they save).
void main() {
    ivec2 g = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(g, pc.pass.rect_size))) {
        return;
    }
    ivec2 local = pc.pass.rect_min + g;
    ivec2 doc = pc.pass.page_origin + local;
    float stored = imageLoad(uN4, local).r;
    float h = decodeHeight(stored, pc.pass.height_min, pc.pass.height_range);
    BrushInstance b = instances[pc.pass.first_instance];
    float d = length(vec2(doc) - b.center);
    if (d < b.radius) {
        float sum = 0.0;
        for (int y = -1; y <= 1; y++) {
            for (int x = -1; x <= 1; x++) {
                sum += tapWeight(x, y) * heightAt(doc + ivec2(x, y));
            }
        }
        h = smoothed(b, d, h, sum);
        // Never a non-finite height (CPU twin: brush/cpu.rs, the same rule).
        if (!(isnan(h) || isinf(h))) {
            stored = encodeHeight(h, pc.pass.height_min, pc.pass.height_range);
        }
    }
    imageStore(uBack, local, vec4(stored));
}

#endif

#endif
