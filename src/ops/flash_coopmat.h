/* The fused attention kernel on cooperative matrices
 * (shaders/flash_coopmat_<family>.comp: one body,
 * shaders/common/flash_coopmat_body.glsl, per family): which calls it serves
 * and its tiles, for src/ops/flash.c, which dispatches it like the tiled
 * kernel (same push constants, bindings and row blocks).
 *
 * Taken in place of the tiled kernel where the context runs it on a
 * cooperative-matrix family (vk/coopmat.h: its self-test passed, or ON, or
 * the emulation), q, k and v are all f16, dk <= 256, dv <= 128, and tiles
 * fit. It rounds the softmax weights to f16 before P @ V, which adds a term
 * to the f16 bound (docs/SEMANTICS.md, SDPA). */
#ifndef VKA_OPS_FLASH_COOPMAT_H
#define VKA_OPS_FLASH_COOPMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/gpu_tiles.h"
#include "shape/sdpa_plan.h"
#include "vk/pipeline.h"
#include "vkattn/sdpa.h"

struct vkattn_context;

typedef struct vka_flash_coopmat {
    vka_flash_coopmat_tiles tiles;
    uint32_t family; /* the VKATTN_COOPMAT_* family whose module runs */
    bool fault;      /* the emulation's test fault (coopmat_test_fault) */
    bool vec8;     /* Q, K, V rows load as uvec4s of eight halves */
} vka_flash_coopmat;

/* Whether this call takes the kernel on this context, and how (*out). */
bool vka_flash_coopmat_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                              vka_flash_coopmat *out);

/* Query rows per workgroup. */
static inline uint32_t vka_flash_coopmat_rows(const vka_flash_coopmat *t)
{
    return 16 * t->tiles.warps;
}

/* The kernel's SPIR-V, name and tile constants into *k, whose other spec
 * constants flash.c set (VKA_FLASH_COOPMAT_SPEC_*: the shared ones keep the
 * other fused kernels' numbers). */
void vka_flash_coopmat_kernel(const vka_flash_coopmat *t, uint32_t dk, uint32_t dv, vka_kernel *k);

#endif /* VKA_OPS_FLASH_COOPMAT_H */
