#version 460
// Layer blend, scratch to scratch; the kernel is include/blend_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "blend_body.glsl"
