/* The fused (flash-attention-2) SDPA backward, for vkattn_sdpa_backward's
 * path choice. Three dispatches, O(Tq) extra memory:
 *   shaders/flash_backward_stats.comp  per query row: the forward's LSE in
 *       base 2 (or a dead-row mark) and D = rowsum(dO * out), into `stats`
 *       (2 floats per row);
 *   shaders/flash_backward_kv.comp     workgroups own 4 * WG keys of one K/V
 *       head and loop over every query row of its group: dK, dV;
 *   shaders/flash_backward_q.comp      workgroups own query rows and loop over
 *       the keys: dQ.
 * Those are the CPU tuning's kernels. Under the GPU tuning the same three
 * passes run shaders/flash_backward_{stats,kv,q}_gpu{,_sg}.comp, which split
 * each key's or row's head widths over lanes to keep within the register
 * budget (tiles: ops/flash_backward_gpu_tiles.h).
 * Both gradient kernels recompute P = exp2(logit - lse) with the forward's
 * masks and regenerate the forward's Philox keep bits per (row, 4 keys), so
 * nothing depends on the tiling; no float atomics. Kernel body:
 * shaders/common/flash_backward_body.glsl. */
#ifndef VKA_OPS_FLASH_BACKWARD_H
#define VKA_OPS_FLASH_BACKWARD_H

#include <stdbool.h>

#include "ops/flash_backward_coopmat.h"
#include "ops/flash_backward_gpu_tiles.h"
#include "shape/sdpa_plan.h"
#include "vkattn/sdpa_backward.h"

struct vkattn_context;
struct vkattn_tensor;

/* VKATTN_SUCCESS when the fused backward can serve *p, planned as *s
 * (ops/sdpa_shape.h), on this device; else
 * VKATTN_ERROR_UNSUPPORTED (widths, 32-bit indexing, too few storage buffers
 * per shader) or VKATTN_ERROR_DEVICE_LIMIT (shared memory, invocations,
 * lavapipe's loop budget) with *why a static sentence fragment. Assumes *p
 * passed the op's argument checks. */
vkattn_result vka_flash_backward_check(const struct vkattn_context *ctx,
                                       const vka_sdpa_shape *s, const vkattn_sdpa_params *p,
                                       const char **why);

/* The CPU tuning's tiles: invocations (4 keys each) and query rows per tile
 * of the dK, dV kernel; invocations, rows per invocation and keys per tile
 * of the dQ kernel. */
typedef struct vka_fb_cpu_tiles {
    uint32_t kv_wg, kv_tile;
    uint32_t q_wg, q_rpi, q_tile;
} vka_fb_cpu_tiles;

/* The kernels and tiles the plan chose for a call, carried to the record
 * (ops/sdpa_backward.c keeps it beside the plan), which only reads it. */
typedef struct vka_flash_backward_choice {
    bool gpu;             /* the GPU tuning's kernels with gpu_tiles, else cpu_tiles */
    vka_fb_cpu_tiles cpu_tiles;
    vka_fb_gpu_tiles gpu_tiles;
    bool coopmat;         /* the gradient kernels on cooperative matrices, as cm says */
    vka_fb_coopmat cm;
} vka_flash_backward_choice;

/* The kernels and tiles for a call vka_flash_backward_check accepted, chosen
 * as that check chose them, at plan time; coopmat false until
 * vka_flash_backward_choose_coopmat. */
void vka_flash_backward_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                               const vkattn_sdpa_params *p, vka_flash_backward_choice *c);

/* Once the tensors are checked: whether the cooperative-matrix gradient
 * kernels serve the call (they take all-f16 q, k, v and grad_out and no bf16
 * tensor, ops/flash_backward_coopmat.h). Call it once per recorded call. */
void vka_flash_backward_choose_coopmat(const struct vkattn_context *ctx,
                                       const vka_sdpa_shape *s, const vkattn_sdpa_params *p,
                                       const vkattn_sdpa_backward_io *io,
                                       vka_flash_backward_choice *c);

/* Records the three dispatches of a call vka_flash_backward_check accepted,
 * with the kernels and tiles of *choice (vka_flash_backward_choose, then
 * vka_flash_backward_choose_coopmat with the caller's tensors); nothing is
 * re-checked or re-chosen here. io's tensors were checked by the caller;
 * stats holds at least 2 * B * H * Tq floats. f16 q, k, v and out are read
 * as they are where the device has 16-bit storage (else, and for any bf16
 * tensor in the call, io holds their exact f32 copies), f16 grad_out too
 * (only where the cooperative-matrix kernels serve reading f16,
 * choice->cm.f16: the caller staged it otherwise). */
vkattn_result vka_flash_backward_record(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vka_sdpa_shape *s,
                                        const vkattn_sdpa_params *p,
                                        const vka_flash_backward_choice *choice,
                                        const vkattn_sdpa_backward_io *io,
                                        struct vkattn_tensor *stats, const char *caller);

#endif /* VKA_OPS_FLASH_BACKWARD_H */
