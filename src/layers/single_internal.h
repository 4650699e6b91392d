/* What the backward of the single-head layers (src/layers/X_backward.c)
 * reads of a layer object, whose struct stays private to its forward file. */
#ifndef VKA_LAYERS_SINGLE_INTERNAL_H
#define VKA_LAYERS_SINGLE_INTERNAL_H

#include "layers/layer_backward_util.h"
#include "layers/layer_weights.h"
#include "shape/layer_shape.h"
#include "vkattn/additive_attention.h"
#include "vkattn/attention.h"
#include "vkattn/bahdanau.h"

typedef struct vka_attention_parts {
    vkattn_context *ctx;
    const vkattn_attention_desc *desc;
    vka_layer_widths w;
    vkattn_tensor *scale, *csw; /* (1) each */
    vkattn_tensor *ones;        /* (Dq) ones, concat mode (csw * ones = the additive op's vector) */
    vka_layer_weights weights;  /* the table's walk of them */
    vka_layer_kept **kept;
} vka_attention_parts;
vka_attention_parts vka_attention_parts_of(vkattn_attention *layer);

typedef struct vka_additive_attention_parts {
    vkattn_context *ctx;
    const vkattn_additive_attention_desc *desc;
    vka_layer_widths w;
    vkattn_tensor *scale; /* (Dq); NULL with no_scale */
    vka_layer_weights weights; /* the table's walk of it */
    vka_layer_kept **kept;
} vka_additive_attention_parts;
vka_additive_attention_parts vka_additive_attention_parts_of(vkattn_additive_attention *layer);

typedef struct vka_bahdanau_parts {
    vkattn_context *ctx;
    const vkattn_bahdanau_desc *desc;
    vka_layer_widths w;
    vkattn_tensor *wq, *wk, *v, *score_bias; /* (Dq, U), (Dk, U), (U), (1) */
    vka_layer_weights weights;               /* the table's walk of them */
    vka_layer_kept **kept;
} vka_bahdanau_parts;
vka_bahdanau_parts vka_bahdanau_parts_of(vkattn_bahdanau *layer);
/* The rows (B*Tq, B*Tv) and elements (rows * units) of the two projections,
 * checked for overflow and 32-bit indexing; shared by the forward and the
 * backward. All four are written on every path (nq, nk are 0 on failure). */
vkattn_result vka_bahdanau_projection_sizes(vkattn_context *ctx, const char *fn,
                                            const vkattn_layer_call *call, uint32_t units,
                                            uint64_t *rq, uint64_t *rk, uint64_t *nq, uint64_t *nk);

#endif /* VKA_LAYERS_SINGLE_INTERNAL_H */
