/* shaders/rowmask.comp <-> src/ops/rowmask.c (see iface.h). */
#ifndef VKA_ROWMASK_IFACE_H
#define VKA_ROWMASK_IFACE_H

#include "iface.h"

#define VKA_ROWMASK_SPEC_WG 0 /* local_size_x */
#define VKA_ROWMASK_N_SPEC 1

#define VKA_ROWMASK_PUSH                                                      \
    VKA_UINT width; /* elements per row */                                    \
    VKA_UINT total; /* rows * width */
#define VKA_ROWMASK_PUSH_SIZE 8

#endif /* VKA_ROWMASK_IFACE_H */
