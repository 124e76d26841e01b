#version 460
// D8 drainage by pointer doubling (docs/maps.md, "Drainage on the GPU"), its start: every
// texel's pointer is its receiver (geology's receivers kernel, ints; -1 for a pit or where the
// region ends) and its count 1, itself. CPU twin: maps::drainage::twin.
#extension GL_GOOGLE_include_directive : require
#include "geology_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer R { int r[]; };
layout(set = 0, binding = 1, std430) writeonly buffer J { int j[]; };
layout(set = 0, binding = 2, std430) writeonly buffer V { uint v[]; };

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.g.size))) {
        return;
    }
    int i = texelIndex(p);
    int k = r[i];
    j[i] = k == NO_RECEIVER ? -1 : neighbourIndex(i, k);
    v[i] = 1u;
}
