#version 460
// Hydraulic step, part 2 (docs/erosion.md steps 3-5): water from the pipes' flux, velocity, then
// erosion or deposition against the transport capacity. Writes the new terrain (ping-pong), d2
// and the sediment before transport s1. CPU twin: erosion::cpu::water.
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 1, std430) writeonly buffer BOut { float b_out[]; };
layout(set = 0, binding = 2, std430) readonly buffer D { float d[]; };
layout(set = 0, binding = 3, std430) writeonly buffer D2 { float d2[]; };
layout(set = 0, binding = 4, std430) readonly buffer F { vec4 f[]; };
layout(set = 0, binding = 5, std430) readonly buffer S { float s[]; };
layout(set = 0, binding = 6, std430) writeonly buffer S1 { float s1[]; };

float terrain(ivec2 p) {
    return b[texelIndex(clamp(p, ivec2(0), pc.e.size - 1))];
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    int w = pc.e.size.x;
    precise float d1 = d[i] + pc.e.dt * pc.e.rain * weightAt(p);
    vec4 fo = f[i];
    float in_l = p.x > 0 ? f[i - 1].y : 0.0;
    float in_r = p.x < w - 1 ? f[i + 1].x : 0.0;
    float in_t = p.y > 0 ? f[i - w].w : 0.0;
    float in_b = p.y < pc.e.size.y - 1 ? f[i + w].z : 0.0;
    // What leaves is what the pipes hold (their sum is F*K up to rounding): water is conserved.
    precise float out_sum = ((fo.x + fo.y) + fo.z) + fo.w;
    precise float in_sum = ((in_l + in_r) + in_t) + in_b;
    precise float dn = d1 + pc.e.dt * (in_sum - out_sum);
    precise float dm = 0.5 * (d1 + dn);
    precise float u = 0.0;
    precise float v = 0.0;
    if (dm > 1e-4) {
        u = (((in_l - fo.x) + fo.y) - in_r) / (2.0 * dm);
        v = (((in_t - fo.z) + fo.w) - in_b) / (2.0 * dm);
    }
    precise float gx = 0.5 * (terrain(p + ivec2(1, 0)) - terrain(p - ivec2(1, 0)));
    precise float gy = 0.5 * (terrain(p + ivec2(0, 1)) - terrain(p - ivec2(0, 1)));
    precise float g2 = gx * gx + gy * gy;
    precise float sin_a = max(pc.e.min_tilt, sqrt(g2) / sqrt(1.0 + g2));
    precise float c = pc.e.capacity * sin_a * sqrt(u * u + v * v) * min(1.0, dm / pc.e.erosion_depth);
    precise float bh = b[i];
    precise float sh = s[i];
    if (c > sh) {
        precise float e = pc.e.dt * pc.e.dissolve * (c - sh);
        bh = bh - e;
        sh = sh + e;
    } else {
        precise float e = pc.e.dt * pc.e.deposit * (sh - c);
        bh = bh + e;
        sh = sh - e;
    }
    b_out[i] = bh;
    d2[i] = dn;
    s1[i] = sh;
}
