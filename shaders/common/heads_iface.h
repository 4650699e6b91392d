/* shaders/heads.comp <-> src/ops/heads.c (see iface.h). */
#ifndef VKA_HEADS_IFACE_H
#define VKA_HEADS_IFACE_H

#include "iface.h"

#define VKA_HEADS_SPEC_SPLIT 0 /* bool: split; false: merge */
#define VKA_HEADS_SPEC_WG 1    /* local_size_x */
#define VKA_HEADS_N_SPEC 2

#define VKA_HEADS_PUSH VKA_UINT seq, heads, head_dim, count;
#define VKA_HEADS_PUSH_SIZE 16

#endif /* VKA_HEADS_IFACE_H */
