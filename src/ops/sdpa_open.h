/* The steps SDPA's open-model options add around its kernels (ops/sdpa_open.c):
 * logit soft-capping of the chained path's scores, and the attention sinks
 * applied to the fused path's output and LSE. */
#ifndef VKA_OPS_SDPA_OPEN_H
#define VKA_OPS_SDPA_OPEN_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/sdpa.h"
#include "vkattn/tensor.h"
#include "shape/sdpa_plan.h"

/* scores[i] = softcap * tanh(scores[i] / softcap) in place, i < n (f32,
 * softcap > 0: shaders/softcap.comp). */
vkattn_result vka_softcap_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 uint64_t n, float softcap, vkattn_tensor *scores);

/* The sinks (H) f32 joined to each row of a fused forward's out (f32 or f16,
 * (B, H, Tq, width)) and, where update_lse, its lse (f32, (B, H, Tq)), in
 * place (shaders/sink_rows.comp; an f16 out through f32 scratch, so rounded
 * twice). The chained path passes its weights (width Tv) and an lse it keeps. */
vkattn_result vka_sink_rows_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vka_sdpa_shape *s, uint32_t width, vkattn_tensor *sinks,
                                   vkattn_tensor *out, vkattn_tensor *lse, bool update_lse);

/* grad_sinks (H) f32 written from the fused backward's row statistics
 * `stats` ((lse * log2(e), rowsum(dO * out)) per row, flash_backward.h) and
 * the sinks (shaders/sink_grad.comp). */
vkattn_result vka_sink_grad_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vka_sdpa_shape *s, vkattn_tensor *sinks,
                                   vkattn_tensor *stats, vkattn_tensor *grad_sinks);

/* The chained path's sinks (forward, and the backward's recomputed weights):
 * each row of its f32 softmax weights (taken with the zero policy) is scaled
 * by 1 / (1 + exp(sink_h - lse)) (vka_sink_rows_record, update_lse false),
 * the row's log-sum-exp from a run of the fused kernel on io (output to
 * scratch, dropout off) that vka_chained_sinks_lse records into *lse
 * (scratch). Record it before the chained path writes its workspace: the
 * fused kernel may use the library's workspace for its own scratch (packed
 * layout). The check says whether that run can serve the call (UNSUPPORTED
 * naming has_sinks and why not). */
vkattn_result vka_chained_sinks_check(vkattn_context *ctx, const char *caller,
                                      const vkattn_sdpa_params *p, const vka_sdpa_shape *s);
vkattn_result vka_chained_sinks_lse(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    const vkattn_sdpa_io *io, vkattn_tensor **lse);

/* Soft-capping's backward in place on the chained path's dS (f32):
 * ds[i] *= 1 - tanh^2(raw[i] / softcap), raw the scaled scores before the
 * cap (shaders/softcap_grad.comp). */
vkattn_result vka_softcap_grad_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                      const char *caller, uint64_t n, float softcap,
                                      vkattn_tensor *raw, vkattn_tensor *ds);

/* The chained backward's grad_sinks (H) f32: -sum over the rows of head h of
 * (1 - sum_j W_j) * sum_j W_j dP_j, from its weights W and dP (both (B, H,
 * Tq, Tv) f32, dP after dropout) (shaders/sink_grad_rows.comp). */
vkattn_result vka_sink_grad_rows_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const char *caller, const vka_sdpa_shape *s,
                                        vkattn_tensor *weights, vkattn_tensor *dp,
                                        vkattn_tensor *grad_sinks);

#endif /* VKA_OPS_SDPA_OPEN_H */
