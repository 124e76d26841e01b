#version 460
// Terrain G-buffer: what the shading pass (render/shade.comp) needs of each pixel beside its
// depth. Deferred because these GPUs shade fragments on few units: the fragment stage only
// stores the vertex stage's interpolants.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 1) flat in uint in_node;
layout(location = 2) in float in_overlay;
layout(location = 3) in float in_curvature;

// x, z of the unit normal (y = sqrt(1 - x² - z²) > 0), curvature, overlay value.
layout(location = 0) out vec4 out_surface;
// The node: level | GBUF_COARSE.
layout(location = 1) out uint out_node;

void main() {
    vec3 n = normalize(in_normal);
    // Snapped to 1/4096 (finer than f16 near 1): interpolating a constant 1 may give 1 - 2^-24,
    // which a conversion rounding toward zero would store as 1 - 2^-11, a faint tint where the
    // overlay shows none.
    float overlay = round(in_overlay * 4096.0) / 4096.0;
    out_surface = vec4(n.x, n.z, in_curvature, overlay);
    out_node = in_node;
}
