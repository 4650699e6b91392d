/* Head split and merge: argument checks and the dispatch of shaders/heads.comp
 * (a specialization constant picks the direction), or heads_f16.comp for f16
 * tensors with 16-bit storage. */
#include "vkattn/heads.h"
#include "common/elem_iface.h"
#include "core/dtype.h"
#include "ops/heads_rows.h"

#include "core/check.h"
#include "core/error.h"
#include "common/heads_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(heads_push, VKA_HEADS_PUSH);

/* Invocations per workgroup when the device allows; a copy needs no shared
 * memory, so only the invocation limits matter. */
#define HEADS_THREADS 256u
/* Each invocation copies at least this many elements (grid stride): fewer,
 * larger workgroups suit lavapipe and cost a GPU nothing for a copy. */
#define HEADS_PER_THREAD 4u

/* count: elements of the chunk side (B, H, seq, d); full: of the
 * (B, seq_all, H, d) side, which the split reads and the merge writes. */
static vkattn_result check(vkattn_context *ctx, const char *caller,
                           const vkattn_heads_params *p, const vkattn_heads_io *io,
                           bool split, uint32_t seq_all, const char *const names[2],
                           uint64_t *count)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    const char *zero = !p->batch ? "batch" : !p->seq ? "seq" : !p->heads ? "heads"
                     : !p->head_dim ? "head_dim" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        caller, zero);
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const uint64_t dims[4] = {p->batch, p->seq, p->heads, p->head_dim};
    if (!vka_product_u64(dims, 4, count))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: the size of the tensors (B, T, H, d) overflows", caller);
    const uint64_t full = *count / p->seq * seq_all;
    if (full > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the tensors (%llu elements) do not fit the kernel's 32-bit indexing",
                        caller, (unsigned long long)full);
    const char *in = names ? names[0] : "io->in", *out = names ? names[1] : "io->out";
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->in, split ? full : *count, caller, in,
                                    VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->out, split ? *count : full, caller, out,
                                    VKA_DTYPES_FLOAT)))
        return r;
    if (io->in == io->out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s and %s are the same tensor; the permutation cannot run in place",
                        caller, in, out);
    return VKATTN_SUCCESS;
}

/* A checked call: its arguments and element count. */
typedef struct heads_op {
    const char *caller;
    const vkattn_heads_params *params;
    const vkattn_heads_io *io;
    bool split;
    uint32_t seq_all, t0;
    uint64_t count;
} heads_op;

/* The staging passes and the dispatch, after the checks (vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const heads_op *op = op_;
    const char *caller = op->caller;
    const vkattn_heads_params *params = op->params;
    const vkattn_heads_io *io = op->io;
    const bool split = op->split;
    const uint32_t seq_all = op->seq_all, t0 = op->t0;
    const uint64_t count = op->count;
    uint32_t threads = HEADS_THREADS;
    if (vka_info(ctx)->max_workgroup_invocations < threads)
        threads = vka_info(ctx)->max_workgroup_invocations;
    if (vka_info(ctx)->max_workgroup_size[0] < threads)
        threads = vka_info(ctx)->max_workgroup_size[0];
    if (threads == 0)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED, "%s: the device reports no invocations",
                        caller);
    /* The grid stride covers whatever the group count leaves, so capping it at
     * the device's limit is always correct. */
    uint64_t groups = vka_div_up(count, (uint64_t)threads * HEADS_PER_THREAD);
    if (groups > vka_info(ctx)->max_workgroup_count[0])
        groups = vka_info(ctx)->max_workgroup_count[0];

    vka_kernel kernel = {
        .name = split ? "heads (split)" : "heads (merge)",
        .code = vka_spv_heads,
        .code_size = vka_spv_heads_size,
        .n_bindings = 2,
        .push_size = sizeof(heads_push),
        .n_spec = VKA_HEADS_N_SPEC,
        .spec = {
            [VKA_HEADS_SPEC_SPLIT] = split,
            [VKA_HEADS_SPEC_WG] = threads,
        },
    };
    heads_push push = {
        .seq = params->seq,
        .heads = params->heads,
        .head_dim = params->head_dim,
        .count = (uint32_t)count,
        .seq_all = seq_all,
        .t0 = t0,
    };
    /* 16-bit tensors: all f16 with 16-bit storage, heads_f16.comp reads and
     * writes them as float16_t. Otherwise (bf16, or no 16-bit storage) they
     * go through f32 scratch (ops/half_stage.h; this kernel never writes
     * packed words). A merge into rows [t0, t0 + seq) of a longer sequence
     * keeps the other rows of a 16-bit out: they are converted into the
     * scratch first. */
    const uint64_t full = count / params->seq * seq_all;
    const uint64_t n_in = split ? full : count, n_out = split ? count : full;
    const vkattn_tensor *const ts[2] = {io->in, io->out};
    const bool native16 = vka_path16_of(ctx, ts, 2) == VKA_PATH_NATIVE16;
    vkattn_tensor *in = io->in, *out = io->out;
    vkattn_result r;
    if (!native16 &&
        ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->in, n_in, &in)) ||
         (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, io->out, n_out,
                                 !split && seq_all != params->seq, &out))))
        return r;
    kernel.name = native16 ? (split ? "heads_f16 (split)" : "heads_f16 (merge)") : kernel.name;
    kernel.code = native16 ? vka_spv_heads_f16 : kernel.code;
    kernel.code_size = native16 ? vka_spv_heads_f16_size : kernel.code_size;
    kernel.spec[VKA_HEADS_SPEC_IN_TYPE] = native16 ? vka_dtype_spec_code(io->in->dtype) : VKA_ELEM_F32;
    kernel.spec[VKA_HEADS_SPEC_OUT_TYPE] = native16 ? vka_dtype_spec_code(io->out->dtype) : VKA_ELEM_F32;
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(in, false), vka_bind_tensor(out, true)},
        .push = &push,
        .groups = {(uint32_t)groups, 1, 1},
        .caller = caller,
    };
    if ((r = vka_record_dispatch(ctx, cmd, &d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, io->out, out, n_out);
}

/* seq_all 0: the whole sequence (seq_all = seq, t0 = 0). */
static vkattn_result record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                            const vkattn_heads_params *params, const vkattn_heads_io *io,
                            bool split, uint32_t seq_all, uint32_t t0, const char *const names[2])
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller,
                        !ctx ? "ctx" : "cmd");
    uint64_t count = 0;
    if (params && !seq_all)
        seq_all = params->seq;
    vkattn_result r = check(ctx, caller, params, io, split, seq_all, names, &count);
    if (r != VKATTN_SUCCESS)
        return r;
    const heads_op op = {.caller = caller, .params = params, .io = io, .split = split,
                         .seq_all = seq_all, .t0 = t0, .count = count};
    const vkattn_tensor *const ts[2] = {io->in, io->out};
    const bool staged = vka_path16_of(ctx, ts, 2) == VKA_PATH_PACKED;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}

vkattn_result vkattn_heads_split_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vkattn_heads_params *params,
                                        const vkattn_heads_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_heads_split_record(ctx, cmd, params, io));
    return record(ctx, cmd, __func__, params, io, true, 0, 0, NULL);
}

vkattn_result vkattn_heads_merge_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vkattn_heads_params *params,
                                        const vkattn_heads_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_heads_merge_record(ctx, cmd, params, io));
    return record(ctx, cmd, __func__, params, io, false, 0, 0, NULL);
}

vkattn_result vka_heads_rows_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vkattn_heads_params *params, const vkattn_heads_io *io,
                                   bool split, uint32_t seq_all, uint32_t t0,
                                   const char *const names[2])
{
    if (params && (t0 > seq_all || params->seq > seq_all - t0))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: rows [%u, %u) pass the sequence's %u", caller, t0,
                        t0 + params->seq, seq_all);
    return record(ctx, cmd, caller, params, io, split, seq_all, t0, names);
}
