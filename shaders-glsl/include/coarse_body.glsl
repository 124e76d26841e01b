// Coarse level: for each block of COARSE_FACTOR x COARSE_FACTOR texels of one page (fewer at the
// document's edge), the lowest height, the highest, their sum (mean = sum / texels) and the
// block's first (top-left) height, written to one texel of the field's coarse image. One
// workgroup per block, from block `block_origin` of the page; invocation r sums row r of the
// block left to right, then a tree halves the rows (strides 32, 16, ..., 1). CPU twin (same
// order, so the same sums): pages::coarse::reduce_block.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "height_format.glsl"

layout(local_size_x = COARSE_FACTOR) in;
layout(set = 0, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page;
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D coarse;
layout(push_constant) uniform Push {
    ivec2 page_size;
    ivec2 coarse_origin;
    float height_min;
    float height_range;
    ivec2 block_origin;
} pc;

shared float s_lo[COARSE_FACTOR];
shared float s_hi[COARSE_FACTOR];
shared float s_sum[COARSE_FACTOR];

void main() {
    ivec2 block = ivec2(gl_WorkGroupID.xy) + pc.block_origin;
    ivec2 o = block * COARSE_FACTOR;
    ivec2 size = min(ivec2(COARSE_FACTOR), pc.page_size - o);
    int r = int(gl_LocalInvocationID.x);
    float lo = 3.4e38;
    float hi = -3.4e38;
    float sum = 0.0;
    if (r < size.y) {
        for (int x = 0; x < size.x; ++x) {
            float h = decodeHeight(imageLoad(page, o + ivec2(x, r)).r, pc.height_min,
                                   pc.height_range);
            lo = min(lo, h);
            hi = max(hi, h);
            sum += h;
        }
    }
    s_lo[r] = lo;
    s_hi[r] = hi;
    s_sum[r] = sum;
    barrier();
    for (int s = COARSE_FACTOR / 2; s > 0; s >>= 1) {
        if (r < s) {
            s_lo[r] = min(s_lo[r], s_lo[r + s]);
            s_hi[r] = max(s_hi[r], s_hi[r + s]);
            s_sum[r] = s_sum[r] + s_sum[r + s];
        }
        barrier();
    }
    if (r == 0) {
        float first = decodeHeight(imageLoad(page, o).r, pc.height_min, pc.height_range);
        imageStore(coarse, pc.coarse_origin + block, vec4(s_lo[0], s_hi[0], s_sum[0], first));
    }
}
