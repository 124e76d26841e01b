#version 460
// The material weight maps (docs/maps.md): at every texel of a region, the weights of rock,
// scree, grass, sand and snow by the viewport's own rules (materials.glsl), from the texel's
// true slope, altitude and curvature; and the surface maps: slope, curvature, profile and plan
// curvature. CPU twin: maps::cpu::maps_region.
#extension GL_GOOGLE_include_directive : require
#include "maps_shared.glsl"
#include "materials.glsl"

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

// Profile and plan curvature (1/m, concave above 0), Zevenbergen & Thorne (1987), from the
// heights c, e, w, s, n and the corners se, sw, ne, nw. CPU twin: maps::cpu::profile_plan.
vec2 profilePlan(float c, float e, float wv, float s, float n, vec4 corners) {
    float tx = pc.p.tau.x;
    float ty = pc.p.tau.y;
    float u = pc.p.unit;
    precise float p = (e - wv) * u / (2.0 * tx);
    precise float q = (s - n) * u / (2.0 * ty);
    precise float r = (e + wv - 2.0 * c) * u / (tx * tx);
    precise float t = (s + n - 2.0 * c) * u / (ty * ty);
    precise float sm = (corners.x - corners.y - corners.z + corners.w) * u / (4.0 * tx * ty);
    precise float g2 = p * p + q * q;
    if (g2 < 1e-12) {
        return vec2(0.0);
    }
    precise float profile = (p * p * r + 2.0 * p * q * sm + q * q * t) / (g2 * pow(1.0 + g2, 1.5));
    precise float plan = (q * q * r - 2.0 * p * q * sm + p * p * t) / pow(g2, 1.5);
    return vec2(profile, plan);
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
    vec2 scale = pc.p.unit / pc.p.tau;
    precise float gx = (e - wv) * 0.5 * scale.x;
    precise float gy = (s - n) * 0.5 * scale.y;
    float deg = degrees(atan(sqrt(gx * gx + gy * gy)));
    precise float curv_m = ((e + wv - 2.0 * c) / (pc.p.tau.x * pc.p.tau.x)
                          + (s + n - 2.0 * c) / (pc.p.tau.y * pc.p.tau.y)) * pc.p.unit;
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
    vec2 pp = profilePlan(c, e, wv, s, n, corners);
    int j = (p.y * pc.p.size.x + p.x) * 4;
    f[j] = deg;
    f[j + 1] = curv_m;
    f[j + 2] = pp.x;
    f[j + 3] = pp.y;
}
