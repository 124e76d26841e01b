#version 460
// Layout oracle for ErosionPush (src/erosion/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#define EROSION_NO_KERNEL
#include "erosion_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { ErosionPush p; } pc;

void main() {
    putI2(pc.p.size); putF(pc.p.dt); putF(pc.p.rain); putF(pc.p.pipe_area); putF(pc.p.gravity);
    putF(pc.p.capacity); putF(pc.p.dissolve); putF(pc.p.deposit); putF(pc.p.evaporation);
    putF(pc.p.min_tilt); putF(pc.p.erosion_depth); putF(pc.p.talus_tan); putF(pc.p.thermal_rate);
    putF2(pc.p.center); putF(pc.p.radius); putF(pc.p.inner_radius); putI(pc.p.falloff);
    putF(pc.p.falloff_power); putF(pc.p.height_scale); putF(pc.p.strength);
    putF(pc.p.height_unit); putF(pc.p.pad_);
}
