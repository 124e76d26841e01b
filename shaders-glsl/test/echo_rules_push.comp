#version 460
// Layout oracle for RulesPush (src/layers/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "layers_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { RulesPush p; } pc;

void main() {
    putI2(pc.p.origin); putI2(pc.p.size); putI2(pc.p.doc); putI(pc.p.side); putU(pc.p.present);
    putF(pc.p.flat_height); putU(pc.p.rules); putU(pc.p.pad0); putU(pc.p.pad1);
    putF4(pc.p.height_band); putF4(pc.p.slope_band); putF4(pc.p.curvature_band);
}
