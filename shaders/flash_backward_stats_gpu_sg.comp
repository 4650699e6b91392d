#version 450
// GPU-tuning fused SDPA backward, pass 1, the row statistics;
// lanes reduced with subgroup shuffles
// (GL_KHR_shader_subgroup_shuffle): a separate module because it declares the
// shuffle capability, which a device without it must never be given.
// Live fp32 values per invocation: 23 at any width (<= 64)
// (src/ops/flash_backward_gpu_tiles.c counts them; the body's header says what).
// The kernel is shaders/common/flash_backward_stats_gpu_body.glsl; the host
// src/ops/flash_backward.c.
#extension GL_GOOGLE_include_directive : require

#define FB_SUBGROUP 1
#include "flash_backward_stats_gpu_body.glsl"
