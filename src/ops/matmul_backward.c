/* Gradients of the batched matmul: each gradient recorded as a matmul of the
 * forward's kernels with the operands swapped and transposed by spec constant
 * (no transposed copy is materialised), plus shaders/grad_reduce.comp for dBias
 * and for operands broadcast over the batch or heads (f16 read and written as
 * they are with 16-bit storage; bf16, or no 16-bit storage, staged:
 * vka_grad_reduce_record_any). */
#include "vkattn/matmul_backward.h"

#include "core/error.h"
#include "core/matmul_shape.h"
#include "ops/grad_reduce.h"
#include "ops/half_stage.h"
#include "ops/matmul_internal.h"
#include "ops/scratch_kinds.h"
#include "vk/prepare.h"
#include "vk/tensor.h"
#include "vk/record_mode.h"
#include "vk/view.h"

static vkattn_matrix_layout layout_of(const vka_operand *o)
{
    return (vkattn_matrix_layout){.batch_stride = o->batch_stride,
                                  .head_stride = o->head_stride,
                                  .row_stride = (uint32_t)o->row_stride};
}

/* One gradient as a matmul: the product, which forward operand it is the
 * gradient of (its stored layout), and whether that operand is broadcast. */
typedef struct grad_plan {
    vkattn_matmul_params mm;      /* the product; c layout set by the caller */
    vkattn_tensor *lhs, *rhs;     /* its operands */
    const vka_operand *target;    /* the forward operand's resolved layout */
    bool bcast_batch, bcast_heads; /* summed over these axes */
} grad_plan;

/* d op(A) = alpha dC op(B)^T, stored as A. */
static grad_plan plan_grad_a(const vkattn_matmul_params *p, const vka_matmul_shape *s,
                             const vkattn_matmul_backward_io *io)
{
    grad_plan g = {.mm = {.batch = s->batch, .heads = s->heads, .k = s->n, .alpha = s->alpha},
                   .target = &s->a};
    if (!p->transpose_a) { /* dA (M x K) = dC (M x N) @ op(B)^T (N x K) */
        g.mm.m = s->m, g.mm.n = s->k;
        g.mm.a = layout_of(&s->c), g.mm.b = layout_of(&s->b);
        g.mm.transpose_b = !p->transpose_b;
        g.lhs = io->grad_c, g.rhs = io->b;
    } else { /* dA stored K x M = op(B) (K x N) @ dC^T (N x M) */
        g.mm.m = s->k, g.mm.n = s->m;
        g.mm.a = layout_of(&s->b), g.mm.b = layout_of(&s->c);
        g.mm.transpose_a = p->transpose_b;
        g.mm.transpose_b = true;
        g.lhs = io->b, g.rhs = io->grad_c;
    }
    return g;
}

/* d op(B) = alpha op(A)^T dC, stored as B. */
static grad_plan plan_grad_b(const vkattn_matmul_params *p, const vka_matmul_shape *s,
                             const vkattn_matmul_backward_io *io)
{
    grad_plan g = {.mm = {.batch = s->batch, .heads = s->heads, .k = s->m, .alpha = s->alpha},
                   .target = &s->b};
    if (!p->transpose_b) { /* dB (K x N) = op(A)^T (K x M) @ dC (M x N) */
        g.mm.m = s->k, g.mm.n = s->n;
        g.mm.a = layout_of(&s->a), g.mm.b = layout_of(&s->c);
        g.mm.transpose_a = !p->transpose_a;
        g.lhs = io->a, g.rhs = io->grad_c;
    } else { /* dB stored N x K = dC^T (N x M) @ op(A) (M x K) */
        g.mm.m = s->n, g.mm.n = s->k;
        g.mm.a = layout_of(&s->c), g.mm.b = layout_of(&s->a);
        g.mm.transpose_a = true;
        g.mm.transpose_b = p->transpose_a;
        g.lhs = io->grad_c, g.rhs = io->a;
    }
    return g;
}

static void mark_broadcast(grad_plan *g, const vka_matmul_shape *s)
{
    g->bcast_batch = s->batch > 1 && g->target->batch_stride == 0;
    g->bcast_heads = s->heads > 1 && g->target->head_stride == 0;
}

/* Floats of scratch a broadcast operand's per-matrix gradients take. */
static uint64_t scratch_floats(const grad_plan *g, const vka_matmul_shape *s)
{
    if (!g->bcast_batch && !g->bcast_heads)
        return 0;
    return (uint64_t)s->batch * s->heads * g->mm.m * g->mm.n;
}

/* The sum of the per-matrix gradients in packed scratch into the operand's
 * stored matrices. */
static vka_grad_reduce broadcast_sum(const grad_plan *g, const vka_matmul_shape *s)
{
    const uint64_t rc = (uint64_t)g->mm.m * g->mm.n;
    vka_grad_reduce r = {.groups = 1, .rows = g->mm.m, .cols = g->mm.n,
                         .out_row = g->target->row_stride, .in_row = g->mm.n,
                         .n = {1, 1, 1}, .alpha = 1.0f};
    if (g->bcast_batch && g->bcast_heads) {
        r.n[0] = (uint64_t)s->batch * s->heads, r.s[0] = rc;
    } else if (g->bcast_batch) { /* one matrix per head */
        r.groups = s->heads, r.out_g = g->target->head_stride, r.in_g = rc;
        r.n[0] = s->batch, r.s[0] = s->heads * rc;
    } else { /* one matrix per batch entry */
        r.groups = s->batch, r.out_g = g->target->batch_stride, r.in_g = s->heads * rc;
        r.n[0] = s->heads, r.s[0] = rc;
    }
    return r;
}

/* A gradient's matmul, planned on the first pass (dry, where the call runs
 * dry first) into *mc and recorded from that plan on every pass. */
typedef struct grad_call {
    vka_matmul_call mc;
    bool planned;
} grad_call;

static vkattn_result record_grad(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 const vka_matmul_shape *s, grad_plan *g, vkattn_tensor *out,
                                 vkattn_tensor *scratch, grad_call *gc)
{
    const bool bcast = g->bcast_batch || g->bcast_heads;
    if (!bcast)
        g->mm.c = layout_of(g->target); /* zero strides here only where the count is 1 */
    vkattn_matmul_io mio = {.a = g->lhs, .b = g->rhs, .c = bcast ? scratch : out};
    vkattn_result r = gc->planned ? VKATTN_SUCCESS
                                  : vka_matmul_plan(ctx, caller, &g->mm, &mio, &gc->mc);
    gc->planned = r == VKATTN_SUCCESS;
    if (r == VKATTN_SUCCESS)
        r = vka_matmul_record_planned(ctx, cmd, caller, &g->mm, &mio, &gc->mc);
    if (r == VKATTN_SUCCESS && bcast) {
        const vka_grad_reduce red = broadcast_sum(g, s);
        r = vka_grad_reduce_record_any(ctx, cmd, caller, &red, scratch, scratch_floats(g, s),
                                       out, g->target->extent, true);
    }
    return r;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller, const vka_matmul_shape *s,
                              const vkattn_matmul_params *p, const vkattn_matmul_backward_io *io)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    const unsigned both = VKA_DTYPES_FLOAT; /* each on its own, as the forward's */
    if ((r = vka_tensor_check_types(ctx, io->grad_c, s->c.extent, caller, "io->grad_c", both)))
        return r;
    if (io->grad_a &&
        ((r = vka_tensor_check_types(ctx, io->b, s->b.extent, caller, "io->b", both)) ||
         (r = vka_tensor_check_types(ctx, io->grad_a, s->a.extent, caller, "io->grad_a", both))))
        return r;
    if (io->grad_b &&
        ((r = vka_tensor_check_types(ctx, io->a, s->a.extent, caller, "io->a", both)) ||
         (r = vka_tensor_check_types(ctx, io->grad_b, s->b.extent, caller, "io->grad_b", both))))
        return r;
    if (io->grad_bias && !p->has_bias)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->grad_bias is given but params->has_bias is false", caller);
    if (io->grad_bias &&
        (r = vka_tensor_check_types(ctx, io->grad_bias, s->n, caller, "io->grad_bias", both)))
        return r;
    const vkattn_tensor *all[] = {io->a, io->b, io->grad_c, io->grad_a, io->grad_b, io->grad_bias};
    static const char *const names[] = {"io->a",      "io->b",      "io->grad_c",
                                        "io->grad_a", "io->grad_b", "io->grad_bias"};
    return vka_check_written_distinct(ctx, caller, all, names, sizeof all / sizeof all[0], 3);
}

/* Every dispatch of the backward, in order. Run dry first
 * (vka_record_dry_first), so an error stops it before anything is recorded. */
typedef struct matmul_backward_op {
    const vkattn_matmul_params *p;
    const vkattn_matmul_backward_io *io;
    vka_matmul_shape s;
    grad_call *calls; /* dA's and dB's matmuls */
} matmul_backward_op;

static vkattn_result record_all(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_matmul_backward_record";
    const matmul_backward_op *op = op_;
    const vka_matmul_shape *s = &op->s;
    const vkattn_matmul_backward_io *io = op->io;
    grad_plan ga = plan_grad_a(op->p, s, io), gb = plan_grad_b(op->p, s, io);
    mark_broadcast(&ga, s);
    mark_broadcast(&gb, s);
    uint64_t need = 0;
    if (io->grad_a)
        need = scratch_floats(&ga, s);
    if (io->grad_b && scratch_floats(&gb, s) > need)
        need = scratch_floats(&gb, s);
    vkattn_tensor *scratch = NULL;
    vkattn_result r = VKATTN_SUCCESS;
    if (need > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the per-matrix gradients of a broadcast operand (%llu elements) do "
                        "not fit 32-bit indexing",
                        caller, (unsigned long long)need);
    /* one workspace for both: tracked access orders dB's use after dA's */
    if (need && (r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, need, caller, &scratch)))
        return r;
    if (io->grad_a &&
        (r = record_grad(ctx, cmd, caller, s, &ga, io->grad_a, scratch, &op->calls[0])))
        return r;
    if (io->grad_b &&
        (r = record_grad(ctx, cmd, caller, s, &gb, io->grad_b, scratch, &op->calls[1])))
        return r;
    if (io->grad_bias) {
        const vka_grad_reduce red = {
            .groups = 1, .rows = 1, .cols = s->n,
            .n = {s->batch, s->heads, s->m},
            .s = {s->c.batch_stride, s->c.head_stride, s->c.row_stride},
            .alpha = 1.0f,
        };
        r = vka_grad_reduce_record_any(ctx, cmd, caller, &red, io->grad_c, s->c.extent,
                                       io->grad_bias, s->n, false);
    }
    return r;
}

vkattn_result vkattn_matmul_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                            const vkattn_matmul_params *params,
                                            const vkattn_matmul_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_matmul_backward_record(ctx, cmd, params, io));
    grad_call calls[2] = {0};
    matmul_backward_op op = {.p = params, .io = io, .calls = calls};
    vkattn_result r = vka_matmul_resolve(ctx, __func__, params, &op.s);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, &op.s, params, io);
    return r ? r : vka_record_dry_first(ctx, cmd, record_all, &op);
}
