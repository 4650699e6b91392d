/* Internals shared by the layer objects (attention, additive_attention,
 * bahdanau, mha): argument checks of vkattn_layer_call / vkattn_layer_io,
 * weight tensors, grow-on-demand scratch, and the GPU tail of the single-head
 * layers. Layers compose ops and record no raw vkCmd* themselves. */
#ifndef VKA_LAYERS_LAYER_UTIL_H
#define VKA_LAYERS_LAYER_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/mask_shape.h"
#include "shape/layer_shape.h"
#include "vkattn/layer_common.h"

/* ---------------------------------------------------------------- checks */

/* What a layer's io must look like, besides the call's B, Tq, Tv. */
typedef struct vka_layer_shape {
    uint32_t dq, dk, dv; /* input widths; key NULL (= value) requires dk == dv */
    uint32_t dout;       /* output width */
    uint32_t heads;      /* of the returned scores: 1, or H for MultiHeadAttention */
    bool multi_head;     /* MultiHeadAttention: rank-4 and per-head attention masks */
    vkattn_dtype data_dtype; /* the layer's dtype: query, key, value, output and scores
                              * may be of it or f32; a 16-bit mask is then
                              * INVALID_ARGUMENT naming it (masks stay f32) */
} vka_layer_shape;

/* Checks one tensor argument: non-NULL, on ctx, exactly prod(dims) elements,
 * and, when its rank is >= 2, a last dim of dims[n-1] (so (B, Tq, D) and
 * (B*Tq, D) and a flat tensor all pass, a wrong width does not). `what` is
 * "io->query", `shape` "(B, Tq, Dq)". */
vkattn_result vka_layer_check_tensor(vkattn_context *ctx, const char *caller,
                                     const vkattn_tensor *t, const uint64_t *dims, int n,
                                     const char *what, const char *shape);
/* As vka_layer_check_tensor, for the element types in `allowed`
 * (VKA_DTYPE_BIT masks, vk/tensor.h). */
vkattn_result vka_layer_check_tensor_types(vkattn_context *ctx, const char *caller,
                                           const vkattn_tensor *t, const uint64_t *dims, int n,
                                           const char *what, const char *shape, unsigned allowed);

/* The whole io of a call (after vka_layer_check_call): required tensors
 * present and of the right size, optional ones sized when given, an attention
 * mask whose shape broadcasts (core/mask_shape.h; its layout in *mask), scores
 * iff return_attention_scores, the per-head flag only for MultiHeadAttention,
 * and neither output nor scores overlapping any other tensor of the call. */
vkattn_result vka_layer_check_io(vkattn_context *ctx, const char *caller,
                                 const vkattn_layer_call *call, const vkattn_layer_io *io,
                                 const vka_layer_shape *s, vka_mask_layout *mask);

/* For a layer (or score mode) without a fused kernel, named by `what`:
 * call->path FUSED is VKATTN_ERROR_UNSUPPORTED rather than silently ignored;
 * AUTO and UNFUSED pass (vka_layer_check_call rejects other values). */
vkattn_result vka_layer_check_unfused_path(vkattn_context *ctx, const char *caller,
                                           const vkattn_layer_call *call, const char *what);

/* ---------------------------------------------------------------- weights */

/* A weight tensor of n elements of type `dtype`, every one `init` (set and
 * get then convert: f16 rounds to nearest even on upload and widens exactly
 * back). */
vkattn_result vka_layer_weight_create_typed(vkattn_context *ctx, const char *caller, uint64_t n,
                                            vkattn_dtype dtype, float init, vkattn_tensor **out);

/* Uploads n floats from data (NULL: INVALID_ARGUMENT naming `what`). */
vkattn_result vka_layer_weight_set(vkattn_context *ctx, const char *caller, vkattn_tensor *t,
                                   const float *data, uint64_t n, const char *what);

/* Downloads n floats into data; data NULL skips this weight. */
vkattn_result vka_layer_weight_get(vkattn_context *ctx, const char *caller, vkattn_tensor *t,
                                   float *data, uint64_t n);

/* ---------------------------------------------------------------- scratch */

/* A scratch tensor that grows on demand. A replaced tensor may still be read
 * by a command buffer recorded earlier, so it is retired, not freed, until
 * vka_scratch_release (the layer's destroy). */
typedef struct vka_scratch {
    vkattn_tensor *current;
    uint64_t capacity; /* elements in current */
    vkattn_dtype dtype; /* of the tensors it makes; zero = f32 */
    vkattn_tensor **retired;
    uint32_t n_retired, cap_retired;
} vka_scratch;

/* *out = a tensor of at least n floats (n >= 1). Grows as core/growth.h says
 * (doubling within maxStorageBufferRange) so that slowly growing calls retire
 * few. */
vkattn_result vka_scratch_get(vkattn_context *ctx, const char *caller, vka_scratch *s, uint64_t n,
                              vkattn_tensor **out);
void vka_scratch_release(vka_scratch *s);

/* ---------------------------------------------------------------- GPU masks */

/* The attention mask as the ops read it: a tensor (NULL = none) and which of
 * its batch, head and row axes are stored with size 1. */
typedef struct vka_layer_mask {
    vkattn_tensor *tensor;
    vkattn_broadcast broadcast;
} vka_layer_mask;

/* The first thing a layer records. Without a query mask to fold, the app's
 * io->attention_mask is used as it is where the ops can read it; one stored
 * with a key axis of 1 (Tv > 1) is first expanded into scratch `s` as
 * (B|1, H|1, Tq|1, Tv). With fold_query_mask (MultiHeadAttention, Keras's
 * query_mask[:, :, None] & attention_mask), the result is (B, H|1, Tq, Tv).
 * `layout` is the one vka_layer_check_io resolved (ignored without a mask). */
vkattn_result vka_layer_mask_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                    vka_scratch *s, const vkattn_layer_call *call,
                                    const vkattn_layer_io *io, const vka_mask_layout *layout,
                                    bool fold_query_mask, vka_layer_mask *out);

/* ---------------------------------------------------------------- GPU tail */

/* Records the tail every single-head layer shares, on raw scores `s`
 * (B, Tq, Tv) already written (io->scores itself when returned, else scratch):
 * masked softmax in place (UNIFORM rows, attention mask `m`), dropout in
 * place, io->output = W @ value, then query_mask rows multiplied by 0. */
vkattn_result vka_layer_finish_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                      const vkattn_layer_call *call, const vkattn_layer_io *io,
                                      const vka_layer_mask *m, uint32_t dv, float rate,
                                      vkattn_tensor *s);

/* Records the query_mask multiply on io->output (B*Tq rows of width dout);
 * nothing when io->query_mask is NULL. */
vkattn_result vka_layer_query_mask_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const char *caller, const vkattn_layer_call *call,
                                          const vkattn_layer_io *io, uint32_t dout);

#endif /* VKA_LAYERS_LAYER_UTIL_H */
