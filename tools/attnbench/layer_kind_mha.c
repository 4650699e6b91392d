/* Keras MultiHeadAttention in attnbench: its descriptor (layer_kind.h). */
#include "case_multihead.h"
#include "layer_bench.h"
#include "layer_kind_calls.h"
#include "layer_kind_multihead.h"

#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

AB_LAYER_KIND_CALLS(mha, mha)
AB_MULTIHEAD_KIND_CALLS(mha, mha)

static uint32_t weight_slots(const ab_layer_desc *desc, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const vkattn_mha_desc *d = &desc->mha;
    const ab_multihead_shape m = {
        AB_MULTIHEAD_SHAPE_COMMON(d),
        .output_width = d->output_dim ? d->output_dim : d->query_width,
        .query_heads = d->num_heads, .key_value_heads = d->num_heads, .key_dim = d->key_dim,
        .value_dim = d->value_dim ? d->value_dim : d->key_dim};
    return ab_multihead_weight_slots(&m, s);
}

static bool parse_params(ab_case *c, json_t *params, char *err, size_t err_size)
{
    uint32_t H, kd, vd, dout, window;
    bool use_bias, use_gate;
    ab_open_model o;
    if (!AB_KNOWN(params, "params.", "MultiHeadAttention's params", "num_heads", "key_dim",
                  "value_dim", "output_shape", "use_bias", "use_gate", "sliding_window", "weights",
                  "dropout", AB_OPEN_MODEL_KEYS, AB_WEIGHTS_FILE_KEYS))
        return false;
    if (!ab_case_uint(params, "num_heads", true, 0, 1, &H, "params.num_heads", err, err_size) ||
        !ab_case_uint(params, "key_dim", true, 0, 1, &kd, "params.key_dim", err, err_size) ||
        !ab_case_uint(params, "value_dim", false, kd, 1, &vd, "params.value_dim", err, err_size) ||
        !ab_case_uint(params, "output_shape", false, c->dq, 1, &dout, "params.output_shape", err,
                      err_size) ||
        !ab_case_bool(params, "use_bias", true, &use_bias, err, err_size) ||
        !ab_case_bool(params, "use_gate", false, &use_gate, err, err_size) ||
        /* Keras sliding_window: null (None) or a positive integer */
        !ab_case_uint(params, "sliding_window", false, 0, 1, &window, "params.sliding_window", err,
                      err_size) ||
        !ab_open_model_parse(params, "key_dim", kd, &o, err, err_size))
        return false;
    c->heads = H;
    c->dout = dout;
    uint32_t kw = c->key.data ? c->dk : c->dv;
    c->desc.mha = (vkattn_mha_desc){
        .num_heads = H, .key_dim = kd, .value_dim = vd, .query_width = c->dq,
        .key_width = c->key.data ? c->dk : 0, .value_width = c->dv, .output_dim = dout,
        .no_bias = !use_bias, .sliding_window = window, .use_gate = use_gate};
    AB_OPEN_MODEL_SET(&c->desc.mha, o);
    json_t *w = NULL;
    ab_weights_source src =
        ab_multihead_weights(c, params, "MultiHeadAttention", use_bias, use_gate, &o, kd, H,
                             &c->w.mha, &c->desc.mha.dropout, &w, err, err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src == AB_WEIGHTS_FROM_FILE;
    vkattn_mha_weights *m = &c->w.mha;
    uint32_t qk[3] = {c->dq, H, kd}, kk[3] = {kw, H, kd}, vk[3] = {c->dv, H, vd};
    uint32_t ok[3] = {H, vd, dout}, hk[2] = {H, kd}, hv[2] = {H, vd};
    if (!(m->query_kernel = ab_case_weight(c, w, "query_kernel", 0, 3, qk,
                                           "(Dq, num_heads, key_dim)", false, err, err_size)) ||
        !(m->key_kernel = ab_case_weight(c, w, "key_kernel", 1, 3, kk, "(Dk, num_heads, key_dim)",
                                         false, err, err_size)) ||
        !(m->value_kernel = ab_case_weight(c, w, "value_kernel", 2, 3, vk,
                                           "(Dv, num_heads, value_dim)", false, err, err_size)) ||
        !(m->output_kernel = ab_case_weight(c, w, "output_kernel", 3, 3, ok,
                                            "(num_heads, value_dim, output width)", false, err,
                                            err_size)))
        return false;
    if (use_bias &&
        (!(m->query_bias = ab_case_weight(c, w, "query_bias", 4, 2, hk, "(num_heads, key_dim)",
                                          false, err, err_size)) ||
         !(m->key_bias = ab_case_weight(c, w, "key_bias", 5, 2, hk, "(num_heads, key_dim)", false,
                                        err, err_size)) ||
         !(m->value_bias = ab_case_weight(c, w, "value_bias", 6, 2, hv, "(num_heads, value_dim)",
                                          false, err, err_size)) ||
         !(m->output_bias = ab_case_weight(c, w, "output_bias", 7, 1, &dout, "(output width,)",
                                           false, err, err_size))))
        return false;
    uint32_t gk[3] = {c->dq, H, vd};
    if (use_gate &&
        (!(m->gate_kernel = ab_case_weight(c, w, "gate_kernel", 8, 3, gk,
                                           "(Dq, num_heads, value_dim)", false, err, err_size)) ||
         (use_bias && !(m->gate_bias = ab_case_weight(c, w, "gate_bias", 9, 2, hv,
                                                      "(num_heads, value_dim)", false, err,
                                                      err_size)))))
        return false;
    return ab_case_dropout(params, &c->desc.mha.dropout, err, err_size);
}

static uint32_t sliding_window(const ab_layer_desc *d) { return d->mha.sliding_window; }
static bool uses_rope(const ab_layer_desc *d) { return d->mha.use_rope; }

/* ------------------------------------------------------------ bench */

static void bench_desc(const ab_layer_bench *b, ab_layer_desc *desc)
{
    const ab_dims *d = &b->d;
    desc->mha = (vkattn_mha_desc){
        .num_heads = d->heads, .key_dim = d->dk, .value_dim = d->dv, .query_width = b->dmodel,
        .key_width = b->dmodel, .value_width = b->dmodel, .output_dim = b->dmodel,
        .dropout = b->dropout, .sliding_window = b->window, .use_gate = b->gate,
        .dtype = b->dtype, .use_qk_norm = b->qk_norm, .use_rope = b->rope,
        .rope = b->rope_params, .softcap = b->softcap, .use_sinks = b->sinks};
}

static bool bench_weights(const ab_layer_bench *b, ab_layer_weights *weights, ab_weight_maker *m)
{
    const ab_dims *d = &b->d;
    const size_t hk = (size_t)d->heads * d->dk, hv = (size_t)d->heads * d->dv;
    const ab_multihead_widths widths = {
        .query = hk, .key = hk, .value = hv, .output_in = hv, .gate = hv};
    return ab_multihead_bench_weights(b, &widths, &weights->mha, m);
}

static bool bench_kernels_fit(const char *name, const ab_layer_bench *b)
{
    const ab_factor D = {"--dmodel", b->dmodel}, H = {"--heads", b->d.heads},
                    Dk = {"--dk", b->d.dk}, Dv = {"--dv", b->d.dv};
    return AB_FITS(name, "query_kernel", D, H, Dk) && AB_FITS(name, "value_kernel", D, H, Dv);
}

static void bench_flops(const ab_layer_bench *b, double *proj, double *core)
{
    const ab_dims *d = &b->d;
    double B = d->batch, Tq = d->tq, Tv = d->tv, dk = d->dk, dv = d->dv;
    double H = d->heads, D = b->dmodel;
    *proj = 2 * B * D * H * (Tq * dk + Tv * dk + Tv * dv + Tq * dv);
    if (b->gate) /* the gate's projection of the query */
        *proj += 2 * B * Tq * D * H * dv;
    *core = 2 * B * H * Tq * Tv * (dk + dv);
}

const ab_layer_kind_info ab_layer_kind_mha = {
    AB_LAYER_KIND_ENTRIES(AB_LAYER_MHA, "MultiHeadAttention", NULL, "mha"),
    .weights_free = weights_free, .multi_head = true,
    .zero_grad_slots = 1u << 3, /* key_bias: softmax ignores a shift along the keys */
    .sliding_window = sliding_window, .uses_rope = uses_rope, .sdpa_path = true,
    .bench_kernels_fit = bench_kernels_fit,
};
