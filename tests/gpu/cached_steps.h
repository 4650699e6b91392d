/* A layer's cached calls (vkattn_mha_record_cached, vkattn_gqa_record_cached)
 * over rows of a host sequence, gathered into one host output: what the KV
 * cache tests (test_mha_cache*.c, test_gqa_cache.c, test_mha_rope.c) compare
 * with one causal reference call over the whole sequence. */
#ifndef VKATTN_TEST_CACHED_STEPS_H
#define VKATTN_TEST_CACHED_STEPS_H

#include "harness.h"

#include <vkattn/gqa.h>
#include <vkattn/mha.h>

typedef struct th_cached_run {
    vkattn_mha *mha; /* the layer: mha, else gqa */
    vkattn_gqa *gqa;
    vkattn_kv_cache *cache;
    uint32_t batch, len; /* x is (batch, len, width), out (batch, len, out_width) */
    uint32_t width, out_width;
    vkattn_dtype io_type;      /* of the call's tensors (f16: x rounded on upload) */
    vkattn_tensor *value_mask; /* over the cache, or NULL */
    bool prepare;              /* record VKATTN_PREPARE before each run */
} th_cached_run;

/* Rows [t0, t0 + n) of every sequence of x through one cached call; out gets
 * them at the same rows (the call's output tensor is NaN-poisoned first). */
void th_cached_call(vkattn_context *ctx, const th_cached_run *r, const float *x, uint32_t t0,
                    uint32_t n, float *out);

/* th_cached_call for each of steps[0..count) in turn from row t0; returns
 * the row after the last. */
uint32_t th_cached_steps(vkattn_context *ctx, const th_cached_run *r, const float *x, uint32_t t0,
                         const uint32_t *steps, size_t count, float *out);

/* A GroupedQueryAttention layer of desc and w (*gqa) and a cache for it of
 * capacity cap (*cache; both left for the caller's further checks and to
 * destroy); the sequences x (batch, len, desc->query_width) run through
 * cached calls of `steps` rows, then compared with the reference's one
 * causal call over all len rows: returns max|got - ref| / max(max|ref|, 1). */
double th_gqa_cached_error(vkattn_context *ctx, const vkattn_gqa_desc *desc,
                           const vkattn_gqa_weights *w, const float *x, uint32_t batch,
                           uint32_t len, uint32_t cap, const uint32_t *steps, size_t count,
                           bool prepare, vkattn_gqa **gqa, vkattn_kv_cache **cache);

/* A MultiHeadAttention layer with random weights for the cached tests: weight
 * array i (query kernel, bias, key kernel, bias, value kernel, bias, output
 * kernel, bias, gate kernel, bias) uniform in [-amp[i], amp[i]], rounded to
 * f16 for an f16 desc; the gate's only with desc->use_gate. */
typedef struct th_cache_model {
    vkattn_mha_desc desc;
    vkattn_mha_weights w;
    float *arrays[10];
    vkattn_mha *mha;
} th_cache_model;
void th_cache_model_init(vkattn_context *ctx, th_cache_model *m, const vkattn_mha_desc *desc,
                         const float amp[10]);
void th_cache_model_free(th_cache_model *m);

#endif
