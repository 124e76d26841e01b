#version 460
// D8 drainage by pointer doubling (docs/maps.md, "Drainage on the GPU"), round k: before it,
// v[p] counts the texels whose receivers reach p in fewer than 2^k steps and j[p] is p's
// receiver 2^k steps down (-1 past an outlet or a pit). Every texel adds its count to the texel
// its pointer names (w holds v on entry: w[p] = v[p] + the counts of the texels 2^k to 2^(k+1) - 1
// steps up) and doubles its pointer. Integer atomics: the same counts in any order.
// CPU twin: maps::drainage::twin.
#extension GL_GOOGLE_include_directive : require
#include "geology_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer J { int j[]; };
layout(set = 0, binding = 1, std430) readonly buffer V { uint v[]; };
layout(set = 0, binding = 2, std430) buffer W { uint w[]; };
layout(set = 0, binding = 3, std430) writeonly buffer J2 { int j2[]; };

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.g.size))) {
        return;
    }
    int i = texelIndex(p);
    int t = j[i];
    if (t >= 0) {
        atomicAdd(w[t], v[i]);
        j2[i] = j[t];
    } else {
        j2[i] = -1;
    }
}
