/* Internals shared by the backward of the single-head layers (attention,
 * additive_attention, bahdanau; vkattn/layer_backward.h): what a forward
 * recorded with keep_for_backward leaves for its backward, the checks every
 * backward makes, and the part of the backward the layers share, from the
 * raw scores S (B, Tq, Tv) to dL/dS and dL/d(value) (f32 scratch also for
 * a 16-bit layer, f16 or bf16: the ops read its 16-bit tensors widened
 * exactly and round each 16-bit gradient once, so the softmax backward
 * sees only f32 W and dW):
 *   W = softmax(S, masks)   Wd = dropout(W)   out = (Wd @ value) * query_mask
 *   dWd = (dO @ value^T) * query_mask   dV = Wd^T @ (dO * query_mask)
 *   dW = dropout'(dWd)   dS = softmax'(W, dW)
 * These layers keep no activations: the backward recomputes S from the
 * inputs and the layer's weight tensors and W from S. */
#ifndef VKA_LAYERS_LAYER_BACKWARD_UTIL_H
#define VKA_LAYERS_LAYER_BACKWARD_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/layer_util.h"
#include "vkattn/layer_backward.h"

/* A layer's record of its last forward, owned by the layer (NULL until its
 * first forward), and the backward's scratch. */
typedef struct vka_layer_kept {
    bool valid;             /* the last forward was recorded with keep_for_backward */
    vkattn_layer_call call; /* that forward's call and io */
    vkattn_layer_io io;
    vka_scratch mask;           /* the attention mask expanded as the forward did */
    vka_scratch weights, grads; /* W and Wd / dWd / dS, each (B, Tq, Tv) */
    vka_scratch q, k;           /* the layer's transformed query and key */
    vka_scratch dq, dk;         /* their gradients */
    vka_scratch dk_scaled;      /* the gradient of a scaled key, before the scale */
    vka_scratch dv;             /* value's gradient from the output path, key NULL */
    vka_scratch vec, dvec;      /* a weight vector the backward derives, and its gradient */
    vka_scratch part1, part2;   /* partial sums of a scalar weight's gradient */
} vka_layer_kept;

/* Every forward record calls this after recording successfully: the layer
 * remembers call and io when call->keep_for_backward, and forgets any earlier
 * forward otherwise. Allocates *kept on first use. */
vkattn_result vka_layer_keep(vkattn_context *ctx, const char *caller, vka_layer_kept **kept,
                             const vkattn_layer_call *call, const vkattn_layer_io *io);
void vka_layer_kept_destroy(vka_layer_kept *kept);

/* One gradient tensor the backward may write: where it goes, its element
 * count and its name for messages. */
/* A single-head layer backward's arguments, as vka_record_dry_first
 * (vk/prepare.h) hands them to its recording: `parts` is the layer's
 * vka_X_parts (layers/single_internal.h), `grad_w` its weight gradients. */
typedef struct vka_backward_call {
    const void *parts;
    const char *fn;
    const vkattn_layer_call *call;
    const vkattn_layer_io *io;
    const vkattn_layer_grads *grads;
    const void *grad_w;
} vka_backward_call;

typedef struct vka_grad_slot {
    vkattn_tensor *t;
    uint64_t count;
    const char *name;
} vka_grad_slot;

/* A tensor a backward reads, with its name for messages (the aliasing
 * check: the layer's weight tensors). */
typedef struct vka_named_tensor {
    vkattn_tensor *t;
    const char *name;
} vka_named_tensor;

/* The checks every single-head backward makes, before anything is recorded:
 * call and io as the forward's checks, a kept forward with the same call and
 * io, the element types (f32; f16 or bf16 too where shape->data_dtype is, a
 * 16-bit layer's: io as its forward's, every gradient of that dtype or f32 on
 * its own),
 * grads->grad_output, the input gradients and the weight
 * gradients `wg` (n_wg slots; a slot whose count is 0 is a weight the layer
 * lacks, so its tensor must be NULL) of the right size, at least one wanted,
 * and no gradient overlapping an io tensor, grad_output, a weight or another
 * gradient. `shape` as for the forward's vka_layer_check_io; *mask is the
 * attention mask's layout it resolves. */
vkattn_result vka_layer_backward_check(vkattn_context *ctx, const char *caller,
                                       const vka_layer_kept *kept, const vka_layer_shape *shape,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       const vkattn_layer_grads *grads, const vka_grad_slot *wg,
                                       uint32_t n_wg, const vka_named_tensor *weights,
                                       uint32_t n_weights, vka_mask_layout *mask);

/* The tail's state between the layer's steps. */
typedef struct vka_layer_tail {
    vka_layer_mask mask;    /* the attention mask as the softmax reads it */
    vkattn_tensor *scores;  /* (B, Tq, Tv): the layer writes raw S here; then dS */
    vkattn_tensor *weights; /* (B, Tq, Tv): W */
    /* where dL/d(value) of the output path goes: grads->grad_value, or
     * scratch when the value is also the key (NULL: not wanted) */
    vkattn_tensor *grad_value;
} vka_layer_tail;

/* Records the attention mask's expansion (as the forward) and gets the
 * scratch; the layer then writes its raw scores into tail->scores. */
vkattn_result vka_layer_tail_begin(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   vka_layer_kept *kept, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                   const vka_mask_layout *mask, uint32_t dv, vka_layer_tail *tail);

/* From the raw scores to dL/dS in tail->scores, and the output path's
 * dL/d(value) into tail->grad_value. `rate`: the layer's dropout. */
vkattn_result vka_layer_tail_backward(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                      vka_layer_kept *kept, const vkattn_layer_call *call,
                                      const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                      uint32_t dv, float rate, vka_layer_tail *tail);

/* The key path's gradient when the key is the value: *out = where the layer
 * writes dL/d(key) (scratch), or NULL when grad_value is not wanted. */
vkattn_result vka_layer_key_grad_target(vkattn_context *ctx, const char *caller,
                                        vka_layer_kept *kept, const vkattn_layer_call *call,
                                        const vkattn_layer_io *io,
                                        const vkattn_layer_grads *grads, uint32_t dk,
                                        vkattn_tensor **out);

/* The last step when the key is the value: grads->grad_value = the output
 * path's plus the key path's (written into `key_grad`); nothing otherwise. */
vkattn_result vka_layer_value_grad_finish(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const char *caller, const vkattn_layer_call *call,
                                          const vkattn_layer_io *io,
                                          const vkattn_layer_grads *grads, uint32_t dv,
                                          const vka_layer_tail *tail, vkattn_tensor *key_grad);

/* *out (1) = sum_i a[i] * b[i] over n elements: the gradient of a scalar
 * that multiplies `b` (a = the gradient of the product). */
vkattn_result vka_layer_dot_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   uint64_t n, vkattn_tensor *a, vkattn_tensor *b,
                                   vkattn_tensor *out);

#endif /* VKA_LAYERS_LAYER_BACKWARD_UTIL_H */
