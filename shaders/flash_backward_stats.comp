#version 450
// Fused SDPA backward, pass 1 of 3 (CPU tuning): common/flash_backward_stats_body.glsl.
#extension GL_GOOGLE_include_directive : require
#include "flash_backward_stats_body.glsl"
