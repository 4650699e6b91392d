/* The dropout kernel's recording under the name of the public function that
 * uses it: vkattn_dropout_record, and vkattn_dropout_backward_record, which
 * records the same kernel on the gradient (src/ops/dropout_backward.c).
 * Checks and contract as vkattn_dropout_record's; `caller` names the public
 * function in messages, names[0] and names[1] its io->in and io->out. */
#ifndef VKA_OPS_DROPOUT_RECORD_H
#define VKA_OPS_DROPOUT_RECORD_H

#include "vkattn/dropout.h"

vkattn_result vka_dropout_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 const char *const names[2],
                                 const vkattn_dropout_op_params *params,
                                 const vkattn_dropout_io *io);

#endif /* VKA_OPS_DROPOUT_RECORD_H */
