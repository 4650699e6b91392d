/* shaders/additive.comp <-> src/ops/additive.c (see iface.h). */
#ifndef VKA_ADDITIVE_IFACE_H
#define VKA_ADDITIVE_IFACE_H

#include "iface.h"

#define VKA_ADDITIVE_SPEC_TQ 0        /* query rows per tile */
#define VKA_ADDITIVE_SPEC_TV 1        /* keys per tile */
#define VKA_ADDITIVE_SPEC_DK 2        /* features per staged chunk */
#define VKA_ADDITIVE_SPEC_RQ 3        /* rows per invocation */
#define VKA_ADDITIVE_SPEC_RV 4        /* keys per invocation */
#define VKA_ADDITIVE_SPEC_HAS_SCALE 5 /* bool: a per-feature scale vector */
#define VKA_ADDITIVE_SPEC_WG 6        /* local_size_x */
#define VKA_ADDITIVE_N_SPEC 7

#define VKA_ADDITIVE_PUSH                                                     \
    VKA_UINT tq, tv, dim;                                                     \
    VKA_FLOAT inner, outer;                                                   \
    VKA_UINT row_begin; /* first query row of this dispatch; tq stays the row \
                           count */                                           \
    VKA_UINT row_end;   /* one past its last */
#define VKA_ADDITIVE_PUSH_SIZE 28

#endif /* VKA_ADDITIVE_IFACE_H */
