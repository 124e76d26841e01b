#version 460
// Batched pointwise brushes over r32f pages; the kernel is include/pointwise_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "pointwise_body.glsl"
