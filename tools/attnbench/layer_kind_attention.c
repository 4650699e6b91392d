/* Keras Attention (Luong) in attnbench: its descriptor (layer_kind.h). */
#include "case_params.h"
#include "layer_bench.h"
#include "layer_kind_calls.h"

#include <math.h>

AB_LAYER_KIND_CALLS(att, attention)

static uint32_t weight_slots(const ab_layer_desc *d, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    (void)d; /* both scalars are always there */
    s[0] = ab_weight_slot_of("scale", true, 0, 0, 0, 0);
    s[1] = ab_weight_slot_of("concat_score_weight", true, 0, 0, 0, 0);
    return 2;
}

static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    vkattn_attention_weight_tensors gw = {w[0], w[1]};
    return vkattn_attention_backward_record(l->handle.att, cmd, call, io, g, &gw);
}

/* The scalars' gradients are always written by the reference. */
static vkattn_result reference_backward(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g, float *const w[])
{
    vkattn_attention_weights gw = {0};
    vkattn_result r = vkattn_reference_attention_backward(&l->desc.att, &l->w.att, call, io,
                                                          grad_output, g, &gw);
    if (!r && w[0])
        w[0][0] = gw.scale;
    if (!r && w[1])
        w[1][0] = gw.concat_score_weight;
    return r;
}

static void use_dtype(ab_layer_desc *d, ab_layer_weights *w, ab_rounder *r)
{
    d->att.dtype = r->dtype;
    ab_round_values(r, &w->att.scale, 1);
    ab_round_values(r, &w->att.concat_score_weight, 1);
}

static bool parse_params(ab_case *c, json_t *params, char *err, size_t err_size)
{
    bool use_scale;
    double scale = 1.0, csw = 1.0;
    if (!AB_KNOWN(params, "params.", "Attention's params", "use_scale", "score_mode", "scale",
                  "concat_score_weight", "dropout", AB_WEIGHTS_FILE_KEYS))
        return false;
    static const char *const modes[] = {"dot", "concat"}; /* as vkattn_score_mode */
    uint32_t mode = 0;
    if (!ab_case_choice(params, "score_mode", modes, 2, &mode,
                        "params.score_mode: must be \"dot\" or \"concat\"", err, err_size))
        return false;
    const vkattn_score_mode sm = (vkattn_score_mode)mode;
    if (!ab_case_bool(params, "use_scale", false, &use_scale, err, err_size) ||
        !ab_case_number(params, "scale", 1.0, &scale, "params.scale", err, err_size) ||
        !ab_case_number(params, "concat_score_weight", 1.0, &csw, "params.concat_score_weight", err,
                        err_size))
        return false;
    c->desc.att = (vkattn_attention_desc){
        .query_width = c->dq, .value_width = c->dv, .key_width = c->key.data ? c->dk : 0,
        .use_scale = use_scale, .score_mode = sm};
    c->w.att = (vkattn_attention_weights){(float)scale, (float)csw};
    ab_weights_source src = ab_case_weights_file(c, params, "scale", "concat_score_weight",
                                                 &c->desc.att.dropout, err, err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src == AB_WEIGHTS_FROM_FILE;
    return ab_case_dropout(params, &c->desc.att.dropout, err, err_size);
}

/* ------------------------------------------------------------ bench */

static void bench_desc(const ab_layer_bench *b, ab_layer_desc *d)
{
    d->att = (vkattn_attention_desc){
        .query_width = b->d.dk, .key_width = b->d.dk, .value_width = b->d.dv, .use_scale = true,
        .dropout = b->dropout, .dtype = b->dtype};
}

static bool bench_weights(const ab_layer_bench *b, ab_layer_weights *w, ab_weight_maker *m)
{
    /* the scale SDPA would use keeps the softmax from saturating */
    w->att = (vkattn_attention_weights){(float)(1.0 / sqrt(b->d.dk)), 1.0f};
    m->floats = 1;
    return true;
}

static void bench_flops(const ab_layer_bench *b, double *proj, double *core)
{
    const ab_dims *d = &b->d;
    *proj = 0;
    *core = 2.0 * d->batch * d->tq * d->tv * ((double)d->dk + d->dv);
}

const ab_layer_kind_info ab_layer_kind_attention = {
    AB_LAYER_KIND_ENTRIES(AB_LAYER_ATTENTION, "Attention", NULL, "attention"),
    .weights_free = NULL, /* scalars */
    .sdpa_path = true,
};
