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
