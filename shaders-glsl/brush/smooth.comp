#version 460
// Smooth and contrast brushes over r32f pages, one instance a pass; the kernel is
// include/smooth_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "smooth_body.glsl"
