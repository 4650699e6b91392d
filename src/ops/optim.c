/* Optimizer step: argument checks and the two dispatches of shaders/optim.comp
 * (advance the device-side step tensor, then update the parameters). A 16-bit
 * param or grad goes through f32 scratch (ops/half_stage.h): the param is
 * read, updated in f32 with the f32 state and rounded once back to its type. */
#include "vkattn/optim.h"

#include "core/error.h"
#include "common/optim_iface.h"
#include "shape/train_shape.h"
#include "ops/half_stage.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(optim_push, VKA_OPTIM_PUSH);

/* Tensors over overlapping memory share one tracked range (vk/tensor.h). */
static bool overlap(const vkattn_tensor *a, const vkattn_tensor *b)
{
    return a && b && a->range == b->range;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_optim_params *p, const vkattn_optim_io *io)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    if (!io->count)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io->count is 0; must be >= 1",
                        caller);
    const uint32_t per = vka_optim_state_per_element(p);
    const uint64_t state_count = (uint64_t)io->count * per;
    if (state_count > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the state (%llu elements) does not fit the kernel's 32-bit indexing",
                        caller, (unsigned long long)state_count);
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->param, io->count, caller, "io->param",
                                    VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->grad, io->count, caller, "io->grad",
                                    VKA_DTYPES_FLOAT)))
        return r;
    /* the state and step stay f32 whatever the param's type */
    if (per && ((r = vka_f16_require_f32(ctx, io->state, caller, "io->state")) ||
                (r = vka_tensor_check(ctx, io->state, state_count, caller, "io->state"))))
        return r;
    if ((r = vka_f16_require_f32(ctx, io->step, caller, "io->step")) ||
        (r = vka_tensor_check(ctx, io->step, VKATTN_OPTIM_STEP_COUNT, caller, "io->step")))
        return r;
    const vkattn_tensor *t[4] = {io->param, io->grad, per ? io->state : NULL, io->step};
    static const char *const names[4] = {"io->param", "io->grad", "io->state", "io->step"};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (overlap(t[i], t[j]))
                return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s and %s overlap; each must have memory of its own",
                                caller, names[i], names[j]);
    return VKATTN_SUCCESS;
}

/* param and grad: io's, or their f32 scratch copies */
static vkattn_result dispatch(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              const vkattn_optim_params *p, const vkattn_optim_io *io,
                              vkattn_tensor *param, vkattn_tensor *grad, uint32_t algo)
{
    const bool sgd = p->algorithm == VKATTN_OPTIM_SGD;
    const bool advance = algo == VKA_OPTIM_ALGO_ADVANCE;
    const vka_grid_1d grid = advance ? (vka_grid_1d){.threads = 1, .groups = 1}
                                     : vka_grid_stride_1d(ctx, io->count, VKA_GRID_MAX_GROUPS);
    vka_kernel kernel = {
        .name = advance ? "optim (advance)" : "optim",
        .code = vka_spv_optim,
        .code_size = vka_spv_optim_size,
        .n_bindings = 4,
        .push_size = sizeof(optim_push),
        .n_spec = VKA_OPTIM_N_SPEC,
        .spec = {
            [VKA_OPTIM_SPEC_WG] = grid.threads,
            [VKA_OPTIM_SPEC_ALGO] = algo,
            [VKA_OPTIM_SPEC_MOMENTUM] = sgd && p->momentum != 0.0f,
            [VKA_OPTIM_SPEC_NESTEROV] = sgd && p->nesterov,
        },
    };
    /* SGD's betas are unused: 0 keeps its step tensor's products at 0. */
    optim_push push = {
        .count = io->count,
        .lr = p->lr,
        .weight_decay = p->weight_decay,
        .momentum = sgd ? p->momentum : 0.0f,
        .dampening = sgd ? p->dampening : 0.0f,
        .beta1 = sgd ? 0.0f : p->beta1,
        .beta2 = sgd ? 0.0f : p->beta2,
        .eps = sgd ? 0.0f : p->eps,
    };
    /* Every binding the shader may write is bound as written (validation
     * counts it so); plain SGD's state goes to the recording thread's sink. */
    const bool has_state = vka_optim_state_per_element(p) != 0;
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(param, true), vka_bind_tensor(grad, false),
                     has_state ? vka_bind_tensor(io->state, true)
                               : vka_bind_optional_output(ctx, NULL),
                     vka_bind_tensor(io->step, true)},
        .push = &push,
        .groups = {grid.groups, 1, 1},
        .caller = caller,
    };
    return vka_record_dispatch(ctx, cmd, &d);
}

typedef struct optim_op {
    const vkattn_optim_params *params;
    const vkattn_optim_io *io;
} optim_op;

/* Everything after the checks (run dry first when staged: vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_optim_step_record";
    const optim_op *op = op_;
    const vkattn_optim_io *io = op->io;
    vkattn_tensor *param = NULL, *grad = NULL;
    vkattn_result r;
    /* partial: the update reads the param, so its values go into the scratch */
    if ((r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->param, io->count,
                               true, &param)) ||
        (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, io->grad, io->count,
                              &grad)) ||
        (r = dispatch(ctx, cmd, caller, op->params, io, param, grad, VKA_OPTIM_ALGO_ADVANCE)) ||
        (r = dispatch(ctx, cmd, caller, op->params, io, param, grad,
                      (uint32_t)op->params->algorithm)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, io->param, param, io->count);
}

vkattn_result vkattn_optim_step_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                       const vkattn_optim_params *params,
                                       const vkattn_optim_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_optim_step_record(ctx, cmd, params, io));
    vkattn_result r = vka_optim_check_params(ctx, __func__, params);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params, io);
    if (r != VKATTN_SUCCESS)
        return r;
    const optim_op op = {.params = params, .io = io};
    const vkattn_tensor *const ts[2] = {io->param, io->grad};
    const bool staged = vka_path16_of(ctx, ts, 2) != VKA_PATH_F32;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}
