#version 450
// add.comp (y = a + b) with a, b and y each f16 or f32, for devices with
// 16-bit storage: common/binary_f16_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKA_BINARY(a, b) ((a) + (b))
#include "binary_f16_body.glsl"
