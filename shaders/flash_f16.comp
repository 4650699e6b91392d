#version 450
// Fused scaled dot-product attention with one binding per tensor (as
// shaders/flash.comp) on devices with storageBuffer16BitAccess: f16 Q, K, V
// and out are read and written as float16_t. The kernel is
// shaders/common/flash_body.glsl; src/ops/flash.c picks this entry point when
// a tensor is f16 and the device has 16-bit storage and 8 storage buffers.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require

#define FLASH_PACKED 0
#define FLASH_F16_STORAGE 1
#include "flash_body.glsl"
