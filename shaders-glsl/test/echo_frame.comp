#version 460
// Layout oracle for FrameData (std140, as the uniform block reads it) and TileDraw (std430 storage) of
// src/render/shared.rs, see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#include "render_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(set = 0, binding = 1, std140) readonly buffer Frame { FrameData frame; };
layout(set = 0, binding = 2, std430) readonly buffer Tiles { TileDraw tile; };

void main() {
    for (int c = 0; c < 4; c++) {
        putF4(frame.view_proj[c]);
    }
    putF4(frame.eye); putF4(frame.light); putF4(frame.cursor); putF4(frame.shade);
    putI4(frame.doc); putF4(frame.heights); putF4(frame.analysis);
    for (int c = 0; c < 4; c++) {
        putF4(frame.inv_view_proj[c]);
    }
    putF4(frame.look); putF4(frame.rules0); putF4(frame.rules1); putF4(frame.rock);
    putF4(frame.grass); putF4(frame.scree); putF4(frame.sand); putF4(frame.snow);
    putI2(tile.origin); putU(tile.scale); putU(tile.flags);
}
