#version 460
// The lighting field over r32f pages; the kernel is include/lighting_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "lighting_body.glsl"
