#version 450
// shaders/matmul_coopmat_nv.comp's kernel with its 16x16 fragments emulated in
// plain GLSL (shaders/common/coopmat_frag.glsl): runs on any device, so CI
// tests the kernel's tiling, edge padding, double buffering and output rules
// on lavapipe. Chosen only under vkattn_context_advanced.coopmat_emulate; slow.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_EMU
#include "matmul_coopmat_body.glsl"
