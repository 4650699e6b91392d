/* The host side of the layer references: io checks, mask layouts and the
 * tail "scores -> softmax -> dropout -> W @ value -> query_mask". The rules
 * the GPU layers share (desc and call checks) are in shape/layer_shape.h. No
 * Vulkan header may be included here. */
#ifndef VKA_REFERENCE_LAYER_REF_H
#define VKA_REFERENCE_LAYER_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/mask_shape.h"
#include "shape/layer_shape.h"
#include "shape/layer_weights.h"
#include "shape/mha_shape.h"
#include "vkattn/additive_attention_host.h"
#include "vkattn/attention_host.h"
#include "vkattn/bahdanau_host.h"
#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"

/* Host io checks every layer reference shares: io, query, value, output
 * present; scores present iff return_attention_scores; a NULL key needs
 * key_width == value_width (key = value). */
vkattn_result vka_ref_layer_check_presence(const char *fn, const vkattn_layer_call *call,
                                           const vkattn_layer_host_io *io, uint32_t key_width,
                                           uint32_t value_width);

/* Host io checks for the single-head references: query, value, output
 * present; scores present iff return_attention_scores; a NULL key needs
 * dk == dv (key = value); no per-head attention mask; an attention mask shape
 * that broadcasts to (B, Tq, Tv); all sizes addressable. */
vkattn_result vka_ref_layer_check_io(const char *fn, const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io, const vka_layer_widths *w);

/* Each single-head layer's checks of its desc (*wd = its widths) and
 * weights, which its backward reference makes first too, so that the two
 * accept the same desc and weights. */
vkattn_result vka_ref_attention_check(const char *fn, const vkattn_attention_desc *desc,
                                      const vkattn_attention_weights *w, vka_layer_widths *wd);
vkattn_result vka_ref_additive_attention_check(const char *fn,
                                               const vkattn_additive_attention_desc *desc,
                                               const vkattn_additive_attention_weights *w,
                                               vka_layer_widths *wd);
vkattn_result vka_ref_bahdanau_check(const char *fn, const vkattn_bahdanau_desc *desc,
                                     const vkattn_bahdanau_weights *w, vka_layer_widths *wd);

/* The start of every single-head reference once its desc and weights are
 * checked: the call (vka_layer_check_call) and the io (above) checked, then
 * *s = the (B, Tq, Tv) scores, malloc'd for the caller to free. */
vkattn_result vka_ref_layer_start(const char *fn, const vkattn_layer_call *call,
                                  const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                  float **s);

/* The tail of every single-head reference. `s` holds the raw scores
 * (B, Tq, Tv) and is overwritten with the weights: masked softmax (UNIFORM
 * rows), dropout when training && rate > 0, copied to io->scores when asked,
 * then io->output = W @ value and rows whose query_mask is 0 multiplied by 0. */
vkattn_result vka_ref_layer_finish(const char *fn, const vkattn_layer_call *call,
                                   const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                   float rate, float *s);

/* The io checks of the MultiHeadAttention family's reference (the GPU
 * layer's vka_layer_check_io on host arrays, whose sizes cannot be checked):
 * the presence checks above, attention_mask_per_head only with a mask, and
 * the mask's layout against (B, d->heads, Tq, Tv) into *mask when there is
 * one (rank 4 allowed). */
vkattn_result vka_ref_mha_check_io(const char *fn, const vka_mha_dims *d,
                                   const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                                   vka_mask_layout *mask);

/* The explicit mask a MultiHeadAttention-family call's SDPA reads, forward
 * and backward: the attention mask with every broadcast but the head axis
 * made explicit, and the query mask folded in as Keras folds it (a masked
 * query row has no allowed key). */
typedef struct vka_ref_mha_mask {
    float *attn;     /* (B, heads, Tq, Tv) the expanded attention mask, or NULL */
    float *combined; /* attn (or all 1) && query_mask, as 1/0; NULL without a query mask */
    uint32_t heads;  /* H or 1 */
} vka_ref_mha_mask;

/* Fills *m from io and the layout vka_ref_mha_check_io gave (its dims 1 when
 * there is no attention mask); on failure *m holds nothing to free. */
vkattn_result vka_ref_mha_mask_make(const char *fn, const vka_mha_call *c,
                                    const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                                    const vka_mask_layout *ml, vka_ref_mha_mask *m);

void vka_ref_mha_mask_free(vka_ref_mha_mask *m);

/* *sp = the call's SDPA params (vka_mha_sdpa_params) with m as its explicit
 * mask; returns the mask array SDPA reads (NULL: none). */
const float *vka_ref_mha_sdpa_params(const vka_mha_dims *d, const vka_mha_call *c,
                                     const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io, const vka_ref_mha_mask *m,
                                     vkattn_sdpa_params *sp);

/* The layout of io->attention_mask (core/mask_shape.h) against (B, heads,
 * Tq, Tv): from attention_mask_rank/dims, or, at rank 0, the full mask
 * (B, Tq, Tv), or (B, H, Tq, Tv) with attention_mask_per_head. multi_head
 * allows rank 4. Requires io->attention_mask; a rank without a mask, or a
 * rank above 4, fails too. */
vkattn_result vka_ref_mask_layout(const char *fn, const vkattn_layer_call *call,
                                  const vkattn_layer_host_io *io, uint32_t heads, bool multi_head,
                                  vka_mask_layout *out);

/* *out = a malloc'd (B, l->dims[1], Tq, Tv) copy of `mask` read through l:
 * every broadcast made explicit except the head axis. */
vkattn_result vka_ref_mask_expand(const char *fn, const vkattn_layer_call *call,
                                  const float *mask, const vka_mask_layout *l, float **out);

/* Keras use_gate (MultiHeadAttention, GroupedQueryAttention):
 * x[i] *= sigmoid(pre[i]) for i < n, the sigmoid and product in double, the
 * result rounded to f32 once (as the GPU's gate.comp, in f32 there). */
void vka_ref_gate(uint64_t n, const float *pre, float *x);

/* sigmoid(v) in double: 1 / (1 + exp(-v)), exactly 0 for v below about -709. */
double vka_ref_sigmoid(double v);

/* malloc of n floats, failing with OUT_OF_HOST_MEMORY naming `what`. */
vkattn_result vka_ref_layer_alloc(const char *fn, const char *what, uint64_t n, float **out);

/* Requires every array of the host weights struct w (of `table`) that a
 * desc with `options` has, the biases (VKA_WEIGHT_IF_BIAS) or the others
 * ("fn: w->key_kernel is NULL"). Scalars are not checked. */
vkattn_result vka_ref_require_weights(const char *fn, const vka_weight_table *table,
                                      uint32_t options, bool biases, const void *w);

/* The member name of the first array given in the host weights struct gw
 * (NULL = none) that a desc with `options` lacks for want of `flag`
 * (VKA_WEIGHT_IF_*), or NULL. */
const char *vka_ref_weight_lacked(const vka_weight_table *table, uint32_t options, uint32_t flag,
                                  const void *gw);

#endif /* VKA_REFERENCE_LAYER_REF_H */
