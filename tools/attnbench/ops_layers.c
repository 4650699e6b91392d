/* attnbench bench attention | additive_attention | bahdanau | mha: the Keras
 * layers, built with random weights, called on random inputs, checked against
 * their CPU references (vkattn/layer_params.h). Every layer gets a separate
 * key tensor (cross-attention shape), so each input is counted once. */
#include "bounds.h"
#include "common.h"
#include "layer_any.h"
#include "layer_bench.h"
#include "ops.h"
#include "sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct layer_state {
    vkattn_context *ctx;
    ab_layer_any layer; /* kind, desc, weights, handle */
    ab_layer_bench b;   /* the command line's sizes and flags */
    vkattn_layer_call call;
    ab_weight_maker maker; /* make = weight(); floats: the weights' count */
    ab_rng *rng;           /* weight()'s, while the weights are drawn */
    float *warr[AB_LAYER_WEIGHTS]; /* host weight arrays the weights struct points into */
    /* --dtype f16|bf16 (--fp16): a layer of that type, query/key/value/output
     * of it; masks, scores f32 */
    vkattn_dtype dtype;
    ab_buf q, k, v, vmask, out, scores;
    ab_layer_bwd *bwd; /* --backward, --train-step: the call timed instead */
} layer_state;

static void layer_destroy(void *state)
{
    layer_state *s = state;
    if (!s)
        return;
    ab_layer_backward_destroy(s->bwd); /* before the layer it uses */
    ab_layer_any_destroy(&s->layer);
    ab_buf *bufs[] = {&s->q, &s->k, &s->v, &s->vmask, &s->out, &s->scores};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ab_buf_free(bufs[i]);
    for (size_t i = 0; i < sizeof s->warr / sizeof s->warr[0]; i++)
        free(s->warr[i]);
    free(s);
}

/* The maker's make (layer_bench.h): host weight array i of n floats, uniform
 * in +-sqrt(3 / fan_in) (unit variance through a projection, as Glorot-style
 * initializers aim for). */
static float *weight(ab_weight_maker *m, int i, size_t n, uint32_t fan_in)
{
    layer_state *s = (layer_state *)(void *)((char *)m - offsetof(layer_state, maker));
    float a = (float)sqrt(3.0 / (fan_in ? fan_in : 1));
    s->warr[i] = ab_floats(n);
    if (s->warr[i])
        ab_fill_uniform(s->rng, s->warr[i], n, -a, a);
    m->floats += n;
    return s->warr[i];
}

/* The SDPA call a dot-product layer makes, to name its path. */
static const char *layer_path(const layer_state *s)
{
    const ab_dims *d = &s->b.d;
    const ab_layer_kind_info *kind = ab_layer_kind_of(s->layer.kind);
    if (!kind->sdpa_path)
        return NULL;
    const bool mha = kind->multi_head;
    const float rate = s->b.dropout; /* the desc's (bench_desc) */
    vkattn_sdpa_params p = {
        .batch = d->batch, .heads = mha ? d->heads : 1, .kv_heads = s->b.kv_heads, .tq = d->tq, .tv = d->tv, .dk = d->dk,
        .dv = d->dv, .scale = mha ? 0.0f : s->layer.w.att.scale,
        .mask = {.causal = s->call.causal,
                 .masked_row = mha ? VKATTN_MASKED_ROW_ZERO : VKATTN_MASKED_ROW_UNIFORM,
                 .has_value_mask = s->vmask.t != NULL},
        .dropout = {.rate = rate,
                    .training = s->call.training, .seed = s->call.seed},
        .return_weights = s->call.return_attention_scores,
        .weights_after_dropout = !mha,
        .path = s->call.path,
        .sliding_window = mha ? s->b.window : 0,
        .softcap = s->b.softcap,
        .has_sinks = s->b.sinks,
    };
    return ab_sdpa_path_name(s->ctx, &p);
}

/* The sizes of the flags with their defaults (docs/ATTNBENCH.md: heads 8
 * for the multi-head layers, else 1) into l's d, kv_heads, units and dmodel;
 * a usage error (message printed) for sizes the layer cannot have. Needs no
 * device. */
static int layer_sizes_of(const ab_args *a, const ab_layer_kind_info *kind, const char *name,
                          ab_layer_bench *l)
{
    int st = ab_attention_dims(name, a, kind->multi_head ? 8 : 1, &l->d);
    if (st)
        return st;
    ab_dims *d = &l->d;
    l->kv_heads = 0;
    if (kind->bench_sizes && (st = kind->bench_sizes(a, l)))
        return st;
    if (a->rotary_dim > d->dk) { /* the head width: key_dim, GQA's head_dim */
        fprintf(stderr, "attnbench: %s: --rotary-dim %u must be <= --dk (%u)\n", name,
                a->rotary_dim, d->dk);
        return ATTNBENCH_EXIT_USAGE;
    }
    l->units = (a->given & AB_F_UNITS) ? a->units : d->dk;
    if (!(a->given & AB_F_DMODEL) && !AB_WIDTH_FITS(name, "the default --dmodel",
                                                    {"--heads", d->heads}, {"--dk", d->dk}))
        return ATTNBENCH_EXIT_USAGE;
    l->dmodel = (a->given & AB_F_DMODEL) ? a->dmodel : d->heads * d->dk;
    if (!l->units || !l->dmodel) {
        fprintf(stderr, "attnbench: %s: --units and --dmodel must be >= 1\n", name);
        return ATTNBENCH_EXIT_USAGE;
    }
    return ATTNBENCH_EXIT_OK;
}

/* The layer's sizes, and every array bench makes of them countable
 * (sizes.h), before a context is made. The value mask (B, Tv), the biases
 * and the gradients are no larger than the arrays named; the multi-head
 * layers' output kernel and gate count as their value kernel. */
static int layer_check_args(const ab_args *a, const ab_layer_kind_info *kind)
{
    const char *name = kind->bench_name;
    ab_layer_bench l = {0};
    int st = layer_sizes_of(a, kind, name, &l);
    if (st)
        return st;
    const ab_dims *d = &l.d;
    const bool mha = kind->multi_head; /* projected widths */
    const ab_factor B = {"--batch", d->batch}, H = {"--heads", d->heads}, Tq = {"--tq", d->tq},
                    Tv = {"--tv", d->tv}, Dk = {"--dk", d->dk}, Dv = {"--dv", d->dv},
                    D = {"--dmodel", l.dmodel};
    if (kind->bench_widths_fit && !kind->bench_widths_fit(name, &l))
        return ATTNBENCH_EXIT_USAGE;
    const ab_factor Win = mha ? D : Dk, Vin = mha ? D : Dv, Out = mha ? D : Dv;
    bool fit = AB_FITS(name, "the query", B, Tq, Win) && AB_FITS(name, "the key", B, Tv, Win) &&
               AB_FITS(name, "the value", B, Tv, Vin) && AB_FITS(name, "the output", B, Tq, Out) &&
               (!a->scores || (mha ? AB_FITS(name, "the scores", B, H, Tq, Tv)
                                   : AB_FITS(name, "the scores", B, Tq, Tv)));
    if (fit && kind->bench_kernels_fit)
        fit = kind->bench_kernels_fit(name, &l);
    return fit ? ATTNBENCH_EXIT_OK : ATTNBENCH_EXIT_USAGE;
}

static int layer_setup(vkattn_context *ctx, const ab_args *a, const ab_layer_kind_info *kind,
                       void **state, ab_op_info *info)
{
    const char *name = kind->bench_name;
    layer_state *s = calloc(1, sizeof *s);
    if (!s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, name);
    *state = s;
    s->ctx = ctx;
    s->layer.kind = kind->kind;
    s->dtype = a->dtype;
    const bool grads = a->backward || a->train_step;
    /* --dtype with --backward, --scores or each other: usage errors that bench's
     * check_flags refuses before a context is made; the sizes too (bench
     * checked them; the counts below rely on it) */
    const bool mha = kind->multi_head; /* projected widths */
    int st = layer_check_args(a, kind);
    if (st || (st = layer_sizes_of(a, kind, name, &s->b)))
        return st;
    ab_dims *d = &s->b.d;
    s->b.window = a->window;
    s->b.gate = a->gate;
    s->b.rope = a->rope, s->b.qk_norm = a->qk_norm, s->b.sinks = a->sinks;
    s->b.softcap = (float)a->softcap;
    s->b.rope_params = (vkattn_rope_params){
        .rotary_dim = a->rotary_dim, /* 0: the library's default, the head width */
        .layout = a->rope_layout ? (vkattn_rope_layout)(a->rope_layout - 1) : VKATTN_ROPE_HALF};
    s->call = (vkattn_layer_call){
        .batch = d->batch, .tq = d->tq, .tv = d->tv,
        .causal = a->causal ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE,
        .training = a->dropout > 0, .seed = a->seed, .return_attention_scores = a->scores,
        .path = a->fused ? VKATTN_SDPA_FUSED : a->unfused ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO,
    };
    /* the layer and the tensors first: the library checks their sizes
     * against the device before any host array is allocated and filled */
    s->b.dropout = (float)a->dropout;
    s->b.dtype = s->dtype;
    kind->bench_desc(&s->b, &s->layer.desc);
    vkattn_result r = ab_layer_any_new(ctx, &s->layer);
    if (r)
        return ab_setup_refused(ctx, r, name, a, name);
    const uint32_t dq = mha ? s->b.dmodel : d->dk, dv = mha ? s->b.dmodel : d->dv;
    const uint32_t dout = mha ? s->b.dmodel : d->dv;
    const vkattn_dtype dt = s->dtype; /* the data tensors' */
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->q, -1, 1, dt, d->batch, d->tq, dq)},
        {AB_INPUT(&s->k, -1, 1, dt, d->batch, d->tv, dq)},
        {AB_INPUT(&s->v, -1, 1, dt, d->batch, d->tv, dv)},
        {AB_MASK(&s->vmask, a->mask_ratio, d->batch, d->tv), .absent = !(a->mask_ratio > 0)},
        {AB_OUTPUT(&s->out, dt, d->batch, d->tq, dout)},
        /* the scores: (B, H, Tq, Tv) of the multi-head layers, else (B, Tq, Tv) */
        {AB_OUTPUT(&s->scores, VKATTN_DTYPE_F32, d->batch, d->heads, d->tq, d->tv),
         .absent = !(a->scores && mha)},
        {AB_OUTPUT(&s->scores, VKATTN_DTYPE_F32, d->batch, d->tq, d->tv), .absent = !(a->scores && !mha)},
    };
    const size_t nbufs = sizeof bufs / sizeof bufs[0];
    if ((r = ab_bufs_create(ctx, bufs, nbufs)))
        return ab_setup_refused(ctx, r, name, a, "creating tensors");
    /* then the weights and inputs, drawn in that order */
    ab_rng rng = {a->seed};
    s->maker.make = weight;
    s->rng = &rng;
    const bool drawn = kind->bench_weights(&s->b, &s->layer.w, &s->maker);
    s->rng = NULL; /* rng ends with this call */
    if (!drawn)
        return ATTNBENCH_EXIT_CHECK;
    /* --dtype f16|bf16: the weights the values the layer keeps, so the
     * reference runs on what the layer holds (Keras's float16 and bfloat16
     * policies); the inputs likewise (ab_bufs_fill) */
    ab_rounder rounder = {.ctx = ctx, .dtype = s->dtype};
    kind->use_dtype(&s->layer.desc, &s->layer.w, &rounder);
    if (rounder.result)
        return ab_report(ctx, rounder.result, "rounding the weights");
    if ((r = ab_layer_any_set_weights(&s->layer)))
        return ab_report(ctx, r, name);
    if ((r = ab_bufs_fill(&rng, bufs, nbufs)))
        return ab_report(ctx, r, "uploading the inputs");
    /* data and weights 2 bytes each under --dtype f16|bf16; the mask and scores stay f32 */
    const double data = (double)s->q.n + s->k.n + s->v.n + s->out.n + s->maker.floats;
    double proj, core;
    kind->bench_flops(&s->b, &proj, &core);
    *info = (ab_op_info){
        .batch = d->batch, .heads = mha ? d->heads : 1,
        .kv_heads = s->b.kv_heads, /* the JSON's kv_heads, as decode's; 0 but for gqa */
        .tq = d->tq, .tv = d->tv, .dk = d->dk, .dv = d->dv, .path = layer_path(s),
        .flops = proj + core,
        .bytes = (dt != VKATTN_DTYPE_F32 ? 2.0 : 4.0) * data + 4.0 * ((double)s->vmask.n + s->scores.n),
    };
    if (!grads) {
        info->output = s->out.t, info->output_count = s->out.n;
        return ATTNBENCH_EXIT_OK;
    }
    ab_layer_fwd f = {.ctx = ctx, .layer = &s->layer, .call = s->call, .q = &s->q, .k = &s->k,
                      .v = &s->v, .vmask = &s->vmask, .out = &s->out, .proj_flops = proj,
                      .core_flops = core, .dtype = dt};
    return ab_layer_backward_setup(&f, a->train_step, a->seed, &s->bwd, info);
}

static vkattn_result layer_record(void *state, VkCommandBuffer cmd)
{
    layer_state *s = state;
    if (s->bwd)
        return ab_layer_backward_record(s->bwd, cmd);
    vkattn_layer_io io = {.query = s->q.t, .key = s->k.t, .value = s->v.t,
                          .value_mask = s->vmask.t, .output = s->out.t, .scores = s->scores.t};
    return ab_layer_any_record(&s->layer, cmd, &s->call, &io);
}

static vkattn_result layer_prepare(void *state)
{
    layer_state *s = state;
    if (s->bwd)
        return ab_layer_backward_prepare(s->bwd);
    vkattn_layer_io io = {.query = s->q.t, .key = s->k.t, .value = s->v.t,
                          .value_mask = s->vmask.t, .output = s->out.t, .scores = s->scores.t};
    return ab_layer_any_prepare(&s->layer, &s->call, &io);
}

static int layer_check(vkattn_context *ctx, void *state, double *err)
{
    layer_state *s = state;
    if (s->bwd)
        return ab_layer_backward_check(ctx, s->bwd, err);
    float *ref = ab_floats(s->out.n), *sref = s->scores.t ? ab_floats(s->scores.n) : NULL;
    int st = ATTNBENCH_EXIT_CHECK;
    if (!ref || (s->scores.t && !sref))
        goto done;
    vkattn_layer_host_io io = {.query = s->q.host, .key = s->k.host, .value = s->v.host,
                               .value_mask = s->vmask.host, .output = ref, .scores = sref};
    vkattn_result r = ab_layer_any_reference(&s->layer, &s->call, &io);
    if (r) {
        st = ab_report(NULL, r, "layer reference");
        goto done;
    }
    st = ab_check_outputs(ctx, layer_record, s, (ab_buf *[]){&s->out, &s->scores},
                          (float *[]){ref, sref}, s->scores.t ? 2 : 1, err);
done:
    free(ref), free(sref);
    return st;
}

/* the open models' attention, MultiHeadAttention's and GQA's */
#define AB_F_OPEN_MODEL (AB_F_ROPE | AB_F_QK_NORM | AB_F_SOFTCAP | AB_F_SINKS)

#define LAYER_FLAGS                                                                            \
    (AB_F_BATCH | AB_F_TQ | AB_F_TV | AB_F_DK | AB_F_DV | AB_F_CAUSAL | AB_F_MASK_RATIO |      \
     AB_F_DROPOUT | AB_F_SCORES | AB_F_BACKWARD)

/* An op's check_args and setup: layer_check_args and layer_setup of the
 * kind ab_layer_kind_<kind> (layer_kind.h). */
#define LAYER_OP_ENTRIES(kind)                                                                 \
    static int kind##_check_args(const ab_args *a)                                             \
    {                                                                                          \
        return layer_check_args(a, &ab_layer_kind_##kind);                                     \
    }                                                                                          \
    static int kind##_setup(vkattn_context *c, const ab_args *a, void **st, ab_op_info *i)     \
    {                                                                                          \
        return layer_setup(c, a, &ab_layer_kind_##kind, st, i);                                \
    }
LAYER_OP_ENTRIES(attention)
LAYER_OP_ENTRIES(additive)
LAYER_OP_ENTRIES(bahdanau)
LAYER_OP_ENTRIES(mha)
LAYER_OP_ENTRIES(gqa)

const ab_op ab_op_attention = {
    .name = "attention",
    .summary = "Keras Attention (dot, use_scale): query (B, Tq, dk), key (B, Tv, dk), value (B, Tv, dv)",
    .flags = LAYER_FLAGS | AB_F_FUSED | AB_F_UNFUSED | AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_ATTENTION,
    .bound_fp16 = AB_BOUND_LAYER_FP16,
    .bound_bf16 = AB_BOUND_LAYER_BF16,
    .bound_backward = AB_BOUND_ATTENTION_BACKWARD,
    .bound_backward_fp16 = AB_BOUND_LAYER_BACKWARD_FP16,
    .bound_backward_bf16 = AB_BOUND_LAYER_BACKWARD_BF16,
    .setup = attention_setup, .record = layer_record, .prepare = layer_prepare,
    .check_args = attention_check_args,
    .check = layer_check, .destroy = layer_destroy,
};

const ab_op ab_op_additive_attention = {
    .name = "additive_attention",
    .summary = "Keras AdditiveAttention: query (B, Tq, dk), key (B, Tv, dk), value (B, Tv, dv)",
    .flags = LAYER_FLAGS | AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_ADDITIVE_ATTENTION,
    .bound_fp16 = AB_BOUND_LAYER_FP16,
    .bound_bf16 = AB_BOUND_LAYER_BF16,
    .bound_backward = AB_BOUND_ADDITIVE_ATTENTION_BACKWARD,
    .bound_backward_fp16 = AB_BOUND_LAYER_BACKWARD_FP16,
    .bound_backward_bf16 = AB_BOUND_LAYER_BACKWARD_BF16,
    .setup = additive_setup, .record = layer_record, .prepare = layer_prepare,
    .check_args = additive_check_args,
    .check = layer_check,
    .destroy = layer_destroy,
};

const ab_op ab_op_bahdanau = {
    .name = "bahdanau",
    .summary = "BahdanauAttention: query/key width dk, value width dv, --units U (default dk)",
    .flags = LAYER_FLAGS | AB_F_UNITS | AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_BAHDANAU,
    .bound_fp16 = AB_BOUND_LAYER_FP16,
    .bound_bf16 = AB_BOUND_LAYER_BF16,
    .bound_backward = AB_BOUND_BAHDANAU_BACKWARD,
    .bound_backward_fp16 = AB_BOUND_LAYER_BACKWARD_FP16,
    .bound_backward_bf16 = AB_BOUND_LAYER_BACKWARD_BF16,
    .setup = bahdanau_setup, .record = layer_record, .prepare = layer_prepare,
    .check_args = bahdanau_check_args,
    .check = layer_check, .destroy = layer_destroy,
};

const ab_op ab_op_mha = {
    .name = "mha",
    .summary = "Keras MultiHeadAttention: --heads H, key_dim dk, value_dim dv, widths --dmodel "
               "(default H * dk)",
    .flags = LAYER_FLAGS | AB_F_HEADS | AB_F_DMODEL | AB_F_FUSED | AB_F_UNFUSED | AB_F_FP16 | AB_F_BF16 |
             AB_F_WINDOW | AB_F_GATE | AB_F_OPEN_MODEL |
             AB_F_TRAIN_STEP,
    .bound = AB_BOUND_MHA,
    .bound_backward = AB_BOUND_MHA_BACKWARD,
    .bound_backward_fp16 = AB_BOUND_MHA_BACKWARD_FP16,
    .bound_backward_bf16 = AB_BOUND_MHA_BACKWARD_BF16,
    .bound_fp16 = AB_BOUND_MHA_FP16,
    .bound_bf16 = AB_BOUND_MHA_BF16,
    .setup = mha_setup, .record = layer_record, .prepare = layer_prepare,
    .check_args = mha_check_args,
    .check = layer_check, .destroy = layer_destroy,
};

const ab_op ab_op_gqa = {
    .name = "gqa",
    .summary = "Keras GroupedQueryAttention: --heads Nq, --kv-heads Nkv (default Nq), head_dim "
               "--dk, widths --dmodel (default Nq * dk)",
    .flags = (LAYER_FLAGS & ~AB_F_DV) | AB_F_HEADS | AB_F_KV_HEADS | AB_F_DMODEL | AB_F_FUSED |
             AB_F_UNFUSED | AB_F_FP16 | AB_F_BF16 | AB_F_WINDOW | AB_F_GATE | AB_F_OPEN_MODEL,
    .bound = AB_BOUND_MHA,
    .bound_backward = AB_BOUND_MHA_BACKWARD,
    .bound_backward_fp16 = AB_BOUND_MHA_BACKWARD_FP16,
    .bound_backward_bf16 = AB_BOUND_MHA_BACKWARD_BF16,
    .bound_fp16 = AB_BOUND_MHA_FP16,
    .bound_bf16 = AB_BOUND_MHA_BF16,
    .setup = gqa_setup, .record = layer_record, .prepare = layer_prepare,
    .check_args = gqa_check_args,
    .check = layer_check, .destroy = layer_destroy,
};
