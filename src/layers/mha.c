/* MultiHeadAttention: checking a call and recording it as ops.
 *
 *   query/key/value --matmul+bias--> (B, T, H*d) --heads_split--> (B, H, T, d)
 *   [use_qk_norm/use_rope: Q and K heads normalized and turned in place
 *    (mha_head_prep.c)]
 *   [query mask, or a mask with a key axis of 1 --mask_expand--> one explicit
 *    (B|1, H|1, Tq|1, Tv) mask the ops can read]
 *   SDPA (masked rows zero, scores before dropout) --> (B, H, Tq, dv)
 *   --heads_merge--> (B, Tq, H*dv) [use_gate: * sigmoid(query @ gate_kernel
 *   + gate_bias), (B, Tq, H*dv) as well, so no split or merge] --matmul+bias--> output
 *
 * With one head the split and merge are the identity and are skipped.
 *
 * Why the query mask becomes a mask tensor: SDPA takes a value mask (B, Tv)
 * and an explicit mask (B|1, H|1, Tq|1, Tv), but a (B, Tq) query mask is
 * neither. Keras folds it into the attention mask (query_mask[:, :, None] &
 * ...), so a masked query row has no allowed key, gets all-zero weights (and
 * zero returned scores), and its output row is the output bias. Folding it the
 * same way gives exactly that through the one masking path, with no separate
 * fix-up of outputs and scores afterwards. */
#include "vkattn/decode.h"
#include "vkattn/heads.h"
#include "vkattn/matmul.h"
#include "vkattn/sdpa.h"

#include <stdlib.h>

#include "core/dtype.h"
#include "core/error.h"
#include "layers/mha_internal.h"
#include "ops/gate.h"
#include "ops/heads_rows.h"
#include "ops/kv_cache.h"
#include "vk/prepare.h"
#include "vk/submit.h"
#include "vk/tensor.h"
#include "vk/record_mode.h"
#include "vk/view.h"

/* Scratch tensors are 1-D, indexed in 32 bits by every kernel. */
static vkattn_result check_scratch_size(vkattn_context *ctx, const char *fn, uint64_t count,
                                        const char *what)
{
    if (count > UINT32_MAX || count * sizeof(float) > vka_max_range(ctx))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu floats) exceeds the device's storage buffer range or "
                        "32-bit indexing",
                        fn, what, (unsigned long long)count);
    return VKATTN_SUCCESS;
}

/* A 16-bit layer takes data tensors and scores of its dtype or f32 (checked
 * with the shapes) but f32 masks, as SDPA does: say so by name rather than as
 * a generic unsupported type. */
static vkattn_result check_mask_f32(vkattn_context *ctx, const char *fn, vkattn_dtype layer_dtype,
                                    const vkattn_tensor *mask, const char *what)
{
    const vkattn_dtype dt = vkattn_tensor_get_info(mask).desc.dtype;
    if (dt == VKATTN_DTYPE_F32)
        return VKATTN_SUCCESS;
    return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                    "%s: %s is %s tensor; masks are f32 (nonzero = may attend), also for %s "
                    "layer",
                    fn, what, vka_dtype_a_name(dt), vka_dtype_a_name(layer_dtype));
}

static vkattn_result check_half_io(vkattn_context *ctx, const char *fn, vkattn_dtype layer_dtype,
                                   const vkattn_layer_io *io)
{
    if (!io)
        return VKATTN_SUCCESS; /* vka_layer_check_io reports it */
    const vkattn_tensor *masks[3] = {io->query_mask, io->value_mask, io->attention_mask};
    static const char *names[3] = {"io->query_mask", "io->value_mask", "io->attention_mask"};
    vkattn_result r;
    for (int i = 0; i < 3; i++)
        if (masks[i] && (r = check_mask_f32(ctx, fn, layer_dtype, masks[i], names[i])))
            return r;
    return VKATTN_SUCCESS;
}

vkattn_result vka_mha_plan_call(vkattn_mha *layer, const char *fn,
                                const vkattn_layer_call *call, const vkattn_layer_io *io,
                                mha_plan *p)
{
    vkattn_context *ctx = layer->ctx;
    const vka_mha_dims *d = &layer->d;
    const vka_layer_shape shape = {
        .dq = d->query_dim, .dk = d->key_width, .dv = d->value_width, .dout = d->output_dim,
        .heads = d->heads, .multi_head = true, .data_dtype = layer->dtype,
    };
    vkattn_result r;
    if (layer->dtype != VKATTN_DTYPE_F32 && (r = check_half_io(ctx, fn, layer->dtype, io)))
        return r;
    if ((r = vka_mha_resolve_call(ctx, fn, d, call, &p->c)) ||
        (r = vka_layer_check_io(ctx, fn, call, io, &shape, &p->mask)) ||
        (r = vka_mha_check_positions(layer, fn, io, &p->c)))
        return r;
    const vka_mha_call *c = &p->c;
    p->key = io->key ? io->key : io->value;
    const bool has_mask = io->query_mask || io->attention_mask;
    if ((r = check_scratch_size(ctx, fn, c->q_proj, "the projected queries (B*Tq*H*key_dim)")) ||
        (r = check_scratch_size(ctx, fn, c->k_proj, "the projected keys (B*Tv*H*key_dim)")) ||
        (r = check_scratch_size(ctx, fn, c->v_proj, "the projected values (B*Tv*H*value_dim)")) ||
        (r = check_scratch_size(ctx, fn, c->context, "the attention context (B*Tq*H*value_dim)")) ||
        (has_mask &&
         (r = check_scratch_size(ctx, fn, c->mask_per_head, "the combined mask (B*H*Tq*Tv)"))))
        return r;
    /* the gate's tensors are as large as the context: already checked */
    /* the broadcast of the mask is known once recorded; it does not change
     * what SDPA checks here */
    const vkattn_broadcast none = {0};
    vka_mha_sdpa_params(d, c, call, io->value_mask != NULL, has_mask ? &none : NULL, &p->sdpa);
    /* SDPA's own checks (fused path availability, score tensor limits) run
     * here, before anything is recorded */
    uint64_t workspace;
    if ((r = vkattn_sdpa_workspace_size(ctx, &p->sdpa, &workspace)))
        return r;
    /* the chained path needs a score workspace or returns the weights; the
     * fused one neither */
    p->fused = workspace == 0 && !p->sdpa.return_weights;
    return VKATTN_SUCCESS;
}

static vkattn_result scratch(vkattn_mha *layer, const char *fn, mha_plan *p, mha_slot slot,
                             uint64_t count)
{
    return vka_scratch_get(layer->ctx, fn, &layer->scratch[slot], count, &p->t[slot]);
}

static vkattn_result alloc_scratch(vkattn_mha *layer, const char *fn,
                                   const vkattn_layer_call *call, mha_plan *p)
{
    const vka_mha_call *c = &p->c;
    /* with one (key/value) head, the split and merge are the identity */
    const bool split = layer->d.heads > 1, split_kv = layer->d.kv_heads > 1;
    vkattn_result r;
    for (int i = 0; i < MHA_SLOTS; i++)
        p->t[i] = NULL;
    if ((r = scratch(layer, fn, p, MHA_Q_PROJ, c->q_proj)) ||
        (r = scratch(layer, fn, p, MHA_K_PROJ, c->k_proj)) ||
        (r = scratch(layer, fn, p, MHA_V_PROJ, c->v_proj)) ||
        (r = scratch(layer, fn, p, MHA_CTX_HEADS, c->context)))
        return r;
    if (split && ((r = scratch(layer, fn, p, MHA_Q_HEADS, c->q_proj)) ||
                  (r = scratch(layer, fn, p, MHA_CTX_MERGED, c->context))))
        return r;
    if (split_kv && ((r = scratch(layer, fn, p, MHA_K_HEADS, c->k_proj)) ||
                     (r = scratch(layer, fn, p, MHA_V_HEADS, c->v_proj))))
        return r;
    if (layer->d.use_gate && ((r = scratch(layer, fn, p, MHA_GATE_PRE, c->context)) ||
                              (r = scratch(layer, fn, p, MHA_GATED, c->context))))
        return r;
    /* the fused backward recomputes the weights from the forward's
     * log-sum-exp; cannot overflow: at most the context's count */
    if (call->keep_for_backward && p->fused &&
        (r = scratch(layer, fn, p, MHA_LSE, (uint64_t)c->batch * layer->d.heads * c->tq)))
        return r;
    return VKATTN_SUCCESS;
}

/* out (B*T, n) = in (B*T, k) @ dense.kernel (+ dense.bias): the rows of every
 * batch are one matrix, which fills matmul tiles better than T rows each. */
static vkattn_result record_dense(vkattn_mha *layer, VkCommandBuffer cmd, const mha_dense *dense,
                                  uint64_t rows, uint32_t k, uint32_t n, vkattn_tensor *in,
                                  vkattn_tensor *out)
{
    vkattn_matmul_params mp = {.m = (uint32_t)rows, .n = n, .k = k, .has_bias = dense->bias};
    vkattn_matmul_io mio = {.a = in, .b = dense->kernel, .bias = dense->bias, .c = out};
    return vkattn_matmul_record(layer->ctx, cmd, &mp, &mio);
}

/* One input to project: in (B, T, in_width) -> proj (B, T, H*head_dim) ->
 * heads (B, H, T, head_dim); H = the query heads or the key/value heads. */
typedef struct mha_input {
    const mha_dense *dense;
    uint32_t seq, in_width, num_heads, head_dim;
    vkattn_tensor *in, *proj, *heads;
} mha_input;

/* Projects and splits one input; *out is the (B, H, T, d) tensor (the
 * projection itself when H = 1: then both layouts are the same). */
static vkattn_result record_projection(vkattn_mha *layer, VkCommandBuffer cmd, uint32_t batch,
                                       const mha_input *in, vkattn_tensor **out)
{
    const uint32_t H = in->num_heads;
    vkattn_result r = record_dense(layer, cmd, in->dense, (uint64_t)batch * in->seq,
                                   in->in_width, H * in->head_dim, in->in, in->proj);
    if (r || H == 1) {
        *out = in->proj;
        return r;
    }
    vkattn_heads_params hp = {
        .batch = batch, .seq = in->seq, .heads = H, .head_dim = in->head_dim};
    vkattn_heads_io hio = {.in = in->proj, .out = in->heads};
    *out = in->heads;
    return vkattn_heads_split_record(layer->ctx, cmd, &hp, &hio);
}

static vkattn_result record_attention(vkattn_mha *layer, VkCommandBuffer cmd, const mha_plan *p,
                                      const vkattn_layer_io *io, const vka_layer_mask *mask,
                                      vkattn_tensor *q, vkattn_tensor *k, vkattn_tensor *v)
{
    vkattn_sdpa_params sp = p->sdpa;
    sp.mask.has_mask = mask->tensor != NULL;
    sp.mask.mask_broadcast = mask->broadcast;
    vkattn_sdpa_io sio = {
        .q = q, .k = k, .v = v,
        .value_mask = io->value_mask,
        .mask = mask->tensor,
        .out = p->t[MHA_CTX_HEADS],
        .weights = io->scores,
        .lse = p->t[MHA_LSE], /* only when kept for the backward on the fused path */
        .sinks = layer->d.use_sinks ? layer->w.sinks : NULL,
    };
    return vkattn_sdpa_record(layer->ctx, cmd, &sp, &sio);
}

/* use_gate: gated = merged * sigmoid(query @ gate_kernel + gate_bias) over
 * rows (B*Tq) of H*dv, the layout of the merged context, so no head split is
 * needed. Without the gate *out = merged. */
static vkattn_result record_gate(vkattn_mha *layer, VkCommandBuffer cmd, const char *fn,
                                 uint64_t rows, vkattn_tensor *query, vkattn_tensor *merged,
                                 vkattn_tensor *pre, vkattn_tensor *gated, vkattn_tensor **out)
{
    const vka_mha_dims *d = &layer->d;
    *out = merged;
    if (!d->use_gate)
        return VKATTN_SUCCESS;
    vkattn_result r =
        record_dense(layer, cmd, MHA_DENSE(layer, gate), rows, d->query_dim, d->hv, query, pre);
    if (r)
        return r;
    *out = gated;
    return vka_gate_record(layer->ctx, cmd, fn, rows * d->hv, merged, pre, gated);
}

/* Merges the context heads, gates them (use_gate), projects to the output.
 * *merged_out: the merged context (before the gate); *gated_out: the output
 * projection's input. */
static vkattn_result record_output(vkattn_mha *layer, VkCommandBuffer cmd, const char *fn,
                                   const mha_plan *p, const vkattn_layer_io *io,
                                   vkattn_tensor **merged_out, vkattn_tensor **gated_out)
{
    const vka_mha_dims *d = &layer->d;
    const uint64_t rows = (uint64_t)p->c.batch * p->c.tq;
    vkattn_tensor *merged = p->t[MHA_CTX_HEADS];
    vkattn_result r;
    if (d->heads > 1) {
        vkattn_heads_params hp = {
            .batch = p->c.batch, .seq = p->c.tq, .heads = d->heads, .head_dim = d->value_dim};
        vkattn_heads_io hio = {.in = merged, .out = p->t[MHA_CTX_MERGED]};
        if ((r = vkattn_heads_merge_record(layer->ctx, cmd, &hp, &hio)))
            return r;
        merged = hio.out;
    }
    *merged_out = merged;
    if ((r = record_gate(layer, cmd, fn, rows, io->query, merged, p->t[MHA_GATE_PRE],
                         p->t[MHA_GATED], gated_out)))
        return r;
    return record_dense(layer, cmd, MHA_DENSE(layer, output), rows, d->hv, d->output_dim,
                        *gated_out, io->output);
}

/* Remembers what this forward left in the scratch for the backward
 * (mha_backward.c), with the call and io it must be matched against. */
static void keep_for_backward(vkattn_mha *layer, const vkattn_layer_call *call,
                              const vkattn_layer_io *io, const mha_plan *p,
                              const vka_layer_mask *mask, vkattn_tensor *const qkv[3],
                              vkattn_tensor *merged, vkattn_tensor *gated)
{
    layer->kept = (mha_kept){
        .valid = true,
        .call = *call,
        .fused = p->fused,
        .query = io->query, .key = io->key, .value = io->value,
        .query_mask = io->query_mask, .value_mask = io->value_mask,
        .attention_mask = io->attention_mask,
        .attention_mask_per_head = io->attention_mask_per_head,
        .query_positions = io->query_positions, .key_positions = io->key_positions,
        .q = qkv[0], .k = qkv[1], .v = qkv[2],
        .context = p->t[MHA_CTX_HEADS],
        .merged = merged,
        .gate_pre = p->t[MHA_GATE_PRE],
        .gated = gated,
        .lse = p->t[MHA_LSE],
        .mask = *mask,
    };
}

vkattn_result vka_mha_record_as(const char *caller, vkattn_mha *layer, VkCommandBuffer cmd,
                                const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    VKA_REQUIRE_OWNER_AND(caller, layer, layer->ctx, cmd);
    mha_plan p;
    vkattn_result r;
    vka_layer_mask mask;
    if ((r = vka_mha_plan_call(layer, caller, call, io, &p)) ||
        (r = alloc_scratch(layer, caller, call, &p)) ||
        (r = vka_layer_mask_record(layer->ctx, cmd, caller, &layer->scratch[MHA_MASK], call, io,
                                   &p.mask, true, &mask)))
        return r;
    /* from here on the scratch a kept forward left is overwritten */
    if (!vka_is_dry(cmd))
        layer->kept.valid = false;
    const vka_mha_dims *d = &layer->d;
    const mha_input inputs[3] = {
        {MHA_DENSE(layer, query), p.c.tq, d->query_dim, d->heads, d->key_dim, io->query,
         p.t[MHA_Q_PROJ], p.t[MHA_Q_HEADS]},
        {MHA_DENSE(layer, key), p.c.tv, d->key_width, d->kv_heads, d->key_dim, p.key,
         p.t[MHA_K_PROJ], p.t[MHA_K_HEADS]},
        {MHA_DENSE(layer, value), p.c.tv, d->value_width, d->kv_heads, d->value_dim, io->value,
         p.t[MHA_V_PROJ], p.t[MHA_V_HEADS]},
    };
    vkattn_tensor *qkv[3], *merged, *gated;
    for (int i = 0; i < 3; i++)
        if ((r = record_projection(layer, cmd, p.c.batch, &inputs[i], &qkv[i])))
            return r;
    if ((r = vka_mha_record_head_prep(layer, cmd, caller, false, p.c.batch, p.c.tq, qkv[0],
                                      io->query_positions, NULL)) ||
        (r = vka_mha_record_head_prep(layer, cmd, caller, true, p.c.batch, p.c.tv, qkv[1],
                                      io->key_positions, NULL)))
        return r;
    if ((r = record_attention(layer, cmd, &p, io, &mask, qkv[0], qkv[1], qkv[2])) ||
        (r = record_output(layer, cmd, caller, &p, io, &merged, &gated)))
        return r;
    if (call->keep_for_backward && !vka_is_dry(cmd))
        keep_for_backward(layer, call, io, &p, &mask, qkv, merged, gated);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_mha_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    VKA_RECORD_MODES(layer, layer->ctx, cmd, vkattn_mha_record(layer, cmd, call, io));
    return vka_mha_record_as(__func__, layer, cmd, call, io);
}

/* ---------------------------------------------------------------- cached calls
 *
 * Q, K and V of the Tnew new tokens are projected at once, (B, Tnew, H*d);
 * then, per chunk of at most VKATTN_DECODE_MAX_TQ rows: the chunk's rows are
 * split into heads, its K/V appended to the cache, its queries decoded
 * against everything cached so far (bottom-right causal: row i sees the keys
 * up to its own position), and its context merged back into its rows of
 * (B, Tnew, H*dv). One output projection ends the call. */

typedef struct mha_cached_plan {
    const char *fn; /* the public function, for messages */
    vka_mha_call c;
    uint32_t chunk; /* rows per chunk: min(Tnew, VKATTN_DECODE_MAX_TQ) */
    vkattn_tensor *value_mask; /* (B, capacity) or NULL */
    vkattn_tensor *t[MHA_SLOTS];
} mha_cached_plan;

/* What a cached call refuses: another shape of keys than of queries, scores,
 * masks other than the cache's value mask, a non-causal call, and a cache of
 * another context, head count, width or batch. */
static vkattn_result check_cached_call(vkattn_mha *layer, const char *fn,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       const vkattn_kv_cache *cache)
{
    vkattn_context *ctx = layer->ctx;
    const vka_mha_dims *d = &layer->d;
    if (call->tv && call->tv != call->tq)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: call->tv is %u but a cached call takes as many new keys as new "
                        "queries (call->tq %u; tv 0 = tq)",
                        fn, call->tv, call->tq);
    if (call->return_attention_scores || io->scores)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: a cached call returns no attention scores (decode attention never "
                        "forms them)",
                        fn);
    if (io->query_positions || io->key_positions)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: a cached call takes no %s: each new token sits at its sequence's "
                        "cache length plus its index",
                        fn, io->query_positions ? "io->query_positions" : "io->key_positions");
    if (io->query_mask || io->attention_mask)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: a cached call takes no %s (only a value_mask over the cache); it is "
                        "causal over the cache",
                        fn, io->query_mask ? "query_mask" : "attention_mask");
    if (call->causal == VKATTN_CAUSAL_NONE)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: a cached call is causal; set call->causal (TOP_LEFT over the whole "
                        "sequence is BOTTOM_RIGHT over the new tokens: both are accepted)",
                        fn);
    const vkattn_kv_cache_desc cd = cache->desc;
    if (cache->ctx != ctx)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: the cache belongs to another context", fn);
    if (cd.kv_heads != d->kv_heads || cd.key_dim != d->key_dim || cd.value_dim != d->value_dim)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: the cache holds (kv_heads %u, key_dim %u, value_dim %u) but the "
                        "layer has (key/value heads %u, key_dim %u, value_dim %u)",
                        fn, cd.kv_heads, cd.key_dim, cd.value_dim, d->kv_heads, d->key_dim,
                        d->value_dim);
    if (call->batch != cd.batch)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: call->batch is %u but the cache holds %u sequences", fn,
                        call->batch, cd.batch);
    return VKATTN_SUCCESS;
}

/* The scratch of one chunk of rows (heads split per chunk, projections and
 * context for the whole call). */
static vkattn_result get_cached_scratch(vkattn_mha *layer, mha_cached_plan *p)
{
    vkattn_context *ctx = layer->ctx;
    const char *fn = p->fn;
    const vka_mha_dims *d = &layer->d;
    const vka_mha_call *c = &p->c;
    vkattn_result r;
    for (int i = 0; i < MHA_SLOTS; i++)
        p->t[i] = NULL;
    const uint64_t rows = (uint64_t)c->batch * d->heads * p->chunk;
    const uint64_t kv_rows = (uint64_t)c->batch * d->kv_heads * p->chunk;
    vka_scratch *s = layer->scratch;
    if ((r = vka_scratch_get(ctx, fn, &s[MHA_Q_PROJ], c->q_proj, &p->t[MHA_Q_PROJ])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_K_PROJ], c->k_proj, &p->t[MHA_K_PROJ])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_V_PROJ], c->v_proj, &p->t[MHA_V_PROJ])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_Q_HEADS], rows * d->key_dim, &p->t[MHA_Q_HEADS])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_K_HEADS], kv_rows * d->key_dim,
                             &p->t[MHA_K_HEADS])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_V_HEADS], kv_rows * d->value_dim,
                             &p->t[MHA_V_HEADS])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_CTX_HEADS], rows * d->value_dim,
                             &p->t[MHA_CTX_HEADS])) ||
        (r = vka_scratch_get(ctx, fn, &s[MHA_CTX_MERGED], c->context, &p->t[MHA_CTX_MERGED])))
        return r;
    if (d->use_gate &&
        ((r = vka_scratch_get(ctx, fn, &s[MHA_GATE_PRE], c->context, &p->t[MHA_GATE_PRE])) ||
         (r = vka_scratch_get(ctx, fn, &s[MHA_GATED], c->context, &p->t[MHA_GATED]))))
        return r;
    return VKATTN_SUCCESS;
}

static vkattn_result plan_cached(vkattn_mha *layer, const vkattn_layer_call *call,
                                 const vkattn_layer_io *io, vkattn_kv_cache *cache,
                                 mha_cached_plan *p)
{
    vkattn_context *ctx = layer->ctx;
    const char *fn = p->fn;
    const vka_mha_dims *d = &layer->d;
    if (!call || !io || !cache)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !call ? "call" : !io ? "io" : "cache");
    vkattn_result r;
    if ((r = check_cached_call(layer, fn, call, io, cache)))
        return r;
    const vkattn_kv_cache_desc cd = cache->desc;
    vkattn_layer_call full = *call;
    full.tv = call->tq;
    full.causal = VKATTN_CAUSAL_NONE; /* the cache's causality is decode's, not SDPA's */
    const vka_layer_shape shape = {
        .dq = d->query_dim, .dk = d->key_width, .dv = d->value_width, .dout = d->output_dim,
        .heads = d->heads, .multi_head = true, .data_dtype = layer->dtype,
    };
    /* the value mask covers the cache, (B, capacity), not the new keys */
    vkattn_layer_io new_rows = *io;
    new_rows.value_mask = NULL;
    vka_mask_layout mask;
    if (io->value_mask &&
        (r = check_mask_f32(ctx, fn, layer->dtype, io->value_mask, "io->value_mask")))
        return r;
    if ((r = vka_mha_resolve_call(ctx, fn, d, &full, &p->c)) ||
        (r = vka_layer_check_io(ctx, fn, &full, &new_rows, &shape, &mask)) ||
        (io->value_mask && (r = vka_tensor_check(ctx, io->value_mask,
                                                 (uint64_t)cd.batch * cd.capacity, fn,
                                                 "io->value_mask (B, capacity)"))))
        return r;
    if (io->value_mask && (io->value_mask == io->output))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->output aliases io->value_mask", fn);
    p->value_mask = io->value_mask;
    if (p->c.dropout_active)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: a cached call has no dropout (call->training with a nonzero rate)",
                        fn);
    if (cache->host_known)
        for (uint32_t b = 0; b < cd.batch; b++)
            if (call->tq > cd.capacity - cache->host_len[b])
                return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: sequence %u holds %u of %u keys; appending %u more passes "
                                "the capacity",
                                fn, b, cache->host_len[b], cd.capacity, call->tq);
    const vka_mha_call *c = &p->c;
    p->chunk = c->tq < VKATTN_DECODE_MAX_TQ ? c->tq : VKATTN_DECODE_MAX_TQ;
    if ((r = check_scratch_size(ctx, fn, c->q_proj, "the projected queries (B*Tq*H*key_dim)")) ||
        (r = check_scratch_size(ctx, fn, c->k_proj, "the projected keys (B*Tv*H*key_dim)")) ||
        (r = check_scratch_size(ctx, fn, c->v_proj, "the projected values (B*Tv*H*value_dim)")) ||
        (r = check_scratch_size(ctx, fn, c->context, "the attention context (B*Tq*H*value_dim)")))
        return r;
    return get_cached_scratch(layer, p);
}

/* Rows [t0, t0 + n) of a projection (B, Tnew, H*hd) -> (B, H, n, hd), or back;
 * H = the query heads or the key/value heads. */
static vkattn_result record_rows(vkattn_mha *layer, VkCommandBuffer cmd, const mha_cached_plan *p,
                                 bool split, uint32_t heads, uint32_t head_dim, uint32_t t0,
                                 uint32_t n, vkattn_tensor *in, vkattn_tensor *out)
{
    vkattn_heads_params hp = {
        .batch = p->c.batch, .seq = n, .heads = heads, .head_dim = head_dim};
    vkattn_heads_io hio = {.in = in, .out = out};
    return vka_heads_rows_record(layer->ctx, cmd, p->fn, &hp, &hio, split, p->c.tq, t0, NULL);
}

static vkattn_result record_chunk(vkattn_mha *layer, VkCommandBuffer cmd,
                                  const mha_cached_plan *p, vkattn_kv_cache *cache, uint32_t t0,
                                  uint32_t n)
{
    const vka_mha_dims *d = &layer->d;
    vkattn_tensor *const *t = p->t;
    vkattn_result r;
    if ((r = record_rows(layer, cmd, p, true, d->kv_heads, d->key_dim, t0, n, t[MHA_K_PROJ],
                         t[MHA_K_HEADS])) ||
        (r = record_rows(layer, cmd, p, true, d->kv_heads, d->value_dim, t0, n, t[MHA_V_PROJ],
                         t[MHA_V_HEADS])) ||
        (r = record_rows(layer, cmd, p, true, d->heads, d->key_dim, t0, n, t[MHA_Q_PROJ],
                         t[MHA_Q_HEADS])) ||
        /* before the append, which moves the lengths on: row i of the chunk
         * sits at lengths[b] + i, and the cache keeps turned keys */
        (r = vka_mha_record_head_prep(layer, cmd, p->fn, true, p->c.batch, n, t[MHA_K_HEADS],
                                      NULL, cache->lengths)) ||
        (r = vka_mha_record_head_prep(layer, cmd, p->fn, false, p->c.batch, n, t[MHA_Q_HEADS],
                                      NULL, cache->lengths)) ||
        (r = vka_kv_cache_append_flat(cache, cmd, p->fn, t[MHA_K_HEADS],
                                      t[MHA_V_HEADS], n)))
        return r;
    vkattn_sdpa_decode_params dp = {
        .batch = p->c.batch, .heads = d->heads, .tq = n, .kv_heads = d->kv_heads,
        .capacity = cache->desc.capacity, .dk = d->key_dim, .dv = d->value_dim,
        .has_value_mask = p->value_mask != NULL,
        .sliding_window = d->sliding_window,
        .softcap = d->softcap,
        .has_sinks = d->use_sinks,
    };
    vkattn_sdpa_decode_io dio = {.q = t[MHA_Q_HEADS], .cache = cache,
                                 .value_mask = p->value_mask, .out = t[MHA_CTX_HEADS],
                                 .sinks = d->use_sinks ? layer->w.sinks : NULL};
    if ((r = vkattn_sdpa_decode_record(layer->ctx, cmd, &dp, &dio)))
        return r;
    return record_rows(layer, cmd, p, false, d->heads, d->value_dim, t0, n, t[MHA_CTX_HEADS],
                       t[MHA_CTX_MERGED]);
}

vkattn_result vka_mha_record_cached_as(const char *fn, vkattn_mha *layer, VkCommandBuffer cmd,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       vkattn_kv_cache *cache)
{
    VKA_REQUIRE_OWNER_AND(fn, layer, layer->ctx, cmd);
    mha_cached_plan p = {.fn = fn};
    vkattn_result r = plan_cached(layer, call, io, cache, &p);
    if (r)
        return r;
    /* everything that can be refused for the arguments was: a failure from
     * here on is a device or memory one. The scratch a kept forward left is
     * overwritten: no backward can follow this call. */
    if (!vka_is_dry(cmd))
        layer->kept.valid = false;
    const vka_mha_dims *d = &layer->d;
    const uint64_t rows = (uint64_t)p.c.batch * p.c.tq;
    vkattn_tensor *key = io->key ? io->key : io->value;
    if ((r = record_dense(layer, cmd, MHA_DENSE(layer, query), rows, d->query_dim, d->qk, io->query,
                          p.t[MHA_Q_PROJ])) ||
        (r = record_dense(layer, cmd, MHA_DENSE(layer, key), rows, d->key_width, d->kv_qk, key,
                          p.t[MHA_K_PROJ])) ||
        (r = record_dense(layer, cmd, MHA_DENSE(layer, value), rows, d->value_width, d->kv_hv,
                          io->value, p.t[MHA_V_PROJ])))
        return r;
    for (uint32_t t0 = 0; t0 < p.c.tq; t0 += p.chunk) {
        const uint32_t n = p.c.tq - t0 < p.chunk ? p.c.tq - t0 : p.chunk;
        if ((r = record_chunk(layer, cmd, &p, cache, t0, n)))
            return r;
    }
    vkattn_tensor *gated;
    if ((r = record_gate(layer, cmd, fn, rows, io->query, p.t[MHA_CTX_MERGED],
                         p.t[MHA_GATE_PRE], p.t[MHA_GATED], &gated)))
        return r;
    return record_dense(layer, cmd, MHA_DENSE(layer, output), rows, d->hv, d->output_dim, gated,
                        io->output);
}

vkattn_result vkattn_mha_record_cached(vkattn_mha *layer, VkCommandBuffer cmd,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       vkattn_kv_cache *cache)
{
    VKA_RECORD_MODES_THEN(layer, layer->ctx, cmd,
                          vkattn_mha_record_cached(layer, cmd, call, io, cache),
                          vka_kv_cache_refresh(cache, __func__));
    return vka_mha_record_cached_as(__func__, layer, cmd, call, io, cache);
}
