#version 460
// Layout oracle for BoundsPush (src/render/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "render_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { BoundsPush b; } pc;

void main() {
    BoundsPush b = pc.b;
    putI2(b.block_origin); putU2(b.present); putI(b.tiles_per_page); putI(b.page_size);
    putI2(b.doc); putF(b.flat_height); putF(b.height_min); putF(b.height_range); putI(b.unused);
    putI2(b.first_tile); putI2(b.page_tile0);
}
