#version 460
// Terrain G-buffer over r32f pages; the body is include/terrain_frag_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "terrain_frag_body.glsl"
