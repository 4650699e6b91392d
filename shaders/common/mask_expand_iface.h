/* shaders/mask_expand.comp <-> src/ops/mask_expand.c (see iface.h). */
#ifndef VKA_MASK_EXPAND_IFACE_H
#define VKA_MASK_EXPAND_IFACE_H

#include "iface.h"

#define VKA_MASK_EXPAND_SPEC_WG 0        /* local_size_x */
#define VKA_MASK_EXPAND_SPEC_HAS_ATTN 1  /* bool: an attention mask to read */
#define VKA_MASK_EXPAND_SPEC_HAS_QUERY 2 /* bool: a query mask to fold in */
#define VKA_MASK_EXPAND_N_SPEC 3

#define VKA_MASK_EXPAND_PUSH                                                  \
    VKA_UINT tq, tv, heads;  /* Tqo, Tv, Ho of the output */                  \
    VKA_UINT total;          /* Bo * Ho * Tqo * Tv */                         \
    VKA_UINT sb, sh, si, sj; /* strides of the attention mask */
#define VKA_MASK_EXPAND_PUSH_SIZE 32

#endif /* VKA_MASK_EXPAND_IFACE_H */
