#version 450
// Masked softmax backward in 4 bindings: weights, dL/dW, the side inputs
// (bias, value mask, mask) packed behind one binding (src/vk/pack.h), out.
// The kernel: shaders/common/softmax_backward_body.glsl.
#extension GL_GOOGLE_include_directive : require

layout(std430, binding = 0) readonly buffer WBuf { float w_in[]; };
layout(std430, binding = 1) readonly buffer DWBuf { float dw_in[]; }; // unused IN_PLACE
layout(std430, binding = 2) readonly buffer SideBuf { float side[]; };
layout(std430, binding = 3) buffer OutBuf { float outv[]; };

#define VKA_W(i) w_in[i]
#define VKA_DW(i) dw_in[i]
#define VKA_BIAS(i) side[i]
#define VKA_VMASK(i) side[i]
#define VKA_MASK(i) side[i]
#define VKA_OUT outv
#include "softmax_backward_body.glsl"
