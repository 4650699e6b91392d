/* What the single-head layers (Attention, AdditiveAttention, Bahdanau) share
 * between their GPU objects (src/layers/) and their CPU references: desc and
 * call checks, the mask and dropout params a call implies, and the host-side
 * tail "scores -> softmax -> dropout -> W @ value -> query_mask". Keeping the
 * rules here means the GPU layer and its reference cannot disagree on what is
 * valid. No Vulkan header may be included here; ctx arguments may be NULL
 * (the references report through vkattn_last_error()). */
#ifndef VKA_REFERENCE_LAYER_REF_H
#define VKA_REFERENCE_LAYER_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/mask_shape.h"
#include "vkattn/layer_params.h"

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

/* The tail of every single-head reference. `s` holds the raw scores
 * (B, Tq, Tv) and is overwritten with the weights: masked softmax (UNIFORM
 * rows), dropout when training && rate > 0, copied to io->scores when asked,
 * then io->output = W @ value and rows whose query_mask is 0 multiplied by 0. */
vkattn_result vka_ref_layer_finish(const char *fn, const vkattn_layer_call *call,
                                   const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                   float rate, float *s);

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

/* malloc of n floats, failing with OUT_OF_HOST_MEMORY naming `what`. */
vkattn_result vka_ref_layer_alloc(const char *fn, const char *what, uint64_t n, float **out);

#endif /* VKA_REFERENCE_LAYER_REF_H */
