#version 450
// gate.comp (y = x * sigmoid(g)) with x, g and y each f16 or f32, for
// devices with 16-bit storage: common/binary_f16_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "gate_fn.glsl"
#define VKA_BINARY(x, g) ((x) * vka_sigmoid(g))
#include "binary_f16_body.glsl"
