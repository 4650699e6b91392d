/* Growable context scratch: see scratch.h. */
#include "vk/scratch.h"

#include "core/error.h"
#include "core/growth.h"
#include "vk/context.h"
#include "vk/tensor.h"

#include <stdlib.h>

vkattn_result vka_growable_get(struct vkattn_context *ctx, vka_growable *g, uint64_t count,
                               const char *caller, struct vkattn_tensor **out)
{
    struct vkattn_tensor *cur = g->current;
    if (cur && cur->count >= count) {
        *out = cur;
        return VKATTN_SUCCESS;
    }
    const uint64_t want =
        vka_grow_capacity(cur ? cur->count : 0, count, vka_max_range(ctx) / sizeof(float));
    if (cur) {
        struct vkattn_tensor **list = realloc(g->retired, (g->n_retired + 1) * sizeof *list);
        if (!list)
            return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                            "%s: out of host memory (scratch list)", caller);
        g->retired = list;
    }
    struct vkattn_tensor *t;
    vkattn_result r = vka_tensor_create_1d(ctx, want, &t);
    if (r != VKATTN_SUCCESS)
        return r;
    if (cur)
        g->retired[g->n_retired++] = cur;
    g->current = t;
    *out = t;
    return VKATTN_SUCCESS;
}

void vka_growable_destroy(vka_growable *g)
{
    for (uint32_t i = 0; i < g->n_retired; i++)
        vkattn_tensor_destroy(g->retired[i]);
    vkattn_tensor_destroy(g->current);
    free(g->retired);
    *g = (vka_growable){0};
}
