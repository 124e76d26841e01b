#version 460
// Bandwidth ceiling: copies one R32F storage image into another through imageLoad/imageStore, the
// path the brush kernels use for their pages. Mode 0 fills `dst` with a hash pattern instead (the
// source of the timed copies is never constant).
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(push_constant) uniform Push {
    uint mode; // 0: fill dst, 1: copy src to dst
} pc;

layout(set = 0, binding = 0, r32f) uniform readonly image2D src;
layout(set = 0, binding = 1, r32f) uniform writeonly image2D dst;

uint hash(uvec2 p) {
    uint h = p.x * 0x8da6b343u ^ p.y * 0xd8163841u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(dst)))) {
        return;
    }
    if (pc.mode == 0u) {
        imageStore(dst, p, vec4(float(hash(uvec2(p)) >> 8) * (1.0 / 16777216.0)));
    } else {
        imageStore(dst, p, imageLoad(src, p));
    }
}
