/* shaders/head_prep.comp and head_prep_backward.comp <-> src/ops/head_prep.c
 * (see iface.h). */
#ifndef VKA_HEAD_PREP_IFACE_H
#define VKA_HEAD_PREP_IFACE_H

#include "iface.h"

#define VKA_HEAD_PREP_SPEC_WG 0 /* local_size_x */
#define VKA_HEAD_PREP_N_SPEC 1
/* head_prep_f16.comp (16-bit storage): x, w each f16 (else f32) */
#define VKA_HEAD_PREP_SPEC_X_TYPE 1
#define VKA_HEAD_PREP_SPEC_W_TYPE 2
#define VKA_HEAD_PREP_N_SPEC_F16 3

/* where row (b, h, t)'s position comes from */
#define VKA_HEAD_PREP_POS_INDEX 0u   /* t */
#define VKA_HEAD_PREP_POS_TENSOR 1u  /* positions[b * seq + t], f32 */
#define VKA_HEAD_PREP_POS_LENGTHS 2u /* a KV cache's lengths[b] (uint32) + t */

#define VKA_HEAD_PREP_PUSH                                                     \
    VKA_UINT rows;        /* B * heads * seq, each of dim features */           \
    VKA_UINT seq, heads, dim;                                                   \
    VKA_UINT use_norm, use_rope;                                                \
    VKA_UINT rotary_dim;  /* even, <= dim */                                    \
    VKA_UINT interleaved; /* pairs (2i, 2i+1); else (i, i + rotary_dim/2) */    \
    VKA_UINT pos_mode;    /* VKA_HEAD_PREP_POS_* */                             \
    VKA_UINT inverse;     /* turn by -angle (the backward of the rotation) */   \
    VKA_FLOAT eps;
#define VKA_HEAD_PREP_PUSH_SIZE 44

/* head_prep_backward.comp: the QK-norm's backward, row by row */
#define VKA_HEAD_PREP_BWD_SPEC_WG 0 /* local_size_x */
#define VKA_HEAD_PREP_BWD_N_SPEC 1
/* head_prep_backward_f16.comp (16-bit storage): x, w each f16 (else f32) */
#define VKA_HEAD_PREP_BWD_SPEC_X_TYPE 1
#define VKA_HEAD_PREP_BWD_SPEC_W_TYPE 2
#define VKA_HEAD_PREP_BWD_N_SPEC_F16 3

#define VKA_HEAD_PREP_BWD_PUSH                                                 \
    VKA_UINT rows, dim;                                                         \
    VKA_FLOAT eps;
#define VKA_HEAD_PREP_BWD_PUSH_SIZE 12

#endif /* VKA_HEAD_PREP_IFACE_H */
