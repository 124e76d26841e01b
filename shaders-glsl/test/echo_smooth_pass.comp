#version 460
// Layout oracle for SmoothPass and BrushInstance (src/brush/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { SmoothPass pass; } pc;
layout(set = 0, binding = 1, std430) readonly buffer Instance { BrushInstance instance; };

void main() {
    SmoothPass p = pc.pass;
    putU(p.first_instance); putU(p.instance_count);
    putI2(p.page_origin); putI2(p.self_size); putI2(p.doc_size); putI2(p.rect_min);
    putI2(p.rect_size); putI(p.page_size); putI(p.falloff); putF(p.falloff_power);
    putF(p.flat_height); putU(p.present_mask); putF(p.height_min); putF(p.height_range);
    putInstance(instance);
}
