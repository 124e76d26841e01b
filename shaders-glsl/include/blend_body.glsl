// Folds up to four layers into a page's running height, in stack order. CPU twin:
// layers::stack::blend and fold_texel (same operations in the same order; `precise` forbids fused
// multiply-adds, so the twins agree bit for bit). The height comes from the r32f scratch image,
// or with FROM_SOURCE from the r32f source page (or its flat value: bit 12 of `present`), and
// goes to the scratch image, or with TO_TARGET to the r32f destination page: layers/blend.comp,
// blend_from.comp, blend_to.comp, blend_through.comp. Load and store passes
// (include/fold_body.glsl) remain for r16 sources and destinations.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "layers_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
#if defined(FROM_SOURCE) && defined(TO_TARGET)
layout(set = 0, binding = 0, r32f) uniform readonly image2D scratch;
#elif defined(FROM_SOURCE)
layout(set = 0, binding = 0, r32f) uniform writeonly image2D scratch;
#elif defined(TO_TARGET)
layout(set = 0, binding = 0, r32f) uniform readonly image2D scratch;
#else
layout(set = 0, binding = 0, r32f) uniform image2D scratch;
#endif
// Value, alpha and mask of layer i at bindings 1 + 3i, 2 + 3i, 3 + 3i.
layout(set = 0, binding = 1, r32f) uniform readonly image2D v0;
layout(set = 0, binding = 2, r32f) uniform readonly image2D a0;
layout(set = 0, binding = 3, r32f) uniform readonly image2D m0;
layout(set = 0, binding = 4, r32f) uniform readonly image2D v1;
layout(set = 0, binding = 5, r32f) uniform readonly image2D a1;
layout(set = 0, binding = 6, r32f) uniform readonly image2D m1;
layout(set = 0, binding = 7, r32f) uniform readonly image2D v2;
layout(set = 0, binding = 8, r32f) uniform readonly image2D a2;
layout(set = 0, binding = 9, r32f) uniform readonly image2D m2;
layout(set = 0, binding = 10, r32f) uniform readonly image2D v3;
layout(set = 0, binding = 11, r32f) uniform readonly image2D a3;
layout(set = 0, binding = 12, r32f) uniform readonly image2D m3;
layout(set = 0, binding = 13, r32f) uniform readonly image2D source;
layout(set = 0, binding = 14, r32f) uniform writeonly image2D target;
layout(push_constant) uniform Push { BlendPush p; } pc;

float loadBit(int bit, ivec2 p) {
    switch (bit) {
    case 0: return imageLoad(v0, p).r;
    case 1: return imageLoad(a0, p).r;
    case 2: return imageLoad(m0, p).r;
    case 3: return imageLoad(v1, p).r;
    case 4: return imageLoad(a1, p).r;
    case 5: return imageLoad(m1, p).r;
    case 6: return imageLoad(v2, p).r;
    case 7: return imageLoad(a2, p).r;
    case 8: return imageLoad(m2, p).r;
    case 9: return imageLoad(v3, p).r;
    case 10: return imageLoad(a3, p).r;
    default: return imageLoad(m3, p).r;
    }
}

float fetch(int layer, int part, ivec2 p) {
    int bit = layer * 3 + part;
    if ((pc.p.present & (1u << uint(bit))) != 0u) {
        return loadBit(bit, p);
    }
    return part == 0 ? pc.p.flat_value[layer] : (part == 1 ? pc.p.flat_alpha[layer] : pc.p.flat_mask[layer]);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.p.size))) {
        return;
    }
#ifdef FROM_SOURCE
    precise float h = (pc.p.present & (1u << 12)) != 0u ? imageLoad(source, p).r : pc.p.flat_height;
#else
    precise float h = imageLoad(scratch, p).r;
#endif
    for (int i = 0; i < 4; ++i) {
        if (i >= pc.p.count) {
            break;
        }
        int mode = int((pc.p.modes >> uint(2 * i)) & 3u);
        float v = fetch(i, 0, p);
        precise float w = pc.p.weights[i] * fetch(i, 1, p) * fetch(i, 2, p);
        precise float d;
        if (mode == LAYER_ADD) {
            d = v;
        } else if (mode == LAYER_MAX) {
            d = max(v - h, 0.0);
        } else if (mode == LAYER_MIN) {
            d = min(v - h, 0.0);
        } else {
            d = v - h;
        }
        h = h + w * d;
    }
#ifdef TO_TARGET
    imageStore(target, p, vec4(h));
#else
    imageStore(scratch, p, vec4(h));
#endif
}
