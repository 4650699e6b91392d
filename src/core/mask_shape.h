/* How a stored attention mask broadcasts over a layer call's (B, H, Tq, Tv),
 * decided once for the GPU layers (src/layers/) and the CPU references
 * (src/reference/) alike, so the two accept exactly the same shapes and read
 * the same element for every (b, h, i, j). Pure C, no Vulkan header.
 *
 * The rule (Keras's): a mask of rank 1..3 is right-aligned against
 * (B, Tq, Tv), numpy style, each dim 1 or the full size, and is shared by
 * every head; a rank-4 mask (MultiHeadAttention only) is right-aligned against
 * (B, H, Tq, Tv). (Keras MultiHeadAttention inserts the head axis at -3 of a
 * rank-3 mask, so (B, Tq, Tv) stays what it always was.) For compatibility, a
 * mask whose shape does not broadcast but which holds exactly the elements of
 * the full mask, (B, Tq, Tv), or (B, H, Tq, Tv) under `per_head_legacy`, and
 * whose last dim is Tv when its rank is >= 2, is read as that full mask: flat
 * tensors keep working. */
#ifndef VKA_CORE_MASK_SHAPE_H
#define VKA_CORE_MASK_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

/* What the mask must broadcast to. */
typedef struct vka_mask_target {
    uint32_t batch, heads, tq, tv; /* heads 1 for the single-head layers */
    bool multi_head;               /* rank 4 allowed (MultiHeadAttention) */
    bool per_head_legacy;          /* attention_mask_per_head: "full" is (B, H, Tq, Tv) */
} vka_mask_target;

/* A resolved mask: its stored (B|1, H|1, Tq|1, Tv|1) and the element strides
 * of b, h, i, j in it (0 on a broadcast axis). */
typedef struct vka_mask_layout {
    uint32_t dims[4];   /* stored batch, heads, query rows, keys */
    uint64_t stride[4]; /* of b, h, i, j; 0 where dims[axis] is 1 */
    uint64_t count;     /* elements stored: the product of dims */
} vka_mask_layout;

/* Resolves a mask of shape dims[0..rank-1] against *t. `what` names it in the
 * message ("io->attention_mask"); ctx may be NULL. Fails with
 * VKATTN_ERROR_INVALID_ARGUMENT naming `what`, its shape and the shape it must
 * broadcast to. */
vkattn_result vka_mask_resolve(struct vkattn_context *ctx, const char *caller, const char *what,
                               uint32_t rank, const uint32_t *dims, const vka_mask_target *t,
                               vka_mask_layout *out);

/* The element of the stored mask that (b, h, i, j) reads. */
static inline uint64_t vka_mask_index(const vka_mask_layout *l, uint32_t b, uint32_t h,
                                      uint32_t i, uint32_t j)
{
    return b * l->stride[0] + h * l->stride[1] + i * l->stride[2] + j * l->stride[3];
}

/* The broadcast flags of the ops (vkattn_mask_params.mask_broadcast) for this
 * layout. The ops read a full key axis only: see vka_mask_key_broadcast. */
vkattn_broadcast vka_mask_op_broadcast(const vka_mask_layout *l);

/* True when the stored key axis is 1 but Tv > 1: the ops cannot read such a
 * mask, which must first be expanded to a full key axis. */
bool vka_mask_key_broadcast(const vka_mask_layout *l, uint32_t tv);

#endif /* VKA_CORE_MASK_SHAPE_H */
