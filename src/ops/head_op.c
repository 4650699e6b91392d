/* The public head ops (vkattn/head_op.h): the plan of shape/head_op_plan.h,
 * the io checks, a copy of the input into the output (the internal op works
 * in place), then the internal op of ops/head_prep.c. No math of its own. */
#include "vkattn/head_op.h"

#include "core/error.h"
#include "ops/half_stage.h"
#include "ops/head_prep.h"
#include "ops/scratch_kinds.h"
#include "shape/head_op_plan.h"
#include "vk/pack.h"
#include "vk/record_mode.h"
#include "vk/tensor.h"
#include "vk/view.h"

typedef struct io_field {
    const char *name;
    vkattn_tensor *t;
    bool used;
    uint64_t count;
    unsigned types;
} io_field;

enum { F_X, F_OUT, F_WEIGHT, F_POS, F_GRAD_OUT, F_GRAD_X, F_GRAD_W, N_FIELDS };

/* What each op reads and writes; the others must be NULL. A written tensor
 * may share memory only by being its own input (in place). */
static vkattn_result check_io(vkattn_context *ctx, const char *caller, const vka_head_op_plan *s,
                              const vkattn_head_op_io *io)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const unsigned f32 = VKA_DTYPE_BIT(VKATTN_DTYPE_F32), both = VKA_DTYPES_FLOAT;
    const io_field f[N_FIELDS] = {
        {"io->x", io->x, true, s->n, both},
        {"io->out", io->out, !s->backward, s->n, both},
        {"io->weight", io->weight, s->norm, s->dim, both},
        {"io->positions", io->positions, s->rope, s->n_positions, f32},
        {"io->grad_out", io->grad_out, s->backward, s->n, f32},
        {"io->grad_x", io->grad_x, s->backward, s->n, f32},
        {"io->grad_weight", io->grad_weight, s->backward, s->dim, both},
    };
    vkattn_result r;
    for (int i = 0; i < N_FIELDS; i++) {
        if (!f[i].used && f[i].t)
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: %s is given but params->op %d does not use it", caller,
                            f[i].name, (int)s->op);
        if (f[i].used && (f[i].t || i != F_POS) &&
            (r = vka_tensor_check_types(ctx, f[i].t, f[i].count, caller, f[i].name, f[i].types)))
            return r;
    }
    if (io->out && io->out->dtype != io->x->dtype)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->out is %s but io->x is %s; out has x's element type", caller,
                        vka_dtype_name(io->out->dtype), vka_dtype_name(io->x->dtype));
    const struct {
        int w, may;
    } written[] = {{F_OUT, F_X}, {F_GRAD_X, F_GRAD_OUT}, {F_GRAD_W, -1}};
    for (int i = 0; i < 3; i++) {
        const vkattn_tensor *w = f[written[i].w].t;
        for (int j = 0; w && j < N_FIELDS; j++) {
            const vkattn_tensor *o = f[j].t;
            if (j == written[i].w || !o || o->range != w->range ||
                (j == written[i].may && o == w))
                continue;
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: %s overlaps %s; only in place on its own input (the same "
                            "tensor)",
                            caller, f[written[i].w].name, f[j].name);
        }
    }
    const uint64_t bytes = s->n * sizeof(float);
    if (s->n > UINT32_MAX || bytes > vka_max_range(ctx))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: x (%llu elements) exceeds the head ops' 32-bit indexing or the "
                        "device's maxStorageBufferRange",
                        caller, (unsigned long long)s->n);
    return VKATTN_SUCCESS;
}

/* The rotations' inverse frequencies, made once per context and rope. */
static vkattn_result rope_table(vkattn_context *ctx, const char *caller,
                                const vkattn_rope_params *rope, vkattn_tensor **out)
{
    const struct { float max_wavelength, scaling_factor; uint32_t rotary_dim; } key = {
        rope->max_wavelength, rope->scaling_factor, rope->rotary_dim}; /* no padding */
    vkattn_result r = VKATTN_SUCCESS;
    vka_lock(ctx);
    if (!(*out = vka_kept_find(ctx, &key, sizeof key)) &&
        !(r = vka_head_prep_inv_freq(ctx, caller, rope, out)))
        r = vka_kept_add(ctx, caller, &key, sizeof key, *out);
    vka_unlock(ctx);
    return r;
}

/* Words of a tensor's count elements (an f16 tensor's pairs of halves). */
static uint64_t words_of(const vkattn_tensor *t, uint64_t n)
{
    return (n * t->elem + 3) / 4;
}

vkattn_result vkattn_head_op_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                    const vkattn_head_op_params *params,
                                    const vkattn_head_op_io *io)
{
    static const char *fn = "vkattn_head_op_record";
    vka_head_op_plan s;
    vkattn_tensor *freq = NULL;
    /* A new table is an upload: made before a VKATTN_RUN_NOW recording
     * begins, where an upload may need the one-shot command buffer. Its
     * failures are reported by the call below. */
    if (ctx && vka_is_record_mode(cmd) && cmd && params &&
        (params->op == VKATTN_HEAD_ROPE || params->op == VKATTN_HEAD_ROPE_INVERSE) &&
        !vka_head_op_plan_make(NULL, fn, params, &s))
        (void)rope_table(ctx, fn, &s.rope_params, &freq);
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_head_op_record(ctx, cmd, params, io));
    vkattn_result r;
    if ((r = vka_head_op_plan_make(ctx, fn, params, &s)) || (r = check_io(ctx, fn, &s, io)))
        return r;
    if (s.rope && (r = rope_table(ctx, fn, &s.rope_params, &freq)))
        return r;
    const vka_head_prep_params hp = {
        .batch = s.batch, .heads = s.heads, .seq = s.seq, .dim = s.dim,
        .use_norm = s.norm, .eps = s.eps,
        .use_rope = s.rope, .rope = s.rope_params, .inverse = s.inverse,
    };
    if (s.backward) {
        vkattn_tensor *dw_rows;
        if ((r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, s.n, fn, &dw_rows)) ||
            (io->grad_x != io->grad_out &&
             (r = vka_copy_floats(ctx, cmd, io->grad_out, 0, io->grad_x, 0, s.n))))
            return r;
        const vka_head_prep_backward_io bio = {
            .fwd = {.x = io->x, .norm = io->weight},
            .grad = io->grad_x, .dw_rows = dw_rows, .grad_norm = io->grad_weight,
        };
        return vka_head_prep_backward_record(ctx, cmd, fn, &hp, &bio);
    }
    if (io->out != io->x &&
        (r = vka_copy_floats(ctx, cmd, io->x, 0, io->out, 0, words_of(io->x, s.n))))
        return r;
    const vka_head_prep_io hio = {.x = io->out, .norm = io->weight, .inv_freq = freq,
                                  .positions = io->positions};
    return vka_head_prep_record(ctx, cmd, fn, &hp, &hio);
}
