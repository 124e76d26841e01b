#version 460
// Layout oracle for MapsPush (src/maps/mod.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "maps_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { MapsPush p; } pc;

void main() {
    putI2(pc.p.size); putI2(pc.p.origin); putF2(pc.p.tau); putF(pc.p.unit); putF(pc.p.lo);
    putF4(pc.p.rules0); putF4(pc.p.rules1); putF(pc.p.hi); putF(pc.p.pad0); putF(pc.p.pad1);
    putF(pc.p.pad2);
}
