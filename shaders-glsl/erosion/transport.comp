#version 460
// Hydraulic step, part 3 (docs/erosion.md steps 6-7): sediment moves with the water that moves,
// in flux form (what leaves a texel through a pipe arrives at the neighbour), then evaporation.
// Reads d (for d1), d2, the flux and s1; writes s and the evaporated water over d2.
// CPU twin: erosion::cpu::transport.
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer D { float d[]; };
layout(set = 0, binding = 1, std430) buffer D2 { float d2[]; };
layout(set = 0, binding = 2, std430) readonly buffer F { vec4 f[]; };
layout(set = 0, binding = 3, std430) readonly buffer S1 { float s1[]; };
layout(set = 0, binding = 4, std430) writeonly buffer S { float s[]; };

float waterBefore(ivec2 p) {
    precise float d1 = d[texelIndex(p)] + pc.e.dt * pc.e.rain * weightAt(p);
    return d1;
}

// dt * flux / d1 (0 where there is no water).
float share(float flux, float d1) {
    precise float r = d1 > 0.0 ? pc.e.dt * flux / d1 : 0.0;
    return r;
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    int w = pc.e.size.x;
    float d1 = waterBefore(p);
    vec4 fo = f[i];
    precise float stay = (((1.0 - share(fo.x, d1)) - share(fo.y, d1)) - share(fo.z, d1)) - share(fo.w, d1);
    precise float sn = s1[i] * stay;
    if (p.x > 0) {
        sn = sn + s1[i - 1] * share(f[i - 1].y, waterBefore(p + ivec2(-1, 0)));
    }
    if (p.x < w - 1) {
        sn = sn + s1[i + 1] * share(f[i + 1].x, waterBefore(p + ivec2(1, 0)));
    }
    if (p.y > 0) {
        sn = sn + s1[i - w] * share(f[i - w].w, waterBefore(p + ivec2(0, -1)));
    }
    if (p.y < pc.e.size.y - 1) {
        sn = sn + s1[i + w] * share(f[i + w].z, waterBefore(p + ivec2(0, 1)));
    }
    s[i] = sn;
    precise float dn = d2[i] * (1.0 - pc.e.evaporation * pc.e.dt);
    d2[i] = dn;
}
