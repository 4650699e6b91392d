/* Internal op: elements [0, count) of a 16-bit (f16 or bf16) tensor to or
 * from an f32 tensor (shaders/half_convert.comp), a 32-bit word of halves per
 * invocation. Matmul
 * uses it to send an f16 output through f32 sums where writing halves in place
 * is not possible (src/ops/matmul.c), and the staged ops (ops/half_stage.h).
 * Converting into f16 rounds as packHalf2x16 does (the device's rounding),
 * into bf16 to nearest even (shaders/common/elem_type.glsl); a last word
 * holding one element keeps its other half. */
#ifndef VKA_OPS_HALF_CONVERT_H
#define VKA_OPS_HALF_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* half: an f16 or bf16 tensor, f: an f32 tensor, each of at least `count`
 * elements; to_half writes half from f, else f from half. */
vkattn_result vka_half_convert_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     vkattn_tensor *half, vkattn_tensor *f, uint64_t count,
                                     bool to_half);

#endif /* VKA_OPS_HALF_CONVERT_H */
