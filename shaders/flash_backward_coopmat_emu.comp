#version 450
// shaders/flash_backward_coopmat_nv.comp's kernel with its 16x16 fragments
// emulated in plain GLSL (shaders/common/coopmat_frag.glsl): runs on any
// device, so CI tests the kernel's tiling, masks and gradients on lavapipe.
// Chosen only under vkattn_context_advanced.coopmat_emulate; slow.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_EMU
#include "flash_backward_coopmat_body.glsl"
