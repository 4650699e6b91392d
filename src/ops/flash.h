/* The fused (flash-attention) SDPA kernel, for the SDPA op's path choice.
 *
 * One dispatch of shaders/flash.comp computes vkattn_reference_sdpa's output
 * with O(Tq) extra memory: K/V tiles stream through shared memory, the softmax
 * runs online (running max and sum in fp32), masks, bias and the Philox
 * dropout stream are applied inside. It does not return weights.
 *
 * Element types: Q, K, V and out may each be f16 (spec constants); masks,
 * bias and LSE f32. Under the GPU tuning f16 calls take the tiled kernel as
 * f32 calls do (flash_tiled*.comp reads halves as 32-bit words). Otherwise
 * flash_f16.comp (float16_t) serves f16 calls on devices with 16-bit storage
 * and 8 bindings; flash.comp and flash_packed.comp read halves as 32-bit
 * words. An f16 out with an odd dv (rows that would share a word between
 * invocations) written as words goes through f32 scratch and
 * ops/half_convert.h.
 *
 * Portability: flash.comp binds 8 storage buffers; where the device allows
 * fewer (maxPerStageDescriptorStorageBuffers, 4 at the Vulkan minimum),
 * shaders/flash_packed.comp (the same kernel body) binds 4: Q, bias and
 * masks are first copied into the context's pack buffer, and with an LSE the
 * kernel writes out and LSE into scratch that is then copied to the caller's
 * tensors. A call whose multiply-adds (B H Tq Tv (dk + dv)) exceed the
 * context's max_dispatch_work, or whose grid exceeds the device's workgroup
 * counts, is recorded as several dispatches over row blocks, bit-identical to
 * one. The kernel relies on no inf or NaN arithmetic.
 *
 * Under the GPU tuning (vkattn/advanced.h) on a device with 8 storage buffers
 * the same call runs the GPU-shaped kernel shaders/flash_tiled*.comp instead
 * (ops/flash_tiled.h: query rows split over 4-16 lanes, subgroup or
 * shared-memory lane sums), with the same results within the same bound.
 *
 * The caller plans: vka_flash_check (or vka_flash_supports) and
 * vka_flash_choose at plan time, every tensor checked, then
 * vka_flash_choose_coopmat (ops/sdpa.c); vka_flash_record_lse only records
 * what that plan chose and re-checks or re-chooses nothing.
 *
 * Limits (vka_flash_supports says which one refused a call): dk and dv up to
 * 256; no returned weights; every tensor within 32-bit indexing; on lavapipe,
 * a key range short enough for its 65535-loop-iteration limit per shader
 * invocation (about 100k keys at dk = dv <= 64, 64k at 256, fewer under the
 * uniform masked-row policy; see flash.c; under the GPU tuning about 22k keys
 * at d = 4 and 12k at d = 128, fewer with dropout, see flash_tiled.c).
 * Pipelines are specialized per (dk, dv, mask kinds, dropout, policy, tiles);
 * on lavapipe a new one takes about 1 s to compile at d = 16, 4 s at 64, 10 s
 * at 128 and 20 s at 256 (then Mesa's shader cache keeps it).
 *
 * Differences from the chained path that callers may need to document:
 * - keys a row cannot see (masked, or causal tiles skipped) are not read, so a
 *   NaN or inf in a masked V row does not reach the output (the chained
 *   W @ V gives NaN there, as 0 * inf does);
 * - logits are formed in fp32 (score * scale + bias), so a bias or score
 *   near FLT_MAX can overflow where the double reference does not.
 */
#ifndef VKA_OPS_FLASH_H
#define VKA_OPS_FLASH_H

#include <stdbool.h>

#include "ops/flash_coopmat.h"
#include "ops/gpu_tiles.h"
#include "shape/sdpa_plan.h"
#include "vkattn/sdpa.h"

struct vkattn_context;
struct vkattn_tensor;

/* Widest dk and dv the kernel serves (its register arrays are sized by them). */
#define VKA_FLASH_MAX_WIDTH 256u

/* True when the fused kernel can serve *p, planned as *s (ops/sdpa_shape.h),
 * on this device. Otherwise false, with *why (if why is non-NULL) set to a
 * static sentence fragment naming the reason, e.g. "dk is above 256". */
bool vka_flash_supports(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                        const vkattn_sdpa_params *p, const char **why);

/* As vka_flash_supports, with the code a forced call fails with:
 * VKATTN_ERROR_UNSUPPORTED for what the kernel never serves (widths, returned
 * weights, 32-bit indexing), VKATTN_ERROR_DEVICE_LIMIT for what this device's
 * limits rule out (shared memory, invocations, lavapipe's loop budget). */
vkattn_result vka_flash_check(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const char **why);

/* The kernel and tiles the plan chose for a call, carried to the record
 * (ops/sdpa.c keeps it beside the plan), which only reads it. */
typedef struct vka_flash_choice {
    uint32_t wg;  /* invocations per workgroup */
    uint32_t rpi; /* rows (query head, query index) per invocation */
    uint32_t bc;  /* keys per shared-memory tile */
    bool tiled;   /* the GPU-shaped kernel, with these tiles (wg, rpi, bc unused) */
    vka_flash_tiled gpu;
    bool coopmat; /* in place of the tiled kernel, the cooperative-matrix one */
    vka_flash_coopmat cm;
} vka_flash_choice;

/* The kernel and tiles for a call vka_flash_check accepted, chosen as that
 * check chose them, at plan time (nothing recorded or allocated); coopmat
 * false until vka_flash_choose_coopmat. */
void vka_flash_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                      const vkattn_sdpa_params *p, vka_flash_choice *c);

/* Once the tensors are checked: whether the cooperative-matrix kernel takes
 * the tiled kernel's place (it depends on q, k and v's dtypes and offsets,
 * ops/flash_coopmat.h). Call it once per recorded call. */
void vka_flash_choose_coopmat(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                              vka_flash_choice *c);

/* Records the fused SDPA into cmd, for a call vka_flash_check accepted with
 * the kernel and tiles of *choice (vka_flash_choose, then
 * vka_flash_choose_coopmat with these tensors) and
 * its tensors checked: io->q, k, v, out and the operands p->mask asks for;
 * io->weights and io->workspace are ignored. `caller` names the
 * public function in error messages. With lse non-NULL it also writes the
 * per-row log-sum-exp of the logits to lse (B, H, Tq):
 *   lse[b,h,i] = log(sum_j allowed exp(score * scale + bias))
 * in natural-log units, before dropout; -inf for a row with no allowed key
 * (whatever the masked-row policy; written as the bit pattern of -inf, never
 * computed). */
vkattn_result vka_flash_record_lse(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vka_sdpa_shape *s, const vkattn_sdpa_params *p,
                                   const vka_flash_choice *choice, const vkattn_sdpa_io *io,
                                   struct vkattn_tensor *lse, const char *caller);

#endif /* VKA_OPS_FLASH_H */
