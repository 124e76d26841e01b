#version 460
// Terrain vertices over r32f pages; the body is include/terrain_vert_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "terrain_vert_body.glsl"
