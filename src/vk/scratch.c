/* Growable context scratch, one set per recording thread: see scratch.h. */
#include "vk/scratch.h"

#include "core/error.h"
#include "core/growth.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/tensor.h"

#include <assert.h>
#include <stdlib.h>

/* The calling thread's set, created on its first use. Each set has its own
 * allocation, so the pointer stays valid while the list grows. */
static vkattn_result thread_scratch(struct vkattn_context *ctx, const char *caller,
                                    vka_thread_scratch **out)
{
    const vka_thread self = vka_thread_self();
    vkattn_result r = VKATTN_SUCCESS;
    if ((*out = vka_capture_scratch(ctx)) != NULL) /* a slicer's capture owns its scratch */
        return r;
    vka_lock(ctx);
    for (uint32_t i = 0; i < ctx->n_thread_scratch; i++)
        if (vka_thread_equal(ctx->thread_scratch[i]->thread, self)) {
            *out = ctx->thread_scratch[i];
            goto done;
        }
    vka_thread_scratch **list =
        realloc(ctx->thread_scratch, (ctx->n_thread_scratch + 1) * sizeof *list);
    vka_thread_scratch *ts = list ? calloc(1, sizeof *ts) : NULL;
    if (list)
        ctx->thread_scratch = list;
    if (!ts) {
        r = vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory (scratch list)",
                     caller);
        goto done;
    }
    ts->thread = self;
    ctx->thread_scratch[ctx->n_thread_scratch++] = ts;
    *out = ts;
done:
    vka_unlock(ctx);
    return r;
}

vkattn_result vka_growable_get(struct vkattn_context *ctx, unsigned kind, uint64_t count,
                               const char *caller, struct vkattn_tensor **out)
{
    assert(kind < VKA_SCRATCH_SLOTS); /* ops/scratch_kinds.h asserts its kinds fit */
    vka_thread_scratch *ts = NULL;
    vkattn_result r = thread_scratch(ctx, caller, &ts);
    if (r != VKATTN_SUCCESS)
        return r;
    vka_growable *g = &ts->g[kind];
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
    if ((r = vka_tensor_create_scratch(ctx, want, VKATTN_DTYPE_F32, &t)) != VKATTN_SUCCESS)
        return r;
    if (cur)
        g->retired[g->n_retired++] = cur;
    g->current = t;
    *out = t;
    return VKATTN_SUCCESS;
}

static void growable_destroy(vka_growable *g)
{
    for (uint32_t i = 0; i < g->n_retired; i++)
        vkattn_tensor_destroy(g->retired[i]);
    vkattn_tensor_destroy(g->current);
    free(g->retired);
    *g = (vka_growable){0};
}

void vka_thread_scratch_free(vka_thread_scratch *ts)
{
    for (unsigned k = 0; k < VKA_SCRATCH_SLOTS; k++)
        growable_destroy(&ts->g[k]);
}

void vka_thread_scratch_destroy(struct vkattn_context *ctx)
{
    for (uint32_t i = 0; i < ctx->n_thread_scratch; i++) {
        vka_thread_scratch_free(ctx->thread_scratch[i]);
        free(ctx->thread_scratch[i]);
    }
    free(ctx->thread_scratch);
    ctx->thread_scratch = NULL;
    ctx->n_thread_scratch = 0;
}
