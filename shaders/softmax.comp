#version 450
// Masked softmax, one storage buffer per operand (5 bindings). The kernel and
// its algorithm: shaders/common/softmax_body.glsl. Devices with fewer than 5
// storage buffers per stage run shaders/softmax_packed.comp instead. f16
// scores and bias are read as halves packed two per word (SCORES_F16,
// BIAS_F16; needs no 16-bit storage); the output is f32.
#extension GL_GOOGLE_include_directive : require

#include "softmax_bindings.glsl"
#include "softmax_body.glsl"
