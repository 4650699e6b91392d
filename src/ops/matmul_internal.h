/* The matmul op for other ops (the backward of matmul records its gradients as
 * matmuls): vkattn_matmul_record with the public function's name to put in
 * messages. */
#ifndef VKA_OPS_MATMUL_INTERNAL_H
#define VKA_OPS_MATMUL_INTERNAL_H

#include "vkattn/matmul.h"

vkattn_result vka_matmul_record_as(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vkattn_matmul_params *params, const vkattn_matmul_io *io);

#endif /* VKA_OPS_MATMUL_INTERNAL_H */
