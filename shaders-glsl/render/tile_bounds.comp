#version 460
// Tile bounds over r32f pages; the kernel is include/tile_bounds_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "tile_bounds_body.glsl"
