#version 460
// Thermal step, part 1 (docs/erosion.md): each texel's shed amount a = q*rate*emax/2 over its
// total excess E, stored as a/E (0 when E = 0); part 2 moves a*e_i/E to each neighbour.
// CPU twin: erosion::cpu::thermal_out.
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 1, std430) writeonly buffer R { float ratio[]; };

const ivec2 NEIGHBOURS[8] = ivec2[8](ivec2(-1, -1), ivec2(0, -1), ivec2(1, -1), ivec2(-1, 0),
                                     ivec2(1, 0), ivec2(-1, 1), ivec2(0, 1), ivec2(1, 1));

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    float h = b[texelIndex(p)];
    precise float total = 0.0;
    precise float most = 0.0;
    for (int k = 0; k < 8; k++) {
        ivec2 n = p + NEIGHBOURS[k];
        if (any(lessThan(n, ivec2(0))) || any(greaterThanEqual(n, pc.e.size))) {
            continue;
        }
        float dist = (k == 0 || k == 2 || k == 5 || k == 7) ? 1.41421356 : 1.0;
        precise float e = max(0.0, (h - b[texelIndex(n)]) - pc.e.talus_tan * dist);
        total = total + e;
        most = max(most, e);
    }
    precise float a = weightAt(p) * pc.e.thermal_rate * most * 0.5;
    precise float r = total > 0.0 ? a / total : 0.0;
    ratio[texelIndex(p)] = r;
}
