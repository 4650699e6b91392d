/* shaders/heads.comp and heads_f16.comp (common/heads_body.glsl) <->
 * src/ops/heads.c (see iface.h). */
#ifndef VKA_HEADS_IFACE_H
#define VKA_HEADS_IFACE_H

#include "iface.h"

#define VKA_HEADS_SPEC_SPLIT 0 /* bool: split; false: merge */
#define VKA_HEADS_SPEC_WG 1    /* local_size_x */
#define VKA_HEADS_SPEC_IN_TYPE 2  /* VKA_ELEM_*: input (heads_f16.comp only) */
#define VKA_HEADS_SPEC_OUT_TYPE 3 /* output (heads_f16.comp only) */
#define VKA_HEADS_N_SPEC 4

/* seq: rows of the (B, H, seq, d) side; seq_all, t0: the (B, seq_all, H, d)
 * side holds them at rows [t0, t0 + seq) (seq_all = seq, t0 = 0: all of it). */
#define VKA_HEADS_PUSH VKA_UINT seq, heads, head_dim, count, seq_all, t0;
#define VKA_HEADS_PUSH_SIZE 24

#endif /* VKA_HEADS_IFACE_H */
