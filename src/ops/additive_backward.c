/* Gradients of additive (tanh) scoring: argument checks and the passes of
 * shaders/additive_backward.comp, with shaders/grad_reduce.comp summing the
 * scale vector's gradient. */
#include "vkattn/additive_backward.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"
#include "shape/additive_shape.h"
#include "common/additive_backward_iface.h"
#include "ops/grad_reduce.h"
#include "ops/half_stage.h"
#include "ops/scratch_kinds.h"
#include "ops/split.h"
#include "vk/dispatch.h"
#include "vk/prepare.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(additive_bwd_push, VKA_ADDITIVE_BWD_PUSH);

static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_additive_params *p,
                              const vkattn_additive_backward_io *io, vka_additive_sizes *n)
{
    vkattn_result r = vka_additive_check(ctx, caller, p, n);
    if (r)
        return r;
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const unsigned both = VKA_DTYPES_FLOAT; /* each on its own, staged (record_all) */
    if ((r = vka_tensor_check_types(ctx, io->q, n->q, caller, "io->q", both)) ||
        (r = vka_tensor_check_types(ctx, io->k, n->k, caller, "io->k", both)) ||
        (r = vka_tensor_check_types(ctx, io->grad_scores, n->scores, caller, "io->grad_scores",
                                    both)))
        return r;
    if (p->has_scale_vector &&
        (r = vka_tensor_check_types(ctx, io->scale, p->dim, caller, "io->scale", both)))
        return r;
    if (!p->has_scale_vector && (io->scale || io->grad_scale))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->%s is given but params->has_scale_vector is false", caller,
                        io->scale ? "scale" : "grad_scale");
    if ((io->grad_q &&
         (r = vka_tensor_check_types(ctx, io->grad_q, n->q, caller, "io->grad_q", both))) ||
        (io->grad_k &&
         (r = vka_tensor_check_types(ctx, io->grad_k, n->k, caller, "io->grad_k", both))) ||
        (io->grad_scale && (r = vka_tensor_check_types(ctx, io->grad_scale, p->dim, caller,
                                                       "io->grad_scale", both))))
        return r;
    const vkattn_tensor *all[] = {io->q,      io->k,      io->scale, io->grad_scores,
                                  io->grad_q, io->grad_k, io->grad_scale};
    static const char *const names[] = {"io->q",      "io->k",      "io->scale", "io->grad_scores",
                                        "io->grad_q", "io->grad_k", "io->grad_scale"};
    return vka_check_written_distinct(ctx, caller, all, names, sizeof all / sizeof all[0], 4);
}

/* One pass over `total` output elements, split over dispatches within the
 * watchdog budget (each element costs `work` loop iterations). */
static vkattn_result record_pass(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 uint32_t pass, additive_bwd_push push, uint64_t total,
                                 uint64_t work, vka_binding b0, vka_binding b1, vka_binding b2,
                                 vkattn_tensor *out)
{
    const vka_grid_1d grid = vka_grid_stride_1d(ctx, total, VKA_GRID_MAX_GROUPS);
    vkattn_result r;
    if ((r = vka_check_loop_budget(ctx, caller,
                                   vka_div_up(total, (uint64_t)grid.threads * grid.groups) * work,
                                   "params->tq or params->tv")))
        return r;
    uint32_t per;
    if ((r = vka_split_rows(ctx, caller, "additive_backward", (uint32_t)total, 1, work, &per)))
        return r;
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(additive_backward),
        .n_bindings = 4,
        .push_size = sizeof(additive_bwd_push),
        .n_spec = VKA_ADDITIVE_BWD_N_SPEC,
        .spec = {[VKA_ADDITIVE_BWD_SPEC_PASS] = pass},
    };
    const vka_dispatch d = {
        .bindings = {b0, b1, b2, vka_bind_tensor(out, true)},
        .push = &push,
        .caller = caller,
    };
    return vka_record_grid_1d_ranges(ctx, cmd, kernel, VKA_ADDITIVE_BWD_SPEC_WG, total, per, d,
                                     &push.begin, &push.end);
}

/* The gradient of q (own = q) or of k (own = k), scaled by s afterwards. */
static vkattn_result record_input_grad(vkattn_context *ctx, VkCommandBuffer cmd,
                                       const char *caller, const vkattn_additive_params *p,
                                       const vkattn_additive_backward_io *io, bool of_q)
{
    const float inner = vka_default_f32(p->inner_scale, 1.0f);
    const float outer = vka_default_f32(p->outer_scale, 1.0f);
    const uint32_t n_own = of_q ? p->tq : p->tv, n_other = of_q ? p->tv : p->tq;
    vkattn_tensor *out = of_q ? io->grad_q : io->grad_k;
    const uint64_t total = (uint64_t)p->batch * n_own * p->dim;
    additive_bwd_push push = {
        .n_own = n_own, .n_other = n_other, .dim = p->dim,
        .ds_own = of_q ? p->tv : 1, .ds_other = of_q ? 1 : p->tv,
        .inner = inner, .factor = outer * inner,
    };
    vkattn_result r = record_pass(ctx, cmd, caller, VKA_ADDITIVE_BWD_PASS_SECH2, push, total,
                                  n_other, vka_bind_tensor(of_q ? io->q : io->k, false),
                                  vka_bind_tensor(of_q ? io->k : io->q, false),
                                  vka_bind_tensor(io->grad_scores, false), out);
    if (r == VKATTN_SUCCESS && p->has_scale_vector)
        r = record_pass(ctx, cmd, caller, VKA_ADDITIVE_BWD_PASS_SCALE, push, total, 1,
                        vka_bind_tensor(io->scale, false), vka_bind_optional(ctx, NULL),
                        vka_bind_optional(ctx, NULL), out);
    return r;
}

/* Every dispatch of the backward on f32 tensors, in order. */
static vkattn_result record_f32(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                const vkattn_additive_params *p,
                                const vkattn_additive_backward_io *io, const vka_additive_sizes *n)
{
    vkattn_result r = VKATTN_SUCCESS;
    if (io->grad_q && (r = record_input_grad(ctx, cmd, caller, p, io, true)))
        return r;
    if (io->grad_k && (r = record_input_grad(ctx, cmd, caller, p, io, false)))
        return r;
    if (!io->grad_scale)
        return r;
    /* per-row partial sums sum_j dS t into scratch, then summed over rows */
    vkattn_tensor *partial;
    if ((r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, n->q, caller, &partial)))
        return r;
    additive_bwd_push push = {
        .n_own = p->tq, .n_other = p->tv, .dim = p->dim, .ds_own = p->tv, .ds_other = 1,
        .inner = vka_default_f32(p->inner_scale, 1.0f), .factor = 1.0f,
    };
    if ((r = record_pass(ctx, cmd, caller, VKA_ADDITIVE_BWD_PASS_TANH, push, n->q, p->tv,
                         vka_bind_tensor(io->q, false), vka_bind_tensor(io->k, false),
                         vka_bind_tensor(io->grad_scores, false), partial)))
        return r;
    const vka_grad_reduce red = {
        .groups = 1, .rows = 1, .cols = p->dim,
        .n = {(uint64_t)p->batch * p->tq, 1, 1}, .s = {p->dim, 0, 0},
        .alpha = vka_default_f32(p->outer_scale, 1.0f),
    };
    return vka_grad_reduce_record(ctx, cmd, caller, &red, partial, io->grad_scale);
}

/* Every dispatch, 16-bit tensors staged: each input read through an exact
 * f32 copy, each 16-bit gradient rounded once from its f32 result
 * (ops/half_stage.h); f32 tensors used in place. Run dry first
 * (vka_record_dry_first), so an error stops it before anything is recorded. */
typedef struct additive_backward_op {
    const vkattn_additive_params *p;
    const vkattn_additive_backward_io *io;
    vka_additive_sizes n;
} additive_backward_op;

static vkattn_result record_all(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_additive_backward_record";
    const additive_backward_op *op = op_;
    const vkattn_additive_backward_io *io = op->io;
    const vka_additive_sizes *n = &op->n;
    const uint32_t dim = op->p->dim;
    vkattn_tensor *const in[4] = {io->q, io->k, io->scale, io->grad_scores};
    vkattn_tensor *const out[3] = {io->grad_q, io->grad_k, io->grad_scale};
    const uint64_t in_n[4] = {n->q, n->k, dim, n->scores}, out_n[3] = {n->q, n->k, dim};
    vkattn_tensor *in_f[4] = {0}, *out_f[3] = {0};
    vkattn_result r;
    for (int i = 0; i < 4; i++)
        if (in[i] && (r = vka_f16_stage_in(ctx, cmd, caller,
                                           (vka_scratch_kind)(VKA_SCRATCH_F16_STAGE0 + i), in[i],
                                           in_n[i], &in_f[i])))
            return r;
    for (int i = 0; i < 3; i++)
        if (out[i] && (r = vka_f16_stage_out(ctx, cmd, caller,
                                             (vka_scratch_kind)(VKA_SCRATCH_F16_STAGE4 + i),
                                             out[i], out_n[i], false, &out_f[i])))
            return r;
    const vkattn_additive_backward_io f = {.q = in_f[0], .k = in_f[1], .scale = in_f[2],
                                           .grad_scores = in_f[3], .grad_q = out_f[0],
                                           .grad_k = out_f[1], .grad_scale = out_f[2]};
    if ((r = record_f32(ctx, cmd, caller, op->p, &f, n)))
        return r;
    for (int i = 0; i < 3; i++)
        if (out[i] && (r = vka_f16_stage_finish(ctx, cmd, caller, out[i], out_f[i], out_n[i])))
            return r;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_additive_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                              const vkattn_additive_params *params,
                                              const vkattn_additive_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_additive_backward_record(ctx, cmd, params, io));
    additive_backward_op op = {.p = params, .io = io};
    vkattn_result r = check_io(ctx, __func__, params, io, &op.n);
    return r ? r : vka_record_dry_first(ctx, cmd, record_all, &op);
}
