#version 460
// Fills rows [row_offset, row_offset + rows) of a W x H grid with noise kind NOISE_KIND; texel (x, y)
// samples p = offset + scale * (x, y). One invocation per texel, row-major output buffer.
#extension GL_GOOGLE_include_directive : require

// constant_id of the shared-memory gradient switch (noise.glsl).
#define NOISE_SHARED_GRADIENTS 1
#include "noise.glsl"

layout(local_size_x = NOISE_GROUP_X, local_size_y = NOISE_GROUP_Y, local_size_z = 1) in;

// Specialised per pipeline so the kind switch folds away.
layout(constant_id = 0) const int NOISE_KIND = NOISE_PERLIN;

layout(set = 0, binding = 2, std430) writeonly buffer Heights { float heights[]; };

layout(push_constant) uniform Push {
    NoiseParams noise;
    NoiseGrid grid;
} pc;

void main() {
    stageNoiseGradients();
    uvec2 id = gl_GlobalInvocationID.xy;
    if (id.x >= pc.grid.width || id.y >= pc.grid.rows) {
        return;
    }
    // precise: no fma, so the position rounds exactly as on the CPU (see noise.glsl).
    precise vec2 p = pc.noise.offset + pc.noise.scale * vec2(float(id.x), float(id.y + pc.grid.row_offset));
    heights[id.y * pc.grid.width + id.x] = noiseAt(NOISE_KIND, pc.noise, p);
}
