#version 460
// Layout oracle for MipsPush (src/render/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "render_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { MipsPush mips; } pc;

void main() {
    putI(pc.mips.level); putI(pc.mips.page_size); putI(pc.mips.cols); putI(pc.mips.count);
    for (int i = 0; i < 28; i++) {
        putI(pc.mips.slots[i]);
    }
}
