#version 460
// A page atlas's mip levels (src/render/terrain/atlas_mips.rs): one invocation per texel of
// level pc.level of slot pc.slots[z], the mean of the level below's 2x2 block in this order,
// ((a + b) + (c + d)) / 4 (its CPU twin: atlas_mips::mip_level). A slot's levels lie side by
// side in the mips image, in a page_size x page_size/2 area: level k at x = page_size -
// 2 * (page_size >> k), its side page_size >> k. Level 1 reads the slot in the atlas itself.
// PACKED_LIGHT: the texels are the lighting's packed pairs (lighting_shared.glsl): each of the
// two is meant alone and rounded to its integer level, floor(mean + 0.5), and packed again.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "lighting_shared.glsl"

layout(constant_id = 0) const int PACKED_LIGHT = 0;

layout(local_size_x = 16, local_size_y = 16) in;

layout(set = 0, binding = 0, r32f) uniform readonly image2D atlas;
layout(set = 0, binding = 1, r32f) uniform image2D mips;
layout(push_constant) uniform Push { MipsPush pc; };

// Where level k (1 and up) of slot s starts in the mips image.
ivec2 levelOrigin(int s, int k) {
    ivec2 slot = ivec2(s % pc.cols, s / pc.cols) * ivec2(pc.page_size, pc.page_size / 2);
    return slot + ivec2(pc.page_size - 2 * (pc.page_size >> k), 0);
}

float below(int s, ivec2 t) {
    if (pc.level == 1) {
        ivec2 slot = ivec2(s % pc.cols, s / pc.cols) * pc.page_size;
        return imageLoad(atlas, slot + t).r;
    }
    return imageLoad(mips, levelOrigin(s, pc.level - 1) + t).r;
}

void main() {
    int side = pc.page_size >> pc.level;
    ivec2 j = ivec2(gl_GlobalInvocationID.xy);
    int i = int(gl_GlobalInvocationID.z);
    if (j.x >= side || j.y >= side || i >= pc.count) {
        return;
    }
    int s = pc.slots[i];
    float a = below(s, 2 * j);
    float b = below(s, 2 * j + ivec2(1, 0));
    float c = below(s, 2 * j + ivec2(0, 1));
    float d = below(s, 2 * j + ivec2(1, 1));
    float m;
    if (PACKED_LIGHT != 0) {
        // The integer levels of each pair, exactly (below 2^10 each).
        uvec4 u = uvec4(vec4(a, b, c, d));
        vec4 lo = vec4(u & 1023u);
        vec4 hi = vec4(u >> 10u);
        precise float sun = floor(((lo.x + lo.y) + (lo.z + lo.w)) * 0.25 + 0.5);
        precise float ao = floor(((hi.x + hi.y) + (hi.z + hi.w)) * 0.25 + 0.5);
        m = float(uint(sun) + 1024u * uint(ao));
    } else {
        precise float mean = ((a + b) + (c + d)) * 0.25;
        m = mean;
    }
    imageStore(mips, levelOrigin(s, pc.level) + j, vec4(m));
}
