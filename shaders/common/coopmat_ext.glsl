// The extensions of a kernel written on coopmat_frag.glsl's fragments: with
// COOPMAT_NV 1 the NV cooperative matrices and what they need (subgroup
// scopes, f16 types); the emulation needs none. Include before any
// declaration (extensions come first).
#if COOPMAT_NV
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
