#version 450
// GPU-tuning fused SDPA backward, the dK, dV kernel (workgroups own keys);
// lanes reduced through shared memory: works on every device.
// Live fp32 values per invocation: 8 (NK + NV) + 40, NK and NV the lane's vec4s of dk and dv:
// <= 128 (104 at NK = NV = 4), <= 64 under mali/adreno (56 at NK = NV = 1)
// (src/ops/flash_backward_gpu_tiles.c counts them; the body's header says what).
// The kernel is shaders/common/flash_backward_kv_gpu_body.glsl; the host
// src/ops/flash_backward.c.
#extension GL_GOOGLE_include_directive : require

#define FB_SUBGROUP 0
#define FB_KV 1
#include "flash_backward_kv_gpu_body.glsl"
