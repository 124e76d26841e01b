// Brush falloff and per-texel application, shared by the brush kernels. CPU twin: src/brush/cpu.rs.
#ifndef SCARP_BRUSH_GLSL
#define SCARP_BRUSH_GLSL

#include "shared.glsl"

// Weight of an instance at distance d from its centre: 1 inside the inner radius, falling to 0 at
// the radius along the chosen ramp.
float brushFalloff(float d, float radius, float inner_radius, int falloff) {
    float t = clamp((d - inner_radius) / max(radius - inner_radius, 1e-6), 0.0, 1.0);
    switch (falloff) {
    case FALLOFF_SMOOTH: return 1.0 - t * t * (3.0 - 2.0 * t);
    case FALLOFF_LINEAR: return 1.0 - t;
    default:             return 1.0 - t * t;
    }
}

#endif
