/* Keras AdditiveAttention in attnbench: its descriptor (layer_kind.h). */
#include "case_params.h"
#include "layer_bench.h"
#include "layer_kind_calls.h"

#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

AB_LAYER_KIND_CALLS(add, additive_attention)

static uint32_t weight_slots(const ab_layer_desc *d, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    s[0] = ab_weight_slot_of("scale", !d->add.no_scale, 1, d->add.query_width, 0, 0);
    return 1;
}

static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    vkattn_additive_attention_weight_tensors gw = {w[0]};
    return vkattn_additive_attention_backward_record(l->handle.add, cmd, call, io, g, &gw);
}

static vkattn_result reference_backward(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g, float *const w[])
{
    vkattn_additive_attention_weights gw = {w[0]};
    return vkattn_reference_additive_attention_backward(&l->desc.add, &l->w.add, call, io,
                                                        grad_output, g, &gw);
}

static void weights_free(ab_layer_weights *w) { vkattn_additive_attention_weights_free(&w->add); }

static void use_dtype(ab_layer_desc *d, ab_layer_weights *w, ab_rounder *r)
{
    d->add.dtype = r->dtype;
    if (!d->add.no_scale)
        ab_round_values(r, w->add.scale, d->add.query_width);
}

static bool parse_params(ab_case *c, json_t *params, char *err, size_t err_size)
{
    bool use_scale;
    if (!AB_KNOWN(params, "params.", "AdditiveAttention's params", "use_scale", "scale", "dropout",
                  AB_WEIGHTS_FILE_KEYS))
        return false;
    if (!ab_case_bool(params, "use_scale", true, &use_scale, err, err_size))
        return false;
    c->desc.add = (vkattn_additive_attention_desc){
        .query_width = c->dq, .value_width = c->dv, .key_width = c->key.data ? c->dk : 0,
        .no_scale = !use_scale};
    ab_weights_source src =
        ab_case_weights_file(c, params, "scale", NULL, &c->desc.add.dropout, err, err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src == AB_WEIGHTS_FROM_FILE;
    if (use_scale) {
        /* the variable `scale`, a (Dq,) vector; Keras starts it at random */
        ab_nd *a = &c->warr[0];
        if (!ab_nd_parse(json_object_get(params, "scale"), "params.scale", a, err, err_size))
            return false;
        if (!a->data)
            return FAIL("params.scale: required with use_scale (Keras initializes it at random)");
        if (!ab_nd_expect_shape(a, "params.scale", 1, &c->dq, "(Dq,)", true, err, err_size))
            return false;
        c->w.add.scale = a->data;
    }
    return ab_case_dropout(params, &c->desc.add.dropout, err, err_size);
}

/* ------------------------------------------------------------ bench */

static void bench_desc(const ab_layer_bench *b, ab_layer_desc *d)
{
    d->add = (vkattn_additive_attention_desc){
        .query_width = b->d.dk, .key_width = b->d.dk, .value_width = b->d.dv,
        .dropout = b->dropout, .dtype = b->dtype};
}

static bool bench_weights(const ab_layer_bench *b, ab_layer_weights *w, ab_weight_maker *m)
{
    return (w->add.scale = m->make(m, 0, b->d.dk, b->d.dk)) != NULL;
}

/* as Attention's: the scores' and the weighted sum's multiply-adds */
static void bench_flops(const ab_layer_bench *b, double *proj, double *core)
{
    ab_layer_kind_attention.bench_flops(b, proj, core);
}

const ab_layer_kind_info ab_layer_kind_additive = {
    AB_LAYER_KIND_ENTRIES(AB_LAYER_ADDITIVE, "AdditiveAttention", NULL, "additive_attention"),
    .weights_free = weights_free,
};
