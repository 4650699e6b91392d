#version 450
// The fused attention forward on cooperative matrices (GL_NV_cooperative_matrix:
// tensor cores on NVIDIA). The kernel is shaders/common/flash_coopmat_body.glsl;
// flash_coopmat_emu.comp is the same kernel on emulated fragments.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_NV1
#include "flash_coopmat_body.glsl"
