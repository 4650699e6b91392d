/* CPU reference of keras.layers.MultiHeadAttention and of
 * GroupedQueryAttention (the same layer with fewer key/value heads: K and V
 * are projected to kv_heads heads, which SDPA shares among the query heads),
 * composed from the op
 * references exactly as the GPU layer composes the ops:
 *   projections (matmul + bias) -> head split -> [QK-norm, rotary embedding
 *   of the query and key heads (reference/head_prep.h)] -> SDPA -> head merge ->
 *   [use_gate: * sigmoid(query @ gate_kernel + gate_bias)] -> output
 *   projection (matmul + bias).
 * Each op accumulates in double; the tensors between ops are f32, as on the
 * GPU. A query mask becomes part of an explicit (B, [H,] Tq, Tv) mask (a masked
 * query row has no allowed key, so its weights are zero and its output row is
 * the output bias), as Keras folds query_mask into the attention mask. */
#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"
#include "vkattn/reference.h"

#include <stdlib.h>

#include "core/error.h"
#include "reference/head_prep.h"
#include "reference/layer_ref.h"
#include "reference/ref_internal.h"
#include "shape/mha_shape.h"

/* Every f32 scratch tensor of one call. */
typedef struct scratch {
    float *proj, *q, *k, *v, *ctx_heads, *ctx_merged;
    float *gate; /* (B, Tq, H*dv) use_gate: the gate before its sigmoid */
    vka_ref_mha_mask mask;
} scratch;

static void scratch_free(scratch *s)
{
    free(s->proj), free(s->q), free(s->k), free(s->v);
    free(s->ctx_heads), free(s->ctx_merged), free(s->gate);
    vka_ref_mha_mask_free(&s->mask);
}

static vkattn_result alloc_floats(const char *fn, uint64_t n, float **out)
{
    const uint64_t dims[1] = {n};
    size_t count;
    vkattn_result r = vka_ref_count(fn, "a scratch tensor", dims, 1, &count);
    if (r)
        return r;
    *out = malloc(count * sizeof(float));
    if (!*out)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: could not allocate %llu floats of scratch", fn,
                        (unsigned long long)n);
    return VKATTN_SUCCESS;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    return m > c ? m : c;
}

static vkattn_result scratch_alloc(const char *fn, const vka_mha_call *c, bool gate, scratch *s)
{
    vkattn_result r;
    *s = (scratch){0};
    if ((r = alloc_floats(fn, max3(c->q_proj, c->k_proj, c->v_proj), &s->proj)) ||
        (r = alloc_floats(fn, c->q_proj, &s->q)) || (r = alloc_floats(fn, c->k_proj, &s->k)) ||
        (r = alloc_floats(fn, c->v_proj, &s->v)) ||
        (r = alloc_floats(fn, c->context, &s->ctx_heads)) ||
        (r = alloc_floats(fn, c->context, &s->ctx_merged)) ||
        (gate && (r = alloc_floats(fn, c->context, &s->gate)))) {
        scratch_free(s);
        return r;
    }
    return VKATTN_SUCCESS;
}

static vkattn_result check_weights(const char *fn, const vka_mha_dims *d,
                                   const vkattn_mha_weights *w)
{
    const uint32_t options = vka_mha_weight_options(d);
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "w", w)) ||
        (r = vka_ref_require_weights(fn, &vka_mha_weight_table, options, false, w)) ||
        (r = vka_ref_require_weights(fn, &vka_mha_weight_table, options, true, w)))
        return r;
    return VKATTN_SUCCESS;
}

/* dst (B, T, n) = src (B, T, k) @ kernel (k, n) (+ bias), the kernel shared by
 * every batch. */
static vkattn_result project(uint32_t batch, uint32_t seq, uint32_t k, uint32_t n,
                             const float *src, const float *kernel, const float *bias, float *dst)
{
    vkattn_matmul_params p = {
        .batch = batch, .m = seq, .n = n, .k = k, .has_bias = bias != NULL,
        .a = {.batch_stride = (uint64_t)seq * k}, /* b: stride 0 broadcasts the kernel */
    };
    return vkattn_reference_matmul(&p, NULL, src, kernel, bias, dst);
}

/* (B, T, heads*d) projection of src, then split into (B, heads, T, d). */
static vkattn_result project_heads(const vka_mha_dims *d, uint32_t batch, uint32_t seq,
                                   uint32_t in_width, uint32_t heads, uint32_t head_dim,
                                   const float *src, const float *kernel, const float *bias,
                                   float *proj, float *out)
{
    vkattn_result r = project(batch, seq, in_width, heads * head_dim, src, kernel,
                              d->use_bias ? bias : NULL, proj);
    if (r)
        return r;
    vkattn_heads_params hp = {.batch = batch, .seq = seq, .heads = heads, .head_dim = head_dim};
    return vkattn_reference_heads_split(&hp, NULL, proj, out);
}

static vkattn_result run(const char *fn, const vka_mha_dims *d, const vka_mha_call *c,
                         const vkattn_mha_weights *w, const vkattn_layer_call *call,
                         const vkattn_layer_host_io *io, scratch *s)
{
    vkattn_result r;
    const float *key = io->key ? io->key : io->value;
    if ((r = project_heads(d, c->batch, c->tq, d->query_dim, d->heads, d->key_dim, io->query,
                           w->query_kernel, w->query_bias, s->proj, s->q)) ||
        (r = project_heads(d, c->batch, c->tv, d->key_width, d->kv_heads, d->key_dim, key,
                           w->key_kernel, w->key_bias, s->proj, s->k)) ||
        (r = project_heads(d, c->batch, c->tv, d->value_width, d->kv_heads, d->value_dim,
                           io->value, w->value_kernel, w->value_bias, s->proj, s->v)))
        return r;
    if (vka_ref_mha_has_head_prep(d) &&
        ((r = vka_ref_mha_head_prep_f32(fn, d, w->query_norm, c->batch, d->heads, c->tq,
                                        io->query_positions, s->q)) ||
         (r = vka_ref_mha_head_prep_f32(fn, d, w->key_norm, c->batch, d->kv_heads, c->tv,
                                        io->key_positions, s->k))))
        return r;

    vkattn_sdpa_params sp;
    const float *mask = vka_ref_mha_sdpa_params(d, c, call, io, &s->mask, &sp);
    if ((r = vka_ref_sdpa("vkattn_reference_sdpa", &sp, NULL, s->q, s->k, s->v, NULL,
                          io->value_mask, mask, d->use_sinks ? w->sinks : NULL, s->ctx_heads,
                          io->scores)))
        return r;

    vkattn_heads_params hp = {
        .batch = c->batch, .seq = c->tq, .heads = d->heads, .head_dim = d->value_dim};
    if ((r = vkattn_reference_heads_merge(&hp, NULL, s->ctx_heads, s->ctx_merged)))
        return r;
    if (d->use_gate) {
        if ((r = project(c->batch, c->tq, d->query_dim, d->hv, io->query, w->gate_kernel,
                         d->use_bias ? w->gate_bias : NULL, s->gate)))
            return r;
        vka_ref_gate(c->context, s->gate, s->ctx_merged);
    }
    return project(c->batch, c->tq, d->hv, d->output_dim, s->ctx_merged,
                   w->output_kernel, d->use_bias ? w->output_bias : NULL, io->output);
}

/* The layer of resolved dims d (MultiHeadAttention or GroupedQueryAttention)
 * on a checked desc; fn names the public function. */
static vkattn_result reference_dims(const char *fn, const vka_mha_dims *d,
                                    const vkattn_mha_weights *w, const vkattn_layer_call *call,
                                    const vkattn_layer_host_io *io)
{
    vkattn_result r;
    vka_mha_call c;
    vka_mask_layout ml = {.dims = {1, 1, 1, 1}};
    if ((r = check_weights(fn, d, w)) || (r = vka_mha_resolve_call(NULL, fn, d, call, &c)) ||
        (r = vka_ref_mha_check_io(fn, d, call, io, &ml)) ||
        (r = vka_ref_mha_check_positions(fn, d, &c, io)))
        return r;
    scratch s;
    if ((r = scratch_alloc(fn, &c, d->use_gate, &s)))
        return r;
    if ((r = vka_ref_mha_mask_make(fn, &c, call, io, &ml, &s.mask))) {
        scratch_free(&s);
        return r;
    }
    r = run(fn, d, &c, w, call, io, &s);
    scratch_free(&s);
    return r;
}

vkattn_result vkattn_reference_mha(const vkattn_mha_desc *desc, const vkattn_mha_weights *w,
                                   const vkattn_layer_call *call, const vkattn_layer_host_io *io)
{
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(NULL, __func__, desc, &d);
    return r ? r : reference_dims(__func__, &d, w, call, io);
}

vkattn_result vkattn_reference_gqa(const vkattn_gqa_desc *desc, const vkattn_gqa_weights *w,
                                   const vkattn_layer_call *call, const vkattn_layer_host_io *io)
{
    vka_mha_dims d;
    vkattn_result r = vka_gqa_resolve_desc(NULL, __func__, desc, &d);
    return r ? r : reference_dims(__func__, &d, w, call, io);
}
