/* Shared pieces of the layer references: io checks, mask layouts (and the
 * MultiHeadAttention family's query-mask folding), and the single-head host
 * tail softmax -> dropout -> W @ V -> query_mask, composed from the op
 * references. */
#include "reference/layer_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "vkattn/reference.h"

vkattn_result vka_ref_layer_check_presence(const char *fn, const vkattn_layer_call *call,
                                           const vkattn_layer_host_io *io, uint32_t key_width,
                                           uint32_t value_width)
{
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "io", io)) ||
        (r = vka_ref_require_ptr(fn, "io->query", io->query)) ||
        (r = vka_ref_require_ptr(fn, "io->value", io->value)) ||
        (r = vka_ref_require_ptr(fn, "io->output", io->output)) ||
        (r = vka_ref_require_flagged(fn, "io->scores", "call->return_attention_scores",
                                     call->return_attention_scores, io->scores)))
        return r;
    if (!call->return_attention_scores && io->scores)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->scores is given but call->return_attention_scores is false", fn);
    if (!io->key && key_width != value_width)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->key is NULL (key = value) but the key width %u differs from "
                        "the value width %u",
                        fn, key_width, value_width);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_layer_check_io(const char *fn, const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io, const vka_layer_widths *w)
{
    vkattn_result r = vka_ref_layer_check_presence(fn, call, io, w->dk, w->dv);
    if (r)
        return r;
    if (io->attention_mask_per_head)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->attention_mask_per_head is set; only MultiHeadAttention has "
                        "heads",
                        fn);
    vka_mask_layout ml;
    if ((io->attention_mask || io->attention_mask_rank) &&
        (r = vka_ref_mask_layout(fn, call, io, 1, false, &ml)))
        return r;
    const uint64_t qd[3] = {call->batch, call->tq, w->dq}, kd[3] = {call->batch, call->tv, w->dk};
    const uint64_t vd[3] = {call->batch, call->tv, w->dv}, od[3] = {call->batch, call->tq, w->dv};
    const uint64_t sd[3] = {call->batch, call->tq, call->tv};
    if ((r = vka_ref_count(fn, "io->query (B, Tq, Dq)", qd, 3, NULL)) ||
        (r = vka_ref_count(fn, "io->key (B, Tv, Dk)", kd, 3, NULL)) ||
        (r = vka_ref_count(fn, "io->value (B, Tv, Dv)", vd, 3, NULL)) ||
        (r = vka_ref_count(fn, "io->output (B, Tq, Dv)", od, 3, NULL)) ||
        (r = vka_ref_count(fn, "the scores (B, Tq, Tv)", sd, 3, NULL)))
        return r;
    if (w->units) {
        const uint64_t pq[2] = {(uint64_t)call->batch * call->tq, w->units};
        const uint64_t pk[2] = {(uint64_t)call->batch * call->tv, w->units};
        if ((r = vka_ref_count(fn, "the query projection (B, Tq, units)", pq, 2, NULL)) ||
            (r = vka_ref_count(fn, "the key projection (B, Tv, units)", pk, 2, NULL)))
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_layer_start(const char *fn, const vkattn_layer_call *call,
                                  const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                  float **s)
{
    vkattn_result r;
    if ((r = vka_layer_check_call(NULL, fn, call)) || (r = vka_ref_layer_check_io(fn, call, io, w)))
        return r;
    return vka_ref_layer_alloc(fn, "the scores", (uint64_t)call->batch * call->tq * call->tv, s);
}

vkattn_result vka_ref_mha_check_io(const char *fn, const vka_mha_dims *d,
                                   const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                                   vka_mask_layout *mask)
{
    vkattn_result r = vka_ref_layer_check_presence(fn, call, io, d->key_width, d->value_width);
    if (r)
        return r;
    if (!io->attention_mask && io->attention_mask_per_head)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->attention_mask_per_head is set but io->attention_mask is NULL",
                        fn);
    if (io->attention_mask || io->attention_mask_rank)
        return vka_ref_mask_layout(fn, call, io, d->heads, true, mask);
    return VKATTN_SUCCESS;
}

/* mask[b, h, i, j] = (attn or 1) allowed && query_mask[b, i] allowed, as 1/0
 * (nonzero, NaN included, = may attend). */
static void combine_mask(const vka_mha_call *c, uint32_t mask_heads, const float *attn,
                         const float *query_mask, float *mask)
{
    size_t n = 0;
    for (uint32_t b = 0; b < c->batch; b++)
        for (uint32_t h = 0; h < mask_heads; h++)
            for (uint32_t i = 0; i < c->tq; i++) {
                const bool row = query_mask[(size_t)b * c->tq + i] != 0.0f;
                for (uint32_t j = 0; j < c->tv; j++, n++)
                    mask[n] = row && (!attn || attn[n] != 0.0f) ? 1.0f : 0.0f;
            }
}

vkattn_result vka_ref_mha_mask_make(const char *fn, const vka_mha_call *c,
                                    const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                                    const vka_mask_layout *ml, vka_ref_mha_mask *m)
{
    *m = (vka_ref_mha_mask){.heads = ml->dims[1]};
    const uint64_t count = m->heads > 1 ? c->mask_per_head : c->mask_shared;
    vkattn_result r;
    if ((io->attention_mask &&
         (r = vka_ref_mask_expand(fn, call, io->attention_mask, ml, &m->attn))) ||
        (io->query_mask &&
         (r = vka_ref_layer_alloc(fn, "the combined mask", count, &m->combined)))) {
        vka_ref_mha_mask_free(m);
        return r;
    }
    if (io->query_mask)
        combine_mask(c, m->heads, m->attn, io->query_mask, m->combined);
    return VKATTN_SUCCESS;
}

void vka_ref_mha_mask_free(vka_ref_mha_mask *m)
{
    free(m->attn), free(m->combined);
    *m = (vka_ref_mha_mask){0};
}

const float *vka_ref_mha_sdpa_params(const vka_mha_dims *d, const vka_mha_call *c,
                                     const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io, const vka_ref_mha_mask *m,
                                     vkattn_sdpa_params *sp)
{
    const float *mask = m->combined ? m->combined : m->attn;
    const vkattn_broadcast stored = {.heads = m->heads == 1};
    vka_mha_sdpa_params(d, c, call, io->value_mask != NULL, mask ? &stored : NULL, sp);
    return mask;
}

vkattn_result vka_ref_mask_layout(const char *fn, const vkattn_layer_call *call,
                                  const vkattn_layer_host_io *io, uint32_t heads, bool multi_head,
                                  vka_mask_layout *out)
{
    if (!io->attention_mask)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->attention_mask_rank is %u but io->attention_mask is NULL", fn,
                        io->attention_mask_rank);
    const bool per_head = io->attention_mask_per_head;
    const vka_mask_target t = {.batch = call->batch, .heads = heads, .tq = call->tq,
                               .tv = call->tv, .multi_head = multi_head,
                               .per_head_legacy = per_head};
    if (io->attention_mask_rank) {
        if (io->attention_mask_rank > 4)
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: io->attention_mask_rank is %u; must be 0..4", fn,
                            io->attention_mask_rank);
        return vka_mask_resolve(NULL, fn, "io->attention_mask", io->attention_mask_rank,
                                io->attention_mask_dims, &t, out);
    }
    const uint32_t full[4] = {call->batch, per_head ? heads : call->tq,
                              per_head ? call->tq : call->tv, call->tv};
    return vka_mask_resolve(NULL, fn, "io->attention_mask", per_head ? 4 : 3, full, &t, out);
}

vkattn_result vka_ref_mask_expand(const char *fn, const vkattn_layer_call *call,
                                  const float *mask, const vka_mask_layout *l, float **out)
{
    const uint32_t heads = l->dims[1];
    vkattn_result r = vka_ref_layer_alloc(fn, "the expanded attention mask",
                                          (uint64_t)call->batch * heads * call->tq * call->tv, out);
    if (r)
        return r;
    size_t n = 0;
    for (uint32_t b = 0; b < call->batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t i = 0; i < call->tq; i++)
                for (uint32_t j = 0; j < call->tv; j++)
                    (*out)[n++] = mask[vka_mask_index(l, b, h, i, j)];
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_layer_alloc(const char *fn, const char *what, uint64_t n, float **out)
{
    *out = NULL;
    if (n > SIZE_MAX / sizeof(float) || !(*out = malloc((size_t)n * sizeof(float))))
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: cannot allocate %s (%llu floats)", fn, what, (unsigned long long)n);
    return VKATTN_SUCCESS;
}

/* Keras multiplies the output by the cast query mask: rows with mask 0 become
 * 0 (NaN * 0 stays NaN), other rows are untouched. */
static void apply_query_mask(const vkattn_layer_call *call, const float *qm, uint32_t dv,
                             float *out)
{
    const size_t rows = (size_t)call->batch * call->tq;
    for (size_t r = 0; r < rows; r++) {
        const float keep = qm[r] == 0.0f ? 0.0f : 1.0f;
        for (size_t e = 0; e < dv; e++)
            out[r * dv + e] *= keep;
    }
}

vkattn_result vka_ref_layer_finish(const char *fn, const vkattn_layer_call *call,
                                   const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                   float rate, float *s)
{
    vkattn_result r;
    float *mask = NULL; /* (B, 1, Tq, Tv): the attention mask, broadcasts made explicit */
    vka_mask_layout ml;
    if (io->attention_mask && ((r = vka_ref_mask_layout(fn, call, io, 1, false, &ml)) ||
                               (r = vka_ref_mask_expand(fn, call, io->attention_mask, &ml, &mask))))
        return r;
    const vkattn_broadcast one_head = {.heads = true};
    const vkattn_softmax_params sp = {
        .batch = call->batch, .heads = 1, .tq = call->tq, .tv = call->tv,
        .mask = vka_layer_mask_params(call, VKATTN_MASKED_ROW_UNIFORM, io->value_mask != NULL,
                                      mask ? &one_head : NULL),
    };
    r = vkattn_reference_softmax(&sp, NULL, s, NULL, io->value_mask, mask, s);
    free(mask);
    if (r)
        return r;
    const vkattn_dropout_op_params dp = vka_layer_dropout_params(call, rate, 1);
    if ((r = vkattn_reference_dropout(&dp, NULL, s, s)))
        return r;
    if (call->return_attention_scores)
        memcpy(io->scores, s, (size_t)call->batch * call->tq * call->tv * sizeof(float));
    /* out[b] = W[b] (Tq x Tv) @ value[b] (Tv x Dv) */
    const vkattn_matmul_params mp = {
        .batch = call->batch, .m = call->tq, .n = w->dv, .k = call->tv,
        .a = {.batch_stride = (uint64_t)call->tq * call->tv},
        .b = {.batch_stride = (uint64_t)call->tv * w->dv},
    };
    if ((r = vkattn_reference_matmul(&mp, NULL, s, io->value, NULL, io->output)))
        return r;
    if (io->query_mask)
        apply_query_mask(call, io->query_mask, w->dv, io->output);
    return VKATTN_SUCCESS;
}

double vka_ref_sigmoid(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

void vka_ref_gate(uint64_t n, const float *pre, float *x)
{
    for (uint64_t i = 0; i < n; i++)
        x[i] = (float)((double)x[i] * vka_ref_sigmoid(pre[i]));
}

vkattn_result vka_ref_require_weights(const char *fn, const vka_weight_table *table,
                                      uint32_t options, bool biases, const void *w)
{
    for (uint32_t i = 0; i < table->count; i++) {
        const vka_weight_info *wi = &table->w[i];
        if (wi->rank == 0 || !vka_weight_exists(wi, options) ||
            !(wi->needs & VKA_WEIGHT_IF_BIAS) != !biases)
            continue;
        if (!*(float *const *)vka_weight_host(w, wi)) {
            char name[48];
            snprintf(name, sizeof name, "w->%s", wi->member);
            return vka_ref_require_ptr(fn, name, NULL);
        }
    }
    return VKATTN_SUCCESS;
}

const char *vka_ref_weight_lacked(const vka_weight_table *table, uint32_t options, uint32_t flag,
                                  const void *gw)
{
    for (uint32_t i = 0; gw && i < table->count; i++) {
        const vka_weight_info *wi = &table->w[i];
        if (wi->rank != 0 && (wi->needs & flag & ~options) &&
            *(float *const *)vka_weight_host(gw, wi))
            return wi->member;
    }
    return NULL;
}
