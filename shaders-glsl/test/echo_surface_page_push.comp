#version 460
// Layout oracle for SurfacePagePush (src/maps/mod.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "maps_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { SurfacePagePush p; } pc;

void main() {
    putI2(pc.p.origin); putI2(pc.p.doc); putF2(pc.p.tau); putF(pc.p.unit); putI(pc.p.side);
    putU(pc.p.present); putF(pc.p.flat_height); putF(pc.p.height_min); putF(pc.p.height_range);
    putI(pc.p.map); putF(pc.p.full); putI2(pc.p.size);
}
