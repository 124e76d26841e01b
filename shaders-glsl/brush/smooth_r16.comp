#version 460
// Smooth and contrast brushes over r16 pages, one instance a pass; the kernel is
// include/smooth_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "smooth_body.glsl"
