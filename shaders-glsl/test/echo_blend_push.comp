#version 460
// Layout oracle for BlendPush (src/layers/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "layers_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { BlendPush p; } pc;

void main() {
    putI2(pc.p.size); putI(pc.p.count); putU(pc.p.present); putU(pc.p.modes);
    putF(pc.p.flat_height); putU(pc.p.pad1); putU(pc.p.pad2);
    putF4(pc.p.weights); putF4(pc.p.flat_value); putF4(pc.p.flat_alpha); putF4(pc.p.flat_mask);
}
