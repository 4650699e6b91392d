/* See split.h. */
#include "ops/split.h"

#include "core/check.h"
#include "core/error.h"
#include "vk/context.h"
#include "vk/dispatch.h"

vkattn_result vka_split_rows(struct vkattn_context *ctx, const char *caller, const char *kernel,
                             uint32_t rows, uint32_t tile, uint64_t work_per_row,
                             uint32_t *rows_per_dispatch)
{
    uint64_t work;
    if (!vka_mul_u64(rows, work_per_row, &work))
        work = UINT64_MAX;
    *rows_per_dispatch = rows;
    if (vka_dispatch_pieces(ctx, work) <= 1)
        return VKATTN_SUCCESS;
    const uint64_t budget = ctx->info.max_dispatch_work;
    if (work_per_row > budget)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: one row of %s is %llu multiply-adds; the dispatch budget "
                        "(max_dispatch_work) is %llu",
                        caller, kernel, (unsigned long long)work_per_row,
                        (unsigned long long)budget);
    uint64_t fit = budget / work_per_row; /* >= 1, < rows */
    if (fit >= tile)
        fit -= fit % tile;
    *rows_per_dispatch = (uint32_t)fit;
    return VKATTN_SUCCESS;
}
