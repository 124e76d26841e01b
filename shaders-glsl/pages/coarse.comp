#version 460
// Coarse level of r32f pages; the kernel is include/coarse_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "coarse_body.glsl"
