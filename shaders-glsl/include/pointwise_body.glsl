// Body of brush/pointwise*.comp (see there).
#ifndef SCARP_POINTWISE_BODY_GLSL
#define SCARP_POINTWISE_BODY_GLSL
// Batched pointwise brushes (raise/lower, noise, level, directional noise): one pass applies up to N instances, in order,
// to one page. Ping-pong: reads the page's front image, writes its back image over rect (the
// union of this pass's dirty rectangle and the previous pass's, so the back image becomes a
// complete copy of the new state). Texels outside every instance are copied unchanged.

#define NOISE_TABLE_SET 1
#include "noise.glsl"
#include "brush.glsl"
#include "height_format.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y, local_size_z = 1) in;

layout(constant_id = 0) const int BRUSH_TYPE = BRUSH_RAISE;
layout(constant_id = 1) const int NOISE_KIND = NOISE_FBM;
// Tile culling: each workgroup first marks the batch's instances whose circle reaches its
// tile, and texels skip the others without loading them. Exact: a skipped instance is at least
// its radius (plus a texel of margin) from every texel of the tile, so it changes none of them.
layout(constant_id = 2) const bool TILE_CULL = false;
// ROWS: texels an invocation paints, one below the other, where the including file defines it
// (brush/pointwise_rows*.comp: stamps of radius 256 and more, src/brush/gpu.rs,
// rows_per_invocation); one otherwise. Every texel sees the same instances in the same order.
// Largest batch (MAX_BATCH in src/brush/gpu.rs).
#define MAX_BATCH 256u
shared bool sReaches[MAX_BATCH];

layout(set = 0, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D uFront;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform writeonly image2D uBack;
layout(set = 1, binding = 2, std430) readonly buffer Instances { BrushInstance instances[]; };
// Stamp brushes: the stamp (R32F; a 1x1 placeholder for other brushes), read with texelFetch.
layout(set = 1, binding = 3) uniform sampler2D uStamp;
#ifdef WEIGHTED
// Weighted level strokes (brush/pointwise_weighted.comp): each instance's weight is multiplied by
// this page of the weight field (a procedural mask brush's rules), read at the same texel.
layout(set = 2, binding = 0, r32f) uniform readonly image2D uWeight;
#endif

float stampTexel(ivec2 c, ivec2 size) {
    return any(lessThan(c, ivec2(0))) || any(greaterThanEqual(c, size)) ? 0.0 : texelFetch(uStamp, c, 0).r;
}

// Bilinear, zero outside; texel centres at integer positions of s. CPU twin: Stamp::sample.
float stampSample(vec2 s) {
    ivec2 size = textureSize(uStamp, 0);
    vec2 f = floor(s);
    vec2 t = s - f;
    ivec2 c = ivec2(f);
    float top = stampTexel(c, size) + (stampTexel(c + ivec2(1, 0), size) - stampTexel(c, size)) * t.x;
    float bottom = stampTexel(c + ivec2(0, 1), size) + (stampTexel(c + ivec2(1, 1), size) - stampTexel(c + ivec2(0, 1), size)) * t.x;
    return top + (bottom - top) * t.y;
}

// Texel p in stamp texel space (CPU twin: stamp_position).
vec2 stampPosition(vec2 p, vec2 center, vec2 axis, float half_extent) {
    vec2 size = vec2(textureSize(uStamp, 0));
    vec2 l = p - center;
    float u = l.x * axis.x + l.y * axis.y;
    float v = l.y * axis.x - l.x * axis.y;
    return vec2((u / half_extent * 0.5 + 0.5) * size.x - 0.5, (v / half_extent * 0.5 + 0.5) * size.y - 0.5);
}

layout(push_constant) uniform Push { BrushPass pass; } pc;

// Terrace target of height h: steps `step` apart, risers of width 1 - sharpness (a step's
// fraction). CPU twin: brush::terrace_target.
float terraceTarget(float h, float step, float sharpness) {
    precise float t = h / step;
    float k = floor(t);
    precise float f = t - k;
    precise float e = 0.5 * (1.0 - sharpness);
    precise float g;
    if (e > 0.0) {
        precise float x = clamp((f - (0.5 - e)) / (2.0 * e), 0.0, 1.0);
        g = x * x * (3.0 - 2.0 * x);
    } else {
        g = f >= 0.5 ? 1.0 : 0.0;
    }
    precise float target = step * (k + g);
    return target;
}

// What a texel stores: its new height where an instance changed it, else what it held. For r32f
// that is always h (decoding is the identity, so an unchanged h is the very value loaded): no
// select, and the loaded value need not stay live through the instance loop (raise and level
// 1.09-1.12x faster at radius 1024, docs/PERF.md). For r16 the value loaded is kept as it was.
float storedResult(bool changed, float h, float stored) {
#ifdef HEIGHT_R16
    return changed ? encodeHeight(h, pc.pass.height_min, pc.pass.height_range) : stored;
#else
    return encodeHeight(h, pc.pass.height_min, pc.pass.height_range);
#endif
}

#ifdef ROWS
// Instance `index` of the stroke's list on one texel: the texel at p (page-local `local`) holds
// h; m is the noise or stamp value where the brush uses one, have_m whether the texel's noise is
// evaluated yet (it does not depend on the instance: at most once per texel).
void applyInstance(uint index, vec2 p, ivec2 local, inout float h, inout float m,
                   inout bool have_m, inout bool changed) {
    BrushInstance b = instances[index];
#include "pointwise_instance.glsl"
}

// ROWS texels an invocation, a column of them gl_WorkGroupSize.y rows apart: a workgroup's tile
// is 16 x (16 ROWS), its loads in flight together.
void paintRows(ivec2 rect_min, ivec2 rect_size) {
    ivec2 tile_size = ivec2(gl_WorkGroupSize.x, gl_WorkGroupSize.y * ROWS);
    ivec2 tile_origin = ivec2(gl_WorkGroupID.xy) * tile_size;
    if (TILE_CULL) {
        // The tile's texel positions, whether or not they fall inside the rectangle.
        vec2 tile_min = vec2(pc.pass.page_origin + rect_min + tile_origin);
        vec2 tile_max = tile_min + vec2(tile_size - 1);
#include "pointwise_cull.glsl"
    }
    ivec2 g0 = tile_origin + ivec2(gl_LocalInvocationID.xy);
    // Rows only grow: a first texel outside the rectangle has every other one outside too.
    if (any(greaterThanEqual(g0, rect_size))) {
        return;
    }
    float stored[ROWS];
    float h[ROWS];
    float m[ROWS];
    bool have_m[ROWS];
    bool changed[ROWS];
    for (int k = 0; k < ROWS; k++) {
        ivec2 g = g0 + ivec2(0, k * int(gl_WorkGroupSize.y));
        stored[k] = g.y < rect_size.y ? imageLoad(uFront, rect_min + g).r : 0.0;
        h[k] = decodeHeight(stored[k], pc.pass.height_min, pc.pass.height_range);
        m[k] = 1.0;
        have_m[k] = BRUSH_TYPE != BRUSH_NOISE;
        changed[k] = false;
    }
    for (uint i = 0u; i < pc.pass.instance_count; i++) {
        if (TILE_CULL && !sReaches[i]) {
            continue;
        }
        for (int k = 0; k < ROWS; k++) {
            ivec2 g = g0 + ivec2(0, k * int(gl_WorkGroupSize.y));
            if (g.y < rect_size.y) {
                ivec2 local = rect_min + g;
                applyInstance(pc.pass.first_instance + i, vec2(pc.pass.page_origin + local), local, h[k], m[k], have_m[k], changed[k]);
            }
        }
    }
    for (int k = 0; k < ROWS; k++) {
        ivec2 g = g0 + ivec2(0, k * int(gl_WorkGroupSize.y));
        if (g.y < rect_size.y) {
            imageStore(uBack, rect_min + g, vec4(storedResult(changed[k], h[k], stored[k])));
        }
    }
}

#endif

#ifdef ROWS
void main() {
    ivec2 rect_size = ivec2(pc.pass.rect_size_packed & 0xFFFFu, pc.pass.rect_size_packed >> 16);
    ivec2 rect_min = ivec2(pc.pass.rect_min_packed & 0xFFFFu, pc.pass.rect_min_packed >> 16);
    paintRows(rect_min, rect_size);
}
#else
// One texel an invocation: a workgroup's tile is 16 x 16.
void main() {
    ivec2 g = ivec2(gl_GlobalInvocationID.xy);
    ivec2 rect_size = ivec2(pc.pass.rect_size_packed & 0xFFFFu, pc.pass.rect_size_packed >> 16);
    ivec2 rect_min = ivec2(pc.pass.rect_min_packed & 0xFFFFu, pc.pass.rect_min_packed >> 16);
    if (TILE_CULL) {
        // The tile's texel positions, whether or not they fall inside the rectangle.
        vec2 tile_min = vec2(pc.pass.page_origin + rect_min + ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy));
        vec2 tile_max = tile_min + vec2(gl_WorkGroupSize.xy - 1u);
#include "pointwise_cull.glsl"
    }
    if (any(greaterThanEqual(g, rect_size))) {
        return;
    }
    ivec2 local = rect_min + g;
    float stored = imageLoad(uFront, local).r;
    float h = decodeHeight(stored, pc.pass.height_min, pc.pass.height_range);
    bool changed = false;
    vec2 p = vec2(pc.pass.page_origin + local);
    // The noise field does not depend on the instance: evaluate it at most once per texel.
    float m = 1.0;
    bool have_m = BRUSH_TYPE != BRUSH_NOISE;
    for (uint i = 0u; i < pc.pass.instance_count; i++) {
        if (TILE_CULL && !sReaches[i]) {
            continue;
        }
        BrushInstance b = instances[pc.pass.first_instance + i];
#include "pointwise_instance.glsl"
    }
    imageStore(uBack, local, vec4(storedResult(changed, h, stored)));
}
#endif

#endif
