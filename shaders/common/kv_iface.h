/* shaders/kv_append.comp and kv_lengths.comp <-> src/ops/kv_cache.c (see
 * iface.h). The lengths buffer holds one uint32 per sequence and then the
 * overflow flag (nonzero once an append did not fit). */
#ifndef VKA_KV_IFACE_H
#define VKA_KV_IFACE_H

#include "iface.h"

#define VKA_KV_APPEND_SPEC_WG 0      /* local_size_x */
#define VKA_KV_APPEND_SPEC_SRC_TYPE 1 /* VKA_ELEM_*: the new rows */
#define VKA_KV_APPEND_SPEC_DST_TYPE 2 /* the cache (f16: even width) */
#define VKA_KV_APPEND_SPEC_DST_I8 3  /* bool: the cache holds int8 + row scales */
#define VKA_KV_APPEND_N_SPEC 4

#define VKA_KV_APPEND_PUSH                                                   \
    VKA_UINT total;     /* elements of the new rows: B * Hkv * tnew * width */ \
                        /* (rows B * Hkv * tnew for an int8 cache) */         \
    VKA_UINT kv_heads, tnew, width, capacity, batch;                        \
    VKA_UINT has_counts; /* counts (B floats) bound: rows per sequence */    \
    VKA_UINT scale_off;  /* int8 cache: the word of row 0's scale */
#define VKA_KV_APPEND_PUSH_SIZE 32

#define VKA_KV_LENGTHS_SPEC_WG 0 /* local_size_x */
#define VKA_KV_LENGTHS_N_SPEC 1

#define VKA_KV_LENGTHS_MODE_ADVANCE 0u /* lengths[b] += count of b, if it fits */
#define VKA_KV_LENGTHS_MODE_RESET 1u   /* lengths[seq] = 0 (every b when seq = ALL) */
#define VKA_KV_LENGTHS_ALL 0xFFFFFFFFu

#define VKA_KV_LENGTHS_PUSH                                                  \
    VKA_UINT mode, batch, tnew, capacity, has_counts;                       \
    VKA_UINT seq; /* RESET: the sequence, or VKA_KV_LENGTHS_ALL */
#define VKA_KV_LENGTHS_PUSH_SIZE 24

#endif /* VKA_KV_IFACE_H */
