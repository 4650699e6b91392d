/* MultiHeadAttention backward: the forward's ops in reverse, on what the
 * forward kept (mha_kept: the Q/K/V heads, the SDPA context, the fused
 * path's log-sum-exp, the mask it read).
 *
 *   grad_output --output dense backward--> dWo, dbo, d(merged context)
 *   [use_gate: --gate backward--> d(merged context), d(gate pre-activation)
 *    --gate dense backward--> dWg, dbg and the gate path's part of grad_query,
 *    summed with the query path's]
 *   --merge backward--> d(context heads) --SDPA backward--> dQ, dK, dV heads
 *   [use_qk_norm/use_rope: dQ, dK heads turned back and through the norm,
 *    the norm weights' gradients (mha_head_prep.c)]
 *   --split backward--> d(projections) --dense backwards--> dWq/k/v, dbq/k/v,
 *   grad_query, grad_key, grad_value
 *
 * The dense layers are one matmul over all B*T rows (as the forward), so the
 * kernel and bias gradients are the matmul backward's, summed over the rows.
 * With key NULL (key = value) the value feeds two projections: its gradient
 * is the sum of both paths. (ops/elementwise.h). The SDPA backward runs on the path
 * the forward took: fused with its output and log-sum-exp, except where the
 * fused backward cannot run (fewer than 10 storage buffers per shader) and
 * the call did not insist on FUSED: then the chained backward recomputes the
 * weights from the kept heads, which gives the same gradients. */
#include "vkattn/heads.h"
#include "vkattn/layer_backward.h"
#include "vkattn/matmul_backward.h"
#include "vkattn/sdpa_backward.h"

#include <stdio.h>

#include "core/error.h"
#include "layers/mha_internal.h"
#include "ops/elementwise.h"
#include "ops/gate.h"
#include "vk/prepare.h"
#include "vk/tensor.h"
#include "vk/record_mode.h"
#include "vk/view.h"

vkattn_result vkattn_mha_get_weight_tensors(vkattn_mha *layer, vkattn_mha_weight_tensors *out)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, out);
    *out = layer->w;
    return VKATTN_SUCCESS;
}

/* ---------------------------------------------------------------- checks */

static bool overlaps(const vkattn_tensor *a, const vkattn_tensor *b)
{
    return a && b && a->buffer == b->buffer && a->offset < b->offset + b->bytes &&
           b->offset < a->offset + a->bytes;
}

/* Every tensor of a backward call, the written ones (gradients) first:
 * grads, grad_w (the table's), then grad_output, io and the layer's weights. */
enum { N_WEIGHTS = 13, N_IO = 8, N_WRITTEN = 3 + N_WEIGHTS };
enum { N_ALL = N_WRITTEN + 1 + N_IO + N_WEIGHTS };
_Static_assert((int)N_WEIGHTS >= (int)VKA_WEIGHTS_MAX, "room for every weight of the table");

typedef struct named_tensors {
    const vkattn_tensor *t[N_ALL];
    char name[N_ALL][48];
} named_tensors;

static void list_tensors(const vkattn_mha *layer, const vkattn_layer_io *io,
                         const vkattn_layer_grads *g, const vkattn_mha_weight_tensors *gw,
                         named_tensors *l)
{
    static const char *const io_names[N_IO] = {
        "io->query",          "io->value",  "io->key",   "io->query_mask", "io->value_mask",
        "io->attention_mask", "io->output", "io->scores"};
    const vkattn_tensor *const io_t[N_IO] = {io->query,          io->value,  io->key,
                                             io->query_mask,     io->value_mask,
                                             io->attention_mask, io->output, io->scores};
    const vka_weight_table *table = &vka_mha_weight_table;
    *l = (named_tensors){.t = {g->grad_query, g->grad_value, g->grad_key}};
    snprintf(l->name[0], sizeof l->name[0], "grads->grad_query");
    snprintf(l->name[1], sizeof l->name[1], "grads->grad_value");
    snprintf(l->name[2], sizeof l->name[2], "grads->grad_key");
    int n = 3;
    for (uint32_t i = 0; i < table->count; i++, n++) {
        l->t[n] = gw ? *vka_weight_tensor(gw, vka_mha_tensor_offsets, i) : NULL;
        snprintf(l->name[n], sizeof l->name[n], "grad_w->%s", table->w[i].member);
    }
    n = N_WRITTEN;
    l->t[n] = g->grad_output;
    snprintf(l->name[n++], sizeof l->name[0], "grads->grad_output");
    for (int i = 0; i < N_IO; i++, n++) {
        l->t[n] = io_t[i];
        snprintf(l->name[n], sizeof l->name[n], "%s", io_names[i]);
    }
    for (uint32_t i = 0; i < table->count; i++, n++) {
        l->t[n] = *vka_weight_tensor(&layer->w, vka_mha_tensor_offsets, i);
        snprintf(l->name[n], sizeof l->name[n], "the layer's %s", table->w[i].member);
    }
}

/* A gradient must not share memory with any other tensor of the call. */
static vkattn_result check_aliasing(vkattn_context *ctx, const char *fn, const named_tensors *l)
{
    for (int w = 0; w < N_WRITTEN; w++)
        for (int o = 0; l->t[w] && o < N_ALL; o++)
            if (o != w && overlaps(l->t[w], l->t[o]))
                return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s overlaps %s; a gradient must not share memory with any "
                                "other tensor of the call",
                                fn, l->name[w], l->name[o]);
    return VKATTN_SUCCESS;
}

/* The element types a gradient may have: a 16-bit (f16 or bf16) layer's may
 * be of its dtype or f32, as its io tensors (each rounded once from its f32
 * result); an f32 layer's are f32. */
static unsigned grad_types(const vkattn_mha *layer)
{
    return VKA_DTYPE_BIT(VKATTN_DTYPE_F32) | VKA_DTYPE_BIT(layer->dtype);
}

static vkattn_result check_grad(const vkattn_mha *layer, const char *fn, const vkattn_tensor *t,
                                uint64_t a, uint64_t b, uint64_t c, int n, const char *what,
                                const char *shape)
{
    if (!t)
        return VKATTN_SUCCESS;
    const uint64_t dims[3] = {a, b, c};
    return vka_layer_check_tensor_types(layer->ctx, fn, t, dims, n, what, shape,
                                        grad_types(layer));
}

static vkattn_result check_grads(vkattn_mha *layer, const char *fn, const vka_mha_call *c,
                                 const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                 const vkattn_mha_weight_tensors *gw)
{
    vkattn_context *ctx = layer->ctx;
    const vka_mha_dims *d = &layer->d;
    vkattn_result r;
    if (!g->grad_output)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grads->grad_output is NULL; dL/d(output) is required", fn);
    if (g->grad_key && !io->key)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grads->grad_key is given but io->key is NULL (key = value: the key "
                        "path's gradient is part of grads->grad_value)",
                        fn);
    const vka_weight_table *table = &vka_mha_weight_table;
    const uint32_t options = vka_mha_weight_options(d);
    /* a weight the layer lacks has no gradient: no biases first, then no gate */
    for (int gate = 0; gw && gate < 2; gate++)
        for (uint32_t i = 0; i < table->count; i++) {
            const vka_weight_info *w = &table->w[i];
            const uint32_t flag = gate ? VKA_WEIGHT_IF_GATE : VKA_WEIGHT_IF_BIAS;
            if ((w->needs & flag & ~options) && *vka_weight_tensor(gw, vka_mha_tensor_offsets, i))
                return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                gate ? "%s: grad_w->%s is given but the layer has no gate "
                                       "(use_gate is off)"
                                     : "%s: grad_w->%s is given but the layer has no biases "
                                       "(no_bias)",
                                fn, w->member);
        }
    if ((r = check_grad(layer, fn, g->grad_output, c->batch, c->tq, d->output_dim, 3,
                        "grads->grad_output", "(B, Tq, output_dim)")) ||
        (r = check_grad(layer, fn, g->grad_query, c->batch, c->tq, d->query_dim, 3,
                        "grads->grad_query", "(B, Tq, query_width)")) ||
        (r = check_grad(layer, fn, g->grad_value, c->batch, c->tv, d->value_width, 3,
                        "grads->grad_value", "(B, Tv, value_width)")) ||
        (r = check_grad(layer, fn, g->grad_key, c->batch, c->tv, d->key_width, 3,
                        "grads->grad_key", "(B, Tv, key_width)")))
        return r;
    /* key and value have d->kv_heads heads (GroupedQueryAttention's Nkv) */
    const char *const *words = vka_weight_grad_words(d->kv_heads != d->heads);
    uint64_t axes[VKA_AXIS_COUNT];
    vka_mha_weight_axes(d, axes);
    bool any_w = false;
    for (uint32_t i = 0; gw && i < table->count; i++) {
        const vka_weight_info *w = &table->w[i];
        const vkattn_tensor *t = *vka_weight_tensor(gw, vka_mha_tensor_offsets, i);
        if (!t)
            continue;
        any_w = true;
        uint64_t dims[3];
        char what[48], shape[96];
        vka_weight_shape(w, axes, dims);
        snprintf(what, sizeof what, "grad_w->%s", w->member);
        vka_weight_axes_text(w, words, false, shape, sizeof shape);
        /* a weight kept f32 in a 16-bit layer (the sinks) has an f32 gradient */
        const unsigned types = w->device & VKA_DEVICE_F32 ? VKA_DTYPE_BIT(VKATTN_DTYPE_F32)
                                                          : grad_types(layer);
        if ((r = vka_layer_check_tensor_types(ctx, fn, t, dims, (int)w->rank, what, shape,
                                              types)))
            return r;
    }
    if (!any_w && !g->grad_query && !g->grad_value && !g->grad_key)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: no gradient is wanted (every grads and grad_w tensor is NULL)", fn);
    return VKATTN_SUCCESS;
}

/* The kept forward must be this call's: the same sizes, options and io
 * tensors (the backward reads its intermediates). */
static vkattn_result check_kept(vkattn_mha *layer, const char *fn, const vkattn_layer_call *call,
                                const vkattn_layer_io *io)
{
    vkattn_context *ctx = layer->ctx;
    const mha_kept *k = &layer->kept;
    if (!k->valid)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: no forward kept for the backward: record vkattn_mha_record with "
                        "call->keep_for_backward = true first (and no other forward of the "
                        "layer in between)",
                        fn);
    const vkattn_layer_call *f = &k->call;
    const char *what = f->batch != call->batch       ? "call->batch"
                       : f->tq != call->tq           ? "call->tq"
                       : f->tv != call->tv           ? "call->tv"
                       : f->causal != call->causal   ? "call->causal"
                       : f->training != call->training ? "call->training"
                       : f->seed != call->seed       ? "call->seed"
                       : f->offset != call->offset   ? "call->offset"
                       : f->path != call->path       ? "call->path"
                       : k->query != io->query       ? "io->query"
                       : k->value != io->value       ? "io->value"
                       : k->key != io->key           ? "io->key"
                       : k->query_mask != io->query_mask ? "io->query_mask"
                       : k->value_mask != io->value_mask ? "io->value_mask"
                       : k->attention_mask != io->attention_mask ? "io->attention_mask"
                       : k->attention_mask_per_head != io->attention_mask_per_head
                           ? "io->attention_mask_per_head"
                       : k->query_positions != io->query_positions ? "io->query_positions"
                       : k->key_positions != io->key_positions     ? "io->key_positions"
                           : NULL;
    if (what)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s differs from the forward kept for the backward (the last "
                        "vkattn_mha_record with call->keep_for_backward); the backward must "
                        "follow the forward with the same call and io",
                        fn, what);
    return VKATTN_SUCCESS;
}

/* ---------------------------------------------------------------- plan */

/* The forward's intermediates the backward reads. */
typedef struct mha_saved {
    bool fused;
    vkattn_tensor *q, *k, *v, *context, *merged, *lse;
    vkattn_tensor *gate_pre, *gated; /* use_gate; else NULL and merged */
    vka_layer_mask mask;
} mha_saved;

typedef struct mha_bwd_plan {
    mha_plan f; /* the forward's plan of this call */
    mha_saved s;
    vkattn_sdpa_params sdpa; /* the SDPA backward's params */
    bool need_q, need_k, need_v; /* a gradient beyond the SDPA wanted on that path */
    bool need_gate; /* use_gate and a gradient of the gate's weights or of the query */
    bool sum_query; /* use_gate and grad_query: the query and gate paths sum into it */
    bool sum_value; /* key NULL and grad_value: two paths sum into it */
    bool need_sinks; /* use_sinks and grad_w->sinks */
    vkattn_tensor *t[MHA_SLOTS];
} mha_bwd_plan;

static vkattn_result scratch(vkattn_mha *layer, const char *fn, mha_bwd_plan *p, mha_slot slot,
                             uint64_t count)
{
    return vka_scratch_get(layer->ctx, fn, &layer->scratch[slot], count, &p->t[slot]);
}

static vkattn_result alloc_scratch(vkattn_mha *layer, const char *fn, mha_bwd_plan *p)
{
    const vka_mha_call *c = &p->f.c;
    const bool split = layer->d.heads > 1, split_kv = layer->d.kv_heads > 1;
    const uint64_t value_in = c->value; /* B*Tv*Dv */
    vkattn_result r;
    for (int i = 0; i < MHA_SLOTS; i++)
        p->t[i] = NULL;
    if ((r = scratch(layer, fn, p, MHA_G_CTX_MERGED, c->context)) ||
        (r = scratch(layer, fn, p, MHA_G_Q_PROJ, c->q_proj)) ||
        (r = scratch(layer, fn, p, MHA_G_K_PROJ, c->k_proj)) ||
        (r = scratch(layer, fn, p, MHA_G_V_PROJ, c->v_proj)))
        return r;
    if (split && ((r = scratch(layer, fn, p, MHA_G_CTX_HEADS, c->context)) ||
                  (r = scratch(layer, fn, p, MHA_G_Q_HEADS, c->q_proj))))
        return r;
    if (split_kv && ((r = scratch(layer, fn, p, MHA_G_K_HEADS, c->k_proj)) ||
                     (r = scratch(layer, fn, p, MHA_G_V_HEADS, c->v_proj))))
        return r;
    if (!split) { /* one head: the split and merge are the identity */
        p->t[MHA_G_CTX_HEADS] = p->t[MHA_G_CTX_MERGED];
        p->t[MHA_G_Q_HEADS] = p->t[MHA_G_Q_PROJ];
    }
    if (!split_kv) { /* one key/value head: the same */
        p->t[MHA_G_K_HEADS] = p->t[MHA_G_K_PROJ];
        p->t[MHA_G_V_HEADS] = p->t[MHA_G_V_PROJ];
    }
    if (p->sum_value && ((r = scratch(layer, fn, p, MHA_G_KEY_IN, value_in)) ||
                         (r = scratch(layer, fn, p, MHA_G_VALUE_IN, value_in))))
        return r;
    if (layer->d.use_gate && ((r = scratch(layer, fn, p, MHA_G_GATED, c->context)) ||
                              (r = scratch(layer, fn, p, MHA_G_GATE_PRE, c->context))))
        return r;
    if (p->sum_query && ((r = scratch(layer, fn, p, MHA_G_QUERY_Q, c->query)) ||
                         (r = scratch(layer, fn, p, MHA_G_QUERY_GATE, c->query))))
        return r;
    /* QK-norm's backward reads the raw heads, projected again (mha_head_prep.c) */
    if (layer->d.use_qk_norm &&
        ((r = scratch(layer, fn, p, MHA_Q_RAW, c->q_proj)) ||
         (r = scratch(layer, fn, p, MHA_K_RAW, c->k_proj)) ||
         (r = scratch(layer, fn, p, MHA_G_NORM_ROWS, c->q_proj > c->k_proj ? c->q_proj
                                                                          : c->k_proj)) ||
         (split && (r = scratch(layer, fn, p, MHA_Q_PROJ, c->q_proj))) ||
         (split_kv && (r = scratch(layer, fn, p, MHA_K_PROJ, c->k_proj)))))
        return r;
    /* the SDPA backward writes the sinks' gradient whenever it has sinks */
    if (layer->d.use_sinks && !p->need_sinks &&
        (r = scratch(layer, fn, p, MHA_G_SINKS, layer->d.heads)))
        return r;
    return VKATTN_SUCCESS;
}

/* The SDPA backward's params: the forward's, on the path the forward took
 * (AUTO with the log-sum-exp given takes the fused backward where it runs,
 * else the chained one, which recomputes the weights). */
static vkattn_result plan_sdpa(vkattn_mha *layer, const char *fn, const vkattn_layer_call *call,
                               mha_bwd_plan *p)
{
    p->sdpa = p->f.sdpa;
    p->sdpa.mask.has_mask = p->s.mask.tensor != NULL;
    p->sdpa.mask.mask_broadcast = p->s.mask.broadcast;
    p->sdpa.return_weights = false;
    p->sdpa.path = !p->s.fused                      ? VKATTN_SDPA_UNFUSED
                   : call->path == VKATTN_SDPA_FUSED ? VKATTN_SDPA_FUSED
                                                     : VKATTN_SDPA_AUTO;
    uint64_t floats;
    uint32_t count;
    vkattn_result r = vkattn_sdpa_backward_workspace_size(layer->ctx, &p->sdpa, p->s.fused, false,
                                                          &floats, &count);
    if (r) { /* say which call it was; the op's own message says why */
        char why[512];
        snprintf(why, sizeof why, "%s", vkattn_last_error());
        return vka_fail(layer->ctx, r, "%s: the attention's backward: %s", fn, why);
    }
    return VKATTN_SUCCESS;
}

/* For a dry run: the tensors the forward of this call would keep (its
 * scratch, created here ahead as its prepare would) and its mask. */
static vkattn_result dry_saved(vkattn_mha *layer, const char *fn, const vkattn_layer_call *call,
                               const vkattn_layer_io *io, mha_bwd_plan *p)
{
    vkattn_context *ctx = layer->ctx;
    const vka_mha_call *c = &p->f.c;
    const bool split = layer->d.heads > 1, split_kv = layer->d.kv_heads > 1;
    vka_scratch *s = layer->scratch;
    mha_saved *v = &p->s;
    *v = (mha_saved){.fused = p->f.fused};
    vkattn_result r;
    if ((r = vka_scratch_get(ctx, fn, &s[split ? MHA_Q_HEADS : MHA_Q_PROJ], c->q_proj, &v->q)) ||
        (r = vka_scratch_get(ctx, fn, &s[split_kv ? MHA_K_HEADS : MHA_K_PROJ], c->k_proj,
                             &v->k)) ||
        (r = vka_scratch_get(ctx, fn, &s[split_kv ? MHA_V_HEADS : MHA_V_PROJ], c->v_proj,
                             &v->v)) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_CTX_HEADS], c->context, &v->context)) ||
        (r = vka_scratch_get(ctx, fn, &s[split ? MHA_CTX_MERGED : MHA_CTX_HEADS], c->context,
                             &v->merged)) ||
        (v->fused && (r = vka_scratch_get(ctx, fn, &s[MHA_LSE],
                                          (uint64_t)c->batch * layer->d.heads * c->tq, &v->lse))))
        return r;
    v->gated = v->merged;
    if (layer->d.use_gate &&
        ((r = vka_scratch_get(ctx, fn, &s[MHA_GATE_PRE], c->context, &v->gate_pre)) ||
         (r = vka_scratch_get(ctx, fn, &s[MHA_GATED], c->context, &v->gated))))
        return r;
    return vka_layer_mask_record(ctx, VKA_DRY_CMD, fn, &s[MHA_MASK], call, io, &p->f.mask, true,
                                 &v->mask);
}

static vkattn_result plan_backward(vkattn_mha *layer, const char *fn, bool dry,
                                   const vkattn_layer_call *call, const vkattn_layer_io *io,
                                   const vkattn_layer_grads *g,
                                   const vkattn_mha_weight_tensors *gw, mha_bwd_plan *p)
{
    vkattn_context *ctx = layer->ctx;
    if (!call || !io || !g)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !call ? "call" : !io ? "io" : "grads");
    named_tensors l;
    list_tensors(layer, io, g, gw, &l);
    vkattn_result r;
    if ((r = vka_mha_plan_call(layer, fn, call, io, &p->f)) ||
        (r = check_grads(layer, fn, &p->f.c, io, g, gw)) ||
        (r = check_aliasing(ctx, fn, &l)))
        return r;
    /* a dry run (prepare) may come before any forward: it plans with what
     * the forward of this call would keep */
    if (!dry && (r = check_kept(layer, fn, call, io)))
        return r;
    const mha_kept *k = &layer->kept;
    if (dry)
        r = dry_saved(layer, fn, call, io, p);
    else
        p->s = (mha_saved){.fused = k->fused, .q = k->q, .k = k->k, .v = k->v,
                           .context = k->context, .merged = k->merged, .lse = k->lse,
                           .gate_pre = k->gate_pre, .gated = k->gated, .mask = k->mask};
    if (r)
        return r;
    const vkattn_mha_weight_tensors none = {0};
    if (!gw)
        gw = &none;
    p->need_q = g->grad_query || gw->query_kernel || gw->query_bias || gw->query_norm;
    p->need_k = (io->key ? g->grad_key : g->grad_value) || gw->key_kernel || gw->key_bias ||
                gw->key_norm;
    p->need_v = g->grad_value || gw->value_kernel || gw->value_bias;
    p->sum_value = !io->key && g->grad_value;
    p->need_gate = layer->d.use_gate && (g->grad_query || gw->gate_kernel || gw->gate_bias);
    p->sum_query = layer->d.use_gate && g->grad_query;
    p->need_sinks = layer->d.use_sinks && gw->sinks;
    return plan_sdpa(layer, fn, call, p);
}

/* ---------------------------------------------------------------- record */

/* The backward of out (B*T, n) = in (B*T, k) @ dense.kernel (+ dense.bias). */
static vkattn_result record_dense_backward(vkattn_mha *layer, VkCommandBuffer cmd,
                                           const mha_dense *dense, uint64_t rows, uint32_t k,
                                           uint32_t n, vkattn_tensor *in, vkattn_tensor *grad_out,
                                           vkattn_tensor *grad_in, vkattn_tensor *grad_kernel,
                                           vkattn_tensor *grad_bias)
{
    vkattn_matmul_params mp = {.m = (uint32_t)rows, .n = n, .k = k, .has_bias = dense->bias};
    vkattn_matmul_backward_io mio = {.a = in, .b = dense->kernel, .grad_c = grad_out,
                                     .grad_a = grad_in, .grad_b = grad_kernel,
                                     .grad_bias = grad_bias};
    return vkattn_matmul_backward_record(layer->ctx, cmd, &mp, &mio);
}

/* grad (B, H, T, d) -> (B, T, H*d); nothing with one head (the same tensor).
 * H = the query heads or the key/value heads. */
static vkattn_result record_heads_back(vkattn_mha *layer, VkCommandBuffer cmd, bool split,
                                       uint32_t batch, uint32_t seq, uint32_t heads,
                                       uint32_t head_dim, vkattn_tensor *grad_out,
                                       vkattn_tensor *grad_in)
{
    if (heads == 1)
        return VKATTN_SUCCESS;
    vkattn_heads_params hp = {.batch = batch, .seq = seq, .heads = heads, .head_dim = head_dim};
    vkattn_heads_backward_io hio = {.grad_out = grad_out, .grad_in = grad_in};
    return split ? vkattn_heads_split_backward_record(layer->ctx, cmd, &hp, &hio)
                 : vkattn_heads_merge_backward_record(layer->ctx, cmd, &hp, &hio);
}

static vkattn_result record_sdpa_backward(vkattn_mha *layer, VkCommandBuffer cmd,
                                          const mha_bwd_plan *p, const vkattn_layer_io *io,
                                          const vkattn_mha_weight_tensors *gw)
{
    vkattn_tensor *const *t = p->t;
    vkattn_sdpa_backward_io sio = {
        .q = p->s.q, .k = p->s.k, .v = p->s.v,
        .value_mask = io->value_mask,
        .mask = p->s.mask.tensor,
        .out = p->s.fused ? p->s.context : NULL,
        .lse = p->s.fused ? p->s.lse : NULL,
        .grad_out = t[MHA_G_CTX_HEADS],
        .grad_q = t[MHA_G_Q_HEADS], .grad_k = t[MHA_G_K_HEADS], .grad_v = t[MHA_G_V_HEADS],
    };
    if (layer->d.use_sinks)
        sio.sinks = layer->w.sinks, sio.grad_sinks = p->need_sinks ? gw->sinks : t[MHA_G_SINKS];
    return vkattn_sdpa_backward_record(layer->ctx, cmd, &p->sdpa, &sio);
}

/* One backward call, as vka_record_dry_first hands it to record_backward. */
typedef struct mha_bwd_call {
    vkattn_mha *layer;
    const char *fn;
    const mha_bwd_plan *p;
    const vkattn_layer_io *io;
    const vkattn_layer_grads *g;
    const vkattn_mha_weight_tensors *gw;
} mha_bwd_call;

static vkattn_result record_backward(vkattn_context *ctx, VkCommandBuffer cmd, const void *args)
{
    const mha_bwd_call *a = args;
    vkattn_mha *layer = a->layer;
    const char *fn = a->fn;
    const mha_bwd_plan *p = a->p;
    const vkattn_layer_io *io = a->io;
    const vkattn_layer_grads *g = a->g;
    const vkattn_mha_weight_tensors *gw = a->gw;
    const vka_mha_dims *d = &layer->d;
    const vka_mha_call *c = &p->f.c;
    vkattn_tensor *const *t = p->t;
    const uint64_t q_rows = (uint64_t)c->batch * c->tq, kv_rows = (uint64_t)c->batch * c->tv;
    const bool inner = p->need_q || p->need_k || p->need_v || p->need_sinks;
    vkattn_result r;
    /* with the gate, the output projection's input is the gated context */
    vkattn_tensor *g_proj_in = d->use_gate ? t[MHA_G_GATED] : t[MHA_G_CTX_MERGED];
    if ((r = record_dense_backward(layer, cmd, MHA_DENSE(layer, output), q_rows, d->hv,
                                   d->output_dim, p->s.gated, g->grad_output,
                                   inner || p->need_gate ? g_proj_in : NULL, gw->output_kernel,
                                   gw->output_bias)))
        return r;
    /* the query path's gradient goes to scratch when the gate path's sums in */
    vkattn_tensor *grad_query = p->sum_query ? t[MHA_G_QUERY_Q] : g->grad_query;
    if ((inner || p->need_gate) && d->use_gate &&
        (r = vka_gate_backward_record(layer->ctx, cmd, fn, c->context, t[MHA_G_GATED],
                                      p->s.merged, p->s.gate_pre, t[MHA_G_CTX_MERGED],
                                      t[MHA_G_GATE_PRE])))
        return r;
    if (p->need_gate &&
        (r = record_dense_backward(layer, cmd, MHA_DENSE(layer, gate), q_rows, d->query_dim, d->hv,
                                   io->query, t[MHA_G_GATE_PRE],
                                   p->sum_query ? t[MHA_G_QUERY_GATE] : NULL, gw->gate_kernel,
                                   gw->gate_bias)))
        return r;
    if (!inner)
        return VKATTN_SUCCESS;
    if ((r = record_heads_back(layer, cmd, false, c->batch, c->tq, d->heads, d->value_dim,
                               t[MHA_G_CTX_MERGED], t[MHA_G_CTX_HEADS])) ||
        (r = record_sdpa_backward(layer, cmd, p, io, gw)))
        return r;
    vkattn_tensor *key = io->key ? io->key : io->value;
    vkattn_tensor *grad_key = io->key ? g->grad_key : p->sum_value ? t[MHA_G_KEY_IN] : NULL;
    vkattn_tensor *grad_value = p->sum_value ? t[MHA_G_VALUE_IN] : g->grad_value;
    if (p->need_q && vka_mha_has_head_prep(layer) &&
        (r = vka_mha_record_head_prep_backward(layer, cmd, fn, false, c->batch, c->tq,
                                               io->query, t[MHA_Q_PROJ], t[MHA_Q_RAW],
                                               t[MHA_G_Q_HEADS], t[MHA_G_NORM_ROWS],
                                               gw->query_norm, io->query_positions)))
        return r;
    if (p->need_q && ((r = record_heads_back(layer, cmd, true, c->batch, c->tq, d->heads,
                                             d->key_dim, t[MHA_G_Q_HEADS], t[MHA_G_Q_PROJ])) ||
                      (r = record_dense_backward(layer, cmd, MHA_DENSE(layer, query), q_rows,
                                                 d->query_dim, d->qk, io->query, t[MHA_G_Q_PROJ],
                                                 grad_query, gw->query_kernel, gw->query_bias))))
        return r;
    if (p->sum_query &&
        (r = vka_add_record(layer->ctx, cmd, fn, "grads->grad_query (query and gate paths)",
                            c->query, t[MHA_G_QUERY_Q], t[MHA_G_QUERY_GATE], g->grad_query)))
        return r;
    if (p->need_k && vka_mha_has_head_prep(layer) &&
        (r = vka_mha_record_head_prep_backward(layer, cmd, fn, true, c->batch, c->tv, key,
                                               t[MHA_K_PROJ], t[MHA_K_RAW], t[MHA_G_K_HEADS],
                                               t[MHA_G_NORM_ROWS], gw->key_norm,
                                               io->key_positions)))
        return r;
    if (p->need_k && ((r = record_heads_back(layer, cmd, true, c->batch, c->tv, d->kv_heads,
                                             d->key_dim, t[MHA_G_K_HEADS], t[MHA_G_K_PROJ])) ||
                      (r = record_dense_backward(layer, cmd, MHA_DENSE(layer, key), kv_rows,
                                                 d->key_width, d->kv_qk, key, t[MHA_G_K_PROJ],
                                                 grad_key, gw->key_kernel, gw->key_bias))))
        return r;
    if (p->need_v &&
        ((r = record_heads_back(layer, cmd, true, c->batch, c->tv, d->kv_heads, d->value_dim,
                                t[MHA_G_V_HEADS], t[MHA_G_V_PROJ])) ||
         (r = record_dense_backward(layer, cmd, MHA_DENSE(layer, value), kv_rows, d->value_width,
                                    d->kv_hv, io->value, t[MHA_G_V_PROJ], grad_value,
                                    gw->value_kernel, gw->value_bias))))
        return r;
    if (p->sum_value)
        return vka_add_record(layer->ctx, cmd, fn, "grads->grad_value (key and value paths)",
                              c->value, t[MHA_G_KEY_IN], t[MHA_G_VALUE_IN], g->grad_value);
    return VKATTN_SUCCESS;
}

vkattn_result vka_mha_backward_as(const char *fn, vkattn_mha *layer, VkCommandBuffer cmd,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io,
                                  const vkattn_layer_grads *g,
                                  const vkattn_mha_weight_tensors *gw)
{
    VKA_REQUIRE_OWNER_AND(fn, layer, layer->ctx, cmd);
    mha_bwd_plan p;
    vkattn_result r;
    if ((r = plan_backward(layer, fn, vka_is_dry(cmd), call, io, g, gw, &p)) ||
        (r = alloc_scratch(layer, fn, &p)))
        return r;
    const vkattn_mha_weight_tensors none = {0};
    if (!gw)
        gw = &none;
    /* the ops check their own limits as they record: a dry pass first, so
     * that a refusal leaves cmd untouched (it also creates what the real
     * pass uses, so it costs host time once) */
    const mha_bwd_call a = {layer, fn, &p, io, g, gw};
    return vka_record_dry_first(layer->ctx, cmd, record_backward, &a);
}

vkattn_result vkattn_mha_backward_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                         const vkattn_layer_call *call, const vkattn_layer_io *io,
                                         const vkattn_layer_grads *grads,
                                         const vkattn_mha_weight_tensors *grad_w)
{
    VKA_RECORD_MODES(layer, layer->ctx, cmd,
                     vkattn_mha_backward_record(layer, cmd, call, io, grads, grad_w));
    return vka_mha_backward_as(__func__, layer, cmd, call, io, grads,
                               grad_w);
}
