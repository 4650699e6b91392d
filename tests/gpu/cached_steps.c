/* tests/gpu/cached_steps.h */
#include "cached_steps.h"

#include <stdlib.h>

void th_cached_call(vkattn_context *ctx, const th_cached_run *r, const float *x, uint32_t t0,
                    uint32_t n, float *out)
{
    const uint32_t B = r->batch, W = r->width, D = r->out_width;
    float *in = tu_floats((size_t)B * n * W);
    for (uint32_t b = 0; b < B; b++)
        memcpy(in + (size_t)b * n * W, x + ((size_t)b * r->len + t0) * W, sizeof(float) * n * W);
    vkattn_tensor *tin = th_typed_tensor(ctx, (size_t)B * n * W, r->io_type, in);
    vkattn_tensor *tout = th_typed_tensor(ctx, (size_t)B * n * D, r->io_type, NULL);
    const vkattn_layer_call call = {.batch = B, .tq = n, .causal = VKATTN_CAUSAL_TOP_LEFT};
    const vkattn_layer_io io = {.query = tin, .value = tin, .value_mask = r->value_mask,
                                .output = tout};
    for (int prep = r->prepare ? 1 : 0; prep >= 0; prep--) {
        VkCommandBuffer mode = prep ? VKATTN_PREPARE : VKATTN_RUN_NOW;
        TH_OK(ctx, r->mha ? vkattn_mha_record_cached(r->mha, mode, &call, &io, r->cache)
                          : vkattn_gqa_record_cached(r->gqa, mode, &call, &io, r->cache));
    }
    float *got = th_download(tout, (size_t)B * n * D);
    for (uint32_t b = 0; b < B; b++)
        memcpy(out + ((size_t)b * r->len + t0) * D, got + (size_t)b * n * D,
               sizeof(float) * n * D);
    free(got), free(in);
    vkattn_tensor_destroy(tin), vkattn_tensor_destroy(tout);
}

uint32_t th_cached_steps(vkattn_context *ctx, const th_cached_run *r, const float *x, uint32_t t0,
                         const uint32_t *steps, size_t count, float *out)
{
    for (size_t s = 0; s < count; s++) {
        th_cached_call(ctx, r, x, t0, steps[s], out);
        t0 += steps[s];
    }
    return t0;
}

void th_cache_model_init(vkattn_context *ctx, th_cache_model *m, const vkattn_mha_desc *desc,
                         const float amp[10])
{
    m->desc = *desc;
    const size_t H = desc->num_heads, dk = desc->key_dim;
    const size_t dv = desc->value_dim ? desc->value_dim : dk, W = desc->query_width;
    const size_t out = desc->output_dim ? desc->output_dim : W;
    const size_t n[10] = {W * H * dk, H * dk,     W * H * dk, H * dk,     W * H * dv,
                          H * dv,     H * dv * out, out,      W * H * dv, H * dv};
    for (int i = 0; i < 10; i++) {
        m->arrays[i] = tu_floats(n[i]);
        tu_fill_uniform(m->arrays[i], n[i], -amp[i], amp[i]);
        if (desc->dtype == VKATTN_DTYPE_F16)
            th_round_f16(m->arrays[i], n[i]);
    }
    const bool gate = desc->use_gate;
    m->w = (vkattn_mha_weights){m->arrays[0], m->arrays[1], m->arrays[2], m->arrays[3],
                                m->arrays[4], m->arrays[5], m->arrays[6], m->arrays[7],
                                gate ? m->arrays[8] : NULL, gate ? m->arrays[9] : NULL};
    TH_OK(ctx, vkattn_mha_create(ctx, &m->desc, &m->mha));
    TH_OK(ctx, vkattn_mha_set_weights(m->mha, &m->w));
}

void th_cache_model_free(th_cache_model *m)
{
    vkattn_mha_destroy(m->mha);
    for (int i = 0; i < 10; i++)
        free(m->arrays[i]);
}

double th_gqa_cached_error(vkattn_context *ctx, const vkattn_gqa_desc *desc,
                           const vkattn_gqa_weights *w, const float *x, uint32_t batch,
                           uint32_t len, uint32_t cap, const uint32_t *steps, size_t count,
                           bool prepare, vkattn_gqa **gqa, vkattn_kv_cache **cache)
{
    const uint32_t W = desc->query_width;
    const size_t n = (size_t)batch * len * W;
    float *ref = tu_floats(n), *got = tu_floats(n);
    tu_poison(got, n);
    const vkattn_layer_call full = {.batch = batch, .tq = len, .tv = len,
                                    .causal = VKATTN_CAUSAL_TOP_LEFT};
    const vkattn_layer_host_io hio = {.query = x, .value = x, .output = ref};
    TH_OK(ctx, vkattn_reference_gqa(desc, w, &full, &hio));
    TH_OK(ctx, vkattn_gqa_create(ctx, desc, gqa));
    TH_OK(ctx, vkattn_gqa_set_weights(*gqa, w));
    const vkattn_kv_cache_desc cd = {.batch = batch, .kv_heads = desc->num_key_value_heads,
                                     .capacity = cap, .key_dim = desc->head_dim,
                                     .value_dim = desc->head_dim};
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, cache));
    const th_cached_run r = {.gqa = *gqa, .cache = *cache, .batch = batch, .len = len,
                             .width = W, .out_width = W, .io_type = VKATTN_DTYPE_F32,
                             .prepare = prepare};
    th_cached_steps(ctx, &r, x, 0, steps, count, got);
    const double err = tu_max_rel_err(got, ref, n, 1.0);
    free(ref), free(got);
    return err;
}
