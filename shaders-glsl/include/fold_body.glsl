// The first and last steps of folding layers into a page (src/layers/composite.rs): the page's
// running height lives in an r32f scratch image; FOLD_LOAD fills it from the source page (the
// base, or the cached composite below the selected layer) or a flat value, layers/blend.comp
// folds the layers in (up to four per pass), FOLD_STORE writes it to the destination page
// (quantized there for r16 documents). Compiled per step and format (layers/load.comp,
// store.comp, load_r16.comp, store_r16.comp), so `other` is only read or only written.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "height_format.glsl"
#include "layers_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
#if STEP == FOLD_LOAD
layout(set = 0, binding = 0, r32f) uniform writeonly image2D scratch;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D other;
#else
layout(set = 0, binding = 0, r32f) uniform readonly image2D scratch;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform writeonly image2D other;
#endif
layout(push_constant) uniform Push { FoldPush p; } pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.p.size))) {
        return;
    }
#if STEP == FOLD_LOAD
    float h = pc.p.present != 0u
        ? decodeHeight(imageLoad(other, p).r, pc.p.height_min, pc.p.height_range)
        : pc.p.flat_height;
    imageStore(scratch, p, vec4(h));
#else
    float h = imageLoad(scratch, p).r;
    imageStore(other, p, vec4(encodeHeight(h, pc.p.height_min, pc.p.height_range)));
#endif
}
