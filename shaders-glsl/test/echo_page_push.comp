#version 460
// Layout oracle for PagePush (src/render/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "render_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { PagePush page; } pc;

void main() {
    putI2(pc.page.block_origin); putU2(pc.page.present);
}
