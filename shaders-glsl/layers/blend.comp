#version 460
// Layer folding, step blend, r32f sources and destinations; the kernel is include/fold_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#define STEP FOLD_BLEND
#include "fold_body.glsl"
