/* The variant, tuning-table or library choice of tiles (variant_select.h). */
#include "ops/variant_select.h"

#include "core/error.h"
#include "ops/flash_backward_coopmat.h"
#include "ops/tuning_table.h"
#include "ops/variants.h"
#include "vk/view.h"

/* The family's variant for this context: forced, else the table's. */
static uint32_t variant_of(const struct vkattn_context *ctx, uint32_t family, bool *forced)
{
    *forced = vka_variant_asked(ctx, family) != 0;
    if (*forced)
        return vka_variant_asked(ctx, family);
    const vkattn_context_info *i = vka_info(ctx);
    return vka_tuning_lookup(i->vendor_id, i->subgroup_size, i->max_shared_memory,
                             i->coopmat_running)
        ->variants[family];
}

/* A table's variant that does not fit falls back to the library's choice;
 * a forced one declines the family, said at WARN. */
static bool unfit(const struct vkattn_context *ctx, uint32_t family, uint32_t v, const char *what)
{
    /* the logger is thread-safe; the context's state is not touched */
    vka_log((struct vkattn_context *)ctx, VKATTN_LOG_WARN,
            "advanced->variants[%u] (%s) = %u does not fit this device or call (%s): the "
            "family's kernel is not taken",
            (unsigned)family, vka_variant_family_name(family), (unsigned)v, what);
    return false;
}

bool vka_select_matmul_gpu(const struct vkattn_context *ctx, uint32_t m, uint32_t n,
                           vka_matmul_tiles *out)
{
    bool forced;
    const uint32_t v = variant_of(ctx, VKATTN_VARIANT_MATMUL, &forced);
    if (v && vka_variant_matmul_gpu(vka_info(ctx), v, out))
        return true;
    if (forced)
        return unfit(ctx, VKATTN_VARIANT_MATMUL, v, "matmul_gpu tiles");
    return vka_matmul_gpu_tiles(vka_info(ctx), m, n, out);
}

bool vka_select_matmul_coopmat(const struct vkattn_context *ctx, uint32_t m, uint32_t n,
                               bool emulated, vka_coopmat_tiles *out)
{
    bool forced;
    const uint32_t v = variant_of(ctx, VKATTN_VARIANT_MATMUL_COOPMAT, &forced);
    if (v && vka_variant_matmul_coopmat(vka_info(ctx), v, emulated, out))
        return true;
    if (forced)
        return unfit(ctx, VKATTN_VARIANT_MATMUL_COOPMAT, v, "cooperative-matrix matmul tiles");
    return vka_matmul_coopmat_tiles(vka_info(ctx), m, n, emulated, out);
}

bool vka_select_flash_tiled(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                            vka_flash_tiled *out)
{
    bool forced;
    const uint32_t v = variant_of(ctx, VKATTN_VARIANT_FLASH, &forced);
    if (v && vka_variant_flash_tiled(vka_info(ctx), v, vka_subgroup_shuffle(ctx), dk, dv, out))
        return true;
    if (forced && !vka_info(ctx)->cpu_tuning)
        return unfit(ctx, VKATTN_VARIANT_FLASH, v, "tiled fused attention at these widths");
    return vka_flash_tiled_tiles(vka_info(ctx), vka_subgroup_shuffle(ctx), dk, dv, out);
}

bool vka_select_flash_coopmat(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                              vka_flash_coopmat_tiles *out)
{
    bool forced;
    const uint32_t v = variant_of(ctx, VKATTN_VARIANT_FLASH_COOPMAT, &forced);
    if (v && vka_variant_flash_coopmat(vka_info(ctx), v, dk, dv, out))
        return true;
    if (forced)
        return unfit(ctx, VKATTN_VARIANT_FLASH_COOPMAT, v,
                     "cooperative-matrix fused attention at these widths");
    return vka_flash_coopmat_choose_tiles(vka_info(ctx), dk, dv, out);
}

bool vka_select_flash_backward(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                               vka_fb_gpu_tiles *out)
{
    bool forced;
    const uint32_t v = variant_of(ctx, VKATTN_VARIANT_FLASH_BACKWARD, &forced);
    if (v && vka_variant_flash_backward(vka_info(ctx), v, vka_subgroup_shuffle(ctx), dk, dv, out))
        return true;
    if (forced)
        return unfit(ctx, VKATTN_VARIANT_FLASH_BACKWARD, v, "fused backward at these widths");
    return vka_flash_backward_gpu_choose(vka_info(ctx), vka_subgroup_shuffle(ctx), dk, dv, out);
}

/* A forced flash_coopmat variant forces the backward's tiles too; unforced,
 * the library's choice (the tuning table's flash_coopmat column is the
 * forward's winner, not timed on the backward). */
bool vka_select_flash_backward_coopmat(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                                       vka_flash_coopmat_tiles *out)
{
    const uint32_t v = vka_variant_asked(ctx, VKATTN_VARIANT_FLASH_COOPMAT);
    if (!v)
        return vka_flash_backward_coopmat_choose_tiles(vka_info(ctx), dk, dv, out);
    vka_flash_coopmat_tiles t;
    if (vka_variant_flash_coopmat_row(v, &t) &&
        vka_flash_backward_coopmat_fits(vka_info(ctx), &t, dk, dv)) {
        *out = t;
        return true;
    }
    return unfit(ctx, VKATTN_VARIANT_FLASH_COOPMAT, v,
                 "the cooperative-matrix fused backward at these widths");
}
