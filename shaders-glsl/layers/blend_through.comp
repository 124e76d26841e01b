#version 460
// Layer blend, source page to destination page; the kernel is include/blend_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define FROM_SOURCE
#define TO_TARGET
#include "blend_body.glsl"
