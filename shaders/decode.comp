#version 450
// Decode attention against a KV cache, split kernel: one binding per tensor
// (6 storage buffers: Q, K, V, partials, lengths, value mask). The kernel
// is shaders/common/decode_body.glsl; src/ops/decode.c picks the layout.
#extension GL_GOOGLE_include_directive : require

#define DECODE_PACKED 0
#include "decode_body.glsl"
