/* shaders/softmax*.comp (softmax_body.glsl) <->
 * src/ops/softmax.c (see iface.h). */
#ifndef VKA_SOFTMAX_IFACE_H
#define VKA_SOFTMAX_IFACE_H

#include "iface.h"
#include "mask_iface.h" /* the CAUSAL values */

#define VKA_SOFTMAX_SPEC_WG 0        /* invocations per workgroup (local_size_x) */
#define VKA_SOFTMAX_SPEC_G 1         /* invocations per row: power of two, divides WG */
#define VKA_SOFTMAX_SPEC_CACHE 2     /* logits cached per row (>= Tv); 0 = multi-pass */
#define VKA_SOFTMAX_SPEC_IN_PLACE 3  /* bool: scores are read from the out binding */
#define VKA_SOFTMAX_SPEC_HAS_BIAS 4  /* bool */
#define VKA_SOFTMAX_SPEC_HAS_VMASK 5 /* bool */
#define VKA_SOFTMAX_SPEC_HAS_MASK 6  /* bool */
#define VKA_SOFTMAX_SPEC_SCORES_TYPE 7 /* VKA_ELEM_*: scores (f16 as halves, or float16_t in softmax_f16) */
#define VKA_SOFTMAX_SPEC_BIAS_TYPE 8   /* bias (not in softmax_packed: the host converts) */
#define VKA_SOFTMAX_SPEC_OUT_TYPE 9    /* out (softmax_f16 only) */
#define VKA_SOFTMAX_N_SPEC 10

#define VKA_SOFTMAX_PUSH                                                      \
    VKA_UINT rows; /* B * H * Tq */                                           \
    VKA_UINT heads, tq, tv;                                                   \
    VKA_UINT causal; /* VKA_CAUSAL_* */                                       \
    VKA_UINT bias_b, bias_h, bias_i; /* element strides, 0 = broadcast        \
                                        (core/broadcast.h) */                 \
    VKA_UINT mask_b, mask_h, mask_i;                                          \
    VKA_UINT groups_x; /* workgroups along x; the row index spreads over x    \
                          and y */                                            \
    VKA_FLOAT scale_y;  /* scale / 2^k */                                     \
    VKA_FLOAT bias_y;   /* 1 / 2^k */                                         \
    VKA_FLOAT exp_c1;   /* exp_c1 * exp_c2 = 2^k * log2(e) */                 \
    VKA_FLOAT exp_c2;                                                         \
    VKA_FLOAT diff_min; /* -160 / (2^k * log2(e)): logit differences clamp    \
                           here */                                            \
    VKA_FLOAT masked_w; /* weight of every key of a row with nothing allowed: \
                           0 or 1/Tv */                                       \
    VKA_UINT bias_off, vmask_off, mask_off; /* packed variant: element        \
                                               offsets in the pack */ \
    VKA_UINT split_chunks, split_len; /* softmax_split: chunks per row, keys  \
                                         per chunk */                         \
    VKA_UINT split_phase; /* 0: chunk statistics; 1: merge and write */        \
    VKA_UINT window; /* sliding window, 0 = none, at most Tq + Tv (mask.glsl) */
#define VKA_SOFTMAX_PUSH_SIZE 100

#endif /* VKA_SOFTMAX_IFACE_H */
