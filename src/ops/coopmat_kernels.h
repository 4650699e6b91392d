/* The SPIR-V of each cooperative-matrix family's kernels: one body per
 * kernel, compiled per family with the same bindings, push constants and
 * specialization constants (shaders/common/coopmat_frag.glsl), so an op
 * chooses a family by its module alone. A family this build's glslc could
 * not compile has size 0 (cmake/ShaderFamilies.cmake). */
#ifndef VKA_OPS_COOPMAT_KERNELS_H
#define VKA_OPS_COOPMAT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vk/coopmat.h"
#include "vk/pipeline.h"

/* Name, code and size of `kernel`'s module for `family` (one
 * VKATTN_COOPMAT_* bit) into *k. */
void vka_coopmat_module(uint32_t family, vka_coopmat_kernel kernel, vka_kernel *k);
/* The same for the fused backward's module (its dK/dV and dQ kernels), the
 * one reading f16 operands as they are (f16) or their f32 copies; size 0
 * for NV2, which has none. */
void vka_coopmat_backward_module(uint32_t family, bool f16, vka_kernel *k);

#endif /* VKA_OPS_COOPMAT_KERNELS_H */
