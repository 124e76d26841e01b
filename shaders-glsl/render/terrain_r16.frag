#version 460
// Terrain G-buffer over r16 pages; the body is include/terrain_frag_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "terrain_frag_body.glsl"
