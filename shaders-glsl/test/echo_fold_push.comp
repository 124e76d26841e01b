#version 460
// Layout oracle for FoldPush (src/layers/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "layers_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { FoldPush p; } pc;

void main() {
    putI2(pc.p.size); putF(pc.p.flat_height); putU(pc.p.present); putF(pc.p.height_min);
    putF(pc.p.height_range);
}
