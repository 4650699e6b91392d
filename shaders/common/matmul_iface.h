/* shaders/matmul*.comp <-> src/ops/matmul.c (see iface.h). */
#ifndef VKA_MATMUL_IFACE_H
#define VKA_MATMUL_IFACE_H

#include "iface.h"

#define VKA_MATMUL_SPEC_BM 0       /* tile rows */
#define VKA_MATMUL_SPEC_BN 1       /* tile columns */
#define VKA_MATMUL_SPEC_BK 2       /* tile depth */
#define VKA_MATMUL_SPEC_TM 3       /* rows per invocation */
#define VKA_MATMUL_SPEC_TN 4       /* columns per invocation */
#define VKA_MATMUL_SPEC_TRANS_A 5  /* bool */
#define VKA_MATMUL_SPEC_TRANS_B 6  /* bool */
#define VKA_MATMUL_SPEC_HAS_BIAS 7 /* bool */
#define VKA_MATMUL_SPEC_WG 8       /* local_size_x: (BM / TM) * (BN / TN) */
#define VKA_MATMUL_SPEC_A_F16 9     /* bool: A is f16 (matmul_f16*.comp, matmul_gpu.comp) */
#define VKA_MATMUL_SPEC_B_F16 10    /* bool: B is f16 */
#define VKA_MATMUL_SPEC_BIAS_F16 11 /* bool: bias is f16 */
#define VKA_MATMUL_SPEC_C_F16 12    /* bool: C is f16 */
#define VKA_MATMUL_N_SPEC 13
/* matmul_gpu.comp only: */
#define VKA_MATMUL_SPEC_VEC_A 13    /* bool: A's offsets and strides are multiples of 4 */
#define VKA_MATMUL_SPEC_VEC_B 14    /* bool: B's are */
#define VKA_MATMUL_GPU_N_SPEC 15

#define VKA_MATMUL_PUSH                                                       \
    VKA_UINT m, n, k, heads;                                                  \
    VKA_UINT a_batch, a_head, lda;                                            \
    VKA_UINT b_batch, b_head, ldb;                                            \
    VKA_UINT c_batch, c_head, ldc;                                            \
    VKA_FLOAT alpha;                                                          \
    VKA_UINT k_begin, k_end, accumulate;                                      \
    VKA_UINT m_begin; /* first row of this dispatch; m is one past its last */
#define VKA_MATMUL_PUSH_SIZE 72

#endif /* VKA_MATMUL_IFACE_H */
