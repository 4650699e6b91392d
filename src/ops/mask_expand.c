/* See mask_expand.h. */
#include "ops/mask_expand.h"

#include "core/check.h"
#include "core/error.h"
#include "common/mask_expand_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(mask_push, VKA_MASK_EXPAND_PUSH);

vkattn_result vka_mask_expand_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     const vka_mask_expand *e)
{
    const uint64_t dims[4] = {e->batch, e->heads, e->tq, e->tv};
    uint64_t total;
    if (!vka_product_u64(dims, 4, &total) || total > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the expanded attention mask (%u x %u x %u x %u) exceeds 32-bit "
                        "indexing",
                        caller, e->batch, e->heads, e->tq, e->tv);
    vkattn_result r;
    if ((e->query_mask && (r = vka_tensor_check(ctx, e->query_mask, (uint64_t)e->batch * e->tq,
                                                caller, "io->query_mask"))) ||
        (e->attn && (r = vka_tensor_check(ctx, e->attn, e->layout->count, caller,
                                          "io->attention_mask"))) ||
        (r = vka_tensor_check(ctx, e->out, total, caller, "the expanded attention mask")))
        return r;
    mask_push push = {.tq = e->tq, .tv = e->tv, .heads = e->heads, .total = (uint32_t)total};
    if (e->attn) { /* each stride < count <= total fits 32 bits */
        push.sb = (uint32_t)e->layout->stride[0], push.sh = (uint32_t)e->layout->stride[1];
        push.si = (uint32_t)e->layout->stride[2], push.sj = (uint32_t)e->layout->stride[3];
    }
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(mask_expand),
        .n_bindings = 3,
        .push_size = sizeof(mask_push),
        .n_spec = VKA_MASK_EXPAND_N_SPEC,
        .spec = {
            [VKA_MASK_EXPAND_SPEC_HAS_ATTN] = e->attn != NULL,
            [VKA_MASK_EXPAND_SPEC_HAS_QUERY] = e->query_mask != NULL,
        },
    };
    const vka_dispatch d = {
        .bindings = {vka_bind_optional(ctx, e->query_mask), vka_bind_optional(ctx, e->attn),
                     vka_bind_tensor(e->out, true)},
        .push = &push,
        .caller = caller,
    };
    return vka_record_grid_1d(ctx, cmd, kernel, VKA_MASK_EXPAND_SPEC_WG, push.total, d);
}
