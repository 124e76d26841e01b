#version 460
// Layout oracle for src/gpu/shared.rs: writes every push-constant field's bits in declaration
// order, so a test can compare them with the Rust struct's bytes.
#extension GL_GOOGLE_include_directive : require

#include "shared.glsl"

layout(local_size_x = 1) in;

layout(set = 0, binding = 0, std430) writeonly buffer Echo { uint words[]; };

layout(push_constant) uniform Push {
    NoiseParams noise;
    NoiseGrid grid;
} pc;

void main() {
    NoiseParams n = pc.noise;
    words[0] = floatBitsToUint(n.offset.x);
    words[1] = floatBitsToUint(n.offset.y);
    words[2] = floatBitsToUint(n.scale);
    words[3] = uint(n.seed);
    words[4] = uint(n.octaves);
    words[5] = floatBitsToUint(n.lacunarity);
    words[6] = floatBitsToUint(n.gain);
    words[7] = floatBitsToUint(n.warp);
    words[8] = floatBitsToUint(n.gain1);
    words[9] = floatBitsToUint(n.warp0);
    words[10] = floatBitsToUint(n.damp0);
    words[11] = floatBitsToUint(n.damp);
    words[12] = floatBitsToUint(n.damp_scale);
    words[13] = floatBitsToUint(n.alpha);
    words[14] = floatBitsToUint(n.beta);
    words[15] = floatBitsToUint(n.prewarp_amount);
    words[16] = floatBitsToUint(n.prewarp_scale);
    words[17] = uint(n.prewarp_octaves);
    words[18] = floatBitsToUint(n.power);
    words[19] = uint(n.kind);
    words[20] = pc.grid.width;
    words[21] = pc.grid.rows;
    words[22] = pc.grid.row_offset;
    words[23] = pc.grid._pad;
}
