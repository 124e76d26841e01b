#version 460
// The heights a lighting job reads, from r16 pages; the kernel is include/light_gather_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "light_gather_body.glsl"
