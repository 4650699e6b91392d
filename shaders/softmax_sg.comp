#version 450
// Masked softmax of the GPU tuning: shaders/softmax.comp with each row's
// (max, sum) reduced by subgroup shuffles (GL_KHR_shader_subgroup_shuffle).
// A separate module because it declares the shuffle capability, which a
// device without it must never be given. The kernel and its algorithm:
// shaders/common/softmax_body.glsl (SOFTMAX_SUBGROUP 1).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require

#define SOFTMAX_SUBGROUP 1
#include "softmax_bindings.glsl"
#include "softmax_body.glsl"
