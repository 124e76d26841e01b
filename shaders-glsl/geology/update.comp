#version 460
// update.glsl with receivers int.
#extension GL_GOOGLE_include_directive : require
#include "update.glsl"
