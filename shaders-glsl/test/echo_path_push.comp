#version 460
// Layout oracle for PathPush and PathSegment (src/brush/shared.rs), see echo.glsl. The push
// constants hold a PathPush followed by the words of one PathSegment.
#extension GL_GOOGLE_include_directive : require

#include "path_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { PathPush p; PathSegment g; } pc;

void main() {
    putI2(pc.p.rect_origin); putU2(pc.p.rect_size); putU(pc.p.tiles_x); putF(pc.p.half_width);
    putF(pc.p.falloff); putF(pc.p.signed_depth); putU(pc.p.mode); putU(pc.p.profile);
    putU2(pc.p._pad);
    putF2(pc.g.a); putF2(pc.g.b); putF(pc.g.base_a); putF(pc.g.base_b); putF2(pc.g._pad);
}
