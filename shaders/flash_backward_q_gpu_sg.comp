#version 450
// GPU-tuning fused SDPA backward, the dQ kernel (workgroups own query rows);
// lanes reduced with subgroup shuffles
// (GL_KHR_shader_subgroup_shuffle): a separate module because it declares the
// shuffle capability, which a device without it must never be given.
// Live fp32 values per invocation: 8 NK + 4 NV + 34, NK and NV the lane's vec4s of dk and dv:
// <= 128 (82 at NK = NV = 4), <= 64 under mali/adreno (58 at NK = NV = 2)
// (src/ops/flash_backward_gpu_tiles.c counts them; the body's header says what).
// The kernel is shaders/common/flash_backward_q_gpu_body.glsl; the host
// src/ops/flash_backward.c.
#extension GL_GOOGLE_include_directive : require

#define FB_SUBGROUP 1
#define FB_KV 0
#include "flash_backward_q_gpu_body.glsl"
