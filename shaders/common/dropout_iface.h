/* shaders/dropout.comp and dropout_f16.comp (common/dropout_body.glsl) <->
 * src/ops/dropout.c (see iface.h). */
#ifndef VKA_DROPOUT_IFACE_H
#define VKA_DROPOUT_IFACE_H

#include "iface.h"

#define VKA_DROPOUT_SPEC_WG 0       /* local_size_x */
#define VKA_DROPOUT_SPEC_IN_PLACE 1 /* bool: the input is the out binding */
#define VKA_DROPOUT_SPEC_IN_TYPE 2   /* VKA_ELEM_*: input (dropout_f16.comp only) */
#define VKA_DROPOUT_SPEC_OUT_TYPE 3  /* output (dropout_f16.comp only) */
#define VKA_DROPOUT_N_SPEC 4

/* The Philox numbers come from core/dropout_host.h. */
#define VKA_DROPOUT_PUSH                                                       \
    VKA_UINT tq, tv;                                                           \
    VKA_UINT quads_per_row; /* ceil(tv / 4) */                                 \
    VKA_UINT total_quads;   /* B * H * Tq * quads_per_row */                   \
    VKA_UINT seed_lo, seed_hi;                                                 \
    VKA_UINT offset_mix; /* vka_philox_offset_mix(offset) */                   \
    VKA_UINT threshold;  /* vka_dropout_threshold(rate) */                     \
    VKA_FLOAT scale;     /* vka_dropout_scale(rate) */                         \
    VKA_UINT apply;      /* 0: plain copy (not training, or rate 0) */
#define VKA_DROPOUT_PUSH_SIZE 40

#endif /* VKA_DROPOUT_IFACE_H */
