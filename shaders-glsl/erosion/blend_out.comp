#version 460
// A brush instance's end on the GPU (docs/erosion.md, "The erosion brush"): the sediment
// settles (b + s), and the square's heights move toward the eroded ones,
// h <- h + strength * ((b + s) / height_scale - h); the result goes back into the page images.
// The change in metres, d = (h_new - h_old) * height_unit, adds max(0, -d) to the wear and
// max(0, d) to the deposits (docs/maps.md, "Wear and deposits").
// CPU twins: erosion::brush::erode_square (the blend) and wear::change.
#extension GL_GOOGLE_include_directive : require
#include "erosion_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 1, std430) readonly buffer S { float s[]; };
layout(set = 0, binding = 2, std430) buffer H { float h[]; };
layout(set = 0, binding = 3, std430) buffer Wear { float wear[]; };
layout(set = 0, binding = 4, std430) buffer Deposits { float deposits[]; };

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.e.size))) {
        return;
    }
    int i = texelIndex(p);
    precise float settled = b[i] + s[i];
    precise float eroded = settled / pc.e.height_scale;
    float old = h[i];
    precise float v = old + pc.e.strength * (eroded - old);
    h[i] = v;
    precise float d = (v - old) * pc.e.height_unit;
    precise float w = wear[i] + max(0.0, -d);
    precise float l = deposits[i] + max(0.0, d);
    wear[i] = w;
    deposits[i] = l;
}
