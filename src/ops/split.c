/* See split.h. */
#include "ops/split.h"

#include "core/check.h"
#include "core/error.h"
#include "vk/dispatch.h"
#include "vk/view.h"

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
    const uint64_t budget = vka_dispatch_budget(ctx);
    /* a slicer's finer pieces (vk/capture.h) go down to one row; only the
     * context's own budget is a limit */
    const uint64_t limit = vka_info(ctx)->max_dispatch_work;
    if (work_per_row > budget && (!limit || work_per_row <= limit)) {
        *rows_per_dispatch = 1;
        return VKATTN_SUCCESS;
    }
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

vkattn_result vka_record_grid_pieces(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                     uint64_t gx, uint64_t gz, uint64_t work, vka_dispatch *d,
                                     uint32_t *x_base, uint32_t *z_base)
{
    const uint64_t pieces = vka_dispatch_pieces(ctx, work);
    const uint64_t px = pieces < gx ? pieces : gx;
    const uint64_t pz = vka_div_up(pieces, px) < gz ? vka_div_up(pieces, px) : gz;
    uint64_t cx = vka_div_up(gx, px), cz = vka_div_up(gz, pz);
    if (cx > vka_info(ctx)->max_workgroup_count[0])
        cx = vka_info(ctx)->max_workgroup_count[0];
    if (cz > vka_info(ctx)->max_workgroup_count[2])
        cz = vka_info(ctx)->max_workgroup_count[2];
    for (uint64_t z0 = 0; z0 < gz; z0 += cz)
        for (uint64_t x0 = 0; x0 < gx; x0 += cx) {
            *x_base = (uint32_t)x0, *z_base = (uint32_t)z0;
            d->groups[0] = (uint32_t)(gx - x0 < cx ? gx - x0 : cx);
            d->groups[1] = 1;
            d->groups[2] = (uint32_t)(gz - z0 < cz ? gz - z0 : cz);
            /* this piece's share of the work, for a slicer's estimate */
            d->work = (uint64_t)((double)work * d->groups[0] * d->groups[2] / ((double)gx * gz));
            /* its share of the batch and heads (a share of rows still reads
             * every key) */
            d->touched = (double)d->groups[2] / (double)gz;
            vkattn_result r = vka_record_dispatch(ctx, cmd, d);
            if (r != VKATTN_SUCCESS)
                return r;
        }
    return VKATTN_SUCCESS;
}
