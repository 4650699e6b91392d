/* One of the Keras layers behind one tag: its desc, its weights and its
 * device handle, with create / record / run / reference / destroy dispatched
 * through the kind's descriptor (layer_kind.h), so the bench ops and the
 * case checker share one call each. */
#ifndef ATTNBENCH_LAYER_ANY_H
#define ATTNBENCH_LAYER_ANY_H

#include "layer_kind.h" /* the kinds, their unions and weight slots */

struct ab_layer_any {
    ab_layer_kind kind;
    ab_layer_desc desc;
    ab_layer_weights w;     /* host arrays it points into belong to the caller */
    ab_layer_handle handle; /* NULL until ab_layer_any_create */
};

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

/* ---- gradients (layer_any_backward.c); the slots: layer_kind.h ---- */

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
