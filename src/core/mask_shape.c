/* See mask_shape.h. */
#include "core/mask_shape.h"

#include <stdio.h>

#include "core/check.h"
#include "core/error.h"
#include "core/shape_text.h"

/* dims right-aligned against (B, Tq, Tv) (rank <= 3, shared by the heads) or
 * (B, H, Tq, Tv) (rank 4), as (B|1, H|1, Tq|1, Tv|1); false if a dim is
 * neither 1 nor the full size. */
static bool align(uint32_t rank, const uint32_t *dims, const vka_mask_target *t, uint32_t s[4])
{
    const uint32_t full[4] = {t->batch, t->heads, t->tq, t->tv};
    s[0] = s[1] = s[2] = s[3] = 1;
    if (rank == 4) {
        for (int a = 0; a < 4; a++)
            s[a] = dims[a];
    } else {
        static const int axis3[3] = {0, 2, 3}; /* (B, Tq, Tv) within (B, H, Tq, Tv) */
        for (uint32_t k = 0; k < rank; k++)
            s[axis3[3 - rank + k]] = dims[k];
    }
    for (int a = 0; a < 4; a++)
        if (s[a] != 1 && s[a] != full[a])
            return false;
    return true;
}

/* The old contract: exactly the full mask's elements, and, at rank >= 2, the
 * last dim Tv. */
static bool legacy_full(uint32_t rank, const uint32_t *dims, const vka_mask_target *t,
                        uint32_t s[4])
{
    const uint32_t heads = t->per_head_legacy ? t->heads : 1;
    const uint64_t full[4] = {t->batch, heads, t->tq, t->tv};
    uint64_t want, have = 1;
    if (!vka_product_u64(full, 4, &want))
        return false;
    for (uint32_t k = 0; k < rank; k++)
        if (!vka_mul_u64(have, dims[k], &have))
            return false;
    if (have != want || (rank >= 2 && dims[rank - 1] != t->tv))
        return false;
    s[0] = t->batch, s[1] = heads, s[2] = t->tq, s[3] = t->tv;
    return true;
}

static vkattn_result fail_shape(struct vkattn_context *ctx, const char *caller, const char *what,
                                uint32_t rank, const uint32_t *dims, const vka_mask_target *t)
{
    char got[80], want3[64], want4[128] = "";
    const uint32_t f3[3] = {t->batch, t->tq, t->tv}, f4[4] = {t->batch, t->heads, t->tq, t->tv};
    vka_shape_text(rank <= 4 ? rank : 4, dims, got, sizeof got);
    vka_shape_text(3, f3, want3, sizeof want3);
    if (t->multi_head) {
        char s4[64];
        vka_shape_text(4, f4, s4, sizeof s4);
        snprintf(want4, sizeof want4, " or, at rank 4, (B, H, Tq, Tv) = %s", s4);
    }
    return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                    "%s: %s has shape %s (rank %u); must broadcast to (B, Tq, Tv) = %s%s, each "
                    "dim 1 or the full size",
                    caller, what, got, rank, want3, want4);
}

vkattn_result vka_mask_resolve(struct vkattn_context *ctx, const char *caller, const char *what,
                               uint32_t rank, const uint32_t *dims, const vka_mask_target *t,
                               vka_mask_layout *out)
{
    if (!dims || !t || !out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s: no shape to resolve",
                        caller, what);
    const uint32_t max_rank = t->multi_head ? 4 : 3;
    uint32_t s[4];
    bool ok = rank >= 1 && rank <= 4;
    for (uint32_t k = 0; ok && k < rank; k++)
        ok = dims[k] >= 1;
    if (!ok || !((rank <= max_rank && align(rank, dims, t, s)) || legacy_full(rank, dims, t, s)))
        return fail_shape(ctx, caller, what, rank, dims, t);
    vka_mask_layout l = {.dims = {s[0], s[1], s[2], s[3]}};
    uint64_t stride = 1;
    for (int a = 3; a >= 0; a--) {
        l.stride[a] = s[a] == 1 ? 0 : stride;
        if (!vka_mul_u64(stride, s[a], &stride))
            return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: %s overflows 64 bits", caller,
                            what);
    }
    l.count = stride;
    *out = l;
    return VKATTN_SUCCESS;
}

vkattn_broadcast vka_mask_op_broadcast(const vka_mask_layout *l)
{
    return (vkattn_broadcast){
        .batch = l->dims[0] == 1, .heads = l->dims[1] == 1, .rows = l->dims[2] == 1};
}

bool vka_mask_key_broadcast(const vka_mask_layout *l, uint32_t tv)
{
    return l->dims[3] == 1 && tv > 1;
}
