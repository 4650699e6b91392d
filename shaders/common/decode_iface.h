/* shaders/decode.comp, decode_packed.comp (decode_body.glsl) and
 * decode_merge.comp <-> src/ops/decode.c (see iface.h). */
#ifndef VKA_DECODE_IFACE_H
#define VKA_DECODE_IFACE_H

#include "iface.h"

#define VKA_DECODE_SPEC_WG 0             /* local_size_x = keys per tile */
#define VKA_DECODE_SPEC_DK 1             /* query/key width */
#define VKA_DECODE_SPEC_DV 2             /* value width */
#define VKA_DECODE_SPEC_R 3              /* query rows per workgroup */
#define VKA_DECODE_SPEC_KS 4             /* key subsets of the P V step */
#define VKA_DECODE_SPEC_NS 5             /* output slots per invocation */
#define VKA_DECODE_SPEC_HAS_VALUE_MASK 6 /* bool */
#define VKA_DECODE_SPEC_DROPOUT 7        /* bool: training && rate > 0 */
#define VKA_DECODE_SPEC_K_TYPE 8          /* VKA_ELEM_*: the cache's K */
#define VKA_DECODE_SPEC_V_TYPE 9          /* the cache's V */
#define VKA_DECODE_SPEC_LANES 10     /* bool: one run of keys per invocation */
#define VKA_DECODE_SPEC_Q_TYPE 11     /* q */
#define VKA_DECODE_SPEC_KV_I8 12    /* bool: K and V hold int8 + row scales */
#define VKA_DECODE_SPEC_SOFTCAP 13  /* bool: logits soft-capped (softcap_log2) */
#define VKA_DECODE_SPEC_FULL 14     /* bool: every sequence full (no lengths read) */
#define VKA_DECODE_N_SPEC 15

#define VKA_DECODE_PUSH                                                        \
    VKA_UINT heads, group, tq, capacity; /* query heads per K/V head: group */ \
    VKA_UINT n_chunks;                   /* partials per row */                \
    VKA_FLOAT scale_log2;                /* scale * log2(e) */                 \
    VKA_UINT seed_lo, seed_hi, offset_mix, threshold; /* core/dropout_host.h */ \
    VKA_UINT z_base;                     /* first (b, K/V head) of a piece */  \
    VKA_UINT len_off, vmask_off;         /* packed layout: element offsets */ \
    VKA_UINT window; /* sliding window, 0 = none: keys j >= end - window */  \
    VKA_UINT k_scale_off, v_scale_off; /* int8 cache: words of row 0's scale */ \
    VKA_FLOAT softcap_log2; /* softcap * log2(e): the cap in the logits' units */
#define VKA_DECODE_PUSH_SIZE 68

#define VKA_DECODE_MERGE_SPEC_WG 0 /* local_size_x */
#define VKA_DECODE_MERGE_SPEC_DV 1 /* value width */
#define VKA_DECODE_MERGE_SPEC_OUT_TYPE 2 /* VKA_ELEM_*: out */
#define VKA_DECODE_MERGE_SPEC_SINKS 3 /* bool: sinks (H) bound at 2 */
#define VKA_DECODE_MERGE_N_SPEC 4

#define VKA_DECODE_MERGE_PUSH                                            \
    VKA_UINT total;    /* output elements B * H * Tq * DV */              \
    VKA_UINT n_chunks; /* partials per row */                             \
    VKA_FLOAT drop_scale; /* 1 without dropout */                       \
    VKA_UINT heads, tq;   /* row r's query head: (r / tq) % heads */
#define VKA_DECODE_MERGE_PUSH_SIZE 20

#endif /* VKA_DECODE_IFACE_H */
