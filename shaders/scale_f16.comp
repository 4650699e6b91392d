#version 450
// scale.comp (y = x * s[0]) with s, x and y each f16 or f32, for devices
// with 16-bit storage: common/binary_f16_body.glsl.
#extension GL_GOOGLE_include_directive : require
#define VKA_BINARY_A_SCALAR
#define VKA_BINARY(s, x) ((x) * (s))
#include "binary_f16_body.glsl"
