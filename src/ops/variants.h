/* The prepared variants of the GPU kernel families (vkattn_context_advanced.
 * variants, vkattn/advanced.h): fixed tile choices, all set through each
 * kernel's specialization constants, so every variant is compiled from the
 * shaders the build already holds. Variant v (1 .. VKATTN_VARIANTS_<family>)
 * is row v - 1 of the family's table; 0 is the library's own choice and is
 * never asked for here. A variant is taken only where it fits the device's
 * limits and the register budget (ops/register_budget.h) for the call's
 * widths: the same tests as the library's choosers, minus their "small
 * problem" preferences. Pure functions of vkattn_context_info, so
 * tests/unit/test_register_budget.c checks every variant with no GPU. */
#ifndef VKA_OPS_VARIANTS_H
#define VKA_OPS_VARIANTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/flash_backward_gpu_tiles.h"
#include "ops/gpu_tiles.h"
#include "vkattn/advanced.h"

/* How many variants family f has (VKATTN_VARIANTS_<f>); 0 for no family. */
uint32_t vka_variant_count(uint32_t family);

/* The family's name as attnbench and the sweep spell it ("matmul",
 * "matmul_coopmat", "flash", "flash_coopmat", "flash_backward"), or NULL. */
const char *vka_variant_family_name(uint32_t family);

/* Variant v of each family into *out, true where it fits (see above).
 * `shuffle`: the device runs subgroup shuffles in compute. */
bool vka_variant_matmul_gpu(const vkattn_context_info *info, uint32_t v, vka_matmul_tiles *out);
bool vka_variant_matmul_coopmat(const vkattn_context_info *info, uint32_t v, bool emulated,
                                vka_coopmat_tiles *out);
bool vka_variant_flash_tiled(const vkattn_context_info *info, uint32_t v, bool shuffle,
                             uint32_t dk, uint32_t dv, vka_flash_tiled *out);
bool vka_variant_flash_coopmat(const vkattn_context_info *info, uint32_t v, uint32_t dk,
                               uint32_t dv, vka_flash_coopmat_tiles *out);
/* Row v of the flash_coopmat table, unchecked: the fused backward's
 * cooperative-matrix kernels take the forward's variants with their own fit
 * test (vka_select_flash_backward_coopmat). */
bool vka_variant_flash_coopmat_row(uint32_t v, vka_flash_coopmat_tiles *out);
bool vka_variant_flash_backward(const vkattn_context_info *info, uint32_t v, bool shuffle,
                                uint32_t dk, uint32_t dv, vka_fb_gpu_tiles *out);

#endif /* VKA_OPS_VARIANTS_H */
