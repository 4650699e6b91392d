#version 450
// Fused SDPA backward: the dK, dV kernel (workgroups own keys).
// The kernel is shaders/common/flash_backward_body.glsl; the host
// src/ops/flash_backward.c.
#extension GL_GOOGLE_include_directive : require

#define FB_KV 1
#include "flash_backward_body.glsl"
