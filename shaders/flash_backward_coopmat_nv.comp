#version 450
// The fused attention backward's gradient kernels (dK, dV and dQ, one module,
// chosen by a spec constant) on cooperative matrices (GL_NV_cooperative_matrix:
// tensor cores on NVIDIA). The kernel is
// shaders/common/flash_backward_coopmat_body.glsl; flash_backward_coopmat_emu.comp
// is the same kernel on emulated fragments, flash_backward_coopmat_khr.comp on
// GL_KHR_cooperative_matrix.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_NV1
#include "flash_backward_coopmat_body.glsl"
