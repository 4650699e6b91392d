/* QK-norm and the rotary embedding of the multi-head layers' heads:
 * shaders/head_prep.comp (head_prep_f16.comp for f16 heads with 16-bit
 * storage). */
#include "ops/head_prep.h"

#include <math.h>
#include <stdlib.h>

#include "common/elem_iface.h"
#include "common/head_prep_iface.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/grad_reduce.h"
#include "ops/half_stage.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(head_prep_push, VKA_HEAD_PREP_PUSH);
VKA_PUSH_STRUCT(head_prep_bwd_push, VKA_HEAD_PREP_BWD_PUSH);

vkattn_result vka_head_prep_inv_freq(vkattn_context *ctx, const char *caller,
                                     const vkattn_rope_params *rope, vkattn_tensor **out)
{
    const uint32_t n = rope->rotary_dim / 2;
    *out = NULL;
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
    for (uint32_t i = 0; i < n; i++)
        f[i] = (float)(pow((double)rope->max_wavelength, -2.0 * i / rope->rotary_dim) /
                       (double)rope->scaling_factor);
    vkattn_result r = vka_tensor_create_1d(ctx, n ? n : 1, out);
    if (!r && n)
        r = vkattn_tensor_upload(*out, f, 0, n);
    free(f);
    if (r) {
        vkattn_tensor_destroy(*out);
        *out = NULL;
    }
    return r;
}

typedef struct head_prep_op {
    const char *caller;
    const vka_head_prep_params *p;
    const vka_head_prep_io *io;
    uint64_t n;
    bool native16; /* head_prep_f16, no staging */
} head_prep_op;

/* The dispatch: of head_prep_f16 on an f16 x and norm as they are
 * (`native16`), else of head_prep with 16-bit ones staged and x rounded back. */
static vkattn_result record_head_prep(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const head_prep_op *op = op_;
    const vka_head_prep_params *p = op->p;
    const vka_head_prep_io *io = op->io;
    const bool use_norm = p->use_norm && !p->inverse, n16 = op->native16;
    vkattn_tensor *x = io->x, *w = use_norm ? io->norm : NULL;
    vkattn_result r;
    if (!n16 &&
        ((r = vka_f16_stage_in(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE0, io->x, op->n, &x)) ||
         (use_norm && (r = vka_f16_stage_in(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE1,
                                               io->norm, p->dim, &w)))))
        return r;
    const vka_kernel kernel = {
        .name = n16 ? "head_prep_f16" : "head_prep",
        .code = n16 ? vka_spv_head_prep_f16 : vka_spv_head_prep,
        .code_size = n16 ? vka_spv_head_prep_f16_size : vka_spv_head_prep_size,
        .n_bindings = 4,
        .push_size = sizeof(head_prep_push),
        .n_spec = n16 ? VKA_HEAD_PREP_N_SPEC_F16 : VKA_HEAD_PREP_N_SPEC,
        .spec = {[VKA_HEAD_PREP_SPEC_X_TYPE] = vka_dtype_spec_code(x->dtype),
                 [VKA_HEAD_PREP_SPEC_W_TYPE] = w ? vka_dtype_spec_code(w->dtype) : VKA_ELEM_F32},
    };
    const uint64_t rows = (uint64_t)p->batch * p->heads * p->seq;
    head_prep_push push = {
        .rows = (uint32_t)rows, .seq = p->seq, .heads = p->heads, .dim = p->dim,
        .use_norm = use_norm, .use_rope = p->use_rope, .rotary_dim = p->rope.rotary_dim,
        .interleaved = p->rope.layout == VKATTN_ROPE_INTERLEAVED,
        .pos_mode = io->positions ? VKA_HEAD_PREP_POS_TENSOR
                    : io->lengths ? VKA_HEAD_PREP_POS_LENGTHS
                                  : VKA_HEAD_PREP_POS_INDEX,
        .inverse = p->inverse, .eps = p->eps,
    };
    vkattn_tensor *pos = io->positions ? io->positions : io->lengths;
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(x, true), vka_bind_optional(ctx, w),
                     vka_bind_optional(ctx, p->use_rope ? pos : NULL),
                     vka_bind_optional(ctx, p->use_rope ? io->inv_freq : NULL)},
        .push = &push,
        .caller = op->caller,
    };
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_HEAD_PREP_SPEC_WG, rows, d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, op->caller, io->x, x, op->n);
}

vkattn_result vka_head_prep_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vka_head_prep_params *p, const vka_head_prep_io *io)
{
    const uint64_t n = (uint64_t)p->batch * p->heads * p->seq * p->dim;
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the heads (%llu elements) exceed the head preparation's 32-bit "
                        "indexing",
                        caller, (unsigned long long)n);
    vkattn_result r;
    const unsigned both = VKA_DTYPES_FLOAT;
    const bool use_norm = p->use_norm && !p->inverse;
    if ((r = vka_tensor_check_types(ctx, io->x, n, caller, "the heads", both)) ||
        (use_norm &&
         (r = vka_tensor_check_types(ctx, io->norm, p->dim, caller, "the norm weight", both))))
        return r;
    /* f16 with 16-bit storage: head_prep_f16 as they are; bf16 (or no 16-bit
     * storage): staged through f32 */
    const vkattn_tensor *const ts[2] = {io->x, use_norm ? io->norm : NULL};
    const vka_path16 path = vka_path16_of(ctx, ts, 2);
    const head_prep_op op = {.caller = caller, .p = p, .io = io, .n = n,
                             .native16 = path == VKA_PATH_NATIVE16};
    return vka_f16_record(ctx, cmd, path == VKA_PATH_PACKED, record_head_prep, &op);
}

typedef struct head_prep_bwd_op {
    const char *caller;
    const vka_head_prep_params *p;
    const vka_head_prep_backward_io *io;
    uint64_t n;
    bool native16; /* head_prep_backward_f16 reads an f16 x and norm as they are */
} head_prep_bwd_op;

/* The norm's backward: staging, the row kernel, the sum of dw over rows. */
static vkattn_result record_norm_backward(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const void *op_)
{
    const head_prep_bwd_op *op = op_;
    const vka_head_prep_params *p = op->p;
    const vka_head_prep_backward_io *io = op->io;
    const uint64_t rows = op->n / p->dim;
    const bool n16 = op->native16;
    vkattn_tensor *x = io->fwd.x, *w = io->fwd.norm;
    vkattn_result r;
    if (!n16 &&
        ((r = vka_f16_stage_in(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE0, io->fwd.x, op->n,
                               &x)) ||
         (r = vka_f16_stage_in(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE1, io->fwd.norm,
                               p->dim, &w))))
        return r;
    const vka_kernel kernel = {
        .name = n16 ? "head_prep_backward_f16" : "head_prep_backward",
        .code = n16 ? vka_spv_head_prep_backward_f16 : vka_spv_head_prep_backward,
        .code_size = n16 ? vka_spv_head_prep_backward_f16_size : vka_spv_head_prep_backward_size,
        .n_bindings = 4,
        .push_size = sizeof(head_prep_bwd_push),
        .n_spec = n16 ? VKA_HEAD_PREP_BWD_N_SPEC_F16 : VKA_HEAD_PREP_BWD_N_SPEC,
        .spec = {[VKA_HEAD_PREP_BWD_SPEC_X_TYPE] = vka_dtype_spec_code(x->dtype),
                 [VKA_HEAD_PREP_BWD_SPEC_W_TYPE] = vka_dtype_spec_code(w->dtype)},
    };
    head_prep_bwd_push push = {.rows = (uint32_t)rows, .dim = p->dim, .eps = p->eps};
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(x, false), vka_bind_tensor(io->grad, true),
                     vka_bind_tensor(w, false), vka_bind_tensor(io->dw_rows, true)},
        .push = &push,
        .caller = op->caller,
    };
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_HEAD_PREP_BWD_SPEC_WG, rows, d)))
        return r;
    if (!io->grad_norm)
        return VKATTN_SUCCESS;
    /* grad_norm[e] = sum over rows of dw_rows[row * dim + e]: f32 sums, an
     * f16 grad_norm rounded once from them (staged without 16-bit storage) */
    const vka_grad_reduce g = {.groups = 1, .rows = 1, .cols = p->dim, .out_g = 0,
                               .out_row = 0, .in_g = 0, .in_row = 0,
                               .n = {rows, 1, 1}, .s = {p->dim, 0, 0}, .alpha = 1.0f};
    return vka_grad_reduce_record_any(ctx, cmd, op->caller, &g, io->dw_rows, op->n,
                                      io->grad_norm, p->dim, false);
}

vkattn_result vka_head_prep_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                            const char *caller, const vka_head_prep_params *p,
                                            const vka_head_prep_backward_io *io)
{
    vkattn_result r;
    if (p->use_rope) {
        vka_head_prep_params inv = *p;
        inv.inverse = true;
        vka_head_prep_io rio = io->fwd;
        rio.x = io->grad;
        if ((r = vka_head_prep_record(ctx, cmd, caller, &inv, &rio)))
            return r;
    }
    if (!p->use_norm)
        return VKATTN_SUCCESS;
    const uint64_t n = (uint64_t)p->batch * p->heads * p->seq * p->dim;
    const unsigned both = VKA_DTYPES_FLOAT;
    if ((r = vka_tensor_check_types(ctx, io->fwd.x, n, caller, "the heads", both)) ||
        (r = vka_tensor_check(ctx, io->grad, n, caller, "the heads' gradient")) ||
        (r = vka_tensor_check(ctx, io->dw_rows, n, caller, "the norm's row gradients")) ||
        (r = vka_tensor_check_types(ctx, io->fwd.norm, p->dim, caller, "the norm weight",
                                    both)) ||
        (io->grad_norm && (r = vka_tensor_check_types(ctx, io->grad_norm, p->dim, caller,
                                                      "the norm weight's gradient", both))))
        return r;
    const vkattn_tensor *const ts[2] = {io->fwd.x, io->fwd.norm};
    const vka_path16 path = vka_path16_of(ctx, ts, 2);
    const head_prep_bwd_op op = {.caller = caller, .p = p, .io = io, .n = n,
                                 .native16 = path == VKA_PATH_NATIVE16};
    const bool staged = path == VKA_PATH_PACKED ||
                        (io->grad_norm && vka_grad_reduce_stages(ctx, io->dw_rows, io->grad_norm));
    return vka_f16_record(ctx, cmd, staged, record_norm_backward, &op);
}
