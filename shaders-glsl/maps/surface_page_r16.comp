#version 460
// One page of a surface map from r16 height pages; the kernel is include/surface_page_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "surface_page_body.glsl"
