#version 460
// Layer blend, scratch to destination page; the kernel is include/blend_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define TO_TARGET
#include "blend_body.glsl"
