#version 460
// Layout oracle for LightPush (src/render/lighting.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "constants.glsl"
#include "lighting_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { LightPush p; } pc;

void main() {
    putI2(pc.p.origin); putI2(pc.p.first); putI2(pc.p.size); putI2(pc.p.doc);
    putI2(pc.p.coarse_size); putF(pc.p.sun_dir.x); putF(pc.p.sun_dir.y); putI(pc.p.side);
    putU(pc.p.present); putF(pc.p.tan_lo); putF(pc.p.tan_hi); putF(pc.p.vertical_scale);
    putF(pc.p.flat_height); putF(pc.p.height_min); putF(pc.p.height_range);
    putI(pc.p.max_dist); putI(pc.p.unused); putI2(pc.p.gather_first); putI2(pc.p.gather_size);
}
