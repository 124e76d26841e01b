#version 460
// Thermal step, part 2: b <- b - (what it sends) + (what its neighbours send it). Sender and
// receiver compute each pair's amount ratio * e from the same operands, so material is conserved
// up to the sums' rounding. CPU twin: erosion::cpu::thermal_in.
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 1, std430) readonly buffer R { float ratio[]; };
layout(set = 0, binding = 2, std430) writeonly buffer BOut { float b_out[]; };

const ivec2 NEIGHBOURS[8] = ivec2[8](ivec2(-1, -1), ivec2(0, -1), ivec2(1, -1), ivec2(-1, 0),
                                     ivec2(1, 0), ivec2(-1, 1), ivec2(0, 1), ivec2(1, 1));

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    float h = b[i];
    float own = ratio[i];
    precise float sent = 0.0;
    precise float got = 0.0;
    for (int k = 0; k < 8; k++) {
        ivec2 n = p + NEIGHBOURS[k];
        if (any(lessThan(n, ivec2(0))) || any(greaterThanEqual(n, pc.e.size))) {
            continue;
        }
        int j = texelIndex(n);
        float hn = b[j];
        float dist = (k == 0 || k == 2 || k == 5 || k == 7) ? 1.41421356 : 1.0;
        precise float e_out = max(0.0, (h - hn) - pc.e.talus_tan * dist);
        precise float e_in = max(0.0, (hn - h) - pc.e.talus_tan * dist);
        sent = sent + own * e_out;
        got = got + ratio[j] * e_in;
    }
    precise float hb = (h - sent) + got;
    b_out[i] = hb;
}
