/* The steps SDPA's open-model options add around its kernels (ops/sdpa_open.c):
 * logit soft-capping of the chained path's scores, and the attention sinks
 * applied to the fused path's output and LSE. */
#ifndef VKA_OPS_SDPA_OPEN_H
#define VKA_OPS_SDPA_OPEN_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
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

#endif /* VKA_OPS_SDPA_OPEN_H */
