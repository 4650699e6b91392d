#version 450
// Fused scaled dot-product attention in 4 storage buffers, for devices that
// allow fewer than 8 per shader (the Vulkan 1.1 minimum is 4): binding 0 holds
// Q followed by the bias, value mask and mask (packed by the host, vk/pack.h),
// 1 and 2 are K and V, 3 is out followed by the LSE. The kernel is
// shaders/common/flash_body.glsl, shared with shaders/flash.comp.
#extension GL_GOOGLE_include_directive : require

#define FLASH_PACKED 1
#define FLASH_F16_STORAGE 0
#include "flash_body.glsl"
