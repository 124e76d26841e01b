#version 460
// Layout oracle for BrushPass (src/brush/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { BrushPass pass; } pc;

void main() {
    BrushPass p = pc.pass;
    putI2(p.page_origin); putU(p.rect_min_packed); putU(p.rect_size_packed);
    putU(p.first_instance); putU(p.instance_count); putI(p.falloff); putF(p.level_target);
    putNoise(p.noise);
    putF(p.brush_param); putF(p.height_min); putF(p.height_range); putF(p.falloff_power);
}
