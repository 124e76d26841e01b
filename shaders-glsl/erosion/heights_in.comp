#version 460
// A brush instance's start on the GPU (docs/erosion.md, "The erosion brush"): terrain
// b = h * height_scale from the square's heights, gathered out of the page images.
// CPU twin: erosion::brush::erode_square (`start`).
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer H { float h[]; };
layout(set = 0, binding = 1, std430) writeonly buffer B { float b[]; };

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    precise float v = h[i] * pc.e.height_scale;
    b[i] = v;
}
