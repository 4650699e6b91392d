/* The KV cache's private state, for the decode op (src/ops/decode.c). */
#ifndef VKA_OPS_KV_CACHE_H
#define VKA_OPS_KV_CACHE_H

#include <stdbool.h>

#include "vkattn/kv_cache.h"

struct vkattn_kv_cache {
    struct vkattn_context *ctx;
    vkattn_kv_cache_desc desc;  /* defaults resolved; keys/values as bound */
    vkattn_tensor *keys, *values;
    bool owns_keys, owns_values;
    vkattn_tensor *lengths;     /* batch + 1 uint32 (the flag last), as f32 bits */
    uint32_t *host_len;         /* the mirror, valid while host_known */
    bool host_known;
};

#endif /* VKA_OPS_KV_CACHE_H */
