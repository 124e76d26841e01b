// The artist's look (render::look, VIEW_LOOK): the analytic sky, the filmic tone map to sRGB and
// (materials.glsl) value noise for material breakup and detail normals. Needs FrameData `frame`
// declared first.
#ifndef SCARP_LOOK_GLSL
#define SCARP_LOOK_GLSL

#include "materials.glsl"

// Linear sky radiance seen along unit direction `dir` with the sun toward unit `sun`: a
// zenith-to-horizon gradient that pales toward the horizon, warms near a low sun, a glow
// around the sun and its disc; dimmer as the sun sinks.
vec3 skyColour(vec3 dir, vec3 sun) {
    float up = clamp(dir.y, -1.0, 1.0);
    float h = max(up, 0.0);
    vec3 zenith = vec3(0.07, 0.20, 0.60);
    vec3 horizon = vec3(0.42, 0.55, 0.74);
    vec3 c = mix(horizon, zenith, pow(h, 0.5));
    float mu = max(dot(dir, sun), 0.0);
    float low = 1.0 - smoothstep(0.0, 0.4, sun.y);
    // Warm light around a low sun, near the horizon.
    c = mix(c, vec3(0.95, 0.62, 0.38), low * pow(1.0 - h, 4.0) * (0.25 + 0.75 * mu * mu));
    c += vec3(1.0, 0.85, 0.65) * (0.35 * pow(mu, 12.0));
    c += vec3(1.0, 0.95, 0.85) * 40.0 * smoothstep(0.9995, 0.99975, mu) * step(0.0, up);
    // Below the horizon: the haze's colour, darkening.
    if (up < 0.0) {
        c = mix(c, horizon * 0.5, min(1.0, -up * 4.0));
    }
    return c * mix(0.35, 1.0, smoothstep(-0.05, 0.3, sun.y));
}

// Narkowicz's fit of the ACES filmic curve.
vec3 filmic(vec3 x) {
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
}

// The sRGB transfer function (the target is UNORM: the shader encodes).
vec3 srgbEncode(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    vec3 lo = c * 12.92;
    vec3 hi = 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055;
    return mix(lo, hi, step(vec3(0.0031308), c));
}

// What the look writes: exposure, tone map, sRGB.
vec3 present(vec3 linear) {
    return srgbEncode(filmic(linear * frame.look.x));
}

#endif
