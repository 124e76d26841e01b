#version 460
// The heights a lighting job reads, from r32f pages; the kernel is include/light_gather_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "light_gather_body.glsl"
