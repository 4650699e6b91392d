#version 450
// The fused attention forward with its two products on
// GL_NV_cooperative_matrix2 workgroup-scope matrices, K and V read through
// clamped tensor layouts (shaders/common/flash_coopmat2_steps.glsl), the rest
// shaders/common/flash_coopmat_body.glsl as flash_coopmat_nv.comp runs it:
// the same bindings, push constants, specialization constants, workgroup,
// dispatch grid and results, so the host picks one or the other by module.
// Its warps are 32 consecutive invocations and its warp_sync a workgroup
// barrier (coopmat_frag.glsl), so it needs no particular subgroup size.
// Shared memory: the body's, less the K and V tiles where VEC8 holds, plus
// what the implementation reserves for workgroup scope
// (cooperativeMatrixWorkgroupScopeReservedSharedMemory).
// Needs VK_NV_cooperative_matrix2 (cooperativeMatrixWorkgroupScope,
// cooperativeMatrixFlexibleDimensions, cooperativeMatrixTensorAddressing)
// with a workgroup-scope f16 x f16 -> f32 shape whose M granularity divides
// 16 * warps and N and K granularities divide 16 and BC, at
// workgroupInvocations = the workgroup; SPIR-V 1.6 (glslc
// --target-env=vulkan1.3; LocalSizeId, so maintenance4).
// UNVERIFIED: compiled and validated only; no device here has the extension.
// The host runs it only after an on-device known-answer test.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_NV2
#include "flash_coopmat_body.glsl"
