#version 450
// shaders/flash_backward_coopmat_nv.comp's kernel on GL_KHR_cooperative_matrix
// (the cross-vendor flavour of the same fragments): the same body, bindings,
// push constants, spec constants and shared memory. Built only where glslc
// knows the extension (cmake/ShaderFamilies.cmake: Debian 12's does not, and
// the module is then embedded empty and never chosen).
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_KHR
#include "flash_backward_coopmat_body.glsl"
