#version 450
// Decode attention against a KV cache, split kernel: 4 bindings (Q with the
// lengths and the value mask packed behind it, K, V, partials). The kernel
// is shaders/common/decode_body.glsl; src/ops/decode.c picks the layout.
#extension GL_GOOGLE_include_directive : require

#define DECODE_PACKED 1
#include "decode_body.glsl"
