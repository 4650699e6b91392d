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

/* Records the three dispatches of a call vka_flash_backward_check accepted
 * (nothing is re-checked here). io's tensors were checked by the caller;
 * stats holds at least 2 * B * H * Tq floats. f16 q, k, v and out are read
 * as they are where the device has 16-bit storage (else io holds their
 * exact f32 copies), f16 grad_out too (only where the cooperative-matrix
 * kernels serve: the caller staged it otherwise). f16_operands: the caller's
 * q, k, v and grad_out are f16, which lets those kernels serve
 * (ops/flash_backward_coopmat.h; vka_fb_coopmat.f16 says which they read). */
vkattn_result vka_flash_backward_record(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vka_sdpa_shape *s,
                                        const vkattn_sdpa_params *p,
                                        const vkattn_sdpa_backward_io *io,
                                        struct vkattn_tensor *stats, bool f16_operands,
                                        const char *caller);

#endif /* VKA_OPS_FLASH_BACKWARD_H */
