/* The decode op's recording without the public entry's record modes, for
 * SDPA's few-row calls (ops/sdpa_few_rows.c). io->cache may be a stack
 * struct viewing SDPA's K and V: lengths NULL means every sequence holds
 * capacity keys (no lengths buffer is read). */
#ifndef VKA_OPS_DECODE_RECORD_H
#define VKA_OPS_DECODE_RECORD_H

#include "vkattn/decode.h"

vkattn_result vka_decode_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                const vkattn_sdpa_decode_params *p,
                                const vkattn_sdpa_decode_io *io);

/* Whether vka_decode_record takes p with a full cache of kv_dtype on this
 * device: decode's plan and its device limits (workgroup size, shared
 * memory, grid, 32-bit indexing, its partials within maxStorageBufferRange),
 * decided without recording or logging anything, so that SDPA's few-row
 * route can fall back to the fused kernel. */
bool vka_decode_fits(const vkattn_context *ctx, const vkattn_sdpa_decode_params *p,
                     vkattn_dtype kv_dtype);

#endif /* VKA_OPS_DECODE_RECORD_H */
