#version 460
// Layout oracle for ShadePush (src/render/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "render_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { ShadePush shade; } pc;

void main() {
    putI2(pc.shade.size); putI(pc.shade.pages_x); putI(pc.shade.light_cols);
    putI(pc.shade.rivers_cols); putI(pc.shade.heights_cols);
    putI(pc.shade.overlay_cols); putI(pc.shade.mip_levels);
}
