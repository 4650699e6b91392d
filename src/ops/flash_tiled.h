/* The GPU-shaped fused attention kernel (shaders/flash_tiled*.comp): which
 * calls it serves and its tiles, for src/ops/flash.c, which dispatches it
 * like the row-per-invocation kernel (same push constants, bindings and row blocks).
 *
 * Chosen when the context's tuning is the GPU one (vkattn_tuning), the
 * device binds 8 storage buffers, and tiles fit its limits; otherwise
 * flash.c keeps the row-per-invocation kernel (flash_body.glsl), the default on CPU
 * devices. Both compute the same results within the op's bound; only the
 * order of fp32 additions differs. */
#ifndef VKA_OPS_FLASH_TILED_H
#define VKA_OPS_FLASH_TILED_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/gpu_tiles.h"
#include "vk/pipeline.h"

struct vkattn_context;

/* Tiles for widths dk, dv (each <= 256) on this context, or false when the
 * tiled kernel is not to serve it (CPU tuning, fewer than 8 storage buffers,
 * limits too small): then the row-per-invocation kernel does. The choice is
 * vka_flash_tiled_tiles (ops/gpu_tiles.h), within the register budget. */
bool vka_flash_tiled_choose(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                            vka_flash_tiled *t);

/* Query rows per workgroup. */
static inline uint32_t vka_flash_tiled_rows(const vka_flash_tiled *t) { return t->wg / t->lanes; }

/* Upper bound of the loop iterations one invocation runs over tv keys (for
 * lavapipe's limit, see flash.c). */
uint64_t vka_flash_tiled_loop_iterations(const vka_flash_tiled *t, uint32_t dk, uint32_t dv,
                                         uint32_t tv, bool dropout, bool uniform_rows);

/* The kernel's SPIR-V, name and tile constants into *k (the caller sets the
 * bindings, push size and the other spec constants, VKA_FLASH_TILED_SPEC_*). */
void vka_flash_tiled_kernel(const vka_flash_tiled *t, uint32_t dk, uint32_t dv, vka_kernel *k);

#endif /* VKA_OPS_FLASH_TILED_H */
