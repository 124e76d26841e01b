// One step of folding layers into a page (src/layers/composite.rs): the page's running height
// lives in an r32f scratch image; FOLD_LOAD fills it from the source page (the base, or the
// cached composite below the selected layer) or a flat value, FOLD_BLEND folds one layer in,
// FOLD_STORE writes it to the destination page (quantized there for r16 documents). Each step is
// its own shader (layers/load.comp, blend.comp, store.comp, and r16 variants of load and store),
// so `other` (the source or destination) is only read or only written. CPU twin: layers::stack::blend and
// layers::stack::fold_texel (same operations in the same order; `precise` forbids fused
// multiply-adds, so the twins agree bit for bit).
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "height_format.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
layout(set = 0, binding = 0, r32f) uniform image2D scratch;
#if STEP == FOLD_LOAD
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D other;
#elif STEP == FOLD_STORE
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform writeonly image2D other;
#else
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D other;
#endif
layout(set = 0, binding = 2, r32f) uniform readonly image2D value_page;
layout(set = 0, binding = 3, r32f) uniform readonly image2D alpha_page;
layout(set = 0, binding = 4, r32f) uniform readonly image2D mask_page;
layout(push_constant) uniform Push {
    ivec2 size;
    int mode;
    // visible x opacity of the layer.
    float weight;
    // Values of the inputs without a page: V, A, M, source.
    vec4 flats;
    // Bit 0: V has a page, 1: A, 2: M, 3: the source.
    uint present;
    float height_min;
    float height_range;
    uint pad;
} pc;

float input_at(int bit, ivec2 p) {
    if ((pc.present & (1u << bit)) == 0u) {
        return pc.flats[bit];
    }
    if (bit == 0) return imageLoad(value_page, p).r;
    if (bit == 1) return imageLoad(alpha_page, p).r;
    return imageLoad(mask_page, p).r;
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
#if STEP == FOLD_LOAD
    float h = (pc.present & 8u) != 0u
        ? decodeHeight(imageLoad(other, p).r, pc.height_min, pc.height_range)
        : pc.flats.w;
    imageStore(scratch, p, vec4(h));
#elif STEP == FOLD_STORE
    float h = imageLoad(scratch, p).r;
    imageStore(other, p, vec4(encodeHeight(h, pc.height_min, pc.height_range)));
#else
    {
        precise float h = imageLoad(scratch, p).r;
        float v = input_at(0, p);
        precise float w = pc.weight * input_at(1, p) * input_at(2, p);
        precise float d;
        if (pc.mode == LAYER_ADD) {
            d = v;
        } else if (pc.mode == LAYER_MAX) {
            d = max(v - h, 0.0);
        } else if (pc.mode == LAYER_MIN) {
            d = min(v - h, 0.0);
        } else {
            d = v - h;
        }
        precise float folded = h + w * d;
        imageStore(scratch, p, vec4(folded));
    }
#endif
}
