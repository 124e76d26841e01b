#version 460
// Layer folding, step store, r32f sources and destinations; the kernel is include/fold_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#define STEP FOLD_STORE
#include "fold_body.glsl"
