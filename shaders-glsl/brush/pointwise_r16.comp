#version 460
// Batched pointwise brushes over r16 pages; the kernel is include/pointwise_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "pointwise_body.glsl"
