/* BahdanauAttention in attnbench: its descriptor (layer_kind.h). */
#include "case_params.h"
#include "layer_bench.h"
#include "layer_kind_calls.h"

AB_LAYER_KIND_CALLS(bah, bahdanau)

static uint32_t weight_slots(const ab_layer_desc *desc, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const vkattn_bahdanau_desc *d = &desc->bah;
    uint32_t dk = d->key_width ? d->key_width : d->value_width;
    s[0] = ab_weight_slot_of("query_kernel", true, 2, d->query_width, d->units, 0);
    s[1] = ab_weight_slot_of("key_kernel", true, 2, dk, d->units, 0);
    s[2] = ab_weight_slot_of("score_kernel", true, 1, d->units, 0, 0);
    s[3] = ab_weight_slot_of("score_bias", true, 0, 0, 0, 0);
    return 4;
}

static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    vkattn_bahdanau_weight_tensors gw = {w[0], w[1], w[2], w[3]};
    return vkattn_bahdanau_backward_record(l->handle.bah, cmd, call, io, g, &gw);
}

/* score_bias is a scalar in the weights struct: copied out to its slot. */
static vkattn_result reference_backward(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g, float *const w[])
{
    vkattn_bahdanau_weights gw = {w[0], w[1], w[2], 0.0f};
    vkattn_result r = vkattn_reference_bahdanau_backward(&l->desc.bah, &l->w.bah, call, io,
                                                         grad_output, g, &gw);
    if (!r && w[3])
        w[3][0] = gw.score_bias;
    return r;
}

static void weights_free(ab_layer_weights *w) { vkattn_bahdanau_weights_free(&w->bah); }

static void use_dtype(ab_layer_desc *desc, ab_layer_weights *w, ab_rounder *r)
{
    vkattn_bahdanau_desc *d = &desc->bah;
    const size_t dk = d->key_width ? d->key_width : d->value_width;
    d->dtype = r->dtype;
    ab_round_values(r, w->bah.query_kernel, (size_t)d->query_width * d->units);
    ab_round_values(r, w->bah.key_kernel, dk * d->units);
    ab_round_values(r, w->bah.score_kernel, d->units);
    ab_round_values(r, &w->bah.score_bias, 1);
}

static bool parse_params(ab_case *c, json_t *params, char *err, size_t err_size)
{
    uint32_t units;
    double bias = 0.0;
    if (!AB_KNOWN(params, "params.", "BahdanauAttention's params", "units", "weights", "dropout",
                  AB_WEIGHTS_FILE_KEYS))
        return false;
    if (!ab_case_uint(params, "units", true, 0, 1, &units, "params.units", err, err_size))
        return false;
    uint32_t kw = c->key.data ? c->dk : c->dv;
    uint32_t q[2] = {c->dq, units}, k[2] = {kw, units};
    c->desc.bah = (vkattn_bahdanau_desc){
        .query_width = c->dq, .key_width = c->key.data ? c->dk : 0, .value_width = c->dv,
        .units = units};
    json_t *w = NULL;
    ab_weights_source src =
        ab_case_weights_object(c, params, "query_kernel, key_kernel, score_kernel",
                               &c->desc.bah.dropout, &w, err, err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src == AB_WEIGHTS_FROM_FILE;
    if (!AB_KNOWN(w, "params.weights.", "BahdanauAttention's weights", "query_kernel", "key_kernel",
                  "score_kernel", "score_bias"))
        return false;
    vkattn_bahdanau_weights *bw = &c->w.bah;
    if (!(bw->query_kernel = ab_case_weight(c, w, "query_kernel", 0, 2, q, "(Dq, units)", false,
                                            err, err_size)) ||
        !(bw->key_kernel = ab_case_weight(c, w, "key_kernel", 1, 2, k, "(Dk, units)", false, err,
                                          err_size)) ||
        !(bw->score_kernel = ab_case_weight(c, w, "score_kernel", 2, 1, &units, "(units,)", true,
                                            err, err_size)) ||
        !ab_case_number(w, "score_bias", 0.0, &bias, "params.weights.score_bias", err, err_size))
        return false;
    bw->score_bias = (float)bias;
    return ab_case_dropout(params, &c->desc.bah.dropout, err, err_size);
}

/* ------------------------------------------------------------ bench */

static void bench_desc(const ab_layer_bench *b, ab_layer_desc *d)
{
    d->bah = (vkattn_bahdanau_desc){
        .query_width = b->d.dk, .key_width = b->d.dk, .value_width = b->d.dv, .units = b->units,
        .dropout = b->dropout, .dtype = b->dtype};
}

static bool bench_weights(const ab_layer_bench *b, ab_layer_weights *weights, ab_weight_maker *m)
{
    const ab_dims *d = &b->d;
    vkattn_bahdanau_weights *w = &weights->bah;
    w->query_kernel = m->make(m, 0, (size_t)d->dk * b->units, d->dk);
    w->key_kernel = m->make(m, 1, (size_t)d->dk * b->units, d->dk);
    w->score_kernel = m->make(m, 2, b->units, b->units);
    w->score_bias = 0.25f;
    return w->query_kernel && w->key_kernel && w->score_kernel;
}

static bool bench_kernels_fit(const char *name, const ab_layer_bench *b)
{
    const ab_factor Dk = {"--dk", b->d.dk}, U = {"--units", b->units};
    return AB_FITS(name, "query_kernel", Dk, U); /* key_kernel too */
}

static void bench_flops(const ab_layer_bench *b, double *proj, double *core)
{
    const ab_dims *d = &b->d;
    double B = d->batch, Tq = d->tq, Tv = d->tv, dk = d->dk, dv = d->dv, U = b->units;
    *proj = 2 * B * (Tq + Tv) * dk * U;
    *core = 2 * B * Tq * Tv * (U + dv);
}

const ab_layer_kind_info ab_layer_kind_bahdanau = {
    AB_LAYER_KIND_ENTRIES(AB_LAYER_BAHDANAU, "BahdanauAttention", NULL, "bahdanau"),
    .weights_free = weights_free, .rank2_query = true,
    .zero_grad_slots = 1u << 3, /* score_bias: softmax ignores a shift */
    .bench_kernels_fit = bench_kernels_fit,
};
