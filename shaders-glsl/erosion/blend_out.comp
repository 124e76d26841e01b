#version 460
// A brush instance's end on the GPU (docs/erosion.md, "The erosion brush"): the sediment
// settles (b + s), and the square's heights move toward the eroded ones,
// h <- h + strength * ((b + s) / height_scale - h); the result goes back into the page images.
// CPU twin: erosion::brush::erode_square (the blend).
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 1, std430) readonly buffer S { float s[]; };
layout(set = 0, binding = 2, std430) buffer H { float h[]; };

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    precise float settled = b[i] + s[i];
    precise float eroded = settled / pc.e.height_scale;
    precise float v = h[i] + pc.e.strength * (eroded - h[i]);
    h[i] = v;
}
