/* SDPA calls with few query rows on the split-K decode kernel (issue 34):
 * the plan's choice (shape/sdpa_plan.h, vka_sdpa_rows_kernel_for) recorded. */
#ifndef VKA_OPS_SDPA_FEW_ROWS_H
#define VKA_OPS_SDPA_FEW_ROWS_H

#include "ops/decode_record.h"
#include "shape/sdpa_plan.h"
#include "vkattn/sdpa.h"

/* The plan's kernel for this call once the tensors are known: DECODE or
 * DECODE_FLAT only where io asks for no lse, passes no workspace of its own,
 * K and V share a dtype (f16: even widths), and decode's own device limits
 * hold (vka_decode_fits); else FUSED, so the route never fails a call the
 * fused kernel serves. Records and logs nothing. For DECODE and DECODE_FLAT,
 * *dc holds decode's plan of the call, which vka_sdpa_few_rows_record reads. */
vka_sdpa_rows_kernel vka_sdpa_few_rows_kernel(const vkattn_context *ctx,
                                              const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                              const vkattn_sdpa_io *io, vka_decode_call *dc);

/* Records the call on the decode kernel (k is DECODE or DECODE_FLAT, planned
 * as *dc by vka_sdpa_few_rows_kernel): K and V viewed as a full cache of
 * capacity Tv, the value mask as decode's. */
vkattn_result vka_sdpa_few_rows_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                       vka_sdpa_rows_kernel k, const vkattn_sdpa_params *p,
                                       const vka_sdpa_shape *s, const vka_decode_call *dc,
                                       const vkattn_sdpa_io *io);

#endif /* VKA_OPS_SDPA_FEW_ROWS_H */
