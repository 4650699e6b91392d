/* The context's rotation tables (rope_table.h). */
#include "vk/rope_table.h"

#include <stdlib.h>

#include "core/error.h"
#include "vk/context.h"
#include "vkattn/tensor.h"

struct vkattn_tensor *vka_rope_table_find(struct vkattn_context *ctx,
                                          const vkattn_rope_params *rope)
{
    for (uint32_t i = 0; i < ctx->n_rope_tables; i++) {
        const struct vka_rope_table *e = &ctx->rope_tables[i];
        if (e->max_wavelength == rope->max_wavelength &&
            e->scaling_factor == rope->scaling_factor && e->rotary_dim == rope->rotary_dim)
            return e->t;
    }
    return NULL;
}

vkattn_result vka_rope_table_keep(struct vkattn_context *ctx, const char *caller,
                                  const vkattn_rope_params *rope, struct vkattn_tensor *t)
{
    struct vka_rope_table *list =
        realloc(ctx->rope_tables, (ctx->n_rope_tables + 1) * sizeof *list);
    if (!list) {
        vkattn_tensor_destroy(t);
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
    }
    ctx->rope_tables = list;
    list[ctx->n_rope_tables++] = (struct vka_rope_table){
        rope->max_wavelength, rope->scaling_factor, rope->rotary_dim, t};
    return VKATTN_SUCCESS;
}

void vka_rope_tables_destroy(struct vkattn_context *ctx)
{
    for (uint32_t i = 0; i < ctx->n_rope_tables; i++)
        vkattn_tensor_destroy(ctx->rope_tables[i].t);
    free(ctx->rope_tables);
    ctx->rope_tables = NULL;
    ctx->n_rope_tables = 0;
}
