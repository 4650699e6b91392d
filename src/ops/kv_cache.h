/* The KV cache's private state, for the decode op (src/ops/decode.c) and
 * MultiHeadAttention's cached calls (src/layers/mha.c). */
#ifndef VKA_OPS_KV_CACHE_H
#define VKA_OPS_KV_CACHE_H

#include <stdbool.h>
#include <stdint.h>

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

/* For layers/mha.c: appends tnew rows to every sequence from 1-D tensors
 * holding (B, Hkv, tnew, key_dim) and (B, Hkv, tnew, value_dim) (checked by
 * element count; the caller checked the capacity against the host mirror).
 * As vkattn_kv_cache_append_record otherwise; makes the mirror unknown. */
vkattn_result vka_kv_cache_append_flat(vkattn_kv_cache *c, VkCommandBuffer cmd, const char *fn,
                                       vkattn_tensor *k, vkattn_tensor *v, uint32_t tnew);

/* An int8 cache's K or V storage (vkattn/kv_cache.h): B * Hkv * capacity
 * rows of width / 4 words (four int8 each, element e in byte e % 4), then
 * one fp32 scale per row, from word vka_kv_i8_scale_offset. UINT64_MAX on
 * overflow. */
uint64_t vka_kv_i8_scale_offset(const vkattn_kv_cache_desc *d, uint32_t width);
uint64_t vka_kv_i8_words(const vkattn_kv_cache_desc *d, uint32_t width);

/* Reads the lengths and the overflow flag back into the host mirror (after a
 * VKATTN_RUN_NOW, so that later calls check the capacity on the host). */
vkattn_result vka_kv_cache_refresh(vkattn_kv_cache *c, const char *fn);

#endif /* VKA_OPS_KV_CACHE_H */
