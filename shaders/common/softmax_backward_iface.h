/* shaders/softmax_backward.comp and softmax_backward_packed.comp
 * (softmax_backward_body.glsl) <-> src/ops/softmax_backward.c (see iface.h). */
#ifndef VKA_SOFTMAX_BACKWARD_IFACE_H
#define VKA_SOFTMAX_BACKWARD_IFACE_H

#include "iface.h"
#include "mask_iface.h" /* the CAUSAL values */

#define VKA_SMB_SPEC_WG 0        /* invocations per workgroup (local_size_x) */
#define VKA_SMB_SPEC_G 1         /* invocations per row: power of two, divides WG */
#define VKA_SMB_SPEC_IN_PLACE 2  /* bool: grad_out is read from the out binding */
#define VKA_SMB_SPEC_HAS_BIAS 3  /* bool */
#define VKA_SMB_SPEC_HAS_VMASK 4 /* bool */
#define VKA_SMB_SPEC_HAS_MASK 5  /* bool */
#define VKA_SMB_N_SPEC 6

#define VKA_SMB_PUSH                                                         \
    VKA_UINT rows; /* B * H * Tq */                                          \
    VKA_UINT heads, tq, tv;                                                  \
    VKA_UINT causal; /* VKA_CAUSAL_* */                                      \
    VKA_UINT bias_b, bias_h, bias_i; /* element strides, 0 = broadcast       \
                                        (core/broadcast.h) */                \
    VKA_UINT mask_b, mask_h, mask_i;                                         \
    VKA_UINT groups_x; /* workgroups along x; rows spread over x and y */    \
    VKA_FLOAT scale;   /* the forward's score scale */                       \
    VKA_UINT bias_off, vmask_off, mask_off; /* packed variant: element       \
                                               offsets in the pack */        \
    VKA_UINT window; /* sliding window, 0 = none, at most Tq + Tv */
#define VKA_SMB_PUSH_SIZE 68

#endif /* VKA_SOFTMAX_BACKWARD_IFACE_H */
