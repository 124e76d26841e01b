#version 460
// Pointwise brushes over r32f pages with each instance's weight multiplied by a weight field's
// page (set 2): the procedural mask brush. The kernel is include/pointwise_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define WEIGHTED
#include "pointwise_body.glsl"
