/* Internal op: y = x * s[0], elementwise, with the factor read from a device
 * tensor. The Attention layer scales its query (and, in concat mode, its key)
 * by its learned scalar this way, so set_weights reaches command buffers
 * recorded before it, as for every other layer's weights. Not public: no CPU
 * reference of its own (the layer reference computes the same products).
 * s, x and y may each be f16 or f32 (through f32 scratch, ops/half_stage.h):
 * the product is fp32 and an f16 y is rounded once (an f16 Attention layer). */
#ifndef VKA_OPS_SCALE_H
#define VKA_OPS_SCALE_H

#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* x, y: distinct tensors of at least n elements (x read, y written);
 * s: at least 1 element, read. `caller` names the public function and `what`
 * the input in messages. */
vkattn_result vka_scale_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                               const char *what, uint64_t n, vkattn_tensor *s, vkattn_tensor *x,
                               vkattn_tensor *y);

#endif /* VKA_OPS_SCALE_H */
