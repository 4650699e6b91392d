#version 450
// shaders/flash_coopmat_nv.comp's kernel on GL_KHR_cooperative_matrix (the
// cross-vendor flavour of the same tensor-core fragments): the same body
// (shaders/common/flash_coopmat_body.glsl), bindings, push constants,
// specialization constants, workgroup and shared memory, so the host picks
// one or the other by its module alone. Needs VK_KHR_cooperative_matrix with
// a 16x16x16 f16 x f16 -> f32 subgroup-scope shape and subgroups of 32, and
// a glslc that knows the extension (built only where it does).
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_KHR
#include "flash_coopmat_body.glsl"
