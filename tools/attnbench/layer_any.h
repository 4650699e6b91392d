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
} ab_layer_desc;

typedef union ab_layer_weights {
    vkattn_attention_weights att;
    vkattn_additive_attention_weights add;
    vkattn_bahdanau_weights bah;
    vkattn_mha_weights mha;
} ab_layer_weights;

typedef union ab_layer_handle {
    vkattn_attention *att;
    vkattn_additive_attention *add;
    vkattn_bahdanau *bah;
    vkattn_mha *mha;
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
/* Destroys the handle (none is fine) and clears it. */
void ab_layer_any_destroy(ab_layer_any *l);
vkattn_result ab_layer_any_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io);
/* The layer's *_prepare for that call: creates what record would, records nothing. */
vkattn_result ab_layer_any_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io);
vkattn_result ab_layer_any_run(const ab_layer_any *l, const vkattn_layer_call *call,
                               const vkattn_layer_io *io);
/* The CPU reference of the same layer with the same desc and weights. */
vkattn_result ab_layer_any_reference(const ab_layer_any *l, const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io);

#endif
