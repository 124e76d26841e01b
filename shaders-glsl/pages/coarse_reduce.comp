#version 460
// One level of the coarse pyramid: each texel is the 2x2 reduction of the level below (fewer
// children at an odd edge): lowest of the lows, highest of the highs, (top-left + top-right) +
// (bottom-left + bottom-right) of the sums, and the top-left child's first height. One
// invocation per texel of the rectangle `origin`, `size` of the level written. CPU twin:
// pages::coarse::reduce_2x2.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba32f) uniform readonly image2D below;
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D above;
layout(push_constant) uniform Push {
    ivec2 below_size;
    ivec2 origin;
    ivec2 size;
} pc;

void main() {
    ivec2 t = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(t, pc.size))) {
        return;
    }
    ivec2 p = pc.origin + t;
    ivec2 c = 2 * p;
    bool right = c.x + 1 < pc.below_size.x;
    bool down = c.y + 1 < pc.below_size.y;
    vec4 a = imageLoad(below, c);
    float lo = a.x;
    float hi = a.y;
    float top = a.z;
    if (right) {
        vec4 b = imageLoad(below, c + ivec2(1, 0));
        lo = min(lo, b.x);
        hi = max(hi, b.y);
        top = top + b.z;
    }
    float sum = top;
    if (down) {
        vec4 d0 = imageLoad(below, c + ivec2(0, 1));
        lo = min(lo, d0.x);
        hi = max(hi, d0.y);
        float bottom = d0.z;
        if (right) {
            vec4 d1 = imageLoad(below, c + ivec2(1, 1));
            lo = min(lo, d1.x);
            hi = max(hi, d1.y);
            bottom = bottom + d1.z;
        }
        sum = top + bottom;
    }
    imageStore(above, p, vec4(lo, hi, sum, a.w));
}
