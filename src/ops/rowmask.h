/* Internal op: multiplies each row of a (rows, width) tensor by (mask[row] != 0),
 * in place. The layers use it for Keras's query_mask, which zeroes output rows
 * but not the returned attention weights. Not public: no CPU reference of its
 * own (the layer references do the same multiply). */
#ifndef VKA_OPS_ROWMASK_H
#define VKA_OPS_ROWMASK_H

#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* data: at least rows * width elements, read and written, f32, f16 or bf16 (through
 * f32 scratch, ops/half_stage.h: multiplying by 0 or 1 is exact either way);
 * mask: at least rows f32 elements. `caller` names the public function in messages. */
vkattn_result vka_rowmask_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 uint32_t rows, uint32_t width, vkattn_tensor *mask,
                                 vkattn_tensor *data);

#endif /* VKA_OPS_ROWMASK_H */
