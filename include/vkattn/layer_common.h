/* vkattn/layer_common.h - the tensors of one layer call, shared by every layer.
 *
 * Every layer (vkattn/attention.h, additive_attention.h, bahdanau.h, mha.h) is
 * called with a vkattn_layer_call (shapes and options, vkattn/layer_params.h)
 * and a vkattn_layer_io (the tensors below). A tensor may have any rank, but
 * exactly the element count of its stated shape, and a tensor of rank >= 2
 * must have the stated last dim: (B, Tq, D), (B*Tq, D) and a flat tensor all
 * pass, a wrong width fails with VKATTN_ERROR_INVALID_ARGUMENT naming it.
 *
 * Layer object pattern (recording contract as in vkattn/matmul.h):
 *   vkattn_X_create(ctx, &desc, &layer);        widths fixed at creation
 *   vkattn_X_set_weights(layer, &weights);      host arrays, Keras layout, copied
 *   vkattn_X_record(layer, cmd, &call, &io);    all kernels into the one cmd
 *   or vkattn_X_record(layer, VKATTN_RUN_NOW, &call, &io);   submit and wait
 *   vkattn_X_destroy(layer);
 * A layer owns its weights and its scratch tensors. Scratch grows on demand
 * with the call's batch and lengths; scratch a grown layer replaced may still
 * be read by a recorded command buffer, so it is kept until destroy.
 *
 * Thread safety: a layer is externally synchronized, and on its context too.
 */
#ifndef VKATTN_LAYER_COMMON_H
#define VKATTN_LAYER_COMMON_H

#include <stdbool.h>

#include "vkattn/context.h"
#include "vkattn/layer_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensors of one call. Masks are f32, nonzero = may attend. */
typedef struct vkattn_layer_io {
    vkattn_tensor *query;          /* (B, Tq, Dq) */
    vkattn_tensor *value;          /* (B, Tv, Dv) */
    vkattn_tensor *key;            /* (B, Tv, Dk); NULL = value */
    vkattn_tensor *query_mask;     /* (B, Tq) or NULL */
    vkattn_tensor *value_mask;     /* (B, Tv) or NULL */
    /* NULL = none. Any shape that broadcasts, by the tensor's own rank and dims:
     * rank 1..3 right-aligned against (B, Tq, Tv) (numpy rules: each dim 1 or
     * the full size) and shared by every head; MHA also rank 4 against
     * (B, H, Tq, Tv). E.g. (Tq, Tv), (B, 1, Tv), (Tq, 1), (B, 1, Tq, Tv).
     * Compatibility: a shape that does not broadcast but holds exactly the full
     * mask's elements (last dim Tv at rank >= 2) is the full mask (B, Tq, Tv),
     * or (B, H, Tq, Tv) with attention_mask_per_head. Anything else:
     * VKATTN_ERROR_INVALID_ARGUMENT naming io->attention_mask and its shape. */
    vkattn_tensor *attention_mask;
    bool attention_mask_per_head;  /* no longer needed (give a rank-4 mask); see above */
    vkattn_tensor *output;         /* (B, Tq, Dout) written */
    vkattn_tensor *scores;         /* iff return_attention_scores: (B, Tq, Tv), MHA (B, H, Tq, Tv) */
} vkattn_layer_io;

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_LAYER_COMMON_H */
