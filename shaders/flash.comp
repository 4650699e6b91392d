#version 450
// Fused scaled dot-product attention, one binding per tensor (8 storage
// buffers: Q, K, V, bias, value mask, mask, out, lse). The kernel is
// shaders/common/flash_body.glsl; shaders/flash_packed.comp is its 4-binding
// layout, shaders/flash_f16.comp the same with float16_t views (here f16
// tensors are read as words of two halves). The host (src/ops/flash.c) picks
// this one when the device allows 8 storage buffers per shader.
#extension GL_GOOGLE_include_directive : require

#define FLASH_PACKED 0
#define FLASH_F16_STORAGE 0
#include "flash_body.glsl"
