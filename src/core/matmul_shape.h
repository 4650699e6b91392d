/* Resolving and checking vkattn_matmul_params once, for the GPU op and the CPU
 * reference alike: defaults filled in, strides made explicit, and the largest
 * element index each operand reaches (so no kernel reads past a tensor). */
#ifndef VKA_MATMUL_SHAPE_H
#define VKA_MATMUL_SHAPE_H

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

typedef struct vka_operand {
    uint64_t batch_stride, head_stride, row_stride; /* explicit, in elements */
    uint64_t rows, cols;                            /* as stored */
    uint64_t extent;                                /* largest index reached + 1 */
} vka_operand;

typedef struct vka_matmul_shape {
    uint32_t batch, heads, m, n, k;
    float alpha;
    vka_operand a, b, c;
} vka_matmul_shape;

vkattn_result vka_matmul_resolve(struct vkattn_context *ctx, const char *caller,
                                 const vkattn_matmul_params *p, vka_matmul_shape *out);

#endif /* VKA_MATMUL_SHAPE_H */
