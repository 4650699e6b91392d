/* One of the four Keras layers behind one tag: its desc, its weights and its
 * device handle, with create / record / run / reference / destroy dispatched
 * on the kind, so the bench ops and the case checker share one switch each. */
#ifndef ATTNBENCH_LAYER_ANY_H
#define ATTNBENCH_LAYER_ANY_H

#include "case.h" /* ab_layer_kind */

#include <vkattn/vkattn.h>

typedef union ab_layer_desc {
    vkattn_attention_desc att;
    vkattn_additive_attention_desc add;
    vkattn_bahdanau_desc bah;
    vkattn_mha_desc mha;
    vkattn_gqa_desc gqa;
} ab_layer_desc;

typedef union ab_layer_weights {
    vkattn_attention_weights att;
    vkattn_additive_attention_weights add;
    vkattn_bahdanau_weights bah;
    vkattn_mha_weights mha;
    vkattn_gqa_weights gqa;
} ab_layer_weights;

typedef union ab_layer_handle {
    vkattn_attention *att;
    vkattn_additive_attention *add;
    vkattn_bahdanau *bah;
    vkattn_mha *mha;
    vkattn_gqa *gqa;
} ab_layer_handle;

typedef struct ab_layer_any {
    ab_layer_kind kind;
    ab_layer_desc desc;
    ab_layer_weights w;     /* host arrays it points into belong to the caller */
    ab_layer_handle handle; /* NULL until ab_layer_any_create */
} ab_layer_any;

/* Creates the layer from desc and sets w. On failure a created handle stays
 * for ab_layer_any_destroy. */
vkattn_result ab_layer_any_create(vkattn_context *ctx, ab_layer_any *l);
/* Its two halves: the layer from desc alone (the library checks its weight
 * sizes against the device, so a caller may ask before it draws them), then
 * w set on it. */
vkattn_result ab_layer_any_new(vkattn_context *ctx, ab_layer_any *l);
vkattn_result ab_layer_any_set_weights(ab_layer_any *l);
/* Destroys the handle (none is fine) and clears it. */
void ab_layer_any_destroy(ab_layer_any *l);
vkattn_result ab_layer_any_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io);
/* The layer's VKATTN_PREPARE recording of that call: creates what record would, records nothing. */
vkattn_result ab_layer_any_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io);
vkattn_result ab_layer_any_run(const ab_layer_any *l, const vkattn_layer_call *call,
                               const vkattn_layer_io *io);
/* The CPU reference of the same layer with the same desc and weights. */
vkattn_result ab_layer_any_reference(const ab_layer_any *l, const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io);

/* ---- gradients (layer_any_backward.c) ----
 * Weight gradients travel as up to AB_LAYER_WEIGHTS slots in the order of
 * the kind's weight-tensors struct (vkattn/layer_backward.h): Attention
 * scale, concat_score_weight; AdditiveAttention scale; Bahdanau
 * query_kernel, key_kernel, score_kernel, score_bias; MultiHeadAttention
 * query_kernel, query_bias, key_kernel, key_bias, value_kernel, value_bias,
 * output_kernel, output_bias, gate_kernel, gate_bias (GroupedQueryAttention: the
 * same names; the gate slots are empty without use_gate).
 * NULL = not wanted. */
#define AB_LAYER_WEIGHTS 13

typedef struct ab_weight_slot {
    const char *name; /* the Keras weight name, or the variable name of a scalar */
    size_t n;         /* elements; 0 = the layer has no such weight (no_bias, no_scale) */
    uint32_t rank;    /* of the Keras layout; 0 = a scalar */
    uint32_t dims[3];
} ab_weight_slot;

/* Fills slots[0..count-1] and returns count (2, 1, 4 or 8). */
uint32_t ab_layer_any_weight_slots(const ab_layer_any *l, ab_weight_slot slots[AB_LAYER_WEIGHTS]);
vkattn_result ab_layer_any_backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                           vkattn_tensor *const gw[AB_LAYER_WEIGHTS]);
vkattn_result ab_layer_any_backward_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                            const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                            vkattn_tensor *const gw[AB_LAYER_WEIGHTS]);
vkattn_result ab_layer_any_backward_run(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                        vkattn_tensor *const gw[AB_LAYER_WEIGHTS]);
/* The CPU reference backward (vkattn/reference_backward.h) into host arrays
 * of the same slots. */
vkattn_result ab_layer_any_reference_backward(const ab_layer_any *l,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io,
                                              const float *grad_output,
                                              const vkattn_layer_host_grads *g,
                                              float *const gw[AB_LAYER_WEIGHTS]);

#endif
