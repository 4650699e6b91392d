/* Internal ops: elementwise sum of two f32 tensors, and a fill with a
 * constant, recorded as dispatches (shaders/add.comp, fill.comp). The layer
 * backward uses them to sum the key and value paths of a value that is also
 * the key, and to write gradients that are identically zero. Not public: no
 * CPU reference of their own (the layer references compute the same). */
#ifndef VKA_OPS_ELEMENTWISE_H
#define VKA_OPS_ELEMENTWISE_H

#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* y[i] = a[i] + b[i] for i < n; a, b read, y written; y distinct from a and
 * b. f32 tensors of at least n elements. `what` names y in messages. */
vkattn_result vka_add_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                             const char *what, uint64_t n, vkattn_tensor *a, vkattn_tensor *b,
                             vkattn_tensor *y);

/* y[i] = value for i < n (f32, at least n elements). */
vkattn_result vka_fill_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              const char *what, uint64_t n, float value, vkattn_tensor *y);

#endif /* VKA_OPS_ELEMENTWISE_H */
