// The back end of a cooperative-matrix kernel and its extensions. The .comp
// wrapper defines COOPMAT_FAMILY as one of
//   COOPMAT_EMU  fragments emulated in plain GLSL (any device, lavapipe in CI)
//   COOPMAT_NV1  GL_NV_cooperative_matrix
//   COOPMAT_KHR  GL_KHR_cooperative_matrix
//   COOPMAT_NV2  GL_NV_cooperative_matrix2 (on KHR's types; its own kernels)
// and the kernel tests COOPMAT_HW (real cooperative matrices, any flavour).
// The hardware families need subgroup scopes and f16 types besides (scopes
// bring GL_KHR_memory_scope_semantics: glslang then emits the Vulkan memory
// model). Include before any declaration (extensions come first).
#ifndef VKA_COOPMAT_EXT_GLSL
#define VKA_COOPMAT_EXT_GLSL

#ifndef COOPMAT_FAMILY
#error "define COOPMAT_FAMILY before including coopmat_ext.glsl"
#endif
#define COOPMAT_EMU 0
#define COOPMAT_NV1 1
#define COOPMAT_KHR 2
#define COOPMAT_NV2 3
#define COOPMAT_HW (COOPMAT_FAMILY != COOPMAT_EMU)

#if COOPMAT_FAMILY == COOPMAT_NV1
#extension GL_NV_cooperative_matrix : require
#elif COOPMAT_FAMILY == COOPMAT_KHR
#extension GL_KHR_cooperative_matrix : require
#elif COOPMAT_FAMILY == COOPMAT_NV2
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#elif COOPMAT_FAMILY != COOPMAT_EMU
#error "COOPMAT_FAMILY must be COOPMAT_EMU, COOPMAT_NV1, COOPMAT_KHR or COOPMAT_NV2"
#endif
#if COOPMAT_HW
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

#endif
