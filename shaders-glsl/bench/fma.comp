#version 460
// ALU ceiling: eight independent chains of `iterations` fused multiply-adds per invocation
// (2 FLOPs each), summed into one float so nothing folds away.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) writeonly buffer Out { float sums[]; };

layout(push_constant) uniform Push {
    float mul;
    float add;
    uint iterations;
    uint count;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
    if (i >= pc.count) {
        return;
    }
    float s = float(i & 1023u) * 1e-3;
    float a0 = s, a1 = s + 0.1, a2 = s + 0.2, a3 = s + 0.3;
    float a4 = s + 0.4, a5 = s + 0.5, a6 = s + 0.6, a7 = s + 0.7;
    for (uint k = 0u; k < pc.iterations; k++) {
        a0 = fma(a0, pc.mul, pc.add);
        a1 = fma(a1, pc.mul, pc.add);
        a2 = fma(a2, pc.mul, pc.add);
        a3 = fma(a3, pc.mul, pc.add);
        a4 = fma(a4, pc.mul, pc.add);
        a5 = fma(a5, pc.mul, pc.add);
        a6 = fma(a6, pc.mul, pc.add);
        a7 = fma(a7, pc.mul, pc.add);
    }
    sums[i] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}
