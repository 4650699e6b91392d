/* Internal: how the building-block ops (softmax, dropout, heads, additive,
 * scale) take 16-bit tensors (f16; bf16 the same way, rounded to nearest
 * even). Each 16-bit input is converted exactly into an f32
 * scratch tensor (shaders/half_convert.comp), the op's f32 kernel runs on the
 * scratch, and an f16 output is written from f32 results by one rounding
 * (packHalf2x16, the device's f32 -> f16 conversion). All arithmetic stays
 * f32; f16 changes only what is stored. Works on every device: the converter
 * reads and writes halves packed in 32-bit words (one word per invocation, so
 * no two invocations share a word) and binds two buffers. Cost: one extra
 * pass over each f16 tensor. Masks stay f32 (vka_f16_require_f32).
 * Ops with a float16_t kernel (heads, dropout, softmax, the binary
 * elementwise ops and the gate, the fused SDPA backward's q, k, v and out,
 * the gradient reductions: ops/grad_reduce.h)
 * take that instead where the device has 16-bit storage; this path is theirs
 * without it (the packed-half profiles, e.g. mobile-min), and the others'.
 *
 * The staging passes are recorded before the op's own dispatch, which can
 * still fail (scratch growth, pipelines, descriptor sets, the pack), and on
 * error nothing may be recorded: a staged op records through
 * vka_f16_record, which runs it dry first. */
#ifndef VKA_OPS_HALF_STAGE_H
#define VKA_OPS_HALF_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/scratch_kinds.h"
#include "vk/prepare.h"
#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* Both element types, for vka_tensor_check_types. */
#define VKA_DTYPES_F32_F16 (VKA_DTYPE_BIT(VKATTN_DTYPE_F32) | VKA_DTYPE_BIT(VKATTN_DTYPE_F16))

/* How an op's kernels take its operands. F32: no 16-bit operand. NATIVE16:
 * every 16-bit operand is f16 and the device has 16-bit storage, so the
 * kernels' float16_t views read them. PACKED: the others (a bf16 operand, or
 * no 16-bit storage): the op's packed kernel, or the staging below. */
typedef enum vka_path16 { VKA_PATH_F32, VKA_PATH_NATIVE16, VKA_PATH_PACKED } vka_path16;

/* The path for operands ts[0..n) (NULL entries are absent operands). */
vka_path16 vka_path16_of(const vkattn_context *ctx, const vkattn_tensor *const *ts, size_t n);

/* INVALID_ARGUMENT naming `what` and both types when t (if not NULL) is not f32. */
vkattn_result vka_f16_require_f32(vkattn_context *ctx, const vkattn_tensor *t, const char *caller,
                                  const char *what);

/* *f32 = t itself when t is f32 (or NULL); else the calling thread's scratch
 * of `kind` holding t's first `count` elements as f32 (the conversion is
 * recorded into cmd). */
vkattn_result vka_f16_stage_in(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                               vka_scratch_kind kind, vkattn_tensor *t, uint64_t count,
                               vkattn_tensor **f32);

/* *f32 = t itself when t is f32; else scratch of `kind` for the op's f32
 * results. `partial`: the op writes only some of t's first `count` elements,
 * so t's current values are converted into the scratch first and survive. */
vkattn_result vka_f16_stage_out(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                vka_scratch_kind kind, vkattn_tensor *t, uint64_t count,
                                bool partial, vkattn_tensor **f32);

/* After the op: rounds the first `count` f32 results into t when f32 != t. */
vkattn_result vka_f16_stage_finish(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   vkattn_tensor *t, vkattn_tensor *f32, uint64_t count);

/* record(ctx, cmd, op), leaving nothing recorded on failure: when `staged`
 * (the op will convert f16 tensors through scratch) the whole record runs
 * dry first (vka_record_dry_first, vk/prepare.h). */
vkattn_result vka_f16_record(vkattn_context *ctx, VkCommandBuffer cmd, bool staged,
                             vka_record_fn record, const void *op);

#endif /* VKA_OPS_HALF_STAGE_H */
