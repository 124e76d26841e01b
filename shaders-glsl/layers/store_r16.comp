#version 460
// Layer folding, step store, r16 sources and destinations; the kernel is include/fold_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#define HEIGHT_R16
#define STEP FOLD_STORE
#include "fold_body.glsl"
