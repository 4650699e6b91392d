/* Which tiles a GPU kernel family runs: the variant forced by
 * vkattn_context_advanced.variants, else the tuning table's row for the
 * device (ops/tuning_table.h), else the library's own chooser (gpu_tiles.c,
 * flash_backward_gpu_tiles.c). Each returns what its chooser returns: true
 * with the tiles, or false where the family is not to serve the call. A
 * forced variant that does not fit is logged at WARN naming the field
 * (attnbench --variant turns that into a refusal) and returns false. */
#ifndef VKA_OPS_VARIANT_SELECT_H
#define VKA_OPS_VARIANT_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/flash_backward_gpu_tiles.h"
#include "ops/gpu_tiles.h"

struct vkattn_context;

bool vka_select_matmul_gpu(const struct vkattn_context *ctx, uint32_t m, uint32_t n,
                           vka_matmul_tiles *out);
bool vka_select_matmul_coopmat(const struct vkattn_context *ctx, uint32_t m, uint32_t n,
                               bool emulated, vka_coopmat_tiles *out);
bool vka_select_flash_tiled(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                            vka_flash_tiled *out);
bool vka_select_flash_coopmat(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                              vka_flash_coopmat_tiles *out);
bool vka_select_flash_backward(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                               vka_fb_gpu_tiles *out);
/* The fused backward's cooperative-matrix tiles (ops/flash_backward_coopmat.h). */
bool vka_select_flash_backward_coopmat(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                                       vka_flash_coopmat_tiles *out);

#endif /* VKA_OPS_VARIANT_SELECT_H */
