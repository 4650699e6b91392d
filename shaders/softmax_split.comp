#version 450
// Masked softmax of the GPU tuning for very long rows: shaders/softmax.comp
// with each row split into chunks, one workgroup each, in two dispatches
// (statistics, then merge and write) through the chunks' (max, sum) in
// binding 5. 6 bindings. The kernel and its algorithm:
// shaders/common/softmax_body.glsl (SOFTMAX_SPLIT 1).
#extension GL_GOOGLE_include_directive : require

#define SOFTMAX_SPLIT 1
#include "softmax_bindings.glsl"
// (max, sum) of each chunk of each row; phase 1 reads what phase 0 wrote
layout(std430, binding = 5) buffer PartBuf { vec2 part[]; };
#include "softmax_body.glsl"
