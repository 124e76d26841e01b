#version 460
// Layout oracle for NoiseGenPush (src/noise/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push {
    NoiseParams noise;
    NoiseGrid grid;
} pc;

void main() {
    putNoise(pc.noise);
    putU(pc.grid.width); putU(pc.grid.rows); putU(pc.grid.row_offset); putU(pc.grid._pad);
}
