#version 450
// GPU-shaped fused attention, lanes of a query row reduced through shared
// memory: works on every device. The kernel is
// shaders/common/flash_tiled_body.glsl; shaders/flash_tiled_sg.comp is its
// subgroup-shuffle twin. src/ops/flash_tiled.c picks between them.
#extension GL_GOOGLE_include_directive : require

#define FLASH_SUBGROUP 0
#include "flash_tiled_body.glsl"
