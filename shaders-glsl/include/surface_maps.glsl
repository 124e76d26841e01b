// The surface maps at one texel (docs/maps.md), from its heights (height units) and its
// neighbours', `tau` metres apart along x and y, `unit` metres per height unit: the slope
// (degrees, from central differences in metres), the curvature (1/m: the Laplacian of the heights
// in metres, concave above 0), and the profile and plan curvature (1/m, Zevenbergen & Thorne
// 1987). The weight kernel (maps/weights.comp) and the page kernel (maps/surface_page.comp) call
// these; CPU twin: maps::cpu::maps_region and maps::cpu::profile_plan.
#ifndef SCARP_SURFACE_MAPS_GLSL
#define SCARP_SURFACE_MAPS_GLSL

// Profile and plan curvature (1/m, concave above 0) from the heights c, e, w, s, n and the
// corners (se, sw, ne, nw); 0 where the ground is level.
vec2 profilePlan(float c, float e, float wv, float s, float n, vec4 corners, vec2 tau, float u) {
    float tx = tau.x;
    float ty = tau.y;
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

// Slope (degrees) from central differences in metres.
float slopeDegrees(float e, float wv, float s, float n, vec2 tau, float u) {
    vec2 scale = u / tau;
    precise float gx = (e - wv) * 0.5 * scale.x;
    precise float gy = (s - n) * 0.5 * scale.y;
    return degrees(atan(sqrt(gx * gx + gy * gy)));
}

// Curvature per metre: the Laplacian of the heights in metres.
float curvaturePerMetre(float c, float e, float wv, float s, float n, vec2 tau, float u) {
    precise float curv_m = ((e + wv - 2.0 * c) / (tau.x * tau.x)
                          + (s + n - 2.0 * c) / (tau.y * tau.y)) * u;
    return curv_m;
}

#endif
