/* Internal ops: Keras's use_gate, y = x * sigmoid(g) elementwise
 * (shaders/gate.comp), and its gradient (gate_backward.comp). MultiHeadAttention
 * and GroupedQueryAttention multiply their merged context (B, Tq, H*dv) by the
 * sigmoid of the query's gate projection, same layout, before the output
 * projection. Not public: no CPU reference of their own (the layer references
 * compute the same products, reference/layer_mha.c). */
#ifndef VKA_OPS_GATE_H
#define VKA_OPS_GATE_H

#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* y[i] = x[i] * sigmoid(g[i]) for i < n; x, g read, y written, y distinct
 * from both. Each may be f16 or f32 (read and written as they are with
 * 16-bit storage, else through f32 scratch, ops/half_stage.h: either way the
 * arithmetic is f32 and an f16 y is rounded once).
 * `caller` names the public function in messages. */
vkattn_result vka_gate_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              uint64_t n, vkattn_tensor *x, vkattn_tensor *g, vkattn_tensor *y);

/* The gradient of gate.comp's y = x * sigmoid(g) given dy, tensors of at
 * least n elements: dx = dy * s, dg = dy * x * s * (1 - s), s = sigmoid(g);
 * dx and dg written, distinct from the inputs and each other. dy, dx and dg
 * are f32 (the layers' gradient scratch); x and g, the forward's kept
 * tensors, f32, f16 or bf16 (an f16 one read as it is with 16-bit storage,
 * else through an exact f32 copy, ops/half_stage.h).
 * Two dispatches, one per output, so each binds 4 storage buffers (the
 * phone minimum). */
vkattn_result vka_gate_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                       const char *caller, uint64_t n, vkattn_tensor *dy,
                                       vkattn_tensor *x, vkattn_tensor *g, vkattn_tensor *dx,
                                       vkattn_tensor *dg);

#endif /* VKA_OPS_GATE_H */
