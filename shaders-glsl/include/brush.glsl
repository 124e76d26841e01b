// Brush falloff and per-texel application, shared by the brush kernels. CPU twin: src/brush/cpu.rs.
#ifndef SCARP_BRUSH_GLSL
#define SCARP_BRUSH_GLSL

#include "shared.glsl"

// Weight of an instance at distance d from its centre: 1 inside the inner radius, falling to 0 at
// the radius along the chosen ramp.
float brushFalloff(float d, float radius, float inner_radius, int falloff, float power) {
    float t = clamp((d - inner_radius) / max(radius - inner_radius, 1e-6), 0.0, 1.0);
    switch (falloff) {
    case FALLOFF_SMOOTH: return 1.0 - t * t * (3.0 - 2.0 * t);
    case FALLOFF_LINEAR: return 1.0 - t;
    case FALLOFF_POWER:  return 1.0 - pow(t, power);
    default:             return 1.0 - t * t;
    }
}

// Noise input of a directional brush (paper section 5.3): p compressed by `ratio` along the unit
// axis u (at the brush's angle to the instance's stroke direction), about the instance centre.
// Written as p plus a displacement so that ratio 1 gives exactly p.
vec2 directionalInput(vec2 p, vec2 center, vec2 u, float ratio) {
    return p + ((1.0 / ratio) - 1.0) * dot(p - center, u) * u;
}

#endif
