#version 460
// Smooth and contrast brushes over r16 pages, up to SMOOTH_MAX_BATCH instances a pass; the kernel is
// include/smooth_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#define SMOOTH_TILED
#include "smooth_body.glsl"
