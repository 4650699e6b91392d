/* The fused SDPA backward's gradient kernels on cooperative matrices
 * (shaders/flash_backward_coopmat_<family>.comp: one body,
 * shaders/common/flash_backward_coopmat_body.glsl, per family; one module
 * holds both the dK, dV and the dQ kernel, told apart by a spec constant).
 * src/ops/flash_backward.c runs them in place of its own kv and q kernels,
 * after the same stats pass, with the same push constants and bindings.
 *
 * Taken where the context runs a cooperative-matrix family for the backward
 * (vka_coopmat_family_now(.., VKA_COOPMAT_BACKWARD): the first of KHR, NV
 * and the emulation whose backward check of the self-test passed, apart
 * from the forward's; or under ON the first such candidate untested), q, k,
 * v and grad_out are all f16 (read as they are where the device has 16-bit
 * storage, see vka_fb_coopmat.f16; else from f32 copies, exact), no
 * soft-capping, the GPU tuning, tiles fit, and on the emulation within
 * lavapipe's loop budget. Rounds P and dS to f16 before their products, as
 * FlashAttention does (docs/SEMANTICS.md bounds it). Tiles: the forward's
 * (vka_flash_coopmat_tiles: warps of 16 keys or rows, bc rows or keys per
 * tile); a forced VKATTN_VARIANT_FLASH_COOPMAT variant forces them here too
 * (ops/variant_select.h). */
#ifndef VKA_OPS_FLASH_BACKWARD_COOPMAT_H
#define VKA_OPS_FLASH_BACKWARD_COOPMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/gpu_tiles.h"
#include "shape/sdpa_plan.h"
#include "vk/pipeline.h"
#include "vkattn/sdpa.h"

struct vkattn_context;

typedef struct vka_fb_coopmat {
    vka_flash_coopmat_tiles tiles;
    uint32_t family; /* the VKATTN_COOPMAT_* family whose module runs */
    bool f16;        /* 16-bit storage: q, k, v and grad_out bound as the
                        caller's f16 tensors, not staged (its _f16_ module) */
    bool fault;      /* the emulation's test fault (coopmat_test_fault) */
} vka_fb_coopmat;

/* Bytes of shared memory the kernels declare with these tiles (the dK, dV
 * kernel's, the larger), and whether they fit the device (invocations,
 * shared memory, widths up to 256, the register budget). */
uint32_t vka_flash_backward_coopmat_shared_bytes(const vka_flash_coopmat_tiles *t, uint32_t dk,
                                                 uint32_t dv);
bool vka_flash_backward_coopmat_fits(const vkattn_context_info *info,
                                     const vka_flash_coopmat_tiles *t, uint32_t dk, uint32_t dv);

/* The library's tiles: the first of 4 x 32, 4 x 16, 2 x 32, 2 x 16, 1 x 32,
 * 1 x 16 (warps x tile) that fits; false under the CPU tuning or if none. */
bool vka_flash_backward_coopmat_choose_tiles(const vkattn_context_info *info, uint32_t dk,
                                             uint32_t dv, vka_flash_coopmat_tiles *out);

/* Whether this call takes the kernels (see above), and how (*out).
 * f16_operands: the caller's q, k, v and grad_out are all f16. */
bool vka_flash_backward_coopmat_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                                       const vkattn_sdpa_params *p, bool f16_operands,
                                       vka_fb_coopmat *out);

/* Keys per dK, dV workgroup and query rows per dQ workgroup. */
static inline uint32_t vka_flash_backward_coopmat_rows(const vka_fb_coopmat *t)
{
    return 16 * t->tiles.warps;
}

/* Turns *kv and *q (flash_backward.c's kernels, their shared spec constants
 * VKA_FB_SPEC_DK .. UNIFORM_ROWS set) into this family's: module, name,
 * workgroup, tile, kernel flag and fault; 10 bindings each. */
void vka_flash_backward_coopmat_kernels(const vka_fb_coopmat *t, vka_kernel *kv, vka_kernel *q);

#endif /* VKA_OPS_FLASH_BACKWARD_COOPMAT_H */
