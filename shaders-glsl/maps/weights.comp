#version 460
// The material weight maps (docs/maps.md): at every texel of a region, the weights of rock,
// scree, grass, sand and snow by the viewport's own rules (materials.glsl), from the texel's
// true slope, altitude and curvature; and the surface maps: slope, curvature, profile and plan
// curvature. CPU twin: maps::cpu::maps_region.
#extension GL_GOOGLE_include_directive : require
#include "maps_shared.glsl"
#include "materials.glsl"
#include "surface_maps.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(push_constant) uniform Push { MapsPush p; } pc;

layout(set = 0, binding = 0, std430) readonly buffer H { float h[]; };
layout(set = 0, binding = 1, std430) writeonly buffer W { float w[]; };
// Slope (degrees), curvature, profile and plan curvature (1/m) per texel (maps::Surface).
layout(set = 0, binding = 2, std430) writeonly buffer F { float f[]; };

float at(ivec2 p) {
    p = clamp(p, ivec2(0), pc.p.size - 1);
    return h[p.y * pc.p.size.x + p.x];
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.p.size))) {
        return;
    }
    float c = at(p);
    float e = at(p + ivec2(1, 0));
    float wv = at(p - ivec2(1, 0));
    float s = at(p + ivec2(0, 1));
    float n = at(p - ivec2(0, 1));
    // True slope from central differences in metres; curvature per metre (the Laplacian of
    // the heights in metres) and, for the rules, in world units (texels) per texel² at true
    // scale (times the mean spacing).
    float deg = slopeDegrees(e, wv, s, n, pc.p.tau, pc.p.unit);
    float curv_m = curvaturePerMetre(c, e, wv, s, n, pc.p.tau, pc.p.unit);
    precise float curv = curv_m * sqrt(pc.p.tau.x * pc.p.tau.y);
    float alt = clamp((c - pc.p.lo) / max(pc.p.hi - pc.p.lo, 1e-3), 0.0, 1.0);
    float m[5];
    materialWeights(deg, alt, curv, vec2(p + pc.p.origin), pc.p.rules0, pc.p.rules1, m);
    int i = (p.y * pc.p.size.x + p.x) * 5;
    for (int k = 0; k < 5; k++) {
        w[i + k] = m[k];
    }
    vec4 corners = vec4(at(p + ivec2(1, 1)), at(p + ivec2(-1, 1)), at(p + ivec2(1, -1)),
                        at(p + ivec2(-1, -1)));
    vec2 pp = profilePlan(c, e, wv, s, n, corners, pc.p.tau, pc.p.unit);
    int j = (p.y * pc.p.size.x + p.x) * 4;
    f[j] = deg;
    f[j + 1] = curv_m;
    f[j + 2] = pp.x;
    f[j + 3] = pp.y;
}
