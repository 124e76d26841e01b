#version 460
// Layer blend, source page to scratch; the kernel is include/blend_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define FROM_SOURCE
#include "blend_body.glsl"
