#version 460
// Batched pointwise brushes over r32f pages, BRUSH_STAMP_ROWS texels an invocation (stamps of radius 256 and
// more, src/brush/gpu.rs); the kernel is include/pointwise_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define ROWS BRUSH_STAMP_ROWS
#include "pointwise_body.glsl"
