/* What the single-head layers (Attention, AdditiveAttention, Bahdanau) share
 * between their GPU objects (src/layers/) and their CPU references
 * (src/reference/): desc and call checks, and the mask and dropout params a
 * call implies. One copy means the GPU layer and its reference cannot disagree
 * on what is valid. Pure C, no Vulkan header; ctx arguments may be NULL (the
 * references report through vkattn_last_error()). */
#ifndef VKA_SHAPE_LAYER_SHAPE_H
#define VKA_SHAPE_LAYER_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/additive_attention_host.h"
#include "vkattn/attention_host.h"
#include "vkattn/bahdanau_host.h"
#include "vkattn/result.h"

struct vkattn_context;

/* The feature widths of one single-head layer, defaults resolved. */
typedef struct vka_layer_widths {
    uint32_t dq, dk, dv; /* query, key and value input widths */
    uint32_t units;      /* Bahdanau's U; 0 for the others */
} vka_layer_widths;

/* Desc checks; on success *w holds the resolved widths. `fn` names the public
 * function in messages ("vkattn_attention_create: desc->query_width is 0 ..."). */
vkattn_result vka_attention_check_desc(struct vkattn_context *ctx, const char *fn,
                                       const vkattn_attention_desc *d, vka_layer_widths *w);
vkattn_result vka_additive_attention_check_desc(struct vkattn_context *ctx, const char *fn,
                                                const vkattn_additive_attention_desc *d,
                                                vka_layer_widths *w);
vkattn_result vka_bahdanau_check_desc(struct vkattn_context *ctx, const char *fn,
                                      const vkattn_bahdanau_desc *d, vka_layer_widths *w);

/* Checks a scalar weight is finite ("fn: w->scale is inf; must be finite"). */
vkattn_result vka_layer_check_scalar(struct vkattn_context *ctx, const char *fn, const char *name,
                                     float v);

/* Checks the fields of a call: batch, tq, tv >= 1, causal a vkattn_causal
 * value, path a vkattn_sdpa_path value. */
vkattn_result vka_layer_check_call(struct vkattn_context *ctx, const char *fn,
                                   const vkattn_layer_call *call);

/* The softmax masks of a single-head layer call: causal per the call, value
 * mask when present, an attention mask stored as `attention_mask` says (NULL
 * = none; its head axis is always 1), a fully masked row per `row` (UNIFORM
 * for the Keras single-head layers). */
vkattn_mask_params vka_layer_mask_params(const vkattn_layer_call *call, vkattn_masked_row row,
                                         bool has_value_mask,
                                         const vkattn_broadcast *attention_mask);

/* The dropout of a (B, heads, Tq, Tv) weight tensor for this call. */
vkattn_dropout_op_params vka_layer_dropout_params(const vkattn_layer_call *call, float rate,
                                                  uint32_t heads);

#endif /* VKA_SHAPE_LAYER_SHAPE_H */
