#version 460
// update.glsl with receivers a byte each (storageBuffer8BitAccess).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#define GEOLOGY_RECEIVER_BYTES
#include "update.glsl"
