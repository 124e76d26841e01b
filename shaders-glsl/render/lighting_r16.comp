#version 460
// The lighting field over r16 pages; the kernel is include/lighting_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "lighting_body.glsl"
