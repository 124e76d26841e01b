#version 460
// One page of a surface map from r32f height pages; the kernel is include/surface_page_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "surface_page_body.glsl"
