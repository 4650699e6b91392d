/* attnbench bench softmax | additive | heads | dropout | sdpa: the attention
 * building blocks, each on random inputs of the flags' shape, checked against
 * its CPU reference in vkattn/reference.h. */
#include "bounds.h"
#include "common.h"
#include "ops.h"
#include "sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <vkattn/half.h>
#include <string.h>

/* One state for the whole family: params of the op at hand, its inputs and
 * outputs (ab_buf: tensor + host twin). */
typedef struct att_state {
    vkattn_context *ctx;
    ab_dims d;
    union {
        vkattn_softmax_params softmax;
        vkattn_additive_params additive;
        vkattn_heads_params heads;
        vkattn_dropout_op_params dropout;
        vkattn_sdpa_params sdpa;
    } p;
    /* inputs */
    ab_buf x, k, v, vmask, scale;
    /* outputs */
    ab_buf out, out2;
    /* additive --backward: dS (in v) in, gradients of q, k, scale out */
    bool backward;
    ab_buf gq, gk, gs;
    vkattn_dtype dtype; /* --dtype: the data tensors' type (masks stay f32) */
    ab_sdpa_bwd *bwd; /* bench sdpa --backward: the call timed instead */
} att_state;

static void att_destroy(void *state)
{
    att_state *s = state;
    if (!s)
        return;
    ab_sdpa_backward_destroy(s->bwd);
    ab_buf *bufs[] = {&s->x,   &s->k,    &s->v,  &s->vmask, &s->scale,
                      &s->out, &s->out2, &s->gq, &s->gk,    &s->gs};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ab_buf_free(bufs[i]);
    free(s);
}

/* Allocates the state and reads the shape; *s is owned by *state. */
static int att_begin(vkattn_context *ctx, const char *op, const ab_args *a, uint32_t heads,
                     void **state, att_state **s)
{
    *s = calloc(1, sizeof **s);
    if (!*s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, op);
    *state = *s;
    (*s)->ctx = ctx;
    return ab_attention_dims(op, a, heads, &(*s)->d);
}

/* The arrays each op of the family makes must be countable (sizes.h): bench
 * checks them before a context is made. The value mask (B, Tv), the LSE
 * (B, H, Tq) and the gradients are no larger than the arrays named. */
static int att_check_args(const char *op, const ab_args *a)
{
    const bool additive = !strcmp(op, "additive"); /* the one without --heads */
    ab_dims d;
    if (ab_attention_dims(op, a, additive ? 1 : 8, &d))
        return ATTNBENCH_EXIT_USAGE;
    const ab_factor B = {"--batch", d.batch}, H = {"--heads", d.heads}, Tq = {"--tq", d.tq},
                    Tv = {"--tv", d.tv}, Dk = {"--dk", d.dk}, Dv = {"--dv", d.dv};
    bool fit;
    if (additive)
        fit = AB_FITS(op, "q", B, Tq, Dk) && AB_FITS(op, "k", B, Tv, Dk) &&
              AB_FITS(op, "the scores", B, Tq, Tv);
    else if (!strcmp(op, "heads")) /* T = --tq */
        fit = AB_WIDTH_FITS(op, "the merged width", H, Dk) &&
              AB_FITS(op, "the input", B, Tq, H, Dk);
    else if (!strcmp(op, "sdpa"))
        fit = AB_FITS(op, "Q", B, H, Tq, Dk) && AB_FITS(op, "K", B, H, Tv, Dk) &&
              AB_FITS(op, "V", B, H, Tv, Dv) && AB_FITS(op, "the output", B, H, Tq, Dv) &&
              (!a->scores || AB_FITS(op, "the weights", B, H, Tq, Tv));
    else /* softmax, dropout */
        fit = AB_FITS(op, "the scores", B, H, Tq, Tv);
    return fit ? ATTNBENCH_EXIT_OK : ATTNBENCH_EXIT_USAGE;
}
static int softmax_check_args(const ab_args *a) { return att_check_args("softmax", a); }
static int additive_check_args(const ab_args *a) { return att_check_args("additive", a); }
static int heads_check_args(const ab_args *a) { return att_check_args("heads", a); }
static int dropout_check_args(const ab_args *a) { return att_check_args("dropout", a); }
static int sdpa_check_args(const ab_args *a) { return att_check_args("sdpa", a); }

static void att_info(const att_state *s, ab_op_info *info, bool dk, bool dv)
{
    *info = (ab_op_info){.batch = s->d.batch, .heads = s->d.heads, .tq = s->d.tq, .tv = s->d.tv,
                         .dk = dk ? s->d.dk : 0, .dv = dv ? s->d.dv : 0};
}

static double f4(size_t n) { return 4.0 * (double)n; }

/* Bytes of n data elements: 2 each of a 16-bit --dtype. */
static double data_bytes(const att_state *s, size_t n)
{
    return (s->dtype != VKATTN_DTYPE_F32 ? 2.0 : 4.0) * (double)n;
}

/* The reference's output type (its inputs f32: their host twins hold the
 * 16-bit values exactly). f16: rounded once, as the device may round either
 * way (Vulkan leaves the mode open; the f16 bounds allow two ulps). bf16: the
 * unrounded result, as vkattn rounds to nearest even itself, so its output is
 * within half a spacing of it (two once-rounded values can differ by a whole
 * spacing where they straddle a midpoint). */
static vkattn_dtype out_type(const att_state *s)
{
    return s->dtype == VKATTN_DTYPE_F16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
}

/* A typed reference's output array of n elements (room for n floats). */
static float *ref_alloc(size_t n) { return ab_floats(n); }

/* Widens a 16-bit reference output (n bit patterns at the start of ref) to
 * floats in place, from the end so no pattern is overwritten before it is read. */
static void ref_widen(const att_state *s, float *ref, size_t n)
{
    if (out_type(s) == VKATTN_DTYPE_F32)
        return;
    const uint16_t *h = (const uint16_t *)ref;
    for (size_t i = n; i-- > 0;)
        ref[i] = ab_half_value(out_type(s), h[i]);
}

/* ------------------------------------------------------------------ softmax */

static int softmax_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    att_state *s;
    int st = att_begin(ctx, "softmax", a, 8, state, &s);
    if (st)
        return st;
    const ab_dims *d = &s->d;
    bool vm = a->mask_ratio > 0;
    s->p.softmax = (vkattn_softmax_params){
        .batch = d->batch, .heads = d->heads, .tq = d->tq, .tv = d->tv,
        .mask = {.causal = a->causal ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE,
                 .has_value_mask = vm},
    };
    ab_rng rng = {a->seed};
    const vkattn_dtype h = s->dtype = a->dtype;
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->x, -4, 4, h, d->batch, d->heads, d->tq, d->tv)},
        {AB_MASK(&s->vmask, a->mask_ratio, d->batch, d->tv), .absent = !vm},
        {AB_OUTPUT(&s->out, h, d->batch, d->heads, d->tq, d->tv)},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "softmax", a, "softmax: creating tensors");
    att_info(s, info, false, false);
    info->bytes = data_bytes(s, s->x.n + s->out.n) + f4(s->vmask.n);
    return ATTNBENCH_EXIT_OK;
}

static vkattn_result softmax_record(void *state, VkCommandBuffer cmd)
{
    att_state *s = state;
    vkattn_softmax_io io = {.scores = s->x.t, .value_mask = s->vmask.t, .out = s->out.t};
    return vkattn_softmax_record(s->ctx, cmd, &s->p.softmax, &io);
}

static vkattn_result softmax_prepare(void *state)
{
    att_state *s = state;
    vkattn_softmax_io io = {.scores = s->x.t, .value_mask = s->vmask.t, .out = s->out.t};
    return vkattn_softmax_record(s->ctx, VKATTN_PREPARE, &s->p.softmax, &io);
}

static int softmax_check(vkattn_context *ctx, void *state, double *err)
{
    att_state *s = state;
    float *ref = ref_alloc(s->out.n);
    if (!ref)
        return ATTNBENCH_EXIT_CHECK;
    const vkattn_softmax_dtypes ty = {.out = out_type(s)};
    vkattn_result r = vkattn_reference_softmax(&s->p.softmax, &ty, s->x.host, NULL,
                                                     s->vmask.host, NULL, ref);
    ref_widen(s, ref, s->out.n);
    int st = r ? ab_report(NULL, r, "softmax reference")
               : ab_check_outputs(ctx, softmax_record, s, (ab_buf *[]){&s->out}, &ref, 1, err);
    free(ref);
    return st;
}

const ab_op ab_op_softmax = {
    .name = "softmax",
    .summary = "masked softmax over (B, H, Tq, Tv) scores",
    .flags = AB_F_BATCH | AB_F_HEADS | AB_F_TQ | AB_F_TV | AB_F_CAUSAL | AB_F_MASK_RATIO |
             AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_SOFTMAX,
    .bound_fp16 = AB_BOUND_SOFTMAX_FP16,
    .bound_bf16 = AB_BOUND_SOFTMAX_BF16,
    .setup = softmax_setup, .record = softmax_record, .prepare = softmax_prepare,
    .check = softmax_check, .destroy = att_destroy,
    .check_args = softmax_check_args,
};

/* ------------------------------------------------------------------ additive */

static int additive_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    att_state *s;
    int st = att_begin(ctx, "additive", a, 1, state, &s);
    if (st)
        return st;
    const ab_dims *d = &s->d;
    s->p.additive = (vkattn_additive_params){
        .batch = d->batch, .tq = d->tq, .tv = d->tv, .dim = d->dk, .has_scale_vector = true};
    ab_rng rng = {a->seed};
    const vkattn_dtype h = s->dtype = a->dtype;
    const bool bwd = a->backward;
    /* --backward: dS (in v) in, dq, dk and the scale's gradient out, all f32 */
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->x, -1, 1, h, d->batch, d->tq, d->dk)},
        {AB_INPUT(&s->k, -1, 1, h, d->batch, d->tv, d->dk)},
        {AB_INPUT(&s->scale, -1, 1, h, d->dk)},
        {AB_OUTPUT(&s->out, h, d->batch, d->tq, d->tv)},
        {AB_INPUT(&s->v, -1, 1, VKATTN_DTYPE_F32, d->batch, d->tq, d->tv), .absent = !bwd},
        {AB_OUTPUT(&s->gq, VKATTN_DTYPE_F32, d->batch, d->tq, d->dk), .absent = !bwd},
        {AB_OUTPUT(&s->gk, VKATTN_DTYPE_F32, d->batch, d->tv, d->dk), .absent = !bwd},
        {AB_OUTPUT(&s->gs, VKATTN_DTYPE_F32, d->dk), .absent = !bwd},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "additive", a, "additive: creating tensors");
    att_info(s, info, true, false);
    /* one multiply-add per feature of each score; tanh not counted */
    info->flops = 2.0 * d->batch * d->tq * d->tv * d->dk;
    info->bytes = data_bytes(s, s->x.n + s->k.n + s->scale.n + s->out.n);
    s->backward = bwd;
    if (!s->backward)
        return ATTNBENCH_EXIT_OK;
    /* three passes (dq, dk, ds) of one multiply-add per feature of each score */
    info->backward = true;
    info->flops = 3.0 * info->flops;
    info->bytes = f4(s->x.n + s->k.n + s->scale.n + s->v.n + s->gq.n + s->gk.n + s->gs.n);
    return ATTNBENCH_EXIT_OK;
}

static vkattn_additive_backward_io additive_backward_io(const att_state *s)
{
    return (vkattn_additive_backward_io){.q = s->x.t, .k = s->k.t, .scale = s->scale.t,
                                         .grad_scores = s->v.t, .grad_q = s->gq.t,
                                         .grad_k = s->gk.t, .grad_scale = s->gs.t};
}

static vkattn_result additive_record(void *state, VkCommandBuffer cmd)
{
    att_state *s = state;
    if (s->backward) {
        vkattn_additive_backward_io io = additive_backward_io(s);
        return vkattn_additive_backward_record(s->ctx, cmd, &s->p.additive, &io);
    }
    vkattn_additive_io io = {.q = s->x.t, .k = s->k.t, .scale = s->scale.t, .scores = s->out.t};
    return vkattn_additive_record(s->ctx, cmd, &s->p.additive, &io);
}

static vkattn_result additive_prepare(void *state)
{
    att_state *s = state;
    if (s->backward) {
        vkattn_additive_backward_io io = additive_backward_io(s);
        return vkattn_additive_backward_record(s->ctx, VKATTN_PREPARE, &s->p.additive, &io);
    }
    vkattn_additive_io io = {.q = s->x.t, .k = s->k.t, .scale = s->scale.t, .scores = s->out.t};
    return vkattn_additive_record(s->ctx, VKATTN_PREPARE, &s->p.additive, &io);
}

/* --backward: dq, dk and ds against vkattn_reference_additive_backward. */
static int additive_backward_check(vkattn_context *ctx, att_state *s, double *err)
{
    float *rq = ab_floats(s->gq.n), *rk = ab_floats(s->gk.n), *rs = ab_floats(s->gs.n);
    int st = ATTNBENCH_EXIT_CHECK;
    if (rq && rk && rs) {
        vkattn_result r = vkattn_reference_additive_backward(
            &s->p.additive, s->x.host, s->k.host, s->scale.host, s->v.host, rq, rk, rs);
        st = r ? ab_report(NULL, r, "additive backward reference")
               : ab_check_outputs(ctx, additive_record, s,
                                  (ab_buf *[]){&s->gq, &s->gk, &s->gs},
                                  (float *[]){rq, rk, rs}, 3, err);
    }
    free(rq), free(rk), free(rs);
    return st;
}

static int additive_check(vkattn_context *ctx, void *state, double *err)
{
    att_state *s = state;
    if (s->backward)
        return additive_backward_check(ctx, s, err);
    float *ref = ref_alloc(s->out.n);
    if (!ref)
        return ATTNBENCH_EXIT_CHECK;
    const vkattn_additive_dtypes ty = {.scores = out_type(s)};
    vkattn_result r = vkattn_reference_additive(&s->p.additive, &ty, s->x.host, s->k.host,
                                                      s->scale.host, ref);
    ref_widen(s, ref, s->out.n);
    int st = r ? ab_report(NULL, r, "additive reference")
               : ab_check_outputs(ctx, additive_record, s, (ab_buf *[]){&s->out}, &ref, 1, err);
    free(ref);
    return st;
}

const ab_op ab_op_additive = {
    .name = "additive",
    .summary = "additive (tanh) scores of (B, Tq, dk) queries and (B, Tv, dk) keys "
               "(--backward: dq, dk, ds)",
    .flags = AB_F_BATCH | AB_F_TQ | AB_F_TV | AB_F_DK | AB_F_BACKWARD | AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_ADDITIVE,
    .bound_fp16 = AB_BOUND_ADDITIVE_FP16,
    .bound_bf16 = AB_BOUND_ADDITIVE_BF16,
    .setup = additive_setup, .record = additive_record, .prepare = additive_prepare,
    .check = additive_check,
    .destroy = att_destroy,
    .check_args = additive_check_args,
};

/* ------------------------------------------------------------------ heads */

static int heads_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    att_state *s;
    int st = att_begin(ctx, "heads", a, 8, state, &s);
    if (st)
        return st;
    const ab_dims *d = &s->d;
    s->p.heads = (vkattn_heads_params){
        .batch = d->batch, .seq = d->tq, .heads = d->heads, .head_dim = d->dk};
    ab_rng rng = {a->seed};
    if (att_check_args("heads", a)) /* bench checked it; the merged width relies on it */
        return ATTNBENCH_EXIT_USAGE;
    const uint32_t merged = d->heads * d->dk;
    const vkattn_dtype h = s->dtype = a->dtype;
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->x, -1, 1, h, d->batch, d->tq, merged)},
        {AB_OUTPUT(&s->out, h, d->batch, d->heads, d->tq, d->dk)},
        {AB_OUTPUT(&s->out2, h, d->batch, d->tq, merged)},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "heads", a, "heads: creating tensors");
    att_info(s, info, true, false);
    info->tv = d->tq;
    /* split reads and writes every element, then merge does again */
    info->bytes = 4.0 * data_bytes(s, s->x.n);
    return ATTNBENCH_EXIT_OK;
}

static vkattn_result heads_record(void *state, VkCommandBuffer cmd)
{
    att_state *s = state;
    vkattn_heads_io split = {.in = s->x.t, .out = s->out.t};
    vkattn_heads_io merge = {.in = s->out.t, .out = s->out2.t};
    vkattn_result r = vkattn_heads_split_record(s->ctx, cmd, &s->p.heads, &split);
    return r ? r : vkattn_heads_merge_record(s->ctx, cmd, &s->p.heads, &merge);
}

static vkattn_result heads_prepare(void *state)
{
    att_state *s = state;
    vkattn_heads_io split = {.in = s->x.t, .out = s->out.t};
    vkattn_heads_io merge = {.in = s->out.t, .out = s->out2.t};
    vkattn_result r = vkattn_heads_split_record(s->ctx, VKATTN_PREPARE, &s->p.heads, &split);
    return r ? r : vkattn_heads_merge_record(s->ctx, VKATTN_PREPARE, &s->p.heads, &merge);
}

static int heads_check(vkattn_context *ctx, void *state, double *err)
{
    att_state *s = state;
    float *ref = ref_alloc(s->out.n);
    if (!ref)
        return ATTNBENCH_EXIT_CHECK;
    const vkattn_io_dtypes ty = {.out = out_type(s)};
    vkattn_result r = vkattn_reference_heads_split(&s->p.heads, &ty, s->x.host, ref);
    ref_widen(s, ref, s->out.n);
    /* the merge of the split is the input again, exactly */
    int st = r ? ab_report(NULL, r, "heads reference")
               : ab_check_outputs(ctx, heads_record, s, (ab_buf *[]){&s->out, &s->out2},
                                  (float *[]){ref, s->x.host}, 2, err);
    free(ref);
    return st;
}

const ab_op ab_op_heads = {
    .name = "heads",
    .summary = "head split (B, T, H*dk) -> (B, H, T, dk), then merge back (T = --tq)",
    .flags = AB_F_BATCH | AB_F_HEADS | AB_F_TQ | AB_F_DK | AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_HEADS,
    .bound_fp16 = AB_BOUND_HEADS_FP16,
    .bound_bf16 = AB_BOUND_HEADS_BF16,
    .setup = heads_setup, .record = heads_record, .prepare = heads_prepare,
    .check = heads_check, .destroy = att_destroy,
    .check_args = heads_check_args,
};

/* ------------------------------------------------------------------ dropout */

static int dropout_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    att_state *s;
    int st = att_begin(ctx, "dropout", a, 8, state, &s);
    if (st)
        return st;
    const ab_dims *d = &s->d;
    s->p.dropout = (vkattn_dropout_op_params){
        .batch = d->batch, .heads = d->heads, .tq = d->tq, .tv = d->tv,
        .dropout = {.rate = (a->given & AB_F_DROPOUT) ? (float)a->dropout : 0.1f,
                    .training = true, .seed = a->seed, .offset = 0},
    };
    ab_rng rng = {a->seed};
    const vkattn_dtype h = s->dtype = a->dtype;
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->x, 0, 1, h, d->batch, d->heads, d->tq, d->tv)},
        {AB_OUTPUT(&s->out, h, d->batch, d->heads, d->tq, d->tv)},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "dropout", a, "dropout: creating tensors");
    att_info(s, info, false, false);
    info->bytes = data_bytes(s, s->x.n + s->out.n);
    return ATTNBENCH_EXIT_OK;
}

static vkattn_result dropout_record(void *state, VkCommandBuffer cmd)
{
    att_state *s = state;
    vkattn_dropout_io io = {.in = s->x.t, .out = s->out.t};
    return vkattn_dropout_record(s->ctx, cmd, &s->p.dropout, &io);
}

static vkattn_result dropout_prepare(void *state)
{
    att_state *s = state;
    vkattn_dropout_io io = {.in = s->x.t, .out = s->out.t};
    return vkattn_dropout_record(s->ctx, VKATTN_PREPARE, &s->p.dropout, &io);
}

static int dropout_check(vkattn_context *ctx, void *state, double *err)
{
    att_state *s = state;
    float *ref = ref_alloc(s->out.n);
    if (!ref)
        return ATTNBENCH_EXIT_CHECK;
    const vkattn_io_dtypes ty = {.out = out_type(s)};
    vkattn_result r = vkattn_reference_dropout(&s->p.dropout, &ty, s->x.host, ref);
    ref_widen(s, ref, s->out.n);
    int st = r ? ab_report(NULL, r, "dropout reference")
               : ab_check_outputs(ctx, dropout_record, s, (ab_buf *[]){&s->out}, &ref, 1, err);
    free(ref);
    return st;
}

const ab_op ab_op_dropout = {
    .name = "dropout",
    .summary = "training-mode Philox dropout of (B, H, Tq, Tv) weights (rate: --dropout, default 0.1)",
    .flags = AB_F_BATCH | AB_F_HEADS | AB_F_TQ | AB_F_TV | AB_F_DROPOUT | AB_F_FP16 | AB_F_BF16,
    .bound = AB_BOUND_DROPOUT,
    .bound_fp16 = AB_BOUND_DROPOUT_FP16,
    .bound_bf16 = AB_BOUND_DROPOUT_BF16,
    .setup = dropout_setup, .record = dropout_record, .prepare = dropout_prepare,
    .check = dropout_check,
    .destroy = att_destroy,
    .check_args = dropout_check_args,
};

/* ------------------------------------------------------------------ sdpa */

static vkattn_sdpa_path path_of(const ab_args *a)
{
    return a->fused ? VKATTN_SDPA_FUSED : a->unfused ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO;
}

const char *ab_sdpa_path_name(vkattn_context *ctx, const vkattn_sdpa_params *p)
{
    if (p->path != VKATTN_SDPA_AUTO)
        return p->path == VKATTN_SDPA_FUSED ? "fused" : "unfused";
    if (p->return_weights)
        return "unfused";
    /* without returned weights only the chained path needs a workspace */
    uint64_t ws = 0;
    if (vkattn_sdpa_workspace_size(ctx, p, &ws) != VKATTN_SUCCESS)
        return NULL;
    return ws == 0 ? "fused" : "unfused";
}

static int sdpa_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    att_state *s;
    int st = att_begin(ctx, "sdpa", a, 8, state, &s);
    if (st)
        return st;
    const ab_dims *d = &s->d;
    bool vm = a->mask_ratio > 0;
    s->p.sdpa = (vkattn_sdpa_params){
        .batch = d->batch, .heads = d->heads, .tq = d->tq, .tv = d->tv, .dk = d->dk, .dv = d->dv,
        .mask = {.causal = a->causal ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE,
                 .has_value_mask = vm},
        .dropout = {.rate = (float)a->dropout, .training = a->dropout > 0, .seed = a->seed},
        .return_weights = a->scores,
        .path = path_of(a),
        .sliding_window = a->window,
    };
    if (a->backward) {
        st = ab_sdpa_backward_setup(ctx, &s->p.sdpa, a, &s->bwd, info);
        ab_op_info timed = *info;
        att_info(s, info, true, true);
        info->path = timed.path, info->flops = timed.flops, info->bytes = timed.bytes;
        return st;
    }
    ab_rng rng = {a->seed};
    /* --dtype f16|bf16: Q, K, V and out of it; the mask and returned weights stay f32 */
    const vkattn_dtype h = s->dtype = a->dtype;
    const ab_buf_spec bufs[] = {
        {AB_INPUT(&s->x, -1, 1, h, d->batch, d->heads, d->tq, d->dk)},
        {AB_INPUT(&s->k, -1, 1, h, d->batch, d->heads, d->tv, d->dk)},
        {AB_INPUT(&s->v, -1, 1, h, d->batch, d->heads, d->tv, d->dv)},
        {AB_MASK(&s->vmask, a->mask_ratio, d->batch, d->tv), .absent = !vm},
        {AB_OUTPUT(&s->out, h, d->batch, d->heads, d->tq, d->dv)},
        {AB_OUTPUT(&s->out2, VKATTN_DTYPE_F32, d->batch, d->heads, d->tq, d->tv),
         .absent = !a->scores},
    };
    vkattn_result r = ab_bufs_make(ctx, &rng, bufs, sizeof bufs / sizeof bufs[0]);
    if (r)
        return ab_setup_refused(ctx, r, "sdpa", a, "sdpa: creating tensors");
    att_info(s, info, true, true);
    info->path = ab_sdpa_path_name(ctx, &s->p.sdpa);
    info->output = s->out.t, info->output_count = s->out.n;
    info->flops = 2.0 * d->batch * d->heads * d->tq * d->tv * ((double)d->dk + d->dv);
    info->bytes = data_bytes(s, 1) * ((double)s->x.n + s->k.n + s->v.n + s->out.n) +
                  f4(s->vmask.n + s->out2.n);
    return ATTNBENCH_EXIT_OK;
}

static vkattn_result sdpa_record(void *state, VkCommandBuffer cmd)
{
    att_state *s = state;
    if (s->bwd)
        return ab_sdpa_backward_record(s->bwd, cmd);
    vkattn_sdpa_io io = {.q = s->x.t, .k = s->k.t, .v = s->v.t, .value_mask = s->vmask.t,
                         .out = s->out.t, .weights = s->out2.t};
    return vkattn_sdpa_record(s->ctx, cmd, &s->p.sdpa, &io);
}

static vkattn_result sdpa_prepare(void *state)
{
    att_state *s = state;
    if (s->bwd)
        return ab_sdpa_backward_prepare(s->bwd);
    vkattn_sdpa_io io = {.q = s->x.t, .k = s->k.t, .v = s->v.t, .value_mask = s->vmask.t,
                         .out = s->out.t, .weights = s->out2.t};
    return vkattn_sdpa_record(s->ctx, VKATTN_PREPARE, &s->p.sdpa, &io);
}

static int sdpa_check(vkattn_context *ctx, void *state, double *err)
{
    att_state *s = state;
    if (s->bwd)
        return ab_sdpa_backward_check(ctx, s->bwd, err);
    float *ref = ab_floats(s->out.n), *wref = s->out2.t ? ab_floats(s->out2.n) : NULL;
    int st = ATTNBENCH_EXIT_CHECK;
    const bool narrow = s->dtype != VKATTN_DTYPE_F32;
    uint16_t *ref16 = narrow ? malloc(sizeof(uint16_t) * (s->out.n ? s->out.n : 1)) : NULL;
    if (ref && (wref || !s->out2.t) && (ref16 || !narrow)) {
        /* the typed reference: the host arrays hold the 16-bit values
         * exactly, and a 16-bit out is rounded once */
        const vkattn_sdpa_dtypes ty = {.out = s->dtype};
        vkattn_result r = vkattn_reference_sdpa(
            &s->p.sdpa, &ty, s->x.host, s->k.host, s->v.host, NULL, s->vmask.host, NULL,
            narrow ? (void *)ref16 : ref, wref);
        for (size_t i = 0; narrow && i < s->out.n; i++)
            ref[i] = ab_half_value(s->dtype, ref16[i]);
        st = r ? ab_report(NULL, r, "sdpa reference")
               : ab_check_outputs(ctx, sdpa_record, s, (ab_buf *[]){&s->out, &s->out2},
                                  (float *[]){ref, wref}, s->out2.t ? 2 : 1, err);
    }
    free(ref), free(wref), free(ref16);
    return st;
}

const ab_op ab_op_sdpa = {
    .name = "sdpa",
    .summary = "scaled dot-product attention, Q (B, H, Tq, dk), K (B, H, Tv, dk), V (B, H, Tv, dv)",
    .flags = AB_F_BATCH | AB_F_HEADS | AB_F_TQ | AB_F_TV | AB_F_DK | AB_F_DV | AB_F_CAUSAL |
             AB_F_MASK_RATIO | AB_F_DROPOUT | AB_F_SCORES | AB_F_FUSED | AB_F_UNFUSED | AB_F_BACKWARD |
             AB_F_FP16 | AB_F_BF16 | AB_F_WINDOW,
    .bound = AB_BOUND_SDPA,
    .bound_fp16 = AB_BOUND_SDPA_FP16,
    .bound_bf16 = AB_BOUND_SDPA_BF16,
    .setup = sdpa_setup, .record = sdpa_record, .prepare = sdpa_prepare, .check = sdpa_check,
    .destroy = att_destroy,
    .check_args = sdpa_check_args,
    .bound_backward_fp16 = AB_BOUND_SDPA_BACKWARD_FP16,
    .bound_backward_bf16 = AB_BOUND_SDPA_BACKWARD_BF16,
};
