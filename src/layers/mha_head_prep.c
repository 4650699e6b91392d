/* MultiHeadAttention/GQA: QK-norm and the rotary embedding of the query and
 * key heads right after the head split (ops/head_prep.h), so that both SDPA
 * paths, the cached path and the f16 layer read prepared heads; their
 * backward; and the checks of io->query_positions and io->key_positions. */
#include <stdlib.h>

#include "vkattn/heads.h"
#include "vkattn/matmul.h"

#include "core/error.h"
#include "layers/mha_internal.h"
#include "ops/head_prep.h"
#include "vk/tensor.h"

static vka_head_prep_params params_of(const vkattn_mha *layer, bool key, uint32_t batch,
                                      uint32_t seq);

bool vka_mha_has_head_prep(const vkattn_mha *layer)
{
    return layer->d.use_qk_norm || layer->d.use_rope;
}

static vkattn_result check_one(vkattn_mha *layer, const char *fn, const char *name,
                               const vkattn_tensor *pos, const vkattn_layer_io *io,
                               uint64_t count)
{
    if (!pos)
        return VKATTN_SUCCESS;
    if (!layer->d.use_rope)
        return vka_fail(layer->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is given but desc->use_rope is false (positions only turn the "
                        "rotary embedding)",
                        fn, name);
    if (pos == io->output || pos == io->scores)
        return vka_fail(layer->ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s aliases an output",
                        fn, name);
    /* the values themselves are read on the device: non-negative integers
     * are the caller's to give (the reference checks them) */
    return vka_tensor_check(layer->ctx, pos, count, fn, name);
}

vkattn_result vka_mha_check_positions(vkattn_mha *layer, const char *fn,
                                      const vkattn_layer_io *io, const vka_mha_call *c)
{
    vkattn_result r = check_one(layer, fn, "io->query_positions (B, Tq) f32",
                                io->query_positions, io, (uint64_t)c->batch * c->tq);
    return r ? r : check_one(layer, fn, "io->key_positions (B, Tv) f32", io->key_positions,
                             io, (uint64_t)c->batch * c->tv);
}

vkattn_result vka_mha_record_head_prep(vkattn_mha *layer, VkCommandBuffer cmd, const char *fn,
                                       bool key, uint32_t batch, uint32_t seq, vkattn_tensor *x,
                                       vkattn_tensor *positions, vkattn_tensor *lengths)
{
    if (!vka_mha_has_head_prep(layer))
        return VKATTN_SUCCESS;
    const vka_head_prep_params p = params_of(layer, key, batch, seq);
    const vka_head_prep_io io = {
        .x = x, .norm = key ? layer->w.key_norm : layer->w.query_norm,
        .inv_freq = layer->rope_inv_freq, .positions = positions, .lengths = lengths,
    };
    return vka_head_prep_record(layer->ctx, cmd, fn, &p, &io);
}

static vka_head_prep_params params_of(const vkattn_mha *layer, bool key, uint32_t batch,
                                      uint32_t seq)
{
    const vka_mha_dims *d = &layer->d;
    return (vka_head_prep_params){
        .batch = batch, .heads = key ? d->kv_heads : d->heads, .seq = seq, .dim = d->key_dim,
        .use_norm = d->use_qk_norm, .eps = d->qk_norm_epsilon,
        .use_rope = d->use_rope, .rope = d->rope,
    };
}

vkattn_result vka_mha_record_head_prep_backward(vkattn_mha *layer, VkCommandBuffer cmd,
                                                const char *fn, bool key, uint32_t batch,
                                                uint32_t seq, vkattn_tensor *in,
                                                vkattn_tensor *proj_tmp, vkattn_tensor *raw,
                                                vkattn_tensor *grad, vkattn_tensor *dw_rows,
                                                vkattn_tensor *grad_norm,
                                                vkattn_tensor *positions)
{
    const vka_mha_dims *d = &layer->d;
    const vka_head_prep_params p = params_of(layer, key, batch, seq);
    vkattn_result r;
    if (d->use_qk_norm) { /* the norm's backward reads the raw heads */
        const mha_dense *dense = key ? MHA_DENSE(layer, key) : MHA_DENSE(layer, query);
        vkattn_matmul_params mp = {.m = batch * seq, .n = p.heads * d->key_dim,
                                   .k = key ? d->key_width : d->query_dim,
                                   .has_bias = dense->bias};
        vkattn_matmul_io mio = {.a = in, .b = dense->kernel, .bias = dense->bias,
                                .c = p.heads > 1 ? proj_tmp : raw};
        if ((r = vkattn_matmul_record(layer->ctx, cmd, &mp, &mio)))
            return r;
        vkattn_heads_params hp = {.batch = batch, .seq = seq, .heads = p.heads,
                                  .head_dim = d->key_dim};
        vkattn_heads_io hio = {.in = proj_tmp, .out = raw};
        if (p.heads > 1 && (r = vkattn_heads_split_record(layer->ctx, cmd, &hp, &hio)))
            return r;
    }
    const vka_head_prep_backward_io io = {
        .fwd = {.x = raw, .norm = key ? layer->w.key_norm : layer->w.query_norm,
                .inv_freq = layer->rope_inv_freq, .positions = positions},
        .grad = grad, .dw_rows = dw_rows, .grad_norm = grad_norm,
    };
    return vka_head_prep_backward_record(layer->ctx, cmd, fn, &p, &io);
}

vkattn_result vka_mha_head_prep_create(vkattn_mha *layer, const char *fn)
{
    if (!layer->d.use_rope)
        return VKATTN_SUCCESS;
    return vka_head_prep_inv_freq(layer->ctx, fn, &layer->d.rope, &layer->rope_inv_freq);
}
