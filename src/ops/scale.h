/* Internal op: y = x * s[0], elementwise, with the factor read from a device
 * tensor. The Attention layer scales its query (and, in concat mode, its key)
 * by its learned scalar this way, so set_weights reaches command buffers
 * recorded before it, as for every other layer's weights. Not public: no CPU
 * reference of its own (the layer reference computes the same products).
 * s, x and y may each be f32, f16 or bf16 (ops/elementwise.h's vka_binary_record):
 * the product is fp32 and a 16-bit y is rounded once (a 16-bit Attention layer). */
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
