/* A layer's weight tensors walked from its table (shape/layer_weights.h):
 * create, destroy, set and get weights as loops over the table, so each
 * layer states its weights once. The weight tensors live in the layer as
 * the public weight-tensor struct (vkattn/<layer>.h), which
 * vkattn_X_get_weight_tensors copies out; `offsets` are that struct's
 * offsetof of each table entry, expanded from the same X-macro list. */
#ifndef VKA_LAYERS_LAYER_WEIGHTS_H
#define VKA_LAYERS_LAYER_WEIGHTS_H

#include "vkattn/additive_attention.h"
#include "vkattn/attention.h"
#include "vkattn/bahdanau.h"
#include "vkattn/mha.h"

#include "layers/layer_backward_util.h"
#include "shape/layer_weights.h"
#include "shape/weight_init.h"

/* The weight-tensor struct's offsets of each table's entries. */
extern const size_t vka_mha_tensor_offsets[];
extern const size_t vka_attention_tensor_offsets[];
extern const size_t vka_additive_tensor_offsets[];
extern const size_t vka_bahdanau_tensor_offsets[];

/* The tensor of entry i in a weight-tensor struct. */
static inline vkattn_tensor **vka_weight_tensor(const void *tensors, const size_t *offsets,
                                                uint32_t i)
{
    return (vkattn_tensor **)((char *)(uintptr_t)tensors + offsets[i]);
}

/* A layer's weights: its table, the options (VKA_WEIGHT_IF_*) it holds
 * tensors for (its desc's; Attention holds both scalars whatever its
 * options), the axis widths of its desc, its tensors (a weight-tensor
 * struct) and their offsets. */
typedef struct vka_layer_weights {
    const vka_weight_table *table;
    const size_t *offsets;
    uint32_t options;
    uint64_t axes[VKA_AXIS_COUNT];
    void *tensors;
    vka_weight_init init; /* the desc's initializers, read by create */
} vka_layer_weights;

/* A single-head layer's weights: its table and offsets, the options it
 * holds tensors for, its widths and its weight-tensor struct. */
vka_layer_weights vka_single_layer_weights(const vka_weight_table *table, const size_t *offsets,
                                           uint32_t options, const vka_layer_widths *widths,
                                           const void *tensors);

/* Creates the tensor of every weight the options have, of `dtype` unless
 * its entry says f32, started as its entry and lw->init say (VKA_DEVICE_*:
 * Keras's initializers, drawn on the host in chunks and uploaded). On
 * failure the ones created stay for vka_layer_weights_destroy. */
vkattn_result vka_layer_weights_create(vkattn_context *ctx, const char *caller,
                                       const vka_layer_weights *lw, vkattn_dtype dtype);
void vka_layer_weights_destroy(const vka_layer_weights *lw);

/* Uploads every weight from the host weights struct `host`, after checking
 * that no array the layer has is NULL ("fn: w->key_bias is NULL (the layer
 * uses biases)") and every scalar is finite ("fn: w->scale is inf; must be
 * finite"), so that a failure changes nothing. */
vkattn_result vka_layer_weights_set(vkattn_context *ctx, const char *caller,
                                    const vka_layer_weights *lw, const void *host);
/* Downloads every weight the layer has into `host`; a NULL array skips one,
 * one the layer lacks is left alone. A scalar is always written. */
vkattn_result vka_layer_weights_get(vkattn_context *ctx, const char *caller,
                                    const vka_layer_weights *lw, void *host);

/* A backward call's weight gradients and the layer's own weights, for
 * vka_layer_backward_check, with the names its messages give them. */
typedef struct vka_weight_slots {
    uint32_t n; /* the table's count */
    vka_grad_slot grads[VKA_WEIGHTS_MAX];
    vka_named_tensor weights[VKA_WEIGHTS_MAX];
    char grad_names[VKA_WEIGHTS_MAX][48];   /* "grad_w->scale" */
    char weight_names[VKA_WEIGHTS_MAX][48]; /* "the layer's scale" */
} vka_weight_slots;

/* *s from the layer's table: each weight's gradient in grad_w (a
 * weight-tensor struct with lw's offsets; NULL: none wanted) with its
 * element count, 0 where the layer holds no such weight (a gradient given
 * there is refused), and the layer's own tensor of it. */
void vka_layer_weight_slots(const vka_layer_weights *lw, const void *grad_w,
                            vka_weight_slots *s);

#endif /* VKA_LAYERS_LAYER_WEIGHTS_H */
