/* KV-cache rows for the decode tests: rank-4 row tensors and random ragged
 * appends mirrored on the host (test_decode_dtypes.c,
 * test_decode_softcap_sinks.c). */
#ifndef VKATTN_TEST_KV_ROWS_H
#define VKATTN_TEST_KV_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vkattn/vkattn.h>

/* A (b, h, t, w) tensor of `dtype` holding x (f16: rounded to nearest even
 * on upload), or poisoned with NaN when x is NULL. */
vkattn_tensor *th_rows_tensor(vkattn_context *ctx, uint32_t b, uint32_t h, uint32_t t,
                              uint32_t w, vkattn_dtype dtype, const float *x);

/* Appends tnew random rows per K/V head of each sequence, count[b] of them
 * kept by sequence b (whose length was len[b]), as tensors of type src (f32,
 * f16 or bf16) holding values of that type; values uniform in [-1, 1], each
 * row scaled by a random magnitude in [0.01, 10] when `varied` (the first row
 * of the call zero when also src is 16-bit). hk and hv (B, Hkv, capacity,
 * width) get the appended rows at their cache positions. */
void th_kv_append_random(vkattn_context *ctx, vkattn_kv_cache *cache,
                         const vkattn_kv_cache_desc *cd, uint32_t tnew, const uint32_t *len,
                         const uint32_t *count, vkattn_dtype src, bool varied, float *hk,
                         float *hv);

#endif
