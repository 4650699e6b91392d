/* See layer_util.h. */
#include "layers/layer_util.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/growth.h"
#include "core/shape_text.h"
#include "ops/half_stage.h"
#include "ops/mask_expand.h"
#include "ops/rowmask.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vkattn/dropout.h"
#include "vkattn/matmul.h"
#include "vkattn/softmax.h"

/* ---------------------------------------------------------------- checks */

vkattn_result vka_layer_check_tensor(vkattn_context *ctx, const char *caller,
                                     const vkattn_tensor *t, const uint64_t *dims, int n,
                                     const char *what, const char *shape)
{
    return vka_layer_check_tensor_types(ctx, caller, t, dims, n, what, shape,
                                        VKA_DTYPE_BIT(VKATTN_DTYPE_F32));
}

vkattn_result vka_layer_check_tensor_types(vkattn_context *ctx, const char *caller,
                                           const vkattn_tensor *t, const uint64_t *dims, int n,
                                           const char *what, const char *shape, unsigned allowed)
{
    uint64_t count;
    if (!vka_product_u64(dims, n, &count))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: %s %s overflows 64 bits", caller,
                        what, shape);
    vkattn_result r = vka_tensor_check_types(ctx, t, count, caller, what, allowed);
    if (r != VKATTN_SUCCESS)
        return r;
    if (t->count != count) {
        char sizes[96];
        vka_dims_text(dims, n, sizes, sizeof sizes);
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s has %llu elements; must be %s = %s = %llu", caller, what,
                        (unsigned long long)t->count, shape, sizes, (unsigned long long)count);
    }
    if (t->rank >= 2 && t->dims[t->rank - 1] != dims[n - 1])
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s has last dim %u; must be %llu, the last dim of %s", caller, what,
                        t->dims[t->rank - 1], (unsigned long long)dims[n - 1], shape);
    return VKATTN_SUCCESS;
}

static bool overlaps(const vkattn_tensor *a, const vkattn_tensor *b)
{
    return a && b && a->buffer == b->buffer && a->offset < b->offset + b->bytes &&
           b->offset < a->offset + a->bytes;
}

enum { SLOT_OUTPUT = 6, SLOT_SCORES = 7 }; /* in check_disjoint's list */

/* The tensor in slot `w` of the list below (output or scores) must not share
 * memory with any other slot, the same tensor passed twice included. */
static vkattn_result check_disjoint(vkattn_context *ctx, const char *caller,
                                    const vkattn_layer_io *io, size_t w)
{
    const vkattn_tensor *t[] = {io->query,      io->value,      io->key,
                                io->query_mask, io->value_mask, io->attention_mask,
                                io->output,     io->scores};
    static const char *names[] = {"io->query",      "io->value",      "io->key",
                                  "io->query_mask", "io->value_mask", "io->attention_mask",
                                  "io->output",     "io->scores"};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (i != w && overlaps(t[w], t[i]))
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: %s overlaps %s; outputs must not share memory with other "
                            "tensors of the call",
                            caller, names[w], names[i]);
    return VKATTN_SUCCESS;
}

/* The element types a layer's query, key, value and output may have. */
static unsigned data_types(const vka_layer_shape *s)
{
    return VKA_DTYPE_BIT(VKATTN_DTYPE_F32) | VKA_DTYPE_BIT(s->data_dtype);
}

static vkattn_result check_inputs(vkattn_context *ctx, const char *caller,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io,
                                  const vka_layer_shape *s, vka_mask_layout *mask)
{
    const uint64_t B = call->batch, tq = call->tq, tv = call->tv;
    const uint64_t qd[3] = {B, tq, s->dq}, vd[3] = {B, tv, s->dv}, kd[3] = {B, tv, s->dk};
    const unsigned types = data_types(s);
    vkattn_result r;
    if ((r = vka_layer_check_tensor_types(ctx, caller, io->query, qd, 3, "io->query",
                                          "(B, Tq, Dq)", types)) ||
        (r = vka_layer_check_tensor_types(ctx, caller, io->value, vd, 3, "io->value",
                                          "(B, Tv, Dv)", types)))
        return r;
    if (io->key) {
        if ((r = vka_layer_check_tensor_types(ctx, caller, io->key, kd, 3, "io->key",
                                              "(B, Tv, Dk)", types)))
            return r;
    } else if (s->dk != s->dv) {
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->key is NULL (key = value) but the layer's key width %u differs "
                        "from its value width %u",
                        caller, s->dk, s->dv);
    }
    /* a 16-bit mask next to 16-bit data is a mistake to name, not a missing feature */
    if (s->data_dtype != VKATTN_DTYPE_F32 &&
        ((r = vka_f16_require_f32(ctx, io->query_mask, caller, "io->query_mask")) ||
         (r = vka_f16_require_f32(ctx, io->value_mask, caller, "io->value_mask")) ||
         (r = vka_f16_require_f32(ctx, io->attention_mask, caller, "io->attention_mask"))))
        return r;
    const uint64_t qm[2] = {B, tq}, vm[2] = {B, tv};
    if (io->query_mask &&
        (r = vka_layer_check_tensor(ctx, caller, io->query_mask, qm, 2, "io->query_mask", "(B, Tq)")))
        return r;
    if (io->value_mask &&
        (r = vka_layer_check_tensor(ctx, caller, io->value_mask, vm, 2, "io->value_mask", "(B, Tv)")))
        return r;
    if (io->attention_mask_per_head && !s->multi_head)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->attention_mask_per_head is set; only MultiHeadAttention has "
                        "heads",
                        caller);
    if (io->attention_mask_per_head && !io->attention_mask)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->attention_mask_per_head is set but io->attention_mask is NULL",
                        caller);
    if (io->attention_mask) {
        const vkattn_tensor *am = io->attention_mask;
        const vka_mask_target target = {
            .batch = call->batch, .heads = s->heads, .tq = call->tq, .tv = call->tv,
            .multi_head = s->multi_head, .per_head_legacy = io->attention_mask_per_head,
        };
        if ((r = vka_tensor_check(ctx, am, 1, caller, "io->attention_mask")) ||
            (r = vka_mask_resolve(ctx, caller, "io->attention_mask", am->rank, am->dims, &target,
                                  mask)))
            return r;
        if (am->count != mask->count) /* a tensor's dims always multiply to its count */
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: io->attention_mask has %llu elements; its shape needs %llu",
                            caller, (unsigned long long)am->count,
                            (unsigned long long)mask->count);
    }
    return VKATTN_SUCCESS;
}

vkattn_result vka_layer_check_io(vkattn_context *ctx, const char *caller,
                                 const vkattn_layer_call *call, const vkattn_layer_io *io,
                                 const vka_layer_shape *s, vka_mask_layout *mask)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    if ((r = check_inputs(ctx, caller, call, io, s, mask)))
        return r;
    const uint64_t od[3] = {call->batch, call->tq, s->dout};
    if ((r = vka_layer_check_tensor_types(ctx, caller, io->output, od, 3, "io->output",
                                          "(B, Tq, Dout)", data_types(s))))
        return r;
    if (call->return_attention_scores) {
        const uint64_t sd3[3] = {call->batch, call->tq, call->tv};
        const uint64_t sd4[4] = {call->batch, s->heads, call->tq, call->tv};
        r = s->heads > 1 ? vka_layer_check_tensor_types(ctx, caller, io->scores, sd4, 4,
                                                        "io->scores", "(B, H, Tq, Tv)",
                                                        data_types(s))
                         : vka_layer_check_tensor_types(ctx, caller, io->scores, sd3, 3,
                                                        "io->scores", "(B, Tq, Tv)",
                                                        data_types(s));
        if (r)
            return r;
    } else if (io->scores) {
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->scores is given but call->return_attention_scores is false",
                        caller);
    }
    if ((r = check_disjoint(ctx, caller, io, SLOT_OUTPUT)) ||
        (r = check_disjoint(ctx, caller, io, SLOT_SCORES)))
        return r;
    return VKATTN_SUCCESS;
}

vkattn_result vka_layer_check_unfused_path(vkattn_context *ctx, const char *caller,
                                           const vkattn_layer_call *call, const char *what)
{
    if (call->path != VKATTN_SDPA_FUSED)
        return VKATTN_SUCCESS;
    return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                    "%s: call->path is VKATTN_SDPA_FUSED but %s has no fused kernel; use "
                    "VKATTN_SDPA_AUTO or VKATTN_SDPA_UNFUSED",
                    caller, what);
}

/* ---------------------------------------------------------------- weights */

vkattn_result vka_layer_weight_create_typed(vkattn_context *ctx, const char *caller, uint64_t n,
                                            vkattn_dtype dtype, float init, vkattn_tensor **out)
{
    *out = NULL;
    vkattn_tensor *t;
    vkattn_result r = vka_tensor_create_1d_typed(ctx, n, dtype, &t);
    if (r != VKATTN_SUCCESS)
        return vka_fail(ctx, r, "%s: cannot allocate a weight of %llu floats: %s", caller,
                        (unsigned long long)n, vkattn_context_last_error(ctx));
    if ((r = vkattn_tensor_fill(t, init)) != VKATTN_SUCCESS) {
        vkattn_tensor_destroy(t);
        return r;
    }
    *out = t;
    return VKATTN_SUCCESS;
}

vkattn_result vka_layer_weight_set(vkattn_context *ctx, const char *caller, vkattn_tensor *t,
                                   const float *data, uint64_t n, const char *what)
{
    if (!data)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller, what);
    return vkattn_tensor_upload(t, data, 0, n);
}

vkattn_result vka_layer_weight_get(vkattn_context *ctx, const char *caller, vkattn_tensor *t,
                                   float *data, uint64_t n)
{
    (void)ctx, (void)caller;
    return data ? vkattn_tensor_download(t, data, 0, n) : VKATTN_SUCCESS;
}

/* ---------------------------------------------------------------- scratch */

vkattn_result vka_scratch_get(vkattn_context *ctx, const char *caller, vka_scratch *s, uint64_t n,
                              vkattn_tensor **out)
{
    if (s->current && s->capacity >= n) {
        *out = s->current;
        return VKATTN_SUCCESS;
    }
    /* geometric growth, so a run of slowly growing calls retires few tensors */
    const uint64_t cap = vka_grow_capacity(s->capacity, n, vka_max_range(ctx) / sizeof(float));
    if (s->n_retired == s->cap_retired && s->current) {
        uint32_t nc = s->cap_retired ? 2 * s->cap_retired : 4;
        vkattn_tensor **nr = realloc(s->retired, nc * sizeof *nr);
        if (!nr)
            return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                            "%s: out of host memory growing a scratch tensor", caller);
        s->retired = nr;
        s->cap_retired = nc;
    }
    vkattn_tensor *t;
    vkattn_result r = vka_tensor_create_scratch(ctx, cap, s->dtype, &t);
    if (r != VKATTN_SUCCESS)
        return vka_fail(ctx, r, "%s: cannot allocate a scratch tensor of %llu floats: %s", caller,
                        (unsigned long long)cap, vkattn_context_last_error(ctx));
    if (s->current)
        s->retired[s->n_retired++] = s->current;
    s->current = t;
    s->capacity = cap;
    *out = t;
    return VKATTN_SUCCESS;
}

void vka_scratch_release(vka_scratch *s)
{
    for (uint32_t i = 0; i < s->n_retired; i++)
        vkattn_tensor_destroy(s->retired[i]);
    free(s->retired);
    vkattn_tensor_destroy(s->current);
    *s = (vka_scratch){0};
}

/* ---------------------------------------------------------------- GPU masks */

vkattn_result vka_layer_mask_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                    vka_scratch *s, const vkattn_layer_call *call,
                                    const vkattn_layer_io *io, const vka_mask_layout *layout,
                                    bool fold_query_mask, vka_layer_mask *out)
{
    const bool fold = fold_query_mask && io->query_mask;
    *out = (vka_layer_mask){0};
    if (!io->attention_mask && !fold)
        return VKATTN_SUCCESS;
    const vka_mask_layout *l = io->attention_mask ? layout : NULL;
    if (!fold && !vka_mask_key_broadcast(l, call->tv)) {
        *out = (vka_layer_mask){io->attention_mask, vka_mask_op_broadcast(l)};
        return VKATTN_SUCCESS;
    }
    /* The output keeps the stored mask's broadcast axes, except those the
     * query mask spans (batch, rows) and the key axis the ops need full. */
    vka_mask_expand e = {
        .batch = fold || !l ? call->batch : l->dims[0],
        .heads = l ? l->dims[1] : 1,
        .tq = fold || !l ? call->tq : l->dims[2],
        .tv = call->tv,
        .query_mask = fold ? io->query_mask : NULL,
        .attn = io->attention_mask,
        .layout = l,
    };
    const uint64_t count = (uint64_t)e.batch * e.heads * e.tq * e.tv; /* <= B*H*Tq*Tv, checked */
    vkattn_result r;
    if ((r = vka_scratch_get(ctx, caller, s, count, &e.out)) ||
        (r = vka_mask_expand_record(ctx, cmd, caller, &e)))
        return r;
    *out = (vka_layer_mask){e.out, {.batch = e.batch == 1, .heads = e.heads == 1, .rows = e.tq == 1}};
    return VKATTN_SUCCESS;
}

/* ---------------------------------------------------------------- GPU tail */

vkattn_result vka_layer_query_mask_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const char *caller, const vkattn_layer_call *call,
                                          const vkattn_layer_io *io, uint32_t dout)
{
    if (!io->query_mask)
        return VKATTN_SUCCESS;
    uint64_t rows = (uint64_t)call->batch * call->tq;
    if (rows > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: B * Tq = %llu rows exceed 32-bit indexing", caller,
                        (unsigned long long)rows);
    return vka_rowmask_record(ctx, cmd, caller, (uint32_t)rows, dout, io->query_mask, io->output);
}

vkattn_result vka_layer_finish_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                      const vkattn_layer_call *call, const vkattn_layer_io *io,
                                      const vka_layer_mask *m, uint32_t dv, float rate,
                                      vkattn_tensor *s)
{
    const vkattn_softmax_params sp = {
        .batch = call->batch, .heads = 1, .tq = call->tq, .tv = call->tv,
        .mask = vka_layer_mask_params(call, VKATTN_MASKED_ROW_UNIFORM, io->value_mask != NULL,
                                      m->tensor ? &m->broadcast : NULL),
    };
    const vkattn_softmax_io sio = {.scores = s, .value_mask = io->value_mask,
                                   .mask = m->tensor, .out = s};
    vkattn_result r = vkattn_softmax_record(ctx, cmd, &sp, &sio);
    if (r != VKATTN_SUCCESS)
        return r;
    const vkattn_dropout_op_params dp = vka_layer_dropout_params(call, rate, 1);
    const vkattn_dropout_io dio = {.in = s, .out = s};
    if ((r = vkattn_dropout_record(ctx, cmd, &dp, &dio)))
        return r;
    /* out[b] = W[b] (Tq x Tv) @ value[b] (Tv x Dv) */
    const vkattn_matmul_params mp = {
        .batch = call->batch, .m = call->tq, .n = dv, .k = call->tv,
        .a = {.batch_stride = (uint64_t)call->tq * call->tv},
        .b = {.batch_stride = (uint64_t)call->tv * dv},
    };
    const vkattn_matmul_io mio = {.a = s, .b = io->value, .c = io->output};
    if ((r = vkattn_matmul_record(ctx, cmd, &mp, &mio)))
        return r;
    return vka_layer_query_mask_record(ctx, cmd, caller, call, io, dv);
}
