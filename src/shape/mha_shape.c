/* See mha_shape.h. */
#include "shape/mha_shape.h"

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "shape/layer_shape.h"
#include "shape/open_model_check.h"

static vkattn_result require(struct vkattn_context *ctx, const char *caller, const char *name,
                             uint32_t v)
{
    if (v == 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is 0; must be >= 1", caller,
                        name);
    return VKATTN_SUCCESS;
}

/* a * b into a uint32, or SIZE_OVERFLOW naming what it is. Widths are fixed
 * features of the layer and every kernel indexes in 32 bits, so a projected
 * width that needs more is refused at creation. */
static vkattn_result width(struct vkattn_context *ctx, const char *caller, const char *what,
                           uint32_t a, uint32_t b, uint32_t *out)
{
    uint64_t p = (uint64_t)a * b;
    if (p > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: %s = %u x %u overflows 32 bits", caller, what, a, b);
    *out = (uint32_t)p;
    return VKATTN_SUCCESS;
}

/* The products and 32-bit limits of resolved widths (d's heads, dims and
 * widths set); fills d's products. */
static vkattn_result resolve_widths(struct vkattn_context *ctx, const char *caller,
                                    vka_mha_dims *d)
{
    vkattn_result r;
    if ((r = width(ctx, caller, "num_heads * key_dim", d->heads, d->key_dim, &d->qk)) ||
        (r = width(ctx, caller, "num_heads * value_dim", d->heads, d->value_dim, &d->hv)) ||
        (r = width(ctx, caller, "kv_heads * key_dim", d->kv_heads, d->key_dim, &d->kv_qk)) ||
        (r = width(ctx, caller, "kv_heads * value_dim", d->kv_heads, d->value_dim, &d->kv_hv)))
        return r;
    /* The kernels too must fit 32-bit indexing (elements, not bytes: the
     * tensors that hold them are checked against the device at creation). */
    uint32_t unused;
    if ((r = width(ctx, caller, "the query kernel", d->query_dim, d->qk, &unused)) ||
        (r = width(ctx, caller, "the key kernel", d->key_width, d->kv_qk, &unused)) ||
        (r = width(ctx, caller, "the value kernel", d->value_width, d->kv_hv, &unused)) ||
        (r = width(ctx, caller, "the output kernel", d->hv, d->output_dim, &unused)) ||
        (d->use_gate && (r = width(ctx, caller, "the gate kernel", d->query_dim, d->hv, &unused))))
        return r;
    return VKATTN_SUCCESS;
}

/* The open-model options of a desc (vkattn_mha_desc's and vkattn_gqa_desc's
 * fields of the same names) into d, checked; head is d's per-head width. */
typedef struct open_model_options {
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} open_model_options;

#define OPEN_MODEL_OPTIONS(desc)                                                                  \
    ((open_model_options){(desc)->use_qk_norm, (desc)->qk_norm_epsilon, (desc)->use_rope,       \
                          (desc)->rope, (desc)->softcap, (desc)->use_sinks})

/* Written so that NaN fails too. */
static vkattn_result resolve_open_model(struct vkattn_context *ctx, const char *caller,
                                        const char *head_name, const open_model_options *o,
                                        vka_mha_dims *d)
{
    vkattn_result r;
    float eps;
    if ((r = vka_check_norm_epsilon(ctx, caller, "desc->qk_norm_epsilon", o->qk_norm_epsilon,
                                    &eps)))
        return r;
    if (!(o->softcap >= 0.0f && o->softcap <= 3.0e38f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->softcap is %g; must be finite and >= 0 (0 = off)", caller,
                        (double)o->softcap);
    vkattn_rope_params rope = {0};
    if (o->use_rope &&
        (r = vka_resolve_rope(ctx, caller, "desc", &o->rope, d->key_dim, head_name, &rope)))
        return r;
    d->use_qk_norm = o->use_qk_norm;
    d->qk_norm_epsilon = eps;
    d->use_rope = o->use_rope;
    d->rope = rope;
    d->softcap = o->softcap;
    d->use_sinks = o->use_sinks;
    return VKATTN_SUCCESS;
}

/* Written so that NaN fails too. */
vkattn_result vka_mha_resolve_desc(struct vkattn_context *ctx, const char *caller,
                                   const vkattn_mha_desc *desc, vka_mha_dims *out)
{
    vkattn_result r;
    if (!desc)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", caller);
    if ((r = require(ctx, caller, "desc->num_heads", desc->num_heads)) ||
        (r = require(ctx, caller, "desc->key_dim", desc->key_dim)) ||
        (r = require(ctx, caller, "desc->query_width", desc->query_width)) ||
        (r = require(ctx, caller, "desc->value_width", desc->value_width)))
        return r;
    if ((r = vka_check_dropout_rate(ctx, caller, "desc->dropout", desc->dropout)) ||
        (r = vka_check_initializer(ctx, caller, "desc->kernel_initializer",
                                   desc->kernel_initializer)) ||
        (r = vka_check_initializer(ctx, caller, "desc->bias_initializer",
                                   desc->bias_initializer)))
        return r;
    vka_mha_dims d = {
        .heads = desc->num_heads,
        .kv_heads = desc->num_heads,
        .key_dim = desc->key_dim,
        .value_dim = vka_default_u32(desc->value_dim, desc->key_dim),
        .query_dim = desc->query_width,
        .key_width = vka_default_u32(desc->key_width, desc->value_width),
        .value_width = desc->value_width,
        .output_dim = vka_default_u32(desc->output_dim, desc->query_width),
        .use_bias = !desc->no_bias,
        .dropout = desc->dropout,
        .sliding_window = desc->sliding_window,
        .use_gate = desc->use_gate,
        .init = {desc->kernel_initializer, desc->bias_initializer, desc->initializer_seed},
    };
    if ((r = resolve_widths(ctx, caller, &d)) ||
        (r = resolve_open_model(ctx, caller, "desc->key_dim", &OPEN_MODEL_OPTIONS(desc), &d)))
        return r;
    *out = d;
    return VKATTN_SUCCESS;
}

vkattn_result vka_gqa_resolve_desc(struct vkattn_context *ctx, const char *caller,
                                   const vkattn_gqa_desc *desc, vka_mha_dims *out)
{
    vkattn_result r;
    if (!desc)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", caller);
    if ((r = require(ctx, caller, "desc->head_dim", desc->head_dim)) ||
        (r = require(ctx, caller, "desc->num_query_heads", desc->num_query_heads)) ||
        (r = require(ctx, caller, "desc->num_key_value_heads", desc->num_key_value_heads)) ||
        (r = require(ctx, caller, "desc->query_width", desc->query_width)) ||
        (r = require(ctx, caller, "desc->value_width", desc->value_width)))
        return r;
    if (desc->num_query_heads % desc->num_key_value_heads)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->num_query_heads (%u) is not a multiple of "
                        "desc->num_key_value_heads (%u)",
                        caller, desc->num_query_heads, desc->num_key_value_heads);
    if (desc->sliding_window < 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->sliding_window is %d; must be >= 1 (0 = None)", caller,
                        (int)desc->sliding_window);
    if ((r = vka_check_dropout_rate(ctx, caller, "desc->dropout", desc->dropout)) ||
        (r = vka_check_initializer(ctx, caller, "desc->kernel_initializer",
                                   desc->kernel_initializer)) ||
        (r = vka_check_initializer(ctx, caller, "desc->bias_initializer",
                                   desc->bias_initializer)))
        return r;
    vka_mha_dims d = {
        .heads = desc->num_query_heads,
        .kv_heads = desc->num_key_value_heads,
        .key_dim = desc->head_dim,
        .value_dim = desc->head_dim,
        .query_dim = desc->query_width,
        .key_width = vka_default_u32(desc->key_width, desc->value_width),
        .value_width = desc->value_width,
        .output_dim = desc->query_width, /* Keras: the output has the query's width */
        .use_bias = !desc->no_bias,
        .dropout = desc->dropout,
        .sliding_window = (uint32_t)desc->sliding_window,
        .use_gate = desc->use_gate,
        .init = {desc->kernel_initializer, desc->bias_initializer, desc->initializer_seed},
    };
    if ((r = resolve_widths(ctx, caller, &d)) ||
        (r = resolve_open_model(ctx, caller, "desc->head_dim", &OPEN_MODEL_OPTIONS(desc), &d)))
        return r;
    *out = d;
    return VKATTN_SUCCESS;
}

void vka_mha_weight_counts_of(const vka_mha_dims *d, vka_mha_weight_counts *out)
{
    *out = (vka_mha_weight_counts){
        .query_kernel = (uint64_t)d->query_dim * d->qk,
        .key_kernel = (uint64_t)d->key_width * d->kv_qk,
        .value_kernel = (uint64_t)d->value_width * d->kv_hv,
        .output_kernel = (uint64_t)d->hv * d->output_dim,
        .query_bias = d->qk,
        .key_bias = d->kv_qk,
        .value_bias = d->kv_hv,
        .output_bias = d->output_dim,
        .gate_kernel = d->use_gate ? (uint64_t)d->query_dim * d->hv : 0,
        .gate_bias = d->use_gate ? d->hv : 0,
    };
}

/* *out = a * b * c, overflow-checked */
static bool count3(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    const uint64_t dims[3] = {a, b, c};
    return vka_product_u64(dims, 3, out);
}

vkattn_result vka_mha_resolve_call(struct vkattn_context *ctx, const char *caller,
                                   const vka_mha_dims *d, const vkattn_layer_call *call,
                                   vka_mha_call *out)
{
    /* the rules every layer shares (sizes, causal, path) */
    vkattn_result r = vka_layer_check_call(ctx, caller, call);
    if (r)
        return r;
    const uint64_t B = call->batch, Tq = call->tq, Tv = call->tv;
    vka_mha_call c = {
        .batch = call->batch,
        .tq = call->tq,
        .tv = call->tv,
        .causal = call->causal,
        .dropout_active = call->training && d->dropout > 0.0f,
        .query_mask = B * Tq, /* two uint32 factors: cannot overflow */
        .value_mask = B * Tv,
    };
    uint64_t bh;
    if (!count3(B, Tq, d->query_dim, &c.query) || !count3(B, Tv, d->key_width, &c.key) ||
        !count3(B, Tv, d->value_width, &c.value) || !count3(B, Tq, d->output_dim, &c.output) ||
        !count3(B, Tq, Tv, &c.mask_shared) || !vka_mul_u64(B, d->heads, &bh) ||
        !count3(bh, Tq, Tv, &c.mask_per_head) || !count3(B, Tq, d->qk, &c.q_proj) ||
        !count3(B, Tv, d->kv_qk, &c.k_proj) || !count3(B, Tv, d->kv_hv, &c.v_proj) ||
        !count3(B, Tq, d->hv, &c.context))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: a tensor of batch %u, tq %u, tv %u overflows 64 bits", caller,
                        call->batch, call->tq, call->tv);
    *out = c;
    return VKATTN_SUCCESS;
}

void vka_mha_sdpa_params(const vka_mha_dims *d, const vka_mha_call *c,
                         const vkattn_layer_call *call, bool has_value_mask,
                         const vkattn_broadcast *mask, vkattn_sdpa_params *out)
{
    *out = (vkattn_sdpa_params){
        .batch = c->batch,
        .heads = d->heads,
        .kv_heads = d->kv_heads,
        .tq = c->tq,
        .tv = c->tv,
        .dk = d->key_dim,
        .dv = d->value_dim,
        .scale = 0.0f, /* 1/sqrt(key_dim): Keras scales Q, the same up to rounding */
        .mask =
            {
                .causal = c->causal,
                .masked_row = VKATTN_MASKED_ROW_ZERO,
                .has_value_mask = has_value_mask,
                .has_mask = mask != NULL,
                .mask_broadcast = mask ? *mask : (vkattn_broadcast){0},
            },
        .dropout =
            {
                .rate = d->dropout,
                .training = call->training,
                .seed = call->seed,
                .offset = call->offset,
            },
        .return_weights = call->return_attention_scores,
        .weights_after_dropout = false, /* Keras MHA returns scores before dropout */
        .path = call->path,
        .sliding_window = d->sliding_window,
        .softcap = d->softcap,
        .has_sinks = d->use_sinks,
    };
}
