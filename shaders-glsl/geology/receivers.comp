#version 460
// receivers.glsl with receivers int.
#extension GL_GOOGLE_include_directive : require
#include "receivers.glsl"
