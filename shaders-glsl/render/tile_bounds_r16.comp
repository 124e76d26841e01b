#version 460
// Tile bounds over r16 pages; the kernel is include/tile_bounds_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define HEIGHT_R16
#include "tile_bounds_body.glsl"
