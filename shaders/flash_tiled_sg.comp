#version 450
// GPU-shaped fused attention, lanes of a query row reduced with subgroup
// shuffles (GL_KHR_shader_subgroup_shuffle): a separate module because it
// declares the shuffle capability, which a device without it must never be
// given. The kernel is shaders/common/flash_tiled_body.glsl.
#extension GL_GOOGLE_include_directive : require

#define FLASH_SUBGROUP 1
#include "flash_tiled_body.glsl"
