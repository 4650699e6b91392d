/* The context's kept tensors (kept.h). */
#include "vk/kept.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "vk/context.h"
#include "vkattn/tensor.h"

struct vkattn_tensor *vka_kept_find(struct vkattn_context *ctx, const void *key, size_t size)
{
    for (uint32_t i = 0; i < ctx->n_kept; i++) {
        const struct vka_kept *e = &ctx->kept[i];
        if (e->size == size && memcmp(e->key, key, size) == 0)
            return e->t;
    }
    return NULL;
}

vkattn_result vka_kept_add(struct vkattn_context *ctx, const char *caller, const void *key,
                           size_t size, struct vkattn_tensor *t)
{
    assert(size <= VKA_KEPT_KEY_MAX); /* keys are an op's fixed structs */
    struct vka_kept *list = realloc(ctx->kept, (ctx->n_kept + 1) * sizeof *list);
    if (!list) {
        vkattn_tensor_destroy(t);
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
    }
    ctx->kept = list;
    struct vka_kept *e = &list[ctx->n_kept++];
    memset(e, 0, sizeof *e);
    memcpy(e->key, key, size);
    e->size = size;
    e->t = t;
    return VKATTN_SUCCESS;
}

void vka_kept_destroy(struct vkattn_context *ctx)
{
    for (uint32_t i = 0; i < ctx->n_kept; i++)
        vkattn_tensor_destroy(ctx->kept[i].t);
    free(ctx->kept);
    ctx->kept = NULL;
    ctx->n_kept = 0;
}
