/* The decode op's recording without the public entry's record modes, for
 * SDPA's few-row calls (ops/sdpa_few_rows.c). io->cache may be a stack
 * struct viewing SDPA's K and V: lengths NULL means every sequence holds
 * capacity keys (no lengths buffer is read). */
#ifndef VKA_OPS_DECODE_RECORD_H
#define VKA_OPS_DECODE_RECORD_H

#include <stdbool.h>

#include "shape/decode_plan.h"
#include "vkattn/decode.h"

vkattn_result vka_decode_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                const vkattn_sdpa_decode_params *p,
                                const vkattn_sdpa_decode_io *io);

/* The device's choices for one call (vka_decode_shape is the call itself). */
typedef struct vka_decode_tiles {
    uint32_t wg, rows, ks, ns, row_blocks, n_chunks;
    uint32_t groups_x; /* workgroups per row block: n_chunks, or n_chunks / wg for lanes */
    bool lanes;        /* the lanes layout (decode_body.glsl) */
    uint64_t n_part;   /* floats of the partials: (B, H, Tq, n_chunks, dv + 2) */
} vka_decode_tiles;

/* Decode's plan of one call: the resolved call and the device's tiles. */
typedef struct vka_decode_call {
    vka_decode_shape s;
    vka_decode_tiles t;
} vka_decode_call;

/* Whether vka_decode_record takes p with a full cache of kv_dtype on this
 * device: decode's plan and its device limits (workgroup size, shared
 * memory, grid, 32-bit indexing, its partials within maxStorageBufferRange),
 * decided without recording or logging anything, so that SDPA's few-row
 * route can fall back to the fused kernel. Where it fits, *call holds that
 * plan, for vka_decode_record_planned. */
bool vka_decode_fits(const vkattn_context *ctx, const vkattn_sdpa_decode_params *p,
                     vkattn_dtype kv_dtype, vka_decode_call *call);

/* vka_decode_record for a call vka_decode_fits planned as *call, with a cache
 * built from that plan (io->cache's desc matches it): checks the tensors and
 * records, planning nothing again. */
vkattn_result vka_decode_record_planned(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                        const vkattn_sdpa_decode_params *p,
                                        const vka_decode_call *call,
                                        const vkattn_sdpa_decode_io *io);

#endif /* VKA_OPS_DECODE_RECORD_H */
