#version 460
// Terrain vertices over r16 pages; the body is include/terrain_vert_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "terrain_vert_body.glsl"
