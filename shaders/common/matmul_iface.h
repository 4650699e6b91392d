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
#define VKA_MATMUL_SPEC_A_TYPE 9     /* VKA_ELEM_*: A (matmul_f16*.comp, matmul_gpu.comp) */
#define VKA_MATMUL_SPEC_B_TYPE 10    /* B */
#define VKA_MATMUL_SPEC_BIAS_TYPE 11 /* bias */
#define VKA_MATMUL_SPEC_C_TYPE 12    /* C */
#define VKA_MATMUL_N_SPEC 13
/* matmul_gpu.comp only: */
#define VKA_MATMUL_SPEC_VEC_A 13    /* bool: A's offsets and strides are multiples of 4 */
#define VKA_MATMUL_SPEC_VEC_B 14    /* bool: B's are */
#define VKA_MATMUL_GPU_N_SPEC 15
/* matmul_coopmat_nv.comp's own constants (f16 A and B always): */
#define VKA_COOPMAT_SPEC_BM 0
#define VKA_COOPMAT_SPEC_BN 1
#define VKA_COOPMAT_SPEC_BK 2
#define VKA_COOPMAT_SPEC_WARPS_M 3  /* subgroups along M */
#define VKA_COOPMAT_SPEC_WARPS_N 4  /* subgroups along N */
#define VKA_COOPMAT_SPEC_SUBGROUP 5 /* the device's (fixed) subgroup size */
#define VKA_COOPMAT_SPEC_TRANS_A 6
#define VKA_COOPMAT_SPEC_TRANS_B 7
#define VKA_COOPMAT_SPEC_HAS_BIAS 8
#define VKA_COOPMAT_SPEC_BIAS_TYPE 9
#define VKA_COOPMAT_SPEC_C_TYPE 10
#define VKA_COOPMAT_SPEC_VEC_A 11 /* A's offsets and strides are multiples of 8 */
#define VKA_COOPMAT_SPEC_VEC_B 12
#define VKA_COOPMAT_SPEC_WG 13    /* local_size_x: WARPS_M * WARPS_N * SUBGROUP */
/* bool: the emulated fragments' test fault
 * (vkattn_context_advanced.coopmat_test_fault); only the emulation declares it */
#define VKA_COOPMAT_SPEC_FAULT 14
#define VKA_COOPMAT_N_SPEC 15

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
