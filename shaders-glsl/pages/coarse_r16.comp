#version 460
// Coarse level of r16 pages; the kernel is include/coarse_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "coarse_body.glsl"
