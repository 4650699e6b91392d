/* The SPIR-V of each cooperative-matrix family's kernels: one body per
 * kernel, compiled per family with the same bindings, push constants and
 * specialization constants (shaders/common/coopmat_frag.glsl), so an op
 * chooses a family by its module alone. A family this build's glslc could
 * not compile has size 0 (cmake/ShaderFamilies.cmake). */
#ifndef VKA_OPS_COOPMAT_KERNELS_H
#define VKA_OPS_COOPMAT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "vk/coopmat.h"
#include "vk/pipeline.h"

/* Name, code and size of `kernel`'s module for `family` (one
 * VKATTN_COOPMAT_* bit) into *k. */
void vka_coopmat_module(uint32_t family, vka_coopmat_kernel kernel, vka_kernel *k);

#endif /* VKA_OPS_COOPMAT_KERNELS_H */
