#version 460
// Hydraulic step, part 1 (docs/erosion.md steps 1-2): rain d1 = d + dt*rain*q (computed where
// needed, not stored), outflow flux through the four pipes, scaled by K so no more water leaves
// than there is. Pipes to outside the region carry nothing. CPU twin: erosion::cpu::flux.
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 1, std430) readonly buffer D { float d[]; };
layout(set = 0, binding = 2, std430) buffer F { vec4 f[]; };

float surface(ivec2 p) {
    int i = texelIndex(p);
    precise float d1 = d[i] + pc.e.dt * pc.e.rain * weightAt(p);
    precise float s = b[i] + d1;
    return s;
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    precise float d1 = d[i] + pc.e.dt * pc.e.rain * weightAt(p);
    precise float h = b[i] + d1;
    precise float k = pc.e.dt * pc.e.pipe_area * pc.e.gravity;
    vec4 fo = f[i];
    precise float fl = 0.0;
    precise float fr = 0.0;
    precise float ft = 0.0;
    precise float fb = 0.0;
    if (p.x > 0) {
        fl = max(0.0, fo.x + k * (h - surface(p + ivec2(-1, 0))));
    }
    if (p.x < pc.e.size.x - 1) {
        fr = max(0.0, fo.y + k * (h - surface(p + ivec2(1, 0))));
    }
    if (p.y > 0) {
        ft = max(0.0, fo.z + k * (h - surface(p + ivec2(0, -1))));
    }
    if (p.y < pc.e.size.y - 1) {
        fb = max(0.0, fo.w + k * (h - surface(p + ivec2(0, 1))));
    }
    precise float sum = ((fl + fr) + ft) + fb;
    precise float scale = sum > 0.0 ? min(1.0, d1 / (pc.e.dt * sum)) : 1.0;
    f[i] = vec4(scale * fl, scale * fr, scale * ft, scale * fb);
}
