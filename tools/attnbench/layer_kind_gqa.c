/* Keras GroupedQueryAttention in attnbench: its descriptor (layer_kind.h). */
#include "case_multihead.h"
#include "layer_bench.h"
#include "layer_kind_calls.h"
#include "layer_kind_multihead.h"

#include <stdio.h>

#define FAIL(...) ab_case_fail(err, err_size, __VA_ARGS__)

AB_LAYER_KIND_CALLS(gqa, gqa)
AB_MULTIHEAD_KIND_CALLS(gqa, gqa)

static uint32_t weight_slots(const ab_layer_desc *desc, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const vkattn_gqa_desc *d = &desc->gqa;
    const ab_multihead_shape m = {
        AB_MULTIHEAD_SHAPE_COMMON(d), .output_width = d->query_width,
        .query_heads = d->num_query_heads, .key_value_heads = d->num_key_value_heads,
        .key_dim = d->head_dim, .value_dim = d->head_dim};
    return ab_multihead_weight_slots(&m, s);
}

/* GroupedQueryAttention: head_dim, num_query_heads, num_key_value_heads,
 * use_bias, sliding_window, dropout; weights named as Keras's, the key and
 * value ones with num_key_value_heads heads; output width = Dq. */
static bool parse_params(ab_case *c, json_t *params, char *err, size_t err_size)
{
    uint32_t hd, nq, nkv, window;
    bool use_bias, use_gate;
    ab_open_model o;
    if (!AB_KNOWN(params, "params.", "GroupedQueryAttention's params", "head_dim",
                  "num_query_heads", "num_key_value_heads", "use_bias", "use_gate",
                  "sliding_window", "weights", "dropout", AB_OPEN_MODEL_KEYS,
                  AB_WEIGHTS_FILE_KEYS))
        return false;
    if (!ab_case_uint(params, "head_dim", true, 0, 1, &hd, "params.head_dim", err, err_size) ||
        !ab_case_uint(params, "num_query_heads", true, 0, 1, &nq, "params.num_query_heads", err,
                      err_size) ||
        !ab_case_uint(params, "num_key_value_heads", true, 0, 1, &nkv, "params.num_key_value_heads",
                      err, err_size) ||
        !ab_case_bool(params, "use_bias", true, &use_bias, err, err_size) ||
        !ab_case_bool(params, "use_gate", false, &use_gate, err, err_size) ||
        !ab_case_uint(params, "sliding_window", false, 0, 1, &window, "params.sliding_window", err,
                      err_size) ||
        !ab_open_model_parse(params, "head_dim", hd, &o, err, err_size))
        return false;
    if (nq % nkv)
        return FAIL("params.num_query_heads (%u) must be a multiple of "
                    "params.num_key_value_heads (%u)", nq, nkv);
    c->heads = nq;
    c->dout = c->dq;
    uint32_t kw = c->key.data ? c->dk : c->dv;
    c->desc.gqa = (vkattn_gqa_desc){
        .head_dim = hd, .num_query_heads = nq, .num_key_value_heads = nkv,
        .query_width = c->dq, .key_width = c->key.data ? c->dk : 0, .value_width = c->dv,
        .no_bias = !use_bias, .sliding_window = (int32_t)window, .use_gate = use_gate};
    AB_OPEN_MODEL_SET(&c->desc.gqa, o);
    json_t *w = NULL;
    ab_weights_source src =
        ab_multihead_weights(c, params, "GroupedQueryAttention", use_bias, use_gate, &o, hd, nq,
                             &c->w.gqa, &c->desc.gqa.dropout, &w, err, err_size);
    if (src != AB_WEIGHTS_INLINE)
        return src == AB_WEIGHTS_FROM_FILE;
    vkattn_gqa_weights *m = &c->w.gqa;
    uint32_t qk[3] = {c->dq, nq, hd}, kk[3] = {kw, nkv, hd}, vk[3] = {c->dv, nkv, hd};
    uint32_t ok[3] = {nq, hd, c->dq}, qb[2] = {nq, hd}, kvb[2] = {nkv, hd};
    if (!(m->query_kernel = ab_case_weight(c, w, "query_kernel", 0, 3, qk,
                                           "(Dq, num_query_heads, head_dim)", false, err,
                                           err_size)) ||
        !(m->key_kernel = ab_case_weight(c, w, "key_kernel", 1, 3, kk,
                                         "(Dk, num_key_value_heads, head_dim)", false, err,
                                         err_size)) ||
        !(m->value_kernel = ab_case_weight(c, w, "value_kernel", 2, 3, vk,
                                           "(Dv, num_key_value_heads, head_dim)", false, err,
                                           err_size)) ||
        !(m->output_kernel = ab_case_weight(c, w, "output_kernel", 3, 3, ok,
                                            "(num_query_heads, head_dim, Dq)", false, err,
                                            err_size)))
        return false;
    if (use_bias &&
        (!(m->query_bias = ab_case_weight(c, w, "query_bias", 4, 2, qb,
                                          "(num_query_heads, head_dim)", false, err, err_size)) ||
         !(m->key_bias = ab_case_weight(c, w, "key_bias", 5, 2, kvb,
                                        "(num_key_value_heads, head_dim)", false, err, err_size)) ||
         !(m->value_bias = ab_case_weight(c, w, "value_bias", 6, 2, kvb,
                                          "(num_key_value_heads, head_dim)", false, err,
                                          err_size)) ||
         !(m->output_bias = ab_case_weight(c, w, "output_bias", 7, 1, &c->dq, "(Dq,)", false, err,
                                           err_size))))
        return false;
    if (use_gate &&
        (!(m->gate_kernel = ab_case_weight(c, w, "gate_kernel", 8, 3, qk,
                                           "(Dq, num_query_heads, head_dim)", false, err,
                                           err_size)) ||
         (use_bias && !(m->gate_bias = ab_case_weight(c, w, "gate_bias", 9, 2, qb,
                                                      "(num_query_heads, head_dim)", false, err,
                                                      err_size)))))
        return false;
    return ab_case_dropout(params, &c->desc.gqa.dropout, err, err_size);
}

/* Keras's None is 0 here, as MultiHeadAttention's (the desc's is signed) */
static uint32_t sliding_window(const ab_layer_desc *d)
{
    return d->gqa.sliding_window > 0 ? (uint32_t)d->gqa.sliding_window : 0;
}
static bool uses_rope(const ab_layer_desc *d) { return d->gqa.use_rope; }

/* ------------------------------------------------------------ bench */

/* --dk is head_dim; the widths fit 32 bits (layer_check_args in ops_layers.c) */
static void bench_desc(const ab_layer_bench *b, ab_layer_desc *desc)
{
    const ab_dims *d = &b->d;
    desc->gqa = (vkattn_gqa_desc){
        .head_dim = d->dk, .num_query_heads = d->heads, .num_key_value_heads = b->kv_heads,
        .query_width = b->dmodel, .value_width = b->dmodel, .dropout = b->dropout,
        .sliding_window = (int32_t)b->window, .use_gate = b->gate, .dtype = b->dtype,
        .use_qk_norm = b->qk_norm, .use_rope = b->rope, .rope = b->rope_params,
        .softcap = b->softcap, .use_sinks = b->sinks};
}

static bool bench_weights(const ab_layer_bench *b, ab_layer_weights *weights, ab_weight_maker *m)
{
    const uint32_t Q = b->d.heads * b->d.dk, KV = b->kv_heads * b->d.dk;
    const ab_multihead_widths widths = {
        .query = Q, .key = KV, .value = KV, .output_in = Q, .gate = Q};
    return ab_multihead_bench_weights(b, &widths, &weights->gqa, m);
}

/* --kv-heads (default --heads) must divide --heads; the value's head width
 * is head_dim. */
static int bench_sizes(const ab_args *a, ab_layer_bench *b)
{
    ab_dims *d = &b->d;
    d->dv = d->dk; /* head_dim */
    b->kv_heads = (a->given & AB_F_KV_HEADS) ? a->kv_heads : d->heads;
    if (!b->kv_heads || d->heads % b->kv_heads) {
        fprintf(stderr, "attnbench: gqa: --kv-heads must divide --heads (%u)\n", d->heads);
        return ATTNBENCH_EXIT_USAGE;
    }
    return ATTNBENCH_EXIT_OK;
}

static bool bench_widths_fit(const char *name, const ab_layer_bench *b)
{
    const ab_factor H = {"--heads", b->d.heads}, G = {"--kv-heads", b->kv_heads},
                    Dk = {"--dk", b->d.dk};
    return AB_WIDTH_FITS(name, "the query heads' width", H, Dk) &&
           AB_WIDTH_FITS(name, "the key/value heads' width", G, Dk);
}

/* the key and value kernels: Nkv <= Nq heads */
static bool bench_kernels_fit(const char *name, const ab_layer_bench *b)
{
    const ab_factor D = {"--dmodel", b->dmodel}, H = {"--heads", b->d.heads},
                    Dk = {"--dk", b->d.dk};
    return AB_FITS(name, "query_kernel", D, H, Dk);
}

static void bench_flops(const ab_layer_bench *b, double *proj, double *core)
{
    const ab_dims *d = &b->d;
    double B = d->batch, Tq = d->tq, Tv = d->tv, dk = d->dk;
    double H = d->heads, G = b->kv_heads, D = b->dmodel;
    *proj = 2 * B * D * dk * (2 * Tq * H + 2 * Tv * G);
    if (b->gate)
        *proj += 2 * B * Tq * D * H * dk;
    *core = 2 * B * H * Tq * Tv * 2 * dk;
}

const ab_layer_kind_info ab_layer_kind_gqa = {
    AB_LAYER_KIND_ENTRIES(AB_LAYER_GQA, "GroupedQueryAttention", "GroupQueryAttention", "gqa"),
    .weights_free = weights_free, .multi_head = true,
    .zero_grad_slots = 1u << 3, /* key_bias: softmax ignores a shift along the keys */
    .sliding_window = sliding_window, .uses_rope = uses_rope, .sdpa_path = true,
    .bench_kernels_fit = bench_kernels_fit, .bench_sizes = bench_sizes,
    .bench_widths_fit = bench_widths_fit,
};
