/* MultiHeadAttention: checking a call and recording it as ops.
 *
 *   query/key/value --matmul+bias--> (B, T, H*d) --heads_split--> (B, H, T, d)
 *   [query mask, or a mask with a key axis of 1 --mask_expand--> one explicit
 *    (B|1, H|1, Tq|1, Tv) mask the ops can read]
 *   SDPA (masked rows zero, scores before dropout) --> (B, H, Tq, dv)
 *   --heads_merge--> (B, Tq, H*dv) --matmul+bias--> output
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
#include "vkattn/heads.h"
#include "vkattn/matmul.h"
#include "vkattn/sdpa.h"

#include "core/error.h"
#include "layers/mha_internal.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/submit.h"
#include "vk/tensor.h"

static const char caller[] = "vkattn_mha_record";

/* Everything one call needs, resolved and checked before recording. */
typedef struct mha_plan {
    vka_mha_call c;
    vkattn_tensor *key;  /* io->key, or io->value */
    vka_mask_layout mask; /* of io->attention_mask, if any */
    vkattn_sdpa_params sdpa; /* its mask broadcast set once the mask is recorded */
    vkattn_tensor *t[MHA_SLOTS]; /* this call's scratch; NULL where unused */
} mha_plan;

/* Scratch tensors are 1-D, indexed in 32 bits by every kernel. */
static vkattn_result check_scratch_size(vkattn_context *ctx, uint64_t count, const char *what)
{
    if (count > UINT32_MAX || count * sizeof(float) > vka_max_range(ctx))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu floats) exceeds the device's storage buffer range or "
                        "32-bit indexing",
                        caller, what, (unsigned long long)count);
    return VKATTN_SUCCESS;
}

static vkattn_result plan_call(vkattn_mha *layer, const vkattn_layer_call *call,
                               const vkattn_layer_io *io, mha_plan *p)
{
    vkattn_context *ctx = layer->ctx;
    const vka_mha_dims *d = &layer->d;
    const vka_layer_shape shape = {
        .dq = d->query_dim, .dk = d->key_width, .dv = d->value_width, .dout = d->output_dim,
        .heads = d->heads, .multi_head = true,
    };
    vkattn_result r;
    if ((r = vka_mha_resolve_call(ctx, caller, d, call, &p->c)) ||
        (r = vka_layer_check_io(ctx, caller, call, io, &shape, &p->mask)))
        return r;
    const vka_mha_call *c = &p->c;
    p->key = io->key ? io->key : io->value;
    const bool has_mask = io->query_mask || io->attention_mask;
    if ((r = check_scratch_size(ctx, c->q_proj, "the projected queries (B*Tq*H*key_dim)")) ||
        (r = check_scratch_size(ctx, c->k_proj, "the projected keys (B*Tv*H*key_dim)")) ||
        (r = check_scratch_size(ctx, c->v_proj, "the projected values (B*Tv*H*value_dim)")) ||
        (r = check_scratch_size(ctx, c->context, "the attention context (B*Tq*H*value_dim)")) ||
        (has_mask &&
         (r = check_scratch_size(ctx, c->mask_per_head, "the combined mask (B*H*Tq*Tv)"))))
        return r;
    /* the broadcast of the mask is known once recorded; it does not change
     * what SDPA checks here */
    const vkattn_broadcast none = {0};
    vka_mha_sdpa_params(d, c, call, io->value_mask != NULL, has_mask ? &none : NULL, &p->sdpa);
    /* SDPA's own checks (fused path availability, score tensor limits) run
     * here, before anything is recorded */
    uint64_t workspace;
    return vkattn_sdpa_workspace_size(ctx, &p->sdpa, &workspace);
}

static vkattn_result scratch(vkattn_mha *layer, mha_plan *p, mha_slot slot, uint64_t count)
{
    return vka_scratch_get(layer->ctx, caller, &layer->scratch[slot], count, &p->t[slot]);
}

static vkattn_result alloc_scratch(vkattn_mha *layer, mha_plan *p)
{
    const vka_mha_call *c = &p->c;
    const bool split = layer->d.heads > 1;
    vkattn_result r;
    for (int i = 0; i < MHA_SLOTS; i++)
        p->t[i] = NULL;
    if ((r = scratch(layer, p, MHA_Q_PROJ, c->q_proj)) ||
        (r = scratch(layer, p, MHA_K_PROJ, c->k_proj)) ||
        (r = scratch(layer, p, MHA_V_PROJ, c->v_proj)) ||
        (r = scratch(layer, p, MHA_CTX_HEADS, c->context)))
        return r;
    if (split && ((r = scratch(layer, p, MHA_Q_HEADS, c->q_proj)) ||
                  (r = scratch(layer, p, MHA_K_HEADS, c->k_proj)) ||
                  (r = scratch(layer, p, MHA_V_HEADS, c->v_proj)) ||
                  (r = scratch(layer, p, MHA_CTX_MERGED, c->context))))
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
 * heads (B, H, T, head_dim). */
typedef struct mha_input {
    const mha_dense *dense;
    uint32_t seq, in_width, head_dim;
    vkattn_tensor *in, *proj, *heads;
} mha_input;

/* Projects and splits one input; *out is the (B, H, T, d) tensor (the
 * projection itself when H = 1: then both layouts are the same). */
static vkattn_result record_projection(vkattn_mha *layer, VkCommandBuffer cmd, uint32_t batch,
                                       const mha_input *in, vkattn_tensor **out)
{
    const uint32_t H = layer->d.heads;
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
    };
    return vkattn_sdpa_record(layer->ctx, cmd, &sp, &sio);
}

static vkattn_result record_output(vkattn_mha *layer, VkCommandBuffer cmd, const mha_plan *p,
                                   const vkattn_layer_io *io)
{
    const vka_mha_dims *d = &layer->d;
    vkattn_tensor *merged = p->t[MHA_CTX_HEADS];
    if (d->heads > 1) {
        vkattn_heads_params hp = {
            .batch = p->c.batch, .seq = p->c.tq, .heads = d->heads, .head_dim = d->value_dim};
        vkattn_heads_io hio = {.in = merged, .out = p->t[MHA_CTX_MERGED]};
        vkattn_result r = vkattn_heads_merge_record(layer->ctx, cmd, &hp, &hio);
        if (r)
            return r;
        merged = hio.out;
    }
    return record_dense(layer, cmd, &layer->output, (uint64_t)p->c.batch * p->c.tq, d->hv,
                        d->output_dim, merged, io->output);
}

vkattn_result vkattn_mha_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    if (!layer || !cmd)
        return vka_fail(layer ? layer->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", caller, !layer ? "layer" : "cmd");
    mha_plan p;
    vkattn_result r;
    vka_layer_mask mask;
    if ((r = plan_call(layer, call, io, &p)) || (r = alloc_scratch(layer, &p)) ||
        (r = vka_layer_mask_record(layer->ctx, cmd, caller, &layer->scratch[MHA_MASK], call, io,
                                   &p.mask, true, &mask)))
        return r;
    const vka_mha_dims *d = &layer->d;
    const mha_input inputs[3] = {
        {&layer->query, p.c.tq, d->query_dim, d->key_dim, io->query, p.t[MHA_Q_PROJ],
         p.t[MHA_Q_HEADS]},
        {&layer->key, p.c.tv, d->key_width, d->key_dim, p.key, p.t[MHA_K_PROJ],
         p.t[MHA_K_HEADS]},
        {&layer->value, p.c.tv, d->value_width, d->value_dim, io->value, p.t[MHA_V_PROJ],
         p.t[MHA_V_HEADS]},
    };
    vkattn_tensor *qkv[3];
    for (int i = 0; i < 3; i++)
        if ((r = record_projection(layer, cmd, p.c.batch, &inputs[i], &qkv[i])))
            return r;
    if ((r = record_attention(layer, cmd, &p, io, &mask, qkv[0], qkv[1], qkv[2])))
        return r;
    return record_output(layer, cmd, &p, io);
}

vkattn_result vkattn_mha_run(vkattn_mha *layer, const vkattn_layer_call *call,
                             const vkattn_layer_io *io)
{
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_mha_run: layer is NULL");
    VKA_RUN(layer->ctx, vkattn_mha_record(layer, cmd, call, io));
}

vkattn_result vkattn_mha_prepare(vkattn_mha *layer, const vkattn_layer_call *call,
                                 const vkattn_layer_io *io)
{
    const char *fn = "vkattn_mha_prepare";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_prepare_result(layer->ctx, fn, vkattn_mha_record(layer, VKA_DRY_CMD, call, io));
}
