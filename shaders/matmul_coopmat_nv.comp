#version 450
// Batched matmul on cooperative matrices (GL_NV_cooperative_matrix: tensor
// cores on NVIDIA). The kernel is shaders/common/matmul_coopmat_body.glsl;
// matmul_coopmat_emu.comp is the same kernel on emulated fragments.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_NV1
#include "matmul_coopmat_body.glsl"
